"""platonic-rep's scoring procedure (Huh et al. 2024: `measure_alignment.py` and `metrics.py` as its
current code runs them), for `orch align --compat platonic-rep` and sweeps with `eval.scoring:
platonic-rep`. Where it differs from orch's own:
- **Clamp.** One threshold for a model's whole layer stack: the mean over rows of each row's 95th
  percentile of |x| across every layer (orch clamps each layer at its own percentile). A stack
  whose layers differ in width is a list upstream, and each layer is clamped alone by the same
  rule. `precise` is upstream's `--precise`: the exact 95th order statistic of |x| over the stack.
- **Best pair.** It must score above 0; where none does, the score is 0 and no pair is named
  (orch reports the best pair whatever its sign).
- **Order.** Upstream scores metric(y, x) for the x model (`--modality_x`, the language side in its
  README) and the y model, and loops y's layers outside x's: `compat_best_pair` takes the y side
  first. Only cycle k-NN and CKNNA are not symmetric.
- **Metrics.** CKA, unbiased CKA and CKNNA add 1e-6 to their denominators (on upstream's own
  scale: biased HSIC is not divided by (n-1)^2 there); `lcs_knn` is the mean common-subsequence
  length, not over k; SVCCA is upstream's algorithm (standardise, a randomised rank-10 SVD of each
  side, the mean canonical correlation of the two bases), its random draws seeded here.
Features are float64 here, where upstream computes in float32.
"""

from collections.abc import Callable, Sequence

import numpy as np
import torch

from orchestrator.alignment.arrays import AlignmentError, paired, unit_rows
from orchestrator.alignment.kernels import LinearKernel, hsic_linear
from orchestrator.alignment.neighbours import (
    Neighbours,
    cycle_knn_from,
    masked_hsic,
    mutual_knn_from,
    neighbours,
)
from orchestrator.alignment.sequences import edit_distance_knn_from, lcs_knn_from
from orchestrator.sweepfile.catalog import MetricName

__all__ = [
    "EPSILON",
    "PLATONIC_REP_FLOOR",
    "SVCCA_DIRECTIONS",
    "SVCCA_SEED",
    "best_pair",
    "compat_best_pair",
    "compat_lists_scorer",
    "compat_scorer",
    "platonic_rep_layers",
]

PLATONIC_REP_FLOOR = 0.0  # a pair must beat this to count as the best
QUANTILE = 0.95
EPSILON = 1e-6  # upstream's guard in the CKA and CKNNA denominators
SVCCA_DIRECTIONS = 10  # upstream's cca_dim
SVCCA_SEED = 0  # the torch seed before each pair's two randomised SVDs


def platonic_rep_layers(layers: Sequence[np.ndarray], precise: bool = False) -> list[torch.Tensor]:
    """A model's layers (rows x width each), clamped as upstream clamps them and L2-normalised."""
    as_float = [torch.from_numpy(np.asarray(layer, dtype=np.float64)) for layer in layers]
    if len({layer.shape[1] for layer in as_float}) > 1:  # upstream's list of layers: one by one
        return [unit_rows(_clamped([layer], precise)[0]) for layer in as_float]
    return [unit_rows(layer) for layer in _clamped(as_float, precise)]


def _clamped(layers: list[torch.Tensor], precise: bool) -> list[torch.Tensor]:
    stack = torch.stack([layer.abs() for layer in layers], dim=1)  # rows x layers x width
    if precise:
        flat = stack.flatten().sort().values
        threshold = float(flat[int(QUANTILE * flat.numel())])
    else:
        threshold = float(torch.quantile(stack.flatten(start_dim=1), QUANTILE, dim=1).mean())
    return [layer.clamp(-threshold, threshold) for layer in layers]


def compat_best_pair(
    score: Callable[[torch.Tensor, torch.Tensor], float],
    layers_y: Sequence[torch.Tensor],
    layers_x: Sequence[torch.Tensor],
) -> tuple[float, int, int]:
    """(best score, y layer, x layer) as upstream's `compute_score` finds it: metric(y, x), y's
    layers outside, the first pair strictly above 0; (0.0, -1, -1) where none is."""
    return best_pair([[score(y, x) for x in layers_x] for y in layers_y])


def best_pair(values: Sequence[Sequence[float]]) -> tuple[float, int, int]:
    """`compat_best_pair` on a grid already scored, values[y layer][x layer]."""
    best = (PLATONIC_REP_FLOOR, -1, -1)
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            if value > best[0]:
                best = (value, i, j)
    return best


def _cknna_from(na: Neighbours, nb: Neighbours) -> float:
    n = na.indices.shape[0]
    if n <= 3:
        raise AlignmentError(f"unbiased estimators need n > 3 rows, got {n}")
    if na.k < 2:
        raise AlignmentError("platonic-rep's CKNNA needs k >= 2")
    if na.constant or nb.constant:
        return 0.0
    kl = masked_hsic(na.indices, na.values, nb.indices, nb.values, n)
    return kl / (float(np.sqrt(max(na.self_hsic * nb.self_hsic, 0.0))) + EPSILON)


def _lcs_from(na: Neighbours, nb: Neighbours) -> float:
    return lcs_knn_from(na, nb) * na.k  # upstream's mean length, not over k


_FROM_LISTS: dict[str, Callable[[Neighbours, Neighbours], float]] = {
    "mutual_knn": mutual_knn_from,
    "cycle_knn": cycle_knn_from,
    "lcs_knn": _lcs_from,
    "edit_distance_knn": edit_distance_knn_from,
    "cknna": _cknna_from,
}


def compat_lists_scorer(metric: MetricName) -> Callable[[Neighbours, Neighbours], float] | None:
    """Upstream's value from two sides' k-NN lists, for a metric built from them; else None."""
    return _FROM_LISTS.get(metric.name)


def _cka(unbiased: bool) -> Callable[[torch.Tensor, torch.Tensor], float]:
    def score(y: torch.Tensor, x: torch.Tensor) -> float:
        ty, tx = paired(y, x)
        n = ty.shape[0]
        if unbiased and n <= 3:
            raise AlignmentError(f"unbiased estimators need n > 3 rows, got {n}")
        sy, sx = LinearKernel(ty, unbiased), LinearKernel(tx, unbiased)
        if sy.constant or sx.constant:  # no structure: 0, where upstream gives rounding noise
            return 0.0
        scale = 1.0 if unbiased else (n - 1) ** 2  # upstream's biased HSIC is not divided by it
        denominator = float(np.sqrt(max(sy.self_hsic * sx.self_hsic, 0.0))) * scale + EPSILON
        return hsic_linear(ty, tx, unbiased) * scale / denominator

    return score


def _svcca(y: torch.Tensor, x: torch.Tensor) -> float:
    ty, tx = paired(y, x)
    smallest = min(ty.shape[0], ty.shape[1], tx.shape[1])
    if smallest < SVCCA_DIRECTIONS:
        raise AlignmentError(
            f"platonic-rep's svcca keeps {SVCCA_DIRECTIONS} directions: it needs at least that many "
            f"rows and features on each side, and the smallest here is {smallest}"
        )
    with torch.random.fork_rng():
        torch.manual_seed(SVCCA_SEED)
        bases = [torch.svd_lowrank(_standardised(t), q=SVCCA_DIRECTIONS)[0] for t in (ty, tx)]
    centred = [basis - basis.mean(dim=0) for basis in bases]
    orthonormal = [torch.linalg.qr(basis).Q for basis in centred]
    correlations = torch.linalg.svdvals(orthonormal[0].T @ orthonormal[1]).clamp(0, 1)
    return float(correlations.mean())


def _standardised(t: torch.Tensor) -> torch.Tensor:
    centred = t - t.mean(dim=0)
    return centred / (centred.std(dim=0) + 1e-8)


def compat_scorer(metric: MetricName) -> Callable[[torch.Tensor, torch.Tensor], float]:
    """Upstream's metric(y, x) on two prepared row-paired matrices."""
    if (from_lists := compat_lists_scorer(metric)) is not None:

        def from_rows(y: torch.Tensor, x: torch.Tensor) -> float:
            ty, tx = paired(y, x)
            return from_lists(neighbours(ty, metric.k), neighbours(tx, metric.k))

        return from_rows
    matrix_scorers = {"cka": _cka(unbiased=False), "cka_unbiased": _cka(unbiased=True), "svcca": _svcca}
    if metric.name in matrix_scorers:
        return matrix_scorers[metric.name]
    raise AlignmentError(f"{metric} is not a platonic-rep metric (its retrieval metrics are orch's own)")
