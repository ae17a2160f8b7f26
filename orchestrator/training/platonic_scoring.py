"""Scoring a checkpoint as platonic-rep does (`eval.scoring: platonic-rep`), so that a trial's
value is the number `orch align --compat platonic-rep` gives on its features and the reference's
layer stack (`orchestrator.alignment.compat`): one clamp for the checkpoint's layers and one for
the reference's, L2 rows, upstream's metric(reference layer, text layer) for every pair, and the
best pair above 0, named in two rows of its own (`/best_layer`, `/best_reference_layer`; -1 where
no pair is above 0). Each text layer's row (`/layer{i}`) is its best over the reference's layers.

The eval-item SE and the permutation null of mutual and cycle k-NN follow the same procedure: a
resample or a shuffle is scored on every layer pair and its best above 0 taken, so the maximum
over pairs is in the null as it is in the score. The shuffles permute the checkpoint's rows (the
same permutation for all its layers): for a mean over items that is the null of shuffling the
reference, whose lists, found once per trial, are then never searched again.
"""

import numpy as np
import torch

from orchestrator.alignment import Neighbours, neighbours, parse_metric
from orchestrator.alignment.compat import (
    PLATONIC_REP_FLOOR,
    best_pair,
    compat_lists_scorer,
    compat_scorer,
    platonic_rep_layers,
)
from orchestrator.alignment.noise import (
    ItemDraws,
    Null,
    RowScore,
    looked_up,
    null_of,
    row_scores,
    shuffled_lists,
)
from orchestrator.data.stream import EvalSet
from orchestrator.sweepfile.catalog import MetricName
from orchestrator.training.score import Score

__all__ = ["BEST_LAYER", "BEST_REFERENCE_LAYER", "PlatonicRepScorer"]

BEST_LAYER, BEST_REFERENCE_LAYER = "best_layer", "best_reference_layer"


class PlatonicRepScorer:
    """Scores for one trial's checkpoints against layer-stack references, as platonic-rep scores."""

    needs_retrieval_set = False  # platonic-rep has no retrieval metric (the sweep file refuses one)

    def __init__(
        self,
        eval_set: EvalSet,
        metrics: tuple[str, ...],
        references: tuple[str, ...] | None,
        noise: bool = True,
    ) -> None:
        self.metrics = [parse_metric(metric) for metric in metrics]
        self.references = references or tuple(eval_set.references)
        self.stacks = {
            name: platonic_rep_layers(_layers(eval_set.references[name])) for name in self.references
        }
        ks = {m.k for m in self.metrics if compat_lists_scorer(m) is not None}
        self.reference_lists = {
            (name, k): [neighbours(layer, k) for layer in stack]
            for name, stack in self.stacks.items()
            for k in ks
        }
        self.noise = noise
        self.item_draws = ItemDraws(len(eval_set.tokens))

    def score(self, layers: list[torch.Tensor], retrieval_layers: list[torch.Tensor]) -> list[Score]:
        texts = platonic_rep_layers([layer.numpy() for layer in layers])
        lists: dict[int, list[Neighbours]] = {}
        moved: dict[int, list[torch.Tensor]] = {}  # each layer's lists, shuffled (one seed: one shuffle)
        rows = []
        for reference in self.references:
            for metric in self.metrics:
                from_lists = compat_lists_scorer(metric)
                if from_lists is None:
                    score = compat_scorer(metric)
                    grid = [[score(y, x) for x in texts] for y in self.stacks[reference]]
                    rows += _rows(metric, reference, grid)
                    continue
                if metric.k not in lists:
                    lists[metric.k] = [neighbours(text, metric.k) for text in texts]
                ys, xs = self.reference_lists[(reference, metric.k)], lists[metric.k]
                grid = [[from_lists(y, x) for x in xs] for y in ys]
                per_item = row_scores(metric.name) if self.noise else None
                if per_item and metric.k not in moved:  # every reference and metric reads the same shuffles
                    moved[metric.k] = [shuffled_lists(x.indices) for x in xs]
                noise = self._noise(per_item, ys, xs, moved[metric.k]) if per_item else None
                rows += _rows(metric, reference, grid, noise)
        return rows

    def _noise(
        self, scores: RowScore, ys: list[Neighbours], xs: list[Neighbours], moved: list[torch.Tensor]
    ) -> tuple[float, Null]:
        """The SE over eval items and the permutation null of the best pair above 0 (`moved`: each
        text layer's lists under the shuffles)."""
        values = torch.stack([looked_up(scores, y, scores.positions(x.indices)) for y in ys for x in xs])
        resampled = (values @ self.item_draws.weights).max(dim=0).values.clamp_min(PLATONIC_REP_FLOOR)
        shuffled = [scores.positions(lists) for lists in moved]
        drawn = torch.stack([looked_up(scores, y, s).mean(dim=-1) for y in ys for s in shuffled], dim=1)
        null = null_of(drawn.max(dim=1).values.clamp_min(PLATONIC_REP_FLOOR))
        return float(resampled.std(unbiased=True)), null


def _rows(
    metric: MetricName, reference: str, grid: list[list[float]], noise: tuple[float, Null] | None = None
) -> list[Score]:
    """The best pair's value (with its noise), each text layer's best, and the pair named."""
    value, y, x = best_pair(grid)
    se, null = noise if noise else (None, None)
    head = Score(
        str(metric),
        reference,
        value,
        se=se,
        null_mean=null.mean if null else None,
        null_p95=null.p95 if null else None,
    )
    per_layer = [
        Score(f"{metric}/layer{i}", reference, best_pair([[row[i]] for row in grid])[0])
        for i in range(len(grid[0]))
    ]
    named = [
        Score(f"{metric}/{BEST_LAYER}", reference, float(x)),
        Score(f"{metric}/{BEST_REFERENCE_LAYER}", reference, float(y)),
    ]
    return [head, *per_layer, *named]


def _layers(reference: np.ndarray | tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    return reference if isinstance(reference, tuple) else (reference,)
