"""Representation-alignment metrics on two row-paired feature matrices (numpy or torch).

Definitions follow Huh et al., "The Platonic Representation Hypothesis" (2024), and its code:
cosine similarity on L2-normalised rows, self excluded from its own neighbours. Everything is
pure: arrays in, floats out, computed in the inputs' precision (float64 in, float64 out).

Scalability: nearest neighbours come from a blockwise top-k that never forms the n x n matrix
(memory O(block x n)); linear and unbiased CKA, and SVCCA, stream over rows with O(d^2) memory.

Decisions:
- k >= n, fewer than 2 rows, rows that differ in count, NaN or inf: `AlignmentError`.
- Unbiased estimators (cka_unbiased, cknna) need n > 3.
- A constant feature matrix (every row the same) has no structure: every metric gives 0.0.
- Ties in similarity go to the lower row index, so results never depend on the backend's sort.
"""

from collections.abc import Callable, Sequence

import numpy as np

from orchestrator.alignment.arrays import AlignmentError, Array, paired, prepare
from orchestrator.alignment.kernels import LinearKernel, cka, cka_of, cka_unbiased, svcca
from orchestrator.alignment.neighbours import (
    Neighbours,
    cknna,
    cknna_from,
    cycle_knn,
    cycle_knn_from,
    knn,
    mutual_knn,
    mutual_knn_from,
    neighbours,
)
from orchestrator.alignment.retrieval import (
    mapped_retrieval,
    retrieval,
    retrieval_i2t,
    retrieval_t2i,
    rotation_alignment,
)
from orchestrator.alignment.sequences import (
    edit_distance_knn,
    edit_distance_knn_from,
    lcs_knn,
    lcs_knn_from,
)
from orchestrator.sweepfile.catalog import METRICS, MetricName, parse_metric

__all__ = [
    "AlignmentError",
    "LinearKernel",
    "Neighbours",
    "cka",
    "cka_of",
    "cka_unbiased",
    "cknna",
    "cknna_from",
    "cycle_knn",
    "cycle_knn_from",
    "knn",
    "linear_kernel",
    "mapped_retrieval",
    "max_over_layers",
    "metric_function",
    "mutual_knn",
    "mutual_knn_from",
    "neighbour_metric",
    "neighbour_scorer",
    "neighbours",
    "parse_metric",
    "prepare",
    "retrieval",
    "retrieval_i2t",
    "retrieval_t2i",
    "rotation_alignment",
    "scorer",
    "svcca",
]


def _parsed(name: MetricName | str) -> MetricName:
    """A metric as parsed once where it was read; a name as written is parsed here."""
    return name if isinstance(name, MetricName) else parse_metric(name)


def neighbour_scorer(name: MetricName | str) -> Callable[[Neighbours, Neighbours], float] | None:
    """The function that scores two k-NN lists for a metric built from them, else None."""
    return _FROM_NEIGHBOURS.get(_parsed(name).name)


def neighbour_metric(name: MetricName | str) -> tuple[Callable[[Neighbours, Neighbours], float], int] | None:
    """(the function that scores two k-NN lists, its k) for a metric built from them, else None."""
    parsed = _parsed(name)
    scorer = _FROM_NEIGHBOURS.get(parsed.name)
    return None if scorer is None or parsed.k is None else (scorer, parsed.k)


def linear_kernel(name: MetricName | str) -> bool | None:
    """For a metric scored from two `LinearKernel` sides, whether its estimator is unbiased;
    else None."""
    return _LINEAR_KERNELS.get(_parsed(name).name)


def scorer(name: MetricName | str) -> Callable[..., float]:
    """A metric's own function: (a, b), (a, b, k), or (text, image, k, text_fit, image_fit)."""
    return _SCORERS[_parsed(name).name]


def metric_function(name: MetricName | str) -> Callable[[Array, Array], float]:
    """The scorer for a metric name, e.g. 'mutual_knn@10' or 'cka', on two row-paired matrices.

    A metric that needs a map (retrieval) fits it on the first half of the rows and scores the
    second half, so no pair is scored by a map that saw it.
    """
    parsed = _parsed(name)
    score = _SCORERS[parsed.name]
    if parsed.metric.needs_map:

        def split_and_score(a: Array, b: Array) -> float:
            ta, tb = paired(a, b)
            half = ta.shape[0] // 2
            return score(ta[half:], tb[half:], parsed.k, ta[:half], tb[:half])

        return split_and_score
    if parsed.k is None:
        return score
    return lambda a, b: score(a, b, parsed.k)


def max_over_layers(
    score: Callable[[Array, Array], float],
    layers_a: Sequence[Array],
    layers_b: Sequence[Array],
    floor: float = -np.inf,
) -> tuple[float, int, int]:
    """The best score over every (layer of A, layer of B) pair, and which pair gave it; where no
    pair beats `floor`, the floor and (-1, -1)."""
    best = (floor, -1, -1)
    for i, layer_a in enumerate(layers_a):
        for j, layer_b in enumerate(layers_b):
            value = score(layer_a, layer_b)
            if value > best[0]:
                best = (value, i, j)
    return best


# Each catalog entry's functions, by reference.
_SCORERS: dict[str, Callable[..., float]] = {
    "mutual_knn": mutual_knn,
    "cycle_knn": cycle_knn,
    "lcs_knn": lcs_knn,
    "edit_distance_knn": edit_distance_knn,
    "cknna": cknna,
    "cka": cka,
    "cka_unbiased": cka_unbiased,
    "svcca": svcca,
    "retrieval_t2i": retrieval_t2i,
    "retrieval_i2t": retrieval_i2t,
}
_FROM_NEIGHBOURS: dict[str, Callable[[Neighbours, Neighbours], float]] = {
    "mutual_knn": mutual_knn_from,
    "cycle_knn": cycle_knn_from,
    "lcs_knn": lcs_knn_from,
    "edit_distance_knn": edit_distance_knn_from,
    "cknna": cknna_from,
}

_LINEAR_KERNELS: dict[str, bool] = {"cka": False, "cka_unbiased": True}


def _check_catalog() -> None:
    """A metric the catalog names without its functions here fails at import, not in a trial."""
    neighbour_metrics = {name for name, metric in METRICS.items() if metric.from_neighbours}
    missing = (set(METRICS) - set(_SCORERS)) | (neighbour_metrics - set(_FROM_NEIGHBOURS))
    if missing:
        raise ImportError(f"orchestrator.alignment has no function for the catalog's {sorted(missing)}")


_check_catalog()
