"""Each neighbour score's own noise and null, from the k-NN lists a checkpoint already has.

- Eval-item standard error: resample the eval items with replacement and take the spread of the
  score. Mutual and cycle k-NN are means of per-item values, so a resample is a reweighting of
  those values and costs nothing but the draw (Heineman et al. 2025, "Signal and Noise").
- Permutation null: the score when the reference's rows are shuffled, so that no text is paired
  with its own image. A score is evidence of alignment only above this null (Groger et al. 2026:
  width and the maximum over layers inflate raw scores), so the null of a maximum over layers is
  the maximum over layers of each shuffle.

The reference never changes in a trial, so its shuffles are drawn once (`ShuffledReference`);
each checkpoint then looks its text lists up in them. Both give the maximum over layers (as the
trial reports it) and each layer, from the same draws. Only metrics that are a mean over items
have them (mutual and cycle k-NN); CKNNA, CKA and SVCCA would need a full recomputation per
draw, more than a checkpoint costs, and their rows store NULL.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from orchestrator.alignment.neighbours import Neighbours

__all__ = [
    "ITEM_DRAWS",
    "NULL_PERMUTATIONS",
    "Null",
    "ShuffledReference",
    "item_se",
    "per_item",
    "permutation_nulls",
    "row_scores",
]

ITEM_DRAWS = 200
NULL_PERMUTATIONS = 100
NULL_QUANTILE = 0.95


def _adjacency(text: Neighbours) -> torch.Tensor:
    """(n * n,) flat 0/1 table: entry i * n + j is 1 when j is among row i's neighbours."""
    n = text.indices.shape[0]
    table = torch.zeros(n * n, dtype=torch.uint8)
    table[(torch.arange(n)[:, None] * n + text.indices).flatten()] = 1
    return table


def _mutual_rows(table: torch.Tensor, lists: torch.Tensor) -> torch.Tensor:
    """|N_A(i) ∩ N_B(i)| / k for B's lists (..., n, k): (..., n)."""
    n, k = lists.shape[-2:]
    hits = table[lists + torch.arange(n)[:, None] * n]  # (..., n, k): B's neighbour is A's too
    return hits.sum(dim=-1, dtype=torch.int32).double() / k


def _cycle_rows(table: torch.Tensor, lists: torch.Tensor) -> torch.Tensor:
    """1.0 where row i is among the A-neighbours of one of its B-neighbours: (..., n)."""
    n = lists.shape[-2]
    hits = table[lists * n + torch.arange(n)[:, None]]  # (..., n, k): i in A's list of j
    return hits.any(dim=-1).double()


RowScores = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
ROW_SCORES: dict[str, RowScores] = {"mutual_knn": _mutual_rows, "cycle_knn": _cycle_rows}


def row_scores(name: str) -> RowScores | None:
    """The per-item values whose mean is the metric, for metrics that are such a mean."""
    return ROW_SCORES.get(name)


def per_item(scores: RowScores, text: Neighbours, reference: torch.Tensor) -> torch.Tensor:
    """Per-item scores of one text layer against reference lists (..., n, k)."""
    if text.constant:
        return torch.zeros(reference.shape[:-1], dtype=torch.float64)
    return scores(_adjacency(text), reference)


def item_se(
    scores: RowScores,
    texts: Sequence[Neighbours],
    reference: Neighbours,
    draws: int = ITEM_DRAWS,
    seed: int = 0,
) -> tuple[float, list[float]]:
    """Bootstrap standard errors over eval items: of the maximum over layers, and of each layer
    (the same draws for all)."""
    if reference.constant:
        return 0.0, [0.0] * len(texts)
    values = torch.stack([per_item(scores, layer, reference.indices) for layer in texts])  # (L, n)
    n = values.shape[1]
    picks = torch.randint(n, (draws, n), generator=torch.Generator().manual_seed(seed))  # (B, n)
    resampled = values[:, picks].mean(dim=2)  # (L, B)
    per_layer = resampled.std(dim=1, unbiased=True)
    return float(resampled.max(dim=0).values.std(unbiased=True)), [float(se) for se in per_layer]


class ShuffledReference:
    """A reference's k-NN lists after `permutations` seeded shuffles of its rows: row i of a
    shuffled matrix is row order[i] of the old, so i's neighbours are the old neighbours of
    order[i], relabelled."""

    def __init__(self, reference: Neighbours, permutations: int = NULL_PERMUTATIONS, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        n = reference.indices.shape[0]
        orders = torch.stack([torch.randperm(n, generator=generator) for _ in range(permutations)])
        inverse = torch.argsort(orders, dim=-1)
        old = reference.indices[orders]  # (P, n, k)
        self.lists = torch.gather(inverse, -1, old.flatten(-2)).reshape(old.shape)  # (P, n, k)
        self.constant = reference.constant


@dataclass(frozen=True)
class Null:
    mean: float
    p95: float  # NULL_QUANTILE of the shuffled scores


def _null(drawn: torch.Tensor) -> Null:
    return Null(float(drawn.mean()), float(torch.quantile(drawn, NULL_QUANTILE)))


def permutation_nulls(
    scores: RowScores, texts: Sequence[Neighbours], shuffled: ShuffledReference
) -> tuple[Null, list[Null]]:
    """The null of the maximum over layers, and of each layer, from the same shuffles."""
    if shuffled.constant:
        zero = Null(0.0, 0.0)
        return zero, [zero] * len(texts)
    drawn = torch.stack([per_item(scores, layer, shuffled.lists).mean(dim=-1) for layer in texts], dim=1)
    return _null(drawn.max(dim=1).values), [_null(drawn[:, layer]) for layer in range(len(texts))]
