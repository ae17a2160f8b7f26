"""Real tiny training runs: every objective reports at every checkpoint, runs are deterministic,
a resumed run equals an uninterrupted one, and a planted collapse is flagged."""

import math
import shutil

import numpy as np
import pytest
import torch

from orchestrator.sweepfile import parse_spec
from orchestrator.sweepfile.catalog import PRESETS, estimate_params, objective_of
from orchestrator.sweepfile.config import checkpoint_schedule
from orchestrator.training.checkpoint import CheckpointError, SavedCheckpoint
from orchestrator.training.collapse import detect_collapse, relative_spread
from orchestrator.training.encoders import TextEncoder
from orchestrator.training.loop import get_lr, run_trial
from orchestrator.training.objectives import sigreg
from tests.datasets import file_dataset


def trial(objective="jepa_good", size="2K", train=None, metrics=("mutual_knn@10",), seed=0):
    raw = {
        "name": "t",
        "grid": {"objective": [objective], "model": ["tiny"], "data_size": [size], "seed": [seed]},
        "train": train or {},
        "eval": {"metrics": list(metrics), "checkpoints": "log2"},
    }
    return parse_spec(raw, "t.yaml").trials[0]


def run(config, resume=None):
    reports = []
    outcome = run_trial(config, reports.append, resume=resume)
    return outcome, reports


def test_sigreg_is_about_one_for_gaussians_and_041n_when_collapsed():
    generator = torch.Generator().manual_seed(0)
    gaussian = torch.randn(512, 32, generator=generator)
    assert 0.7 < float(sigreg(gaussian, 256, generator)) < 1.3
    collapsed = torch.zeros(512, 32)
    assert float(sigreg(collapsed, 256, generator)) / 512 == pytest.approx(0.41, abs=0.015)


def test_schedule_and_learning_rate():
    assert checkpoint_schedule(4000, 1024, 1) == [0, 1024, 2048, 4000]
    assert checkpoint_schedule(4096, 1024, 2) == [0, 1024, 1448, 2048, 2896, 4096]
    assert get_lr(0, 100, 1.0, 0.1, "cosine") == pytest.approx(0.1)
    assert get_lr(9, 100, 1.0, 0.1, "cosine") == pytest.approx(1.0)
    assert get_lr(99, 100, 1.0, 0.1, "cosine") == pytest.approx(0.1, abs=0.01)
    assert get_lr(50, 100, 1.0, 0.1, "constant") == 1.0


@pytest.mark.parametrize("objective", ["jepa_good", "jepa_bad", "ntp"])
def test_parameter_count_matches_estimate(objective):
    module = TextEncoder(PRESETS["tiny"], vocab_size=436, max_len=64, causal=objective_of(objective).causal)
    assert module.n_params == estimate_params(PRESETS["tiny"], 436, 64, objective)
    assert module.n_params < 1_000_000


@pytest.mark.parametrize("objective", ["jepa_good", "jepa_bad", "ntp"])
def test_each_objective_trains_and_reports_every_checkpoint(objective):
    config = trial(objective, metrics=("mutual_knn@10", "cka"))
    outcome, reports = run(config)
    assert outcome.status == "done"
    assert [r.report.samples_seen for r in reports] == [0, 1024, 2000]
    last = reports[-1].report
    assert last.status == "done" and last.n_params > 0
    metrics = {(row.metric, row.reference) for row in last.rows}
    for reference in ("render_cnn", "factor_mlp"):
        assert {
            ("mutual_knn@10", reference),
            ("cka", reference),
            ("mutual_knn@10/layer1", reference),
        } <= metrics
    assert ("train_loss", "") in metrics
    assert all(row.trial_key == config.key for row in last.rows)
    assert all(row.flops > 0 and row.step == math.ceil(2000 / 32) for row in last.rows)
    knn = [row.value for row in last.rows if row.metric == "mutual_knn@10"]
    assert all(0 <= value <= 1 for value in knn)


def values(checkpoint):
    return sorted((row.metric, row.reference, row.value) for row in checkpoint.report.rows)


def test_training_is_deterministic_for_a_seed():
    config = trial("jepa_good", size="1K")  # two checkpoints: random init and one trained
    _, first = run(config)
    _, second = run(config)
    assert [values(c) for c in first] == [values(c) for c in second]
    _, other_seed = run(trial("jepa_good", size="1K", seed=1))
    assert values(other_seed[-1]) != values(first[-1])


def test_resume_from_a_saved_checkpoint_equals_an_uninterrupted_run(tmp_path):
    config = trial("jepa_good")
    outcome, full = run(config)
    middle = full[1]  # the 1024-sample checkpoint
    middle.save(tmp_path / "ckpt")
    loaded = SavedCheckpoint.load(tmp_path / "ckpt", config.key)
    assert loaded.state.samples_seen == 1024 and loaded.history == middle.history
    resumed_outcome, resumed = run(config, resume=loaded)
    assert [r.report.samples_seen for r in resumed] == [2000]
    assert values(resumed[0]) == values(full[-1])

    # every row the trial reported, across the resume, travels with its last checkpoint
    def rows(history):  # a row's wall time is the clock's, not the trial's
        return [(r.samples_seen, r.metric, r.reference, r.value, r.se) for r in history]

    assert rows(resumed_outcome.last.history) == rows(outcome.last.history) == rows(full[-1].history)
    assert len(full[-1].history) == sum(len(c.report.rows) for c in full)


def test_planted_collapse_is_flagged_and_healthy_run_is_not():
    collapsing = trial(
        "jepa_good", size="4K", train={"sigreg": {"weight": 0.0}, "lr": 0.01, "grad_clip": None}
    )
    outcome, reports = run(collapsing)
    assert outcome.status == "collapsed"
    assert outcome.reason.startswith("relative embedding spread")
    assert reports[-1].report.status == "collapsed"
    healthy, _ = run(trial("jepa_good", size="4K"))
    assert healthy.status == "done" and healthy.reason is None


def test_detect_collapse_cases():
    rng = np.random.default_rng(0)
    healthy = torch.tensor(rng.normal(size=(200, 16)))
    start = relative_spread(healthy)
    assert detect_collapse(healthy, start) is None
    assert "spread" in detect_collapse(
        torch.ones(200, 16) + 1e-5 * torch.tensor(rng.normal(size=(200, 16))), start
    )
    alike = torch.ones(200, 16) + 1e-3 * torch.tensor(
        rng.normal(size=(200, 16))
    )  # alike texts from the start
    assert detect_collapse(alike, relative_spread(alike)) is None
    line = torch.tensor(rng.normal(size=(200, 1))) * torch.ones(1, 16) + 5
    assert "rank" in detect_collapse(line, start)


def test_a_trial_trains_on_file_data(tmp_path):
    pairs = [(f"a red disc {i}", f"one circle, red {i}") for i in range(96)]
    data = file_dataset(tmp_path, pairs, [f"item {i}" for i in range(40)], width=16)
    raw = {
        "name": "files",
        "data": data | {"tokenizer": "bpe", "vocab_size": 300, "max_len": 24},
        "eval": {"set": "toy-40", "metrics": ["mutual_knn@5", "cka"], "checkpoints": {"first": 32}},
        "grid": {"objective": ["jepa_good", "ntp"], "model": ["tiny"], "data_size": [96], "seed": [0]},
        "train": {"batch_size": 16},
    }
    for config in parse_spec(raw, "files.yaml", base_dir=tmp_path).trials:
        reports = []
        outcome = run_trial(config, reports.append, cache_dir=tmp_path / "cache")
        assert (outcome.status, outcome.reason) == ("done", None)
        assert reports[-1].report.samples_seen == 96
        assert {(r.metric, r.reference, r.eval_set) for r in reports[0].report.rows} >= {
            ("mutual_knn@5", "dino", "toy-40")
        }


def test_a_checkpoint_is_the_owners_alone_and_read_only_by_its_own_trial(tmp_path):
    config = trial("jepa_good")
    _, checkpoints = run(config)
    checkpoints[1].save(tmp_path / "ckpt")
    assert (tmp_path / "ckpt").stat().st_mode & 0o777 == 0o700
    assert {path.stat().st_mode & 0o777 for path in (tmp_path / "ckpt").iterdir()} == {0o600}
    assert SavedCheckpoint.load(tmp_path / "ckpt", config.key).state.samples_seen == 1024
    other = trial("jepa_good", seed=1).key
    with pytest.raises(CheckpointError, match=f"belongs to trial {config.key[:10]}…, not {other[:10]}…"):
        SavedCheckpoint.load(tmp_path / "ckpt", other)


def test_a_save_killed_between_its_renames_resumes_from_the_checkpoint_it_moved_aside(tmp_path):
    config = trial("jepa_good")
    _, checkpoints = run(config)
    first, second = checkpoints[1:3]
    first.save(tmp_path / "ckpt")
    (tmp_path / "ckpt").rename(tmp_path / ".ckpt.0badc0de.old")  # the kill: the new one never renamed in
    (tmp_path / ".ckpt.1badc0de.tmp").mkdir()  # and its staging half written
    assert SavedCheckpoint.load(tmp_path / "ckpt", config.key).state.samples_seen == 1024
    second.save(tmp_path / "ckpt")
    assert SavedCheckpoint.load(tmp_path / "ckpt", config.key).state.samples_seen > 1024
    assert [path.name for path in tmp_path.iterdir()] == ["ckpt"]  # the leftovers are gone


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A real trial's 1024-sample checkpoint on disk, and the trial's key."""
    config = trial("jepa_good")
    _, checkpoints = run(config)
    folder = tmp_path_factory.mktemp("saved") / "ckpt"
    checkpoints[1].save(folder)
    return folder, config.key


def spoiled(saved, tmp_path, spoil) -> str:
    """The message of loading a copy of the saved checkpoint after `spoil(folder)`."""
    original, key = saved
    shutil.copytree(original, tmp_path / "ckpt")
    spoil(tmp_path / "ckpt")
    with pytest.raises(CheckpointError) as raised:
        SavedCheckpoint.load(tmp_path / "ckpt", key)
    assert raised.value.folder == tmp_path / "ckpt"
    return str(raised.value)


@pytest.mark.parametrize(
    ("spoil", "words"),
    [
        (
            lambda f: (f / "model.pt").write_bytes((f / "model.pt").read_bytes()[:100]),
            "model.pt is truncated",
        ),
        (lambda f: (f / "report.json").write_text('{"trial_key": '), "report.json is truncated or not JSON"),
        (lambda f: (f / "history.json").write_text('{"rows": 5}'), "history.json is JSON of the wrong shape"),
        (lambda f: (f / "meta.json").write_text('{"step": "ten"}'), "meta.json is JSON of the wrong shape"),
        (
            lambda f: (f / "history.json").write_text('[{"trial_key": "k", "value": "high"}]'),
            "history.json is JSON of the wrong shape",
        ),
        (
            lambda f: torch.save({"w": np.zeros(2)}, f / "optim.pt"),
            "optim.pt holds objects other than tensors",
        ),
    ],
)
def test_each_unusable_checkpoint_is_named_for_what_is_wrong(saved, tmp_path, spoil, words):
    assert f"checkpoint {tmp_path / 'ckpt'}: {words}" in spoiled(saved, tmp_path, spoil)
