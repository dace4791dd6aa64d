"""Outcome limits (checked before the work, counted after it) and the request's source."""

from __future__ import annotations

import pytest

from apps.core.rate_limits import rate_limit_count, rate_limit_reached, request_source


def test_an_outcome_limit_is_reached_at_its_count_and_ends_with_its_window():
    for second in (1_000.0, 1_001.0):
        rate_limit_count(bucket="b", window_seconds=60, now=second)
    under = rate_limit_reached(bucket="b", limit=3, window_seconds=60, now=1_002.0)
    rate_limit_count(bucket="b", window_seconds=60, now=1_003.0)

    reached = rate_limit_reached(bucket="b", limit=3, window_seconds=60, now=1_004.0)
    next_window = rate_limit_reached(bucket="b", limit=3, window_seconds=60, now=1_020.0)

    assert under is None
    assert reached == 17  # the window [960, 1020) ends in 16 s, plus one
    assert next_window is None


def test_checking_an_outcome_limit_counts_nothing():
    rate_limit_count(bucket="b", window_seconds=60, now=1_000.0)
    for _ in range(5):
        assert rate_limit_reached(bucket="b", limit=2, window_seconds=60, now=1_001.0) is None

    assert rate_limit_count(bucket="b", window_seconds=60, now=1_002.0) == 2


@pytest.mark.parametrize(
    ("_case", "proxies", "forwarded", "source"),
    [
        ("no_proxy_ignores_the_header", 0, "198.51.100.1", "10.0.0.2"),
        ("one_proxy", 1, "198.51.100.1", "198.51.100.1"),
        ("one_proxy_spoofed_prefix", 1, "192.0.2.9, 198.51.100.1", "198.51.100.1"),
        ("two_proxies", 2, "192.0.2.9, 198.51.100.1, 10.0.0.9", "198.51.100.1"),
        ("header_shorter_than_the_proxies", 2, "198.51.100.1", "10.0.0.2"),
        ("no_header", 1, None, "10.0.0.2"),
    ],
)
def test_the_source_is_what_the_outermost_trusted_proxy_saw(
    settings, _case, proxies, forwarded, source
):
    settings.TRUSTED_PROXY_COUNT = proxies
    meta = {"REMOTE_ADDR": "10.0.0.2"}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded

    assert request_source(meta) == source
