"""``promotion_eval``: score the promotion compiler against the labeled dataset.

    manage.py promotion_eval [--provider heuristic|openai|anthropic] [--dataset PATH]
                             [--model NAME] [--base-url URL] [--api-key-env VAR]
                             [--json] [--verbose]

Every session runs through the real compile path under the reserved eval subject, in a
throwaway tenant that is rolled back; nothing is ever persisted. docs/promotion.md has the
figures and how to read them.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.core.telemetry import emit
from apps.providers.llm import LLM_PROVIDERS, LLMConfig
from lab import promotion_eval as evaluation


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
        parser.add_argument("--provider", choices=sorted(LLM_PROVIDERS), default="heuristic")
        parser.add_argument(
            "--dataset",
            default=str(evaluation.DEFAULT_DATASET_PATH),
            help="Labeled dataset (JSON); defaults to the one shipped in the repo.",
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
        llm = _llm_config(options)
        try:
            dataset = evaluation.load_dataset(options["dataset"])
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
