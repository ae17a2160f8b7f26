"""platonic-rep's scoring procedure (Huh et al. 2024, `measure_alignment.py` as its current code
runs by default), for `orch align --compat platonic-rep`. It differs from orch's own in two ways:
- one clamp threshold for a model's whole layer stack, the mean over rows of each row's 95th
  percentile of |x| across every layer (orch clamps each layer at its own percentile);
- the best layer pair must score above 0: where none does, the score is 0 and no pair is named
  (orch reports the best pair whatever its sign).
Rows are then L2-normalised per layer, as in orch."""

from collections.abc import Sequence

import numpy as np
import torch

from orchestrator.alignment.arrays import AlignmentError, unit_rows

__all__ = ["PLATONIC_REP_FLOOR", "platonic_rep_layers"]

PLATONIC_REP_FLOOR = 0.0  # a pair must beat this to count as the best
QUANTILE = 0.95


def platonic_rep_layers(layers: Sequence[np.ndarray]) -> list[torch.Tensor]:
    """A model's layers (rows x width each), clamped at the stack's one threshold and L2-normalised."""
    widths = {layer.shape for layer in layers}
    if len(widths) > 1:
        raise AlignmentError(
            f"--compat platonic-rep stacks a model's layers, which must share a shape ({sorted(widths)})"
        )
    stack = np.stack([np.abs(layer.astype(np.float64)) for layer in layers], axis=1)  # rows x layers x width
    threshold = float(np.quantile(stack.reshape(stack.shape[0], -1), QUANTILE, axis=1).mean())
    return [
        unit_rows(torch.from_numpy(layer.astype(np.float64)).clamp(-threshold, threshold)) for layer in layers
    ]
