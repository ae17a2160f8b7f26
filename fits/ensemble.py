"""A curve's law-averaged uncertainty. Each admissible law, with its Akaike weight, carries draws
of its parameters: a multivariate normal around its fit (the delta method's distribution) or
seed-bootstrap refits. Bands, forecasts and gaps read the mixture of the draws' curves, so the
uncertainty of the form enters every interval.

Laws without a ceiling (`Law.ceiling` None) take part only up to UNBOUNDED_REACH times the
largest fitted samples; past it, the bounded laws alone forecast, and where they carry under
MIN_BOUNDED_WEIGHT the forecast is flagged UNBOUNDED_LAW and withheld.
"""

from dataclasses import dataclass

import numpy as np

from fits.fit import CurvePoints, FitResult
from fits.laws import LAWS, Span

__all__ = [
    "DRAWS",
    "MIN_BOUNDED_WEIGHT",
    "UNBOUNDED_REACH",
    "Ensemble",
    "Member",
    "build_ensemble",
    "centred",
    "parameter_draws",
]

DRAWS = 4000  # mixture draws behind each band
UNBOUNDED_REACH = 2.0  # how far past its data an unbounded law may forecast
MIN_BOUNDED_WEIGHT = 0.05  # past that reach, the laws with a ceiling must carry this much weight


@dataclass(frozen=True)
class Member:
    fit: FitResult
    weight: float
    draws: np.ndarray  # (n, p) parameter draws in `fit.params` order


@dataclass(frozen=True)
class Ensemble:
    members: tuple[Member, ...]
    span: Span  # the metric's range: no curve, band or forecast leaves it
    sigma_seed: float
    dof: int  # behind sigma_seed (0: unknown, normal quantiles)
    samples_range: tuple[float, float]
    method: str  # "parametric" or "bootstrap:<refits>"

    @property
    def weights(self) -> dict[str, float]:
        return {m.fit.law: m.weight for m in self.members}

    @property
    def heaviest(self) -> FitResult:
        return max(self.members, key=lambda m: m.weight).fit

    def usable(self, samples: float) -> tuple[tuple[Member, ...], bool]:
        """The members that may forecast at S, and whether the unbounded laws had to be kept
        (the laws with a ceiling hold under MIN_BOUNDED_WEIGHT: the data reject them)."""
        weighted = tuple(m for m in self.members if m.weight > 0)
        if samples <= UNBOUNDED_REACH * self.samples_range[1]:
            return weighted, False
        bounded = tuple(m for m in weighted if LAWS[m.fit.law].ceiling is not None)
        if sum(m.weight for m in bounded) >= MIN_BOUNDED_WEIGHT:
            return bounded, False
        return weighted, True

    def predict(self, samples, members: tuple[Member, ...] | None = None) -> np.ndarray:
        """The weighted mean of the members' fitted curves, inside the metric's range."""
        members = self.members if members is None else members
        total = sum(m.weight for m in members)
        curves = sum(m.weight * np.asarray(m.fit.predict(samples)) for m in members) / total
        return np.clip(curves, *self.span)

    def curve_draws(
        self, samples, members: tuple[Member, ...] | None = None, count: int = DRAWS
    ) -> np.ndarray:
        """(count, n) curves drawn from the mixture: each member gives its share of the rows."""
        members = self.members if members is None else members
        samples = np.atleast_1d(np.asarray(samples, dtype=float))
        shares = _shares(np.array([m.weight for m in members]), count)
        rows = []
        for member, share in zip(members, shares, strict=True):
            if share == 0:
                continue
            draws = member.draws[np.arange(share) % len(member.draws)]
            function = LAWS[member.fit.law].function
            curves = function(samples[None, :], *(draws[:, j : j + 1] for j in range(draws.shape[1])))
            if self.method == "parametric":
                curves = centred(curves, member.fit.predict(samples))
            rows.append(curves)
        return np.clip(np.vstack(rows), *self.span)


def centred(curves: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Parametric curve draws moved so that their median is the fitted curve: draws held at a
    parameter's bound, and curvature far from the data, otherwise shift the band off the fit."""
    return curves - np.median(curves, axis=0) + point


def _shares(weights: np.ndarray, count: int) -> np.ndarray:
    """Integer row counts proportional to the weights, summing to `count`."""
    weights = weights / weights.sum()
    shares = np.floor(weights * count).astype(int)
    shares[int(np.argmax(weights))] += count - shares.sum()
    return shares


def parameter_draws(
    values: dict[str, float],
    covariance: np.ndarray,
    bounds: dict[str, tuple[float, float]],
    dof: int,
    count: int = DRAWS,
    seed: int = 0,
) -> np.ndarray:
    """(count, p) draws of a multivariate t around fitted `values` (normal when dof is unknown),
    held inside the bounds. Singular directions (a parameter on its bound) do not vary."""
    rng = np.random.default_rng(seed)
    centre = np.array(list(values.values()))
    eigenvalues, vectors = np.linalg.eigh((covariance + covariance.T) / 2)
    root = vectors * np.sqrt(np.clip(eigenvalues, 0.0, None))
    normal = rng.standard_normal((count, len(centre))) @ root.T
    scale = np.sqrt(dof / rng.chisquare(dof, (count, 1))) if dof > 0 else 1.0
    lower = [bounds[name][0] for name in values]
    upper = [bounds[name][1] for name in values]
    return np.clip(centre + normal * scale, lower, upper)


def _draws(fit: FitResult) -> np.ndarray:
    """Normal draws: the seed-noise t enters once, in the PI's noise term (`bands.intervals`);
    a second, independent t here widened 95% PIs to 97-98% on planted truths."""
    return parameter_draws(fit.values, fit.covariance, fit.bounds, dof=0)


def build_ensemble(
    points: CurvePoints,
    fits: dict[str, FitResult],
    weights: dict[str, float],
    span: Span,
    refits: dict[str, np.ndarray] | None = None,
) -> Ensemble:
    """The weighted laws of one curve with their draws: bootstrap `refits` (law -> (n, p))
    when given, else parametric draws."""
    members = tuple(
        Member(fit, weights[name], refits[name] if refits else _draws(fit))
        for name, fit in fits.items()
        if weights.get(name, 0) > 0
    )
    first = next(iter(fits.values()))
    method = f"bootstrap:{len(next(iter(refits.values())))}" if refits else "parametric"
    sigma = points.sigma_seed if np.isfinite(points.sigma_seed) else 0.0
    return Ensemble(members, span, sigma, points.pooled_df, first.samples_range, method)
