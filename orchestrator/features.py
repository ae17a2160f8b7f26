"""Feature files for `orch align`: .npy (one matrix) or .npz (one matrix per layer)."""

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.alignment.compat import PLATONIC_REP_FLOOR
from orchestrator.data.matrices import check_matrix, load_arrays
from orchestrator.errors import InputError

__all__ = ["LONG_S", "load_layers", "score_files"]

LONG_S = 5.0  # a metric that took longer is said when it ends


def load_layers(path: Path) -> list[tuple[str, np.ndarray]]:
    """(layer name, rows x width) pairs, every layer with the same rows; every problem is an
    InputError naming the file."""
    layers = load_arrays(path)
    checked = [
        (name, check_matrix(array, str(path) if len(layers) == 1 else f"{path}[{name}]"))
        for name, array in layers
    ]
    counts = {array.shape[0] for _, array in checked}
    if len(counts) > 1:
        raise InputError(f"{path}: layers hold different row counts {sorted(counts)}; remake the file")
    return checked


def score_files(
    path_a: Path,
    path_b: Path,
    metrics: Sequence[str],
    clamp: bool,
    notify: Callable[[str], None] = lambda text: None,
    compat: str | None = None,
    doing: Callable[[str], None] = lambda text: None,
) -> list[dict]:
    """Every metric, maximised over layer pairs, for two feature files with paired rows; each
    metric is named through `doing` as it starts (the command's heartbeat says it while it runs)
    and, when it took long, said through `notify` as it ends. `compat` 'platonic-rep' prepares
    and maximises as platonic-rep does (`orchestrator.alignment.compat`)."""
    from orchestrator.alignment import AlignmentError, max_over_layers, metric_function

    layers_a, layers_b = load_layers(path_a), load_layers(path_b)
    rows_a, rows_b = layers_a[0][1].shape[0], layers_b[0][1].shape[0]
    if rows_a != rows_b:
        raise InputError(f"{path_a} has {rows_a} rows, {path_b} has {rows_b}: rows must be paired")
    prepared_a, prepared_b = (
        _prepared(path_a, layers_a, clamp, compat),
        _prepared(path_b, layers_b, clamp, compat),
    )
    floor = PLATONIC_REP_FLOOR if compat == "platonic-rep" else -np.inf
    rows, lists = [], _SharedLists()
    pairs = len(prepared_a) * len(prepared_b)
    for metric in metrics:
        started = time.monotonic()
        doing(f"scoring {metric} on {rows_a:,} rows over {pairs} layer pair{'s' * (pairs > 1)}")
        try:
            score = lists.scorer(metric) or metric_function(metric)
            value, i, j = max_over_layers(score, prepared_a, prepared_b, floor)
        except (ValueError, AlignmentError) as error:
            raise InputError(f"--metric {metric}: {error}") from None
        if (took := time.monotonic() - started) >= LONG_S:
            notify(f"{metric}: {value:.4g} ({took:.0f} s)")
        named = i >= 0  # under platonic-rep's floor no pair may have beaten 0
        rows.append(
            {
                "metric": metric,
                "value": float(value),
                "layer_a": layers_a[i][0] if named else None,
                "layer_b": layers_b[j][0] if named else None,
            }
        )
    return rows


class _SharedLists:
    """The k-NN lists of each prepared layer, found once and shared by every neighbour metric
    (mutual k-NN, cycle k-NN and CKNNA at one k read the same lists: on 10^5 rows each costs
    most of a minute)."""

    def __init__(self) -> None:
        self._found: dict[tuple[int, int, Any], Any] = {}

    def scorer(self, metric: str) -> Callable[[Any, Any], float] | None:
        """The metric scored from shared lists, or None for a metric not built from them."""
        from orchestrator.alignment import neighbour_metric
        from orchestrator.alignment.arrays import paired

        if (found := neighbour_metric(metric)) is None:
            return None
        from_lists, k = found

        def score(a: Any, b: Any) -> float:
            ta, tb = paired(a, b)  # one dtype for both, as the metric's own function reads them
            return from_lists(self._lists(a, ta, k), self._lists(b, tb, k))

        return score

    def _lists(self, layer: Any, rows: Any, k: int) -> Any:
        from orchestrator.alignment import neighbours

        key = (id(layer), k, rows.dtype)  # the prepared layers live as long as the scoring
        if key not in self._found:
            self._found[key] = neighbours(rows, k)
        return self._found[key]


def _prepared(path: Path, layers: list[tuple[str, np.ndarray]], clamp: bool, compat: str | None) -> list:
    from orchestrator.alignment import AlignmentError, prepare
    from orchestrator.alignment.compat import platonic_rep_layers

    if compat != "platonic-rep":
        return [prepare(array.astype(np.float64), 0.95 if clamp else None) for _, array in layers]
    try:
        return platonic_rep_layers([array for _, array in layers])
    except AlignmentError as error:
        raise InputError(f"{path}: {error}") from None
