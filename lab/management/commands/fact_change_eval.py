"""``fact_change_eval``: facts that change between LoCoMo sessions, through the real services.

    manage.py fact_change_eval --path ../shared/datasets/locomo/locomo10.json
                               [--split dev|heldout|all] [--conditions direct,promoted]
                               [--chains lab/eval_data/locomo_fact_changes.json]
                               [--embedding-cache FILE] [--verbose] [--json]

For each curated change (``lab.locomo.fact_changes``): whether recall ranks the current value
above the stale one without ``as_of``, whether ``as_of`` before the change brings the earlier
value back, and the precision of the change detector's automatic supersedes, for facts written
directly (LoCoMo's observations as explicit memories) and after promotion. Tune on ``dev``
only; ``heldout`` is for reporting. The dataset is CC BY-NC 4.0: read at run time, never
copied. docs/benchmarks/fact-changes.md has the figures.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from lab.locomo import dataset as locomo
from lab.locomo import fact_changes
from lab.locomo.harness import EmbeddingCache


def _conditions(value: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = set(names) - set(fact_changes.CONDITIONS)
    if not names or unknown:
        raise CommandError(f"--conditions takes {', '.join(fact_changes.CONDITIONS)}")
    return names


class Command(EngramCommand):
    help = "Facts that change on LoCoMo: current value first, as_of, supersede precision."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--path", type=Path, required=True, help="locomo10.json")
        parser.add_argument(
            "--chains",
            type=Path,
            default=fact_changes.DEFAULT_PATH,
            help="The curated fact-change chains (JSON; default: the lab's own file).",
        )
        parser.add_argument(
            "--split",
            choices=["dev", "heldout", "all"],
            default="dev",
            help="dev: the conversations choices are made on; heldout: run to report only.",
        )
        parser.add_argument(
            "--conditions",
            type=_conditions,
            default=fact_changes.CONDITIONS,
            help="Comma-separated: direct (facts written as memories), promoted (after "
            "promotion of the sessions). Default: both.",
        )
        parser.add_argument(
            "--embedding-cache",
            type=Path,
            default=None,
            help="JSON file of vectors by content hash (direct condition): reused and extended.",
        )
        parser.add_argument(
            "--verbose", action="store_true", help="Every change and every unmatched supersede."
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"no dataset at {path}")
        chains = fact_changes.load_chains(options["chains"])
        if options["split"] != "all":
            chains = [chain for chain in chains if chain.split == options["split"]]
        if not chains:
            raise CommandError(f"no chain in the {options['split']} split")
        wanted = sorted({chain.conversation for chain in chains})
        conversations = locomo.load_locomo(path, sample_ids=wanted)
        cache = EmbeddingCache(options["embedding_cache"]) if options["embedding_cache"] else None
        run = fact_changes.run_benchmark(
            conversations,
            chains,
            conditions=options["conditions"],
            cache=cache,
            progress=lambda sample_id, condition: print(  # noqa: T201
                f"built and asked {sample_id} ({condition})", file=sys.stderr, flush=True
            ),
        )
        data = fact_changes.report(run, verbose=options["verbose"])
        data["chains"] = len(chains)
        self.render(options, data, _human(data))


def _rate(share: dict[str, Any]) -> str:
    if not share["n"]:
        return "n/a"
    text = f"{share['rate']:.3f} ({share['ok']}/{share['n']})"
    if share.get("neither_recalled"):
        text += (
            f" [strict {share['strict_rate']:.3f}, {share['neither_recalled']} neither recalled]"
        )
    return text


def _human(data: dict[str, Any]) -> str:
    lines = [f"fact_change_eval: {data['chains']} chains, {data['seconds']} s"]
    for split, block in data["splits"].items():
        lines.append(f"{split}:")
        for condition, figures in block.items():
            lines.append(
                f"  {condition:<9} current first {_rate(figures['current_first'])}, "
                f"as_of earlier {_rate(figures['as_of_earlier'])}, "
                f"supersede precision {_rate(figures['supersede_precision'])}, "
                f"flagged memories {figures['flagged_memories']} of {figures['memories']}"
            )
            for change in figures.get("per_change", []):
                lines.append(f"      {change}")
            for pair in figures.get("unmatched_supersedes", []):
                lines.append(
                    f"      unmatched {pair['reason']}: {pair['old']!r} -> {pair['new']!r}"
                )
    return "\n".join(lines)
