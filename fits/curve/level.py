"""The one confidence level of every band, interval and calibration check, and its normal z.

Bands use Student's t at their own degrees of freedom (`quantile`); a held-out cell is within
seed noise when |z| <= Z; percentile intervals take the tails `tails(level)`; a level prints as
`percent(level)` says, in a table's header and in a verdict's reasons alike.
"""

from scipy import stats

__all__ = ["LEVEL", "Z", "percent", "quantile", "tails"]

LEVEL = 0.95
Z = float(stats.norm.ppf(0.5 + LEVEL / 2))  # 1.959964...


def quantile(level: float = LEVEL, dof: int | None = None) -> float:
    """The two-sided quantile: Student's t at `dof` degrees of freedom, normal when unknown."""
    tail = 0.5 + level / 2
    return float(stats.t.ppf(tail, dof)) if dof and dof > 0 else float(stats.norm.ppf(tail))


def tails(level: float = LEVEL) -> tuple[float, float]:
    """The percentiles that bound a two-sided interval at `level`: (2.5, 97.5) at 0.95."""
    return 50 * (1 - level), 100 - 50 * (1 - level)


def percent(level: float) -> str:
    """A level as a reader writes it, with the fewest decimals that keep its tail within 5%:
    "95%", "98.8%" and "99.95%", never a rounded "99%" or "100%" (a loop's looks each judge at
    1 - 5% / (rounds + 1), and a reader adds their tails up)."""
    tail = 100 * (1 - level)
    texts = [f"{100 * level:.{places}f}" for places in range(7)]
    return next((t for t in texts if abs(100 - float(t) - tail) <= 0.05 * tail), texts[-1]) + "%"
