"""Where an imported sweep's seeds come from: each imported trial names its file (its recipe
reads "unknown: imported from FILE"). A model whose seeds come from two files pools the files'
recipes and pipelines into what its seed scatter calls noise (a published seed beside a rerun
is not a second seed of one experiment), so `orch import` and `orch check` say so."""

import json
import re

import pandas as pd

__all__ = ["pooled_sources"]

IMPORTED_FROM = re.compile(r"^unknown: imported from (.+)$")


def pooled_sources(trials: pd.DataFrame) -> list[str]:
    """A line for each (objective, model) whose imported seeds come from more than one file."""
    sources = trials.config.map(_source)
    lines = []
    for (objective, model), files in sources.groupby([trials.objective, trials.model]):
        found = sorted(set(files.dropna()))
        if len(found) > 1:
            lines.append(
                f"{objective}/{model}: its seeds come from {' and '.join(found)}; their scatter pools "
                "the files' recipes and pipelines as seed noise, so an interval read from it holds "
                "more than seed noise (import the other file under another --sweep to keep them apart)"
            )
    return lines


def _source(config: str) -> str | None:
    try:
        recipe = json.loads(config).get("train", {}).get("recipe", "")
    except (ValueError, AttributeError):
        return None
    found = IMPORTED_FROM.match(recipe) if isinstance(recipe, str) else None
    return found.group(1) if found else None
