from prometheus_client import REGISTRY

from apps.core.telemetry import emit


def _value(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_emit_counts_events_sums_counts_sets_ratios_and_observes_durations(caplog):
    before_events = _value("engram_events_total", event="probe.done")
    before_count = _value("engram_event_measurement_total", event="probe.done", measurement="count")

    emit("probe.done", {"count": 3, "precision": 0.5, "elapsed_ms": 20}, {"tenant_id": "t"})
    emit("probe.done", {"count": 2, "precision": 0.75})

    assert _value("engram_events_total", event="probe.done") == before_events + 2
    assert (
        _value("engram_event_measurement_total", event="probe.done", measurement="count")
        == before_count + 5
    )
    assert _value("engram_event_ratio", event="probe.done", measurement="precision") == 0.75
    assert (
        _value("engram_event_duration_seconds_count", event="probe.done", measurement="elapsed_ms")
        >= 1
    )
    assert '"event": "probe.done"' in caplog.text
