"""A recorded sweep file rewritten with more runs in its `include:` (`orch next --write`): each
run a seed its objective and model never ran, the file's relative paths made absolute against
its own folder, so that the new file runs from anywhere and `orch sweep` runs only the new runs."""

import itertools
from pathlib import Path
from typing import Any, Protocol

import yaml

from orchestrator.errors import InputError
from orchestrator.sweepfile.imported import imported_design
from orchestrator.sweepfile.load import parse_spec

__all__ = ["with_runs"]


class Run(Protocol):
    objective: str
    model: str
    samples: float
    seeds: int


def with_runs(name: str, text: str, source: str, runs: list[Run]) -> str:
    """The sweep file `text` (read from `source`) with `runs` added to its include."""
    raw = yaml.safe_load(text)
    if imported_design(raw) is not None:
        raise InputError(
            f"sweep {name} was imported: orch cannot train its runs, so --write has nothing to write"
        )
    base = Path(source).resolve().parent
    spec = parse_spec(raw, source, read_claims=False, base_dir=base)
    # A fresh seed for the objective and model: at a constant learning rate a seed's shorter run
    # repeats the first checkpoints of its longer one, and would count twice.
    taken = {(t.objective, t.model, t.seed) for t in spec.trials}
    include = list(raw.get("include") or [])
    for run in runs:
        for _ in range(run.seeds):
            seed = next(s for s in itertools.count() if (run.objective, run.model, s) not in taken)
            taken.add((run.objective, run.model, seed))
            include.append(
                {"objective": run.objective, "model": run.model, "data_size": int(run.samples), "seed": seed}
            )
    raw["include"] = include
    _absolute_paths(raw, base)
    header = f"# orch next: {name} with the picked runs in include (orch sweep skips what is done)\n"
    return header + yaml.safe_dump(raw, sort_keys=False)


def _absolute_paths(raw: dict, base: Path) -> None:
    """Rewrite the sweep file's relative paths (claims, data files) against its own folder."""

    def absolute(value: Any) -> Any:
        if isinstance(value, str) and not Path(value).is_absolute():
            return str(base / value)
        return [absolute(v) for v in value] if isinstance(value, list) else value

    if isinstance(raw.get("claims"), str):
        raw["claims"] = absolute(raw["claims"])
    data = raw.get("data")
    if isinstance(data, dict):  # only file data holds these keys; the world's have no paths
        for key in ("pairs", "documents"):
            if key in data:
                data[key] = absolute(data[key])
        evaluation = data.get("eval") or {}
        if "texts" in evaluation:
            evaluation["texts"] = absolute(evaluation["texts"])
        for name, value in (evaluation.get("features") or {}).items():
            evaluation["features"][name] = absolute(value)
