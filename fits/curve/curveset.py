"""What the curve stage hands on, frozen: each curve's fit keyed by a typed `CurveKey`, and the
`CurveSet` of a fit run (the curves, what could not be fitted, and what the judges read beside
them: FLOPs per sample, recipes, the published points measured alike). Claims are judged on it
and runs are planned on it; nothing downstream refits or changes it."""

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from fits.curve.backtest import BacktestCell
from fits.curve.bands import Forecast
from fits.curve.ensemble import Ensemble
from fits.curve.fit import CurvePoints, FitResult
from foundation.sizes import SizeError, parse_size

__all__ = ["CURVE", "CurveFit", "CurveKey", "CurveSet", "HeldOutCell", "Unfitted"]


@dataclass(frozen=True, order=True)
class CurveKey:
    """What names one curve: an objective's model, scored by one metric against one reference
    on one eval set."""

    objective: str
    model: str
    metric: str
    reference: str
    eval_set: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    def matches(self, **wanted: str | None) -> bool:
        """Every field named with a value holds it (None: any)."""
        return all(value is None or getattr(self, name) == value for name, value in wanted.items())


CURVE = tuple(f.name for f in fields(CurveKey))  # the measurement columns a curve is grouped by


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


@dataclass(frozen=True)
class CurveFit:
    key: CurveKey
    points: CurvePoints
    fits: dict[str, FitResult]  # every law that could be fitted
    ensemble: Ensemble  # the weighted laws with their draws
    random_init: float | None
    forecasts: tuple[Forecast, ...]
    held_out: tuple[HeldOutCell, ...]
    backtest: tuple[BacktestCell, ...] = ()  # none where the caller did not ask for them
    band: tuple[Forecast, ...] = ()  # the CI and PI drawn on the plot (none: not drawn)
    chance: float | None = None  # the metric's expected value for unrelated features
    null_p95: float | None = None  # 95th percentile of the permutation null, over the points
    # `--profile`: the heaviest law's key parameters -> profile-likelihood interval, or why none
    profile: dict[str, tuple[float, float] | str] | None = None
    # every measured point, held-out cells included: what claims read without a law (None: the
    # same as `points`, nothing was held out)
    measured: CurvePoints | None = None

    @property
    def name(self) -> str:
        return f"{self.key.objective} {self.key.model} vs {self.key.reference}"

    @property
    def fit(self) -> FitResult:
        """The law with the largest weight (the mixture is what forecasts)."""
        return self.ensemble.heaviest

    @property
    def seen(self) -> CurvePoints:
        """Every measured point of the curve, held-out cells included."""
        return self.points if self.measured is None else self.measured

    def as_dict(self) -> dict:
        points = self.points
        return {
            **self.key.as_dict(),
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


@dataclass(frozen=True)
class Unfitted:
    """A curve measured but with no law (one point, or fewer points than any law's parameters
    and one): its every point, and why no law fits them. Claims on measured points read it."""

    key: CurveKey
    points: CurvePoints
    why: str

    @property
    def seen(self) -> CurvePoints:
        return self.points


@dataclass(frozen=True)
class CurveSet:
    """The curve stage's hand-off: every fitted curve in the order it was fitted, the curves that
    could not be fitted (and why), and what a claim reads beside the curves."""

    curves: tuple[CurveFit, ...] = ()
    skipped: tuple[str, ...] = ()  # "objective/model/...: why", one a curve
    flops_per_sample: Mapping[tuple[str, str], float] = field(default_factory=dict)  # (objective, model)
    recipes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # objective -> train recipe
    baselines: Any = None  # the published and measured points measured like these curves (a frame)
    unfitted: tuple[Unfitted, ...] = ()  # curves measured with no law: their points
    model_sizes: Mapping[str, float] = field(default_factory=dict)  # model -> parameters, where recorded

    def __iter__(self) -> Iterator[CurveFit]:
        return iter(self.curves)

    def __len__(self) -> int:
        return len(self.curves)

    def __getitem__(self, index: int) -> CurveFit:
        return self.curves[index]

    def find(self, objective: str, model=None, reference=None, eval_set=None) -> CurveFit | None:
        """The fitted curve of `objective` with the model, reference and eval set given (None:
        any; of several, the first by model, reference and eval set)."""
        return _first(self.curves, objective, model, reference, eval_set)

    def find_measured(
        self, objective: str, model=None, reference=None, eval_set=None
    ) -> CurveFit | Unfitted | None:
        """The curve as `find` chooses it among every measured curve, with a law or without."""
        return _first((*self.curves, *self.unfitted), objective, model, reference, eval_set)

    def names_model(self, published: str, model: str) -> bool:
        """Whether a published model's name ("JEPA 109M") names this sweep's `model`: its last
        word is the model ("33M"), or a parameter count within 5% of the model's recorded one
        (109M for BERT-B's 109.5M)."""
        word = published.split()[-1] if published.split() else ""
        if word == model:
            return True
        try:
            size = parse_size(word)
        except SizeError:
            return False
        parameters = self.model_sizes.get(model)
        return parameters is not None and abs(size / parameters - 1) < 0.05


def _first(curves, objective: str, model, reference, eval_set):
    wanted = {"objective": objective, "model": model, "reference": reference, "eval_set": eval_set}
    chosen = [c for c in curves if c.key.matches(**wanted)]
    return min(chosen, key=lambda c: (c.key.model, c.key.reference, c.key.eval_set), default=None)
