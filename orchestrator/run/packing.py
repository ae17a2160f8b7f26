"""Short trials, packed: trials estimated to take under `PACK_BELOW_S` on their resources share one
Tune trial and one process, run one after another (`run.trainable`), so that each does not pay a
Tune trial's start of its own (an actor, its imports and data, Tune's bookkeeping). A grid of
many small trials is what a pilot sweep looks like.

Every guarantee stays the trial's own: its key, status, attempts, checkpoint folder and rows.
A trial that fails inside a pack is retried there alone, from its checkpoint, and the pack goes on
to the next trial; a pack whose process dies is retried as a Tune trial, and its finished trials
only re-report their rows from their checkpoints.

Short trials that ask for the same resources are dealt out longest first, each to the pack with
the least estimated time so far, so the packs come out even: one pack per slot the sweep has for
them, or more where fewer would make a pack longer than `PACK_BELOW_S`. Data-parallel trials and
longer trials run as packs of one.
"""

import math
from collections.abc import Callable

from orchestrator.run.cells import TrialCell, TrialPack
from orchestrator.run.plan import estimated_seconds
from orchestrator.sweepfile import Spec, TrialConfig

__all__ = ["PACK_BELOW_S", "make_packs", "pack_numbers", "sweep_packs"]

PACK_BELOW_S = 60.0  # `orch sweep --pack-below`: a trial estimated under this many seconds is packed


def sweep_packs(
    spec: Spec,
    trials: list[TrialConfig],
    rates: dict[str, float],
    cluster: dict[str, float],
    max_concurrent: int | None,
    below_s: float,
) -> list[TrialPack]:
    """The Tune trials a sweep runs `trials` as: each trial's time estimated from its objective's
    training `rates` (`estimated_seconds`), on the slots `cluster` (Ray's resource totals: "CPU",
    "GPU") holds for it, at most `max_concurrent`. What `orch sweep` runs, and its dry run shows."""
    seconds = estimated_seconds(spec, trials, rates)
    cells = [TrialCell.of(trial, spec.resources_for(trial.model)) for trial in trials]
    return make_packs(cells, seconds, _slots_within(cluster, max_concurrent), below_s)


def _slots_within(cluster: dict[str, float], max_concurrent: int | None) -> Callable[[TrialCell], int]:
    """How many trials asking what a cell asks run at once: what `cluster` holds of them, at most
    `max_concurrent`."""

    def slots(cell: TrialCell) -> int:
        asks = (("CPU", cell.cpu), ("GPU", cell.gpu))
        held = [cluster.get(kind, 0) / asked for kind, asked in asks if asked]
        fits = int(min(held)) if held else 1
        return max(1, min(fits, max_concurrent or fits))

    return slots


def pack_numbers(packs: list[TrialPack]) -> dict[str, int]:
    """Trial key -> its pack's number in start order (1, 2, ...), for the trials that share one."""
    shared = [pack for pack in packs if len(pack.cells) > 1]
    return {key: number for number, pack in enumerate(shared, start=1) for key in pack.keys}


def make_packs(
    cells: list[TrialCell], seconds: dict[str, float], slots: Callable[[TrialCell], int], below_s: float
) -> list[TrialPack]:
    """The Tune trials that run `cells`, longest first by their estimated `seconds` (by trial
    key): trials under `below_s` dealt into packs, `slots(cell)` of them at least for trials that
    ask what `cell` asks (0 packs nothing); every other trial alone."""
    packs, short = [], {}
    for cell in cells:
        if cell.workers == 1 and seconds[cell.key] < below_s:
            short.setdefault((cell.cpu, cell.gpu), []).append(cell)
        else:
            packs.append(TrialPack((cell,)))
    for group in short.values():
        total = sum(seconds[cell.key] for cell in group)
        count = min(len(group), max(slots(group[0]), math.ceil(total / below_s)))
        packs += _dealt(group, seconds, count)
    return sorted(packs, key=lambda pack: _pack_seconds(pack, seconds), reverse=True)


def _dealt(cells: list[TrialCell], seconds: dict[str, float], count: int) -> list[TrialPack]:
    """`cells` in `count` packs, longest first, each to the pack with the least time so far."""
    members: list[list[TrialCell]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for cell in sorted(cells, key=lambda cell: seconds[cell.key], reverse=True):
        lightest = loads.index(min(loads))
        members[lightest].append(cell)
        loads[lightest] += seconds[cell.key]
    return [TrialPack(tuple(pack)) for pack in members]


def _pack_seconds(pack: TrialPack, seconds: dict[str, float]) -> float:
    return sum(seconds[key] for key in pack.keys)
