"""What `orch features` was asked for, and what it found: the options of one extraction and
its layers, with what the sidecar says of them."""

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from orchestrator.extraction.manifest import Side

__all__ = ["POOLS", "Extraction", "Options"]

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
    compat: str | None = None  # images: "platonic-rep" preprocesses as its timm transform does
    crop_pct: float = 1.0  # with compat: resize to floor(size / crop_pct), then centre crop size


@dataclass
class Extraction:
    """The layers' matrices (rows in the items' order) and what the sidecar says of them."""

    layers: list[np.ndarray]
    names: list[str]  # what each kept layer is
    settings: dict[str, Any] = field(default_factory=dict)
    device: str = "cpu"
    seconds: float = 0.0
