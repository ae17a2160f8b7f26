"""Fitting one curve: seed means with seed-noise weights, lmfit for the point fit, the law chosen
by a rolling-origin backtest then small-sample AIC, and a lack-of-fit test against pure error.

Everything takes arrays and returns values; `fit_curve` copies its inputs.
"""

from dataclasses import dataclass, field

import lmfit
import numpy as np
from scipy import stats

from fits.laws import LAWS, Law

__all__ = [
    "CurvePoints",
    "FitError",
    "FitResult",
    "backtest_score",
    "curve_points",
    "fit_curve",
    "lack_of_fit",
    "select_law",
]

NEAR_ASYMPTOTE = 0.9  # a prediction within 10% of (a_inf - lowest mean) of the ceiling
BOUND_TOLERANCE = 1e-6


class FitError(ValueError):
    """Points that cannot be fitted (too few, NaN, no seeds)."""


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


def curve_points(samples, values, pool_below: int = 4, allow_nan: bool = False, runs=None) -> CurvePoints:
    """Group replicate values by samples seen. With fewer than `pool_below` seeds per point the
    seed variance is pooled across points (one sigma for the curve); else each point has its own.
    `runs` names the run each value comes from, for designs that score one run many times."""
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
    return CurvePoints(grid, means, sigma, counts, groups, sigma_seed, pooled_df, run_values)


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
    covariance: np.ndarray  # in `params` order, scaled by max(1, reduced chi-square)
    params: tuple[str, ...]
    residuals: np.ndarray  # (mean - fit) / sigma at each point
    chi_square: float
    dof: int
    aicc: float
    success: bool
    flags: list[str] = field(default_factory=list)
    lof_p: float | None = None
    samples_range: tuple[float, float] = (0.0, 0.0)
    starts: dict[str, float] = field(default_factory=dict)
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    lmfit_summary: str = ""  # lmfit's own fit report, kept for provenance

    def predict(self, samples) -> np.ndarray:
        return LAWS[self.law].function(np.asarray(samples, dtype=float), **self.values)


def _weights(points: CurvePoints) -> np.ndarray:
    sigma = points.sigma.copy()
    if not np.isfinite(sigma).all() or (sigma <= 0).any():
        # One seed everywhere: no noise estimate; fall back to equal weights (flagged by callers).
        sigma = np.full_like(sigma, max(float(np.nanmax(sigma)) if np.isfinite(sigma).any() else 0, 1e-3))
    return 1.0 / sigma


def fit_curve(points: CurvePoints, law: Law | str) -> FitResult:
    """Weighted least squares of one law to the seed means (lmfit), with flags."""
    law = LAWS[law] if isinstance(law, str) else law
    S, y = points.samples.copy(), points.mean.copy()
    n_params = len(law.params)
    if len(S) < n_params:
        raise FitError(f"{law.name} has {n_params} parameters but the curve has {len(S)} points")
    starts, bounds = law.guess(S, y), law.bounds(S, y)
    model = lmfit.Model(law.function, independent_vars=["S"])
    parameters = model.make_params()
    for name in law.params:
        low, high = bounds[name]
        parameters[name].set(value=_inside(starts[name], low, high), min=low, max=high)
    weights = _weights(points)
    result = model.fit(y, parameters, S=S, weights=weights, scale_covar=False, nan_policy="raise")
    values = {name: float(result.params[name].value) for name in law.params}
    residuals = (y - law.function(S, **values)) * weights
    chi_square = float(np.sum(residuals**2))
    dof = len(S) - n_params
    scale = max(1.0, chi_square / dof) if dof > 0 else 1.0
    if result.covar is not None:
        covariance = np.array(result.covar) * scale
    else:
        covariance = np.full((n_params, n_params), np.nan)
    errors = {name: float(np.sqrt(covariance[i, i])) for i, name in enumerate(law.params)}
    flags = []
    for name in law.params:
        low, high = bounds[name]
        value = values[name]
        if abs(value - low) <= BOUND_TOLERANCE * max(1, abs(low)) or (
            np.isfinite(high) and abs(value - high) <= BOUND_TOLERANCE * max(1, abs(high))
        ):
            flags.append(f"BOUND_HIT:{name}")
    if len(S) == 1:
        flags.append("ONE_POINT")
    fit = FitResult(
        law=law.name,
        values=values,
        errors=errors,
        covariance=covariance,
        params=law.params,
        residuals=residuals,
        chi_square=chi_square,
        dof=dof,
        aicc=_aicc(chi_square, len(S), n_params),
        success=bool(result.success) and np.isfinite(covariance).all(),
        flags=flags,
        samples_range=(float(S.min()), float(S.max())),
        starts=starts,
        bounds=bounds,
        lmfit_summary=result.fit_report(),
    )
    fit.lof_p = lack_of_fit(points, fit)
    if fit.lof_p is not None and fit.lof_p < 0.05:
        fit.flags.append("LOF_REJECT")
    return fit


def _inside(start: float, low: float, high: float) -> float:
    """The start moved just inside its bounds: lmfit's bound transform has zero slope at a
    bound, so a parameter started there never moves."""
    span = (high - low) if np.isfinite(high) else max(abs(low), abs(start), 1.0)
    margin = 1e-3 * span
    return float(np.clip(start, low + margin, high - margin if np.isfinite(high) else np.inf))


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


def _subset(points: CurvePoints, count: int) -> CurvePoints:
    groups = points.replicates[:count]
    return curve_points(
        np.concatenate([np.full(len(g), s) for g, s in zip(groups, points.samples[:count], strict=True)]),
        np.concatenate(groups),
    )


def backtest_score(points: CurvePoints, law: Law | str) -> float:
    """Rolling origin: fit the smallest sizes, predict the next, for every origin that leaves a
    parameter's worth of spare points; mean squared error in seed-noise units (inf if none)."""
    law = LAWS[law] if isinstance(law, str) else law
    errors = []
    for count in range(len(law.params) + 1, len(points.samples)):
        try:
            fit = fit_curve(_subset(points, count), law)
        except (FitError, ValueError):
            continue
        predicted = float(fit.predict(points.samples[count]))
        sigma = points.sigma[count] if np.isfinite(points.sigma[count]) else 1.0
        errors.append(((points.mean[count] - predicted) / sigma) ** 2)
    return float(np.mean(errors)) if errors else float("inf")


def select_law(
    points: CurvePoints, names: tuple[str, ...] = tuple(LAWS)
) -> tuple[FitResult, dict[str, dict]]:
    """The law with the best backtest (ties and untestable curves: lowest AICc), and the scores."""
    table: dict[str, dict] = {}
    fits: dict[str, FitResult] = {}
    for name in names:
        try:
            fits[name] = fit_curve(points, name)
        except (FitError, ValueError):
            continue
        table[name] = {"backtest": backtest_score(points, name), "aicc": fits[name].aicc}
    if not fits:
        raise FitError(f"no law could be fitted to {len(points.samples)} points")
    best = min(fits, key=lambda name: (round(table[name]["backtest"], 6), table[name]["aicc"]))
    chosen = fits[best]
    takeoff = not LAWS[best].takeoff and any(
        LAWS[name].takeoff and table[name]["aicc"] + 2 < table[best]["aicc"] for name in fits
    )
    if takeoff:
        chosen.flags.append("TAKEOFF_NOT_MODELLED")
    return chosen, table
