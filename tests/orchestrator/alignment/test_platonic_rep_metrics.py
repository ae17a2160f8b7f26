"""`orch align --compat platonic-rep`, metric by metric, against platonic-rep's definitions as its
`metrics.py` and `measure_alignment.py` state them, written here independently and densely (n x n
kernels and masks, Python dynamic programs, a classical CCA), on heavy-tailed layer stacks: every
metric upstream has, to 1e-6 with the same best pair, in both argument orders, with upstream's
--precise clamp and with a language stack whose layers differ in width."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from orchestrator.extraction.output import FORMAT
from orchestrator.features import score_files

ROWS, K = 80, 10


# -- upstream's procedure ---------------------------------------------------------------------


def remove_outliers(feats: torch.Tensor, precise: bool) -> torch.Tensor:
    """A model's features (rows x layers x width, or rows x width) clamped at one threshold."""
    if precise:
        threshold = feats.reshape(-1).abs().sort().values[int(0.95 * feats.numel())]
    else:
        threshold = torch.quantile(feats.abs().flatten(start_dim=1), 0.95, dim=1).mean()
    return feats.clamp(-threshold, threshold)


def prepared(layers: list[np.ndarray], precise: bool) -> list[torch.Tensor]:
    tensors = [torch.from_numpy(layer) for layer in layers]
    if len({t.shape[1] for t in tensors}) == 1:
        stack = remove_outliers(torch.stack(tensors, dim=1), precise)
        clamped = [stack[:, i] for i in range(stack.shape[1])]
    else:
        clamped = [remove_outliers(t, precise) for t in tensors]
    return [t / t.norm(dim=1, keepdim=True) for t in clamped]


def nearest(feats: torch.Tensor, k: int) -> torch.Tensor:
    return (feats @ feats.T).fill_diagonal_(-1e8).argsort(dim=1, descending=True)[:, :k]


def mutual_knn(a, b):
    ka, kb = nearest(a, K), nearest(b, K)
    mask_a = torch.zeros(ROWS, ROWS).scatter_(1, ka, 1.0)
    mask_b = torch.zeros(ROWS, ROWS).scatter_(1, kb, 1.0)
    return float(((mask_a * mask_b).sum(dim=1) / K).mean())


def cycle_knn(a, b):
    back = nearest(a, K)[nearest(b, K)]  # (n, k, k)
    return float((back == torch.arange(ROWS).view(-1, 1, 1)).reshape(ROWS, -1).any(dim=1).double().mean())


def lcs_length(x, y):
    table = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
    for i in range(1, len(x) + 1):
        for j in range(1, len(y) + 1):
            table[i][j] = (
                table[i - 1][j - 1] + 1 if x[i - 1] == y[j - 1] else max(table[i - 1][j], table[i][j - 1])
            )
    return table[-1][-1]


def levenshtein(x, y):
    row = list(range(len(y) + 1))
    for i in range(1, len(x) + 1):
        previous, row[0] = row[0], i
        for j in range(1, len(y) + 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x[i - 1] != y[j - 1]))
    return row[-1]


def lcs_knn(a, b):
    pairs = zip(nearest(a, K).tolist(), nearest(b, K).tolist(), strict=True)
    return float(np.mean([lcs_length(x, y) for x, y in pairs]))


def edit_distance_knn(a, b):
    pairs = zip(nearest(a, K).tolist(), nearest(b, K).tolist(), strict=True)
    return float(1 - np.mean([levenshtein(x, y) for x, y in pairs]) / K)


def hsic_biased(k, lk):
    centre = torch.eye(k.shape[0], dtype=k.dtype) - 1 / k.shape[0]
    return torch.trace(k @ centre @ lk @ centre)


def hsic_unbiased(k, lk):
    m = k.shape[0]
    kt, lt = k.clone().fill_diagonal_(0), lk.clone().fill_diagonal_(0)
    value = (kt * lt.T).sum() + kt.sum() * lt.sum() / ((m - 1) * (m - 2)) - 2 * (kt @ lt).sum() / (m - 2)
    return value / (m * (m - 3))


def cka(a, b, unbiased=False):
    hsic = hsic_unbiased if unbiased else hsic_biased
    k, lk = a @ a.T, b @ b.T
    return float(hsic(k, lk) / (torch.sqrt(hsic(k, k) * hsic(lk, lk)) + 1e-6))


def cknna(a, b):
    k, lk = a @ a.T, b @ b.T

    def similarity(x, y):
        top_x = torch.topk(x.clone().fill_diagonal_(float("-inf")), K, dim=1).indices
        top_y = torch.topk(y.clone().fill_diagonal_(float("-inf")), K, dim=1).indices
        mask = torch.zeros(ROWS, ROWS, dtype=x.dtype).scatter_(1, top_x, 1) * torch.zeros(
            ROWS, ROWS, dtype=x.dtype
        ).scatter_(1, top_y, 1)
        return hsic_unbiased(mask * x, mask * y)

    return float(similarity(k, lk) / (torch.sqrt(similarity(k, k) * similarity(lk, lk)) + 1e-6))


def svcca(a, b, dims=10):
    def standardised(t):
        t = t - t.mean(dim=0)
        return t / (t.std(dim=0) + 1e-8)

    torch.manual_seed(0)  # upstream draws unseeded; orch seeds each pair's two draws with 0
    bases = [torch.svd_lowrank(standardised(t), q=dims)[0].numpy() for t in (a, b)]
    x, y = (basis - basis.mean(axis=0) for basis in bases)
    cxx, cyy, cxy = x.T @ x, y.T @ y, x.T @ y

    def inverse_root(c):
        values, vectors = np.linalg.eigh(c)
        return vectors @ np.diag(values**-0.5) @ vectors.T

    return float(np.linalg.svd(inverse_root(cxx) @ cxy @ inverse_root(cyy), compute_uv=False).mean())


METRICS = {
    "mutual_knn@10": mutual_knn,
    "cycle_knn@10": cycle_knn,
    "lcs_knn@10": lcs_knn,
    "edit_distance_knn@10": edit_distance_knn,
    "cka": cka,
    "unbiased_cka": lambda a, b: cka(a, b, unbiased=True),
    "cknna@10": cknna,
    "svcca": svcca,
}


def compute_score(y_layers, x_layers, metric):
    """measure_alignment.compute_score: metric(y, x), y's layers outside, the best above 0."""
    best, pair = 0.0, None
    for i, y in enumerate(y_layers):
        for j, x in enumerate(x_layers):
            if (value := metric(y, x)) > best:
                best, pair = value, (i, j)
    return best, pair


# -- the cases --------------------------------------------------------------------------------


def heavy_tailed(seed: int, widths: list[int], shared: np.ndarray) -> list[np.ndarray]:
    """Layers that see more of a shared signal with depth, under Student-t(2) noise and a few
    huge outliers (what the clamp is for)."""
    rng = np.random.default_rng(seed)
    layers = []
    for depth, width in enumerate(widths, start=1):
        layer = (depth / len(widths)) * shared @ rng.normal(size=(shared.shape[1], width))
        layer = layer + rng.standard_t(2, size=(ROWS, width))
        layer[rng.integers(ROWS, size=3), rng.integers(width, size=3)] *= 50
        layers.append(layer)
    return layers


def write(folder: Path, name: str, layers: list[np.ndarray], side: str | None) -> Path:
    path = folder / f"{name}.npz"
    np.savez(path, **{f"layer_{i:02d}": layer for i, layer in enumerate(layers)})
    if side is not None:  # the sidecar orch features writes: it says which side the file is
        ids = [str(i) for i in range(ROWS)]
        sidecar = {
            "format": FORMAT,
            "side": side,
            "model": {"folder": f"/models/{name}", "sha256": "0" * 64},
            "rows": {"count": ROWS, "ids": ids, "sha256": ["0" * 64] * ROWS},
        }
        path.with_suffix(".json").write_text(json.dumps(sidecar))
    return path


CASES = {
    "same widths": ([32, 32, 32], [24, 24], False),
    "mixed-width language stack": ([16, 32, 24], [24, 24], False),
    "precise": ([32, 32, 32], [24, 24], True),
    "precise, mixed widths": ([12, 20, 16, 20], [16, 16, 16], True),
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request, tmp_path_factory):
    text_widths, image_widths, precise = CASES[request.param]
    seed = list(CASES).index(request.param)
    shared = 0.4 * np.random.default_rng(100 + seed).normal(size=(ROWS, 6))
    text, image = heavy_tailed(seed, text_widths, shared), heavy_tailed(50 + seed, image_widths, shared)
    folder = tmp_path_factory.mktemp("stacks")
    files = {
        "text": write(folder, "text", text, "text"),
        "image": write(folder, "image", image, "image"),
        "bare_text": write(folder, "bare_text", text, None),
        "bare_image": write(folder, "bare_image", image, None),
    }
    expected = {
        metric: compute_score(prepared(image, precise), prepared(text, precise), function)
        for metric, function in METRICS.items()
    }
    reversed_cycle = compute_score(prepared(text, precise), prepared(image, precise), cycle_knn)[0]
    return files, precise, expected, reversed_cycle


def _scores(a: Path, b: Path, precise: bool) -> dict[str, dict]:
    rows = score_files(a, b, list(METRICS), True, compat="platonic-rep", precise=precise)
    return {row["metric"]: row for row in rows}


def test_every_metric_agrees_with_upstream_in_either_order(case):
    files, precise, expected, _ = case
    text_first = _scores(files["text"], files["image"], precise)
    image_first = _scores(files["image"], files["text"], precise)
    for metric, (value, pair) in expected.items():
        assert pair is not None, metric  # the cases align: a best pair is named
        for rows, (text_key, image_key) in (
            (text_first, ("layer_a", "layer_b")),
            (image_first, ("layer_b", "layer_a")),
        ):
            assert rows[metric]["value"] == pytest.approx(value, abs=1e-6), metric
            assert (rows[metric][image_key], rows[metric][text_key]) == (
                f"layer_{pair[0]:02d}",
                f"layer_{pair[1]:02d}",
            ), metric


def test_without_sidecars_the_first_file_is_upstreams_x(case):
    files, precise, expected, reversed_cycle = case
    stated = _scores(files["bare_text"], files["bare_image"], precise)
    for metric, (value, _) in expected.items():
        assert stated[metric]["value"] == pytest.approx(value, abs=1e-6), metric
    reversed_order = _scores(files["bare_image"], files["bare_text"], precise)
    assert reversed_order["cycle_knn@10"]["value"] == pytest.approx(reversed_cycle, abs=1e-6)
