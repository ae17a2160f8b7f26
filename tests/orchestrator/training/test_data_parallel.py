"""A data-parallel trial is its one-process run: two real processes joined by gloo on the CPU,
each with its rows of every global batch, against one process with the whole batch.

The first step's loss and every gradient agree to 1e-5 (SIGReg's characteristic function and
NTP's token mean taken over the global batch, the rows split unevenly); after 1,000 samples the
parameters agree to 1e-4 and so does every row at every checkpoint."""

import os
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from orchestrator.data.sources import open_trial_data
from orchestrator.sweepfile import TrialConfig, parse_spec
from orchestrator.training.checkpoint import SavedCheckpoint
from orchestrator.training.loop import DEFAULT_CACHE, TrainingLoss, _trim, build_model, run_trial
from orchestrator.training.replicas import SOLO, Replica

pytestmark = pytest.mark.processes  # two real processes each: run by .ci/run after the README's command
WORLD = 2


def config_for(objective: str, batch_size: int = 32, size: int = 1000, **train) -> TrialConfig:
    """A trial that evaluates at 0, 256, 512, ... samples (1,000 samples: 0, 256, 512, 1,000)."""
    raw = {
        "name": "t",
        "grid": {"objective": [objective], "model": ["tiny"], "data_size": [size], "seed": [0]},
        "train": {"batch_size": batch_size, **train},
        "eval": {"metrics": ["mutual_knn@10", "cka"], "checkpoints": {"per_octave": 1, "first": 256}},
    }
    return parse_spec(raw, "t.yaml").trials[0]


def first_step(config, replica: Replica) -> tuple[float, dict[str, torch.Tensor]]:
    """The first global batch's loss and the gradient this process ends its backward with."""
    data = open_trial_data(config, DEFAULT_CACHE)
    model = build_model(config, data, torch.device("cpu"))
    training_loss = replica.wrap(TrainingLoss(model, config, replica), torch.device("cpu"))
    count = config.train.batch_size
    rows = torch.as_tensor(data.take(0, count), dtype=torch.long)
    generator = torch.Generator().manual_seed(config.seed * 1_000_003)  # step 0's, as the trainer's
    loss = training_loss(_trim(rows[replica.rows(count)]), generator)
    replica.for_backward(loss).backward()
    return float(loss.detach()), {name: p.grad.clone() for name, p in model.named_parameters()}


def whole_trial(config, replica: Replica, resume: SavedCheckpoint | None = None) -> dict:
    """Where the trial stopped and how; the leader's final parameters and every row it reported."""
    outcome = run_trial(config, lambda checkpoint: None, resume=resume, replica=replica)
    stopped = {"status": outcome.status, "samples": outcome.samples_seen}
    if outcome.last is None:
        return stopped
    rows = {(r.samples_seen, r.metric, r.reference): r.value for r in outcome.last.history}
    return stopped | {"model": outcome.last.model, "rows": rows, "flops": outcome.last.state.flops}


def function_of(name: str, tensor: torch.Tensor) -> np.ndarray:
    """The part of a parameter the encoder's output depends on. The key projection's bias adds
    q.b to every score of a query, which softmax ignores: its true gradient is zero, so AdamW
    turns rounding noise (whose sum order differs between one process and two) into steps of
    the learning rate's size."""
    values = tensor.numpy()
    if name.endswith("self_attn.in_proj_bias"):
        width = len(values) // 3  # query, key, value
        return np.concatenate([values[:width], values[2 * width :]])
    return values


def _replica(rank: int, config_json: str, folder: str, what: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=rank, world_size=WORLD)
    torch.set_num_threads(1)
    try:
        replica = Replica(rank, WORLD)
        config = TrialConfig.from_json(config_json)
        if what == "first_step":
            result = first_step(config, replica)
        else:
            result = whole_trial(config, replica, SavedCheckpoint.load(Path(folder) / "saved", config.key))
        torch.save(result, Path(folder) / f"rank{rank}.pt")
        dist.barrier()  # both results are saved and no collective is left
    except BaseException:
        dist.destroy_process_group()
        raise
    # Interpreter teardown with gloo's threads alive aborted one process in two CI runs
    # ("terminate called without an active exception", SIGABRT) after its result was saved.
    os._exit(0)


def in_two_processes(tmp_path: Path, config: TrialConfig, what: str) -> list:
    mp.spawn(_replica, args=(config.to_json(), str(tmp_path), what), nprocs=WORLD, join=True)
    return [torch.load(tmp_path / f"rank{rank}.pt", weights_only=False) for rank in range(WORLD)]


@pytest.mark.parametrize("objective", ["jepa_good", "ntp"])
def test_the_first_step_loss_and_every_gradient_equal_the_one_process_step(tmp_path, objective):
    batch_size = 33  # the two processes hold 16 and 17 rows
    alone_loss, alone_grads = first_step(config_for(objective, batch_size), SOLO)
    ranks = in_two_processes(tmp_path, config_for(objective, batch_size), "first_step")
    for loss, grads in ranks:
        assert loss == pytest.approx(alone_loss, abs=1e-5)
        for name, grad in alone_grads.items():
            np.testing.assert_allclose(grads[name].numpy(), grad.numpy(), atol=1e-5, err_msg=name)
    assert max(float(g.abs().max()) for g in alone_grads.values()) > 1e-3  # gradients that say something


def test_rows_split_disjoint_and_whole():
    for count, world in [(33, 2), (104, 8), (8, 8), (128, 3)]:
        taken = [list(range(count))[Replica(rank, world).rows(count)] for rank in range(world)]
        assert [row for rows in taken for row in rows] == list(range(count))
        assert min(len(rows) for rows in taken) >= count // world


def test_after_1000_samples_the_parameters_and_every_row_equal_the_one_process_trial(tmp_path):
    config = config_for("jepa_good")
    alone = whole_trial(config, SOLO)
    leader, follower = in_two_processes(tmp_path, config, "whole_trial")
    assert follower == {"status": None, "samples": 1000}  # the follower reports nothing
    for name, tensor in alone["model"].items():
        np.testing.assert_allclose(
            function_of(name, leader["model"][name]), function_of(name, tensor), atol=1e-4, err_msg=name
        )
    assert leader["rows"].keys() == alone["rows"].keys()
    assert {samples for samples, _, _ in alone["rows"]} == {0, 256, 512, 1000}
    for key, value in alone["rows"].items():
        assert leader["rows"][key] == pytest.approx(value, abs=1e-4), key
    assert leader["flops"] == alone["flops"]  # the global batch's FLOPs


def test_two_processes_resume_the_checkpoint_one_process_saved(tmp_path):
    """Workers are not in the trial key: a trial rerun with more of them resumes its checkpoint."""
    config = config_for("jepa_good")
    checkpoints = []
    run_trial(config, checkpoints.append)
    alone = {(r.samples_seen, r.metric, r.reference): r.value for r in checkpoints[-1].history}
    midway = next(c for c in checkpoints if c.state.samples_seen == 512)
    midway.save(tmp_path / "saved")
    leader, _ = in_two_processes(tmp_path, config, "whole_trial")
    assert leader["rows"].keys() == alone.keys()
    for key, value in alone.items():
        assert leader["rows"][key] == pytest.approx(value, abs=1e-4), key


def test_a_collapse_the_leader_detects_stops_every_process_at_its_checkpoint(tmp_path):
    collapsing = config_for("jepa_good", size=4000, sigreg={"weight": 0.0}, lr=0.01, grad_clip=None)
    alone = whole_trial(collapsing, SOLO)
    assert alone["status"] == "collapsed" and alone["samples"] < 4000
    leader, follower = in_two_processes(tmp_path, collapsing, "whole_trial")
    assert (leader["status"], leader["samples"]) == ("collapsed", alone["samples"])
    assert follower == {"status": None, "samples": alone["samples"]}
