"""Backtests at the ratios people extrapolate: fit a curve on its points at or below S / k and
forecast its largest point S, for k = 2, 4, 8, 16 where at least MIN_POINTS remain. The table
of error and PI coverage against k is what a reader needs to trust a forecast k times past the
data (the OLMo ladder reports its prediction error the same way)."""

from dataclasses import dataclass

import numpy as np

from fits.bands import covered, forecast, score_holdout
from fits.ensemble import build_ensemble
from fits.fit import CurvePoints, FitError, fit_laws, law_weights
from fits.laws import Span

__all__ = ["MIN_POINTS", "RATIOS", "BacktestCell", "backtest", "backtest_table"]

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
