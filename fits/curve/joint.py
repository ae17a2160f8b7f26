"""A joint law a(N, S) over model size and samples, as in ladder fits: fitted on every model
size of one objective but the largest, then used to forecast the largest size's points, which
are scored against what was measured. Needs at least MIN_MODELS sizes (two to fit, one to test).
"""

from dataclasses import dataclass

import numpy as np

from fits.curve.bands import intervals
from fits.curve.ensemble import parameter_draws
from fits.curve.fit import CurvePoints, FitError
from fits.curve.laws import ALPHA_RANGE, Span, joint
from fits.curve.level import LEVEL
from fits.curve.weighted_fit import fit_arrays

__all__ = ["MIN_MODELS", "JointCell", "JointFit", "fit_joint"]

MIN_MODELS = 3
PARAMS = ("e", "a", "beta", "b", "alpha")


@dataclass(frozen=True)
class JointCell:
    """A point of the held-out model size, forecast by the joint law."""

    n_params: float
    samples: float
    observed: float
    seeds: int
    prediction: float
    pi: tuple[float, float]
    covered: bool


@dataclass(frozen=True)
class JointFit:
    values: dict[str, float]
    errors: dict[str, float]
    fitted_sizes: tuple[float, ...]  # parameter counts the law was fitted on
    held_out_size: float
    cells: tuple[JointCell, ...]

    def as_dict(self) -> dict:
        return {
            "law": "e - a (N/1e8)^-beta - b (S/1e6)^-alpha",
            "params": self.values,
            "errors": self.errors,
            "fitted_sizes": list(self.fitted_sizes),
            "held_out_size": self.held_out_size,
            "cells": [cell.__dict__ for cell in self.cells],
        }


def _stack(curves: list[tuple[float, CurvePoints]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.vstack([np.column_stack([np.full(len(p.samples), n), p.samples]) for n, p in curves])
    mean = np.concatenate([p.mean for _, p in curves])
    sigma = np.concatenate([p.sigma for _, p in curves])
    return x, mean, sigma


def _pooled(curves: list[tuple[float, CurvePoints]]) -> tuple[float, int]:
    """The seed sd pooled over the curves, and its degrees of freedom."""
    known = [(p.sigma_seed, p.pooled_df) for _, p in curves if p.pooled_df > 0]
    dof = sum(df for _, df in known)
    return (float(np.sqrt(sum(s**2 * df for s, df in known) / dof)), dof) if dof else (0.0, 0)


def fit_joint(curves: list[tuple[float, CurvePoints]], span: Span, level: float = LEVEL) -> JointFit:
    """Fit a(N, S) to every size but the largest and forecast the largest size's points."""
    sizes = sorted({n for n, _ in curves})
    if len(sizes) < MIN_MODELS:
        raise FitError(f"a joint law needs {MIN_MODELS} model sizes, the sweep has {len(sizes)}")
    fitted = [(n, p) for n, p in curves if n < sizes[-1]]
    x, mean, sigma = _stack(fitted)
    if len(mean) <= len(PARAMS):
        raise FitError(
            f"a joint law has {len(PARAMS)} parameters but the fitted sizes give {len(mean)} points"
        )
    rise = max(float(mean.max() - mean.min()), 1e-3)
    guess = {"e": float(mean.max()) + rise, "a": rise, "beta": 0.3, "b": rise, "alpha": 0.3}
    bounds = {
        "e": (float(mean.min()), span[1]),
        "a": (0.0, np.inf),
        "beta": ALPHA_RANGE,
        "b": (0.0, np.inf),
        "alpha": ALPHA_RANGE,
    }
    weight = 1.0 / np.where(np.isfinite(sigma) & (sigma > 0), sigma, max(np.nanmax(sigma), 1e-3))
    found = fit_arrays(joint, PARAMS, x, mean, weight, guess, bounds)
    sigma_seed, dof = _pooled(fitted)
    draws = parameter_draws(found.values, found.inflated, bounds, min(dof, found.dof))
    cells = []
    for n, points in (c for c in curves if c[0] == sizes[-1]):
        where = np.column_stack([np.full(len(points.samples), n), points.samples])
        curves_at = np.clip(
            joint(where[None, :, :], *(draws[:, j : j + 1] for j in range(len(PARAMS)))), *span
        )
        predicted = np.clip(joint(where, **found.values), *span)
        for i, samples in enumerate(points.samples):
            seeds = int(points.seeds[i])
            _, pi = intervals(curves_at[:, i], sigma_seed, dof, seeds, span, level)
            observed = float(points.mean[i])
            cells.append(
                JointCell(
                    float(n),
                    float(samples),
                    observed,
                    seeds,
                    float(predicted[i]),
                    pi,
                    pi[0] <= observed <= pi[1],
                )
            )
    errors = {name: float(np.sqrt(max(found.inflated[i, i], 0.0))) for i, name in enumerate(PARAMS)}
    return JointFit(found.values, errors, tuple(float(s) for s in sizes[:-1]), float(sizes[-1]), tuple(cells))
