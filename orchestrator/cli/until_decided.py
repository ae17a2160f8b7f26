"""`orch sweep FILE --until-decided`: the grid, then rounds of `orch next`'s picks until every
claim is decided, the budget is spent, --max-rounds have run or no candidate narrows an open
claim, in one driver and one Ray session.

Each look judges the claims at `fits.next.rounds.look_confidence`: the grid's look and one after
each round share a 5% error rate, so stopping once the verdicts are decided does not make a
wrong one likelier (`bench/loop.py` measures it on planted truths). A round is recorded in the
store (`db.schema.rounds`) before its picks run, with the seeds they run as; a rerun of the same
command after a killed driver runs the recorded round to its end, so no pick is made twice, and
the trials resume from their checkpoints as any sweep's do.
"""

import contextlib
import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from db import RoundRow, Store
from fits.claims.claim import Outcome
from fits.curve.level import percent
from fits.curve.settings import DEFAULT_METRIC
from fits.next.rounds import Stop, look_confidence, round_budget
from foundation.sizes import format_size
from orchestrator.cli.common import say
from orchestrator.cli.judging import claim_runs, sweep_design
from orchestrator.cli.plan_text import interval
from orchestrator.sweepfile import Spec, parse_spec

__all__ = ["Limits", "Loop", "run_until_decided", "with_rounds"]


@dataclass(frozen=True)
class Limits:
    """What the loop may spend: FLOPs for the rounds after the grid (None: no bound), rounds,
    and runs a round."""

    budget: float | None
    max_rounds: int
    batch: int


@dataclass
class Loop:
    """Where the loop ended: its rounds, what they spent, the last look and why it stopped."""

    sweep: str
    confidence: float
    limits: Limits
    rounds: list[RoundRow]
    runs: list[Any]  # the last look's fit runs, their verdicts at `confidence`
    stop: Stop | None = None  # None: interrupted, or a trial failed

    @property
    def spent(self) -> float:
        return sum(r.flops for r in self.rounds)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sweep": self.sweep,
            "stop": None if self.stop is None else self.stop.name.lower(),
            "why": None if self.stop is None else str(self.stop),
            "confidence": self.confidence,
            "budget": self.limits.budget,
            "spent": self.spent,
            "rounds": [
                dataclasses.asdict(r) | {k: json.loads(getattr(r, k) or "null") for k in JSON_FIELDS}
                for r in self.rounds
            ],
            "verdicts": [v.as_dict() for run in self.runs for v in run.verdicts],
        }


JSON_FIELDS = ("runs", "before", "expected", "after")


def run_until_decided(
    spec: Spec, url: str, options: Any, limits: Limits, throughput: Any
) -> tuple[Loop, Any]:
    """The grid, then rounds; (the loop, the last sweep outcome). `options`: the sweep's
    `SweepOptions`; `throughput` prices a GPU's FLOPs for the picks' costs."""
    from orchestrator.data.sources import source_of
    from orchestrator.run.scheduler import ray_session

    source_of(spec.data).check(spec.data, spec.eval)  # bad files: before Ray starts or a store is made
    with ray_session(options) as joined, contextlib.closing(Store.open(url)) as store:
        loop = Loop(spec.name, look_confidence(limits.max_rounds), limits, store.rounds(spec.name), [])
        pending = loop.rounds[-1].round if loop.rounds and loop.rounds[-1].finished is None else None
        if pending is not None:  # a killed or interrupted driver's round: its picks, not new ones
            say(f"round {pending}: running its recorded picks (they resume from their checkpoints)")
        outcome = _land(store, spec, url, joined, loop, pending)
        while not _stopped(outcome):
            picked = _plan(spec, store, loop, throughput)
            if isinstance(picked, Stop):
                loop.stop = picked
                break
            entries, flops, expected = picked
            number = len(loop.rounds) + 1
            before, wanted = _widths(loop.runs), json.dumps(expected)
            store.start_round(
                RoundRow(
                    spec.name,
                    number,
                    json.dumps(entries),
                    flops,
                    limits.budget,
                    loop.confidence,
                    before,
                    wanted,
                    None,
                    time.time(),
                    None,
                )
            )
            loop.rounds = store.rounds(spec.name)
            _say_round(loop, entries, flops, expected)
            outcome = _land(store, spec, url, joined, loop, number)
        return loop, outcome


def _land(store: Store, spec: Spec, url: str, options: Any, loop: Loop, number: int | None) -> Any:
    """Run what the store lacks of the grid and the recorded rounds, then look at the claims and
    record the look as round `number`'s result (None: the grid's); the sweep's outcome."""
    from orchestrator.run.scheduler import run_sweep

    outcome = run_sweep(with_rounds(spec, loop.rounds), url, options)
    if _stopped(outcome):
        return outcome
    loop.runs = _look(store, spec.name, loop.confidence)
    if number is not None:
        store.finish_round(spec.name, number, _widths(loop.runs))
        loop.rounds = store.rounds(spec.name)
    _say_look(loop, f"after round {loop.rounds[-1].round}" if loop.rounds else "after the grid")
    return outcome


def _stopped(outcome: Any) -> bool:
    """An interrupted sweep or a failed trial ends the loop (a rerun continues it)."""
    from db import TrialStatus

    return outcome.interrupted or outcome.counts.get(TrialStatus.FAILED, 0) > 0


def with_rounds(spec: Spec, rounds: list[RoundRow]) -> Spec:
    """The sweep file with every round's runs in its include, read as a sweep file (the store
    records it as the sweep's text: `orch next` and `orch check` see the picks)."""
    from orchestrator.sweepfile.rewrite import with_include

    if not rounds:
        return spec
    entries = [entry for r in rounds for entry in json.loads(r.runs)]
    text = with_include(spec.name, spec.text, spec.source, entries)
    base = Path(spec.source).resolve().parent
    return parse_spec(yaml.safe_load(text), spec.source, text=text, base_dir=base)


def _look(store: Store, sweep: str, confidence: float) -> list[Any]:
    """The claims judged on what the store holds now, each at `confidence` (the fits are
    `orch check`'s; only the interval's level differs)."""
    from fits.claims.verdicts import judge

    design, claims = sweep_design(store, sweep, DEFAULT_METRIC)
    checked = claim_runs(store, sweep, design, claims, command="sweep", detail=False, next_runs=False)
    return [
        dataclasses.replace(
            run, verdicts=tuple(judge(v.claim, run.curves, design.testbed, confidence) for v in run.verdicts)
        )
        for run in checked.runs
    ]


def _widths(runs: list[Any]) -> str:
    """Each claim's verdict, interval and width (JSON): what a round row holds of a look."""
    from fits.next.plan import interval_width

    found = {}
    for v in (v for run in runs for v in run.verdicts):
        low, high = v.interval if v.interval is not None else (None, None)
        found[v.claim.id] = {
            "verdict": v.verdict.value,
            "low": low,
            "high": high,
            "width": interval_width(v.claim, v.interval),
        }
    return json.dumps(found)


def _plan(
    spec: Spec, store: Store, loop: Loop, throughput: Any
) -> Stop | tuple[list[dict[str, Any]], float, dict[str, float]]:
    """The next round's picks as include entries, their FLOPs and each planned claim's expected
    width; or why the loop stops."""
    from fits.next.plan import candidate_cells
    from orchestrator.cli.judging import open_claims
    from orchestrator.cli.plan_costs import corpus_in, costs_of
    from orchestrator.sweepfile.rewrite import fresh_entries

    chosen, _ = open_claims(loop.runs, ())
    if not chosen:
        still_open = [v for run in loop.runs for v in run.verdicts if v.verdict is Outcome.INCONCLUSIVE]
        return Stop.UNPLANNED if still_open else Stop.DECIDED
    if len(loop.rounds) >= loop.limits.max_rounds:
        return Stop.ROUNDS
    current = with_rounds(spec, loop.rounds)
    costs = costs_of(current, throughput, None, chosen)
    sizes = sweep_design(store, spec.name, DEFAULT_METRIC)[0].grid.get("data_size", ())
    candidates = [
        (run, claims, candidate_cells(run.curves, claims, sizes, corpus_in(current), costs.per_sample))
        for run, claims in chosen
    ]
    left = None if loop.limits.budget is None else loop.limits.budget - loop.spent
    cheapest = min((c.flops for *_, cells in candidates for c in cells), default=None)
    if cheapest is None or (left is not None and cheapest > left):
        return Stop.BUDGET if cheapest is not None else Stop.NOTHING
    done = len(loop.rounds)
    share = None if left is None else max(round_budget(left, loop.limits.max_rounds - done), cheapest)
    picks, expected = _buy(candidates, share, loop.limits.batch, done)
    # a round whose share buys nothing (a claim's first needs, say) may spend all that is left
    if not picks and share is not None and share < left:
        picks, expected = _buy(candidates, left, loop.limits.batch, done)
    if not picks:  # the budget, where an unbounded plan would buy something
        unbounded_buys = left is not None and _buy(candidates, None, loop.limits.batch, done)[0]
        return Stop.BUDGET if unbounded_buys else Stop.NOTHING
    entries = fresh_entries(spec.name, current.text, spec.source, picks)
    return entries, float(sum(c.flops for c in picks)), expected


def _buy(
    candidates: list[tuple[Any, list, list]], budget: float | None, batch: int, seed: int
) -> tuple[list[Any], dict[str, float]]:
    """orch next's picks for each fit run's open claims within `budget` FLOPs (shared, in
    order) and `batch` runs each, and each claim's expected width after them."""
    from fits.next.plan import plan_runs

    picks, expected = [], {}
    for run, claims, cells in candidates:
        plan = plan_runs(claims, run.curves, run.options, run.verdicts, cells, budget, batch, seed)
        bought = [*plan.first, *(p.cell for p in plan.picks)]
        picks += bought
        outlooks = plan.picks[-1].outlooks if plan.picks else plan.now
        expected |= {claim_id: plan.expected(claim_id, o) for claim_id, o in outlooks.items()}
        if budget is not None:
            budget -= sum(c.flops for c in bought)
    return picks, expected


def _say_look(loop: Loop, when: str) -> None:
    for v in (v for run in loop.runs for v in run.verdicts):
        say(f"{when}: {v.claim.id} {v.verdict.value} {interval(v)}")


def _say_round(loop: Loop, entries: list[dict[str, Any]], flops: float, expected: dict[str, float]) -> None:
    runs = ", ".join(f"{e['objective']} {format_size(e['data_size'])} seed {e['seed']}" for e in entries)
    budget = "" if loop.limits.budget is None else f" of {loop.limits.budget:.3g}"
    say(
        f"round {loop.rounds[-1].round} of at most {loop.limits.max_rounds}: {len(entries)} runs, "
        f"{flops:.3g} FLOPs ({loop.spent:.3g}{budget} spent): {runs}"
    )
    for claim_id, width in expected.items():
        say(f"  {claim_id}: expected width after it {width:.3g}")


def loop_text(loop: Loop) -> str:
    """The verdicts at the loop's confidence, then why the loop stopped (`orch check` gives the
    fits behind them)."""
    from fits.report.claims import claims_table
    from orchestrator.cli.run_text import verdicts_text

    tables = [
        verdicts_text(
            claims_table(
                run.verdicts, f"Claims ({run.options.metric})", run.earlier_verdicts, loop.confidence
            )
        )
        for run in loop.runs
    ]
    budget = "no budget" if loop.limits.budget is None else f"a budget of {loop.limits.budget:.3g} FLOPs"
    ending = (
        f"stopped: {loop.stop} after {len(loop.rounds)} round(s), {loop.spent:.3g} FLOPs spent "
        f"({budget}); each look judged at {percent(loop.confidence)}, so that the grid's look and one after "
        f"each of at most {loop.limits.max_rounds} rounds share a 5% error rate"
    )
    return "\n\n".join([*tables, ending])
