"""A model's stack of blocks, and the residual stream each hands on, captured by forward hooks:
what a layer is, whatever the model's own `hidden_states` include."""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = ["block_outputs", "blocks_of"]


def blocks_of(model: Any) -> Any:
    """The model's stack of blocks: its longest ModuleList."""
    import torch

    return max((m for m in model.modules() if isinstance(m, torch.nn.ModuleList)), key=len)


@contextmanager
def block_outputs(blocks: Sequence[Any]) -> Iterator[list[Any]]:
    """The residual stream each block hands on, captured as the model runs (before any norm the
    model applies after its last block)."""
    outputs: list[Any] = []

    def keep(_module: Any, _inputs: Any, output: Any) -> None:
        outputs.append(output[0] if isinstance(output, tuple) else output)

    hooks = [block.register_forward_hook(keep) for block in blocks]
    try:
        yield outputs
    finally:
        for hook in hooks:
            hook.remove()
