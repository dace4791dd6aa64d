"""``recall_eval``: evidence recall@k of memory recall on LoCoMo, through the real services.

    manage.py recall_eval --dataset locomo --path ../shared/datasets/locomo/locomo10.json
                          [--loader client|neighbours|facts] [--split dev|heldout|all]
                          [--k 5,10,25,50] [--mode semantic|keyword|hybrid]
                          [--conversations conv-26,conv-30] [--context-turns 2]
                          [--http-queries N] [--json]

Each conversation becomes one subject of a throwaway tenant, each turn one memory, written as
a client writes it (``--loader client``, the default: text and metadata through the batch
write, nothing else); every category 1-4 question with valid evidence is asked verbatim with
``limit=50``. Figures are printed for the whole run and for each split it covers (tune on
``dev`` only; ``heldout`` is for reporting). Then recall is timed over HTTP (limit 10, a real
web server). The tenant and its rows are removed at the end. The dataset is CC BY-NC 4.0:
read at run time, never copied. docs/benchmarks/locomo.md has the figures.
"""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.memory.selectors import RECALL_MODES
from lab.locomo import dataset as locomo
from lab.locomo import harness


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
            choices=locomo.LOADERS,
            default=locomo.LOADER_CLIENT,
            help="client: turns as a client writes them (default); neighbours: plus a "
            "loader-made context of the date and neighbouring turns; facts: LoCoMo's "
            "observations, one memory per write.",
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
        if not path.is_file():
            raise CommandError(f"no dataset at {path}")
        try:
            conversations = locomo.load_locomo(path, sample_ids=options["conversations"])
        except (ValueError, KeyError) as exc:
            raise CommandError(f"not a LoCoMo file: {exc}") from exc
        if options["split"] != "all":
            wanted = set(locomo.SPLITS[options["split"]])
            conversations = [c for c in conversations if c.sample_id in wanted]
            if not conversations:
                raise CommandError(f"no conversation of the {options['split']} split to run")
        mode = options["mode"] or settings.MEMORY_RECALL_DEFAULT_MODE
        loader = options["loader"]
        tenant = harness.evaluation_tenant_create()
        started = time.perf_counter()
        http: harness.HttpLatency | None = None
        try:
            timing = harness.ingest(
                tenant=tenant,
                conversations=conversations,
                context_turns=options["context_turns"],
                loader=loader,
                cache=harness.EmbeddingCache(options["embedding_cache"])
                if options["embedding_cache"]
                else None,
                progress=self._progress("ingested"),
            )
            outcome = harness.ask(
                tenant=tenant,
                conversations=conversations,
                mode=mode,
                progress=self._progress("asked"),
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
        splits = {}
        for name, ids in locomo.SPLITS.items():
            results = [r for r in outcome.results if r.sample_id in ids]
            if results:
                splits[name] = _split_block(locomo.summarise(results, options["k"]).as_dict())
        data = {
            "dataset": "locomo",
            "path": str(path),
            "loader": loader,
            "split": options["split"],
            "conversations": [c.sample_id for c in conversations],
            "mode": mode,
            "embedding_provider": settings.EMBEDDING_PROVIDER,
            "context_turns": options["context_turns"] if loader == "neighbours" else None,
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
        self.render(options, data, _human(data))

    def _progress(self, verb: str) -> harness.Progress:
        def report(sample_id: str, count: int) -> None:
            print(f"{verb} {sample_id}: {count}", file=sys.stderr, flush=True)  # noqa: T201

        return report


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0


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
