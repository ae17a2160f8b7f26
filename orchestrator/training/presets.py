"""Encoder shapes by name, and the parameter and FLOP counts the planner needs before any torch.

The trainer builds its module from the same `Preset` and stores the count measured from that
module; `estimate_params` here must agree with it (a test checks).
"""

from dataclasses import dataclass

__all__ = ["PRESETS", "Preset", "estimate_params", "train_flops"]


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


def _layer_params(p: Preset) -> int:
    attention = 4 * p.width * p.width + 4 * p.width
    feed_forward = 2 * p.width * p.ff + p.ff + p.width
    norms = 4 * p.width
    return attention + feed_forward + norms


def estimate_params(preset: Preset, vocab_size: int, max_len: int, objective: str) -> int:
    """Parameters of the encoder as the trainer builds it: embeddings, blocks, head or projector."""
    body = (vocab_size + max_len) * preset.width + preset.layers * _layer_params(preset)
    body += 2 * preset.width  # final norm
    if objective == "ntp":
        return body  # the LM head is tied to the token embedding
    return body + preset.width * PROJECTOR_WIDTH + PROJECTOR_WIDTH


def train_flops(preset: Preset, objective: str, tokens: int, vocab_size: int) -> float:
    """Training FLOPs for `tokens` tokens: 6 x (block + output) parameters x tokens (Kaplan et al.).

    Embedding lookups are free; NTP adds its vocabulary projection, JEPA its projector.
    Attention-score FLOPs are ignored at these sequence lengths.
    """
    matmul_params = preset.layers * _layer_params(preset)
    if objective == "ntp":
        matmul_params += vocab_size * preset.width
    else:
        matmul_params += preset.width * PROJECTOR_WIDTH
    return 6.0 * matmul_params * tokens
