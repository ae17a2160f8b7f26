"""What `orch fit` is asked, and what it computes, typed: the user's options, the sweep's design
they are resolved against, per-curve fits with their forecasts, held-out scores and drawn bands;
gaps; earlier forecasts scored. The report draws these and never refits."""

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from fits.backtest import BacktestCell, backtest_table
from fits.bands import Forecast
from fits.claim import Claim, Verdict
from fits.ensemble import Ensemble
from fits.fit import UNIT_SPAN, CurvePoints, FitResult
from fits.gaps import Bound
from fits.joint import JointFit
from fits.laws import Span

__all__ = [
    "CURVE",
    "Bound",
    "CurveFit",
    "EarlierForecast",
    "FitOptions",
    "FitRun",
    "FitSettings",
    "GapEstimate",
    "HeldOutCell",
    "NextRun",
    "SweepDesign",
]

CURVE = ("objective", "model", "metric", "reference", "eval_set")  # what names one curve


@dataclass(frozen=True)
class SweepDesign:
    """What a fit needs to know of its sweep beyond the rows, read from the sweep file the store
    recorded and handed in by the caller: fits never reads a sweep file itself."""

    points: str  # "all": constant-learning-rate runs, every checkpoint is a point; else "final"
    holdout_above: int | None  # the file's holdout.samples_above: checkpoints past it held out
    ranges: dict[str, Span]  # each measured metric's range, from the metric registry
    grid: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # axis -> values (provenance)
    recipe: dict[str, Any] = field(default_factory=dict)  # the first trial's recipe (provenance)
    testbed: bool = False  # trained on the embedded synthetic world: every verdict says so
    claims: tuple[Claim, ...] = ()  # what the run is judged against: the sweep's, or a claims file's
    claims_source: str = ""  # where the claims were read (named in a bad claim's message)


@dataclass(frozen=True)
class FitOptions:
    """What the user asked of `orch fit`."""

    predict: tuple[int, ...] = ()
    holdout: tuple[int, ...] = ()
    gaps: tuple[str, ...] = ()
    gap_at: int | None = None
    at_alignment: float | None = None
    metric: str = "mutual_knn@10"
    reference: str | None = None
    min_samples: int | None = None
    bootstrap: int = 0  # seed-bootstrap refits of every law behind the bands (0: parametric draws)
    huber: float | None = None  # Huber's delta on log residuals: one diverged seed barely moves a fit
    profile: bool = False  # lmfit's profile-likelihood intervals for the heaviest laws' key parameters
    points: str = "auto"  # final | all | auto: the sweep's design (all for constant-lr runs)
    holdout_above: int | None = None  # checkpoints past this are held out; default: the sweep's
    seeds_for_forecast: int = 3

    def resolved(self, design: SweepDesign) -> "FitSettings":
        """These options with `auto`, an unset holdout and the metric's range from the sweep."""
        mine = {option.name: getattr(self, option.name) for option in fields(FitOptions)}
        return FitSettings(
            **mine
            | {
                "points": design.points if self.points == "auto" else self.points,
                "holdout_above": design.holdout_above if self.holdout_above is None else self.holdout_above,
            },
            span=design.ranges.get(self.metric, UNIT_SPAN),
        )


@dataclass(frozen=True)
class FitSettings(FitOptions):
    """The options resolved against the sweep: `points` is final or all, `holdout_above` the
    user's or the file's, `span` the metric's range. What every fit function reads."""

    span: Span = UNIT_SPAN

    @property
    def design(self) -> str:
        """Which points the fit uses, in words, for the report."""
        if self.points == "all":
            return (
                "every checkpoint of one constant-learning-rate run per seed; a run's checkpoints "
                "are correlated, so the seed bootstrap resamples whole runs"
            )
        return "each trial's final checkpoint (one run per data size)"


@dataclass(frozen=True)
class HeldOutCell:
    """A measured cell the fit left out, scored against its forecast."""

    samples: float
    observed: float
    seeds: int
    prediction: float
    pi: tuple[float, float]
    z: float
    within_seed_noise: bool


@dataclass
class CurveFit:
    key: dict  # CURVE -> value
    points: CurvePoints
    fits: dict[str, FitResult]  # every law that could be fitted
    ensemble: Ensemble  # the weighted laws with their draws
    random_init: float | None
    forecasts: list[Forecast]
    held_out: list[HeldOutCell]
    backtest: list[BacktestCell] = field(default_factory=list)
    band: list[Forecast] = field(default_factory=list)  # the CI and PI drawn on the plot
    chance: float | None = None  # the metric's expected value for unrelated features
    null_p95: float | None = None  # 95th percentile of the permutation null, over the points
    # `--profile`: the heaviest law's key parameters -> profile-likelihood interval, or why none
    profile: dict[str, tuple[float, float] | str] | None = None
    # every measured point, held-out cells included: what claims read without a law (None: the
    # same as `points`, nothing was held out)
    measured: CurvePoints | None = None

    @property
    def name(self) -> str:
        return f"{self.key['objective']} {self.key['model']} vs {self.key['reference']}"

    @property
    def fit(self) -> FitResult:
        """The law with the largest weight (the mixture is what forecasts)."""
        return self.ensemble.heaviest

    def as_dict(self) -> dict:
        points = self.points
        return {
            **self.key,
            "law": self.fit.law,
            "weights": self.ensemble.weights,
            "bands": self.ensemble.method,
            "laws": {
                name: {
                    "params": fit.values,
                    "errors": fit.errors,
                    "aicc": fit.aicc,
                    "lack_of_fit_p": fit.lof_p,
                    "loss": fit.loss,
                    "flags": fit.flags,
                }
                for name, fit in self.fits.items()
            },
            "random_init": self.random_init,
            "chance": self.chance,
            "null_p95": self.null_p95,
            "sigma_seed": points.sigma_seed,
            "points": [
                {"samples": float(s), "mean": float(m), "sigma": float(e), "seeds": int(n)}
                for s, m, e, n in zip(points.samples, points.mean, points.sigma, points.seeds, strict=True)
            ],
            "forecasts": [f.as_dict() for f in self.forecasts],
            "held_out": [asdict(h) for h in self.held_out],
            "backtest": [asdict(c) for c in self.backtest],
        } | ({} if self.profile is None else {"profile": self.profile})


@dataclass
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
class NextRun:
    """One of the runs that would most narrow an open claim per FLOP (`fits.plan`), for the report."""

    claim: str
    objective: str
    model: str
    samples: float
    seeds: int
    flops: float  # samples where no FLOPs were recorded
    width_now: float  # the claim's interval width (ln high/low for a gap)
    width_after: float  # expected, after this run alone
    decided: float  # the chance the verdict is then supported or contradicted


@dataclass
class FitRun:
    """One `orch fit`: every curve's fit, the gaps, earlier forecasts scored, what was skipped."""

    sweep: str
    store: str
    options: FitSettings
    curves: list[CurveFit] = field(default_factory=list)
    gaps: list[GapEstimate] = field(default_factory=list)
    earlier: list[EarlierForecast] = field(default_factory=list)
    joint: list[tuple[dict, JointFit]] = field(default_factory=list)  # (curve key less model, fit)
    published: list[GapEstimate] = field(default_factory=list)  # naive gaps between published points
    provenance: dict = field(default_factory=dict)  # what a reader needs to reproduce the run
    fit_id: str = ""  # the report folder's name
    created: float = 0.0  # unix seconds; the store's rows of this run share it
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # options that ran, with a caveat
    baselines: Any = None  # the published points measured like these curves (a frame), for plots
    flops_per_sample: dict[tuple[str, str], float] = field(default_factory=dict)  # (objective, model)
    recipes: dict[str, dict] = field(default_factory=dict)  # objective -> its train recipe
    verdicts: list[Verdict] = field(default_factory=list)  # the sweep's claims judged on this run
    next_runs: list[NextRun] = field(default_factory=list)  # the best runs for each open claim
    # claim id -> (verdict, fit id) the last stored fit of the sweep gave it
    earlier_verdicts: dict[str, tuple[str, str]] = field(default_factory=dict)

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
                run = (curve.key["objective"], curve.key["model"])
                run += () if self.options.points == "all" else (cell.samples,)
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
