"""`eval.scoring: platonic-rep`: a trial's recorded value, best pair, SE and null, against `orch
align --compat platonic-rep` on the same checkpoint's features and the same layer stack, and
against slow loops over resamples and shuffles of the best pair above 0."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from orchestrator.alignment import neighbours
from orchestrator.alignment.compat import platonic_rep_layers
from orchestrator.data.sources import open_trial_data
from orchestrator.data.stream import EvalSet
from orchestrator.extraction.output import FORMAT
from orchestrator.sweepfile import parse_spec
from orchestrator.training.loop import build_model, embed_layers, run_trial
from orchestrator.training.platonic_scoring import PlatonicRepScorer
from tests.cli import orch
from tests.datasets import write_jsonl

ROWS, K = 40, 5
METRICS = (f"mutual_knn@{K}", f"cycle_knn@{K}", "cka", f"cknna@{K}", f"lcs_knn@{K}")


def stack(rows: int, widths: list[int], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_t(3, size=(rows, width)).astype(np.float32) for width in widths]


def write_stack(path: Path, layers: list[np.ndarray], side: str, ids: list[str]) -> Path:
    """A features file as `orch features` writes it: layer_00.. and a sidecar naming its side."""
    np.savez(path, **{f"layer_{i:02d}": layer for i, layer in enumerate(layers)})
    sidecar = {
        "format": FORMAT,
        "side": side,
        "model": {"folder": "/models/dinov2", "sha256": "0" * 64},
        "rows": {"count": len(ids), "ids": ids, "sha256": ["0" * 64] * len(ids)},
    }
    path.with_suffix(".json").write_text(json.dumps(sidecar))
    return path


def test_the_se_and_null_are_those_of_the_best_pair_above_zero():
    reference = stack(ROWS, [8, 8, 8], seed=0)
    shared = reference[2][:, :6] * 2
    layers = [torch.as_tensor(shared + np.random.default_rng(i).normal(size=(ROWS, 6))) for i in range(2)]
    tokens = np.zeros((ROWS, 4), dtype=np.int64)
    eval_set = EvalSet("toy", tokens, {"image": tuple(reference)}, tokens, {})
    rows = {s.metric: s for s in PlatonicRepScorer(eval_set, (f"mutual_knn@{K}",), None).score(layers, [])}
    ys = [neighbours(t, K).indices.tolist() for t in platonic_rep_layers(reference)]
    xs = [neighbours(t, K).indices.tolist() for t in platonic_rep_layers([layer.numpy() for layer in layers])]

    def per_item(y, x):
        return np.array([len(set(a) & set(b)) / K for a, b in zip(y, x, strict=True)])

    values = np.stack([per_item(y, x) for y in ys for x in xs])  # (pairs, n)
    picks = torch.randint(ROWS, (200, ROWS), generator=torch.Generator().manual_seed(0)).numpy()
    resampled = np.maximum(np.array([[v[p].mean() for p in picks] for v in values]).max(axis=0), 0)
    generator, nulls = torch.Generator().manual_seed(0), []
    for _ in range(100):  # the checkpoint's rows shuffled, one permutation for all its layers
        order = torch.randperm(ROWS, generator=generator)
        moved = [
            neighbours(t[order], K).indices.tolist() for t in platonic_rep_layers([x.numpy() for x in layers])
        ]
        nulls.append(max(0.0, max(per_item(y, x).mean() for y in ys for x in moved)))
    head = rows[f"mutual_knn@{K}"]
    assert head.value == pytest.approx(values.mean(axis=1).max(), abs=1e-12)
    assert head.se == pytest.approx(np.std(resampled, ddof=1), abs=1e-12)
    assert head.null_mean == pytest.approx(np.mean(nulls), abs=1e-12)
    assert head.null_p95 == pytest.approx(np.quantile(nulls, 0.95), abs=1e-12)
    best = int(values.mean(axis=1).argmax())
    assert (
        rows[f"mutual_knn@{K}/best_reference_layer"].value,
        rows[f"mutual_knn@{K}/best_layer"].value,
    ) == divmod(best, 2)


def test_a_trials_value_is_orch_align_compat_on_its_checkpoint(tmp_path):
    """A tiny files sweep scored against a DINOv2-like stack: the value and best pair each
    checkpoint records are what `orch align --compat platonic-rep` gives on that checkpoint's
    features (rebuilt from the checkpoint) and the stack."""
    ids = [f"img{i}" for i in range(ROWS)]
    words = ["red", "blue", "green", "tall", "small", "round", "flat", "dark"]
    texts = [f"{words[n % 8]} {words[n // 8 % 8]} {n}" for n in range(ROWS)]  # distinct in 16 bytes
    write_jsonl(tmp_path / "eval.jsonl", [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)])
    write_jsonl(
        tmp_path / "pairs.jsonl",
        [{"image_id": i, "caption_a": f"item {i} red", "caption_b": f"red item {i}"} for i in range(64)],
    )
    write_stack(tmp_path / "dino.npz", stack(ROWS, [16, 16, 16], seed=1), "image", ids)
    raw = {
        "name": "compat",
        "data": {
            "source": "files",
            "pairs": "pairs.jsonl",
            "eval": {"texts": "eval.jsonl", "features": {"dino": "dino.npz"}},
            "max_len": 16,
        },
        "eval": {
            "set": "toy-40",
            "metrics": list(METRICS),
            "checkpoints": {"first": 32},
            "scoring": "platonic-rep",
        },
        "grid": {"objective": ["jepa_good"], "model": ["tiny"], "data_size": [64], "seed": [0]},
        "train": {"batch_size": 16},
    }
    config = parse_spec(raw, "compat.yaml", base_dir=tmp_path).trials[0]
    checkpoints = []
    assert run_trial(config, checkpoints.append, cache_dir=tmp_path / "cache").status == "done"
    last = checkpoints[-1]
    data = open_trial_data(config, tmp_path / "cache")
    model = build_model(config, data, torch.device("cpu"))
    model.load_state_dict(last.model)
    layers = embed_layers(model, data.eval_set.tokens, torch.device("cpu"))
    np.savez(tmp_path / "checkpoint.npz", **{f"layer_{i}": layer.numpy() for i, layer in enumerate(layers)})
    result = orch(
        "align",
        "checkpoint.npz",
        "dino.npz",
        *(f"--metric={m}" for m in METRICS),
        "--compat=platonic-rep",
        "--json",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    aligned = {row["metric"]: row for row in json.loads(result.stdout)["scores"]}
    recorded = {row.metric: row.value for row in last.report.rows}
    for metric in METRICS:
        assert recorded[metric] > 0, metric  # a pair is named
        assert recorded[metric] == pytest.approx(aligned[metric]["value"], abs=1e-6), metric
        assert aligned[metric]["layer_a"] == f"layer_{int(recorded[f'{metric}/best_layer'])}", metric
        assert aligned[metric]["layer_b"] == f"layer_{int(recorded[f'{metric}/best_reference_layer']):02d}"
