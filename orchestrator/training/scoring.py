"""Scoring a checkpoint's eval embeddings against every reference with every metric.

The reference side never changes during a trial, so `CheckpointScorer` prepares each reference
and finds its nearest neighbours once; each checkpoint then finds its own neighbours once per
layer and k, and every neighbour metric reuses them.
"""

import torch

from orchestrator.alignment import Neighbours, neighbour_scorer, neighbours, prepare, scorer
from orchestrator.data.stream import EvalSet
from orchestrator.spec.catalog import MetricName, parse_metric

__all__ = ["CheckpointScorer"]


class CheckpointScorer:
    """(metric, reference, value) rows for one trial's checkpoints: max over layers and per layer."""

    def __init__(
        self, eval_set: EvalSet, metrics: tuple[str, ...], references: tuple[str, ...] | None
    ) -> None:
        self.metrics = [parse_metric(metric) for metric in metrics]
        self.references = references or tuple(eval_set.references)
        self.targets = {name: prepare(eval_set.references[name]) for name in self.references}
        self.fit_targets = {name: prepare(eval_set.retrieval_references[name]) for name in self.references}
        ks = {m.k for m in self.metrics if m.metric.from_neighbours}
        self.target_neighbours = {(name, k): neighbours(t, k) for name, t in self.targets.items() for k in ks}

    @property
    def needs_retrieval_set(self) -> bool:
        return any(m.metric.needs_map for m in self.metrics)

    def score(
        self, layers: list[torch.Tensor], retrieval_layers: list[torch.Tensor]
    ) -> list[tuple[str, str, float]]:
        prepared = [prepare(layer) for layer in layers]
        fitted = [prepare(layer) for layer in retrieval_layers]
        own: dict[tuple[int, int], Neighbours] = {}
        rows = []
        for reference in self.references:
            for metric in self.metrics:
                per_layer = [
                    self._one(metric, reference, i, layer, fitted[i] if fitted else None, own)
                    for i, layer in enumerate(prepared)
                ]
                rows.append((str(metric), reference, max(per_layer)))
                rows += [(f"{metric}/layer{i}", reference, value) for i, value in enumerate(per_layer)]
        return rows

    def _one(
        self,
        metric: MetricName,
        reference: str,
        index: int,
        layer: torch.Tensor,
        fit_layer: torch.Tensor | None,
        own: dict[tuple[int, int], Neighbours],
    ) -> float:
        from_lists = neighbour_scorer(str(metric))
        if from_lists is not None:
            if (index, metric.k) not in own:
                own[(index, metric.k)] = neighbours(layer, metric.k)
            return from_lists(own[(index, metric.k)], self.target_neighbours[(reference, metric.k)])
        score = scorer(str(metric))
        if metric.metric.needs_map:
            return score(layer, self.targets[reference], metric.k, fit_layer, self.fit_targets[reference])
        return score(layer, self.targets[reference], *([] if metric.k is None else [metric.k]))
