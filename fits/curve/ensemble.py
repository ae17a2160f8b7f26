"""A curve's law-averaged uncertainty. Each admissible law, with its Akaike weight, carries draws
of its parameters: a multivariate normal around its fit (the delta method's distribution) or
seed-bootstrap refits. Bands, forecasts and gaps read the mixture of the draws' curves, so the
uncertainty of the form enters every interval.

A forecast past the data reads a law without a ceiling (`Law.ceiling` None) on a slowed clock
(`slowed`): its samples run slower and slower past the largest fitted S and stop at
UNBOUNDED_REACH times it, smoothly, so such a law never forecasts growth it was not fitted to
and no forecast steps where it stops. Past UNBOUNDED_REACH, where the laws with a ceiling carry
under MIN_BOUNDED_WEIGHT, the forecast is flagged UNBOUNDED_LAW and withheld. (Fading the
unbounded laws' weight instead would move a forecast down wherever the bounded laws sit below
them, and a curve whose every law rises must not be forecast to fall.)
"""

import zlib
from dataclasses import dataclass

import numpy as np

from fits.curve.fit import CurvePoints, FitResult, fit_noise
from fits.curve.laws import LAWS, Span

__all__ = [
    "DRAWS",
    "MIN_BOUNDED_WEIGHT",
    "UNBOUNDED_REACH",
    "Ensemble",
    "Member",
    "build_ensemble",
    "centred",
    "parameter_draws",
    "points_seed",
    "slowed",
]

DRAWS = 4000  # mixture draws behind each band
UNBOUNDED_REACH = 2.0  # where a law without a ceiling stops: it is read no further past its data
MIN_BOUNDED_WEIGHT = 0.05  # past that reach, the laws with a ceiling must carry this much weight
SPREAD_SEED = 7  # the stream family of `Ensemble.t_spread`


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
    seed: int  # of the parametric draws and `t_spread` (`points_seed`)

    @property
    def weights(self) -> dict[str, float]:
        return {m.fit.law: m.weight for m in self.members}

    @property
    def heaviest(self) -> FitResult:
        return max(self.members, key=lambda m: m.weight).fit

    def row_laws(self, count: int = DRAWS) -> np.ndarray:
        """(count,) the law behind each row of `curve_draws(..., count)`."""
        shares = _shares(np.array([m.weight for m in self.members]), count)
        return np.repeat([m.fit.law for m in self.members], shares)

    def unbounded_share(self) -> float:
        """The weight of the laws without a ceiling."""
        return sum(m.weight for m in self.members if LAWS[m.fit.law].ceiling is None)

    def withheld(self, samples: float) -> bool:
        """Whether a forecast at S rests on laws without a ceiling alone: past their reach,
        where the laws with a ceiling hold under MIN_BOUNDED_WEIGHT (the data reject them)."""
        far = samples > UNBOUNDED_REACH * self.samples_range[1]
        return far and 1.0 - self.unbounded_share() < MIN_BOUNDED_WEIGHT

    def _read_at(self, member: Member, samples: np.ndarray, forecast: bool) -> np.ndarray:
        """The samples a member is read at: a forecast reads a law without a ceiling `slowed`."""
        if forecast and LAWS[member.fit.law].ceiling is None:
            return slowed(samples, self.samples_range[1])
        return samples

    def predict(self, samples, forecast: bool = False) -> np.ndarray:
        """The weighted mean of the members' fitted curves, inside the metric's range."""
        samples = np.asarray(samples, dtype=float)
        total = sum(m.weight for m in self.members)
        curves = sum(
            m.weight * np.asarray(m.fit.predict(self._read_at(m, samples, forecast))) for m in self.members
        )
        return np.clip(curves / total, *self.span)

    def curve_draws(
        self, samples, count: int = DRAWS, forecast: bool = False, spread: np.ndarray | None = None
    ) -> np.ndarray:
        """(count, n) curves drawn from the mixture: each member gives its share of the rows.
        `spread` (count,) scales each parametric row's distance from its law's fit
        (`t_spread`); bootstrap refits are taken as they are."""
        samples = np.atleast_1d(np.asarray(samples, dtype=float))
        shares = _shares(np.array([m.weight for m in self.members]), count)
        rows, first = [], 0
        for member, share in zip(self.members, shares, strict=True):
            if share == 0:
                continue
            draws = member.draws[np.arange(share) % len(member.draws)]
            function = LAWS[member.fit.law].function
            read_at = self._read_at(member, samples, forecast)
            curves = function(read_at[None, :], *(draws[:, j : j + 1] for j in range(draws.shape[1])))
            if self.method == "parametric":
                point = member.fit.predict(read_at)
                curves = centred(curves, point)
                if spread is not None:
                    curves = point + (curves - point) * spread[first : first + share, None]
            rows.append(curves)
            first += share
        return np.clip(np.vstack(rows), *self.span)

    def t_spread(self, count: int = DRAWS) -> np.ndarray | None:
        """(count,) sqrt(dof / chi2_dof) factors for `curve_draws`: they turn its normal draws,
        which take the seed noise as known, into the multivariate t of a noise estimated on
        `dof` degrees of freedom. None where dof is unknown (0). An interval with no noise term
        of its own (a gap) needs them; a PI has its t in the noise it adds (`bands.intervals`)."""
        if self.dof <= 0 or self.method != "parametric":
            return None
        return np.sqrt(self.dof / np.random.default_rng((SPREAD_SEED, self.seed)).chisquare(self.dof, count))


def slowed(samples, last: float) -> np.ndarray:
    """The samples a law without a ceiling is read at in a forecast: S itself up to the largest
    fitted S (`last`); past it, d ln S' / d ln S falls smoothly from 1 to 0 (a smoothstep in
    ln S) by UNBOUNDED_REACH**2 times `last`, where S' has reached UNBOUNDED_REACH times it and
    stops. Rising and continuous with its slope, so a rising law read on it never steps or falls."""
    samples = np.asarray(samples, dtype=float)
    span = 2 * np.log(UNBOUNDED_REACH)
    x = np.clip(np.log(np.maximum(samples, last) / last), 0.0, span)
    return np.where(samples > last, last * np.exp(x - x**3 / span**2 + x**4 / (2 * span**3)), samples)


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


def _draws(fit: FitResult, seed: int) -> np.ndarray:
    """Normal draws: the seed-noise t enters once, in the PI's noise term (`bands.intervals`);
    a second, independent t here widened 95% PIs to 97-98% on planted truths."""
    return parameter_draws(fit.values, fit.covariance, fit.bounds, dof=0, seed=seed)


def points_seed(points: CurvePoints) -> int:
    """A curve's own draw seed, from its points: the same points always give the same draws,
    and two curves' draws are independent. (One seed for every curve made a gap's two curves
    move together draw by draw, and narrowed its interval wherever their laws had one shape.)"""
    return zlib.crc32(np.concatenate([points.samples, points.mean, points.seeds]).tobytes())


def build_ensemble(
    points: CurvePoints,
    fits: dict[str, FitResult],
    weights: dict[str, float],
    span: Span,
    refits: dict[str, np.ndarray] | None = None,
) -> Ensemble:
    """The weighted laws of one curve with their draws: bootstrap `refits` (law -> (n, p))
    when given, else parametric draws."""
    seed = points_seed(points)
    members = tuple(
        Member(fit, weights[name], refits[name] if refits else _draws(fit, seed))
        for name, fit in fits.items()
        if weights.get(name, 0) > 0
    )
    first = next(iter(fits.values()))
    method = f"bootstrap:{len(next(iter(refits.values())))}" if refits else "parametric"
    heaviest = max(fits, key=lambda name: weights.get(name, 0.0))
    sigma, dof = fit_noise(fits[heaviest], points)  # the seed scatter, with its residuals where they pool
    return Ensemble(members, span, sigma, dof, first.samples_range, method, seed)
