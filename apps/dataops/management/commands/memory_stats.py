"""``memory_stats``: per tenant and per subject counts, backlogs and pending work.

manage.py memory_stats [--tenant SLUG] [--json]
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.dataops.selectors import TenantStats, memory_stats
from apps.tenancy.selectors import tenant_get_by_slug_or_id

SUBJECT_COLUMNS = (
    ("LIVE", "memories_live"),
    ("SUPERSEDED", "memories_superseded"),
    ("PENDING", "embeddings_pending"),
    ("PROMOTED", "memories_promoted"),
    ("EXPLICIT", "memories_explicit"),
    ("TURNS", "session_turns"),
    ("SESSIONS", "sessions"),
    ("TO_PROMOTE", None),
    ("JOBS", None),
    ("TO_GRADUATE", "graduation_backlog"),
    ("SESSION_BYTES", "session_bytes"),
    ("ARTICLES", "articles_authored"),
    ("COMPILES_1H", "promotion_compiles_hour"),
)


def _subject_cells(figures: dict[str, int]) -> list[str]:
    cells = []
    for _, name in SUBJECT_COLUMNS:
        if name is not None:
            cells.append(str(figures[name]))
    to_promote = figures["promotion_never_promoted"] + figures["promotion_changed"]
    jobs = figures["promotion_jobs_queued"] + figures["promotion_jobs_running"]
    cells.insert(7, str(to_promote))
    cells.insert(8, str(jobs))
    return cells


def _human(stats: TenantStats) -> str:
    totals = stats.totals
    articles = stats.articles
    lines = [
        f"{stats.slug}{'  [HALTED]' if stats.halted else ''}",
        f"  memories   {totals['memories_live']} live ({totals['memories_promoted']} promoted, "
        f"{totals['memories_explicit']} explicit), {totals['memories_superseded']} superseded, "
        f"{totals['embeddings_pending']} pending embedding",
        f"  sessions   {totals['session_turns']} turns in {totals['sessions']} sessions "
        f"({totals['session_turns_expired']} expired turns awaiting prune)",
        f"  promotion  backlog {totals['promotion_never_promoted']} never promoted + "
        f"{totals['promotion_changed']} changed since watermark; jobs "
        f"{totals['promotion_jobs_queued']} queued, {totals['promotion_jobs_running']} running, "
        f"{totals['promotion_jobs_failed_24h']} failed in 24h",
        f"  graduation backlog {totals['graduation_backlog']}",
        "  articles   " + ", ".join(f"{count} {status}" for status, count in articles.items()),
        "  bounds     per subject: "
        + ", ".join(
            f"{name} {limit}" for name, limit in stats.limits.items() if "per_tenant" not in name
        )
        + "; per tenant: "
        + ", ".join(
            f"{name.replace('_per_tenant', '')} {limit}"
            for name, limit in stats.limits.items()
            if "per_tenant" in name
        ),
    ]
    run = stats.reembed_in_progress
    if run is not None:
        lines.append(
            f"  reembed    unfinished run since {run.started_at.isoformat()} "
            f"({run.memories_embedded} memories, {run.articles_embedded} articles done"
            + (f"; last error: {run.last_error}" if run.last_error else "")
            + "): run `reembed` again to finish it"
        )
    if stats.subjects:
        width = max(len("SUBJECT"), *(len(subject.subject_id) for subject in stats.subjects))
        headers = [title for title, _ in SUBJECT_COLUMNS]
        lines.append("  " + "  ".join(["SUBJECT".ljust(width), *headers]))
        for subject in stats.subjects:
            figures = {name: getattr(subject, name) for name in stats.totals}
            cells = _subject_cells(figures)
            lines.append(
                "  "
                + "  ".join(
                    [
                        subject.subject_id.ljust(width),
                        *(
                            cell.rjust(len(title))
                            for cell, title in zip(cells, headers, strict=True)
                        ),
                    ]
                )
            )
    return "\n".join(lines)


class Command(EngramCommand):
    help = "Operator stats: memories, sessions, promotion and graduation backlog, articles."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="Tenant slug or id (default: every tenant).")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = (
            tenant_get_by_slug_or_id(identifier=options["tenant"]) if options["tenant"] else None
        )
        stats = memory_stats(tenant=tenant)
        human = "\n\n".join(_human(tenant_stats) for tenant_stats in stats) or "No tenants."
        self.render(options, {"tenants": [s.to_dict() for s in stats]}, human)
