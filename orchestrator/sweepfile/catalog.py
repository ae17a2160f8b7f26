"""Every name a sweep file may use, in one place: model presets, objectives and metrics.

Torch-free on purpose, so the sweep-file parser and the CLI start fast. A new preset, objective or
metric is one entry here (plus, for a metric, its function in `orchestrator.alignment`). Code
elsewhere asks an entry what it is (`objective_of(name).causal`), never compares its name.
The trainer builds its module from the same `Preset` and stores the parameter count measured from
that module; `estimate_params` here must agree with it (a test checks).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "METRICS",
    "OBJECTIVES",
    "PRESETS",
    "PROJECTOR_WIDTH",
    "WORLD_REFERENCES",
    "Metric",
    "MetricName",
    "Objective",
    "Preset",
    "estimate_params",
    "objective_of",
    "parse_metric",
    "train_flops",
]

WORLD_REFERENCES = ("render_cnn", "factor_mlp")  # the embedded world's fixed image-side encoders


@dataclass(frozen=True)
class Preset:
    width: int
    layers: int
    heads: int
    ff: int


PRESETS: dict[str, Preset] = {
    "tiny": Preset(width=64, layers=2, heads=4, ff=256),
    "small": Preset(width=128, layers=4, heads=4, ff=512),
    "33M": Preset(width=384, layers=12, heads=12, ff=1536),  # MiniLM-L12-H384 shape
    "base": Preset(width=768, layers=12, heads=12, ff=3072),  # BERT-B shape, ~109M with 30522 tokens
}
PROJECTOR_WIDTH = 64


@dataclass(frozen=True)
class Objective:
    """A training objective: what its examples are, how the encoder reads them, and its head.

    - `causal`: a causal encoder whose head predicts the next token through the tied token
      embedding (NTP); else a bidirectional encoder with a projector, trained by JEPA + SIGReg.
    - `views`: texts per example the loss sees; NTP reads the example's two texts joined as one.
    - `documents`: the two views are two chunks of one document (bad views), not two captions
      of one image (good views).
    """

    name: str
    causal: bool
    views: int
    documents: bool

    def head_params(self, width: int) -> int:
        """Parameters of the head beyond the encoder body (the LM head is tied: none)."""
        return 0 if self.causal else width * PROJECTOR_WIDTH + PROJECTOR_WIDTH


OBJECTIVES: dict[str, Objective] = {
    objective.name: objective
    for objective in (
        Objective("jepa_good", causal=False, views=2, documents=False),
        Objective("jepa_bad", causal=False, views=2, documents=True),
        Objective("ntp", causal=True, views=1, documents=False),
    )
}


def objective_of(name: str) -> Objective:
    return OBJECTIVES[name]


def _layer_params(p: Preset) -> int:
    attention = 4 * p.width * p.width + 4 * p.width
    feed_forward = 2 * p.width * p.ff + p.ff + p.width
    norms = 4 * p.width
    return attention + feed_forward + norms


def estimate_params(preset: Preset, vocab_size: int, max_len: int, objective: str) -> int:
    """Parameters of the encoder as the trainer builds it: embeddings, blocks, head or projector."""
    body = (vocab_size + max_len) * preset.width + preset.layers * _layer_params(preset)
    body += 2 * preset.width  # final norm
    return body + objective_of(objective).head_params(preset.width)


def train_flops(preset: Preset, objective: str, sequences: float, length: float, vocab_size: int) -> float:
    """Training FLOPs (the backward pass twice the forward) of `sequences` sequences of `length`
    positions each, as the encoder runs them (a batch is padded to its longest row, and every
    position of it is computed). Forward, per position: 2 FLOPs a weight of every block's matmuls
    and of NTP's vocabulary projection; per sequence and block, the attention scores and their
    weighted sum, 4 x length^2 x width; JEPA's projector once a sequence (it reads the pooled
    vector). Embedding lookups, norms and the loss are left out: they are not matmuls, and
    `torch.utils.flop_counter` counts none of them either."""
    width, layers = preset.width, preset.layers
    block_matmuls = 4 * width * width + 2 * width * preset.ff
    causal = objective_of(objective).causal
    per_position = layers * block_matmuls + (vocab_size * width if causal else 0)
    per_sequence = 0 if causal else width * PROJECTOR_WIDTH
    attention = 4 * layers * width * length * length
    return 3.0 * sequences * (2.0 * (length * per_position + per_sequence) + attention)


@dataclass(frozen=True)
class Metric:
    """An alignment metric: how it is written, scored, bounded, and what chance scores.

    `orchestrator.alignment` holds the function that scores two feature matrices under the same
    name; `from_neighbours`: the metric is built from two k-NN lists, and alignment also holds
    the function that scores those (a trial then finds each side's neighbours once and reuses
    them). `needs_map`: the metric compares
    the two sides in one space, through a least-squares map fitted on held-back pairs.
    `chance(k, n)` is the expected score of unrelated features on n rows (None where no closed
    form is known).
    """

    name: str
    takes_k: bool
    from_neighbours: bool = False
    needs_map: bool = False
    range: tuple[float, float] = (0.0, 1.0)
    chance: Callable[[int | None, int], float] | None = None


def _knn_chance(k: int | None, n: int) -> float:
    return (k or 0) / (n - 1)  # a random k-subset of the n - 1 others shares k^2/(n-1) of k


def _retrieval_chance(k: int | None, n: int) -> float:
    return (k or 0) / n


METRICS: dict[str, Metric] = {
    metric.name: metric
    for metric in (
        Metric("mutual_knn", True, from_neighbours=True, chance=_knn_chance),
        Metric("cycle_knn", True, from_neighbours=True),
        Metric("lcs_knn", True, from_neighbours=True),
        Metric("edit_distance_knn", True, from_neighbours=True, range=(-1.0, 1.0)),
        Metric("cknna", True, from_neighbours=True, range=(-1.0, 1.0), chance=lambda k, n: 0.0),
        Metric("cka", False),
        Metric("cka_unbiased", False, range=(-1.0, 1.0), chance=lambda k, n: 0.0),
        Metric("svcca", False),
        Metric("retrieval_t2i", True, needs_map=True, chance=_retrieval_chance),
        Metric("retrieval_i2t", True, needs_map=True, chance=_retrieval_chance),
    )
}
ALIASES = {"unbiased_cka": "cka_unbiased"}  # platonic-rep's names for orch's metrics
_PATTERN = re.compile(r"^([a-z_0-9]+?)(?:@([0-9]+))?$")


@dataclass(frozen=True)
class MetricName:
    """A metric as a sweep file writes it: the catalog entry and its neighbour count."""

    name: str
    k: int | None

    @property
    def metric(self) -> Metric:
        return METRICS[self.name]

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"


def parse_metric(text: str) -> MetricName:
    """Parse 'mutual_knn@10' or 'cka' (or platonic-rep's name for it, 'unbiased_cka'); raise
    ValueError with the names allowed."""
    match = _PATTERN.match(text.strip()) if isinstance(text, str) else None
    known = ", ".join(f"{m.name}@10" if m.takes_k else m.name for m in METRICS.values())
    name = ALIASES.get(match.group(1), match.group(1)) if match else None
    if name not in METRICS:
        raise ValueError(f"{text!r} is not a metric (one of {known})")
    k = match.group(2)
    if METRICS[name].takes_k and k is None:
        raise ValueError(f"{text!r} needs a neighbour count (write {name}@10)")
    if not METRICS[name].takes_k and k is not None:
        raise ValueError(f"{text!r} takes no @k (write {name})")
    if k is not None and int(k) < 1:
        raise ValueError(f"{text!r}: k must be at least 1")
    return MetricName(name, int(k) if k is not None else None)
