"""Each neighbour score's own noise and null, from the k-NN lists a checkpoint already has.

- Eval-item standard error: resample the eval items with replacement and take the spread of the
  score. Mutual and cycle k-NN are means of per-item values, so a resample is a reweighting of
  those values and costs nothing but the draw (Heineman et al. 2025, "Signal and Noise").
- Permutation null: the score when the reference's rows are shuffled, so that no text is paired
  with its own image. A score is evidence of alignment only above this null (Groger et al. 2026:
  width and the maximum over layers inflate raw scores), so the null of a maximum over layers is
  the maximum over layers of each shuffle.

The reference never changes in a trial, so its shuffles are drawn once (`ShuffledReference`),
as are the items' resamples (`ItemDraws`); each checkpoint then looks its text lists up in them.
Both give the maximum over layers (as the trial reports it) and each layer, from the same draws.
Only metrics that are a mean over items have them (mutual and cycle k-NN); CKNNA, CKA and SVCCA
would need a full recomputation per draw, more than a checkpoint costs, and their rows store NULL.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from orchestrator.alignment.neighbours import Neighbours

__all__ = [
    "ITEM_DRAWS",
    "NULL_PERMUTATIONS",
    "ItemDraws",
    "Null",
    "RowScore",
    "ShuffledReference",
    "item_se",
    "looked_up",
    "null_of",
    "per_item",
    "permutation_nulls",
    "row_scores",
    "shuffled_lists",
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


@dataclass(frozen=True)
class RowScore:
    """A metric that is a mean over items, read from the text's adjacency table: `positions` maps
    B's lists (..., n, k) to the table entries each item looks up, `from_hits` turns the (..., n,
    k) looked-up entries into the items' values (..., n). Positions depend only on B, so a
    reference's are computed once per trial (`ShuffledReference`)."""

    positions: Callable[[torch.Tensor], torch.Tensor]
    from_hits: Callable[[torch.Tensor], torch.Tensor]


def _mutual_positions(lists: torch.Tensor) -> torch.Tensor:
    """Entry (i, j) for each B-neighbour j of i: is j among A's neighbours of i too?"""
    n = lists.shape[-2]
    return lists + torch.arange(n)[:, None] * n


def _mutual_hits(hits: torch.Tensor) -> torch.Tensor:
    """|N_A(i) ∩ N_B(i)| / k."""
    return hits.sum(dim=-1, dtype=torch.int32).double() / hits.shape[-1]


def _cycle_positions(lists: torch.Tensor) -> torch.Tensor:
    """Entry (j, i) for each B-neighbour j of i: is i among A's neighbours of j?"""
    n = lists.shape[-2]
    return lists * n + torch.arange(n)[:, None]


def _cycle_hits(hits: torch.Tensor) -> torch.Tensor:
    """1.0 where row i is among the A-neighbours of one of its B-neighbours."""
    return hits.any(dim=-1).double()


ROW_SCORES: dict[str, RowScore] = {
    "mutual_knn": RowScore(_mutual_positions, _mutual_hits),
    "cycle_knn": RowScore(_cycle_positions, _cycle_hits),
}


def row_scores(name: str) -> RowScore | None:
    """The per-item values whose mean is the metric, for metrics that are such a mean."""
    return ROW_SCORES.get(name)


def per_item(scores: RowScore, text: Neighbours, reference: torch.Tensor) -> torch.Tensor:
    """Per-item scores of one text layer against reference lists (..., n, k)."""
    return looked_up(scores, text, scores.positions(reference))


def looked_up(scores: RowScore, text: Neighbours, positions: torch.Tensor) -> torch.Tensor:
    """Per-item scores (..., n) of `text`'s table at B's `positions` (..., n, k)."""
    if text.constant:
        return torch.zeros(positions.shape[:-1], dtype=torch.float64)
    hits = _adjacency(text).index_select(0, positions.flatten()).view(positions.shape)
    return scores.from_hits(hits)


class ItemDraws:
    """`draws` bootstrap resamples of n eval items, drawn once per trial, as a (n, draws) matrix
    of each item's count over n: a resample's mean is then one column of `values @ weights`."""

    def __init__(self, n: int, draws: int = ITEM_DRAWS, seed: int = 0) -> None:
        picks = torch.randint(n, (draws, n), generator=torch.Generator().manual_seed(seed))  # (B, n)
        counts = torch.zeros(draws, n, dtype=torch.float64).scatter_add_(
            1, picks, torch.ones(draws, n, dtype=torch.float64)
        )
        self.weights = (counts / n).T  # (n, B)


def item_se(
    scores: RowScore, texts: Sequence[Neighbours], reference: Neighbours, draws: ItemDraws
) -> tuple[float, list[float]]:
    """Bootstrap standard errors over eval items: of the maximum over layers, and of each layer
    (the same draws for all)."""
    if reference.constant:
        return 0.0, [0.0] * len(texts)
    positions = scores.positions(reference.indices)
    values = torch.stack([looked_up(scores, layer, positions) for layer in texts])  # (L, n)
    resampled = values @ draws.weights  # (L, B)
    per_layer = resampled.std(dim=1, unbiased=True)
    return float(resampled.max(dim=0).values.std(unbiased=True)), [float(se) for se in per_layer]


class ShuffledReference:
    """A reference's k-NN lists after `permutations` seeded shuffles of its rows: row i of a
    shuffled matrix is row order[i] of the old, so i's neighbours are the old neighbours of
    order[i], relabelled. Kept as the table positions `scores` looks up, (P, n, k)."""

    def __init__(
        self,
        reference: Neighbours,
        scores: RowScore,
        permutations: int = NULL_PERMUTATIONS,
        seed: int = 0,
    ) -> None:
        self.positions = scores.positions(shuffled_lists(reference.indices, permutations, seed))
        self.constant = reference.constant


def shuffled_lists(
    indices: torch.Tensor, permutations: int = NULL_PERMUTATIONS, seed: int = 0
) -> torch.Tensor:
    """(P, n, k) k-NN lists of a matrix after P seeded shuffles of its rows (from its (n, k)
    lists, relabelled: no neighbour is searched again)."""
    generator = torch.Generator().manual_seed(seed)
    n = indices.shape[0]
    orders = torch.stack([torch.randperm(n, generator=generator) for _ in range(permutations)])
    inverse = torch.argsort(orders, dim=-1)
    old = indices[orders]  # (P, n, k)
    return torch.gather(inverse, -1, old.flatten(-2)).reshape(old.shape)


@dataclass(frozen=True)
class Null:
    mean: float
    p95: float  # NULL_QUANTILE of the shuffled scores


def null_of(drawn: torch.Tensor) -> Null:
    """The mean and NULL_QUANTILE of scores drawn under shuffles."""
    return Null(float(drawn.mean()), float(torch.quantile(drawn, NULL_QUANTILE)))


def permutation_nulls(
    scores: RowScore, texts: Sequence[Neighbours], shuffled: ShuffledReference
) -> tuple[Null, list[Null]]:
    """The null of the maximum over layers, and of each layer, from the same shuffles."""
    if shuffled.constant:
        zero = Null(0.0, 0.0)
        return zero, [zero] * len(texts)
    drawn = torch.stack([looked_up(scores, layer, shuffled.positions).mean(dim=-1) for layer in texts], dim=1)
    return null_of(drawn.max(dim=1).values), [null_of(drawn[:, layer]) for layer in range(len(texts))]
