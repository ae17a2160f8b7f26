"""The one place `fits` touches the store: it reads measurements, trial recipes, baselines and
earlier forecasts and verdicts, and writes one fit run (fits, forecasts, gaps, verdicts) in one
transaction."""

import json
import math
import subprocess
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from db import FitRow, ForecastRow, GapRow, RoundRow, Store, TrialStatus, VerdictRow
from fits.claims.claim import Verdict
from fits.curve.curveset import CurveFit
from fits.curve.settings import SweepDesign
from fits.run.results import FitRun, GapEstimate
from foundation.version import __version__

__all__ = [
    "Store",  # the store fits reads, for the type hints of its callers
    "flops_per_sample",
    "load_baselines",
    "load_earlier_forecasts",
    "load_earlier_verdicts",
    "load_measurements",
    "load_rounds",
    "load_trials",
    "measured",
    "model_sizes",
    "provenance",
    "recipes_of",
    "save_fit_run",
]


def load_measurements(store: Store, sweep: str, metric: str, reference: str | None) -> pd.DataFrame:
    """One metric's measurements of the sweep's done trials (`TrialMeasurement` columns), with
    `is_final` and a boolean `held_out`."""
    frame = store.measurements_frame(sweep, metric)
    frame = frame[frame.status == TrialStatus.DONE]
    if reference is not None:
        frame = frame[frame.reference == reference]
    frame = frame.assign(
        is_final=frame.samples_seen == frame.budget_samples, held_out=frame.held_out.astype(bool)
    )
    return frame.reset_index(drop=True)


def model_sizes(frame: pd.DataFrame) -> dict[str, float]:
    """Model name -> parameter count, where the trials recorded one."""
    known = frame.dropna(subset=["n_params"])
    return {str(model): float(group.n_params.median()) for model, group in known.groupby("model")}


def load_trials(store: Store, sweep: str) -> pd.DataFrame:
    """The sweep's trials (`TrialInSweep` columns)."""
    return store.trials_frame(sweep)


def measured(store: Store, sweep: str) -> set[tuple[str, str]]:
    """The (metric, reference) pairs the sweep's trials measured."""
    return store.measured(sweep)


def recipes_of(trials: pd.DataFrame) -> dict[str, dict]:
    """Objective -> the train recipe its trials used (the first trial's, per objective), as the
    store recorded it in each trial's config."""
    found: dict[str, dict] = {}
    for row in trials.itertuples():
        if row.objective not in found:
            found[row.objective] = json.loads(row.config)["train"]
    return found


def flops_per_sample(frame: pd.DataFrame, by: tuple[str, ...] = ("objective",)) -> dict:
    """Training FLOPs per sample, from the final checkpoints with FLOPs: objective -> value, or
    a tuple of the `by` columns -> value."""
    final = frame[frame.is_final & (frame.samples_seen > 0) & (frame.flops > 0)]
    groups = final.groupby(list(by))
    return {
        (name if len(by) > 1 else name[0]): float((g.flops / g.samples_seen).median()) for name, g in groups
    }


def load_baselines(store: Store) -> pd.DataFrame:
    return store.baselines_frame()


def load_earlier_forecasts(store: Store, sweep: str) -> pd.DataFrame:
    return store.table_frame("forecasts", sweep)


def provenance(store: Store, sweep: str, design: SweepDesign, created: float) -> dict:
    """What a reader needs to reproduce a fit run: versions, the sweep file, its grid and recipe,
    the (masked) store, the date."""
    row = store.find_sweep(sweep)
    found = {
        "orch": __version__,
        "git_commit": _git_commit(),
        "sweep_file": row.source if row else "?",
        "sweep_file_sha256": row.spec_hash if row else "?",
        "store": store.url,
        "date_utc": _utc(created),
    }
    for axis, values in design.grid.items():
        found[f"grid_{axis}"] = ", ".join(map(str, sorted(values)))
    if design.recipe:
        found["recipe"] = json.dumps(design.recipe, sort_keys=True)
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


def save_fit_run(store: Store, run: FitRun) -> None:
    """Every curve's fit with its forecasts, then the gaps, as one transaction; every row of the
    run carries the run's `created` time (its identity in the store)."""
    now = run.created
    fits = [(_fit_row(run, curve, now), _forecast_rows(run.sweep, curve, now)) for curve in run.curves]
    gaps = [row for gap in run.gaps for row in _gap_rows(run.sweep, gap, now, run.fit_id)]
    store.write_fit_run(fits, gaps, [_verdict_row(run, verdict) for verdict in run.verdicts])


def load_earlier_verdicts(store: Store, sweep: str) -> dict[str, tuple[str, str]]:
    """Claim id -> (verdict, fit date) of the newest stored fit run that judged it."""
    frame = store.table_frame("verdicts", sweep)
    return {row.claim: (row.verdict, _utc(row.created)) for row in frame.itertuples()}


def load_rounds(store: Store, sweep: str) -> tuple[RoundRow, ...]:
    """The sweep's `orch sweep --until-decided` rounds, in order (none for most sweeps)."""
    return tuple(store.rounds(sweep))


def _utc(created: float) -> str:
    """A fit run's time as the report and the provenance show it (UTC)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(created))


def _verdict_row(run: FitRun, verdict: Verdict) -> VerdictRow:
    low, high = verdict.interval or (None, None)
    detail = {
        k: v for k, v in verdict.as_dict().items() if k not in ("id", "kind", "says", "verdict", "value")
    }
    return VerdictRow(
        sweep=run.sweep,
        claim=verdict.claim.id,
        kind=str(verdict.claim.kind),
        says=verdict.claim.says,
        verdict=str(verdict.verdict),
        value=verdict.value,
        low=None if low is None or not math.isfinite(low) else low,
        high=None if high is None or not math.isfinite(high) else high,
        detail=json.dumps(detail),  # Python's JSON: an open interval's end is Infinity
        created=run.created,
    )


def _fit_row(run: FitRun, curve: CurveFit, now: float) -> FitRow:
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
    return FitRow(
        sweep=run.sweep,
        **curve.key.as_dict(),
        law=fit.law,
        params=json.dumps(params),
        flags=json.dumps(fit.flags),
        provenance=json.dumps(provenance, default=float),
        created=now,
    )


def _forecast_rows(sweep: str, curve: CurveFit, now: float) -> list[ForecastRow]:
    return [
        ForecastRow(
            sweep=sweep,
            **curve.key.as_dict(),
            samples=f.samples,
            seeds=f.seeds,
            prediction=f.prediction,
            ci_low=f.ci[0],
            ci_high=f.ci[1],
            pi_low=f.pi[0],
            pi_high=f.pi[1],
            extrapolation=f.extrapolation,
            flags=json.dumps(list(f.flags)),
            created=now,
        )
        for f in curve.forecasts
    ]


def _gap_rows(sweep: str, gap: GapEstimate, now: float, fit_run: str) -> list[GapRow]:
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
    known = {
        "flags": json.dumps(gap.flags),
        "identifiable": int(gap.identifiable),
        "reasons": json.dumps(gap.reasons),
        "bound_side": gap.bound.side if gap.bound else None,
        "bound_ratio": gap.bound.ratio if gap.bound else None,
        "fit_run": fit_run,
    }
    return [GapRow(sweep=sweep, **base, **row, **known, created=now) for row in rows]
