"""Neighbour metrics that read each row's k-NN list as a ranked sequence (platonic-rep's
`lcs_knn` and `edit_distance_knn`): how much of the order two spaces agree on, not only which
neighbours they share. Dynamic programs over all rows at once, O(n k^2)."""

import torch

from orchestrator.alignment.arrays import Array, paired
from orchestrator.alignment.neighbours import Neighbours, check_lists, neighbours

__all__ = [
    "common_subsequence_lengths",
    "edit_distance_knn",
    "edit_distance_knn_from",
    "edit_distances",
    "lcs_knn",
    "lcs_knn_from",
]


def common_subsequence_lengths(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """(n,) length of the longest common subsequence of each row of a and b, both (n, k)."""
    n, k = a.shape
    previous = torch.zeros((n, k + 1), dtype=torch.int64)
    for i in range(k):
        current = torch.zeros_like(previous)
        for j in range(k):
            same = a[:, i] == b[:, j]
            current[:, j + 1] = torch.where(
                same, previous[:, j] + 1, torch.maximum(previous[:, j + 1], current[:, j])
            )
        previous = current
    return previous[:, k]


def edit_distances(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """(n,) Levenshtein distance between each row of a and b, both (n, k)."""
    n, k = a.shape
    previous = torch.arange(k + 1, dtype=torch.int64).expand(n, k + 1).clone()
    for i in range(k):
        current = torch.empty_like(previous)
        current[:, 0] = i + 1
        for j in range(k):
            substitute = previous[:, j] + (a[:, i] != b[:, j]).to(torch.int64)
            current[:, j + 1] = torch.minimum(
                substitute, torch.minimum(previous[:, j + 1], current[:, j]) + 1
            )
        previous = current
    return previous[:, k]


def lcs_knn_from(na: Neighbours, nb: Neighbours) -> float:
    """Mean over rows of the longest common subsequence of the two ranked lists, over k: 1.0
    when both spaces rank the same neighbours in the same order."""
    check_lists(na, nb)
    if na.constant or nb.constant:
        return 0.0
    return float(common_subsequence_lengths(na.indices, nb.indices).double().mean() / na.k)


def edit_distance_knn_from(na: Neighbours, nb: Neighbours) -> float:
    """1 - mean over rows of the edit distance between the two ranked lists, over k."""
    check_lists(na, nb)
    if na.constant or nb.constant:
        return 0.0
    return float(1 - edit_distances(na.indices, nb.indices).double().mean() / na.k)


def lcs_knn(a: Array, b: Array, k: int = 10) -> float:
    """LCS k-NN of two row-paired feature matrices (see `lcs_knn_from`)."""
    ta, tb = paired(a, b)
    return lcs_knn_from(neighbours(ta, k), neighbours(tb, k))


def edit_distance_knn(a: Array, b: Array, k: int = 10) -> float:
    """Edit-distance k-NN of two row-paired feature matrices (see `edit_distance_knn_from`)."""
    ta, tb = paired(a, b)
    return edit_distance_knn_from(neighbours(ta, k), neighbours(tb, k))
