"""What `orch fit` computes, typed: per-curve fits with their forecasts, held-out scores and drawn
bands; gaps; earlier forecasts scored. The report draws these and never refits."""

from dataclasses import asdict, dataclass, field, replace

from fits.backtest import BacktestCell, backtest_table
from fits.bands import Forecast
from fits.ensemble import Ensemble
from fits.fit import CurvePoints, FitResult
from fits.joint import JointFit
from fits.laws import Span

__all__ = [
    "CURVE",
    "CurveFit",
    "EarlierForecast",
    "FitOptions",
    "FitRun",
    "GapEstimate",
    "HeldOutCell",
]

CURVE = ("objective", "model", "metric", "reference", "eval_set")  # what names one curve


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
    bootstrap: int = 0  # seed-bootstrap refits of every law behind the bands (0: parametric draws)
    huber: float | None = None  # Huber's delta on log residuals: one diverged seed barely moves a fit
    span: Span = (0.0, 1.0)  # the metric's range, from the metric registry
    out_dir: str = "reports"
    points: str = "auto"  # final | all | auto: the sweep's design (all for constant-lr runs)
    holdout_above: int | None = None  # checkpoints past this are held out; default: the sweep's
    seeds_for_forecast: int = 3

    def resolved(self, design: str, holdout_above: int | None) -> "FitOptions":
        """These options with `auto` and an unset holdout taken from the sweep file."""
        return replace(
            self,
            points=design if self.points == "auto" else self.points,
            holdout_above=self.holdout_above if self.holdout_above is not None else holdout_above,
        )

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
        }


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
    bound: dict | None
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


@dataclass
class FitRun:
    """One `orch fit`: every curve's fit, the gaps, earlier forecasts scored, what was skipped."""

    sweep: str
    store: str
    options: FitOptions
    curves: list[CurveFit] = field(default_factory=list)
    gaps: list[GapEstimate] = field(default_factory=list)
    earlier: list[EarlierForecast] = field(default_factory=list)
    joint: list[tuple[dict, JointFit]] = field(default_factory=list)  # (curve key less model, fit)
    published: list[GapEstimate] = field(default_factory=list)  # naive gaps between published points
    provenance: dict = field(default_factory=dict)  # what a reader needs to reproduce the run
    fit_id: str = ""  # the report folder's name; the store's rows of this run share its time
    skipped: list[str] = field(default_factory=list)
    report_path: str = ""

    def calibration(self) -> dict:
        cells = [h for c in self.curves for h in c.held_out]
        within = sum(h.within_seed_noise for h in cells)
        return {
            "held_out_cells": len(cells),
            "within_seed_noise": within,
            "fraction": within / len(cells) if cells else None,
        }

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
            "report": self.report_path,
        }
