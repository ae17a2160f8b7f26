"""`orch fit`: fit every curve of a sweep, forecast, score held-out cells and earlier forecasts,
compute gaps, and write the store rows, plots and `report.md`.

A curve is (objective, model, metric, reference, eval set). Its points are the seeds' values at
each samples-seen value: by default each trial's final checkpoint (one run per data size, as the
sweep designs it); `points="all"` uses every checkpoint (for constant-learning-rate designs).
"""

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import lmfit
import numpy as np
import pandas as pd

from db import Store
from fits.bands import Forecast, forecast, score_holdout
from fits.bootstrap import bootstrap_band, bootstrap_gap, bootstrap_saturating
from fits.fit import CurvePoints, FitError, FitResult, curve_points, select_law
from fits.gaps import Gap, invert, sample_gap
from fits.load import flops_per_sample, load_measurements, recipes

__all__ = ["FitOptions", "FitReport", "run_fit"]

CURVE = ("objective", "model", "metric", "reference", "eval_set")


@dataclass(frozen=True)
class FitOptions:
    predict: tuple[int, ...] = ()
    holdout: tuple[int, ...] = ()
    gaps: tuple[str, ...] = ()
    gap_at: int | None = None
    at_alignment: float | None = None
    metric: str = "mutual_knn@10"
    reference: str | None = None
    min_samples: int | None = None
    bootstrap: int = 0  # seed-bootstrap refits for the bands of saturating fits (0: delta method)
    out_dir: str = "reports"
    points: str = "final"
    seeds_for_forecast: int = 3


@dataclass
class CurveFit:
    key: dict
    points: CurvePoints
    fit: FitResult
    backtest: dict
    random_init: float | None
    forecasts: list[Forecast]
    held_out: list[dict]  # samples, observed, prediction, z, within


@dataclass
class FitReport:
    sweep: str
    store: str
    options: FitOptions
    curves: list[CurveFit] = field(default_factory=list)
    gaps: list[dict] = field(default_factory=list)
    earlier: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    report_path: str = ""

    def calibration(self) -> dict:
        zs = [h["z"] for c in self.curves for h in c.held_out]
        within = sum(abs(z) <= 1.96 for z in zs)
        return {
            "held_out_cells": len(zs),
            "within_seed_noise": within,
            "fraction": within / len(zs) if zs else None,
        }

    def as_dict(self) -> dict:
        return {
            "sweep": self.sweep,
            "store": self.store,
            "fits": [_curve_dict(c) for c in self.curves],
            "gaps": self.gaps,
            "calibration": self.calibration(),
            "earlier_forecasts": self.earlier,
            "skipped": self.skipped,
            "report": self.report_path,
        }


def _curve_dict(curve: CurveFit) -> dict:
    return {
        **curve.key,
        "law": curve.fit.law,
        "params": curve.fit.values,
        "errors": curve.fit.errors,
        "flags": curve.fit.flags,
        "lack_of_fit_p": curve.fit.lof_p,
        "backtest": curve.backtest,
        "random_init": curve.random_init,
        "sigma_seed": curve.points.sigma_seed,
        "points": [
            {"samples": float(s), "mean": float(m), "sigma": float(e), "seeds": int(n)}
            for s, m, e, n in zip(
                curve.points.samples, curve.points.mean, curve.points.sigma, curve.points.seeds, strict=True
            )
        ],
        "forecasts": [_forecast_dict(f) for f in curve.forecasts],
        "held_out": curve.held_out,
    }


def _forecast_dict(f: Forecast) -> dict:
    return {
        "samples": f.samples,
        "seeds": f.seeds,
        "prediction": f.prediction,
        "ci": list(f.ci),
        "pi": list(f.pi),
        "extrapolation": f.extrapolation,
        "flags": list(f.flags),
    }


def _points(frame: pd.DataFrame, options: FitOptions) -> pd.DataFrame:
    chosen = frame[frame.samples_seen > 0]
    if options.points == "final":
        chosen = chosen[chosen.is_final]
    if options.min_samples is not None:
        chosen = chosen[chosen.samples_seen >= options.min_samples]
    return chosen


def _fit_one(key: dict, group: pd.DataFrame, frame: pd.DataFrame, options: FitOptions) -> CurveFit:
    held = group.held_out | group.data_size.isin(options.holdout)
    train = group[~held]
    points = curve_points(train.samples_seen.to_numpy(), train.value.to_numpy())
    fit, table = select_law(points)
    init = frame[(frame.samples_seen == 0) & np.logical_and.reduce([frame[k] == v for k, v in key.items()])]
    targets = sorted({*options.predict, *group[held].samples_seen.astype(float)})
    forecasts = [forecast(fit, points, float(s), options.seeds_for_forecast) for s in targets]
    if options.bootstrap and fit.law == "saturating":
        refits = bootstrap_saturating(points, options.bootstrap)
        forecasts = [_bootstrapped(f, refits, points) for f in forecasts]
    held_out = []
    for samples, cell in group[held].groupby("samples_seen"):
        prediction = forecast(fit, points, float(samples), seeds=len(cell))
        z = score_holdout(prediction, float(cell.value.mean()))
        held_out.append(
            {
                "samples": float(samples),
                "observed": float(cell.value.mean()),
                "seeds": len(cell),
                "prediction": prediction.prediction,
                "pi": list(prediction.pi),
                "z": z,
                "within_seed_noise": abs(z) <= 1.96,
            }
        )
    return CurveFit(
        key, points, fit, table, float(init.value.mean()) if len(init) else None, forecasts, held_out
    )


def _bootstrapped(delta: Forecast, refits: np.ndarray, points: CurvePoints) -> Forecast:
    ci, pi = bootstrap_band(refits, delta.samples, points.sigma_seed, delta.seeds)
    return replace(delta, ci=ci, pi=pi, flags=(*delta.flags, f"BOOTSTRAP:{len(refits)}"))


def run_fit(store: Store, sweep: str, options: FitOptions) -> FitReport:
    """Fit, forecast, score and write; the math lives in fits.fit, fits.bands and fits.gaps."""
    frame = load_measurements(store, sweep, options.metric, options.reference)
    report = FitReport(sweep, store.url, options)
    if frame.empty:
        raise FitError(f"sweep {sweep} has no done trials with {options.metric} in {store.url}")
    chosen = _points(frame, options)
    for values, group in chosen.groupby(list(CURVE)):
        key = dict(zip(CURVE, values, strict=True))
        try:
            report.curves.append(_fit_one(key, group, frame, options))
        except FitError as error:
            report.skipped.append(f"{'/'.join(map(str, values))}: {error}")
    baselines = store.baselines_frame()
    per_sample, recipe = flops_per_sample(frame), recipes(store, sweep)
    report.gaps = [
        gap for spec in options.gaps for gap in _gaps(report, spec, chosen, per_sample, recipe, options)
    ]
    report.gaps += [gap for spec in options.gaps for gap in published_gaps(baselines, spec, options.metric)]
    report.earlier = _score_earlier(store, sweep, report)
    _store_fits(store, report)
    from fits.plots import write_plots
    from fits.tables import write_markdown

    out = Path(options.out_dir) / sweep
    out.mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob("*.png"), *out.glob("*.svg")]:  # plots of an earlier fit of this sweep
        stale.unlink()
    plots = write_plots(report, out, baselines)
    report.report_path = str(write_markdown(report, out, plots))
    return report


def _find(report: FitReport, objective: str, model: str, reference: str) -> CurveFit | None:
    for curve in report.curves:
        if (curve.key["objective"], curve.key["model"], curve.key["reference"]) == (
            objective,
            model,
            reference,
        ):
            return curve
    return None


def _gaps(
    report: FitReport,
    spec: str,
    chosen: pd.DataFrame,
    per_sample: dict[str, float],
    recipe: dict[str, dict],
    options: FitOptions,
) -> list[dict]:
    faster, _, slower = spec.partition(":")
    differing = sorted(
        k
        for k in set(recipe.get(faster, {})) | set(recipe.get(slower, {}))
        if recipe.get(faster, {}).get(k) != recipe.get(slower, {}).get(k)
    )
    out = []
    observed_b = chosen[
        (chosen.objective == slower) & ~(chosen.held_out | chosen.data_size.isin(options.holdout))
    ]
    for values, group in observed_b.groupby(["model", "metric", "reference", "eval_set"]):
        key = dict(zip(("model", "metric", "reference", "eval_set"), values, strict=True))
        curve_a = _find(report, faster, key["model"], key["reference"])
        curve_b = _find(report, slower, key["model"], key["reference"])
        if curve_a is None:
            continue
        if curve_b is None:  # too few points for a law: B is its last checkpoint, observed
            last = group[group.samples_seen == group.samples_seen.max()].value
            samples_b = float(group.samples_seen.max())
            error = float(last.std(ddof=1) / np.sqrt(len(last))) if len(last) > 1 else 0.0
            gap = sample_gap(
                curve_a.fit, None, samples_b, observed_b=float(last.mean()), observed_sigma_b=error
            )
        else:
            if options.at_alignment is not None:
                samples_b = invert(curve_b.fit, options.at_alignment)
                if samples_b is None:
                    continue
            else:
                samples_b = float(options.gap_at or curve_b.points.samples.max())
            gap = sample_gap(curve_a.fit, curve_b.fit, samples_b)
        flags = (
            gap.flags
            + ([f"RECIPES_DIFFER:{','.join(differing)}"] if differing else [])
            + ["SAMPLES_NOT_FLOPS"]
        )
        if curve_a.random_init is not None and gap.target <= curve_a.random_init:
            flags.append("TARGET_AT_OR_BELOW_A_RANDOM_INIT")
        both_saturating = curve_b is not None and curve_a.fit.law == curve_b.fit.law == "saturating"
        if options.bootstrap and gap.ratio is not None and both_saturating:
            interval, unreachable = bootstrap_gap(
                curve_a.points, curve_b.points, samples_b, options.bootstrap
            )
            gap.interval = interval
            flags.append(
                f"BOOTSTRAP:{options.bootstrap}" + (f":{unreachable:.0%}_unreachable" if unreachable else "")
            )
        flops_ratio = (
            gap.ratio * per_sample[slower] / per_sample[faster]
            if gap.ratio is not None and faster in per_sample and slower in per_sample
            else None
        )
        out.append(
            {
                "faster": faster,
                "slower": slower,
                **key,
                "target": gap.target,
                "samples_b": gap.samples_b,
                "samples_a": gap.samples_a,
                "ratio": gap.ratio,
                "interval": list(gap.interval) if gap.interval else None,
                "flops_ratio": flops_ratio,
                "ratio_curve": _ratio_curve(curve_a, curve_b) if curve_b is not None else [],
                "flags": flags,
            }
        )
    return out


def published_gaps(baselines: pd.DataFrame, spec: str, metric: str) -> list[dict]:
    """The naive gap between published single checkpoints of the same encoder size (the last
    word of the model name): S_B / S_A, with no interval and every caveat that applies."""
    faster, _, slower = spec.partition(":")
    if baselines.empty:
        return []
    rows = baselines[(baselines.metric == metric) & baselines.samples.notna()]
    out = []
    for b in rows[rows.objective == slower].itertuples():
        for a in rows[rows.objective == faster].itertuples():
            same = (a.reference, a.eval_set, a.model.split()[-1]) == (
                b.reference,
                b.eval_set,
                b.model.split()[-1],
            )
            if not same:
                continue
            flags = [
                "PUBLISHED",
                "A_SINGLE_CHECKPOINT",
                "B_SINGLE_CHECKPOINT",
                "SAMPLES_NOT_FLOPS",
                "RECIPES_UNKNOWN",
            ]
            # A below B's level at S_A means N_A* > S_A: the ratio bounds R from above; A above it
            # means N_A* <= S_A: a bound from below.
            if a.value < b.value:
                flags.append(f"UPPER_BOUND:A={a.value:.3g}<a*={b.value:.3g}")
            elif a.value > b.value:
                flags.append(f"LOWER_BOUND:A={a.value:.3g}>a*={b.value:.3g}")
            out.append(
                {
                    "faster": faster,
                    "slower": slower,
                    "model": f"{a.model} / {b.model}",
                    "metric": metric,
                    "reference": b.reference,
                    "eval_set": b.eval_set,
                    "target": float(b.value),
                    "samples_b": float(b.samples),
                    "samples_a": float(a.samples),
                    "ratio": float(b.samples / a.samples),
                    "interval": None,
                    "flops_ratio": None,
                    "ratio_curve": [],
                    "flags": [*flags, f"SOURCE:{b.source}"],
                }
            )
    return out


def _ratio_curve(curve_a: CurveFit, curve_b: CurveFit) -> list[dict]:
    """R at alignment levels both fits reach inside B's observed range (differs by level when the
    exponents differ)."""
    low, high = curve_b.fit.samples_range
    rows = []
    for samples_b in np.geomspace(low, high, 7):
        gap: Gap = sample_gap(curve_a.fit, curve_b.fit, float(samples_b))
        if gap.ratio is not None:
            rows.append({"target": gap.target, "samples_b": float(samples_b), "ratio": gap.ratio})
    return rows


def _score_earlier(store: Store, sweep: str, report: FitReport) -> list[dict]:
    """Forecasts stored by earlier fits whose cells have since been measured: confirmed or missed."""
    earlier = store.forecasts_frame(sweep).drop_duplicates([*CURVE, "samples"], keep="first")
    scored = []
    for row in earlier.itertuples():
        curve = next(
            (c for c in report.curves if all(getattr(row, k) == c.key[k] for k in CURVE)),
            None,
        )
        if curve is None:
            continue
        observed = [h for h in curve.held_out if h["samples"] == row.samples]
        match = np.isclose(curve.points.samples, row.samples)
        if observed:
            value = observed[0]["observed"]
        elif match.any() and row.extrapolation > 1:
            value = float(curve.points.mean[match][0])
        else:
            continue
        scored.append(
            {
                **{k: getattr(row, k) for k in CURVE},
                "samples": row.samples,
                "forecast_at": row.created,
                "prediction": row.prediction,
                "pi": [row.pi_low, row.pi_high],
                "observed": value,
                "verdict": "confirmed" if row.pi_low <= value <= row.pi_high else "missed",
            }
        )
    return scored


def _store_fits(store: Store, report: FitReport) -> None:
    now = time.time()
    versions = {"lmfit": lmfit.__version__, "numpy": np.__version__}
    fits = []
    for curve in report.curves:
        fit = curve.fit
        provenance = {
            "bounds": {k: list(v) for k, v in fit.bounds.items()},
            "starts": fit.starts,
            "points": report.options.points,
            "min_samples": report.options.min_samples,
            "holdout": sorted({h["samples"] for h in curve.held_out}),
            "backtest": curve.backtest,
            "versions": versions,
        }
        params = {"values": fit.values, "errors": fit.errors, "covariance": fit.covariance.tolist()}
        fit_row = {
            "sweep": report.sweep,
            **curve.key,
            "law": fit.law,
            "params": json.dumps(params),
            "flags": json.dumps(fit.flags),
            "provenance": json.dumps(provenance, default=float),
            "created": now,
        }
        forecast_rows = [
            {
                "sweep": report.sweep,
                **curve.key,
                "samples": f.samples,
                "seeds": f.seeds,
                "prediction": f.prediction,
                "ci_low": f.ci[0],
                "ci_high": f.ci[1],
                "pi_low": f.pi[0],
                "pi_high": f.pi[1],
                "extrapolation": f.extrapolation,
                "flags": json.dumps(list(f.flags)),
                "created": now,
            }
            for f in curve.forecasts
        ]
        fits.append((fit_row, forecast_rows))
    store.write_fit_run(fits, [row for gap in report.gaps for row in _gap_rows(report.sweep, gap, now)])


def _gap_rows(sweep: str, gap: dict, now: float) -> list[dict]:
    """The gap on the samples axis and, where FLOPs are known, on the FLOPs axis."""
    base = {k: gap[k] for k in ("faster", "slower", "model", "metric", "reference", "target")}
    interval = gap["interval"] or (None, None)
    rows = [
        {
            "sweep": sweep,
            **base,
            "ratio": gap["ratio"],
            "ratio_low": interval[0],
            "ratio_high": interval[1],
            "axis": "samples",
        }
    ]
    if gap["flops_ratio"] is not None:
        scale = gap["flops_ratio"] / gap["ratio"]
        low, high = (None, None) if interval[0] is None else (interval[0] * scale, interval[1] * scale)
        rows.append(
            {
                "sweep": sweep,
                **base,
                "ratio": gap["flops_ratio"],
                "ratio_low": low,
                "ratio_high": high,
                "axis": "flops",
            }
        )
    return [{**row, "flags": json.dumps(gap["flags"]), "created": now} for row in rows]
