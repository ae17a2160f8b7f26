"""The FLOPs model (`train_flops`) against torch's own count of a training step's operations
(`torch.utils.flop_counter`, attention through the math kernel, whose matmuls it can see), at two
lengths and two model sizes; and a trial's FLOPs and lengths as its rows record them."""

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from db import POSITIONS_PER_SAMPLE, TOKENS_PER_SAMPLE
from orchestrator.data.sources import source_of
from orchestrator.sweepfile import parse_spec
from orchestrator.sweepfile.catalog import PRESETS, objective_of, train_flops
from orchestrator.training.encoders import TextEncoder
from orchestrator.training.loop import TrainingLoss, run_trial

VOCAB, BATCH = 300, 32


def config(objective: str, model: str = "tiny", size: str = "1K"):
    raw = {
        "name": "f",
        "grid": {"objective": [objective], "model": [model], "data_size": [size], "seed": [0]},
    }
    return parse_spec(raw, "f.yaml").trials[0]


@pytest.mark.parametrize("objective", ["jepa_good", "ntp"])
@pytest.mark.parametrize("model", ["tiny", "small"])
@pytest.mark.parametrize("length", [16, 48])
def test_the_model_counts_what_torchs_flop_counter_counts_to_10_percent(objective, model, length):
    torch.manual_seed(0)
    encoder = TextEncoder(PRESETS[model], VOCAB, 64, causal=objective_of(objective).causal)
    views = objective_of(objective).views
    batch = torch.randint(5, VOCAB, (BATCH, views, length))  # no padding: every position is real
    with sdpa_kernel([SDPBackend.MATH]), FlopCounterMode(display=False) as counter:
        TrainingLoss(encoder, config(objective))(batch, torch.Generator().manual_seed(0)).backward()
    estimate = train_flops(PRESETS[model], objective, BATCH * views, length, VOCAB)
    assert estimate == pytest.approx(counter.get_total_flops(), rel=0.10)
    attention = 3 * BATCH * views * 4 * PRESETS[model].layers * PRESETS[model].width * length**2
    assert counter.get_total_flops() > estimate - attention / 2  # the attention term is in what runs


def test_a_trial_records_the_lengths_it_ran_and_counts_flops_at_them():
    trial = config("jepa_good")
    reports = []
    run_trial(trial, reports.append)
    rows = {row.metric: row for row in reports[-1].report.rows}
    tokens, positions = rows[TOKENS_PER_SAMPLE].value, rows[POSITIONS_PER_SAMPLE].value
    assert 2 <= tokens <= positions <= 2 * 64  # two views a sample, each padded to its batch's longest
    length = positions / 2  # a view's positions, on average
    shape = source_of(trial.data).shape(trial.data)
    expected = train_flops(PRESETS["tiny"], "jepa_good", 2 * trial.budget_samples, length, shape.vocab_size)
    # FLOPs are counted a batch at a time, at its own length: the mean length's square is below the
    # mean of the squares, so the attention term is a little above this
    assert rows[TOKENS_PER_SAMPLE].flops == pytest.approx(expected, rel=0.05)
    assert shape.padded_length("jepa_good", 2 * trial.train.batch_size) == pytest.approx(length, rel=0.15)
