"""A recorded sweep file rewritten with more runs in its `include:` (`orch next --write`): each
run a seed its objective and model never ran, the file's relative paths made absolute against
its own folder, so that the new file runs from anywhere and `orch sweep` runs only the new runs.
For a sweep orch did not train (an import), a template sweep file gives the data, recipe and
resources, and the file written holds the picked runs alone (`runs_only`)."""

import itertools
from pathlib import Path
from typing import Any, Protocol

import yaml

from orchestrator.errors import InputError
from orchestrator.outputs import NEXT_HEADER
from orchestrator.sweepfile.imported import imported_design
from orchestrator.sweepfile.load import parse_spec

__all__ = ["fresh_entries", "numbered", "runs_only", "with_include", "with_runs"]


class Run(Protocol):
    objective: str
    model: str
    samples: float
    seeds: int


def with_runs(name: str, text: str, source: str, runs: list[Run]) -> str:
    """The sweep file `text` (read from `source`) with `runs` added to its include."""
    return with_include(name, text, source, fresh_entries(name, text, source, runs))


def fresh_entries(name: str, text: str, source: str, runs: list[Run]) -> list[dict[str, Any]]:
    """`runs` as include entries of the sweep file `text`, each seed one its objective and model
    never ran there."""
    raw = _trainable(name, text)
    spec = parse_spec(raw, source, read_claims=False, base_dir=Path(source).resolve().parent)
    return numbered(runs, {(t.objective, t.model, t.seed) for t in spec.trials})


def numbered(runs: list[Run], taken: set[tuple[str, str, int]]) -> list[dict[str, Any]]:
    """One cell a seed of `runs`, each seed the lowest its objective and model never ran
    (`taken`: (objective, model, seed) recorded): at a constant learning rate a seed's shorter
    run repeats the first checkpoints of its longer one and would count twice, and a recorded
    seed's number on a new run would read as the same run when its results are imported back."""
    taken, cells = set(taken), []
    for run in runs:
        for _ in range(run.seeds):
            seed = next(s for s in itertools.count() if (run.objective, run.model, s) not in taken)
            taken.add((run.objective, run.model, seed))
            cells.append(
                {"objective": run.objective, "model": run.model, "data_size": int(run.samples), "seed": seed}
            )
    return cells


def with_include(name: str, text: str, source: str, entries: list[dict[str, Any]]) -> str:
    """The sweep file `text` (read from `source`) with `entries` added to its include, its
    relative paths made absolute."""
    raw = _trainable(name, text)
    raw["include"] = [*(raw.get("include") or []), *entries]
    _absolute_paths(raw, Path(source).resolve().parent)
    header = f"{NEXT_HEADER} {name} with the picked runs in include (orch sweep skips what is done)\n"
    return header + yaml.safe_dump(raw, sort_keys=False)


def _trainable(name: str, text: str) -> dict[str, Any]:
    """The sweep file's YAML, or an InputError where it is an import orch cannot train."""
    raw = yaml.safe_load(text)
    if imported_design(raw) is not None:
        raise InputError(
            f"sweep {name} was imported: orch cannot train its runs, so --write has nothing to write"
        )
    return raw


def runs_only(into: str, text: str, source: str, runs: list[Run], taken: set[tuple[str, str, int]]) -> str:
    """The template sweep file `text` (read from `source`) running `runs` alone, as sweep
    `{into}_next`, whose results are imported back into the imported sweep `into`:
    its grid, include, exclude and holdout replaced by the runs (seeds no recorded run of their
    objective and model uses: `taken`, the imported sweep's), and no claims (they name curves
    these runs alone do not hold: judge them where the runs are imported back). The caller has
    read the template as a sweep file; the result is read back as one before it is returned."""
    if not runs:
        raise InputError("no run was picked: nothing to write")
    raw = yaml.safe_load(text)
    base = Path(source).resolve().parent
    first, *rest = numbered(runs, taken)
    for key in ("include", "exclude", "holdout", "claims"):
        raw.pop(key, None)
    name = raw["name"] = f"{into}_next"
    raw["grid"] = {axis: [value] for axis, value in first.items()}
    if rest:
        raw["include"] = rest
    _absolute_paths(raw, base)
    parse_spec(raw, source, read_claims=False, base_dir=base)
    header = (
        f"{NEXT_HEADER} the picked runs on {Path(source).name}'s data, recipe and resources. To judge\n"
        f"# them with the runs they complete: orch sweep THIS.yaml; orch export {name} --out x;\n"
        f"# orch import x/measurements.csv --sweep {into}\n"
    )
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
