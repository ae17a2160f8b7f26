"""Backtests at the ratios people extrapolate: fit a curve on its points at or below S / k and
forecast its largest point S, for k = 2, 4, 8, 16 where at least MIN_POINTS remain. The table
of error and PI coverage against k is what a reader needs to trust a forecast k times past the
data (the OLMo ladder reports its prediction error the same way)."""

from dataclasses import dataclass, replace

import numpy as np

from fits.curve.bands import Forecast, covered, forecast, score_holdout
from fits.curve.ensemble import build_ensemble
from fits.curve.fit import CurvePoints, FitError, fit_laws, law_weights
from fits.curve.laws import Span

__all__ = [
    "MIN_POINTS",
    "RATIOS",
    "BacktestCell",
    "backtest",
    "backtest_table",
    "beyond_backtests",
    "row_for",
]

RATIOS = (2, 4, 8, 16)
MIN_POINTS = 5  # the fewest points a 3-parameter law's AICc is defined on


@dataclass(frozen=True)
class BacktestCell:
    ratio: int
    samples: float
    observed: float
    prediction: float
    pi: tuple[float, float]
    z: float
    covered: bool


def backtest(
    points: CurvePoints, span: Span, ratios: tuple[int, ...] = RATIOS, huber: float | None = None
) -> list[BacktestCell]:
    """One cell per ratio the curve allows: the whole fitting procedure rerun on the truncation."""
    target, observed = float(points.samples[-1]), float(points.mean[-1])
    cells = []
    for ratio in ratios:
        count = int(np.searchsorted(points.samples, target / ratio * (1 + 1e-9), side="right"))
        if count < MIN_POINTS:
            continue
        early = points.first(count)
        try:
            fits = fit_laws(early, span, huber)
            ensemble = build_ensemble(early, fits, law_weights(fits), span)
        except FitError:
            continue
        predicted = forecast(ensemble, target, int(points.seeds[-1]))
        cells.append(
            BacktestCell(
                ratio=ratio,
                samples=target,
                observed=observed,
                prediction=predicted.prediction,
                pi=predicted.pi,
                z=score_holdout(predicted, observed),
                covered=covered(predicted, observed),
            )
        )
    return cells


def beyond_backtests(forecasts: list[Forecast], cells: list[BacktestCell], last: float) -> list[Forecast]:
    """The forecasts past `last` (the largest fitted S) by more than any of the curve's
    backtests could test, flagged BEYOND_BACKTESTS: nothing measured says how far off they are."""
    reach = max((c.ratio for c in cells), default=1)
    return [
        replace(f, flags=(*f.flags, "BEYOND_BACKTESTS")) if f.samples > last * reach * (1 + 1e-9) else f
        for f in forecasts
    ]


def row_for(table: list[dict], extrapolation: float) -> dict | None:
    """The backtest row that speaks for a forecast `extrapolation` times past its data: the
    smallest tested ratio at or past it; None inside the data or past every tested ratio."""
    rows = [row for row in table if row["ratio"] >= extrapolation > 1]
    return min(rows, key=lambda row: row["ratio"]) if rows else None


def backtest_table(cells: list[BacktestCell]) -> list[dict]:
    """Per ratio: how many curves, the median absolute and relative error, rms z, PI coverage."""
    rows = []
    for ratio in sorted({c.ratio for c in cells}):
        at = [c for c in cells if c.ratio == ratio]
        errors = np.array([c.prediction - c.observed for c in at])
        relative = np.abs(errors) / np.maximum(np.abs([c.observed for c in at]), 1e-12)
        rows.append(
            {
                "ratio": ratio,
                "curves": len(at),
                "median_abs_error": float(np.median(np.abs(errors))),
                "median_rel_error": float(np.median(relative)),
                "rms_z": float(np.sqrt(np.mean([c.z**2 for c in at]))),
                "coverage": float(np.mean([c.covered for c in at])),
            }
        )
    return rows
