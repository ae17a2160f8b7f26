"""One curve at a time, on the frames `fits.load` reads: choose its points, fit and weigh every
law, backtest, forecast, score its held-out cells and earlier forecasts, and compute the bands the
plots draw.

A curve is (objective, model, metric, reference, eval set). Its points are the seeds' values at
each samples-seen value: each trial's final checkpoint (`points="final"`: one run per data size),
or every checkpoint (`points="all"`: one constant-learning-rate run per seed, whose checkpoints
the seed bootstrap resamples as whole runs); `fits.run` resolves `auto` from the sweep file.
"""

import numpy as np
import pandas as pd

from fits.backtest import backtest, beyond_backtests
from fits.bands import covered, forecast, score_holdout
from fits.bootstrap import bootstrap_refits
from fits.ensemble import build_ensemble
from fits.finish import profile
from fits.fit import CurvePoints, curve_points, fit_laws, law_weights
from fits.laws import LAWS
from fits.results import CURVE, CurveFit, EarlierForecast, FitOptions, HeldOutCell

__all__ = ["BAND_POINTS", "fit_group", "score_earlier", "select_points"]

BAND_POINTS = 120  # samples-seen values the plotted bands are computed at


def select_points(frame: pd.DataFrame, options: FitOptions) -> pd.DataFrame:
    """The measurements the fits use: past S = 0, final checkpoints unless `points="all"`."""
    chosen = frame[frame.samples_seen > 0]
    if options.points == "final":
        chosen = chosen[chosen.is_final]
    if options.min_samples is not None:
        chosen = chosen[chosen.samples_seen >= options.min_samples]
    return chosen


def fit_group(key: dict, group: pd.DataFrame, frame: pd.DataFrame, options: FitOptions) -> CurveFit:
    """Fit one curve's group of measurements; `frame` supplies its random-init level."""
    held = group.held_out | group.data_size.isin(options.holdout)
    if options.holdout_above is not None:
        held |= group.samples_seen > options.holdout_above
    train = group[~held]
    points = _points(train, options)
    huber = options.huber
    fits = fit_laws(points, options.span, huber)
    weights = law_weights(fits)
    refits = bootstrap_refits(points, fits, options.bootstrap) if options.bootstrap else None
    ensemble = build_ensemble(points, fits, weights, options.span, refits)
    init = frame[(frame.samples_seen == 0) & np.logical_and.reduce([frame[k] == v for k, v in key.items()])]
    targets = sorted({*options.predict, *group[held].samples_seen.astype(float)})
    seeds = options.seeds_for_forecast
    held_out = []
    for samples, cell in group[held].groupby("samples_seen"):
        prediction = forecast(ensemble, float(samples), seeds=len(cell))
        observed = float(cell.value.mean())
        held_out.append(
            HeldOutCell(
                samples=float(samples),
                observed=observed,
                seeds=len(cell),
                prediction=prediction.prediction,
                pi=prediction.pi,
                z=score_holdout(prediction, observed),
                within_seed_noise=covered(prediction, observed),
            )
        )
    furthest = max([points.samples[-1], *targets])
    grid = np.geomspace(points.samples[0], furthest * 1.05, BAND_POINTS)
    heaviest = ensemble.heaviest
    tested = backtest(points, options.span, huber=huber)
    profiled = None
    if options.profile and heaviest.model_result is not None:
        profiled = profile(heaviest.model_result, LAWS[heaviest.law].key_params)
    return CurveFit(
        key,
        points,
        fits,
        ensemble,
        float(init.value.mean()) if len(init) else None,
        beyond_backtests([forecast(ensemble, float(s), seeds) for s in targets], tested, points.samples[-1]),
        held_out,
        backtest=tested,
        band=[forecast(ensemble, float(s), seeds) for s in grid],
        chance=_mean_or_none(group.chance),
        null_p95=_mean_or_none(train.null_p95),
        profile=profiled,
        measured=_points(group, options) if held.any() else None,
    )


def _points(rows: pd.DataFrame, options: FitOptions) -> CurvePoints:
    runs = rows.seed.to_numpy() if options.points == "all" else None
    return curve_points(rows.samples_seen.to_numpy(), rows.value.to_numpy(), runs=runs)


def _mean_or_none(column: pd.Series) -> float | None:
    """The mean of a measurement column that NULL fills where a metric has no such value."""
    known = column.dropna()
    return float(known.mean()) if len(known) else None


def score_earlier(earlier: pd.DataFrame, curves: list[CurveFit]) -> list[EarlierForecast]:
    """Forecasts stored by earlier fits, scored against what this fit measured since: only
    cells outside the earlier fit's data (it extrapolated to them) and inside this fit's data
    (a held-out cell is scored in its own table), and each cell once (the earliest forecast)."""
    earlier = earlier[earlier.extrapolation > 1].sort_values("created")
    earlier = earlier.drop_duplicates([*CURVE, "samples"], keep="first")
    scored = []
    for row in earlier.itertuples():
        curve = next((c for c in curves if all(getattr(row, k) == c.key[k] for k in CURVE)), None)
        if curve is None:
            continue
        match = np.isclose(curve.points.samples, row.samples)
        if not match.any():
            continue
        value = float(curve.points.mean[match][0])
        scored.append(
            EarlierForecast(
                **{k: getattr(row, k) for k in CURVE},
                samples=row.samples,
                forecast_at=row.created,
                prediction=row.prediction,
                pi=(row.pi_low, row.pi_high),
                observed=value,
                verdict="confirmed" if row.pi_low <= value <= row.pi_high else "missed",
            )
        )
    return scored
