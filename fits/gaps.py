"""Sample gaps: how many fewer samples curve A needs than curve B to reach one alignment level.

R = N_B* / N_A*, where N* is the samples at which a curve's law mixture reaches the target a*.
A curve is inverted only inside its observed range, so a gap never rests on extrapolating a
law down to one sample or out to a size nobody ran:

- the default target is the highest level both curves reach inside their observed ranges;
- where one curve is already above the target at its first checkpoint, or never reaches it by
  its last, the data bound R from one side, and the gap reports that bound, not a ratio;
- the interval is the percentile interval of R over the mixtures' curve draws. A draw that does
  not reach the target inside the search range leaves the interval open on that side.

A gap is identifiable when both crossings are observed and its interval is closed and spans
at most MAX_SPAN; otherwise `reasons` says why in words.
"""

from dataclasses import dataclass, field

import numpy as np

from fits.ensemble import DRAWS, Ensemble
from fits.level import LEVEL, tails

__all__ = ["MAX_SPAN", "Gap", "crossing", "default_target", "observed_crossing", "sample_gap"]

MAX_SPAN = 100.0  # an interval whose high / low exceeds this is no headline
REACH = 4.0  # draws are searched this far beyond the observed range, each side
GRID = 400


@dataclass
class Gap:
    target: float
    samples_a: float | None
    samples_b: float | None
    ratio: float | None
    interval: tuple[float, float] | None
    identifiable: bool
    reasons: list[str] = field(default_factory=list)
    bound: dict | None = None  # {"side": ">=" or "<=", "ratio": R bound}, when only a bound holds
    flags: list[str] = field(default_factory=list)


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


def _draw_crossings(ensemble: Ensemble, target) -> np.ndarray:
    low, high = ensemble.samples_range
    grid = np.geomspace(low / REACH, high * REACH, GRID)
    return crossing(grid, ensemble.curve_draws(grid), target)


def default_target(a: Ensemble, b: Ensemble) -> float:
    """The highest level both mixtures reach inside their observed ranges; B's last level when
    the ranges of levels do not overlap."""
    top_a, top_b = (float(e.predict(e.samples_range[1])) for e in (a, b))
    bottom_a, bottom_b = (float(e.predict(e.samples_range[0])) for e in (a, b))
    top = min(top_a, top_b)
    return top if top >= max(bottom_a, bottom_b) else top_b


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
    if b is None:
        if target is None or samples_b is None:
            raise ValueError("a single-checkpoint B needs its level and its samples")
        flags.append("B_SINGLE_CHECKPOINT")
        position_b = ("inside", samples_b)
        target_draws = target + target_sd * np.random.default_rng(0).standard_normal(DRAWS)
    elif samples_b is not None:
        target = float(b.predict(samples_b))
        position_b = ("inside", samples_b)
        if not b.samples_range[0] <= samples_b <= b.samples_range[1]:
            flags.append("B_EXTRAPOLATED")
        target_draws = b.curve_draws([samples_b])[:, 0]
    else:
        target = default_target(a, b) if target is None else target
        position_b = observed_crossing(b, target)
        target_draws = target
    position_a = observed_crossing(a, target)
    if position_a[0] == "inside" and position_b[0] == "inside":
        return _ratio_gap(a, b, target, target_draws, samples_b, position_a[1], position_b[1], flags, level)
    return _bounded_gap(target, position_a, position_b, flags)


def _ratio_gap(a, b, target, target_draws, samples_b, n_a, n_b, flags, level) -> Gap:
    """Both crossings observed: the ratio, with its percentile interval over the draws."""
    draws_a = _draw_crossings(a, target_draws)
    draws_b = np.full_like(draws_a, samples_b) if samples_b is not None else _draw_crossings(b, target)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = draws_b / draws_a
    ratios = ratios[~np.isnan(ratios)]
    low, high = np.percentile(ratios, tails(level), method="inverted_cdf")  # no arithmetic on inf
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
        reasons.append(f"B's level at {samples_b:.3g} samples is extrapolated past its data")
    return Gap(target, n_a, n_b, n_b / n_a, (float(low), float(high)), not reasons, reasons, None, flags)


def _bounded_gap(target: float, position_a: tuple[str, float], position_b: tuple[str, float], flags) -> Gap:
    """A crossing outside a curve's observed range: the bound the data give R, if any."""
    (where_a, s_a), (where_b, s_b) = position_a, position_b
    reasons = []
    if where_a == "before":
        reasons.append(f"A is above the target {target:.3g} from its first checkpoint ({s_a:.3g} samples)")
        flags.append("A_ABOVE_TARGET_AT_FIRST_CHECKPOINT")
    if where_a == "after":
        reasons.append(f"A does not reach the target {target:.3g} by its last checkpoint ({s_a:.3g} samples)")
        flags.append("A_NOT_REACHED")
    if where_b == "before":
        reasons.append(f"B is above the target {target:.3g} from its first checkpoint ({s_b:.3g} samples)")
        flags.append("B_ABOVE_TARGET_AT_FIRST_CHECKPOINT")
    if where_b == "after":
        reasons.append(f"B does not reach the target {target:.3g} by its last checkpoint ({s_b:.3g} samples)")
        flags.append("B_NOT_REACHED")
    # N_A* <= s_a when A is above from the start; N_B* >= s_b when B is not reached; and so on.
    lower = where_a in ("before", "inside") and where_b in ("inside", "after")
    upper = where_a in ("after", "inside") and where_b in ("inside", "before")
    bound = {"side": ">=" if lower else "<=", "ratio": s_b / s_a} if lower or upper else None
    if bound is None:
        reasons.append("both crossings lie on the same side of the data: no bound")
    return Gap(target, None, None, None, None, False, reasons, bound, flags)
