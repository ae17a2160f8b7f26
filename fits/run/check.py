"""`orch fit`'s options checked against what the sweep measured, before anything is fitted:
each problem is one `FitError` line naming the option and the values it may take."""

import math
from typing import TYPE_CHECKING

from fits.curve.fit import FitError
from fits.curve.settings import FitOptions, FitSettings, Points
from foundation.errors import did_you_mean
from foundation.sizes import format_size

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_BOOTSTRAP", "check_options"]

MAX_BOOTSTRAP = 10_000  # refits per law and curve


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
    _check_numbers(settings)
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
    if asked.points is Points.ALL and decaying:
        return [
            f"--points all on runs whose learning rate decays ({', '.join(decaying)}): a checkpoint "
            "before the end of its schedule is not what a run of that size would reach; each "
            "trial's final checkpoint (--points final) is the curve"
        ]
    return []


def _check_numbers(options: FitOptions) -> None:
    """Options that are numbers: finite, in range, and only where they mean something."""
    if options.huber is not None and not (math.isfinite(options.huber) and options.huber > 0):
        raise FitError(f"--huber-delta {options.huber}: give a positive number of log units (default 0.01)")
    if options.bootstrap > MAX_BOOTSTRAP:
        raise FitError(
            f"--bootstrap {options.bootstrap}: at most {MAX_BOOTSTRAP:,} refits (each law is refitted that "
            "many times per curve; 4,000 already give bands stable to their third digit)"
        )
    if options.gap_at is not None and options.at_alignment is not None:
        raise FitError("--at and --at-alignment both name the gap's level: give one of them")
    level = "--at" if options.gap_at is not None else "--at-alignment"
    if (options.gap_at is not None or options.at_alignment is not None) and not options.gaps:
        raise FitError(f"{level} sets the level of a gap: give the gap too (--gap A:B)")


def _check_gap(pair: str, sweep: str, objectives: list[str]) -> None:
    names = pair.split(":")
    if len(names) != 2 or not all(names):
        raise FitError(f"--gap {pair!r}: write A:B, two objectives of the sweep ({', '.join(objectives)})")
    if names[0] == names[1]:
        raise FitError(f"--gap {pair}: a gap compares two objectives; name two different ones")
    for name in names:
        if name not in objectives:
            hint = did_you_mean(name, objectives)
            raise FitError(
                f"--gap {pair}: {name!r} is not an objective of {sweep}{hint} ({', '.join(objectives)})"
            )
