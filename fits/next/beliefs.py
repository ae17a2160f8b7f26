"""What a claim's interval rests on, in a form that says what new runs would do to it: the
`Outlook` of a claim after some candidate runs (`Cell`s) land, averaged over simulated outcomes.

- `DrawBelief` (a gap; a level past the data): the claim's value on each draw of the curves'
  law mixtures. Each fitted law keeps at least FLOOR of the weight (a law with no weight today
  may carry it once more points land); each law's draws are in the seed noise its fit measures
  (`fits.curve.fit.fit_noise`). For OUTCOMES truths (draws of the mixture) a run's k-seed mean is
  simulated with the objective's seed noise at S (`seed_noise`); every draw is reweighted by
  that outcome's likelihood and by the change in its law's AICc penalty where the point is
  new; the claim's 95% interval is read off the reweighted draws, and a gap's is widened by
  Student's t on each curve's seed dof once the runs land, as the final fit's draws are
  (`Ensemble.t_spread`): the reweighting takes the seed noise as known, so more seeds buy a
  narrower t as well as a smaller error. A run's checkpoints are not independent: it adds one
  point to a law, its largest fitted checkpoint. A gap's outcome that leaves it withheld (a
  crossing outside the measured sizes, an open or too wide interval) counts half its
  narrowing: the verdict shows a bound for it, not the interval.
  What the runs assumed landed do to the draws is an explicit value (`Landed`): the planner
  hands it back with the next candidate, so no result depends on the order of the calls.
- `MeansBelief` (`fits.next.means_belief`: an order; a level where it was measured): seed
  means.
- `MeansGapBelief` (`fits.next.means_gap`): a gap whose verdict reads the seed means, the
  laws' gap withheld; planned on that estimator, not on the laws.
"""

from collections.abc import Sequence

import numpy as np
from scipy import stats

from fits.claims.claim import Claim, Per, Verdict
from fits.claims.common import SIZE_PRECISION, claim_curve, measured_curve
from fits.claims.gap import flops_scale, reads_seed_means
from fits.claims.kinds import CATALOG, Estimator
from fits.curve.curveset import CurveFit, CurveSet
from fits.curve.ensemble import DRAWS, Ensemble, build_ensemble
from fits.curve.fit import shares_noise
from fits.curve.gaps import GRID, MAX_SPAN, REACH, crossing, default_target
from fits.curve.level import LEVEL, tails
from fits.curve.settings import FitSettings, Points
from fits.next.means_belief import MeansBelief
from fits.next.means_gap import MeansGapBelief
from fits.next.outlook import OUTCOMES, Cell, Landed, Outlook
from fits.next.seed_noise import seed_noise

__all__ = ["FLOOR", "MIN_EFFECTIVE", "belief_of", "planned"]

FLOOR = 0.005  # the least weight a fitted law keeps in a plan's mixture (all of them: inside a tail)
SLOTS = 16  # independent noise draws per (curve, size): repeats of one cell use the next
MIN_EFFECTIVE = 50.0  # fewer reweighted draws than this (median over outcomes): the draws run out


def planned(claim: Claim) -> bool:
    """Whether orch next plans for the claim: not a forecast claim (settled by held-out runs),
    nor a level against a baseline (its region holds a difference the beliefs do not model yet)."""
    return CATALOG[claim.kind].planned(claim)


def belief_of(
    claim: Claim, curves: CurveSet, settings: FitSettings, seed: int = 0, verdict: Verdict | None = None
):
    """A claim's belief on these curves, on the estimator its verdict reads: `DrawBelief`,
    `MeansBelief`, or (a gap whose laws' gap is withheld while the seed means read it)
    `MeansGapBelief`."""
    seen = {name: measured_curve(curves, claim, name) for name in claim.objectives}
    every_checkpoint = settings.points is Points.ALL
    estimator = CATALOG[claim.kind].estimator
    if verdict is not None and reads_seed_means(verdict):
        a, b = seen[claim.faster], seen[claim.slower]
        scale = flops_scale(curves, claim, a, b) if claim.per is Per.FLOPS else None
        return MeansGapBelief(claim, a, b, every_checkpoint, seed, scale or 1.0)
    if estimator is Estimator.MEANS:
        return MeansBelief(claim, [seen[claim.above], seen[claim.below]], every_checkpoint, seed)
    points = seen[claim.objectives[0]].seen
    measured = np.isclose(points.samples, claim.at, rtol=SIZE_PRECISION).any() if claim.at else False
    if estimator is Estimator.MEANS_WHERE_MEASURED and measured:
        return MeansBelief(claim, [seen[claim.objective]], every_checkpoint, seed)
    mine = {name: claim_curve(curves, claim, name) for name in claim.objectives}
    # an objective's other models share its seed noise
    noise = {name: seed_noise([c for c in curves if c.key.objective == name]) for name in claim.objectives}
    fitted_up_to = settings.holdout_above if every_checkpoint else None
    ratio = CATALOG[claim.kind].ratio
    scale = flops_scale(curves, claim, mine[claim.faster], mine[claim.slower]) if ratio else None
    return DrawBelief(claim, mine, noise, seed, fitted_up_to, scale)


def _penalty(n: int, k: int) -> float:
    """AICc's penalty for k parameters on n points (inf where AICc is undefined)."""
    return 2 * k + 2 * k * (k + 1) / (n - k - 1) if n - k - 1 > 0 else np.inf


def planning_ensemble(curve: CurveFit) -> Ensemble:
    """The curve's laws with FLOOR weight each at least (each law's errors already in the seed
    noise its fit measures: `fits.curve.fit.fit_noise`)."""
    points = curve.points
    fits = {name: fit for name, fit in curve.fits.items() if fit.success}
    weights = {name: max(curve.ensemble.weights.get(name, 0.0), FLOOR) for name in fits}
    total = sum(weights.values())
    return build_ensemble(points, fits, {n: w / total for n, w in weights.items()}, curve.ensemble.span)


class DrawBelief:
    """A gap or a forecast level, read off the curves' law draws and reweighted by outcomes.
    `fitted_up_to`: the largest S a run's checkpoints add to its law (the holdout, where every
    checkpoint is a point); `scale`: B's FLOPs per sample over A's, for a gap in FLOPs."""

    def __init__(
        self,
        claim: Claim,
        curves: dict[str, CurveFit],
        noise,
        seed: int,
        fitted_up_to: int | None,
        scale: float | None,
    ):
        self.claim, self.notes = claim, []
        self.curves, self.noise = curves, noise
        self.fitted_up_to = fitted_up_to
        self.ensembles = {name: planning_ensemble(curve) for name, curve in curves.items()}
        for name in curves:
            if noise[name] is None:
                self.notes.append(f"{name}: no seed noise can be estimated (one seed, no residual dof)")
            elif curves[name].points.pooled_df == 0:
                self.notes.append(f"{name}: one seed per size; seed noise {noise[name].source}")
        rng = np.random.default_rng(seed)
        self.truth = rng.integers(DRAWS, size=OUTCOMES)
        self.z = rng.standard_normal((OUTCOMES, SLOTS))
        self.ratio = CATALOG[claim.kind].ratio
        self.values, self.crossings = self._values(scale)
        self.order = np.argsort(self.values)
        # draws of a curve at an S: a memo of a pure function, the same whatever the call order
        self._draws_at: dict[tuple[str, float], np.ndarray] = {}
        self._rows = {name: e.row_laws() for name, e in self.ensembles.items()}
        self.open_width: float | None = None  # the gap's width before any run (`outlook`)
        self.open_width = self.outlook(self.nothing()).width

    def nothing(self) -> Landed:
        """No run landed yet."""
        return Landed((), np.zeros((OUTCOMES, DRAWS)), ())

    def _values(self, scale: float | None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(D,) the claim's value on each draw, and each curve's crossing of the target (gap)."""
        claim = self.claim
        if not self.ratio:  # a level past the data
            return self.ensembles[claim.objective].curve_draws([claim.at], forecast=True)[:, 0], {}
        a, b = self.ensembles[claim.faster], self.ensembles[claim.slower]
        if claim.at is not None:
            target = b.curve_draws([claim.at], forecast=True)[:, 0]
        elif claim.at_alignment is not None:
            target = claim.at_alignment
        else:
            target = default_target(self.curves[claim.faster].ensemble, self.curves[claim.slower].ensemble)
        found = {claim.faster: _crossings(a, target)}
        found[claim.slower] = (
            np.full(DRAWS, float(claim.at)) if claim.at is not None else _crossings(b, target)
        )
        per = scale if claim.per is Per.FLOPS and scale else 1.0
        return found[claim.slower] / found[claim.faster] * per, found

    def _at(self, objective: str, samples: float) -> np.ndarray:
        key = (objective, samples)
        if key not in self._draws_at:
            self._draws_at[key] = self.ensembles[objective].curve_draws([samples], forecast=True)[:, 0]
        return self._draws_at[key]

    def _informs(self, cell: Cell) -> float:
        """The S at which a run adds its point to the law: its largest fitted checkpoint."""
        return min(cell.samples, self.fitted_up_to) if self.fitted_up_to else cell.samples

    def _on_curve(self, cell: Cell) -> bool:
        """Whether the cell runs one of the claim's curves (its objective on that curve's model)."""
        curve = self.curves.get(cell.objective)
        return curve is not None and cell.model == curve.key.model

    def land(self, prior: Landed, cell: Cell) -> Landed:
        """`prior` with one more run landed: its outcome's log-likelihood on each draw added,
        drawn from its (objective, fitted S)'s next noise slot."""
        logw, used = prior.logw.copy(), dict(prior.used)
        if self._on_curve(cell):
            samples = self._informs(cell)
            draws = self._at(cell.objective, samples)
            slot = used.get((cell.objective, samples), 0)
            used[(cell.objective, samples)] = slot + 1
            sd = float(self.noise[cell.objective].sd(samples)) / np.sqrt(cell.seeds)
            seen = draws[self.truth] + sd * self.z[:, slot % SLOTS]
            logw -= 0.5 * ((seen[:, None] - draws[None, :]) / sd) ** 2
        return Landed((*prior.cells, cell), logw, tuple(used.items()))

    def outlook(self, landed: Landed) -> Outlook:
        used = dict(landed.used)
        logw = landed.logw - 0.5 * self._penalty_change(used)[None, :]
        weights = np.exp(logw - logw.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        low, high = _weighted_interval(self.values, self.order, weights)
        if self.ratio:
            low, high = self._t_widened(low, high, weights, landed.cells)
        region = self.claim.region
        decided = np.array(
            [region.holds(lo, hi) or region.misses(lo, hi) for lo, hi in zip(low, high, strict=True)]
        )
        width = np.log(np.maximum(high, 1e-12) / np.maximum(low, 1e-12)) if self.ratio else high - low
        identifiable = None
        if self.ratio:  # a withheld gap shows a bound, not its interval: half the narrowing counts
            found = self._identifiable(weights, used, low, high)
            width = np.where(found, width, (width + (self.open_width or width)) / 2)
            identifiable = float(found.mean())
        return Outlook(
            float(width.mean()),
            float(decided.mean()),
            identifiable,
            float(np.median(1.0 / np.sum(weights**2, axis=1))),
        )

    def _t_widened(self, low, high, weights, cells: Sequence[Cell]):
        """The gap's interval as the final fit will give it: Student's t on each curve's seed
        dof once `cells` land (`Ensemble.t_spread`), where the reweighted draws take the seed
        noise as known. The curves' dofs combine by their weighted log-crossing variances
        (Welch-Satterthwaite); a dof of 0 counts as one."""
        total, shares = np.zeros(len(weights)), np.zeros(len(weights))
        for name, dof in self._dof_after(cells).items():
            logs = np.log(self.crossings[name])
            variance = weights @ logs**2 - (weights @ logs) ** 2
            total += variance
            shares += variance**2 / max(dof, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            combined = np.where(shares > 0, total**2 / shares, np.inf)  # no spread at all: no t
        upper = tails(LEVEL)[1] / 100
        stretch = stats.t.ppf(upper, combined) / stats.norm.ppf(upper)
        middle, half = np.log(low * high) / 2, np.log(high / low) / 2
        return np.exp(middle - stretch * half), np.exp(middle + stretch * half)

    def _dof_after(self, cells: Sequence[Cell]) -> dict[str, int]:
        """Each curve's seed dof once `cells` land. Where the seed scatter pools with the laws'
        residuals (`fits.curve.fit.fit_noise`), each new run adds one; else a seed at a measured size
        adds one and a new size's first seed none."""
        found = {}
        for name, curve in self.curves.items():
            seeds: dict[float, int] = {}
            for cell in (c for c in cells if c.objective == name and self._on_curve(c)):
                at = self._informs(cell)
                seeds[at] = seeds.get(at, 0) + cell.seeds
            added = sum(seeds.values())
            if shares_noise(curve.points) and "LOF_REJECT" not in curve.ensemble.heaviest.flags:
                found[name] = curve.ensemble.dof + added
                continue
            known = curve.points.samples
            new = sum(not np.isclose(known, s, rtol=SIZE_PRECISION).any() for s in seeds)
            found[name] = curve.points.pooled_df + added - new
        return found

    def _penalty_change(self, used: dict[tuple[str, float], int]) -> np.ndarray:
        """(D,) each draw's change in its law's AICc penalty from the new points on its curve."""
        change = np.zeros(DRAWS)
        for name, ensemble in self.ensembles.items():
            known = self.curves[name].points.samples
            new = sum(1 for o, s in used if o == name and not np.isclose(known, s, rtol=1e-3).any())
            if not new:
                continue
            n = len(known)
            for law, member in ((m.fit.law, m) for m in ensemble.members):
                k = len(member.fit.params)
                before, after = _penalty(n, k), _penalty(n + new, k)
                change[self._rows[name] == law] += after - before if np.isfinite(before) else 0.0
        return change

    def _identifiable(self, weights, used, low, high) -> np.ndarray:
        """(OUTCOMES,) whether both crossings (weighted medians) fall inside the curves' measured
        ranges, with a closed interval spanning at most MAX_SPAN."""
        inside = (low > 0) & np.isfinite(high) & (high / np.maximum(low, 1e-300) <= MAX_SPAN)
        for name, found in self.crossings.items():
            sizes = [*self.curves[name].points.samples, *(s for o, s in used if o == name)]
            order = np.argsort(found)
            median = found[order][np.argmax(np.cumsum(weights[:, order], axis=1) >= 0.5, axis=1)]
            inside &= (min(sizes) <= median) & (median <= max(sizes))
        return inside


def _crossings(ensemble: Ensemble, target) -> np.ndarray:
    """(D,) where each draw reaches the target, held to the search grid's ends (a draw that
    never gets there counts as reaching it at the far end)."""
    low, high = ensemble.samples_range
    grid = np.geomspace(low / REACH, high * REACH, GRID)
    return np.clip(crossing(grid, ensemble.curve_draws(grid), target), grid[0], grid[-1])


def _weighted_interval(values: np.ndarray, order: np.ndarray, weights: np.ndarray):
    """(low, high) per row of `weights`: the LEVEL percentile interval of the weighted values."""
    cumulative = np.cumsum(weights[:, order], axis=1)
    bottom, top = (t / 100 for t in tails(LEVEL))
    ranked = values[order]
    low = ranked[np.minimum(np.argmax(cumulative >= bottom, axis=1), len(values) - 1)]
    high = ranked[np.minimum(np.argmax(cumulative >= top, axis=1), len(values) - 1)]
    return low, high
