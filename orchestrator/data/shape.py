"""The shape of a sweep's text before any trial runs: vocabulary, maximum length and tokens per
sample, for the planner's parameter and FLOP estimates (each source gives its own: `sources`)."""

from dataclasses import dataclass

from orchestrator.data.tokenizer import ByteTokenizer
from orchestrator.data.world import Knobs, vocabulary
from orchestrator.sweepfile import DataConfig

__all__ = ["WORLD_MAX_LEN", "TextShape", "file_shape", "world_shape"]

WORLD_MAX_LEN = 64  # two joined captions with their chatter, plus [cls], [sep] and [eos]
WORLD_TOKENS_PER_SAMPLE = 26  # measured: 13.0 tokens a caption view ([cls] text [eos]); 25.0 a joined pair


@dataclass(frozen=True)
class TextShape:
    vocab_size: int
    max_len: int
    tokens_per_sample: int  # for planning FLOPs before a trial runs; trials count the real ones


def world_shape(data: DataConfig) -> TextShape:
    return TextShape(len(vocabulary(Knobs.of(data))), WORLD_MAX_LEN, WORLD_TOKENS_PER_SAMPLE)


def file_shape(data: DataConfig) -> TextShape:
    vocab_size = ByteTokenizer.vocab_size if data.tokenizer == "bytes" else data.vocab_size
    return TextShape(vocab_size, data.max_len, 2 * data.max_len)
