"""`orch fit`: read the sweep, check the options, fit every curve, compute gaps and score earlier
forecasts, and return the `FitRun`. Storing it (`fits.load.save_fit_run`) and writing its report
(`fits.report.write_report`) are the caller's separate steps. The math lives in the pure
modules; this only puts it in order."""

import time

from fits.check import check_options
from fits.curves import fit_group, score_earlier, select_points
from fits.fit import FitError
from fits.gap_estimates import gap_estimates, published_gaps
from fits.joint import MIN_MODELS, fit_joint
from fits.load import (
    Store,
    flops_per_sample,
    load_baselines,
    load_earlier_forecasts,
    load_earlier_verdicts,
    load_measurements,
    load_trials,
    measured,
    model_sizes,
    provenance,
    recipes_of,
)
from fits.plan import top_runs
from fits.results import CURVE, CurveFit, FitOptions, FitRun, FitSettings, SweepDesign
from fits.verdicts import check_claims, judge

__all__ = ["run_fit"]


def run_fit(store: Store, sweep: str, options: FitOptions, design: SweepDesign) -> FitRun:
    """Check the options against the sweep, then fit, forecast and score; write nothing."""
    settings = options.resolved(design)
    trials = load_trials(store, sweep)
    recipe = recipes_of(trials)
    schedules = {objective: train["schedule"] for objective, train in recipe.items()}
    warnings = check_options(options, settings, sweep, trials, measured(store, sweep), schedules)
    frame = load_measurements(store, sweep, settings.metric, settings.reference)
    run = FitRun(sweep, store.url, settings, warnings=warnings)
    if frame.empty:
        raise FitError(f"sweep {sweep} has no done trials with {settings.metric} in {store.url}")
    chosen = select_points(frame, settings)
    for values, group in chosen.groupby(list(CURVE)):
        key = dict(zip(CURVE, values, strict=True))
        try:
            run.curves.append(fit_group(key, group, frame, settings))
        except FitError as error:
            run.skipped.append(f"{'/'.join(map(str, values))}: {error}")
    if not run.curves:
        why = "; ".join(run.skipped) or f"no measurement past random init{_above(settings.min_samples)}"
        raise FitError(f"sweep {sweep}: no curve could be fitted ({why})")
    run.joint, skipped = _joint_fits(run.curves, model_sizes(frame), settings)
    run.skipped += skipped
    run.baselines = _matching(load_baselines(store), run.curves)
    per_sample = flops_per_sample(frame)
    run.flops_per_sample = flops_per_sample(frame, by=("objective", "model"))
    run.recipes = recipe
    for pair in settings.gaps:
        run.gaps += gap_estimates(run.curves, pair, chosen, per_sample, recipe, settings)
        run.published += published_gaps(run.baselines, pair, settings.metric)
    run.earlier = score_earlier(load_earlier_forecasts(store, sweep), run.curves)
    _judge_claims(run, design, sorted(set(trials.objective)))
    run.next_runs = top_runs(run, design.grid.get("data_size", ()))
    run.earlier_verdicts = load_earlier_verdicts(store, sweep)
    run.created = time.time()
    run.fit_id = (
        time.strftime("%Y%m%d-%H%M%S", time.gmtime(run.created)) + f"-{int(run.created * 1000) % 1000:03d}"
    )
    run.provenance = provenance(store, sweep, design, run.created) | {"fit_id": run.fit_id}
    return run


def _judge_claims(run: FitRun, design: SweepDesign, objectives: list[str]) -> None:
    """The claims stated in this run's metric, judged; one on another metric is left for the
    fit of that metric (`orch check` runs one per metric)."""
    mine = tuple(c for c in design.claims if c.metric in (None, run.options.metric))
    check_claims(mine, run, objectives, design.claims_source)
    run.verdicts = [judge(claim, run, design.testbed) for claim in mine]


def _matching(baselines, curves: list[CurveFit]):
    """The published rows measured like some fitted curve: same reference, same eval set."""
    if baselines.empty:
        return baselines
    measured = {(c.key["reference"], c.key["eval_set"]) for c in curves}
    return baselines[[pair in measured for pair in zip(baselines.reference, baselines.eval_set, strict=True)]]


def _joint_fits(
    curves: list[CurveFit], sizes: dict[str, float], options: FitSettings
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
