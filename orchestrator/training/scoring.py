"""Scoring a checkpoint's eval embeddings against every reference with every metric.

The reference side never changes during a trial, so `CheckpointScorer` prepares each reference
and finds its nearest neighbours once; each checkpoint then finds its own neighbours once per
layer and k, and every neighbour metric reuses them, for its value, its eval-item standard error
and its permutation null (see `orchestrator.alignment.noise`). What a score divides by, each
side's HSIC with itself (CKA's `LinearKernel`, CKNNA's `Neighbours.self_hsic`), is likewise
computed once per reference per trial and once per layer per checkpoint, not once per pair.
"""

import torch

from orchestrator.alignment import (
    LinearKernel,
    Neighbours,
    cka_of,
    linear_kernel,
    neighbour_scorer,
    neighbours,
    prepare,
    scorer,
)
from orchestrator.alignment.noise import (
    ItemDraws,
    ShuffledReference,
    item_se,
    permutation_nulls,
    row_scores,
)
from orchestrator.data.stream import EvalSet
from orchestrator.sweepfile import EvalConfig
from orchestrator.sweepfile.catalog import MetricName, parse_metric
from orchestrator.training.platonic_scoring import PlatonicRepScorer
from orchestrator.training.score import Score

__all__ = ["CheckpointScorer", "Score", "scorer_for"]


class CheckpointScorer:
    """Scores for one trial's checkpoints: max over layers and per layer, per reference."""

    def __init__(
        self,
        eval_set: EvalSet,
        metrics: tuple[str, ...],
        references: tuple[str, ...] | None,
        noise: bool = True,
    ) -> None:
        """`noise=False` skips the item SE and permutation null (bench/trainer.py times both ways)."""
        self.metrics = [parse_metric(metric) for metric in metrics]
        self.references = references or tuple(eval_set.references)
        self.targets = {name: prepare(eval_set.references[name]) for name in self.references}
        self.fit_targets = {name: prepare(eval_set.retrieval_references[name]) for name in self.references}
        self.rows = len(eval_set.tokens)
        ks = {m.k for m in self.metrics if m.metric.from_neighbours}
        self.target_neighbours = {(name, k): neighbours(t, k) for name, t in self.targets.items() for k in ks}
        estimators = {linear_kernel(m) for m in self.metrics} - {None}
        self.target_kernels = {
            (name, unbiased): LinearKernel(t, unbiased)
            for name, t in self.targets.items()
            for unbiased in estimators
        }
        self.noise = noise
        noisy = [m for m in self.metrics if noise and row_scores(m.name)]
        self.shuffled = {
            (name, str(m)): ShuffledReference(self.target_neighbours[(name, m.k)], row_scores(m.name))
            for name in self.references
            for m in noisy
        }
        self.item_draws = ItemDraws(self.rows)

    @property
    def needs_retrieval_set(self) -> bool:
        return any(m.metric.needs_map for m in self.metrics)

    def score(self, layers: list[torch.Tensor], retrieval_layers: list[torch.Tensor]) -> list[Score]:
        prepared = [prepare(layer) for layer in layers]
        fitted = [prepare(layer) for layer in retrieval_layers]
        own: dict[int, list[Neighbours]] = {}
        kernels: dict[bool, list[LinearKernel]] = {}
        rows = []
        for reference in self.references:
            for metric in self.metrics:
                if metric.metric.from_neighbours:
                    if metric.k not in own:
                        own[metric.k] = [neighbours(layer, metric.k) for layer in prepared]
                    rows += self._from_lists(metric, reference, own[metric.k])
                    continue
                unbiased = linear_kernel(metric)
                if unbiased is not None:
                    if unbiased not in kernels:
                        kernels[unbiased] = [LinearKernel(layer, unbiased) for layer in prepared]
                    target = self.target_kernels[(reference, unbiased)]
                    per_layer = [cka_of(layer, target) for layer in kernels[unbiased]]
                else:
                    per_layer = [
                        self._one(metric, reference, layer, fitted[i] if fitted else None)
                        for i, layer in enumerate(prepared)
                    ]
                chance = self._chance(metric)
                rows.append(Score(str(metric), reference, max(per_layer), chance=chance))
                rows += [
                    Score(f"{metric}/layer{i}", reference, value, chance=chance)
                    for i, value in enumerate(per_layer)
                ]
        return rows

    def _chance(self, metric: MetricName) -> float | None:
        chance = metric.metric.chance
        return None if chance is None else chance(metric.k, self.rows)

    def _from_lists(self, metric: MetricName, reference: str, texts: list[Neighbours]) -> list[Score]:
        """The max over layers and each layer; with the item SE and permutation null where the
        metric is a mean over items."""
        target = self.target_neighbours[(reference, metric.k)]
        score, per_item = neighbour_scorer(metric), row_scores(metric.name) if self.noise else None
        values = [score(layer, target) for layer in texts]
        names = [str(metric), *(f"{metric}/layer{i}" for i in range(len(texts)))]
        chance = self._chance(metric)
        if per_item is None:
            return [
                Score(n, reference, v, chance=chance)
                for n, v in zip(names, [max(values), *values], strict=True)
            ]
        se, layer_se = item_se(per_item, texts, target, self.item_draws)
        null, layer_nulls = permutation_nulls(per_item, texts, self.shuffled[(reference, str(metric))])
        return [
            Score(name, reference, value, se=error, null_mean=n.mean, null_p95=n.p95, chance=chance)
            for name, value, error, n in zip(
                names, [max(values), *values], [se, *layer_se], [null, *layer_nulls], strict=True
            )
        ]

    def _one(
        self, metric: MetricName, reference: str, layer: torch.Tensor, fit_layer: torch.Tensor | None
    ) -> float:
        score = scorer(metric)
        if metric.metric.needs_map:
            return score(layer, self.targets[reference], metric.k, fit_layer, self.fit_targets[reference])
        return score(layer, self.targets[reference], *([] if metric.k is None else [metric.k]))


def scorer_for(
    eval_set: EvalSet, evaluation: EvalConfig, noise: bool = True
) -> "CheckpointScorer | PlatonicRepScorer":
    """The scorer of a trial's checkpoints, by its sweep's `eval.scoring`."""
    kind = PlatonicRepScorer if evaluation.scoring == "platonic-rep" else CheckpointScorer
    return kind(eval_set, evaluation.metrics, evaluation.references, noise)
