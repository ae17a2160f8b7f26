"""The planner (`fits.next.plan`, `fits.next.beliefs`) on planted curves: the seed noise it models, the
interval it starts from, picks that stay within the budget and narrow the claim, the same
plan for the same seed."""

import itertools

import numpy as np
import pytest

from fits.claims.claim import Claim, Region
from fits.claims.verdicts import judge
from fits.curve.fit import curve_points
from fits.curve.laws import saturating
from fits.curve.settings import FitSettings
from fits.next.beliefs import belief_of
from fits.next.outlook import Cell
from fits.next.plan import plan_runs
from fits.next.seed_noise import seed_noise
from fits.planted.calibration import CLAIMS, planted_curve, planted_run
from fits.planted.procedure import SIZES, draw_truth, simulate

TRUTH = {"a_inf": 0.2, "b": 0.05, "alpha": 0.4}


def slowed(truth: dict, factor: float) -> dict:
    return dict(truth, b=truth["b"] * factor ** truth["alpha"])


@pytest.fixture(scope="module")
def gap_run():
    """A and B (A slowed 10x) at 5 sizes x 2 seeds: a gap the claim '42x within x2' cannot
    settle yet."""
    rng = np.random.default_rng(3)
    a = planted_curve("A", simulate(rng, TRUTH, sizes=SIZES[:5], seeds=2))
    b = planted_curve("B", simulate(rng, slowed(TRUTH, 10), sizes=SIZES[:5], seeds=2))
    return planted_run(a, b)


SETTINGS = FitSettings()


def after(belief, *cells: Cell):
    """The belief's outlook once `cells` have landed, one after another."""
    landed = belief.nothing()
    for cell in cells:
        landed = belief.land(landed, cell)
    return belief.outlook(landed)


def plan_for(curves, claims, *args, **kwargs):
    return plan_runs(claims, curves, SETTINGS, (), *args, **kwargs)


def cells() -> list[Cell]:
    return [Cell(o, "m", float(s), k, float(s) * k) for o in "AB" for s in SIZES[:7] for k in (1, 2)]


def test_seed_noise_is_pooled_from_replicates_and_follows_s_where_it_changes():
    rng = np.random.default_rng(0)
    flat = planted_curve("A", simulate(rng, TRUTH, seeds=4))
    assert seed_noise([flat]).slope == pytest.approx(0.0, abs=0.25)
    assert seed_noise([flat]).sd(1e6) == pytest.approx(0.005, rel=0.3)
    samples = np.repeat(SIZES, 4)
    growing = saturating(samples, **TRUTH) + rng.normal(0, 0.002 * (samples / SIZES[0]) ** 0.3)
    noise = seed_noise([planted_curve("A", curve_points(samples, growing))])
    assert 0.15 < noise.slope < 0.45
    one_seed = planted_curve("A", simulate(rng, TRUTH, seeds=1))
    assert "residual" in seed_noise([one_seed]).source


def test_an_order_claim_starts_from_its_verdict_interval_and_more_seeds_narrow_it(gap_run):
    claim = CLAIMS["order_true"]
    verdict = judge(claim, gap_run)
    belief = belief_of(claim, gap_run, SETTINGS)
    assert after(belief).width == pytest.approx(verdict.interval[1] - verdict.interval[0], rel=1e-9)
    a, b = gap_run.curves
    worst = float(a.points.samples[np.argmin(a.points.mean - b.points.mean)])
    elsewhere = float(a.points.samples[np.argmax(a.points.mean - b.points.mean)])
    assert after(belief, Cell("B", "m", worst, 3, 1.0)).width < after(belief).width
    assert after(belief, Cell("B", "m", elsewhere, 3, 1.0)).width == after(belief).width


def test_picks_stay_within_the_budget_narrow_the_gap_and_repeat_for_a_seed(gap_run):
    budget = 2 * float(SIZES[:5].sum())
    plan = plan_for(gap_run, [CLAIMS["gap"]], cells(), budget=budget, seed=1)
    assert plan.picks and plan.flops <= budget
    widths = [plan.now["gap"].width] + [p.outlooks["gap"].width for p in plan.picks]
    assert all(later < earlier for earlier, later in itertools.pairwise(widths))
    again = plan_for(gap_run, [CLAIMS["gap"]], cells(), budget=budget, seed=1)
    assert [p.cell for p in again.picks] == [p.cell for p in plan.picks]
    assert len(plan.ranked) == len(cells()) and plan.ranked[0].gain >= plan.ranked[-1].gain


def test_a_run_count_is_filled_with_the_runs_that_narrow_most():
    rng = np.random.default_rng(5)
    truth = draw_truth(rng)
    a = planted_curve("A", simulate(rng, truth, sizes=SIZES[:6], seeds=2))
    b = planted_curve("B", simulate(rng, slowed(truth, 42), sizes=SIZES[:6], seeds=2))
    claim = Claim("gap", "gap", "", "test", Region(21, 84), faster="A", slower="B")
    plan = plan_for(planted_run(a, b), [claim], cells(), runs=4)
    assert sum(p.cell.seeds for p in plan.picks) <= 4
    assert plan.picks[-1].outlooks["gap"].width < plan.now["gap"].width
    assert 0.0 <= plan.picks[-1].outlooks["gap"].decided <= 1.0
    assert plan.picks[-1].outlooks["gap"].identifiable is not None


def test_with_both_limits_each_pick_narrows_most_per_share_of_the_scarcer_limit(gap_run):
    budget, runs = 4 * float(SIZES[4]), 4
    plan = plan_for(gap_run, [CLAIMS["gap"]], cells(), budget=budget, runs=runs, seed=1)
    assert plan.picks and plan.flops <= budget and sum(p.cell.seeds for p in plan.picks) <= runs

    def share(cell: Cell) -> float:
        return max(cell.flops / budget, cell.seeds / runs)

    alone = {p.cell: p.narrowing / share(p.cell) for p in plan.ranked}
    assert plan.picks[0].cell == max(alone, key=alone.get)
    assert all(p.gain == pytest.approx(p.narrowing / share(p.cell)) for p in plan.picks)


def test_a_gaps_outlook_starts_near_its_verdicts_interval_with_the_t_of_each_curves_seed_dof(gap_run):
    # The verdict's draws are Student's t on each curve's seed dof (its seed scatter's and its
    # heaviest law's residuals'); without that t the planner started 20% narrower than the
    # verdict it plans for.
    claim = CLAIMS["gap"]
    low, high = judge(claim, gap_run).interval
    belief = belief_of(claim, gap_run, SETTINGS)
    assert after(belief).width == pytest.approx(np.log(high / low), rel=0.12)
    dof = {c.key.objective: c.ensemble.dof for c in gap_run.curves}
    assert all(d > c.points.pooled_df for d, c in zip(dof.values(), gap_run.curves, strict=True))
    # the noise pools seeds and residuals: every new run adds a dof, at a measured size or a new one
    known = float(gap_run.curves[0].points.samples[2])
    picks = [Cell("A", "m", known, 1, 1.0), Cell("B", "m", float(SIZES[7]), 2, 1.0)]
    dof_after = belief._dof_after([*picks, Cell("B", "m", float(SIZES[6]), 1, 1.0)])
    assert dof_after == {"A": dof["A"] + 1, "B": dof["B"] + 3}
