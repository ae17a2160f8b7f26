"""An order (the smallest difference of seed means over the sizes both measured) or a measured
level (one seed mean), planned on its seed means: a run adds k seeds at every measured size it
covers; the standard errors shrink, and each mean moves by its preposterior spread."""

import numpy as np

from fits.claims.claim import Claim
from fits.claims.common import SIZE_PRECISION
from fits.claims.order import order_quantiles
from fits.curve.level import LEVEL
from fits.next.outlook import KNOWN, OUTCOMES, Cell, Landed, Outlook

__all__ = ["MeansBelief"]


class MeansBelief:
    """An order (the smallest difference of seed means over the sizes both measured) or a
    measured level (one seed mean), and what more seeds would do to its interval."""

    def __init__(self, claim: Claim, curves: list, every_checkpoint: bool, seed: int):
        self.claim, self.notes = claim, []
        self.every_checkpoint = every_checkpoint
        seen = [c.seen for c in curves]
        if claim.at is not None:  # a level, a difference or an order at one size
            index = [np.flatnonzero(np.isclose(p.samples, claim.at, rtol=SIZE_PRECISION))[:1] for p in seen]
            sizes = seen[0].samples[index[0]]
        else:  # an order: the sizes both measured
            sizes, i, j = np.intersect1d(seen[0].samples, seen[1].samples, return_indices=True)
            index = [i, j]
        self.curves = [(c.key.objective, c.key.model) for c in curves]
        self.sizes = sizes
        self.means = [p.mean[ix] for p, ix in zip(seen, index, strict=True)]
        self.counts = [p.seeds[ix].astype(float) for p, ix in zip(seen, index, strict=True)]
        # a seed's sd: from the seed scatter, or a one-seed point's given SE (taken as known)
        self.sds = [
            p.sigma[ix] * np.sqrt(p.seeds[ix]) if p.pooled_df > 0 else p.given_se[ix]
            for p, ix in zip(seen, index, strict=True)
        ]
        self.dof = [p.pooled_df if p.pooled_df > 0 else KNOWN for p in seen]
        self.z = np.random.default_rng(seed).standard_normal((OUTCOMES, len(curves), len(sizes)))

    def _covers(self, cell: Cell) -> np.ndarray:
        """The measured sizes a new run adds a seed to: every checkpoint up to its size, or its size."""
        if self.every_checkpoint:
            return self.sizes <= cell.samples * (1 + SIZE_PRECISION)
        return np.isclose(self.sizes, cell.samples, rtol=SIZE_PRECISION)

    def nothing(self) -> Landed:
        """No run landed yet."""
        return Landed()

    def land(self, prior: Landed, cell: Cell) -> Landed:
        """`prior` with one more run landed."""
        return Landed((*prior.cells, cell))

    def outlook(self, landed: Landed) -> Outlook:
        added = [np.zeros(len(self.sizes)) for _ in self.curves]
        for cell in landed.cells:
            for term, curve in enumerate(self.curves):
                if (cell.objective, cell.model) == curve:
                    added[term] += cell.seeds * self._covers(cell)
        outcome = np.zeros((OUTCOMES, len(self.sizes)))
        variance = np.zeros(len(self.sizes))
        dof = min(d + int(a.max()) for d, a in zip(self.dof, added, strict=True))
        for term, sign in zip(range(len(self.curves)), (1.0, -1.0), strict=False):
            before = self.sds[term] ** 2 / self.counts[term]
            after = self.sds[term] ** 2 / (self.counts[term] + added[term])
            moved = np.sqrt(np.maximum(before - after, 0.0))
            outcome += sign * (self.means[term] + moved * self.z[:, term, :])
            variance += after
        below, above = order_quantiles(LEVEL, dof, len(self.sizes))  # as the verdict reads them
        low = (outcome - below * np.sqrt(variance)).min(axis=1)
        high = (outcome + above * np.sqrt(variance)).min(axis=1)
        region = self.claim.region
        decided = [region.holds(lo, hi) or region.misses(lo, hi) for lo, hi in zip(low, high, strict=True)]
        return Outlook(float(np.mean(high - low)), float(np.mean(decided)))
