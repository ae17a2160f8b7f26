"""A planted-truth figure with its Monte-Carlo error: the value, its standard error and its
one-sided 95% bounds, so that a goal is checked on a bound (the lower bound of a share that must
be high, the upper bound of one that must be low) and not on a point the next machine's ninth
digit can move across the line.

- a share of replicates (a coverage, a verdict rate, the replicates one design wins): the
  binomial SE, and Clopper-Pearson's exact bounds;
- a median (a gap's ratio, a paired width ratio): distribution-free bounds from the order
  statistics a binomial count puts around the median, and the SE those bounds imply;
- a paired difference of two shares (one design right where the other is wrong, and the
  reverse): McNemar's SE and normal bounds.
"""

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

__all__ = ["BOUND", "Estimate", "median", "paired_difference", "share"]

BOUND = 0.95  # each bound is one-sided at this level: together a two-sided 90% interval


@dataclass(frozen=True)
class Estimate:
    """A figure over `n` replicates: its value, SE and one-sided bounds at BOUND."""

    value: float
    se: float
    low: float
    high: float
    n: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def share(hits: int, n: int) -> Estimate:
    """`hits` of `n` replicates: the binomial SE and Clopper-Pearson's one-sided bounds (0 and
    1 where every replicate, or none, is a hit); no replicates give no estimate (NaN)."""
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan, 0)
    p, tail = hits / n, 1 - BOUND
    low = float(stats.beta.ppf(tail, hits, n - hits + 1)) if hits > 0 else 0.0
    high = float(stats.beta.ppf(1 - tail, hits + 1, n - hits)) if hits < n else 1.0
    return Estimate(p, math.sqrt(p * (1 - p) / n), low, high, n)


def median(values: np.ndarray) -> Estimate:
    """The median with distribution-free one-sided bounds: the order statistics k and n - k + 1
    where k is the largest count a Binomial(n, 1/2) falls under with 1 - BOUND probability (inf
    values, such as an interval that never closed, sort last). The SE is what a normal median
    with those bounds would have."""
    ordered = np.sort(np.asarray(values, dtype=float))
    n = ordered.size
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan, 0)
    k = int(stats.binom.ppf(1 - BOUND, n, 0.5))  # P(count < k) <= 1 - BOUND
    low, high = ordered[max(k - 1, 0)], ordered[min(n - k, n - 1)]
    z = stats.norm.ppf(BOUND)
    se = (high - low) / (2 * z) if math.isfinite(high - low) else math.inf
    return Estimate(float(np.median(ordered)), float(se), float(low), float(high), n)


def paired_difference(gained: int, lost: int, n: int) -> Estimate:
    """(gained - lost) / n over `n` paired replicates (`gained`: the first right and the second
    wrong; `lost`: the reverse), with McNemar's SE and normal one-sided bounds."""
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan, 0)
    value = (gained - lost) / n
    se = math.sqrt(max(gained + lost - n * value**2, 0.0)) / n
    z = float(stats.norm.ppf(BOUND))
    return Estimate(value, se, value - z * se, value + z * se, n)
