"""The fit report's tables, one function each, keyed by an id: `report.md`, `report.html` and the
CLI's text show the same tables with the same cell formatter (`text.cell`)."""

from collections.abc import Callable

import pandas as pd

from fits.curve.backtest import row_for
from fits.curve.bands import Forecast
from fits.curve.level import LEVEL, Z
from fits.report.claims import next_table, verdict_interval, verdicts_table
from fits.report.text import Table, samples_cell
from fits.run.results import FitRun, GapEstimate

__all__ = [
    "SUMMARY",
    "TABLES",
    "VERDICTS",
    "Table",
    "baselines_table",
    "gap_ratio",
    "gaps_table",
    "lmfit_reports",
    "next_table",
    "tables",
    "verdict_interval",
]


def _interval(pair) -> str:
    return f"[{pair[0]:.4f}, {pair[1]:.4f}]"


def _values(fit) -> str:
    return " ".join(f"{k}={v:.4g}±{fit.errors[k]:.2g}" for k, v in fit.values.items())


def gap_ratio(gap: GapEstimate) -> str:
    """The headline only where the data identify it; else the bound, or 'not identifiable'."""
    if gap.identifiable:
        return f"{gap.ratio:.3g}x [{gap.ci[0]:.3g}, {gap.ci[1]:.3g}]"
    if gap.bound:
        return f"not identifiable; {gap.bound}"
    return "not identifiable"


def fits_table(run: FitRun) -> Table:
    rows = [
        [
            c.name,
            f"{name} ({c.ensemble.weights.get(name, 0):.0%})",
            _values(fit),
            fit.aicc,
            fit.lof_p,
            " ".join(fit.flags) or "-",
        ]
        for c in run.curves
        for name, fit in sorted(c.fits.items(), key=lambda item: -c.ensemble.weights.get(item[0], 0))
    ]
    headers = ["curve", "law (weight)", "parameters", "AICc", "lof_p", "flags"]
    return Table("fits", f"Fits ({run.options.metric})", headers, rows)


def profile_table(run: FitRun) -> Table:
    """`--profile`: the heaviest law's key parameters, the covariance interval beside lmfit's
    profile-likelihood interval (the two part where the covariance is a poor guide)."""
    rows = []
    for c in run.curves:
        fit = c.fit
        for name, interval in (c.profile or {}).items():
            value, error = fit.values[name], fit.errors[name]
            covariance = f"[{value - Z * error:.4g}, {value + Z * error:.4g}]"
            found = interval if isinstance(interval, str) else f"[{interval[0]:.4g}, {interval[1]:.4g}]"
            rows.append([c.name, fit.law, name, value, covariance, found])
    headers = ["curve", "law", "parameter", "value", f"{LEVEL:.0%} (covariance)", f"{LEVEL:.0%} (profile)"]
    return Table("profile", "Profile-likelihood intervals of the heaviest laws", headers, rows)


def lmfit_reports(run: FitRun) -> list[tuple[str, str]]:
    """(curve, lmfit's `fit_report`) for the heaviest law of each curve."""
    return [
        (
            f"{c.name}: {c.fit.law}",
            c.fit.model_result.fit_report()
            if c.fit.model_result is not None
            else "a Huber fit: finished by the batched solver's reweighting (lmfit has no Huber loss on "
            "log residuals)",
        )
        for c in run.curves
    ]


def _backtested(backtests: list[dict], forecast: Forecast) -> str:
    """PI coverage of the backtests at the smallest k that reaches this forecast's extrapolation."""
    if forecast.extrapolation <= 1:
        return "-"
    if "BEYOND_BACKTESTS" in forecast.flags:
        return "none reach"
    row = row_for(backtests, forecast.extrapolation)
    return f"{row['coverage']:.0%} at {row['ratio']}x" if row else "-"


def forecasts_table(run: FitRun) -> Table:
    backtests = run.backtest()
    rows = [
        [
            c.name,
            samples_cell(f.samples),
            "withheld" if f.withheld else f.prediction,
            _interval(f.ci),
            _interval(f.pi),
            f"{f.extrapolation:.3g}x",
            _backtested(backtests, f),
            " ".join(f.flags) or "-",
        ]
        for c in run.curves
        for f in c.forecasts
    ]
    headers = ["curve", "S", "prediction", f"{LEVEL:.0%} CI", f"{LEVEL:.0%} PI", "extrapolation"]
    headers += ["backtests there", "flags"]
    return Table("forecasts", "Forecasts", headers, rows)


def held_out_table(run: FitRun) -> Table:
    rows = [
        [
            c.name,
            samples_cell(h.samples),
            h.observed,
            h.prediction,
            f"{h.z:+.2f}",
            "yes" if h.within_seed_noise else "NO",
        ]
        for c in run.curves
        for h in c.held_out
    ]
    headers = ["curve", "S", "observed", "predicted", "z", "within noise"]
    return Table("held-out", "Held-out cells", headers, rows)


GAP_HEADERS = ["A:B", "curve", "laws (fitted)", "seed means (model-free)", "published checkpoints"]


def gaps_table(run: FitRun) -> Table:
    """One row a gap (A:B on one model, reference and eval set): the laws' estimate, the seed
    means' and the published checkpoints', each with the level a* it is read at, so the page
    never shows two figures for one gap without saying what each rests on. A published pair
    that no measured gap matches is a row of its own."""
    rows, matched = [], set()
    for g in run.gaps:
        published = [p for p in run.published if _alike(run, p, g)]
        matched.update(id(p) for p in published)
        curve = f"{g.model} vs {g.reference} ({g.eval_set})"
        rows.append([f"{g.faster}:{g.slower}", curve, _laws(g), _means(g.means), _published(published)])
        rows[-1] += ["; ".join(g.reasons) or "-", " ".join(g.flags)]
    for p in (p for p in run.published if id(p) not in matched):
        curve = f"{p.model} vs {p.reference} ({p.eval_set})"
        row = [f"{p.faster}:{p.slower}", curve, "not measured here", "not measured here", _published([p])]
        rows.append([*row, "; ".join(p.reasons), " ".join(p.flags)])
    headers = [*GAP_HEADERS, "laws not identifiable because", "flags"]
    return Table("gaps", "Sample gaps: each estimate with what it rests on", headers, rows)


def _alike(run: FitRun, published: GapEstimate, gap: GapEstimate) -> bool:
    """Whether a published pair is the measured gap's: same objectives, reference, eval set and model."""
    same = (published.faster, published.slower, published.reference, published.eval_set) == (
        gap.faster,
        gap.slower,
        gap.reference,
        gap.eval_set,
    )
    return same and run.curves.names_model(published.model.split(" / ")[-1], gap.model)


def _laws(gap: GapEstimate) -> str:
    flops = f"; {gap.flops_ratio:.3g}x in FLOPs" if gap.flops_ratio and gap.identifiable else ""
    return f"{gap_ratio(gap)} at a* {gap.target:.4g}{flops}"


def _means(means: dict | None) -> str:
    """The seed means' gap with its interval, else why it has none (one seed gives no interval)."""
    if means is None:
        return "-"
    if means["interval"] is None:
        return "no interval: " + "; ".join(means["reasons"])
    low, high = means["interval"]
    return f"{means['ratio']:.3g}x [{low:.3g}, {high:.3g}] at a* {means['target']:.4g}"


def _published(published: list[GapEstimate]) -> str:
    """Each published pair's bound at its level, with its source (no interval: no seeds)."""
    if not published:
        return "-"
    return "; ".join(
        f"{p.bound or f'{p.ratio:.3g}x, no bound'} at a* {p.target:.4g} ({p.model}, {_source(p)})"
        for p in published
    )


def _source(gap: GapEstimate) -> str:
    return next((f.removeprefix("SOURCE:") for f in gap.flags if f.startswith("SOURCE:")), "published")


def summary_table(run: FitRun) -> Table:
    """Each curve's heaviest law: what a reader needs before the full fits table."""
    rows = [
        [c.name, f"{c.fit.law} ({c.ensemble.weights.get(c.fit.law, 0):.0%})", _values(c.fit), c.fit.lof_p]
        for c in run.curves
    ]
    return Table(
        "summary", "Curves: the heaviest law of each", ["curve", "law (weight)", "parameters", "lof_p"], rows
    )


def backtests_table(run: FitRun) -> Table:
    rows = [
        [
            f"{row['ratio']}x",
            row["curves"],
            row["median_abs_error"],
            row["median_rel_error"],
            row["rms_z"],
            f"{row['coverage']:.0%}",
        ]
        for row in run.backtest()
    ]
    headers = ["k", "curves", "median |error|", "median rel. error", "rms z", f"{LEVEL:.0%} PI coverage"]
    return Table("backtests", "Backtests: fit on S <= S_max / k, forecast S_max", headers, rows)


def joint_table(run: FitRun) -> Table:
    rows = [
        [
            f"{key['objective']} vs {key['reference']}",
            _values(fit),
            f"{fit.held_out_size:.3g}",
            f"{sum(c.covered for c in fit.cells)} of {len(fit.cells)}",
        ]
        for key, fit in run.joint
    ]
    title = "Joint law a(N, S): fitted on the smaller models, forecasting the largest"
    return Table("joint", title, ["curves", "parameters", "held-out N", "inside the PI"], rows)


def earlier_table(run: FitRun) -> Table:
    rows = [
        [e.name, samples_cell(e.samples), e.prediction, _interval(e.pi), e.observed, e.verdict]
        for e in run.earlier
    ]
    headers = ["curve", "S", "forecast", f"{LEVEL:.0%} PI", "observed", "verdict"]
    return Table("earlier", "Earlier forecasts", headers, rows)


def baselines_table(run: FitRun) -> Table:
    """Published and measured baselines of the fitted metric on these curves' references and eval
    sets, side by side: a measured one with its eval-item SE and the 95th percentile of its
    permutation null (a value below it is no evidence of alignment)."""
    frame = run.baselines
    rows = []
    if frame is not None and not frame.empty:
        for b in frame[frame.metric == run.options.metric].itertuples():
            rows.append(
                [
                    b.model,
                    b.objective,
                    b.source,
                    "" if pd.isna(b.samples) else samples_cell(b.samples),
                    f"{b.reference} ({b.eval_set})",
                    f"{b.value:.4g}" + ("" if pd.isna(b.se) else f" ± {b.se:.2g}"),
                    "" if pd.isna(b.null_p95) else f"{b.null_p95:.3g}",
                ]
            )
    headers = ["model", "objective", "source", "S", "reference", "value ± SE", "null p95"]
    return Table("baselines", "Baselines: published and measured", headers, rows)


# Every table of a fit run, in the order the text and markdown report show them.
TABLES: dict[str, Callable[[FitRun], Table]] = {
    "verdicts": verdicts_table,
    "next": next_table,
    "summary": summary_table,
    "fits": fits_table,
    "profile": profile_table,
    "forecasts": forecasts_table,
    "held-out": held_out_table,
    "gaps": gaps_table,
    "backtests": backtests_table,
    "joint": joint_table,
    "earlier": earlier_table,
    "baselines": baselines_table,
}


# What the CLI prints without --detail, and what opens the report: the claims, then the numbers.
SUMMARY = ("verdicts", "next", "summary", "forecasts", "gaps")  # what `orch fit` prints
VERDICTS = ("verdicts", "next", "summary")  # what `orch check` prints: no forecast, no backtest


def tables(run: FitRun) -> list[Table]:
    """The run's tables in `TABLES` order (empty ones included: callers skip them)."""
    return [table(run) for table in TABLES.values()]
