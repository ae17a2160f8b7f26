"""Text rows through a model: length-sorted batches under a token budget, each layer pooled
over a row's real tokens. A row's features never depend on its batch: causal models are padded
on the left with position ids from the mask, bidirectional ones on the right."""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from orchestrator.errors import InputError
from orchestrator.extraction.blocks import block_outputs, blocks_of
from orchestrator.extraction.manifest import Item
from orchestrator.extraction.options import Extraction, Options

__all__ = ["text_batches", "text_features"]


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


def text_features(
    model: Any, tokenizer: Any, items: Sequence[Item], options: Options, notify: Callable[[str], None]
) -> Extraction:
    import torch

    limit = min(
        int(getattr(model.config, "max_position_embeddings", 0) or 1 << 20), tokenizer.model_max_length
    )
    ids, truncated = _tokenized(tokenizer, [item.text for item in items], limit)
    if options.pool == "eos":
        _check_eos(items, ids, tokenizer.eos_token_id)
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
        if pooled is None:  # the first batch also says what each hidden state is
            with block_outputs(blocks_of(model)[-1:]) as last_block:
                output = model(**inputs, output_hidden_states=True)
            names = _text_layer_names(output.hidden_states, last_block[0])
            pooled = [[] for _ in names]
        else:
            output = model(**inputs, output_hidden_states=True)
        for layer, hidden in enumerate(output.hidden_states):
            pooled[layer].append(_pool(hidden.float(), inputs, options.pool, tokenizer.eos_token_id).cpu())
        rows += batch
        if number % 50 == 0:
            notify(f"{len(rows):,} of {len(items):,} rows")
    order = np.argsort(rows)
    layers = [torch.cat(parts).numpy()[order].astype(np.float32) for parts in pooled]
    settings = {
        "pooling": options.pool,
        "padding": "left, position ids from the mask" if left else "right",
        "causal": causal,
        "max_tokens": limit,
        "truncated_rows": truncated,
        "batch_tokens": options.batch_tokens,
    }
    return Extraction(layers, names, settings)


def _tokenized(tokenizer: Any, texts: list[str], limit: int) -> tuple[list[list[int]], int]:
    """Every row's token ids in one call, at most `limit` of them (a longer row is tokenized
    again with the tokenizer's own truncation, which keeps its special tokens); and how many were."""
    ids = tokenizer(texts)["input_ids"]
    longer = [i for i, row in enumerate(ids) if len(row) > limit]
    if longer:
        cut = tokenizer([texts[i] for i in longer], truncation=True, max_length=limit)["input_ids"]
        for i, row in zip(longer, cut, strict=True):
            ids[i] = row
    return ids, len(longer)


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


def _check_eos(items: Sequence[Item], ids: Sequence[Sequence[int]], eos: int | None) -> None:
    """--pool eos reads each row's first EOS token: the first row without one is named."""
    for item, row in zip(items, ids, strict=True):
        if eos is None or eos not in row:
            raise InputError(
                f"--pool eos: row {item.id!r} has no EOS token (the tokenizer adds none): use --pool last"
            )


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


def _pool(hidden: Any, inputs: dict, pool: str, eos: int | None) -> Any:
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
    else:  # every row holds one (`_check_eos`)
        is_eos = mask & (inputs["input_ids"] == eos)
        index = torch.where(is_eos, positions, mask.shape[1]).amin(dim=1)
    return hidden[torch.arange(hidden.shape[0], device=hidden.device), index]


def _text_layer_names(hidden_states: Sequence[Any], last_block: Any) -> list[str]:
    """What each hidden state is: the last is after the final norm where it differs from the
    last block's own output (GPT-2, Llama), else the block's output as it left it."""
    import torch

    count = len(hidden_states) - 1
    normed = not torch.equal(last_block, hidden_states[-1])
    last = f"block {count} output" + (", after the final norm" if normed else "")
    return ["embeddings", *(f"block {i} output" for i in range(1, count)), last]
