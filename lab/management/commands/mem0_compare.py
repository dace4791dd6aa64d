"""``mem0_compare``: Engram and mem0 side by side on LoCoMo, in one run.

    manage.py mem0_compare [--path ../shared/datasets/locomo/locomo10.json]
                           [--conversations conv-26,conv-30] [--repeat N] [--mem0-hnsw] [--json]

Both systems get the same turns, written as a client writes them (``"{speaker}: {text}"``,
its dia_id and session date in metadata, no session key), the same MiniLM vectors (mem0
embeds through Engram's local model) and every category 1-4 question with limit 10. Printed
per system: R@5 and R@10 (``recall_eval``'s definition and functions) and the search latency
p50/p95, then mem0's p50 over Engram's. Engram is asked over HTTP against the web tier as
``make run`` starts it; mem0 in-process (``Memory.search``, no HTTP: that favours mem0).
With ``--repeat N`` every figure is the median of N rounds, the system asked first
alternating per round, each Engram round on a freshly started server. Only the dev
conversations (lab.locomo.dataset.DEV_SPLIT) may be used to choose anything.

mem0 is optional: ``make compare-venv`` installs requirements/compare.txt. lab/mem0_compare.py
says how mem0 is configured; docs/benchmarks/mem0.md has the figures.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.db import connections
from typing_extensions import override

from apps.core.db.routers import PRIMARY
from apps.core.management.base import CommandFailed, EngramCommand
from apps.providers.embeddings import EmbeddingConfig
from lab import mem0_compare as compare
from lab.locomo import dataset as locomo
from lab.locomo import harness
from lab.locomo.cli import conversations_for_command

DEFAULT_PATH = harness.ROOT.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
DEFAULT_CONVERSATIONS = ("conv-26", "conv-30")
MEM0_NOT_INSTALLED = "mem0_not_installed"


def _names(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError as exc:
        raise CommandError("--repeat takes a positive integer") from exc
    if number < 1:
        raise CommandError("--repeat takes a positive integer")
    return number


def _conninfo() -> str:
    """The lab's Postgres as a libpq connection string (the embedded server's socket or host),
    for mem0's own connection pool."""
    from psycopg.conninfo import make_conninfo

    connection = connections[PRIMARY]
    connection.ensure_connection()
    info = connection.connection.info
    params = info.get_parameters()
    if info.password:
        params["password"] = info.password
    return make_conninfo(**params)


def _load() -> dict[str, float]:
    one, five, fifteen = os.getloadavg()
    return {"1m": round(one, 2), "5m": round(five, 2), "15m": round(fifteen, 2)}


class Command(EngramCommand):
    help = "Engram and mem0 side by side on LoCoMo: R@5, R@10, search p50/p95, in one run."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--path", type=Path, default=DEFAULT_PATH, help="locomo10.json")
        parser.add_argument(
            "--conversations",
            type=_names,
            default=DEFAULT_CONVERSATIONS,
            help="Comma-separated sample ids (default: conv-26,conv-30, both of the dev split).",
        )
        parser.add_argument(
            "--repeat",
            type=_positive,
            default=1,
            help="Rounds of questions; figures are the medians, the first system alternating.",
        )
        parser.add_argument(
            "--mem0-hnsw",
            action="store_true",
            help="Give mem0's pgvector table its default HNSW index (default: exact scan, "
            "which can only help mem0's recall).",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        conversations = conversations_for_command(path, options["conversations"])
        try:
            compare.load_mem0()
        except compare.Mem0Unavailable as exc:
            raise CommandFailed(MEM0_NOT_INSTALLED, str(exc)) from exc
        data = self._run(conversations, options)
        self.render(options, data, _human(data))

    def _run(
        self, conversations: list[locomo.Conversation], options: dict[str, Any]
    ) -> dict[str, Any]:
        started = time.perf_counter()
        load_before = _load()
        tenant = harness.evaluation_tenant_create()
        rounds: dict[str, list[compare.SystemFigures]] = {
            name: [] for name in (*compare.SYSTEMS, compare.ENGRAM_IN_PROCESS)
        }
        try:
            # Engram: the service path the batch write API calls, then every row embedded.
            timing = harness.ingest(
                tenant=tenant,
                conversations=conversations,
                context_turns=0,
                loader=locomo.LOADER_UNTHREADED,
                progress=self._progress("engram: ingested"),
            )
            keys = harness.agent_keys(tenant=tenant, conversations=conversations)
            with compare.mem0_memory(conninfo=_conninfo(), hnsw=options["mem0_hnsw"]) as memory:
                mem0_written, mem0_ingest_s = compare.mem0_ingest(memory, conversations)
                self._say(f"mem0: ingested {mem0_written} turns in {mem0_ingest_s:.1f} s")
                load_questions = _load()
                for index in range(options["repeat"]):
                    for system in compare.alternating_order(index):
                        if system == compare.ENGRAM:
                            with harness.web_server() as url:
                                run = compare.engram_ask(
                                    url=url, keys=keys, conversations=conversations
                                )
                        else:
                            run = compare.mem0_ask(memory, conversations)
                        self._record(rounds, system, run, index)
                        if system == compare.ENGRAM:
                            run = compare.engram_ask_in_process(
                                tenant=tenant, conversations=conversations
                            )
                            self._record(rounds, compare.ENGRAM_IN_PROCESS, run, index)
        finally:
            deleted = harness.evaluation_tenant_remove(tenant=tenant)
        comparison = compare.Comparison(
            engram=compare.median_figures(rounds[compare.ENGRAM]),
            mem0=compare.median_figures(rounds[compare.MEM0]),
        )
        in_process = compare.Comparison(
            engram=compare.median_figures(rounds[compare.ENGRAM_IN_PROCESS]),
            mem0=comparison.mem0,
        )
        questions = [q.question for c in conversations for q in c.questions]
        return {
            "dataset": "locomo",
            "path": str(options["path"]),
            "conversations": [c.sample_id for c in conversations],
            "questions": len(questions),
            "duplicate_question_texts": len(questions) - len(set(questions)),
            "limit": compare.SEARCH_LIMIT,
            "repeat": options["repeat"],
            "figures_are": "medians over rounds" if options["repeat"] > 1 else "one round",
            **comparison.as_dict(),
            # Engram asked like mem0 (in this process, no HTTP): where the HTTP time goes.
            compare.ENGRAM_IN_PROCESS: in_process.engram.as_dict(),
            "p50_ratio_mem0_over_engram_in_process": (
                None if in_process.p50_ratio is None else round(in_process.p50_ratio, 2)
            ),
            "rounds": {
                name: [figures.as_dict() for figures in per_round]
                for name, per_round in rounds.items()
            },
            "engram_setup": {
                "search": "POST /api/v1/memory/recall {query, limit: 10} over HTTP, default mode "
                f"({settings.MEMORY_RECALL_DEFAULT_MODE}), gunicorn -c config/gunicorn.py "
                "started fresh each round; the clock covers the whole request",
                "write": "memory_write_batch (what POST /api/v1/memory/batch calls), "
                "unthreaded turns, then every row embedded before the questions",
                "embeddings": EmbeddingConfig.default().endpoint_key,
                "memories": timing.memories,
                "ingest_s": round(timing.total_s, 2),
            },
            "mem0_setup": {
                "version": compare.mem0_version(),
                "search": "Memory.search(query, filters={user_id}, top_k=10) in-process "
                "(no HTTP: favours mem0)",
                "write": "Memory.add(text, user_id, metadata, infer=False), one call per turn",
                "vector_store": "pgvector on the lab's Postgres, "
                + ("HNSW (mem0's default)" if options["mem0_hnsw"] else "exact scan (no HNSW)"),
                "embedder": "Engram's local model (stored texts and query encoder)",
                "llm": "none (a stand-in that raises if called)",
                "telemetry": "off (MEM0_TELEMETRY=False)",
                "memories": mem0_written,
                "ingest_s": round(mem0_ingest_s, 2),
            },
            "load_average": {"start": load_before, "questions": load_questions, "end": _load()},
            "memories_deleted": deleted,
            "elapsed_s": round(time.perf_counter() - started, 2),
            "machine": {"cpus": _cpus(), "platform": platform.platform()},
        }

    def _record(
        self,
        rounds: dict[str, list[compare.SystemFigures]],
        system: str,
        run: compare.AskRun,
        index: int,
    ) -> None:
        figures = compare.system_figures(run.results, errors=run.errors)
        rounds[system].append(figures)
        self._say(
            f"round {index + 1} {system}: R@10 {figures.recall[10]:.3f} "
            f"p50 {figures.p50_ms:.1f} ms p95 {figures.p95_ms:.1f} ms"
        )

    def _say(self, line: str) -> None:
        print(line, file=sys.stderr, flush=True)  # noqa: T201

    def _progress(self, verb: str) -> harness.Progress:
        def report(sample_id: str, count: int) -> None:
            self._say(f"{verb} {sample_id}: {count}")

        return report


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0


def _human(data: dict[str, Any]) -> str:
    lines = [
        f"LoCoMo, {', '.join(data['conversations'])}: {data['questions']} questions "
        f"(categories 1-4), limit {data['limit']}, {data['figures_are']}"
        + (f" of {data['repeat']}" if data["repeat"] > 1 else ""),
        f"  {'system':<17} {'R@5':>6} {'R@10':>6} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'errors':>6} {'n/q':>5}",
    ]
    for name, how in (
        (compare.ENGRAM, "over HTTP, whole request"),
        (compare.MEM0, "in-process Memory.search, no HTTP"),
        (compare.ENGRAM_IN_PROCESS, "in-process memory_recall, informational"),
    ):
        block = data[name]
        recall, latency = block["recall"], block["latency_ms"]
        lines.append(
            f"  {name:<17} {recall['R@5']:>6.3f} {recall['R@10']:>6.3f} {latency['p50']:>8.1f} "
            f"{latency['p95']:>8.1f} {block['errors']:>6} {block['mean_returned']:>5.1f}  ({how})"
        )
    ratio = data["p50_ratio_mem0_over_engram"]
    lead = data["recall_lead_engram_minus_mem0"]
    lines.append(
        f"p50 ratio (mem0 / Engram): {'n/a' if ratio is None else f'{ratio:.2f}x'}; "
        f"recall lead (Engram - mem0): R@5 {lead['R@5']:+.3f}, R@10 {lead['R@10']:+.3f}"
    )
    ratio_in = data["p50_ratio_mem0_over_engram_in_process"]
    lines.append(
        "p50 ratio (mem0 / Engram in-process, both without HTTP): "
        f"{'n/a' if ratio_in is None else f'{ratio_in:.2f}x'}"
    )
    mem0 = data["mem0_setup"]
    lines.append(
        f"mem0ai {mem0['version']}: {mem0['vector_store']}, embedder: {mem0['embedder']}, "
        f"llm: {mem0['llm']}, infer=False"
    )
    engram, load = data["engram_setup"], data["load_average"]
    lines.append(
        f"ingest: engram {engram['memories']} memories {engram['ingest_s']:.1f} s, "
        f"mem0 {mem0['memories']} memories {mem0['ingest_s']:.1f} s; load average "
        f"(1m) start {load['start']['1m']}, questions {load['questions']['1m']}, "
        f"end {load['end']['1m']}; elapsed {data['elapsed_s']:.0f} s"
    )
    return "\n".join(lines)
