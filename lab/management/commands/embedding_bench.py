import json
from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import INVALID_ARGUMENTS, CommandFailed, EngramCommand
from lab.embedding_bench import embedding_bench_run


class Command(EngramCommand):
    help = (
        "Measure the local embedding model: batched texts/s and single-query latency "
        "(figures for docs/benchmarks/embeddings.md)."
    )

    # Needs no deployment database: it starts its own processes (or only embeds).
    uses_database = False

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--texts", type=int, default=1000, help="Sentences to embed.")
        parser.add_argument("--batch", type=int, default=32, help="Texts per embed_texts call.")
        parser.add_argument("--queries", type=int, default=200, help="Single-text calls timed.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        if min(options["texts"], options["batch"], options["queries"]) < 1:
            raise CommandFailed(
                INVALID_ARGUMENTS, "--texts, --batch and --queries must be at least 1."
            )
        result = embedding_bench_run(
            texts=options["texts"], batch=options["batch"], queries=options["queries"]
        )
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), sort_keys=True))
            return
        self.stdout.write(f"model        {result.model} ({result.dimensions} dimensions)")
        self.stdout.write(f"threads      {result.threads} (LOCAL_EMBEDDING_THREADS)")
        self.stdout.write(f"model load   {result.load_seconds:.3f} s")
        self.stdout.write(
            f"batched      {result.texts_per_second:.1f} texts/s, "
            f"{result.cpu_ms_per_text:.2f} ms CPU a text "
            f"({result.texts} texts, {result.batch} per call)"
        )
        self.stdout.write(
            f"single query p50 {result.query_p50_ms:.2f} ms, p95 {result.query_p95_ms:.2f} ms "
            f"({result.queries} queries)"
        )
        self.stdout.write(
            f"search query p50 {result.search_query_p50_ms:.2f} ms, "
            f"{result.search_query_cpu_p50_ms:.2f} ms CPU (recall's query encoder)"
        )
