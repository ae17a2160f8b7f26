"""The one place `fits` touches the store: it reads measurements, trial recipes, baselines and
earlier forecasts, and writes one fit run (fits, forecasts, gaps) in one transaction."""

import json
import subprocess
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from db import Store
from fits.results import CurveFit, FitRun, GapEstimate
from orchestrator import __version__
from orchestrator.errors import SpecError
from orchestrator.spec import Spec, TrialConfig, parse_spec
from orchestrator.spec.catalog import METRICS, parse_metric

__all__ = [
    "flops_per_sample",
    "load_baselines",
    "load_earlier_forecasts",
    "load_measurements",
    "metric_span",
    "model_sizes",
    "provenance",
    "recipes",
    "recipes_of",
    "save_fit_run",
    "sweep_spec",
]


def load_measurements(store: Store, sweep: str, metric: str, reference: str | None) -> pd.DataFrame:
    """One metric's measurements of the sweep's done trials (`TrialMeasurement` columns), with
    `is_final` and a boolean `held_out`."""
    frame = store.measurements_frame(sweep, metric)
    frame = frame[frame.status == "done"]
    if reference is not None:
        frame = frame[frame.reference == reference]
    frame = frame.assign(
        is_final=frame.samples_seen == frame.budget_samples, held_out=frame.held_out.astype(bool)
    )
    return frame.reset_index(drop=True)


def metric_span(metric: str) -> tuple[float, float]:
    """The range the metric's values live in (a layer suffix, '/layer2', names the same metric)."""
    return METRICS[parse_metric(metric.split("/")[0]).name].range


def model_sizes(frame: pd.DataFrame) -> dict[str, float]:
    """Model name -> parameter count, where the trials recorded one."""
    known = frame.dropna(subset=["n_params"])
    return {str(model): float(group.n_params.median()) for model, group in known.groupby("model")}


def recipes(store: Store, sweep: str) -> dict[str, dict]:
    """Objective -> the train recipe its trials used (the first trial's, per objective)."""
    return recipes_of(store.trials_frame(sweep))


def recipes_of(trials: pd.DataFrame) -> dict[str, dict]:
    """`recipes` of a trials frame already read."""
    found: dict[str, dict] = {}
    for row in trials.itertuples():
        if row.objective not in found:
            found[row.objective] = asdict(TrialConfig.from_json(row.config).train)
    return found


def flops_per_sample(frame: pd.DataFrame) -> dict[str, float]:
    """Objective -> training FLOPs per sample, from the final checkpoints."""
    final = frame[frame.is_final & (frame.samples_seen > 0)]
    return {name: float((g.flops / g.samples_seen).median()) for name, g in final.groupby("objective")}


def sweep_spec(store: Store, sweep: str) -> Spec | None:
    """The sweep file as the store recorded it; None when this orch cannot read it back."""
    row = store.find_sweep(sweep)
    try:
        return parse_spec(yaml.safe_load(row["spec_text"]), row["source"]) if row else None
    except (SpecError, yaml.YAMLError):
        return None


def load_baselines(store: Store) -> pd.DataFrame:
    return store.baselines_frame()


def load_earlier_forecasts(store: Store, sweep: str) -> pd.DataFrame:
    return store.forecasts_frame(sweep)


def provenance(store: Store, sweep: str, spec: Spec | None, created: float) -> dict:
    """What a reader needs to reproduce a fit run: versions, the sweep file, its grid and recipe,
    the (masked) store, the date."""
    row = store.find_sweep(sweep) or {}
    found = {
        "orch": __version__,
        "git commit": _git_commit(),
        "sweep file": row.get("source", "?"),
        "sweep file sha256": row.get("spec_hash", "?"),
        "store": store.url,
        "date (UTC)": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(created)),
    }
    if spec is not None:
        trials = spec.trials
        for axis in ("objective", "model", "data_size", "seed"):
            found[f"grid: {axis}"] = ", ".join(map(str, sorted({getattr(t, axis) for t in trials})))
        found["recipe"] = json.dumps(asdict(trials[0].train), sort_keys=True)
    return found


def _git_commit() -> str:
    """The commit of the working directory's repository, when it is one."""
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path.cwd()
        )
    except (OSError, subprocess.TimeoutExpired):
        return "none (git not found)"
    return result.stdout.strip() if result.returncode == 0 else "none (not a git repository)"


def save_fit_run(store: Store, run: FitRun, now: float) -> None:
    """Every curve's fit with its forecasts, then the gaps, as one transaction; every row of the
    run carries the same `created` time (the run's identity in the store)."""
    fits = [(_fit_row(run, curve, now), _forecast_rows(run.sweep, curve, now)) for curve in run.curves]
    store.write_fit_run(fits, [row for gap in run.gaps for row in _gap_rows(run.sweep, gap, now)])


def _fit_row(run: FitRun, curve: CurveFit, now: float) -> dict:
    """The heaviest law's row; the provenance holds every law, its weight and its starts."""
    fit = curve.fit
    provenance = {
        "weights": curve.ensemble.weights,
        "bands": curve.ensemble.method,
        "laws": {
            name: {"values": f.values, "errors": f.errors, "aicc": f.aicc, "starts": f.starts, "loss": f.loss}
            for name, f in curve.fits.items()
        },
        "bounds": {k: list(v) for k, v in fit.bounds.items()},
        "points": run.options.points,
        "min_samples": run.options.min_samples,
        "holdout": sorted({h.samples for h in curve.held_out}),
        "backtest": [asdict(cell) for cell in curve.backtest],
        "versions": {"numpy": np.__version__},
    }
    params = {"values": fit.values, "errors": fit.errors, "covariance": fit.covariance.tolist()}
    return {
        "sweep": run.sweep,
        **curve.key,
        "law": fit.law,
        "params": json.dumps(params),
        "flags": json.dumps(fit.flags),
        "provenance": json.dumps(provenance, default=float),
        "created": now,
    }


def _forecast_rows(sweep: str, curve: CurveFit, now: float) -> list[dict]:
    return [
        {
            "sweep": sweep,
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


def _gap_rows(sweep: str, gap: GapEstimate, now: float) -> list[dict]:
    """The gap on the samples axis and, where FLOPs are known, on the FLOPs axis."""
    base = {k: getattr(gap, k) for k in ("faster", "slower", "model", "metric", "reference", "target")}
    low, high = gap.ci or (None, None)
    rows = [{"ratio": gap.ratio, "ratio_low": low, "ratio_high": high, "axis": "samples"}]
    if gap.flops_ratio is not None:
        scale = gap.flops_ratio / gap.ratio
        scaled = (None, None) if low is None else (low * scale, high * scale)
        rows.append(
            {"ratio": gap.flops_ratio, "ratio_low": scaled[0], "ratio_high": scaled[1], "axis": "flops"}
        )
    bound = [f"BOUND:{gap.bound['side']}{gap.bound['ratio']:.6g}"] if gap.bound else []
    flags = json.dumps([*gap.flags, *bound])
    return [{"sweep": sweep, **base, **row, "flags": flags, "created": now} for row in rows]
