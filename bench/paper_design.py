"""How often a sweep file's design decides its gap claim, on planted truths at the paper's scale.

The design is read from the sweep file itself: the sizes and seeds each of the gap's two curves
runs, and which of them the fit holds out. Each replicate draws a saturating truth for the
faster objective (`fits.planted.procedure.draw_truth`), slows it for the slower one by a true
41.6x and by a false 10x, measures every trial's final point with seed sd 0.004, fits the laws on
the points the design does not hold out, and judges the claim as `orch check` judges it (the
seed means read every measured size, held-out ones included).

    python bench/paper_design.py sweeps/goodview_vs_ntp_paper.yaml --replicates 30
    python bench/paper_design.py OLD.yaml --claim gap_42x --replicates 30 --workers 2
"""

import argparse
import dataclasses
import functools
import time

import numpy as np

from fits.claims.claim import Claim, Outcome
from fits.claims.verdicts import judge
from fits.curve.curveset import CurveFit, CurveKey, CurveSet
from fits.curve.fit import curve_points
from fits.curve.laws import saturating
from fits.planted.calibration import binomial_se, planted_curve, verdict_rates
from fits.planted.procedure import draw_truth
from orchestrator.sweepfile import Spec, load_spec

SD = 0.004  # the seed sd the issue planted
TRUTHS = {"true 41.6x": 41.6, "false 10x": 10.0}
WRONG = {"true 41.6x": Outcome.CONTRADICTED, "false 10x": Outcome.SUPPORTED}
RIGHT = {"true 41.6x": Outcome.SUPPORTED, "false 10x": Outcome.CONTRADICTED}


@dataclasses.dataclass(frozen=True)
class CurveDesign:
    """One curve of the design: each size's seed count, and the sizes the fit holds out."""

    objective: str
    model: str
    seeds: dict[float, int]
    held_out: frozenset[float]


def curve_design(spec: Spec, objective: str, model: str) -> CurveDesign:
    trials = [t for t in spec.trials if (t.objective, t.model) == (objective, model)]
    seeds: dict[float, int] = {}
    for trial in trials:
        seeds[float(trial.data_size)] = seeds.get(float(trial.data_size), 0) + 1
    held = frozenset(float(t.data_size) for t in trials if spec.is_held_out(t))
    return CurveDesign(objective, model, dict(sorted(seeds.items())), held)


def _measured(rng: np.random.Generator, design: CurveDesign, truth: dict) -> CurveFit:
    """The curve as `orch fit` gives it: laws on the points not held out, every point measured."""
    samples = np.repeat(list(design.seeds), list(design.seeds.values()))
    values = saturating(samples, **truth) + rng.normal(0, SD, samples.size)
    fitted = ~np.isin(samples, list(design.held_out))
    curve = planted_curve(design.objective, curve_points(samples[fitted], values[fitted]))
    key = CurveKey(design.objective, design.model, "mutual_knn@10", "r", "e")
    return dataclasses.replace(curve, key=key, measured=curve_points(samples, values))


def _replicate(claim: Claim, designs: tuple[CurveDesign, CurveDesign], rng: np.random.Generator):
    truth = draw_truth(rng)
    faster = _measured(rng, designs[0], truth)
    judged = []
    for name, factor in TRUTHS.items():
        slowed = dict(truth, b=truth["b"] * factor ** truth["alpha"])
        slower = _measured(rng, designs[1], slowed)
        judged.append((name, judge(claim, CurveSet((faster, slower))).verdict))
    return judged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("sweep")
    parser.add_argument("--claim", default="gap_42x")
    parser.add_argument("--replicates", type=int, default=30)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    spec = load_spec(args.sweep)
    claim = next(c for c in spec.claims if c.id == args.claim)
    model = claim.model or spec.trials[-1].model
    designs = (curve_design(spec, claim.faster, model), curve_design(spec, claim.slower, model))
    for design in designs:
        sizes = ", ".join(
            f"{s:.3g}{' held out' if s in design.held_out else ''} x{n}" for s, n in design.seeds.items()
        )
        print(f"{design.objective}/{design.model}: {sizes}")
    started = time.perf_counter()
    rates = verdict_rates(
        args.replicates, args.seed, args.workers, replicate=functools.partial(_replicate, claim, designs)
    )
    took = time.perf_counter() - started
    print(f"{args.sweep}, claim {claim.id}, {args.replicates} replicates per truth ({took:.0f} s):")
    for truth in TRUTHS:
        right, wrong = rates.share(truth, RIGHT[truth]), rates.share(truth, WRONG[truth])
        print(
            f"  {truth}: decided correctly {right:.1%} +- {binomial_se(right, args.replicates):.1%}, "
            f"wrongly {wrong:.1%} +- {binomial_se(wrong, args.replicates):.1%}, "
            f"inconclusive {rates.share(truth, Outcome.INCONCLUSIVE):.1%}"
        )


if __name__ == "__main__":
    main()
