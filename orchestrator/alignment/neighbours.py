"""Neighbour metrics: mutual k-NN, cycle k-NN and CKNNA, from blockwise top-k lists that never
form the n x n similarity matrix. A trial finds each side's lists once and scores many metrics
from them (`*_from`)."""

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from orchestrator.alignment.arrays import (
    BLOCK_ELEMENTS,
    AlignmentError,
    Array,
    as_matrix,
    check_k,
    is_constant,
    paired,
    unit_rows,
)

__all__ = [
    "Neighbours",
    "check_lists",
    "cknna",
    "cknna_from",
    "cycle_knn",
    "cycle_knn_from",
    "knn",
    "masked_hsic",
    "mutual_knn",
    "mutual_knn_from",
    "neighbours",
]


def knn(x: Array, k: int, block_rows: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(indices, cosine similarities), each (n, k), of every row's k nearest other rows.

    Blockwise: a block of rows against all rows at a time, never the n x n matrix. Ties go to
    the lower index (exact, by re-sorting the rare rows whose k-th value is tied).
    """
    t = unit_rows(as_matrix(x))
    n = t.shape[0]
    check_k(k, n)
    rows = block_rows or max(1, min(n, BLOCK_ELEMENTS // n))
    indices = torch.empty((n, k), dtype=torch.long, device=t.device)
    values = torch.empty((n, k), dtype=t.dtype, device=t.device)
    columns = t.T.contiguous()  # read row-wise by every block's product
    block = torch.empty((rows, n), dtype=t.dtype, device=t.device)  # one buffer for every block
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        sims = torch.mm(t[start:stop], columns, out=block[: stop - start])  # (block, n)
        sims[torch.arange(stop - start), torch.arange(start, stop)] = -torch.inf
        top_values, top_indices = torch.topk(sims, k + 1, dim=1)  # k < n: the k+1-th may be self
        # A candidate left out ties the k-th value when the k+1-th does: settle it by index.
        tied = top_values[:, k] == top_values[:, k - 1]
        top_values, top_indices = top_values[:, :k], top_indices[:, :k]
        for row in torch.nonzero(tied).flatten().tolist():
            order = _stable_order(sims[row])[:k]
            top_indices[row], top_values[row] = order, sims[row, order]
        indices[start:stop], values[start:stop] = top_indices, top_values
    return indices, values


def _stable_order(row: torch.Tensor) -> torch.Tensor:
    """Indices by descending value, ties by ascending index."""
    return torch.sort(row, descending=True, stable=True).indices


@dataclass(frozen=True)
class Neighbours:
    """Every row's k nearest other rows of one feature matrix; `constant` when it has no
    structure (every row the same), which scores 0 against anything."""

    indices: torch.Tensor  # (n, k)
    values: torch.Tensor  # (n, k) cosine similarities
    constant: bool

    @property
    def k(self) -> int:
        return self.indices.shape[1]

    @cached_property
    def self_hsic(self) -> float:
        """CKNNA's normaliser for this side: its masked HSIC with itself, the same against any
        other lists, so a reference's is computed once per trial and a checkpoint's once."""
        return masked_hsic(self.indices, self.values, self.indices, self.values, self.indices.shape[0])


def neighbours(x: Array, k: int) -> Neighbours:
    """The k-NN lists the neighbour metrics are built from; compute once, score many times."""
    t = as_matrix(x)
    check_k(k, t.shape[0])
    if is_constant(t):
        empty = torch.zeros((t.shape[0], k), dtype=torch.long)
        return Neighbours(empty, empty.to(t.dtype), constant=True)
    return Neighbours(*knn(t, k), constant=False)


def check_lists(na: Neighbours, nb: Neighbours) -> None:
    if na.indices.shape != nb.indices.shape:
        raise AlignmentError(
            f"neighbour lists differ in shape: {tuple(na.indices.shape)}, {tuple(nb.indices.shape)}"
        )


def mutual_knn_from(na: Neighbours, nb: Neighbours) -> float:
    """Mean over rows of |N_A(i) ∩ N_B(i)| / k (Huh et al. 2024, eq. for m_NN)."""
    check_lists(na, nb)
    if na.constant or nb.constant:
        return 0.0
    return float(_overlap(na.indices, nb.indices).double().sum(dim=1).mean() / na.k)


def _overlap(na: torch.Tensor, nb: torch.Tensor) -> torch.Tensor:
    """(n, k) mask: whether each of A's neighbours is also among B's."""
    return (na[:, :, None] == nb[:, None, :]).any(dim=2)


def cycle_knn_from(na: Neighbours, nb: Neighbours) -> float:
    """Fraction of rows i that reappear among A-neighbours of i's B-neighbours (Huh et al.)."""
    check_lists(na, nb)
    if na.constant or nb.constant:
        return 0.0
    n = na.indices.shape[0]
    back = na.indices[nb.indices]  # (n, k, k): A-neighbours of each B-neighbour
    hits = (back == torch.arange(n, device=back.device)[:, None, None]).flatten(1).any(dim=1)
    return float(hits.double().mean())


def cknna_from(na: Neighbours, nb: Neighbours) -> float:
    """CKNNA (Huh et al. 2024): unbiased HSIC of K and L kept only where j is among i's k
    nearest neighbours in both spaces, normalised as CKA. Built from the two top-k lists."""
    check_lists(na, nb)
    n = na.indices.shape[0]
    if n <= 3:
        raise AlignmentError(f"unbiased estimators need n > 3 rows, got {n}")
    if na.constant or nb.constant:
        return 0.0
    kl = masked_hsic(na.indices, na.values, nb.indices, nb.values, n)
    denominator = float(np.sqrt(max(na.self_hsic * nb.self_hsic, 0.0)))
    return kl / denominator if denominator > 0 else 0.0


def mutual_knn(a: Array, b: Array, k: int = 10) -> float:
    """Mutual k-NN alignment of two row-paired feature matrices (see `mutual_knn_from`)."""
    ta, tb = paired(a, b)
    return mutual_knn_from(neighbours(ta, k), neighbours(tb, k))


def cycle_knn(a: Array, b: Array, k: int = 10) -> float:
    """Cycle k-NN of two row-paired feature matrices (see `cycle_knn_from`)."""
    ta, tb = paired(a, b)
    return cycle_knn_from(neighbours(ta, k), neighbours(tb, k))


def cknna(a: Array, b: Array, k: int = 10) -> float:
    """CKNNA of two row-paired feature matrices (see `cknna_from`)."""
    ta, tb = paired(a, b)
    if ta.shape[0] <= 3:
        raise AlignmentError(f"unbiased estimators need n > 3 rows, got {ta.shape[0]}")
    return cknna_from(neighbours(ta, k), neighbours(tb, k))


def masked_hsic(na: torch.Tensor, va: torch.Tensor, nb: torch.Tensor, vb: torch.Tensor, n: int) -> float:
    """Unbiased HSIC of (mask*K, mask*L), mask_ij = [j in N_A(i) and j in N_B(i)]; sparse."""
    f64 = torch.float64
    match = na[:, :, None] == nb[:, None, :]  # (n, k, k)
    kept = match.any(dim=2)  # (n, k): A-neighbour j of i is also a B-neighbour
    rows = torch.arange(n, device=na.device)[:, None].expand_as(na)[kept]
    cols = na[kept]
    k_values = va.to(f64)[kept]
    l_values = (match.to(f64) * vb.to(f64)[:, None, :]).sum(dim=2)[kept]
    # tr(K~ L~^T... ) as in the reference: sum_ij K~_ij L~_ji needs the transposed entry of L.
    codes = rows * n + cols
    transposed = cols * n + rows
    order = torch.argsort(codes)
    sorted_codes = codes[order]
    position = torch.searchsorted(sorted_codes, transposed).clamp(max=len(codes) - 1)
    present = sorted_codes[position] == transposed if len(codes) else transposed.bool()
    l_transposed = torch.where(present, l_values[order][position], torch.zeros_like(l_values))
    trace_term = float((k_values * l_transposed).sum())
    sum_k, sum_l = float(k_values.sum()), float(l_values.sum())
    col_sum_k = torch.zeros(n, dtype=f64, device=na.device).index_add_(0, cols, k_values)
    row_sum_l = torch.zeros(n, dtype=f64, device=na.device).index_add_(0, rows, l_values)
    cross = float(col_sum_k @ row_sum_l)
    value = trace_term + sum_k * sum_l / ((n - 1) * (n - 2)) - 2 * cross / (n - 2)
    return value / (n * (n - 3))
