"""`orch fit`'s options checked against what the sweep measured, before anything is fitted:
each problem is one `FitError` line naming the option and the values it may take."""

import math
from typing import TYPE_CHECKING

from db.errors import did_you_mean
from db.sizes import format_size
from fits.fit import FitError
from fits.results import FitOptions, FitSettings

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["check_options"]


def check_options(
    asked: FitOptions,
    settings: FitSettings,
    sweep: str,
    trials: "pd.DataFrame",
    measured: set[tuple[str, str]],
    schedules: dict[str, str],
) -> list[str]:
    """Every option names something the sweep has, or a FitError; returns the warnings for
    options that run with a caveat. `schedules`: objective -> its learning-rate schedule."""
    objectives = sorted(set(trials.objective))
    for pair in settings.gaps:
        _check_gap(pair, sweep, objectives)
    low, high = settings.span
    level = settings.at_alignment
    if level is not None and not (math.isfinite(level) and low < level < high):
        raise FitError(
            f"--at-alignment {level}: give a level inside {settings.metric}'s range ({low:g}, {high:g})"
        )
    for flag, value, column in (("--metric", settings.metric, 0), ("--reference", settings.reference, 1)):
        known = sorted({pair[column] for pair in measured})
        if value is not None and known and value not in known:
            hint = did_you_mean(value, known)
            raise FitError(
                f"{flag} {value!r} was not measured in {sweep}{hint} (measured: {', '.join(known)})"
            )
    sizes = sorted(set(trials.data_size))
    for size in settings.holdout:
        if size not in sizes:
            listed = ", ".join(format_size(s) for s in sizes)
            raise FitError(f"--holdout {format_size(size)} is not a data size of {sweep} ({listed})")
    decaying = sorted(objective for objective, schedule in schedules.items() if schedule != "constant")
    if asked.points == "all" and decaying:
        return [
            f"--points all on runs whose learning rate decays ({', '.join(decaying)}): a checkpoint "
            "before the end of its schedule is not what a run of that size would reach; each "
            "trial's final checkpoint (--points final) is the curve"
        ]
    return []


def _check_gap(pair: str, sweep: str, objectives: list[str]) -> None:
    names = pair.split(":")
    if len(names) != 2 or not all(names):
        raise FitError(f"--gap {pair!r}: write A:B, two objectives of the sweep ({', '.join(objectives)})")
    for name in names:
        if name not in objectives:
            hint = did_you_mean(name, objectives)
            raise FitError(
                f"--gap {pair}: {name!r} is not an objective of {sweep}{hint} ({', '.join(objectives)})"
            )
