"""The model-free sample gap: R read from the measured seed means, with no law at all.

Each curve's seed means are joined log-linearly between checkpoints (no shape is assumed
between two measured sizes); N* is where that line first reaches the level. The interval comes
from resampling seeds (whole runs when the points are one run's checkpoints, so that a run's
correlated checkpoints move together), at the one confidence level of every interval. It
exists only where both crossings lie inside the measured checkpoints: outside them there is
nothing to read without a law.
"""

from dataclasses import dataclass, field

import numpy as np

from fits.curve.fit import POOL_BELOW, CurvePoints
from fits.curve.gaps import crossing
from fits.curve.level import LEVEL, tails

__all__ = ["RESAMPLES", "MeasuredGap", "measured_gap", "measured_level", "noise_measured"]

RESAMPLES = 2000


@dataclass(frozen=True)
class MeasuredGap:
    """R = N_B* / N_A* from the means, its interval (None where the seeds give none), and why
    there is no ratio or no interval."""

    target: float
    ratio: float | None
    interval: tuple[float, float] | None
    reasons: list[str] = field(default_factory=list)


def _resampled_means(points: CurvePoints, rng: np.random.Generator, count: int) -> np.ndarray:
    """(count, m) seed means drawn again, with the spread a mean of few seeds really has.

    Plain resampling of 3 seeds gives 10 distinct means and a spread (n - 1) / n too small: its
    95% intervals covered a planted gap 85% of the time. So the seeds are resampled by a wild
    bootstrap with Student-t weights instead: whole runs, when the points are checkpoints of
    the same runs, move together (mean + G (X - mean) / sqrt(n (n - 1)), G normal, scaled by
    sqrt(df / chi2_df) with df = n - 1: a multivariate t with the runs' covariance); else each
    point moves by its standard error times a t draw at the degrees of freedom behind it."""
    if points.run_values is not None:
        runs = points.run_values
        seeds = len(runs)
        weights = rng.standard_normal((count, seeds)) / np.sqrt(seeds * (seeds - 1))
        scale = np.sqrt((seeds - 1) / rng.chisquare(seeds - 1, (count, 1)))
        return points.mean + scale * (weights @ (runs - points.mean))
    per_point = points.seeds.min() >= POOL_BELOW
    df = points.seeds - 1 if per_point else np.full(len(points.samples), points.pooled_df)
    return points.mean + points.sigma * rng.standard_t(df, (count, len(df)))


def _joined(points: CurvePoints, means: np.ndarray, samples: float) -> np.ndarray:
    """(rows,) each row of seed means joined log-linearly and read at `samples`."""
    logs = np.log(points.samples)
    return np.array([np.interp(np.log(samples), logs, row) for row in np.atleast_2d(means)])


def measured_level(points: CurvePoints, samples: float) -> float | None:
    """The seed means' level at S, joined between checkpoints; None outside them."""
    if not points.samples[0] <= samples <= points.samples[-1]:
        return None
    return float(_joined(points, points.mean, samples)[0])


def measured_gap(
    a: CurvePoints,
    b: CurvePoints,
    target: float | None = None,
    samples_b: float | None = None,
    seed: int = 0,
    level: float = LEVEL,
) -> MeasuredGap:
    """R at `target`, or at B's measured level at `samples_b` (one of the two)."""
    if samples_b is not None:
        target = measured_level(b, samples_b)
        if target is None:
            return MeasuredGap(np.nan, None, None, [f"B was not measured around {samples_b:.3g} samples"])
    n_a = float(crossing(a.samples, a.mean[None, :], target)[0])
    n_b = samples_b if samples_b is not None else float(crossing(b.samples, b.mean[None, :], target)[0])
    reasons = [
        f"{name}'s seed means {_where(n)} the level {target:.3g}"
        for name, n in (("A", n_a), ("B", n_b))
        if n == 0 or not np.isfinite(n)
    ]
    if reasons:
        return MeasuredGap(target, None, None, reasons)
    if not (noise_measured(a) and noise_measured(b)):
        return MeasuredGap(target, n_b / n_a, None, ["one seed: the seeds give no interval"])
    rng = np.random.default_rng(seed)
    means_a = _resampled_means(a, rng, RESAMPLES)
    if samples_b is not None:
        targets = _joined(b, _resampled_means(b, rng, RESAMPLES), samples_b)
        draws_b = np.full(RESAMPLES, samples_b)
    else:
        targets = np.full(RESAMPLES, target)
        draws_b = crossing(b.samples, _resampled_means(b, rng, RESAMPLES), targets)
    draws_a = crossing(a.samples, means_a, targets)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = draws_b / draws_a
    # A resample whose crossing leaves the checkpoints bounds R on one side (A above the level
    # from its first checkpoint: R is larger than any ratio read inside; B never reaching it:
    # likewise), so it counts as R = inf or 0 and the interval may be open at that end. Where
    # both crossings leave (0/0, inf/inf) nothing is known: such a draw counts against both ends.
    lower, upper = tails(level)
    low = np.percentile(np.where(np.isnan(ratios), 0.0, ratios), lower, method="inverted_cdf")
    high = np.percentile(np.where(np.isnan(ratios), np.inf, ratios), upper, method="inverted_cdf")
    if low == 0 and not np.isfinite(high):
        share = float(np.mean((ratios == 0) | ~np.isfinite(ratios)))
        why = f"in {share:.0%} of seed resamples a crossing leaves the measured checkpoints"
        return MeasuredGap(target, n_b / n_a, None, [why])
    return MeasuredGap(target, n_b / n_a, (float(low), float(high)))


def noise_measured(points: CurvePoints) -> bool:
    """Whether the seeds measure the noise the resampling draws: two runs or more where the
    points are checkpoints of the same runs, else seed replicates somewhere on the curve (their
    pooled scatter then stands for a point one seed measured, as `_resampled_means` draws it).
    So a lone-seed point, such as the last checkpoint of a new run at a new size, does not
    withhold the interval of every seed mean around it."""
    if points.run_values is not None:
        return len(points.run_values) >= 2
    return points.pooled_df >= 1


def _where(crossed: float) -> str:
    return "start at or above" if crossed == 0 else "never reach"
