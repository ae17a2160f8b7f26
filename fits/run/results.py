"""What one `orch fit` computed, typed and frozen: the curves (`CurveSet`), the claims' verdicts,
the runs that would settle the open ones, the gaps, earlier forecasts scored. A `FitRun` is the
composition of its stages' results, built once; the report draws it and never refits."""

from dataclasses import asdict, dataclass, field
from typing import Any

from fits.claims.claim import Verdict
from fits.curve.backtest import backtest_table
from fits.curve.curveset import CurveSet
from fits.curve.gaps import Bound
from fits.curve.joint import JointFit
from fits.curve.settings import FitSettings, Points
from fits.next.plan import NextRun

__all__ = ["Bound", "EarlierForecast", "FitRun", "GapEstimate"]


@dataclass(frozen=True)
class GapEstimate:
    """How many fewer samples `faster` needs to reach the alignment `slower` reaches: a ratio
    with its CI where the data identify it, else the reasons and the bound they give."""

    faster: str
    slower: str
    model: str
    metric: str
    reference: str
    eval_set: str
    target: float
    samples_b: float | None
    samples_a: float | None
    ratio: float | None
    ci: tuple[float, float] | None
    identifiable: bool
    reasons: list[str]
    bound: Bound | None
    flops_ratio: float | None
    ratio_curve: list[dict]
    flags: list[str]
    means: dict | None = None  # the seed means' gap at `target` (`fits.curve.measured_gap`)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class EarlierForecast:
    """A forecast stored by an earlier fit, scored against what has since been measured."""

    objective: str
    model: str
    metric: str
    reference: str
    eval_set: str
    samples: float
    forecast_at: float
    prediction: float
    pi: tuple[float, float]
    observed: float
    verdict: str  # confirmed | missed

    @property
    def name(self) -> str:
        return f"{self.objective} {self.model} vs {self.reference}"


@dataclass(frozen=True)
class FitRun:
    """One `orch fit`: the curve stage's `CurveSet`, the verdicts judged on it and the runs
    planned on it, the gaps, earlier forecasts scored; built once, when every stage is done."""

    sweep: str
    store: str
    options: FitSettings
    curves: CurveSet = field(default_factory=CurveSet)
    verdicts: tuple[Verdict, ...] = ()  # the claims judged on this run's curves
    next_runs: tuple[NextRun, ...] = ()  # the best runs for each open claim
    gaps: tuple[GapEstimate, ...] = ()
    published: tuple[GapEstimate, ...] = ()  # naive gaps between published points
    earlier: tuple[EarlierForecast, ...] = ()
    joint: tuple[tuple[dict, JointFit], ...] = ()  # (curve key less model, fit)
    provenance: dict = field(default_factory=dict)  # what a reader needs to reproduce the run
    fit_id: str = ""  # the report folder's name
    created: float = 0.0  # unix seconds; the store's rows of this run share it
    warnings: tuple[str, ...] = ()  # options that ran, with a caveat
    # claim id -> (verdict, fit id) the last stored fit of the sweep gave it
    earlier_verdicts: dict[str, tuple[str, str]] = field(default_factory=dict)
    rounds: tuple[Any, ...] = ()  # db.RoundRow: `orch sweep --until-decided`'s rounds of the sweep, in order

    @property
    def skipped(self) -> tuple[str, ...]:
        return self.curves.skipped

    @property
    def baselines(self) -> Any:
        return self.curves.baselines

    @property
    def flops_per_sample(self) -> Any:
        return self.curves.flops_per_sample

    @property
    def recipes(self) -> Any:
        return self.curves.recipes

    def calibration(self) -> dict:
        """The held-out cells within seed noise, with the runs they come from (a run's
        checkpoints are not independent cells), and the backtest row with the lowest coverage:
        the weaker of the two is what a reader should quote."""
        cells = [h for c in self.curves for h in c.held_out]
        within = sum(h.within_seed_noise for h in cells)
        fraction = within / len(cells) if cells else None
        weakest = min(self.backtest(), key=lambda row: row["coverage"], default=None)
        weaker = "held_out"
        if weakest is not None and (fraction is None or weakest["coverage"] < fraction):
            weaker = "backtest"
        return {
            "held_out_cells": len(cells),
            "within_seed_noise": within,
            "fraction": fraction,
            "runs": self._held_out_runs(),
            "weakest_backtest": weakest,
            "weaker": weaker if cells or weakest else None,
        }

    def _held_out_runs(self) -> int:
        """How many runs the held-out cells come from: one per seed of each (objective, model)
        when every checkpoint is a point (references share runs), else of each cell."""
        seeds: dict[tuple, int] = {}
        for curve in self.curves:
            for cell in curve.held_out:
                run = (curve.key.objective, curve.key.model)
                run += () if self.options.points is Points.ALL else (cell.samples,)
                seeds[run] = max(seeds.get(run, 0), cell.seeds)
        return sum(seeds.values())

    def backtest(self) -> list[dict]:
        """Error and PI coverage against extrapolation ratio, over every curve's backtests."""
        return backtest_table([cell for curve in self.curves for cell in curve.backtest])

    def as_dict(self) -> dict:
        return {
            "sweep": self.sweep,
            "store": self.store,
            "fits": [c.as_dict() for c in self.curves],
            "fit_id": self.fit_id,
            "gaps": [g.as_dict() for g in self.gaps],
            "published_gaps": [g.as_dict() for g in self.published],
            "provenance": self.provenance,
            "calibration": self.calibration(),
            "backtest": self.backtest(),
            "joint": [{**key, **fit.as_dict()} for key, fit in self.joint],
            "earlier_forecasts": [asdict(e) for e in self.earlier],
            "skipped": self.skipped,
            "verdicts": [
                v.as_dict() | {"before": self.earlier_verdicts.get(v.claim.id)} for v in self.verdicts
            ],
            "next_runs": [asdict(r) for r in self.next_runs],
        }
