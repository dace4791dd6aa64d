"""``memory_bench``: bulk-load synthetic memories, then measure load, embedding and recall.

    manage.py memory_bench --write-stream RATE [--count 300] [--url URL] [--runs 3]
                           [--check-every N] [--json]
    manage.py memory_bench --rows 100000 --subjects 1000 [--dims 384] [--queries 1000]
                           [--big-subject-rows 20000] [--distribution uniform|zipf]
                           [--crossover-sizes 500,1000,2000,4000] [--json] [--keep]
                           [--reuse SLUG --scratch-database NAME] [--in-place]
                           [--allow-shared-changes]

The run happens in a scratch database of its own (created, migrated and dropped here; see
``lab.scratch``) unless ``--in-place`` is given. A throwaway tenant is created, its rows are
loaded on the fast path (binary COPY with the HNSW index dropped, then rebuilt), and recall runs
through ``memory_recall`` itself with precomputed query vectors. Without ``--keep`` the tenant
and its rows (and the scratch database) are removed at the end.
docs/benchmarks/memory-bench.md (and write-stream.md beside it) has the figures and how to
read them.
"""

from __future__ import annotations

import secrets
import sys
from typing import Any

import numpy as np
from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.tenancy.models import Tenant
from apps.tenancy.services import tenant_create
from lab import memory_bench as benchmarking
from lab import write_stream
from lab.load_bench import LoadBenchRefused
from lab.scratch import SharedDatabaseRefused, require_disposable_database, scratch_database

# The corpus spec is recorded in the tenant's name so --reuse can rebuild the plan.
TENANT_NAME_MAX_LENGTH = 200


def _progress(description: str, total: int) -> Any:
    return tqdm(total=total, desc=description, unit="it", file=sys.stderr, leave=False)


def _sizes(value: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError as exc:
        raise CommandError("--crossover-sizes takes comma-separated integers") from exc
    if any(size < 2 for size in sizes):
        raise CommandError("--crossover-sizes must be at least 2 rows each")
    return sizes


class Command(EngramCommand):
    help = "Benchmark bulk load, local embedding throughput and memory recall at scale."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rows", type=int, help="Regular rows to load.")
        parser.add_argument("--subjects", type=int, help="Regular subjects.")
        parser.add_argument(
            "--write-stream",
            type=float,
            metavar="RATE",
            help="Instead: single writes at RATE per second to a running server (--url), then "
            "a burst; write-to-searchable latency (lab/write_stream.py).",
        )
        parser.add_argument(
            "--count", type=int, default=300, help="--write-stream: writes per phase."
        )
        parser.add_argument(
            "--url",
            default="http://127.0.0.1:8000",
            help="--write-stream: the running server (loopback; `make run`), on this database.",
        )
        parser.add_argument(
            "--runs", type=int, default=1, help="--write-stream: repeat, report each and medians."
        )
        parser.add_argument(
            "--check-every",
            type=int,
            default=1,
            help="--write-stream: poll keyword recall for every Nth write of the stream only "
            "(the checks are load on the server they measure).",
        )
        parser.add_argument(
            "--dims",
            type=int,
            default=settings.EMBEDDING_DIMENSIONS,
            help="Vector dimensions; must equal EMBEDDING_DIMENSIONS (the column's type).",
        )
        parser.add_argument("--queries", type=int, default=1000, help="Recall queries.")
        parser.add_argument(
            "--load-workers",
            type=int,
            choices=range(1, 9),
            default=2,
            metavar="N",
            help="Connections the load copies over, the subjects split among them, each in its "
            "own transaction, as a parallel restore does (default 2, one per core of the "
            "development VM; 1: one COPY in one transaction).",
        )
        parser.add_argument(
            "--big-subject-rows",
            type=int,
            default=0,
            help="Add one subject holding this many rows and report it separately.",
        )
        parser.add_argument(
            "--distribution",
            choices=benchmarking.DISTRIBUTIONS,
            default="uniform",
            help="Rows per subject: uniform, or Zipf (s=1) capped at the live-row quota.",
        )
        parser.add_argument(
            "--topics",
            type=int,
            default=benchmarking.DEFAULT_TOPICS,
            help="Distinct topics the synthetic sentences are drawn from.",
        )
        parser.add_argument(
            "--crossover-sizes",
            type=_sizes,
            default=(),
            help="Also add subjects of these sizes and time both strategies on each.",
        )
        parser.add_argument(
            "--crossover-queries",
            type=int,
            default=200,
            help="Queries timed per size with --crossover-sizes.",
        )
        parser.add_argument(
            "--embed-texts",
            type=int,
            default=320,
            help="Synthetic sentences for the local embedding throughput (0 skips it).",
        )
        parser.add_argument(
            "--mode",
            choices=("semantic", "hybrid"),
            default="semantic",
            help="Recall mode to time (semantic: the vector ranking the targets are about).",
        )
        parser.add_argument(
            "--seed", type=int, default=0, help="Seed of the synthetic corpus and queries."
        )
        parser.add_argument(
            "--keep", action="store_true", help="Leave the tenant and its rows in place."
        )
        parser.add_argument(
            "--reuse",
            metavar="SLUG",
            default="",
            help="Measure against a corpus kept by an earlier --keep run instead of loading.",
        )
        parser.add_argument(
            "--scratch-database",
            metavar="NAME",
            default="",
            help="With --reuse: the scratch database an earlier --keep run left (its report "
            "names it).",
        )
        parser.add_argument(
            "--in-place",
            action="store_true",
            help="Run in the configured database instead of a scratch database of its own.",
        )
        parser.add_argument(
            "--allow-shared-changes",
            action="store_true",
            help="With --in-place: let the bulk load drop and rebuild the table-wide vector "
            "indexes (other tenants' recall runs without them meanwhile) and the cleanup "
            "truncate the table.",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        if options["write_stream"] is not None:
            self._write_stream(options)
            return
        if options["rows"] is None or options["subjects"] is None:
            raise CommandError("--rows and --subjects are required (or --write-stream RATE)")
        if options["in_place"]:
            if not options["reuse"]:  # a load, and a cleanup unless --keep, will run
                try:
                    require_disposable_database(
                        allow_shared=options["allow_shared_changes"],
                        step="memory_bench's bulk load",
                    )
                except SharedDatabaseRefused as exc:
                    raise CommandError(str(exc)) from exc
            self._run(options, scratch_name=None)
            return
        if options["reuse"] and not options["scratch_database"]:
            raise CommandError("--reuse needs --scratch-database (or --in-place)")
        try:
            with scratch_database(keep=options["keep"], reuse=options["scratch_database"]) as name:
                self._run(options, scratch_name=name)
        except SharedDatabaseRefused as exc:
            raise CommandError(str(exc)) from exc

    def _write_stream(self, options: dict[str, Any]) -> None:
        rate, count, runs = options["write_stream"], options["count"], options["runs"]
        if rate <= 0 or count < 1 or runs < 1 or options["check_every"] < 1:
            raise CommandError("--write-stream, --count, --runs and --check-every must be positive")
        try:
            reports = [
                write_stream.run(
                    url=options["url"],
                    rate=rate,
                    count=count,
                    check_every=options["check_every"],
                )
                for _ in range(runs)
            ]
        except LoadBenchRefused as exc:
            raise CommandError(str(exc)) from exc
        medians = {
            phase: {key: write_stream.median_of(reports, phase, key) for key in reports[0][phase]}
            for phase in ("stream", "burst")
        }
        report = {"runs": reports, "median": medians}
        lines = []
        for label, body in [
            *((f"run {i + 1}", r) for i, r in enumerate(reports)),
            ("median", medians),
        ]:
            stream, burst = body["stream"], body["burst"]
            lines.append(
                f"{label}: stream {stream['writes']} writes sent at {stream['rate_sent']}/s "
                f"(asked {stream['rate_requested']}; late p50 {stream['late_ms_p50']} ms p99 "
                f"{stream['late_ms_p99']} ms; {stream['refused_in_flight']} refused in flight "
                f"and sent again), completed at {stream['rate_achieved']}/s, "
                f"answered p50 {stream['write_ms_p50']} ms p99 {stream['write_ms_p99']} ms: "
                f"keyword-findable p50 "
                f"{stream['keyword_ms_p50']} ms p99 {stream['keyword_ms_p99']} ms "
                f"({stream['keyword_first_try']} on the first recall after the write); embedded "
                f"p50 {stream['embedded_ms_p50']} ms p99 {stream['embedded_ms_p99']} ms max "
                f"{stream['embedded_ms_max']} ms (from sent p50 "
                f"{stream['embedded_from_sent_ms_p50']} ms p99 "
                f"{stream['embedded_from_sent_ms_p99']} ms); semantic recall found "
                f"{stream['semantic_found']}"
                f"/{stream['writes']}\n"
                f"{' ' * len(label)}  burst {burst['writes']} writes in {burst['seconds']} s "
                f"({burst['writes_per_s']}/s): last keyword-findable on return "
                f"{burst['last_keyword_findable_on_return']}; all embedded "
                f"{burst['all_embedded_s_after_last_write']} s after the last write"
            )
        self.render(options, report, "\n".join(lines))

    def _run(self, options: dict[str, Any], *, scratch_name: str | None) -> None:
        allow_shared = options["allow_shared_changes"]
        if options["dims"] != settings.EMBEDDING_DIMENSIONS:
            raise CommandError(
                f"--dims {options['dims']} does not match the embedding column "
                f"(EMBEDDING_DIMENSIONS={settings.EMBEDDING_DIMENSIONS})."
            )
        if options["queries"] < 1:
            raise CommandError("--queries must be at least 1")
        tenant, spec, loaded = self._tenant_and_spec(options)
        corpus = benchmarking.Corpus.plan(spec)
        report: dict[str, Any] = {
            "tenant": tenant.slug,
            "rows": spec.rows,
            "subjects": spec.subjects,
            "dims": spec.dims,
            "distribution": spec.distribution,
            "topics": spec.topics,
            "mode": options["mode"],
            "scratch_database": scratch_name,
            "server": benchmarking.server_versions(),
            "settings": {
                "MEMORY_EXACT_SCAN_MAX_ROWS": settings.MEMORY_EXACT_SCAN_MAX_ROWS,
                "MEMORY_HNSW_EF_SEARCH": settings.MEMORY_HNSW_EF_SEARCH,
                "MEMORY_HNSW_MAX_SCAN_TUPLES": settings.MEMORY_HNSW_MAX_SCAN_TUPLES,
                "MEMORY_HNSW_CANDIDATES_PER_RESULT": settings.MEMORY_HNSW_CANDIDATES_PER_RESULT,
                "HEAVY_READ_PREPARE_THRESHOLD": settings.HEAVY_READ_PREPARE_THRESHOLD,
            },
        }
        try:
            if loaded:
                timings = benchmarking.bulk_load(
                    tenant=tenant,
                    corpus=corpus,
                    progress=_progress,
                    allow_shared=allow_shared,
                    workers=options["load_workers"],
                )
                report.update(
                    {
                        "rows_loaded": timings.rows,
                        "generate_vectors_s": round(timings.generate_s, 2),
                        "copy_s": round(timings.copy_s, 2),
                        "load_rows_per_s": round(timings.load_rows_per_s),
                        "load_workers": options["load_workers"],
                        "index_drop_s": round(timings.index_drop_s, 2),
                        "index_build_s": round(timings.index_build_s, 2),
                        "index_rows": timings.index_rows,
                        "index_build_rows_per_s": round(timings.index_build_rows_per_s),
                        "index_build_notices": timings.index_notices,
                        "other_index_builds_s": {
                            name: round(seconds, 2)
                            for name, seconds in timings.other_index_builds_s.items()
                        },
                        "vacuum_analyze_s": round(timings.vacuum_analyze_s, 2),
                    }
                )
            report.update(self._embedding(options))
            report.update(self._recall(tenant=tenant, corpus=corpus, options=options))
        finally:
            if options["keep"] or options["reuse"]:
                report["kept"] = True
            else:
                cleanup = benchmarking.delete_corpus(tenant=tenant, allow_shared=allow_shared)
                report["cleanup"] = {
                    "rows_deleted": cleanup.rows_deleted,
                    "method": cleanup.method,
                    "seconds": round(cleanup.seconds, 2),
                }
        report["vector_index_present"] = benchmarking.vector_index_exists()
        self.render(options, report, _human(report))

    def _tenant_and_spec(
        self, options: dict[str, Any]
    ) -> tuple[Tenant, benchmarking.CorpusSpec, bool]:
        if options["reuse"]:
            tenant = Tenant.objects.filter(slug=options["reuse"]).first()
            if tenant is None:
                raise CommandError(f"no tenant {options['reuse']!r}")
            try:
                spec = benchmarking.CorpusSpec.from_tenant_name(tenant.name)
            except (ValueError, TypeError) as exc:
                raise CommandError(f"{tenant.slug} is not a memory_bench corpus") from exc
            return tenant, spec, False
        try:
            spec = benchmarking.CorpusSpec(
                rows=options["rows"],
                subjects=options["subjects"],
                dims=options["dims"],
                topics=options["topics"],
                distribution=options["distribution"],
                big_subject_rows=options["big_subject_rows"],
                crossover_sizes=options["crossover_sizes"],
                seed=options["seed"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if len(spec.to_tenant_name()) > TENANT_NAME_MAX_LENGTH:
            raise CommandError("corpus spec too long to record on the tenant; fewer sizes")
        tenant = tenant_create(slug=f"bench-{secrets.token_hex(4)}", name=spec.to_tenant_name())
        return tenant, spec, True

    def _embedding(self, options: dict[str, Any]) -> dict[str, Any]:
        if options["embed_texts"] <= 0:
            return {"embed_texts_per_s": None}
        throughput = benchmarking.measure_embedding_throughput(
            count=options["embed_texts"], progress=_progress
        )
        return {
            "embed_texts_per_s": round(throughput.texts_per_s, 1),
            "embed": {
                "texts": throughput.texts,
                "batch_size": throughput.batch_size,
                "model_load_s": round(throughput.warmup_s, 2),
                "seconds": round(throughput.seconds, 2),
            },
        }

    def _recall(
        self, *, tenant: Tenant, corpus: benchmarking.Corpus, options: dict[str, Any]
    ) -> dict[str, Any]:
        rng = np.random.default_rng([options["seed"], 6])
        indices = rng.integers(0, corpus.regular_subjects, size=options["queries"])
        run = benchmarking.measure_recall(
            tenant=tenant,
            corpus=corpus,
            subject_indices=indices,
            seed=1,
            progress=_progress,
            mode=options["mode"],
        ).summary()
        report: dict[str, Any] = {
            "queries": run["queries"],
            "recall_p50_ms": run["p50_ms"],
            "recall_p90_ms": run["p90_ms"],
            "recall_p99_ms": run["p99_ms"],
            "recall_mean_ms": run["mean_ms"],
            "recall_at_10": run["recall_at_10"],
            "min_recall_at_10": run["min_recall_at_10"],
            "underfill_rate": run["underfill_rate"],
            "per_strategy": run["per_strategy"],
            "big_subject": None,
        }
        if corpus.big_subject_id is not None:
            big = np.full(
                options["queries"], corpus.subject_index(corpus.big_subject_id), dtype=np.int64
            )
            big_run = benchmarking.measure_recall(
                tenant=tenant,
                corpus=corpus,
                subject_indices=big,
                seed=2,
                progress=_progress,
                description="recall (big subject)",
                mode=options["mode"],
            ).summary()
            report["big_subject"] = {
                "rows": int(corpus.sizes[int(big[0])]),
                **{key: value for key, value in big_run.items() if key != "queries"},
                "queries": big_run["queries"],
            }
        if corpus.crossover_subject_ids:
            report["crossover"] = benchmarking.measure_crossover(
                tenant=tenant,
                corpus=corpus,
                queries=options["crossover_queries"],
                seed=3,
                progress=_progress,
                mode=options["mode"],
            )
        return report


def _human(report: dict[str, Any]) -> str:
    server = report["server"]
    lines = [
        f"memory_bench: {report['rows']:,} rows over {report['subjects']:,} subjects "
        f"({report['distribution']}), {report['dims']}-d, {report['mode']} recall, "
        f"Postgres {server.get('postgres')} + pgvector {server.get('pgvector')}",
    ]
    if "load_rows_per_s" in report:
        lines += [
            f"  load (binary COPY, deferred indexes dropped): {report['load_rows_per_s']:,} rows/s "
            f"({report['rows_loaded']:,} rows in {report['copy_s']} s)",
            f"  HNSW build: {report['index_build_s']} s for {report['index_rows']:,} rows "
            f"({report['index_build_rows_per_s']:,} rows/s); VACUUM ANALYZE "
            f"{report['vacuum_analyze_s']} s",
            *(
                f"  other deferred index: {name} {seconds} s"
                for name, seconds in report["other_index_builds_s"].items()
            ),
            *(f"  HNSW build notice: {notice}" for notice in report["index_build_notices"]),
        ]
    if report.get("embed_texts_per_s") is not None:
        embed = report["embed"]
        lines.append(
            f"  embeddings (local, batch {embed['batch_size']}): "
            f"{report['embed_texts_per_s']} texts/s (model load {embed['model_load_s']} s)"
        )
    lines.append(
        f"  recall ({report['queries']} queries): p50 {report['recall_p50_ms']} ms, "
        f"p99 {report['recall_p99_ms']} ms, recall@10 {report['recall_at_10']}, "
        f"underfill {report['underfill_rate']}"
    )
    for name, stats in sorted(report["per_strategy"].items()):
        lines.append(f"    {name:<10} {_stats(stats)}")
    big = report.get("big_subject")
    if big:
        lines.append(f"  big subject ({big['rows']:,} rows): {_stats(big)}")
        for name, stats in sorted(big["per_strategy"].items()):
            lines.append(f"    {name:<10} {_stats(stats)}")
    for size, row in report.get("crossover", {}).items():
        lines.append(
            f"  crossover {int(size):>6,} rows: exact {_stats(row['exact'])} | "
            f"ann {_stats(row['ann'])}"
        )
    if "cleanup" in report:
        cleanup = report["cleanup"]
        lines.append(
            f"  cleanup: {cleanup['rows_deleted']:,} rows by {cleanup['method']} "
            f"in {cleanup['seconds']} s"
        )
    else:
        lines.append(
            f"  kept: tenant {report['tenant']} (reuse with --reuse {report['tenant']}"
            + (
                f" --scratch-database {report['scratch_database']})"
                if report.get("scratch_database")
                else " --in-place)"
            )
        )
    lines.append(f"  HNSW index present: {report['vector_index_present']}")
    return "\n".join(lines)


def _stats(stats: dict[str, Any]) -> str:
    if not stats.get("queries"):
        return "no queries"
    return (
        f"n={stats['queries']} p50 {stats['p50_ms']} ms p99 {stats['p99_ms']} ms "
        f"recall@10 {stats['recall_at_10']} underfill {stats['underfill_rate']}"
    )
