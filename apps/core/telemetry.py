"""One helper for telemetry events (DESIGN §7): a structured log line plus Prometheus metrics.

Event names mirror the spec, e.g. ``memory_promotion.compiled``. Each event increments the
``engram_events_total{event}`` counter; numeric measurements named ``*_ms``/``*_seconds`` are
observed on a histogram, ratios (``precision``, ``recall``, ``f1``, ``*_rate``) are set on a
gauge (summing ratios would mean nothing), and counts (``count``, ``survivors`` …) are added to
``engram_event_measurement_total{event,measurement}``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

logger = logging.getLogger("engram.telemetry")

EVENTS = Counter("engram_events_total", "Telemetry events emitted", ["event"])
MEASUREMENTS = Counter(
    "engram_event_measurement_total", "Summed event measurements", ["event", "measurement"]
)
RATIOS = Gauge("engram_event_ratio", "Latest ratio reported with events", ["event", "measurement"])
# Values, not amounts: a gauge keeps the last one (a cosine similarity can be negative, which
# a counter refuses).
RATIO_NAMES = frozenset({"precision", "recall", "f1", "similarity"})
DURATIONS = Histogram(
    "engram_event_duration_seconds", "Durations reported with events", ["event", "measurement"]
)


def emit(
    event: str, measurements: dict[str, float] | None = None, metadata: dict[str, Any] | None = None
) -> None:
    measurements = measurements or {}
    metadata = metadata or {}
    EVENTS.labels(event=event).inc()
    for name, value in measurements.items():
        if name.endswith("_ms"):
            DURATIONS.labels(event=event, measurement=name).observe(value / 1000.0)
        elif name.endswith("_seconds"):
            DURATIONS.labels(event=event, measurement=name).observe(value)
        elif name in RATIO_NAMES or name.endswith("_rate"):
            RATIOS.labels(event=event, measurement=name).set(value)
        else:
            MEASUREMENTS.labels(event=event, measurement=name).inc(value)
    logger.info(
        "%s",
        json.dumps(
            {"event": event, "measurements": measurements, "metadata": metadata},
            default=str,
            sort_keys=True,
        ),
    )
