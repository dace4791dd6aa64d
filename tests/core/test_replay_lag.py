"""How stale a replica may be, from what the lag probe reads off it."""

from __future__ import annotations

import pytest

from apps.core.replica import replay_lag_seconds


def test_a_replica_that_replayed_everything_flushed_is_not_stale_however_old_its_last_commit():
    assert replay_lag_seconds(lag_bytes=0, last_replay_age=3600.0) == 0.0
    assert replay_lag_seconds(lag_bytes=0, last_replay_age=None) == 0.0


def test_behind_it_is_as_stale_as_the_last_transaction_it_replayed():
    assert replay_lag_seconds(lag_bytes=512, last_replay_age=4.5) == pytest.approx(4.5)


def test_behind_with_no_transaction_replayed_since_it_started_its_staleness_is_unknown():
    # pg_last_xact_replay_timestamp() is NULL until the standby replays a commit: nothing
    # bounds how stale it is, so it must not count as within any bound.
    assert replay_lag_seconds(lag_bytes=512, last_replay_age=None) is None


def test_clock_skew_never_makes_the_lag_negative():
    assert replay_lag_seconds(lag_bytes=512, last_replay_age=-0.2) == 0.0
