"""Which trials share a Tune trial: short ones, dealt into even packs of the same resources."""

from orchestrator.run.cells import TrialCell, TrialPack
from orchestrator.run.packing import make_packs
from orchestrator.run.plan import estimated_seconds
from orchestrator.sweepfile import parse_spec

GRID = {"objective": ["jepa_good", "ntp"], "model": ["tiny"], "data_size": ["2K", "8K"], "seed": [0, 1, 2]}


def cells_of(raw: dict) -> tuple[list[TrialCell], dict[str, float]]:
    spec = parse_spec(raw, "s.yaml")
    seconds = estimated_seconds(spec, list(spec.trials), {})
    cells = []
    for trial in spec.trials:
        wants = spec.resources_for(trial.model)
        cells.append(TrialCell(trial, wants.cpu, wants.gpu, wants.workers, wants.placement))
    return cells, seconds


def load(pack: TrialPack, seconds: dict[str, float]) -> float:
    return sum(seconds[key] for key in pack.keys)


def test_short_trials_are_dealt_into_one_even_pack_per_slot():
    cells, seconds = cells_of({"name": "s", "grid": GRID})
    packs = make_packs(cells, seconds, lambda cell: 2, below_s=sum(seconds.values()))  # all short
    assert len(packs) == 2 and sorted(k for p in packs for k in p.keys) == sorted(seconds)
    loads = [load(pack, seconds) for pack in packs]
    assert max(loads) - min(loads) <= max(seconds.values())  # dealt to the lightest: even
    for pack in packs:  # each runs its longest trial first
        assert [seconds[k] for k in pack.keys] == sorted((seconds[k] for k in pack.keys), reverse=True)
        assert pack.key.startswith("pack-")
    assert loads == sorted(loads, reverse=True)  # the longest pack starts first


def test_no_pack_is_longer_than_the_threshold_where_more_packs_avoid_it():
    cells, seconds = cells_of({"name": "s", "grid": GRID})
    below = max(seconds.values()) * 1.01  # every trial is short; all of them are 12 long ones
    packs = make_packs(cells, seconds, lambda cell: 1, below_s=below)
    assert len(packs) >= sum(seconds.values()) / below
    assert all(load(pack, seconds) < 2 * below for pack in packs)


def test_long_and_data_parallel_trials_run_alone_and_nothing_packs_at_zero():
    raw = {"name": "s", "grid": GRID | {"model": ["tiny", "small"]}}
    raw["resources"] = {"model": {"small": {"workers": 2}}}
    cells, seconds = cells_of(raw)
    below = max(seconds[c.key] for c in cells if c.config.model == "tiny")  # NTP's 8K trials: not under
    packs = make_packs(cells, seconds, lambda cell: 2, below_s=below)
    alone = {pack.keys[0] for pack in packs if len(pack.cells) == 1}
    assert alone >= {c.key for c in cells if c.workers > 1 or seconds[c.key] >= below}
    packed = [cell for pack in packs if len(pack.cells) > 1 for cell in pack.cells]
    assert packed and all(cell.workers == 1 and seconds[cell.key] < below for cell in packed)
    assert all(len(p.cells) == 1 for p in make_packs(cells, seconds, lambda cell: 2, below_s=0))


def test_a_trial_alone_keeps_its_own_key_and_the_assumed_rate_scales_with_cpus():
    cells, seconds = cells_of({"name": "s", "grid": GRID})
    assert TrialPack((cells[0],)).key == cells[0].key
    four = cells_of({"name": "s", "grid": GRID, "resources": {"cpu": 4}})[1]
    assert four[cells[0].key] == seconds[cells[0].key] / 4
