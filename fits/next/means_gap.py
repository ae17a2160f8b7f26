"""A gap as the verdict reads it where the laws' gap is withheld: from the seed means
(`fits.curve.measured_gap`). ln R = ln S_B - ln N_A*, where N_A* is where A's means, joined
log-linearly, reach B's mean at S_B (the claim's `at`). Three means carry it: B's at S_B and A's
at the two measured sizes either side of the crossing. Its width is the delta method's on their
standard errors, widened by Student's t on the fewest seed dof; a run adds seeds to the means it
covers, each mean moves by its preposterior spread, and a run elsewhere changes nothing: a
size the means do not read cannot narrow this verdict.
"""

import numpy as np

from fits.claims.claim import Claim
from fits.claims.common import SIZE_PRECISION
from fits.curve.curveset import CurveFit, Unfitted
from fits.curve.level import LEVEL, quantile
from fits.next.outlook import OUTCOMES, Cell, Landed, Outlook

__all__ = ["MeansGapBelief", "bracket"]


def bracket(samples: np.ndarray, means: np.ndarray, target: float) -> int | None:
    """The index j of the first measured size whose mean reaches `target`, with j - 1 below it:
    the two sizes A's crossing lies between (None: the means start above it or never reach it)."""
    reached = np.flatnonzero(means >= target)
    if not len(reached) or reached[0] == 0:
        return None
    return int(reached[0])


class MeansGapBelief:
    """The seed means' gap of `claim` (`at` given, measured for B; A's means cross B's level
    there) and what more seeds would do to its interval. `scale`: B's FLOPs per sample over A's,
    for a gap in FLOPs (1 in samples)."""

    def __init__(
        self,
        claim: Claim,
        a: CurveFit | Unfitted,
        b: CurveFit | Unfitted,
        every_checkpoint: bool,
        seed: int,
        scale: float = 1.0,
    ):
        self.claim, self.notes, self.every_checkpoint, self.scale = claim, [], every_checkpoint, scale
        pa, pb = a.seen, b.seen
        at = np.flatnonzero(np.isclose(pb.samples, claim.at, rtol=SIZE_PRECISION))[0]
        j = bracket(pa.samples, pa.mean, float(pb.mean[at]))
        # (objective, model, samples) of the three means the gap reads
        self.points = [(claim.slower, b.key.model, float(pb.samples[at]))] + [
            (claim.faster, a.key.model, float(pa.samples[i])) for i in (j - 1, j)
        ]
        self.means = np.array([pb.mean[at], pa.mean[j - 1], pa.mean[j]])
        self.counts = np.array([pb.seeds[at], pa.seeds[j - 1], pa.seeds[j]], dtype=float)
        self.sds = np.array([_seed_sd(pb, at), _seed_sd(pa, j - 1), _seed_sd(pa, j)])
        self.dof = min(pa.pooled_df, pb.pooled_df)
        self.z = np.random.default_rng(seed).standard_normal((OUTCOMES, 3))

    def nothing(self) -> Landed:
        return Landed()

    def land(self, prior: Landed, cell: Cell) -> Landed:
        return Landed((*prior.cells, cell))

    def _added(self, cells: tuple[Cell, ...]) -> np.ndarray:
        """(3,) the seeds the cells add to each mean the gap reads."""
        added = np.zeros(3)
        for cell in cells:
            for index, (objective, model, samples) in enumerate(self.points):
                if (cell.objective, cell.model) != (objective, model):
                    continue
                covers = (
                    cell.samples >= samples * (1 - SIZE_PRECISION)
                    if self.every_checkpoint
                    else (np.isclose(cell.samples, samples, rtol=SIZE_PRECISION))
                )
                added[index] += cell.seeds * covers
        return added

    def outlook(self, landed: Landed) -> Outlook:
        added = self._added(landed.cells)
        before, after = self.sds**2 / self.counts, self.sds**2 / (self.counts + added)
        means = self.means + np.sqrt(np.maximum(before - after, 0.0)) * self.z  # (OUTCOMES, 3)
        target, low_mean, high_mean = means.T
        span = np.maximum(high_mean - low_mean, 1e-12)
        logs = np.log(self.points[2][2] / self.points[1][2])
        where = np.clip((target - low_mean) / span, 0.0, 1.0)
        log_ratio = np.log(self.points[0][2] / self.points[1][2]) - where * logs + np.log(self.scale)
        gradients = logs * np.stack(
            [1 / span, (target - high_mean) / span**2, -(target - low_mean) / span**2]
        )
        spread = np.sqrt((gradients**2 * after[:, None]).sum(axis=0))
        half = quantile(LEVEL, int(self.dof + added.max())) * spread
        low, high = np.exp(log_ratio - half), np.exp(log_ratio + half)
        region = self.claim.region
        decided = [region.holds(lo, hi) or region.misses(lo, hi) for lo, hi in zip(low, high, strict=True)]
        return Outlook(float(np.mean(2 * half)), float(np.mean(decided)))


def _seed_sd(points, index: int) -> float:
    """A seed's sd at a point: its own scatter where it has seeds enough, else the pooled one."""
    return float(points.sigma[index] * np.sqrt(points.seeds[index]))
