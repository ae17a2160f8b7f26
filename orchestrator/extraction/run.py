"""One extraction: the model loaded on its device, the rows through it (`text`, `images`), and
the layers asked for kept, in the manifest's row order."""

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from orchestrator.errors import InputError
from orchestrator.extraction.blocks import blocks_of
from orchestrator.extraction.images import image_features
from orchestrator.extraction.manifest import Item
from orchestrator.extraction.models import image_settings, load_model, load_tokenizer
from orchestrator.extraction.options import Extraction, Options
from orchestrator.extraction.text import text_features

__all__ = ["extract"]


def extract(
    folder: Path, items: Sequence[Item], options: Options, notify: Callable[[str], None]
) -> Extraction:
    import torch

    device = _device(options.device) if options.device_map is None else None
    model = load_model(folder, options.side, options.dtype, options.device_map, options.max_memory)
    # every block's output, and the embeddings before them for text: checked before any row runs
    _check_layers(options.layers, len(blocks_of(model)) + (options.side == "text"))
    if device is not None:
        model.to(device)
    started = time.monotonic()
    with torch.inference_mode():
        if options.side == "text":
            found = text_features(model, load_tokenizer(folder), items, options, notify)
        else:
            found = image_features(
                model,
                image_settings(folder, model.config, options.compat, options.crop_pct),
                items,
                options,
                notify,
            )
    found.device = str(device or next(model.parameters()).device)
    found.seconds = time.monotonic() - started
    return _keep(found, options.layers)


def _device(asked: str) -> Any:
    import torch

    if asked == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(asked)
    except RuntimeError:
        raise InputError(f"--device {asked}: not a device (write cpu, cuda, cuda:1 or auto)") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"--device {asked}: this machine has no CUDA device (use --device cpu)")
    return device


def _check_layers(layers: tuple[int, ...] | None, count: int) -> None:
    for index in layers or ():
        if not -count <= index < count:
            raise InputError(
                f"--layers {index}: the model has {count} layers (0..{count - 1}, or -1 for the last)"
            )


def _keep(found: Extraction, layers: tuple[int, ...] | None) -> Extraction:
    """Only the layers asked for, in depth order."""
    if layers is None:
        return found
    chosen = sorted({index % len(found.layers) for index in layers})
    found.layers = [found.layers[i] for i in chosen]
    found.names = [found.names[i] for i in chosen]
    return found
