"""The shape of a sweep's text before any trial runs: vocabulary, maximum length and tokens per
sample, for the planner's parameter and FLOP estimates."""

from dataclasses import dataclass

from orchestrator.data.tokenizer import ByteTokenizer
from orchestrator.data.world import vocabulary
from orchestrator.spec import DataConfig

__all__ = ["WORLD_MAX_LEN", "TextShape", "text_shape"]

WORLD_MAX_LEN = 48  # two joined captions of at most 19 words, plus [cls], [sep] and [eos]
WORLD_TOKENS_PER_SAMPLE = 18  # measured: 17.7 tokens per caption pair, with [cls] or [sep]


@dataclass(frozen=True)
class TextShape:
    vocab_size: int
    max_len: int
    tokens_per_sample: int  # for planning FLOPs before a trial runs; trials count the real ones


def text_shape(data: DataConfig) -> TextShape:
    if data.source == "world":
        return TextShape(len(vocabulary()), WORLD_MAX_LEN, WORLD_TOKENS_PER_SAMPLE)
    vocab_size = ByteTokenizer.vocab_size if data.tokenizer == "bytes" else data.vocab_size
    return TextShape(vocab_size, data.max_len, 2 * data.max_len)
