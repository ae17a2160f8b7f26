"""Feature files for `orch align`: .npy (one matrix) or .npz (one matrix per layer)."""

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.data.matrices import check_matrix, load_arrays
from orchestrator.errors import InputError

__all__ = ["LONG_S", "compat_order", "load_layers", "score_files"]

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
    precise: bool = False,
) -> list[dict]:
    """Every metric, maximised over layer pairs, for two feature files with paired rows; each
    metric is named through `doing` as it starts (the command's heartbeat says it while it runs)
    and, when it took long, said through `notify` as it ends. `compat` 'platonic-rep' prepares,
    scores and maximises as platonic-rep does (`orchestrator.alignment.compat`), `precise` as its
    --precise does, in the order `compat_order` gives."""
    from orchestrator.alignment import AlignmentError, max_over_layers, metric_function, parse_metric
    from orchestrator.alignment.compat import compat_best_pair, compat_lists_scorer, compat_scorer

    layers_a, layers_b = load_layers(path_a), load_layers(path_b)
    rows_a, rows_b = layers_a[0][1].shape[0], layers_b[0][1].shape[0]
    if rows_a != rows_b:
        raise InputError(f"{path_a} has {rows_a} rows, {path_b} has {rows_b}: rows must be paired")
    prepared_a, prepared_b = (
        _prepared(path_a, layers_a, clamp, compat, precise),
        _prepared(path_b, layers_b, clamp, compat, precise),
    )
    swapped = compat == "platonic-rep" and compat_order(path_a, path_b) == (path_b, path_a)
    rows, pairs = [], len(prepared_a) * len(prepared_b)
    lists = _SharedLists(compat_lists_scorer if compat else _orch_lists_scorer)
    for metric in metrics:
        started = time.monotonic()
        doing(f"scoring {metric} on {rows_a:,} rows over {pairs} layer pair{'s' * (pairs > 1)}")
        try:
            parsed = parse_metric(metric)
            if compat:
                score = lists.scorer(parsed) or compat_scorer(parsed)
                y, x = (prepared_a, prepared_b) if swapped else (prepared_b, prepared_a)
                value, y_layer, x_layer = compat_best_pair(score, y, x)
                i, j = (y_layer, x_layer) if swapped else (x_layer, y_layer)
            else:
                score = lists.scorer(parsed) or metric_function(parsed)
                value, i, j = max_over_layers(score, prepared_a, prepared_b)
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


def compat_order(path_a: Path, path_b: Path) -> tuple[Path, Path]:
    """(x, y) for platonic-rep's metric(y, x): x is the language side where the sidecars of
    `orch features` say which file is text and which image, so either argument order scores
    the same; else x is the first file, as upstream's x is the first model it is given."""
    from orchestrator.extraction.output import read_sidecar

    sides = [(read_sidecar(path) or {}).get("side") for path in (path_a, path_b)]
    return (path_b, path_a) if sides == ["image", "text"] else (path_a, path_b)


def _orch_lists_scorer(metric: Any) -> Callable[[Any, Any], float] | None:
    from orchestrator.alignment import neighbour_scorer

    return neighbour_scorer(metric)


class _SharedLists:
    """The k-NN lists of each prepared layer, found once and shared by every neighbour metric
    (mutual k-NN, cycle k-NN and CKNNA at one k read the same lists: on 10^5 rows each costs
    most of a minute). `from_lists` gives a metric's function of two sides' lists."""

    def __init__(self, from_lists: Callable[[Any], Callable[[Any, Any], float] | None]) -> None:
        self._from_lists = from_lists
        self._found: dict[tuple[int, int, Any], Any] = {}

    def scorer(self, metric: Any) -> Callable[[Any, Any], float] | None:
        """The metric scored from shared lists, or None for a metric not built from them."""
        from orchestrator.alignment.arrays import paired

        if (from_lists := self._from_lists(metric)) is None:
            return None
        k = metric.k

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


def _prepared(
    path: Path, layers: list[tuple[str, np.ndarray]], clamp: bool, compat: str | None, precise: bool
) -> list:
    from orchestrator.alignment import AlignmentError, prepare
    from orchestrator.alignment.compat import platonic_rep_layers

    if compat != "platonic-rep":
        return [prepare(array.astype(np.float64), 0.95 if clamp else None) for _, array in layers]
    try:
        return platonic_rep_layers([array for _, array in layers], precise)
    except AlignmentError as error:
        raise InputError(f"{path}: {error}") from None
