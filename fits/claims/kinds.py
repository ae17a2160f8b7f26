"""The catalog of claim kinds: one entry a kind, holding the fields a claims file gives it, how
its region reads, its judge, its design rule (what a sweep's design must hold to decide it),
how its values print and what the planner needs of it. A new kind is one entry here (and its
judge and design rule)."""

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from fits.claims.claim import Claim, Kind, Verdict
from fits.claims.design import DesignRule, forecast_faults, gap_faults, level_faults, pair_faults
from fits.claims.difference import judge_difference
from fits.claims.forecast import judge_forecast
from fits.claims.gap import judge_gap
from fits.claims.level import judge_level
from fits.claims.order import judge_order
from fits.curve.curveset import CurveSet

__all__ = ["CATALOG", "ClaimKind", "Estimator"]

Judge = Callable[[Claim, CurveSet, float], Verdict]


class Estimator(StrEnum):
    """What a claim's interval is read from, so what a planned run must narrow."""

    LAWS = "laws"  # the fitted laws' draws (a gap)
    MEANS = "means"  # the seed means at measured sizes (an order)
    MEANS_WHERE_MEASURED = "means where measured"  # a level: the means at a measured size, else laws
    NONE = "none"  # settled by held-out runs: not planned (a forecast)


@dataclass(frozen=True)
class ClaimKind:
    kind: Kind
    fields: tuple[str, ...]  # the kind's own fields in a claims file, beside the common ones
    required: tuple[str, ...]
    factor: bool  # a tolerance is a factor (42 within x2 is [21, 84]), else a width
    difference: bool  # a value that is a difference: the region defaults to at least 0
    judge: Judge
    design: DesignRule  # what the sweep's design lacks to decide it, before any run
    estimator: Estimator
    ratio: bool = False  # widths on a log scale (high / low)
    percent: bool = False  # values print as a share

    def show(self, value: float | None) -> str:
        """A value of this kind as the verdict table prints it: a ratio, a share or a level."""
        if value is None or math.isnan(value):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if self.ratio:
            return f"{value:.3g}x"
        return f"{value:.0%}" if self.percent else f"{value:.4f}"

    def width_of(self, interval: tuple[float, float] | None) -> float | None:
        """ln(high / low) of a ratio's interval, high - low of any other; None where there is no
        closed interval."""
        if interval is None or not all(math.isfinite(end) for end in interval):
            return None
        if self.ratio:
            return math.log(interval[1] / interval[0]) if interval[0] > 0 else None
        return float(interval[1] - interval[0])

    def width(self, width: float) -> str:
        """An interval's width (`width_of`) as the planner prints it: a ratio's as high / low."""
        if not math.isfinite(width):
            return "open"
        return f"x{math.exp(width):.3g}" if self.ratio else f"{width:.4f}"

    def planned(self, claim: Claim) -> bool:
        """Whether `orch next` plans runs for the claim (not yet against a baseline)."""
        return self.estimator is not Estimator.NONE and claim.baseline is None


CATALOG: dict[Kind, ClaimKind] = {
    Kind.GAP: ClaimKind(
        Kind.GAP,
        ("faster", "slower", "at", "at_alignment", "per"),
        ("faster", "slower"),
        factor=True,
        difference=False,
        judge=judge_gap,
        design=gap_faults,
        estimator=Estimator.LAWS,
        ratio=True,
    ),
    Kind.LEVEL: ClaimKind(
        Kind.LEVEL,
        ("objective", "at", "baseline"),
        ("objective", "at"),
        factor=False,
        difference=False,  # a level against a baseline is a difference: `Claim.baseline` says so
        judge=judge_level,
        design=level_faults,
        estimator=Estimator.MEANS_WHERE_MEASURED,
    ),
    Kind.ORDER: ClaimKind(
        Kind.ORDER,
        ("above", "below", "at"),
        ("above", "below"),
        factor=False,
        difference=True,
        judge=judge_order,
        design=pair_faults,
        estimator=Estimator.MEANS,
    ),
    Kind.DIFFERENCE: ClaimKind(
        Kind.DIFFERENCE,
        ("above", "below", "at"),
        ("above", "below", "at"),
        factor=False,
        difference=False,  # its region is what it claims: at_least 0.02, say
        judge=judge_difference,
        design=pair_faults,
        estimator=Estimator.MEANS,
    ),
    Kind.FORECAST: ClaimKind(
        Kind.FORECAST,
        ("objective",),
        (),
        factor=False,
        difference=False,
        judge=judge_forecast,
        design=forecast_faults,
        estimator=Estimator.NONE,
        percent=True,
    ),
}
