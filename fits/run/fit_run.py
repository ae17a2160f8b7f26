"""`orch fit` and `orch check` as stages: read the sweep and check the options, fit its curves
(the curve stage's frozen `CurveSet`), judge the claims on them, plan the runs that would settle
the open ones, compute gaps and score earlier forecasts; the `FitRun` is their composition, built
once at the end. Storing it (`fits.run.load.save_fit_run`) and writing its report
(`fits.report.write_report`) are the caller's separate steps. The math lives in the pure
modules; this only puts it in order."""

import time
from dataclasses import dataclass, replace

from fits.claims.claim import ClaimSet, Verdict
from fits.claims.verdicts import judge_all, not_measured
from fits.curve.curveset import CurveSet
from fits.curve.fit import FitError
from fits.curve.settings import DEFAULT_METRIC, FitOptions, GapPair, SweepDesign
from fits.next.plan import top_runs
from fits.run.check import check_options
from fits.run.curves import fit_curves, score_earlier, select_points
from fits.run.gap_estimates import gap_estimates, published_gaps
from fits.run.load import (
    Store,
    flops_per_sample,
    load_baselines,
    load_earlier_forecasts,
    load_earlier_verdicts,
    load_measurements,
    load_rounds,
    load_trials,
    measured,
    model_sizes,
    provenance,
    recipes_of,
)
from fits.run.results import FitRun

__all__ = ["Checked", "check_claims", "run_fit"]

NO_CLAIMS = ClaimSet()


@dataclass(frozen=True)
class Checked:
    """Claims judged metric by metric: one fit run for each metric the sweep measured that a
    claim is stated in, and a verdict for each claim on a metric it did not measure."""

    runs: tuple[FitRun, ...]
    unmeasured: tuple[Verdict, ...]

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        return (*(v for run in self.runs for v in run.verdicts), *self.unmeasured)


def check_claims(
    store: Store, sweep: str, options: FitOptions, design: SweepDesign, claims: ClaimSet
) -> Checked:
    """Every claim judged: one fit run per measured metric the claims are stated in (`options`
    but for its metric), and a claim on a metric the sweep did not measure inconclusive, saying so."""
    metrics = sorted({metric for metric, _ in measured(store, sweep)})
    stated = sorted({claim.metric or DEFAULT_METRIC for claim in claims})
    runs = [
        run_fit(store, sweep, replace(options, metric=metric), design, claims)
        for metric in stated
        if metric in metrics
    ]
    unmeasured = [
        not_measured(claim, f"metric {claim.metric or DEFAULT_METRIC} (measured: {', '.join(metrics)})")
        for claim in claims
        if (claim.metric or DEFAULT_METRIC) not in metrics
    ]
    return Checked(tuple(runs), tuple(unmeasured))


def run_fit(
    store: Store, sweep: str, options: FitOptions, design: SweepDesign, claims: ClaimSet = NO_CLAIMS
) -> FitRun:
    """Check the options against the sweep, then fit, judge the claims stated in this metric (one
    on another metric is left for the fit of that metric: `orch check` runs one per metric),
    plan, forecast and score; write nothing."""
    settings = options.resolved(design)
    trials = load_trials(store, sweep)
    recipe = recipes_of(trials)
    schedules = {objective: train["schedule"] for objective, train in recipe.items()}
    warnings = check_options(options, settings, sweep, trials, measured(store, sweep), schedules)
    frame = load_measurements(store, sweep, settings.metric, settings.reference)
    if frame.empty:
        raise FitError(f"sweep {sweep} has no done trials with {settings.metric} in {store.url}")
    chosen = select_points(frame, settings)
    curves, joint = fit_curves(
        chosen,
        frame,
        settings,
        model_sizes(frame),
        flops_per_sample=flops_per_sample(frame, by=("objective", "model")),
        recipes=recipe,
    )
    if not curves and not curves.unfitted:
        raise FitError(f"sweep {sweep}: no measurement past random init{_above(settings.min_samples)}")
    curves = _with_baselines(curves, load_baselines(store))
    mine = ClaimSet(tuple(c for c in claims if c.metric in (None, settings.metric)), claims.source)
    verdicts = judge_all(mine, curves, design.testbed)
    gaps, published = [], []
    for pair in map(GapPair.of, settings.gaps):
        gaps += gap_estimates(curves, pair, chosen, flops_per_sample(frame), recipe, settings)
        published += published_gaps(curves.baselines, pair, settings.metric)
    created = time.time()
    fit_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime(created)) + f"-{int(created * 1000) % 1000:03d}"
    return FitRun(
        sweep,
        store.url,
        settings,
        curves,
        verdicts,
        top_runs(curves, settings, verdicts, design.grid.get("data_size", ())) if settings.next_runs else (),
        tuple(gaps),
        tuple(published),
        score_earlier(load_earlier_forecasts(store, sweep), curves),
        joint,
        provenance(store, sweep, design, created) | {"fit_id": fit_id},
        fit_id,
        created,
        tuple(warnings),
        load_earlier_verdicts(store, sweep),
        load_rounds(store, sweep),
    )


def _with_baselines(curves: CurveSet, baselines) -> CurveSet:
    """The curve set with the published and measured rows measured like some measured curve
    (with a law or without): same reference, same eval set."""
    if not baselines.empty:
        alike = {(c.key.reference, c.key.eval_set) for c in (*curves, *curves.unfitted)}
        pairs = zip(baselines.reference, baselines.eval_set, strict=True)
        baselines = baselines[[pair in alike for pair in pairs]]
    return replace(curves, baselines=baselines)


def _above(min_samples: int | None) -> str:
    return f" at or above --min-samples {min_samples:,}" if min_samples is not None else ""
