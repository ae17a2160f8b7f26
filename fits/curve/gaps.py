"""Sample gaps: how many fewer samples curve A needs than curve B to reach one alignment level.

R = N_B* / N_A*, where N* is the samples at which a curve's law mixture reaches the target a*.
A curve is inverted only inside its observed range, so a gap never rests on extrapolating a
law down to one sample or out to a size nobody ran:

- the default target is the middle of the levels both curves reach inside their observed ranges;
- where one curve is already above the target at its first checkpoint, or never reaches it by
  its last, the data bound R from one side, and the gap reports that bound, not a ratio;
- the interval is the percentile interval of R over the mixtures' curve draws. Each curve's
  draws are its own (`points_seed`) and Student's t on its seed dof (`Ensemble.t_spread`): a
  gap has no noise term to carry the uncertainty of the seed noise (with normal draws, the 90%
  intervals of `bench/next.py`'s orch next designs held the planted gap in 83.5% of
  replicates). A draw that does not reach the target inside the search range leaves the
  interval open on that side.

A gap is identifiable when both crossings are observed, its interval is closed and spans at
most MAX_SPAN, and the lack-of-fit test does not reject either curve's heaviest law at
MISFIT_P; otherwise `reasons` says why in words (and a rejected law gives no bound either).

R is read at LEVELS levels across the overlap too (`ratio_by_level`). Where the intervals at the
overlap's bottom, middle and top do not all overlap, R depends on the level
(RATIO_DEPENDS_ON_LEVEL), and where one lies wholly above 1 and another wholly below, the curves
cross (CURVES_CROSS): a ratio at one level would hide that, so such a gap is identifiable only
at a level the user gave.
"""

from dataclasses import dataclass, field

import numpy as np

from fits.curve.ensemble import DRAWS, Ensemble
from fits.curve.level import LEVEL, tails
from foundation.sizes import format_size

__all__ = [
    "MAX_SPAN",
    "Bound",
    "Gap",
    "LevelRatio",
    "crossing",
    "default_target",
    "level_overlap",
    "observed_crossing",
    "ratio_by_level",
    "sample_gap",
]

MAX_SPAN = 100.0  # an interval whose high / low exceeds this is no headline
MISFIT_P = 1e-3  # a lack-of-fit p-value below this withdraws a gap's numbers
REACH = 4.0  # draws are searched this far beyond the observed range, each side
GRID = 400
LEVELS = 7  # levels evenly inside the overlap at which R is read


@dataclass(frozen=True)
class Bound:
    """What the data support when no ratio is identified: R `side` `ratio` (side '>=' or '<=')."""

    side: str
    ratio: float

    def __str__(self) -> str:
        return f"R {self.side} {self.ratio:.3g}x"


@dataclass(frozen=True)
class LevelRatio:
    """R at one level of the overlap, with its percentile interval over the draws."""

    target: float
    samples_b: float
    ratio: float
    interval: tuple[float, float]


@dataclass
class Gap:
    target: float
    samples_a: float | None
    samples_b: float | None
    ratio: float | None
    interval: tuple[float, float] | None
    identifiable: bool
    reasons: list[str] = field(default_factory=list)
    bound: Bound | None = None  # when only a bound holds
    flags: list[str] = field(default_factory=list)
    by_level: list[LevelRatio] = field(default_factory=list)  # R across the overlap


def crossing(samples: np.ndarray, curves: np.ndarray, target) -> np.ndarray:
    """(D,) the first S on the log-spaced `samples` grid where each curve reaches its target
    (log-linear between grid points); 0 where a curve starts at or above it, inf where it never
    gets there."""
    curves = np.atleast_2d(curves)
    target = np.broadcast_to(np.asarray(target, dtype=float), (len(curves),))[:, None]
    above = curves >= target
    first = np.argmax(above, axis=1)
    reached = above.any(axis=1)
    logs = np.log(samples)
    rows = np.arange(len(curves))
    before = np.maximum(first - 1, 0)
    low, high = curves[rows, before], curves[rows, first]
    share = np.where(high > low, (target[:, 0] - low) / np.where(high > low, high - low, 1.0), 0.0)
    found = np.exp(logs[before] + share * (logs[first] - logs[before]))
    return np.where(~reached, np.inf, np.where(first == 0, 0.0, found))


def observed_crossing(ensemble: Ensemble, target: float) -> tuple[str, float]:
    """Where the mixture reaches `target` inside its observed range: ("inside", N*), or
    ("before", first S) when already above it there, or ("after", last S) when never."""
    low, high = ensemble.samples_range
    grid = np.geomspace(low, high, GRID)
    found = float(crossing(grid, ensemble.predict(grid)[None, :], target)[0])
    if found == 0.0:
        return "before", low
    if not np.isfinite(found):
        return "after", high
    return "inside", found


def _search_grid(ensemble: Ensemble) -> np.ndarray:
    low, high = ensemble.samples_range
    return np.geomspace(low / REACH, high * REACH, GRID)


def _draw_crossings(ensemble: Ensemble, target) -> np.ndarray:
    grid = _search_grid(ensemble)
    return crossing(grid, ensemble.curve_draws(grid, spread=ensemble.t_spread()), target)


def _percentiles(ratios: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile interval of R over the draws; 0 and inf stay (no arithmetic on them). No
    draw with a ratio at all: open at both ends."""
    ratios = ratios[~np.isnan(ratios)]
    if ratios.size == 0:
        return 0.0, float("inf")
    low, high = np.percentile(ratios, tails(level), method="inverted_cdf")
    return float(low), float(high)


def ratio_by_level(a: Ensemble, b: Ensemble, level: float = LEVEL) -> list[LevelRatio]:
    """R at LEVELS levels evenly inside `level_overlap`, where both mixtures cross inside their
    observed ranges (R differs by level when the curves' shapes differ); empty when the ranges
    of levels do not overlap."""
    bottom, top = level_overlap(a, b)
    if top <= bottom:
        return []
    grid_a, grid_b = _search_grid(a), _search_grid(b)
    draws_a = a.curve_draws(grid_a, spread=a.t_spread())
    draws_b = b.curve_draws(grid_b, spread=b.t_spread())
    rows = []
    for target in np.linspace(bottom, top, LEVELS + 2)[1:-1]:
        (where_a, n_a), (where_b, n_b) = observed_crossing(a, target), observed_crossing(b, target)
        if where_a == where_b == "inside":
            with np.errstate(divide="ignore", invalid="ignore"):
                ratios = crossing(grid_b, draws_b, target) / crossing(grid_a, draws_a, target)
            rows.append(LevelRatio(float(target), n_b, n_b / n_a, _percentiles(ratios, level)))
    return rows


def _level_dependence(rows: list[LevelRatio]) -> tuple[list[str], list[str]]:
    """(flags, reasons) when R at the overlap's bottom, middle and top differs beyond their
    intervals, or the curves cross (an interval wholly above 1 and another wholly below)."""
    if len(rows) < 2:
        return [], []
    ends = [rows[0], rows[len(rows) // 2], rows[-1]]
    apart = any(x.interval[1] < y.interval[0] for x in ends for y in ends)
    cross = any(x.interval[1] < 1 for x in ends) and any(x.interval[0] > 1 for x in ends)
    if not apart:
        return [], []
    words = ", ".join(
        f"{row.ratio:.3g}x [{row.interval[0]:.3g}, {row.interval[1]:.3g}] at {row.target:.3g}" for row in ends
    )
    reasons = [f"R depends on the level: {words} (bottom, middle and top of the levels both reach)"]
    if cross:
        reasons.append("the curves cross: A is ahead at one level and B at another")
    return ["RATIO_DEPENDS_ON_LEVEL", *(["CURVES_CROSS"] if cross else [])], reasons


def level_overlap(a: Ensemble, b: Ensemble) -> tuple[float, float]:
    """(bottom, top) of the levels both mixtures reach inside their observed ranges; bottom >
    top when they do not overlap."""
    bottom = max(float(e.predict(e.samples_range[0])) for e in (a, b))
    top = min(float(e.predict(e.samples_range[1])) for e in (a, b))
    return bottom, top


def default_target(a: Ensemble, b: Ensemble) -> float:
    """The middle of `level_overlap` (at its top one curve is at its last checkpoint, and half
    its draws reach the level only past the data); B's last level when there is no overlap."""
    bottom, top = level_overlap(a, b)
    return (bottom + top) / 2 if top >= bottom else float(b.predict(b.samples_range[1]))


def sample_gap(
    a: Ensemble,
    b: Ensemble | None,
    target: float | None = None,
    samples_b: float | None = None,
    target_sd: float = 0.0,
    level: float = LEVEL,
) -> Gap:
    """R = N_B* / N_A* at `target` (default: `default_target`), or at B's level at `samples_b`.

    With `b=None`, B is one checkpoint: its observed `target` (standard error `target_sd`) at
    `samples_b`.
    """
    flags: list[str] = []
    level_given = target is not None or samples_b is not None  # the user's, not the default
    if b is None:
        if target is None or samples_b is None:
            raise ValueError("a single-checkpoint B needs its level and its samples")
        flags.append("B_SINGLE_CHECKPOINT")
        position_b = ("inside", samples_b)
        target_draws = target + target_sd * np.random.default_rng(0).standard_normal(DRAWS)
    elif samples_b is not None:
        target = float(b.predict(samples_b, forecast=True))
        position_b = ("inside", samples_b)
        if not b.samples_range[0] <= samples_b <= b.samples_range[1]:
            flags.append("B_EXTRAPOLATED")
        target_draws = b.curve_draws([samples_b], forecast=True, spread=b.t_spread())[:, 0]
    else:
        target = default_target(a, b) if target is None else target
        position_b = observed_crossing(b, target)
        target_draws = target
    position_a = observed_crossing(a, target)
    misfit = _misfits(a, b)
    if position_a[0] == "inside" and position_b[0] == "inside":
        gap = _ratio_gap(a, b, target, target_draws, samples_b, position_a[1], position_b[1], flags, level)
    else:
        ranges = (
            _crossing_range(a, target_draws, position_a, level),
            (samples_b, samples_b)
            if samples_b is not None
            else _crossing_range(b, target, position_b, level),
        )
        gap = _bounded_gap(target, position_a, position_b, ranges, flags)
    if b is not None:
        gap.by_level = ratio_by_level(a, b, level)
        depends, words = _level_dependence(gap.by_level)
        gap.flags += depends
        gap.reasons += words if depends and not level_given else []
        if depends and not level_given:
            gap.identifiable = False
            gap.reasons.append("give the level to read it at (--at, --at-alignment, or the claim's at)")
    for curve, reason in misfit:
        gap.reasons.append(reason)
        gap.flags.append(f"{curve}_LACK_OF_FIT")
    if misfit:
        gap.identifiable, gap.bound = False, None  # a rejected law supports no number at all
    return gap


def _misfits(a: Ensemble, b: Ensemble | None) -> list[tuple[str, str]]:
    """The curves whose heaviest law the lack-of-fit test rejects at MISFIT_P: no crossing of
    theirs is trustworthy. (At 0.05, one curve pair in ten of true laws would be refused.)"""
    found = []
    for name, ensemble in (("A", a), ("B", b)):
        fit = ensemble.heaviest if ensemble is not None else None
        if fit is not None and fit.lof_p is not None and fit.lof_p < MISFIT_P:
            found.append(
                (name, f"{name}'s laws do not describe its points (lack-of-fit p = {fit.lof_p:.2g})")
            )
    return found


def _ratio_gap(a, b, target, target_draws, samples_b, n_a, n_b, flags, level) -> Gap:
    """Both crossings observed: the ratio, with its percentile interval over the draws."""
    draws_a = _draw_crossings(a, target_draws)
    draws_b = np.full_like(draws_a, samples_b) if samples_b is not None else _draw_crossings(b, target)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = draws_b / draws_a
    ratios = ratios[~np.isnan(ratios)]
    low, high = _percentiles(ratios, level)
    reasons = []
    if not (np.isfinite(high) and low > 0):
        open_share = float(np.mean((ratios == 0) | ~np.isfinite(ratios)))
        reasons.append(
            f"interval open: {open_share:.0%} of draws do not reach the target within {REACH:g}x of the data"
        )
        flags.append("OPEN_INTERVAL")
    elif high / low > MAX_SPAN:
        reasons.append(f"interval spans {high / low:.3g}x, more than {MAX_SPAN:g}x")
        flags.append("WIDE_INTERVAL")
    if "B_EXTRAPOLATED" in flags:
        reasons.append(f"B's level at {format_size(samples_b)} samples is extrapolated past its data")
    return Gap(target, n_a, n_b, n_b / n_a, (float(low), float(high)), not reasons, reasons, None, flags)


def _crossing_range(
    ensemble: Ensemble, target, position: tuple[str, float], level: float
) -> tuple[float, float]:
    """Where the curve may reach the target, at `level` over its draws, widened by what the
    data say: (0, >= first S) when above it from the start, (<= last S, inf) when not reached."""
    low, high = np.percentile(_draw_crossings(ensemble, target), tails(level), method="inverted_cdf")
    where, samples = position
    if where == "before":
        return 0.0, max(samples, float(high))
    if where == "after":
        return min(samples, float(low)), np.inf
    return float(low), float(high)


def _bounded_gap(
    target: float,
    position_a: tuple[str, float],
    position_b: tuple[str, float],
    ranges: tuple[tuple[float, float], tuple[float, float]],
    flags: list[str],
) -> Gap:
    """A crossing outside a curve's observed range: the bound the data give R, if any.

    With N_A* in [a_low, a_high] and N_B* in [b_low, b_high] (each at the level, from the
    draws and the data), R >= b_low / a_high and R <= b_high / a_low; a bound that rests on
    0 or infinity says nothing and is not given.
    """
    (where_a, s_a), (where_b, s_b) = position_a, position_b
    reasons = []
    for curve, where, samples in (("A", where_a, s_a), ("B", where_b, s_b)):
        if where == "before":
            reasons.append(
                f"{curve} is above the target {target:.3g} from its first checkpoint ({samples:.3g} samples)"
            )
            flags.append(f"{curve}_ABOVE_TARGET_AT_FIRST_CHECKPOINT")
        if where == "after":
            last = f"by its last checkpoint ({samples:.3g} samples)"
            reasons.append(f"{curve} does not reach the target {target:.3g} {last}")
            flags.append(f"{curve}_NOT_REACHED")
    (a_low, a_high), (b_low, b_high) = ranges
    bound = None
    if b_low > 0 and np.isfinite(a_high):
        bound = Bound(">=", b_low / a_high)
    elif np.isfinite(b_high) and a_low > 0:
        bound = Bound("<=", b_high / a_low)
    else:
        reasons.append("the data bound R from neither side")
    return Gap(target, None, None, None, None, False, reasons, bound, flags)
