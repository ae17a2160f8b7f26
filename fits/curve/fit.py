"""Fitting one curve: seed means with seed-noise weights; every law fitted from a grid of starts
(`fits.curve.weighted_fit`), by least squares or Huber's loss on log residuals; Akaike weights over the laws
(`law_weights`), and a lack-of-fit test against pure error.

Everything takes arrays and returns values; `fit_curve` copies its inputs.
"""

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from fits.curve.laws import LAWS, UNIT_SPAN, Law, Span
from fits.curve.weighted_fit import fit_arrays
from foundation.errors import InputError

__all__ = [
    "CurvePoints",
    "FitError",
    "FitResult",
    "curve_points",
    "fit_curve",
    "fit_laws",
    "fit_noise",
    "lack_of_fit",
    "law_weights",
    "point_weights",
    "shares_noise",
]

BOUND_TOLERANCE = 1e-6


class FitError(InputError, ValueError):
    """Points that cannot be fitted (too few, NaN, no seeds), or options that name nothing the
    sweep measured: the user's to change (exit 2)."""


@dataclass(frozen=True)
class CurvePoints:
    """Seed means at each samples-seen value, with their seed replicates."""

    samples: np.ndarray  # (m,) sorted, unique
    mean: np.ndarray  # (m,)
    sigma: np.ndarray  # (m,) standard error of each mean, from the seed spread
    seeds: np.ndarray  # (m,) replicates per point
    replicates: tuple[np.ndarray, ...]  # m arrays of the seed values
    sigma_seed: float  # the seed standard deviation (pooled when seeds are few)
    pooled_df: int  # degrees of freedom behind sigma_seed
    # (runs, m) when every point is a checkpoint of the same runs (one run per seed): the
    # points of a run are correlated, so a bootstrap must resample whole runs. None otherwise.
    run_values: np.ndarray | None = None
    # (m,) the standard error each point's rows were given (an imported run's `se`), where every
    # point is one run with one; None otherwise. What a claim on measured points reads when
    # there is no seed scatter; the laws take their noise from seeds and residuals only.
    given_se: np.ndarray | None = None

    def se(self, i: int) -> tuple[float, int | None, str] | None:
        """Point i's standard error, its dof (None: a given SE, taken as known) and what it
        is; None where nothing measures it (one seed, no SE given)."""
        if self.pooled_df > 0:
            return float(self.sigma[i]), self.pooled_df, f"the seed scatter of {int(self.seeds[i])} seeds"
        if self.given_se is not None and np.isfinite(self.given_se[i]):
            return float(self.given_se[i]), None, "the SE given with the imported row"
        return None

    def first(self, count: int) -> "CurvePoints":
        """The `count` smallest points (what a backtest fits), seed noise re-estimated on them."""
        groups = self.replicates[:count]
        samples = np.concatenate([np.full(len(g), s) for g, s in zip(groups, self.samples, strict=False)])
        runs = None
        if self.run_values is not None:
            runs = np.tile(np.arange(len(self.run_values)), count)
            groups = tuple(self.run_values[:, i] for i in range(count))
        return curve_points(samples, np.concatenate(groups), runs=runs)


POOL_BELOW = 4  # fewer seeds than this at any point: one seed variance, pooled over the curve


def curve_points(
    samples, values, pool_below: int = POOL_BELOW, allow_nan: bool = False, runs=None, se=None
) -> CurvePoints:
    """Group replicate values by samples seen. With fewer than `pool_below` seeds per point the
    seed variance is pooled across points (one sigma for the curve); else each point has its own.
    `runs` names the run each value comes from, for designs that score one run many times; `se`
    the standard error each value was given (kept where every point is one value)."""
    samples = np.array(samples, dtype=float)
    values = np.array(values, dtype=float)
    runs = None if runs is None else np.asarray(runs)
    finite = np.isfinite(values) & np.isfinite(samples)
    if not finite.all():
        if not allow_nan:
            raise FitError(f"{int((~finite).sum())} NaN or inf values (drop them or pass allow_nan)")
        samples, values = samples[finite], values[finite]
        runs = None if runs is None else runs[finite]
    if len(values) == 0:
        raise FitError("no points to fit")
    grid = np.unique(samples)
    groups = tuple(values[samples == s] for s in grid)
    counts = np.array([len(g) for g in groups])
    means = np.array([g.mean() for g in groups])
    squares = sum(float(((g - g.mean()) ** 2).sum()) for g in groups)
    pooled_df = int((counts - 1).sum())
    sigma_seed = float(np.sqrt(squares / pooled_df)) if pooled_df > 0 else float("nan")
    if counts.min() >= pool_below:
        per_point = np.array([g.std(ddof=1) for g in groups])
    else:
        per_point = np.full(len(grid), sigma_seed)
    sigma = per_point / np.sqrt(counts)
    run_values = None if runs is None else _run_matrix(samples, values, runs, grid)
    given = None
    if se is not None and counts.max() == 1:
        given = np.array(se, dtype=float)[finite][np.argsort(samples)]
    return CurvePoints(grid, means, sigma, counts, groups, sigma_seed, pooled_df, run_values, given)


def _run_matrix(
    samples: np.ndarray, values: np.ndarray, runs: np.ndarray, grid: np.ndarray
) -> np.ndarray | None:
    """(runs, points) values when each run has exactly one value at every point, else None."""
    ids = np.unique(runs)
    rows, columns = np.searchsorted(ids, runs), np.searchsorted(grid, samples)
    if len(values) != len(ids) * len(grid) or len(set(zip(rows, columns, strict=True))) != len(values):
        return None
    matrix = np.empty((len(ids), len(grid)))
    matrix[rows, columns] = values
    return matrix


@dataclass
class FitResult:
    law: str
    values: dict[str, float]
    errors: dict[str, float]
    covariance: np.ndarray  # in `params` order, in the noise `fit_noise` gives (LOF_REJECT: inflated)
    params: tuple[str, ...]
    residuals: np.ndarray  # (mean - fit) / sigma at each point
    chi_square: float
    dof: int
    aicc: float
    success: bool
    flags: list[str] = field(default_factory=list)
    lof_p: float | None = None
    samples_range: tuple[float, float] = (0.0, 0.0)
    starts: int = 0  # how many starts the grid tried
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    loss: str = "least_squares"  # or "huber"
    model_result: Any = None  # lmfit's ModelResult (`fit_report()`); None for a Huber fit

    def predict(self, samples) -> np.ndarray:
        return LAWS[self.law].function(np.asarray(samples, dtype=float), **self.values)


def point_weights(points: CurvePoints) -> np.ndarray:
    """1 / the standard error of each seed mean: the least-squares weights of a curve. With one
    seed everywhere there is no standard error: equal weights, on a unit the fit's residuals
    replace (`_residual_scale`; a law has residual dof, as it has more points than parameters)."""
    sigma = points.sigma.copy()
    if not np.isfinite(sigma).all() or (sigma <= 0).any():
        sigma = np.full_like(sigma, max(float(np.nanmax(sigma)) if np.isfinite(sigma).any() else 0, 1e-3))
    return 1.0 / sigma


def fit_curve(
    points: CurvePoints, law: Law | str, span: Span = UNIT_SPAN, huber: float | None = None
) -> FitResult:
    """One law's weighted fit to the seed means from a grid of starts, with flags."""
    law = LAWS[law] if isinstance(law, str) else law
    S, y = points.samples.copy(), points.mean.copy()
    n_params = len(law.params)
    if len(S) <= n_params:  # a law through every point neither interpolates nor forecasts
        raise FitError(
            f"{law.name} has {n_params} parameters and the curve {len(S)} points: a law needs more points"
        )
    bounds = law.bounds(S, y, span)
    replicates = (np.repeat(S, points.seeds), np.concatenate(points.replicates))
    found = fit_arrays(
        law.function, law.params, S, y, point_weights(points), law.guess(S, y), bounds, replicates, huber
    )
    errors = _errors(found.covariance, law.params)
    flags = [f"BOUND_HIT:{name}" for name in law.params if _at_bound(found.values[name], bounds[name])]
    if not found.converged:
        flags.append("NOT_CONVERGED")  # the best of the starts, still moving when the solver stopped
    if found.finished:
        flags.append("LMFIT_FINISH")  # lmfit lowered chi-square below the grid's best start
    fit = FitResult(
        law=law.name,
        values=found.values,
        errors=errors,
        covariance=found.covariance,
        params=law.params,
        residuals=found.residuals,
        chi_square=found.chi_square,
        dof=found.dof,
        aicc=_aicc(found.chi_square, len(S), n_params),
        success=bool(np.isfinite(found.covariance).all() and np.isfinite(found.chi_square)),
        flags=flags,
        samples_range=(float(S.min()), float(S.max())),
        starts=found.starts,
        bounds=bounds,
        loss="huber" if huber else "least_squares",
        model_result=found.model_result,
    )
    fit.lof_p = lack_of_fit(points, fit)
    if fit.lof_p is not None and fit.lof_p < 0.05:
        # Misfit beyond seed noise: its errors grow by the excess chi-square. Inflating every fit
        # (max(1, chi2/dof)) instead widened the PIs of true laws to 97.5% at 95%.
        fit.flags.append("LOF_REJECT")
        fit.covariance = found.inflated
    elif (scale := _residual_scale(fit, points)) is not None:
        # One seed variance over the curve and a law that fits it: its residuals measure that
        # variance too. Left to the guess, one seed per size gave 95% PIs that held 35% of new
        # means; left to a few replicates, their dof stretched every interval by Student's t.
        if points.pooled_df == 0:
            fit.flags.append("NOISE_FROM_RESIDUALS")
        fit.covariance = found.covariance * scale
    fit.errors = _errors(fit.covariance, law.params)
    return fit


def shares_noise(points: CurvePoints) -> bool:
    """Whether the curve's seed noise is one variance over its sizes (fewer than POOL_BELOW seeds
    at some size) that a law which fits also measures by its residuals. Not where the points
    are checkpoints of the same runs, whose residuals are correlated, unless no replicate
    measures the noise at all."""
    few = bool(points.seeds.min() < POOL_BELOW)
    return few and (points.pooled_df == 0 or points.run_values is None)


def _residual_scale(fit: FitResult, points: CurvePoints) -> float | None:
    """The factor on the variance behind a fit's weights once its residuals are pooled with the
    seed scatter, (pooled_df + chi2) / (pooled_df + dof); None where they are not pooled: the
    noise is per size, the law misfits, or it has no residual dof."""
    if not shares_noise(points) or fit.dof <= 0 or "LOF_REJECT" in fit.flags:
        return None
    return (points.pooled_df + fit.chi_square) / (points.pooled_df + fit.dof)


def fit_noise(fit: FitResult, points: CurvePoints) -> tuple[float, int]:
    """The seed noise behind a fit's errors and its dof: the seed scatter pooled with the law's
    residuals where they measure the same variance (`_residual_scale`), else the scatter alone;
    with no replicate and no residual dof, the fallback weight's guess (dof 0: unknown)."""
    unit = points.sigma_seed if points.pooled_df > 0 else 1.0 / float(point_weights(points)[0])
    scale = _residual_scale(fit, points)
    if scale is None:
        return unit, points.pooled_df
    return unit * float(np.sqrt(scale)), points.pooled_df + fit.dof


def _errors(covariance: np.ndarray, params: tuple[str, ...]) -> dict[str, float]:
    return {name: float(np.sqrt(max(covariance[i, i], 0.0))) for i, name in enumerate(params)}


def _at_bound(value: float, bound: tuple[float, float]) -> bool:
    low, high = bound
    return abs(value - low) <= BOUND_TOLERANCE * max(1, abs(low)) or (
        np.isfinite(high) and abs(value - high) <= BOUND_TOLERANCE * max(1, abs(high))
    )


def _aicc(chi_square: float, n: int, k: int) -> float:
    """Small-sample AIC on the weighted residuals (Hurvich & Tsai 1989)."""
    if n - k - 1 <= 0:
        return float("inf")
    return chi_square + 2 * k + 2 * k * (k + 1) / (n - k - 1)


def lack_of_fit(points: CurvePoints, fit: FitResult) -> float | None:
    """p-value of the lack-of-fit F test that uses seed replicates as pure error; None when
    there are no replicates or no spare degrees of freedom."""
    m, k = len(points.samples), len(fit.params)
    df_lof, df_pe = m - k, int((points.seeds - 1).sum())
    if df_lof <= 0 or df_pe <= 0:
        return None
    predicted = fit.predict(points.samples)
    ss_lof = float(np.sum(points.seeds * (points.mean - predicted) ** 2))
    ss_pe = sum(float(((r - r.mean()) ** 2).sum()) for r in points.replicates)
    if ss_pe <= 0:
        return 0.0 if ss_lof > 0 else 1.0
    f_statistic = (ss_lof / df_lof) / (ss_pe / df_pe)
    return float(stats.f.sf(f_statistic, df_lof, df_pe))


def fit_laws(points: CurvePoints, span: Span = UNIT_SPAN, huber: float | None = None) -> dict[str, FitResult]:
    """Every law that can be fitted to the curve (too few points for a law: left out)."""
    fits = {}
    for name in LAWS:
        try:
            fits[name] = fit_curve(points, name, span, huber)
        except FitError:
            continue
    if not fits:
        count = len(points.samples)
        few = (
            " (a law needs more points than parameters)"
            if count <= max(len(law.params) for law in LAWS.values())
            else ""
        )
        raise FitError(f"no law could be fitted to {count} point{'s' if count != 1 else ''}{few}")
    return fits


def law_weights(fits: dict[str, FitResult]) -> dict[str, float]:
    """Akaike weights exp(-dAICc / 2), normalised, over the laws with a usable fit (finite
    chi-square and covariance). When no law has a finite AICc (too few points), the usable laws
    with the fewest parameters share it."""
    usable = {name: fit for name, fit in fits.items() if fit.success}
    if not usable:
        raise FitError("no law gave a usable fit")
    finite = {name: fit.aicc for name, fit in usable.items() if np.isfinite(fit.aicc)}
    if finite:
        best = min(finite.values())
        raw = {name: float(np.exp(-(aicc - best) / 2)) for name, aicc in finite.items()}
    else:
        fewest = min(len(fit.params) for fit in usable.values())
        raw = {name: 1.0 for name, fit in usable.items() if len(fit.params) == fewest}
    total = sum(raw.values())
    return {name: raw.get(name, 0.0) / total for name in fits}
