"""Rows through a model, a batch at a time, pooled per layer into float32 matrices in the
manifest's order. Text batches are bucketed by length under a token budget; a row's features
never depend on its batch (padding is masked out, and causal models get positions from the mask)."""

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.errors import InputError
from orchestrator.extraction.manifest import Item, Side
from orchestrator.extraction.models import image_settings, load_model, load_tokenizer

__all__ = ["POOLS", "Extraction", "Options", "extract", "text_batches"]

POOLS = ("mean", "last", "eos")


@dataclass(frozen=True)
class Options:
    side: Side
    pool: str = "mean"  # text only; images take each block's CLS token
    dtype: str = "bfloat16"
    layers: tuple[int, ...] | None = None  # indices into the model's layers; None: every one
    batch_tokens: int = 8192  # text: padded tokens a batch may hold
    batch_images: int = 32
    device: str = "auto"
    device_map: str | None = None
    max_memory: str | None = None


@dataclass
class Extraction:
    """The layers' matrices (rows in the items' order) and what the sidecar says of them."""

    layers: list[np.ndarray]
    names: list[str]  # what each kept layer is
    settings: dict[str, Any] = field(default_factory=dict)
    device: str = "cpu"
    seconds: float = 0.0


def extract(
    folder: Path, items: Sequence[Item], options: Options, notify: Callable[[str], None]
) -> Extraction:
    import torch

    model = load_model(folder, options.side, options.dtype, options.device_map, options.max_memory)
    device = _device(options.device) if options.device_map is None else None
    if device is not None:
        model.to(device)
    started = time.monotonic()
    with torch.inference_mode():
        if options.side == "text":
            found = _text(model, load_tokenizer(folder), items, options, notify)
        else:
            found = _images(model, image_settings(folder, model.config), items, options, notify)
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


def _keep(found: Extraction, layers: tuple[int, ...] | None) -> Extraction:
    if layers is None:
        return found
    count = len(found.layers)
    for index in layers:
        if not -count <= index < count:
            raise InputError(
                f"--layers {index}: the model has {count} layers (0..{count - 1}, or -1 for the last)"
            )
    chosen = sorted({index % count for index in layers})
    found.layers = [found.layers[i] for i in chosen]
    found.names = [found.names[i] for i in chosen]
    return found


def text_batches(lengths: Sequence[int], batch_tokens: int) -> list[list[int]]:
    """Row indices in batches of similar length (longest first) whose padded size stays within
    `batch_tokens` (a row longer than the budget goes alone)."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    for index in order:
        if batches and lengths[batches[-1][0]] * (len(batches[-1]) + 1) <= batch_tokens:
            batches[-1].append(index)
        else:
            batches.append([index])
    return batches


def _text(model: Any, tokenizer: Any, items: Sequence[Item], options: Options, notify) -> Extraction:
    import torch

    limit = min(
        int(getattr(model.config, "max_position_embeddings", 0) or 1 << 20), tokenizer.model_max_length
    )
    ids = [tokenizer(item.text, truncation=True, max_length=limit)["input_ids"] for item in items]
    if options.pool == "eos" and tokenizer.eos_token_id is None:
        raise InputError("--pool eos: the tokenizer has no EOS token (use --pool last)")
    causal = _is_causal(model, ids)
    left = causal and "position_ids" in _forward_parameters(model)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    device = next(model.parameters()).device
    pooled: list[list[Any]] | None = None
    rows: list[int] = []
    names: list[str] = []
    batches = text_batches([len(row) for row in ids], options.batch_tokens)
    for number, batch in enumerate(batches, start=1):
        input_ids, mask = _padded([ids[i] for i in batch], pad, left)
        inputs = {"input_ids": input_ids.to(device), "attention_mask": mask.to(device)}
        if left:
            inputs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0).to(device)
        if pooled is None:
            names = _text_layer_names(model, inputs)
            pooled = [[] for _ in names]
        output = model(**inputs, output_hidden_states=True)
        for layer, hidden in enumerate(output.hidden_states):
            pooled[layer].append(
                _pool(hidden.float(), inputs, options.pool, tokenizer.eos_token_id, batch, items)
            )
        rows += batch
        if number % 50 == 0:
            notify(f"{len(rows):,} of {len(items):,} rows")
    order = np.argsort(rows)
    layers = [torch.cat(parts).cpu().numpy()[order].astype(np.float32) for parts in pooled]
    settings = {
        "pooling": options.pool,
        "padding": "left, position ids from the mask" if left else "right",
        "causal": causal,
        "max_tokens": limit,
        "truncated_rows": sum(len(tokenizer(item.text)["input_ids"]) > limit for item in items),
        "batch_tokens": options.batch_tokens,
    }
    return Extraction(layers, names, settings)


def _forward_parameters(model: Any) -> set[str]:
    import inspect

    return set(inspect.signature(model.forward).parameters)


def _is_causal(model: Any, ids: Sequence[Sequence[int]]) -> bool:
    """Whether a token's state ignores the tokens after it: the first token's last hidden state
    with and without the rest of the longest row."""
    import torch

    longest = max(ids, key=len)
    if len(longest) < 2:
        return False
    device = next(model.parameters()).device
    alone = model(input_ids=torch.tensor([longest[:1]], device=device)).last_hidden_state[0, 0]
    whole = model(input_ids=torch.tensor([longest], device=device)).last_hidden_state[0, 0]
    return bool(torch.allclose(alone.float(), whole.float(), rtol=1e-3, atol=1e-3))


def _padded(rows: Sequence[Sequence[int]], pad: int, left: bool) -> tuple[Any, Any]:
    import torch

    width = max(len(row) for row in rows)
    input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        span = slice(width - len(row), width) if left else slice(0, len(row))
        input_ids[i, span] = torch.tensor(row, dtype=torch.long)
        mask[i, span] = 1
    return input_ids, mask


def _pool(hidden: Any, inputs: dict, pool: str, eos: int | None, batch: list[int], items) -> Any:
    """One layer's rows from its token states, reading real tokens only (a padded position may
    hold anything, NaN included)."""
    import torch

    mask = inputs["attention_mask"].bool()
    if pool == "mean":
        summed = hidden.masked_fill(~mask[..., None], 0.0).sum(dim=1)
        return summed / mask.sum(dim=1, keepdim=True)
    positions = torch.arange(mask.shape[1], device=mask.device)
    if pool == "last":
        index = torch.where(mask, positions, -1).amax(dim=1)
    else:
        is_eos = mask & (inputs["input_ids"] == eos)
        missing = ~is_eos.any(dim=1)
        if missing.any():
            row = items[batch[int(missing.nonzero()[0])]].id
            raise InputError(
                f"--pool eos: row {row!r} has no EOS token (the tokenizer adds none): use --pool last"
            )
        index = torch.where(is_eos, positions, mask.shape[1]).amin(dim=1)
    return hidden[torch.arange(hidden.shape[0], device=hidden.device), index]


def _blocks(model: Any) -> Any:
    """The model's stack of blocks: its longest ModuleList."""
    import torch

    return max((m for m in model.modules() if isinstance(m, torch.nn.ModuleList)), key=len)


@contextmanager
def _block_outputs(blocks: Sequence[Any]) -> Iterator[list[Any]]:
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


def _text_layer_names(model: Any, inputs: dict) -> list[str]:
    """What each hidden state is: the last is after the final norm where it differs from the
    last block's own output (GPT-2, Llama), else the block's output as it left it."""
    import torch

    blocks = _blocks(model)
    with _block_outputs(blocks[-1:]) as last_block:
        output = model(**inputs, output_hidden_states=True)
    count = len(output.hidden_states) - 1
    normed = not torch.equal(last_block[0], output.hidden_states[-1])
    last = f"block {count} output" + (", after the final norm" if normed else "")
    return ["embeddings", *(f"block {i} output" for i in range(1, count)), last]


def _images(model: Any, settings: dict, items: Sequence[Item], options: Options, notify) -> Extraction:
    import torch

    device = next(model.parameters()).device
    dtype = next(model.parameters()).dtype
    blocks = _blocks(model)
    cls: list[list[Any]] = [[] for _ in blocks]
    for start in range(0, len(items), options.batch_images):
        chunk = items[start : start + options.batch_images]
        pixels = torch.stack([_pixels(item, settings) for item in chunk]).to(device=device, dtype=dtype)
        with _block_outputs(blocks) as outputs:
            model(pixel_values=pixels)
        for layer, hidden in enumerate(outputs):
            cls[layer].append(hidden[:, 0].float().cpu())
        if (start // options.batch_images + 1) % 50 == 0:
            notify(f"{start + len(chunk):,} of {len(items):,} images")
    layers = [torch.cat(parts).numpy().astype(np.float32) for parts in cls]
    names = [f"block {i} output, CLS token, before the final norm" for i in range(1, len(blocks) + 1)]
    settings = {"pooling": "CLS token of every block", **settings, "batch": options.batch_images}
    return Extraction(layers, names, settings)


def _pixels(item: Item, settings: dict) -> Any:
    """The image as the model's input: shorter side resized to the native size (bicubic), centre
    cropped square, scaled to [0, 1] and normalised."""
    import torch
    from PIL import Image, UnidentifiedImageError

    size = settings["size"]
    try:
        with Image.open(item.image) as image:
            image = image.convert("RGB")
            scale = size / min(image.size)
            width, height = max(size, round(image.width * scale)), max(size, round(image.height * scale))
            image = image.resize((width, height), Image.Resampling.BICUBIC)
            left, top = (width - size) // 2, (height - size) // 2
            image = image.crop((left, top, left + size, top + size))
            array = np.asarray(image, dtype=np.float32) / 255.0
    except (UnidentifiedImageError, OSError, ValueError) as error:
        raise InputError(
            f"row {item.id!r}: image {item.image} does not decode ({error}); fix or drop the row"
        ) from None
    mean, std = np.asarray(settings["mean"], np.float32), np.asarray(settings["std"], np.float32)
    return torch.from_numpy(((array - mean) / std).transpose(2, 0, 1).copy())
