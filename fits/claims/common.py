"""What every kind's judge shares: the claim's curve (with a law, or only its measured points),
a measured point with its standard error, the words of a verdict with no estimate and of a curve
that is missing, and the precision a size is written to."""

from dataclasses import dataclass

import numpy as np

from fits.claims.claim import Claim, Outcome, Verdict
from fits.curve.curveset import CurveFit, CurveSet, Unfitted
from foundation.errors import did_you_mean
from foundation.sizes import format_size

__all__ = [
    "NO_ESTIMATE",
    "SIZE_PRECISION",
    "Measured",
    "claim_curve",
    "measured_at",
    "measured_curve",
    "missing_curve",
    "no_estimate",
]

NO_ESTIMATE = "no estimate"  # the basis of a verdict with no value and no interval
SIZE_PRECISION = 0.005  # `at: 24.6K` names the checkpoint at 24,576 samples: sizes are written to 3 digits


def claim_curve(curves: CurveSet, claim: Claim, objective: str) -> CurveFit | None:
    """The claim's fitted curve of `objective`: its model, reference and eval set, each where given."""
    return curves.find(objective, claim.model, claim.reference, claim.eval_set)


def measured_curve(curves: CurveSet, claim: Claim, objective: str) -> CurveFit | Unfitted | None:
    """The claim's curve of `objective` as measured, with a law or without."""
    return curves.find_measured(objective, claim.model, claim.reference, claim.eval_set)


@dataclass(frozen=True)
class Measured:
    """A curve's seed mean at a measured size, with its standard error where something measures
    one (`dof` None: a given SE, taken as known)."""

    name: str  # objective/model, as a run is named
    samples: float
    mean: float
    seeds: int
    se: float | None
    dof: int | None
    source: str  # what the SE comes from, or why there is none

    @property
    def second_seed(self) -> str:
        """The run that would give this point a noise estimate."""
        return f"a second seed of {self.name} at {format_size(self.samples)}"


def measured_at(curve: CurveFit | Unfitted, samples: float) -> Measured | None:
    """The curve's measured point at `samples` (to 3 digits), or None where it was not measured."""
    points = curve.seen
    hit = np.flatnonzero(np.isclose(points.samples, samples, rtol=SIZE_PRECISION))
    if not hit.size:
        return None
    i = int(hit[0])
    name = f"{curve.key.objective}/{curve.key.model}"
    noise = points.se(i)
    se, dof, source = noise if noise else (None, None, "one seed and no SE given")
    return Measured(
        name, float(points.samples[i]), float(points.mean[i]), int(points.seeds[i]), se, dof, source
    )


def no_estimate(
    claim: Claim,
    why: list[str],
    missing: list[str],
    caveats: tuple[str, ...] = (),
    flags: tuple[str, ...] = (),
) -> Verdict:
    """An inconclusive verdict with no value and no interval, saying why and what would settle it."""
    return Verdict(claim, Outcome.INCONCLUSIVE, None, None, NO_ESTIMATE, why, caveats, missing, flags)


def missing_curve(claim: Claim, objective: str, curves: CurveSet) -> Verdict:
    """Inconclusive: the claim's curve of `objective` has no law, or was not measured as the
    claim asks (which of its model, reference and eval set the sweep lacks, and what it has)."""
    measured = measured_curve(curves, claim, objective)
    if measured is not None:
        why = f"no law was fitted for {objective}/{measured.key.model} ({measured.why})"
        more = f"more sizes of {objective}/{measured.key.model}: a law needs more points than parameters"
        return no_estimate(claim, [why], [more])
    return no_estimate(
        claim, [_not_measured(claim, objective, curves)], [f"runs of {objective} as the claim states them"]
    )


def _not_measured(claim: Claim, objective: str, curves: CurveSet) -> str:
    """Which of the claim's choices no curve of `objective` was measured with."""
    every = [c.key for c in (*curves.curves, *curves.unfitted)]
    mine = [key for key in every if key.objective == objective]
    if not mine:
        return f"not measured: objective {objective}"
    for field in ("model", "reference", "eval_set"):
        wanted = getattr(claim, field)
        have = sorted({getattr(key, field) for key in mine})
        if wanted is not None and wanted not in have:
            what = field.replace("_", " ")
            hint = did_you_mean(wanted, have)
            return f"not measured: {what} {wanted} of {objective}{hint} (measured: {', '.join(have)})"
        mine = [key for key in mine if wanted is None or getattr(key, field) == wanted]
    return f"not measured: {objective} as the claim states it"
