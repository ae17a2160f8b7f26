"""The shape of a sweep's text before any trial runs: vocabulary, maximum length and the lengths
its sequences have, for the planner's parameter and FLOP estimates (each source gives its own:
`sources`). Trials count the positions they really compute; a dry run estimates them from a
sample of the data: a batch is padded to its longest sequence, so what a batch of B sequences
computes is the expected largest of B lengths drawn from the sample."""

import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from pathlib import Path

import numpy as np

from orchestrator.data.files import DataError, document_shards, iter_documents, iter_pairs, pair_shards
from orchestrator.data.tokenizer import BpeTokenizer, ByteTokenizer, Tokenizer, WordTokenizer, encode_examples
from orchestrator.data.world import Knobs, World, vocabulary
from orchestrator.sweepfile import DataConfig
from orchestrator.sweepfile.catalog import OBJECTIVES, objective_of

__all__ = ["SAMPLED", "WORLD_MAX_LEN", "TextShape", "file_shape", "sequence_lengths", "world_shape"]

WORLD_MAX_LEN = 64  # two joined captions with their chatter, plus [cls], [sep] and [eos]
SAMPLED = 1024  # examples a dry run tokenizes to learn the lengths


@dataclass(frozen=True)
class TextShape:
    vocab_size: int
    max_len: int
    # objective -> its sequences' lengths in a sample of the data, sorted; empty where the data
    # could not be read here (every sequence is then taken at max_len)
    lengths: tuple[tuple[str, tuple[int, ...]], ...] = field(default=())

    def padded_length(self, objective: str, sequences: int) -> float:
        """The expected length a batch of `sequences` sequences of `objective` is padded to."""
        sample = dict(self.lengths).get(objective)
        if not sample:
            return float(self.max_len)
        ranks = np.arange(1, len(sample) + 1) / len(sample)
        below = np.concatenate([[0.0], ranks[:-1]])
        return float(np.dot(ranks**sequences - below**sequences, sample))  # E[max of `sequences` draws]


def sequence_lengths(
    tokenizer: Tokenizer, pairs: list[tuple[str, str]], objective: str, max_len: int
) -> tuple[int, ...]:
    """Every sequence's length (its tokens before padding) as a trial encodes `pairs`, sorted."""
    tokens = encode_examples(tokenizer, pairs, max_len, joined=objective_of(objective).views == 1)
    return tuple(sorted(int(n) for n in (tokens != 0).sum(axis=-1).ravel()))


@lru_cache(maxsize=8)
def world_shape(data: DataConfig) -> TextShape:
    knobs = Knobs.of(data)
    world = World(data.world_seed, knobs)
    tokenizer = WordTokenizer(world.words)
    lengths = tuple(
        (name, sequence_lengths(tokenizer, world.training_texts(objective, 0, SAMPLED), name, WORLD_MAX_LEN))
        for name, objective in OBJECTIVES.items()
    )
    return TextShape(len(vocabulary(knobs)), WORLD_MAX_LEN, lengths)


@lru_cache(maxsize=8)
def file_shape(data: DataConfig) -> TextShape:
    """From the first `SAMPLED` pairs and documents; a BPE tokenizer is trained on that sample
    alone, which splits more finely than one trained on the whole text (an estimate from above).
    Where the files cannot be read here (a cluster's paths), every sequence is taken at max_len."""
    vocab_size = ByteTokenizer.vocab_size if data.tokenizer == "bytes" else data.vocab_size
    try:
        captions = list(islice(iter_pairs(pair_shards(data)), SAMPLED))
        documents = list(islice(iter_documents(document_shards(data)), SAMPLED)) if data.documents else []
    except DataError:
        return TextShape(vocab_size, data.max_len)
    tokenizer = _sample_tokenizer(data, [text for pair in captions + documents for text in pair])
    lengths = tuple(
        (
            name,
            sequence_lengths(tokenizer, documents if objective.documents else captions, name, data.max_len),
        )
        for name, objective in OBJECTIVES.items()
        if (documents if objective.documents else captions)
    )
    return TextShape(vocab_size, data.max_len, lengths)


def _sample_tokenizer(data: DataConfig, texts: list[str]) -> Tokenizer:
    if data.tokenizer == "bytes":
        return ByteTokenizer()
    with tempfile.TemporaryDirectory() as folder:
        return BpeTokenizer(texts, data.vocab_size, Path(folder))
