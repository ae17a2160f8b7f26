"""The one confidence level of every band, interval and calibration check, and its normal z.

Bands use Student's t at their own degrees of freedom (`quantile`); a held-out cell is within
seed noise when |z| <= Z; percentile intervals take the tails `tails(level)`.
"""

from scipy import stats

__all__ = ["LEVEL", "Z", "quantile", "tails"]

LEVEL = 0.95
Z = float(stats.norm.ppf(0.5 + LEVEL / 2))  # 1.959964...


def quantile(level: float = LEVEL, dof: int | None = None) -> float:
    """The two-sided quantile: Student's t at `dof` degrees of freedom, normal when unknown."""
    tail = 0.5 + level / 2
    return float(stats.t.ppf(tail, dof)) if dof and dof > 0 else float(stats.norm.ppf(tail))


def tails(level: float = LEVEL) -> tuple[float, float]:
    """The percentiles that bound a two-sided interval at `level`: (2.5, 97.5) at 0.95."""
    return 50 * (1 - level), 100 - 50 * (1 - level)
