"""``promotion_eval``: score the promotion compiler.

    manage.py promotion_eval [--dataset labelled] [--path PATH]
                             [--provider heuristic|openai|anthropic]
                             [--model NAME] [--base-url URL] [--api-key-env VAR]
                             [--json] [--verbose]
    manage.py promotion_eval --dataset locomo --path ../shared/datasets/locomo/locomo10.json
                             [--conversations conv-26,conv-30]
                             [--stores turns,observations,promoted] [--json]

``labelled`` (the default): precision/recall against the labelled sessions; every session runs
through the real compile path under the reserved eval subject, in a throwaway tenant that is
rolled back, so nothing is ever persisted. ``locomo``: real conversations written to the session
tier, promoted with the deployment's compiler and asked through memory recall, beside every turn
and LoCoMo's observations as memories (``lab.locomo.promotion``); its tenants are removed at the
end. docs/benchmarks/promotion.md has the figures and how to read them.
"""

from __future__ import annotations

import os
import sys
import time
from argparse import ArgumentTypeError
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.core.telemetry import emit
from apps.providers.llm import LLM_PROVIDERS, LLMConfig
from lab import promotion_eval as evaluation
from lab.locomo import promotion as locomo_promotion
from lab.locomo.cli import conversations_for_command


def _llm_config(options: dict[str, Any]) -> LLMConfig:
    """The provider under test. For openai/anthropic, flags override the deployment default
    (what ``tenant_llm_config`` gives a tenant without its own config) when it names the same
    provider."""
    provider = options["provider"]
    if provider == "heuristic":
        return LLMConfig(provider="heuristic")
    default = LLMConfig.default()
    inherited = default if default.provider == provider else LLMConfig(provider=provider)
    api_key = inherited.api_key
    if options["api_key_env"]:
        api_key = os.environ.get(options["api_key_env"], "")
        if not api_key:
            raise CommandError(f"The environment variable {options['api_key_env']} is empty.")
    config = LLMConfig(
        provider=provider,
        model=options["model"] or inherited.model,
        base_url=options["base_url"] or inherited.base_url,
        api_key=api_key,
    )
    if not config.api_key and not config.base_url:
        raise CommandError(
            f"The {provider} provider needs an API key (--api-key-env VAR) or a --base-url "
            "(e.g. a local OpenAI-compatible server)."
        )
    return config


def _names(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _stores(value: str) -> tuple[str, ...]:
    stores = _names(value)
    unknown = [store for store in stores if store not in locomo_promotion.STORES]
    if not stores or unknown:
        raise ArgumentTypeError(f"stores are {', '.join(locomo_promotion.STORES)}")
    return tuple(store for store in locomo_promotion.STORES if store in stores)


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _row(name: str, totals: evaluation.Totals) -> str:
    return (
        f"{name:<12}{totals.sessions:>9}{totals.facts:>7}{totals.predicted:>11}"
        f"{totals.matched:>9}{_cell(totals.precision):>11}{_cell(totals.recall):>8}"
        f"{_cell(totals.f1):>8}"
    )


def _human(report: evaluation.EvalReport, *, dataset: evaluation.Dataset, verbose: bool) -> str:
    lines = [
        f"Promotion-quality eval: provider {report.provider}, dataset v{report.dataset_version} "
        f"({len(dataset.sessions)} sessions, {dataset.fact_count} facts)",
        f"gate: confidence >= {report.confidence_threshold:.2f}, "
        f"at most {report.max_candidates} per session",
        "",
        f"{'domain':<12}{'sessions':>9}{'facts':>7}{'predicted':>11}{'matched':>9}"
        f"{'precision':>11}{'recall':>8}{'f1':>8}",
    ]
    lines += [_row(domain, totals) for domain, totals in report.by_domain.items()]
    lines.append(_row("overall", report.overall))
    junk = report.nothing_durable
    lines += [
        "",
        f"nothing-durable sessions: {junk['sessions']}, with predictions: "
        f"{junk['sessions_with_predictions']} ({junk['predictions']} predictions)"
        + (f": {', '.join(junk['session_ids'])}" if junk["session_ids"] else ""),
    ]
    if report.failed:
        lines.append(f"failed sessions (not scored): {len(report.failed)}")
        lines += [f"  {session_id}: {reason}" for session_id, reason in report.failed.items()]
    if verbose:
        for score in report.scores:
            lines += ["", f"[{score.domain}] {score.session_id}: {score.matched}/{score.facts}"]
            lines += [f"  + {predicted}" for predicted, _ in score.matches]
            lines += [f"  - false positive: {text}" for text in score.false_positives]
            lines += [f"  ? missed: {text}" for text in score.missed]
    return "\n".join(lines)


class Command(EngramCommand):
    help = "Score the promotion compiler's precision/recall against the labeled dataset."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dataset",
            choices=["labelled", "locomo"],
            default="labelled",
            help="labelled: the sessions shipped in the repo; locomo: LoCoMo conversations.",
        )
        parser.add_argument(
            "--path",
            type=Path,
            default=None,
            help="The dataset file: the labelled set shipped in the repo by default; "
            "locomo10.json for --dataset locomo.",
        )
        parser.add_argument(
            "--provider",
            choices=sorted(LLM_PROVIDERS),
            default="heuristic",
            help="The compiler to evaluate.",
        )
        parser.add_argument(
            "--conversations", type=_names, default=(), help="LoCoMo sample ids (locomo only)."
        )
        parser.add_argument(
            "--stores",
            type=_stores,
            default=locomo_promotion.STORES,
            help="Stores to build and ask (locomo only; default all three).",
        )
        parser.add_argument("--model", default="", help="Model name (openai/anthropic).")
        parser.add_argument("--base-url", default="", help="API base URL (openai/anthropic).")
        parser.add_argument(
            "--api-key-env",
            default="",
            help="Read the provider API key from this environment variable.",
        )
        parser.add_argument(
            "--verbose", action="store_true", help="Also list each session's matches and misses."
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        if options["dataset"] == "locomo":
            self._locomo(options)
            return
        llm = _llm_config(options)
        try:
            dataset = evaluation.load_dataset(options["path"] or evaluation.DEFAULT_DATASET_PATH)
        except evaluation.DatasetError as exc:
            raise CommandError(f"invalid dataset: {exc}") from exc

        def progress(score: evaluation.SessionScore) -> None:
            if options["verbosity"] > 1:
                sys.stderr.write(f"{score.session_id}: {score.matched}/{score.facts}\n")

        report = evaluation.run_eval(dataset, llm=llm, on_session=progress)
        if not report.scores:
            raise CommandError(
                "every session failed to compile: " + "; ".join(sorted(set(report.failed.values())))
            )
        measurements, metadata = report.telemetry()
        emit("memory_promotion.eval", measurements, metadata)
        self.render(
            options,
            report.as_dict(verbose=options["verbose"]),
            _human(report, dataset=dataset, verbose=options["verbose"]),
        )

    def _locomo(self, options: dict[str, Any]) -> None:
        path: Path | None = options["path"]
        if path is None or not path.is_file():
            raise CommandError(f"--dataset locomo needs --path to locomo10.json (got {path})")
        if options["provider"] != "heuristic":
            raise CommandError(
                "--dataset locomo promotes with the deployment's compiler (ENGRAM_LLM_PROVIDER); "
                "--provider applies to the labelled set only."
            )
        conversations = conversations_for_command(path, options["conversations"])

        def progress(sample_id: str, store: str) -> None:
            print(f"{sample_id}: {store} done", file=sys.stderr, flush=True)  # noqa: T201

        started = time.perf_counter()
        run = locomo_promotion.run_benchmark(
            conversations, stores=options["stores"], progress=progress
        )
        data = {
            "dataset": "locomo",
            "path": str(path),
            **locomo_promotion.report(run),
            "elapsed_s": round(time.perf_counter() - started, 1),
        }
        self.render(options, data, _locomo_human(data))


def _store_rows(block: dict[str, Any]) -> list[str]:
    lines = [
        f"  {'store':<14}{'memories':>9}{'per session':>13}{'questions':>11}"
        f"{'coverage@10':>13}{'full@10':>9}"
    ]
    for store, figures in block.items():
        lines.append(
            f"  {store:<14}{figures['memories']:>9}{figures['memories_per_session']:>13.2f}"
            f"{figures['questions']:>11}{figures['coverage_at_10']:>13.3f}"
            f"{figures['full_at_10']:>9.3f}"
        )
    return lines


def _locomo_human(data: dict[str, Any]) -> str:
    lines = [
        f"Promotion on LoCoMo: compiler {data['compiler']}, recall mode {data['recall_mode']}, "
        f"limit {data['recall_limit']}; {len(data['conversations'])} conversations "
        f"({', '.join(data['conversations'])})",
        f"questions without content words in the answer (not scored): "
        f"{data['questions_without_content_words']}",
        "",
        "all conversations run",
        *_store_rows(data["all"]),
    ]
    for name, block in data["splits"].items():
        lines += ["", f"{name} split", *_store_rows(block)]
    promotion = data.get("promotion")
    if promotion:
        lines += [
            "",
            f"promotion: {promotion['sessions']} sessions, jobs {promotion['jobs']}, "
            f"superseded {promotion['superseded']}",
            f"compile {promotion['compile_ms_per_session']} ms/session, promote (request, "
            f"compile, embed, persist) {promotion['promote_ms_per_session']} ms/session",
            f"re-promoting every session: {promotion['repromote_reasons']}, rows added "
            f"{promotion['repromote_rows_added']}",
        ]
    lines.append(f"tenants removed: {data['tenants_removed']}; elapsed {data['elapsed_s']} s")
    return "\n".join(lines)
