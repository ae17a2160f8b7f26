"""`orch fit`: read the sweep, fit every curve, compute gaps, score earlier forecasts, store the
fit run and write the report. The math lives in the pure modules; this only puts it in order."""

import time
from dataclasses import replace
from pathlib import Path

from db import Store
from fits.claims import gap_estimates, published_gaps
from fits.curves import fit_group, score_earlier, select_points
from fits.fit import FitError
from fits.joint import MIN_MODELS, fit_joint
from fits.load import (
    flops_per_sample,
    load_baselines,
    load_earlier_forecasts,
    load_measurements,
    metric_span,
    model_sizes,
    provenance,
    recipes,
    save_fit_run,
    sweep_spec,
)
from fits.report import write_report
from fits.results import CURVE, CurveFit, FitOptions, FitRun

__all__ = ["run_fit"]


def run_fit(store: Store, sweep: str, options: FitOptions) -> FitRun:
    """Fit, forecast, score and write the store rows and the report under `options.out_dir`."""
    spec = sweep_spec(store, sweep)
    options = options.resolved(spec.design if spec else "final", spec.holdout_above if spec else None)
    options = replace(options, span=metric_span(options.metric))
    frame = load_measurements(store, sweep, options.metric, options.reference)
    run = FitRun(sweep, store.url, options)
    if frame.empty:
        raise FitError(f"sweep {sweep} has no done trials with {options.metric} in {store.url}")
    chosen = select_points(frame, options)
    for values, group in chosen.groupby(list(CURVE)):
        key = dict(zip(CURVE, values, strict=True))
        try:
            run.curves.append(fit_group(key, group, frame, options))
        except FitError as error:
            run.skipped.append(f"{'/'.join(map(str, values))}: {error}")
    if not run.curves:
        why = "; ".join(run.skipped) or f"no measurement past random init{_above(options.min_samples)}"
        raise FitError(f"sweep {sweep}: no curve could be fitted ({why})")
    run.joint, skipped = _joint_fits(run.curves, model_sizes(frame), options)
    run.skipped += skipped
    baselines = _matching(load_baselines(store), run.curves)
    per_sample, recipe = flops_per_sample(frame), recipes(store, sweep)
    for pair in options.gaps:
        run.gaps += gap_estimates(run.curves, pair, chosen, per_sample, recipe, options)
        run.published += published_gaps(baselines, pair, options.metric)
    run.earlier = score_earlier(load_earlier_forecasts(store, sweep), run.curves)
    created = time.time()
    run.fit_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime(created)) + f"-{int(created * 1000) % 1000:03d}"
    run.provenance = provenance(store, sweep, spec, created) | {"fit id": run.fit_id}
    save_fit_run(store, run, created)
    run.report_path = str(write_report(run, Path(options.out_dir) / sweep, baselines))
    return run


def _matching(baselines, curves: list[CurveFit]):
    """The published rows measured like some fitted curve: same reference, same eval set."""
    if baselines.empty:
        return baselines
    measured = {(c.key["reference"], c.key["eval_set"]) for c in curves}
    return baselines[[pair in measured for pair in zip(baselines.reference, baselines.eval_set, strict=True)]]


def _joint_fits(
    curves: list[CurveFit], sizes: dict[str, float], options: FitOptions
) -> tuple[list, list[str]]:
    """a(N, S) per (objective, metric, reference, eval set) with MIN_MODELS sized models."""
    families: dict[tuple, list[tuple[float, CurveFit]]] = {}
    for curve in curves:
        if curve.key["model"] in sizes:
            family = tuple(v for k, v in curve.key.items() if k != "model")
            families.setdefault(family, []).append((sizes[curve.key["model"]], curve))
    fitted, skipped = [], []
    for family, members in families.items():
        if len({n for n, _ in members}) < MIN_MODELS:
            continue
        key = {k: v for k, v in zip((k for k in CURVE if k != "model"), family, strict=True)}
        try:
            fitted.append((key, fit_joint([(n, c.points) for n, c in members], options.span)))
        except FitError as error:
            skipped.append(f"joint law {'/'.join(map(str, family))}: {error}")
    return fitted, skipped


def _above(min_samples: int | None) -> str:
    return f" at or above --min-samples {min_samples:,}" if min_samples is not None else ""
