"""Small file datasets written by the tests that exercise `data.source: files`."""

import json
from pathlib import Path

import numpy as np


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def file_dataset(folder: Path, pairs: list[tuple[str, str]], eval_texts: list[str], width: int) -> dict:
    """Write caption pairs, eval texts and one random reference ('dino'); return the sweep's
    `data` section pointing at them (paths relative to `folder`)."""
    write_jsonl(
        folder / "pairs.jsonl",
        [{"image_id": i, "caption_a": a, "caption_b": b} for i, (a, b) in enumerate(pairs)],
    )
    write_jsonl(folder / "eval.jsonl", [{"text": text} for text in eval_texts])
    np.save(folder / "dino.npy", np.random.default_rng(0).normal(size=(len(eval_texts), width)))
    return {
        "source": "files",
        "pairs": "pairs.jsonl",
        "eval": {"texts": "eval.jsonl", "features": {"dino": "dino.npy"}},
    }
