"""The curve stage, on the frames `fits.run.load` reads: each curve's points chosen, every law
fitted and weighed, backtested, forecast, its held-out cells and earlier forecasts scored, the
bands the plots draw; the joint law a(N, S) where 3 or more model sizes were measured; all of it
handed on as one frozen `CurveSet`. Backtests, bands and joint laws only where asked
(`FitSettings.detail`: `orch check` shows none of them).

A curve is (objective, model, metric, reference, eval set). Its points are the seeds' values at
each samples-seen value: each trial's final checkpoint (`Points.FINAL`: one run per data size),
or every checkpoint (`Points.ALL`: one constant-learning-rate run per seed, whose checkpoints
the seed bootstrap resamples as whole runs); `FitOptions.resolved` resolves `AUTO` from the sweep file.
"""

import numpy as np
import pandas as pd

from fits.curve.backtest import backtest, beyond_backtests
from fits.curve.bands import covered, forecast, score_holdout
from fits.curve.bootstrap import bootstrap_refits
from fits.curve.curveset import CURVE, CurveFit, CurveKey, CurveSet, HeldOutCell, Unfitted
from fits.curve.ensemble import build_ensemble
from fits.curve.finish import profile
from fits.curve.fit import CurvePoints, FitError, curve_points, fit_laws, law_weights
from fits.curve.joint import MIN_MODELS, JointFit, fit_joint
from fits.curve.laws import LAWS
from fits.curve.settings import FitOptions, FitSettings, Points
from fits.run.results import EarlierForecast

__all__ = ["BAND_POINTS", "fit_curves", "fit_group", "score_earlier", "select_points"]

Joint = tuple[tuple[dict, JointFit], ...]  # (curve key less model, fit)

BAND_POINTS = 120  # samples-seen values the plotted bands are computed at


def select_points(frame: pd.DataFrame, options: FitOptions) -> pd.DataFrame:
    """The measurements the fits use: past S = 0, final checkpoints unless every one is a point."""
    chosen = frame[frame.samples_seen > 0]
    if options.points is Points.FINAL:
        chosen = chosen[chosen.is_final]
    if options.min_samples is not None:
        chosen = chosen[chosen.samples_seen >= options.min_samples]
    return chosen


def fit_curves(
    chosen: pd.DataFrame, frame: pd.DataFrame, settings: FitSettings, sizes: dict[str, float], **beside
) -> tuple[CurveSet, Joint]:
    """Every curve of the chosen points fitted (`frame` supplies their random-init levels), and
    the joint laws over model `sizes` where asked (`settings.detail`); `beside`: what the curve
    set carries for the judges (FLOPs per sample, recipes, baselines). A FitError names the
    curves that could not be fitted where none could."""
    fitted, skipped, unfitted = [], [], []
    for values, group in chosen.groupby(list(CURVE)):
        key = CurveKey(*values)
        try:
            fitted.append(fit_group(key, group, frame, settings))
        except FitError as error:
            skipped.append(f"{'/'.join(map(str, values))}: {error}")
            unfitted.append(Unfitted(key, _points(group, settings), str(error)))
    joint, no_joint = _joint_fits(fitted, sizes, settings) if settings.detail and fitted else ((), [])
    found = CurveSet(
        tuple(fitted), tuple(skipped + no_joint), unfitted=tuple(unfitted), model_sizes=sizes, **beside
    )
    return found, joint


def _joint_fits(curves: list[CurveFit], sizes: dict[str, float], settings: FitSettings) -> tuple[Joint, list]:
    """a(N, S) per (objective, metric, reference, eval set) with MIN_MODELS sized models."""
    families: dict[tuple, list[tuple[float, CurveFit]]] = {}
    for curve in curves:
        if curve.key.model in sizes:
            family = tuple(v for k, v in curve.key.as_dict().items() if k != "model")
            families.setdefault(family, []).append((sizes[curve.key.model], curve))
    fitted, skipped = [], []
    for family, members in families.items():
        if len({n for n, _ in members}) < MIN_MODELS:
            continue
        key = {k: v for k, v in zip((k for k in CURVE if k != "model"), family, strict=True)}
        try:
            fitted.append((key, fit_joint([(n, c.points) for n, c in members], settings.span)))
        except FitError as error:
            skipped.append(f"joint law {'/'.join(map(str, family))}: {error}")
    return tuple(fitted), skipped


def fit_group(key: CurveKey, group: pd.DataFrame, frame: pd.DataFrame, options: FitSettings) -> CurveFit:
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
    same = [frame[k] == v for k, v in key.as_dict().items()]
    init = frame[(frame.samples_seen == 0) & np.logical_and.reduce(same)]
    targets = sorted({*options.predict, *group[held].samples_seen.astype(float)})
    seeds = options.seeds_for_forecast
    held_out = []
    for samples, cell in group[held].groupby("samples_seen"):  # scored in its own table
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
    grid = np.geomspace(points.samples[0], furthest * 1.05, BAND_POINTS) if options.detail else []
    heaviest = ensemble.heaviest
    tested = backtest(points, options.span, huber=huber) if options.detail else []
    profiled = None
    if options.profile and heaviest.model_result is not None:
        profiled = profile(heaviest.model_result, LAWS[heaviest.law].key_params)
    return CurveFit(
        key,
        points,
        fits,
        ensemble,
        float(init.value.mean()) if len(init) else None,
        tuple(
            beyond_backtests(
                [forecast(ensemble, float(s), seeds) for s in targets], tested, points.samples[-1]
            )
        ),
        tuple(held_out),
        backtest=tuple(tested),
        band=tuple(forecast(ensemble, float(s), seeds) for s in grid),
        chance=_mean_or_none(group.chance),
        null_p95=_mean_or_none(train.null_p95),
        profile=profiled,
        measured=_points(group, options) if held.any() else None,
    )


def _forecasts(ensemble, targets: list, seeds: int, tested: list, points: CurvePoints) -> tuple:
    """The curve's forecasts at `targets`, each flagged where it lies past what its backtests tested."""
    return tuple(
        beyond_backtests([forecast(ensemble, float(s), seeds) for s in targets], tested, points.samples[-1])
    )


def _points(rows: pd.DataFrame, options: FitSettings) -> CurvePoints:
    runs = rows.seed.to_numpy() if options.points is Points.ALL else None
    se = rows.se.to_numpy(dtype=float) if options.given_se else None
    return curve_points(rows.samples_seen.to_numpy(), rows.value.to_numpy(), runs=runs, se=se)


def _mean_or_none(column: pd.Series) -> float | None:
    """The mean of a measurement column that NULL fills where a metric has no such value."""
    known = column.dropna()
    return float(known.mean()) if len(known) else None


def score_earlier(earlier: pd.DataFrame, curves: CurveSet) -> tuple[EarlierForecast, ...]:
    """Forecasts stored by earlier fits, scored against what this fit measured since: only
    cells outside the earlier fit's data (it extrapolated to them) and inside this fit's data
    (a held-out cell is scored in its own table), and each cell once (the earliest forecast)."""
    earlier = earlier[earlier.extrapolation > 1].sort_values("created")
    earlier = earlier.drop_duplicates([*CURVE, "samples"], keep="first")
    scored = []
    for row in earlier.itertuples():
        curve = next((c for c in curves if c.key == CurveKey(*(getattr(row, k) for k in CURVE))), None)
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
    return tuple(scored)
