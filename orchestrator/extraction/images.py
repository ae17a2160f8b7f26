"""Images through a vision model at its native resolution: every block's CLS token, taken from
the block's own output (before the model's final norm)."""

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from orchestrator.errors import InputError
from orchestrator.extraction.blocks import block_outputs, blocks_of
from orchestrator.extraction.manifest import Item
from orchestrator.extraction.options import Extraction, Options

__all__ = ["MAX_PIXELS", "image_features", "pixels"]

MAX_PIXELS = 64_000_000  # 8000 x 8000: read from the header, before a byte is decoded


def image_features(
    model: Any, settings: dict, items: Sequence[Item], options: Options, notify: Callable[[str], None]
) -> Extraction:
    import torch

    device = next(model.parameters()).device
    dtype = next(model.parameters()).dtype
    blocks = blocks_of(model)
    cls: list[list[Any]] = [[] for _ in blocks]
    for start in range(0, len(items), options.batch_images):
        chunk = items[start : start + options.batch_images]
        batch = torch.stack([pixels(item, settings) for item in chunk]).to(device=device, dtype=dtype)
        with block_outputs(blocks) as outputs:
            model(pixel_values=batch)
        for layer, hidden in enumerate(outputs):
            cls[layer].append(hidden[:, 0].float().cpu())
        if (start // options.batch_images + 1) % 50 == 0:
            notify(f"{start + len(chunk):,} of {len(items):,} images")
    layers = [torch.cat(parts).numpy().astype(np.float32) for parts in cls]
    names = [f"block {i} output, CLS token, before the final norm" for i in range(1, len(blocks) + 1)]
    settings = {"pooling": "CLS token of every block", **settings, "batch": options.batch_images}
    return Extraction(layers, names, settings)


def _geometry(width: int, height: int, settings: dict) -> tuple[int, int, int, int]:
    """(resized width, height, crop left, top). orch's own: the shorter side to the native size,
    the other rounded, the crop's offsets floored. platonic-rep's (timm's eval transform through
    torchvision): the shorter side to floor(size / crop_pct), the other truncated, the crop's
    offsets rounded."""
    size, short = settings["size"], min(width, height)
    if settings.get("compat") == "platonic-rep":
        target = math.floor(size / settings["crop_pct"])
        resized = (
            (target, int(target * height / width))
            if width <= height
            else (int(target * width / height), target)
        )
        return (*resized, round((resized[0] - size) / 2.0), round((resized[1] - size) / 2.0))
    scale = size / short
    resized = (max(size, round(width * scale)), max(size, round(height * scale)))
    return (*resized, (resized[0] - size) // 2, (resized[1] - size) // 2)


def pixels(item: Item, settings: dict) -> Any:
    """The image as the model's input: resized (bicubic) and centre cropped square as `_geometry`
    says, scaled to [0, 1] and normalised."""
    import torch
    from PIL import Image, UnidentifiedImageError

    size = settings["size"]
    try:
        with Image.open(item.image) as image:
            if image.width * image.height > MAX_PIXELS:
                raise InputError(
                    f"row {item.id!r}: image {item.image} declares {image.width} x {image.height} pixels, "
                    f"more than the {MAX_PIXELS:,} orch decodes; downscale it or drop the row"
                )
            image = image.convert("RGB")
            width, height, left, top = _geometry(image.width, image.height, settings)
            image = image.resize((width, height), Image.Resampling.BICUBIC)
            image = image.crop((left, top, left + size, top + size))
            array = np.asarray(image, dtype=np.float32) / 255.0
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as error:
        raise InputError(
            f"row {item.id!r}: image {item.image} does not decode ({error}); fix or drop the row"
        ) from None
    mean, std = np.asarray(settings["mean"], np.float32), np.asarray(settings["std"], np.float32)
    return torch.from_numpy(((array - mean) / std).transpose(2, 0, 1).copy())
