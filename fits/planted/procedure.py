"""Planted truths: curves simulated from known laws with seed noise, run through the same fitting
procedure as `orch fit`, and scored against the truth. `bench/fitting.py` prints these figures and
the tests hold them to the goals; every experiment takes a seed and is reproducible.

The default world: 10 sizes from 145K to 74M samples (one run per size), 3 seeds, seed sd
0.005, and a saturating truth drawn per replicate (ceiling 0.12-0.30, exponent 0.2-0.5, the
curve at 145K a third of the way up).
"""

from dataclasses import dataclass

import numpy as np

from fits.curve.bands import covered, forecast
from fits.curve.ensemble import build_ensemble
from fits.curve.fit import CurvePoints, curve_points, fit_curve, fit_laws, law_weights
from fits.curve.gaps import sample_gap
from fits.curve.joint import fit_joint
from fits.curve.laws import joint, saturating
from fits.curve.solve import HUBER_DELTA

__all__ = [
    "SIGMA",
    "SIZES",
    "ForecastCheck",
    "GapCheck",
    "draw_truth",
    "forecast_check",
    "gap_check",
    "huber_shift",
    "joint_check",
    "simulate",
]

SIZES = 145e3 * 2.0 ** np.arange(10)  # 145K .. 74M
SIGMA = 0.005
SEEDS = 3
RATIOS = (4, 12, 30)  # extrapolation past the largest fitted size


def draw_truth(rng: np.random.Generator) -> dict[str, float]:
    """A saturating truth: ceiling, exponent, and b so that a(145K) is a third of the ceiling."""
    a_inf, alpha = rng.uniform(0.12, 0.30), rng.uniform(0.2, 0.5)
    b = (2 / 3) * a_inf * (SIZES[0] / 1e6) ** alpha
    return {"a_inf": float(a_inf), "b": float(b), "alpha": float(alpha)}


def simulate(
    rng: np.random.Generator, truth: dict[str, float], sizes=SIZES, law=saturating, seeds: int = SEEDS
) -> CurvePoints:
    """`seeds` seeds at each size, independent runs, normal seed noise of sd SIGMA."""
    samples = np.repeat(sizes, seeds)
    return curve_points(samples, law(samples, **truth) + rng.normal(0, SIGMA, samples.size))


@dataclass(frozen=True)
class ForecastCheck:
    coverage: dict[int, float]  # extrapolation ratio -> share of PIs holding the new 3-seed mean
    rms_z: dict[int, float]
    wrong_family: float  # share of replicates where a law other than the truth's weighs most
    cells: int  # forecasts per ratio


def forecast_check(
    replicates: int, seed: int = 0, huber: float | None = None, seeds: int = SEEDS
) -> ForecastCheck:
    """Fit each simulated curve (`seeds` seeds a size), forecast it RATIOS times past its data,
    score the PIs on a new SEEDS-seed mean."""
    rng = np.random.default_rng(seed)
    hits = {r: [] for r in RATIOS}
    zs = {r: [] for r in RATIOS}
    wrong = 0
    for _ in range(replicates):
        truth = draw_truth(rng)
        points = simulate(rng, truth, seeds=seeds)
        fits = fit_laws(points, huber=huber)
        weights = law_weights(fits)
        wrong += max(weights, key=weights.get) != "saturating"
        ensemble = build_ensemble(points, fits, weights, (0.0, 1.0))
        for ratio in RATIOS:
            target = SIZES[-1] * ratio
            observed = saturating(target, **truth) + rng.normal(0, SIGMA, SEEDS).mean()
            predicted = forecast(ensemble, target, SEEDS)
            hits[ratio].append(covered(predicted, observed))
            zs[ratio].append((observed - predicted.prediction) / predicted.sigma_pred)
    return ForecastCheck(
        coverage={r: float(np.mean(v)) for r, v in hits.items()},
        rms_z={r: float(np.sqrt(np.mean(np.square(v)))) for r, v in zs.items()},
        wrong_family=wrong / replicates,
        cells=replicates,
    )


@dataclass(frozen=True)
class GapCheck:
    planted: float
    median_ratio: float  # over identifiable gaps
    coverage: float  # share of identifiable gaps whose CI holds the planted ratio
    identifiable: float  # share of replicates with an identifiable gap
    wide_unflagged: int  # CIs wider than 100x that were still called identifiable
    replicates: int
    ratios: tuple[float, ...]  # each identifiable gap's ratio
    covered: int  # identifiable gaps whose CI holds the planted ratio


def gap_check(replicates: int, seed: int = 0, planted: float = 42.0, seeds: int = SEEDS) -> GapCheck:
    """B is A slowed by `planted` samples (f_B(S) = f_A(S / planted)), both measured on SIZES
    with `seeds` seeds a size."""
    rng = np.random.default_rng(seed)
    ratios, hits, wide, found = [], [], 0, 0
    for _ in range(replicates):
        truth = draw_truth(rng)
        slowed = dict(truth, b=truth["b"] * planted ** truth["alpha"])
        ensembles = []
        for law in (truth, slowed):
            points = simulate(rng, law, seeds=seeds)
            fits = fit_laws(points)
            ensembles.append(build_ensemble(points, fits, law_weights(fits), (0.0, 1.0)))
        gap = sample_gap(*ensembles)
        if not gap.identifiable:
            continue
        found += 1
        ratios.append(gap.ratio)
        hits.append(gap.interval[0] <= planted <= gap.interval[1])
        wide += gap.interval[1] / gap.interval[0] > 100
    return GapCheck(
        planted=planted,
        median_ratio=float(np.median(ratios)) if ratios else float("nan"),
        coverage=float(np.mean(hits)) if hits else float("nan"),
        identifiable=found / replicates,
        wide_unflagged=wide,
        replicates=replicates,
        ratios=tuple(ratios),
        covered=int(sum(hits)),
    )


def huber_shift(seed: int = 0, diverged: float = 0.5, huber: float | None = HUBER_DELTA) -> float:
    """The largest parameter move, in the clean fit's standard errors, when one seed of one size
    diverges to `diverged` x its value (same loss before and after; `huber=None`: least squares)."""
    rng = np.random.default_rng(seed)
    truth = draw_truth(rng)
    samples = np.repeat(SIZES, SEEDS)
    values = saturating(samples, **truth) + rng.normal(0, SIGMA, samples.size)
    clean = fit_curve(curve_points(samples, values), "saturating", huber=huber)
    values[len(values) // 2] *= diverged
    moved = fit_curve(curve_points(samples, values), "saturating", huber=huber)
    return max(abs(moved.values[p] - clean.values[p]) / clean.errors[p] for p in clean.params)


JOINT_TRUTH = {"e": 0.3, "a": 0.04, "beta": 0.35, "b": 0.05, "alpha": 0.3}
MODELS = (10e6, 30e6, 85e6, 300e6)  # parameters; the largest is held out


def joint_check(replicates: int, seed: int = 0) -> float:
    """Share of replicates whose largest model's largest point falls inside the joint law's PI."""
    rng = np.random.default_rng(seed)
    hits = []
    for _ in range(replicates):
        curves = []
        for n in MODELS:
            samples = np.repeat(SIZES, SEEDS)
            where = np.column_stack([np.full(samples.size, n), samples])
            values = joint(where, **JOINT_TRUTH) + rng.normal(0, SIGMA, samples.size)
            curves.append((n, curve_points(samples, values)))
        cells = fit_joint(curves, (0.0, 1.0)).cells
        hits.append(max(cells, key=lambda c: c.samples).covered)
    return float(np.mean(hits))
