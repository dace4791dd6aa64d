import pytest
from django.core.exceptions import ImproperlyConfigured

from apps.memory.services import assert_promotion_ttl_invariant


def test_default_settings_satisfy_the_invariant(settings):
    assert_promotion_ttl_invariant()


@pytest.mark.parametrize(
    ("_case", "interval", "window", "ttl"),
    [
        ("interval_not_below_window", 3600, 3600, 86400),
        ("window_not_below_ttl", 600, 86400, 86400),
        ("inverted", 7200, 3600, 1800),
    ],
)
def test_a_violation_fails_naming_the_settings(settings, _case, interval, window, ttl):
    settings.PROMOTION_SWEEP_INTERVAL_SECONDS = interval
    settings.PROMOTION_SWEEP_WINDOW_SECONDS = window
    settings.SESSION_DEFAULT_TTL_SECONDS = ttl

    with pytest.raises(ImproperlyConfigured) as excinfo:
        assert_promotion_ttl_invariant()

    message = str(excinfo.value)
    assert "PROMOTION_SWEEP_INTERVAL_SECONDS" in message
    assert "PROMOTION_SWEEP_WINDOW_SECONDS" in message
    assert "SESSION_DEFAULT_TTL_SECONDS" in message
