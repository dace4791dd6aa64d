"""Every bound setting is in docs/operators.md's table of bounds ("Every bound"), or named
below as a knob no client can reach, with the reason."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "config" / "settings"
BOUND_NAME = re.compile(r"MAX|QUOTA|BUDGET|RATE_LIMIT|_LIMIT|RATE_WINDOW|FAILURE_WINDOW")
ENV_SETTING = re.compile(r"env\.\w+\(\s*\"(ENGRAM_\w+)\"")

# Settings whose names look like bounds but that no client runs into.
NOT_CLIENT_BOUNDS = {
    "ENGRAM_DB_CONN_MAX_AGE": "how long a database connection is kept",
    "ENGRAM_HEAVY_READ_MAX_LAG_SECONDS": "replica lag before heavy reads fall back to the primary",
    "ENGRAM_BEAT_MAX_LOOP_INTERVAL_SECONDS": "Celery beat's wake-up interval",
    "ENGRAM_MEMORY_EMBEDDING_DRAIN_MAX_BATCHES": "batches one drain task embeds before it yields",
    "ENGRAM_MEMORY_EMBEDDING_MAX_FAILURES": "provider failures before a row stops being retried",
    "ENGRAM_PROMOTION_JOB_MAX_ATTEMPTS": "claims of a lost promotion job before it fails",
    "ENGRAM_PROMOTION_SWEEP_MAX_SESSIONS": "sessions one sweep run promotes",
    "ENGRAM_SESSION_PROMOTION_HOLD_MAX_SECONDS": "how long expired turns wait for promotion",
    "ENGRAM_MEMORY_EXACT_SCAN_MAX_ROWS": "the exact/ANN crossover of the vector leg",
    "ENGRAM_MEMORY_HNSW_MAX_SCAN_TUPLES": "how far the iterative HNSW scan reads",
    "ENGRAM_KNOWLEDGE_EXACT_SCAN_MAX_ROWS": "the exact/ANN crossover of article search",
    "ENGRAM_KNOWLEDGE_HNSW_MAX_SCAN_TUPLES": "how far the iterative HNSW scan reads",
    "ENGRAM_KNOWLEDGE_DIVERSITY_MAX_POOL": "candidates the diversity selection considers",
    "ENGRAM_MEMORY_GRADUATION_MAX_PER_RUN": "graduations one sweep run makes",
    "ENGRAM_MEMORY_GRADUATION_SCAN_LIMIT": "hot memories one graduation sweep reads",
}


def _bound_settings() -> set[str]:
    names: set[str] = set()
    for path in SETTINGS.rglob("*.py"):
        names.update(
            name for name in ENV_SETTING.findall(path.read_text()) if BOUND_NAME.search(name)
        )
    return names


def _documented() -> str:
    text = (ROOT / "docs" / "operators.md").read_text()
    table = text.split("### Every bound", 1)[1]
    return table.split("\n## ", 1)[0]


def test_every_bound_setting_is_in_the_operators_table():
    table = _documented()
    missing = sorted(
        name
        for name in _bound_settings()
        if name not in NOT_CLIENT_BOUNDS and f"`{name}`" not in table
    )
    assert missing == []


def test_the_exemptions_are_still_settings():
    assert sorted(set(NOT_CLIENT_BOUNDS) - _bound_settings()) == []
