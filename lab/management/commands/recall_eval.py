"""``recall_eval``: evidence recall@k of memory recall on LoCoMo, through the real services.

    manage.py recall_eval --dataset locomo --path ../shared/datasets/locomo/locomo10.json
                          [--loader client|unthreaded|neighbours|facts|all]
                          [--split dev|heldout|all] [--k 5,10,25,50]
                          [--mode semantic|keyword|hybrid] [--conversations conv-26,conv-30]
                          [--context-turns 2] [--embedding-cache FILE] [--http-queries N]
                          [--json]

Each conversation becomes one subject of a throwaway tenant, each turn one memory, written as
a client writes it (``--loader client``, the default: text and metadata through the batch
write, nothing else); every category 1-4 question with valid evidence is asked verbatim with
``limit=50``. Figures are printed for the whole run and for each split it covers (tune on
``dev`` only; ``heldout`` is for reporting). Then recall is timed over HTTP (limit 10, a real
web server). The tenant and its rows are removed at the end. ``--loader all`` runs the three
ways a client writes (unthreaded turns, facts, threaded turns) one after the other, each in
its own tenant, and prints per split each one's recall@k by category. The dataset is CC BY-NC
4.0: read at run time, never copied. docs/benchmarks/locomo.md has the figures.
"""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.utils import timezone
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.extraction.time_words import time_window
from apps.memory.selectors import RECALL_MODES
from apps.providers.embeddings import EmbeddingConfig
from lab.locomo import dataset as locomo
from lab.locomo import harness
from lab.locomo.cli import conversations_for_command

#: ``--loader all``: every client protocol (``locomo.PROTOCOLS``) in one run.
LOADER_ALL = "all"


def _ks(value: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(part) for part in value.split(",") if part.strip()}))
    except ValueError as exc:
        raise CommandError("--k takes comma-separated integers") from exc
    if not ks or ks[0] < 1 or ks[-1] > harness.RECALL_LIMIT:
        raise CommandError(f"--k values must be within 1..{harness.RECALL_LIMIT}")
    return ks


def _names(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


class Command(EngramCommand):
    help = "Evidence recall@k of memory recall on LoCoMo (categories 1-4)."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dataset", choices=["locomo"], default="locomo", help="The dataset's format."
        )
        parser.add_argument("--path", type=Path, required=True, help="locomo10.json")
        parser.add_argument(
            "--k",
            type=_ks,
            default=locomo.DEFAULT_KS,
            help="Comma-separated cut-offs to score recall@k at.",
        )
        parser.add_argument(
            "--mode", choices=RECALL_MODES, default=None, help="Default: the recall default."
        )
        parser.add_argument("--conversations", type=_names, default=(), help="sample ids")
        parser.add_argument(
            "--loader",
            choices=(*locomo.LOADERS, LOADER_ALL),
            default=locomo.LOADER_CLIENT,
            help="client: turns as a client writes them, threaded by their session "
            "(default); unthreaded: the same turns without a session key; neighbours: "
            "threaded turns plus a loader-made context of the date and neighbouring turns; "
            "facts: LoCoMo's observations, one memory per write, no session key; all: "
            "unthreaded, facts and client in one run, summarised per split.",
        )
        parser.add_argument(
            "--split",
            choices=["dev", "heldout", "all"],
            default="all",
            help="Which conversations: the tuning split, the held-out one, or both.",
        )
        parser.add_argument(
            "--context-turns",
            type=int,
            default=locomo.DEFAULT_CONTEXT_TURNS,
            help="neighbours loader: turns on each side given as each memory's context.",
        )
        parser.add_argument(
            "--dated",
            action="store_true",
            help="Write each memory with its session's date-time as occurred_at (default: "
            "the time of the write), so time words in questions ('in May 2023') can match.",
        )
        parser.add_argument(
            "--embedding-cache",
            type=Path,
            default=None,
            help="JSON file of vectors by content hash: reused, and extended with new ones.",
        )
        parser.add_argument(
            "--http-queries",
            type=int,
            default=None,
            help="Questions timed over HTTP after the run (default: all; 0: skip).",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        conversations = conversations_for_command(path, options["conversations"])
        if options["split"] != "all":
            wanted = set(locomo.SPLITS[options["split"]])
            conversations = [c for c in conversations if c.sample_id in wanted]
            if not conversations:
                raise CommandError(f"no conversation of the {options['split']} split to run")
        cache = (
            harness.EmbeddingCache(options["embedding_cache"])
            if options["embedding_cache"]
            else None
        )
        if options["loader"] != LOADER_ALL:
            data = self._run(conversations, options, loader=options["loader"], cache=cache)
            self.render(options, data, _human(data))
            return
        # Recall over HTTP is timed once, on the threaded turns (the protocol of every earlier
        # latency figure).
        runs = {
            loader: self._run(
                conversations,
                {**options, "http_queries": None if loader == locomo.LOADER_CLIENT else 0}
                if options["http_queries"] is None
                else {
                    **options,
                    "http_queries": options["http_queries"]
                    if loader == locomo.LOADER_CLIENT
                    else 0,
                },
                loader=loader,
                cache=cache,
            )
            for loader in locomo.PROTOCOLS
        }
        data = _protocols_block(runs, path=path, options=options)
        self.render(options, data, _human_protocols(data))

    def _run(
        self,
        conversations: list[locomo.Conversation],
        options: dict[str, Any],
        *,
        loader: str,
        cache: harness.EmbeddingCache | None,
    ) -> dict[str, Any]:
        """One protocol: a throwaway tenant written by ``loader``, asked, timed, removed."""
        path: Path = options["path"]
        mode = options["mode"] or settings.MEMORY_RECALL_DEFAULT_MODE
        tenant = harness.evaluation_tenant_create()
        started = time.perf_counter()
        http: harness.HttpLatency | None = None
        try:
            timing = harness.ingest(
                tenant=tenant,
                conversations=conversations,
                context_turns=options["context_turns"],
                loader=loader,
                cache=cache,
                progress=self._progress(f"{loader}: ingested"),
                dated=options["dated"],
            )
            outcome = harness.ask(
                tenant=tenant,
                conversations=conversations,
                mode=mode,
                progress=self._progress(f"{loader}: asked"),
            )
            if options["http_queries"] != 0:
                http = harness.http_latency(
                    tenant=tenant,
                    conversations=conversations,
                    mode=options["mode"],
                    max_queries=options["http_queries"],
                )
        finally:
            deleted = harness.evaluation_tenant_remove(tenant=tenant)
        report = locomo.summarise(outcome.results, options["k"])
        questions = [q.question for c in conversations for q in c.questions]
        splits = {}
        for name, ids in locomo.SPLITS.items():
            results = [r for r in outcome.results if r.sample_id in ids]
            if results:
                splits[name] = _split_block(locomo.summarise(results, options["k"]).as_dict())
        return {
            "dataset": "locomo",
            "path": str(path),
            "loader": loader,
            "split": options["split"],
            "conversations": [c.sample_id for c in conversations],
            "mode": mode,
            "embedding_provider": settings.EMBEDDING_PROVIDER,
            "embedding_endpoint": EmbeddingConfig.default().endpoint_key,
            "context_turns": options["context_turns"] if loader == "neighbours" else None,
            "dated": options["dated"],
            "time_words": settings.MEMORY_RECALL_TIME_WORDS,
            # The questions whose words name a time (docs/memory.md, "Time words in a
            # question"), scored on their own: where reading them can matter.
            "time_word_questions": _time_word_block(outcome.results, questions, options["k"]),
            "questions": len(outcome.results),
            "questions_skipped_no_evidence": sum(c.skipped_questions for c in conversations),
            "memories": timing.memories,
            "ingest_s": {
                "write": round(timing.write_s, 2),
                "embed": round(timing.embed_s, 2),
                "total": round(timing.total_s, 2),
            },
            "fallbacks": outcome.fallbacks,
            "foreign_results": outcome.foreign_results,
            "memories_deleted": deleted,
            "elapsed_s": round(time.perf_counter() - started, 2),
            "machine": {"cpus": _cpus(), "platform": platform.platform()},
            "paper_dragon_categories_1_4": {
                str(k): v for k, v in locomo.DRAGON_CATEGORIES_1_TO_4.items()
            },
            **report.as_dict(),
            "splits": splits,
            "http_latency_ms": http.as_dict() if http is not None else None,
        }

    def _progress(self, verb: str) -> harness.Progress:
        def report(sample_id: str, count: int) -> None:
            print(f"{verb} {sample_id}: {count}", file=sys.stderr, flush=True)  # noqa: T201

        return report


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0


def _time_word_block(
    results: list[locomo.QuestionResult], questions: list[str], ks: tuple[int, ...]
) -> dict[str, Any]:
    """Recall and latency over the questions that name a time window (read against now, as
    recall reads a question without ``as_of``)."""
    now = timezone.now()
    named = [
        result
        for result, question in zip(results, questions, strict=True)
        if time_window(question, reference=now) is not None
    ]
    if not named:
        return {"count": 0}
    report = locomo.summarise(named, ks).as_dict()
    # The service path's time for them: a window costs a second ranking.
    return {**report["overall"], "latency_ms": report["latency_ms"]}


def _split_block(report: dict[str, Any]) -> dict[str, Any]:
    keep = ("overall", "categories", "macro_recall", "conversation_recall_spread")
    return {key: report[key] for key in keep}


def _row(label: str, metrics: dict[str, Any], ks: list[int], key: str = "recall") -> str:
    cells = " ".join(f"{metrics[key][str(k)]:>6.3f}" for k in ks)
    return f"  {label:<16} {metrics.get('count', ''):>5} {cells}"


def _human(data: dict[str, Any]) -> str:
    ks: list[int] = data["ks"]
    header = f"  {'':<16} {'n':>5} " + " ".join(f"{'@' + str(k):>6}" for k in ks)
    context = (
        f", context_turns={data['context_turns']}" if data["context_turns"] is not None else ""
    )
    lines = [
        f"LoCoMo evidence recall, loader={data['loader']}, mode={data['mode']}, "
        f"provider={data['embedding_provider']}{context}",
        f"conversations={len(data['conversations'])} memories={data['memories']} "
        f"questions={data['questions']} (skipped, no valid evidence: "
        f"{data['questions_skipped_no_evidence']})",
        "recall@k (|E ∩ R_k| / |E|)",
        header,
        _row("overall (micro)", data["overall"], ks),
    ]
    for category, metrics in data["categories"].items():
        lines.append(_row(f"{category} {metrics['name']}", metrics, ks))
    lines.append(
        f"  {'macro (4 cats)':<16} {'':>5} "
        + " ".join(f"{data['macro_recall'][str(k)]:>6.3f}" for k in ks)
    )
    lines.append(
        f"  {'DRAGON (paper)':<16} {'':>5} "
        + " ".join(
            f"{data['paper_dragon_categories_1_4'].get(str(k), float('nan')):>6.3f}" for k in ks
        )
    )
    lines += ["hit@k", header, _row("overall", data["overall"], ks, "hit")]
    for category, metrics in data["categories"].items():
        lines.append(_row(f"{category} {metrics['name']}", metrics, ks, "hit"))
    lines += ["complete@k", header, _row("overall", data["overall"], ks, "complete")]
    spread = data["conversation_recall_spread"]
    lines.append(
        "per-conversation recall (min-max): "
        + ", ".join(f"@{k} {spread[str(k)]['min']:.3f}-{spread[str(k)]['max']:.3f}" for k in ks)
    )
    lines.append(
        "per conversation @"
        + str(ks[min(1, len(ks) - 1)])
        + ": "
        + ", ".join(
            f"{sample_id} {metrics['recall'][str(ks[min(1, len(ks) - 1)])]:.3f}"
            for sample_id, metrics in data["conversations"].items()
        )
    )
    for name, block in data["splits"].items():
        lines += [f"{name} split: recall@k", header, _row("overall (micro)", block["overall"], ks)]
        for category, metrics in block["categories"].items():
            lines.append(_row(f"{category} {metrics['name']}", metrics, ks))
        lines.append(
            f"  {'macro (4 cats)':<16} {'':>5} "
            + " ".join(f"{block['macro_recall'][str(k)]:>6.3f}" for k in ks)
        )
    lines.append(
        f"recall latency (service path, limit=50): p50 {data['latency_ms']['p50']:.1f} ms, "
        f"p95 {data['latency_ms']['p95']:.1f} ms"
    )
    http = data["http_latency_ms"]
    if http is not None:
        lines.append(
            f"recall latency over HTTP ({http['server']}, limit={http['limit']}, query "
            f"embedding included, {http['queries']} queries, {http['errors']} errors): "
            f"p50 {http['p50']:.1f} ms, p95 {http['p95']:.1f} ms, p99 {http['p99']:.1f} ms"
        )
    ingest = data["ingest_s"]
    lines.append(
        f"ingest: {data['memories']} memories, write {ingest['write']:.1f} s, "
        f"embed {ingest['embed']:.1f} s, total {ingest['total']:.1f} s"
    )
    lines.append(
        f"fallbacks={data['fallbacks']} foreign_results={data['foreign_results']} "
        f"memories_deleted={data['memories_deleted']} elapsed={data['elapsed_s']:.1f} s"
    )
    return "\n".join(lines)


def _protocols_block(
    runs: dict[str, dict[str, Any]], *, path: Path, options: dict[str, Any]
) -> dict[str, Any]:
    """``--loader all``: each protocol's whole run, and per split the figures to compare."""
    first = next(iter(runs.values()))
    summary: dict[str, dict[str, Any]] = {}
    for loader, run in runs.items():
        blocks = {"all": run, **run["splits"]}
        for split, block in blocks.items():
            summary.setdefault(split, {})[loader] = {
                "count": block["overall"]["count"],
                "recall": block["overall"]["recall"],
                "categories": {
                    category: {"name": metrics["name"], "recall": metrics["recall"]}
                    for category, metrics in block["categories"].items()
                },
            }
    return {
        "dataset": "locomo",
        "path": str(path),
        "loader": LOADER_ALL,
        "protocols": list(runs),
        "split": options["split"],
        "conversations": first["conversations"],
        "mode": first["mode"],
        "embedding_provider": first["embedding_provider"],
        "embedding_endpoint": first["embedding_endpoint"],
        "ks": first["ks"],
        "summary": summary,
        "http_latency_ms": runs.get(locomo.LOADER_CLIENT, first)["http_latency_ms"],
        "runs": runs,
    }


def _human_protocols(data: dict[str, Any]) -> str:
    ks: list[int] = data["ks"]
    names = {"1": "multi", "2": "temporal", "3": "open", "4": "single"}
    header = (
        f"  {'protocol':<11} {'n':>5} "
        + " ".join(f"{'R@' + str(k):>6}" for k in ks)
        + "   R@"
        + str(ks[min(1, len(ks) - 1)])
        + " by category: "
        + " ".join(f"{name:>8}" for name in names.values())
    )
    category_k = str(ks[min(1, len(ks) - 1)])
    lines = [
        f"LoCoMo evidence recall, every protocol, mode={data['mode']}, "
        f"embeddings={data['embedding_endpoint']}, conversations={len(data['conversations'])}"
    ]
    for split in ("dev", "heldout", "all"):
        protocols = data["summary"].get(split)
        if not protocols:
            continue
        lines += [f"{split}:", header]
        for loader, block in protocols.items():
            by_category = " ".join(
                f"{block['categories'][c]['recall'][category_k]:>8.3f}"
                if c in block["categories"]
                else f"{'-':>8}"
                for c in names
            )
            lines.append(
                f"  {loader:<11} {block['count']:>5} "
                + " ".join(f"{block['recall'][str(k)]:>6.3f}" for k in ks)
                + "                  "
                + by_category
            )
    http = data["http_latency_ms"]
    if http is not None:
        lines.append(
            f"recall latency over HTTP (client protocol, limit={http['limit']}, "
            f"{http['queries']} queries, {http['errors']} errors): p50 {http['p50']:.1f} ms, "
            f"p95 {http['p95']:.1f} ms, p99 {http['p99']:.1f} ms"
        )
    for loader, run in data["runs"].items():
        ingest = run["ingest_s"]
        lines.append(
            f"{loader}: {run['memories']} memories, write {ingest['write']:.1f} s, embed "
            f"{ingest['embed']:.1f} s; fallbacks={run['fallbacks']} "
            f"foreign_results={run['foreign_results']} memories_deleted={run['memories_deleted']}"
        )
    return "\n".join(lines)
