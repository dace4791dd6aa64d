"""``knowledge_gate_calibrate``: print the similarity figures the knowledge thresholds rest on.

    manage.py knowledge_gate_calibrate [--provider local|default|fake] [--fusion] [--json]

Embeds the calibration corpus (``lab.gate_calibration``) with the chosen provider —
the local model by default, the deployment's own default model — and prints:

* cosine similarity of light-edit, paraphrase, near-conflict (same topic, different fact) and
  unrelated pairs, and what the configured gate thresholds would decide for each;
* each corpus article's similarity to its nearest other article (the "distinct but related"
  band a new article must not be gated by);
* for questions the corpus answers and junk questions, the top hit, its similarity, the
  answer_confidence separation and the verdict under the configured cut-offs.

Without ``--fusion`` there is no database access: it measures texts, not a tenant. With
``--fusion`` it also loads the corpus into a throwaway tenant (removed at the end) and reports
hit@1 and MRR of the keyword leg, the semantic leg and their reciprocal-rank fusion.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.providers.embeddings import (
    EmbeddingConfig,
    EmbeddingsUnavailable,
    embed_search_query,
    embed_texts,
)
from lab.gate_calibration import PAIR_SETS, CalibrationFigures, measure
from lab.gate_calibration.fusion import measure_fusion

PROVIDERS = ("local", "default", "fake")


def _band(values: Sequence[float]) -> dict[str, float]:
    return {
        "min": round(min(values), 3),
        "median": round(statistics.median(values), 3),
        "max": round(max(values), 3),
    }


def _gate_decision(similarity: float) -> str:
    if similarity >= settings.KNOWLEDGE_DEDUPE_THRESHOLD:
        return "deduplicated"
    if similarity >= settings.KNOWLEDGE_NEAR_DUPLICATE_THRESHOLD:
        return "gated_to_draft"
    return "created"


def _summary(figures: CalibrationFigures) -> dict[str, Any]:
    pairs: dict[str, Any] = {}
    for kind, _ in PAIR_SETS:
        pair_rows = [pair for pair in figures.pairs if pair.kind == kind]
        decisions = [_gate_decision(pair.similarity) for pair in pair_rows]
        pairs[kind] = {
            **_band([pair.similarity for pair in pair_rows]),
            "decisions": {name: decisions.count(name) for name in sorted(set(decisions))},
            "pairs": {pair.label: round(pair.similarity, 3) for pair in pair_rows},
        }
    queries: dict[str, Any] = {}
    for kind in ("relevant", "junk"):
        rows = [query for query in figures.queries if query.kind == kind]
        separations = [query.separation for query in rows if query.separation is not None]
        verdicts = [query.verdict for query in rows]
        queries[kind] = {
            "separation": _band(separations),
            "top_similarity": _band([query.top_similarity for query in rows]),
            "verdicts": {name: verdicts.count(name) for name in sorted(set(verdicts))},
            "rows": [
                {
                    "query": query.query,
                    "top": query.top_title,
                    "top_correct": None
                    if query.expected is None
                    else query.top_title == query.expected,
                    "top_similarity": round(query.top_similarity, 3),
                    "separation": query.separation,
                    "verdict": query.verdict,
                }
                for query in rows
            ],
        }
    return {
        "thresholds": {
            "dedupe": settings.KNOWLEDGE_DEDUPE_THRESHOLD,
            "near_duplicate": settings.KNOWLEDGE_NEAR_DUPLICATE_THRESHOLD,
            "answer_separation": settings.KNOWLEDGE_ANSWER_SEPARATION,
            "weak_separation": settings.KNOWLEDGE_WEAK_SEPARATION,
        },
        "pairs": pairs,
        "corpus_nearest_neighbour": _band(figures.corpus_nearest),
        "queries": queries,
    }


def _human(summary: dict[str, Any], provider: str) -> str:
    lines = [f"Embedding provider: {provider}", "", "Gate — cosine similarity of pairs:"]
    for kind, band in summary["pairs"].items():
        lines.append(
            f"  {kind:14s} min {band['min']:.3f}  median {band['median']:.3f}  "
            f"max {band['max']:.3f}   → {band['decisions']}"
        )
        lines.extend(f"      {label:28s} {value:.3f}" for label, value in band["pairs"].items())
    nn = summary["corpus_nearest_neighbour"]
    lines.append(
        f"  {'corpus nearest':14s} min {nn['min']:.3f}  median {nn['median']:.3f}  "
        f"max {nn['max']:.3f}   (distinct articles of one wiki)"
    )
    thresholds = summary["thresholds"]
    lines += [
        f"  thresholds: dedupe ≥ {thresholds['dedupe']}, "
        f"near-duplicate ≥ {thresholds['near_duplicate']}",
        "",
        "answer_confidence — separation of the top score (robust z over the top-20 pool):",
    ]
    for kind, data in summary["queries"].items():
        sep, top = data["separation"], data["top_similarity"]
        lines.append(
            f"  {kind:8s} separation min {sep['min']:.2f} median {sep['median']:.2f} "
            f"max {sep['max']:.2f} | top cosine min {top['min']:.3f} max {top['max']:.3f} "
            f"→ {data['verdicts']}"
        )
        for row in data["rows"]:
            mark = "" if row["top_correct"] in (None, True) else "  (top is not the expected)"
            lines.append(
                f"      {row['query'][:48]:48s} top {row['top_similarity']:.3f} "
                f"sep {row['separation']!s:>6s} {row['verdict']}{mark}"
            )
    lines.append(
        f"  cut-offs: answer ≥ {thresholds['answer_separation']}, "
        f"weak ≥ {thresholds['weak_separation']}"
    )
    return "\n".join(lines)


class Command(EngramCommand):
    help = "Print cosine similarities and separations behind the knowledge thresholds."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--fusion",
            action="store_true",
            help="Also measure keyword vs semantic vs fused ranking (uses the database).",
        )
        parser.add_argument(
            "--provider",
            choices=PROVIDERS,
            default="local",
            help="local (default): the bundled model; default: the deployment's provider.",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        provider = options["provider"]
        config = EmbeddingConfig.default() if provider == "default" else EmbeddingConfig(provider)

        def embed(texts: list[str]) -> list[list[float]]:
            return embed_texts(config, texts)

        def embed_queries(texts: list[str]) -> list[list[float]]:
            return [embed_search_query(config, text) for text in texts]

        try:
            figures = measure(embed, embed_queries=embed_queries)
        except EmbeddingsUnavailable as exc:
            raise CommandError(f"embeddings unavailable ({exc.reason}): {exc.message}") from exc
        summary = _summary(figures)
        human = _human(summary, provider)
        if options["fusion"]:
            fusion = measure_fusion(provider=None if provider == "default" else provider)
            summary["fusion"] = {
                query_set: {
                    m.method: m._asdict() for m in fusion.methods if m.query_set == query_set
                }
                for query_set in fusion.queries
            }
            human += "\n\nFusion — the right article first (hit@1), and MRR:"
            for method in fusion.methods:
                total = fusion.queries[method.query_set]
                human += (
                    f"\n  {method.query_set:11s} {method.method:9s} "
                    f"hit@1 {method.hit_at_1}/{total}  MRR {method.mrr:.3f}"
                )
        self.render(options, {"provider": config.provider, **summary}, human)
