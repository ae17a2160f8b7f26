"""`orch align --compat platonic-rep` against an implementation of platonic-rep's procedure
written here from its description (measure_alignment.py and metrics.py, default settings), in
plain numpy: one clamp threshold for a model's whole layer stack (the mean over rows of each
row's 95th percentile of |x| over every layer), rows L2-normalised per layer, the best layer pair
scoring above 0."""

from pathlib import Path

import numpy as np
import pytest

from orchestrator.features import score_files


def stack_clamped(layers: list[np.ndarray]) -> list[np.ndarray]:
    stack = np.stack(layers, axis=1)  # rows x layers x width, as platonic-rep stores features
    per_row = [np.quantile(np.abs(row).ravel(), 0.95) for row in stack]
    limit = np.mean(per_row)
    out = []
    for layer in layers:
        clipped = np.clip(layer, -limit, limit)
        out.append(clipped / np.linalg.norm(clipped, axis=1, keepdims=True))
    return out


def mutual_knn(a: np.ndarray, b: np.ndarray, k: int) -> float:
    def knn(x):
        similarity = x @ x.T
        np.fill_diagonal(similarity, -1e8)
        return np.argsort(-similarity, axis=1, kind="stable")[:, :k]

    first, second = knn(a), knn(b)
    return float(np.mean([len(set(p) & set(q)) / k for p, q in zip(first, second, strict=True)]))


def linear_cka(a: np.ndarray, b: np.ndarray) -> float:
    n = a.shape[0]
    centre = np.eye(n) - 1 / n
    k, lk = a @ a.T, b @ b.T

    def hsic(x, y):
        return np.trace(x @ centre @ y @ centre)

    return float(hsic(k, lk) / np.sqrt(hsic(k, k) * hsic(lk, lk)))


def platonic_rep(layers_a, layers_b, metric) -> tuple[float, tuple[int, int] | None]:
    best, pair = 0.0, None
    for i, a in enumerate(stack_clamped(layers_a)):
        for j, b in enumerate(stack_clamped(layers_b)):
            value = metric(a, b)
            if value > best:
                best, pair = value, (i, j)
    return best, pair


def layered(seed: int, rows: int, layers: int, width: int, shared: np.ndarray) -> list[np.ndarray]:
    """Layers that see more of a shared signal with depth, with heavy-tailed outliers."""
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(shared.shape[1], width))
    return [
        (depth / layers) * shared @ mix + rng.standard_t(3, size=(rows, width))
        for depth in range(1, layers + 1)
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compat_agrees_with_platonic_reps_procedure_to_1e6(tmp_path: Path, seed):
    shared = np.random.default_rng(100 + seed).normal(size=(96, 8))
    layers_a, layers_b = layered(seed, 96, 4, 24, shared), layered(50 + seed, 96, 3, 16, shared)
    np.savez(tmp_path / "a.npz", *layers_a)
    np.savez(tmp_path / "b.npz", *layers_b)
    rows = score_files(
        tmp_path / "a.npz", tmp_path / "b.npz", ["mutual_knn@10", "cka"], True, compat="platonic-rep"
    )
    for row, metric in zip(rows, [lambda a, b: mutual_knn(a, b, 10), linear_cka], strict=True):
        expected, (i, j) = platonic_rep(layers_a, layers_b, metric)
        assert abs(row["value"] - expected) < 1e-6
        assert (row["layer_a"], row["layer_b"]) == (f"arr_{i}", f"arr_{j}")
    default = score_files(tmp_path / "a.npz", tmp_path / "b.npz", ["cka"], True)[0]["value"]
    assert abs(default - rows[1]["value"]) > 1e-6  # orch's own per-layer clamp is another procedure


def test_no_pair_above_zero_scores_zero_and_names_no_layer(tmp_path: Path):
    np.save(tmp_path / "a.npy", np.random.default_rng(0).normal(size=(40, 6)))
    np.save(tmp_path / "c.npy", np.ones((40, 6)))  # no structure: every metric gives 0
    row = score_files(tmp_path / "a.npy", tmp_path / "c.npy", ["cka"], True, compat="platonic-rep")[0]
    assert row == {"metric": "cka", "value": 0.0, "layer_a": None, "layer_b": None}
    own = score_files(tmp_path / "a.npy", tmp_path / "c.npy", ["cka"], True)[0]
    assert (own["layer_a"], own["layer_b"]) == ("0", "0")  # orch names its best pair whatever it scores
