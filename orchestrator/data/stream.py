"""A trial's data: its training stream (D unique examples, reshuffled each epoch) and eval set.

`take(position, count)` returns the examples at samples-seen positions [position, position +
count): a pure function of (data, trial seed, position), which is what makes a retried trial
resume at its data position rather than at step 0.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import islice
from pathlib import Path

import numpy as np

from orchestrator.data import world as world_module
from orchestrator.data.files import (
    DataError,
    Reference,
    document_shards,
    iter_documents,
    iter_pairs,
    pair_shards,
    read_eval,
)
from orchestrator.data.prefetch import Prefetcher, ProcessPrefetcher
from orchestrator.data.shape import WORLD_MAX_LEN
from orchestrator.data.tokenizer import (
    BpeTokenizer,
    ByteTokenizer,
    Tokenizer,
    WordTokenizer,
    encode_examples,
    encode_texts,
)
from orchestrator.sweepfile import DataConfig, TrialConfig
from orchestrator.sweepfile.catalog import Objective, objective_of

__all__ = ["EvalSet", "TrialData", "file_data", "file_scoring_set", "world_data", "world_scoring_set"]

SHUFFLE_BUFFER = 16384
DRAW_BLOCK = 4096  # shuffle-buffer positions drawn at once
BPE_TRAINING_TEXTS = 200_000


@dataclass(frozen=True)
class EvalSet:
    name: str
    tokens: np.ndarray  # (n, T)
    references: dict[str, Reference]  # name -> (n, width), or a layer stack of them
    retrieval_tokens: np.ndarray  # (m, T): fits the text -> reference maps of retrieval metrics
    retrieval_references: dict[str, Reference]


@dataclass(frozen=True)
class TrialData:
    take: Callable[[int, int], np.ndarray]  # (position, count) -> (count, views, T)
    eval_set: EvalSet
    vocab_size: int
    max_len: int


class InMemoryStream:
    """D tokenized examples; epoch e visits them in permutation(seed, e)."""

    def __init__(self, examples: np.ndarray, seed: int) -> None:
        self.examples = examples
        self.seed = seed
        self._orders: dict[int, np.ndarray] = {}

    def _order(self, epoch: int) -> np.ndarray:
        """The epoch's permutation, drawn once (every batch of the epoch reads it)."""
        if epoch not in self._orders:
            self._orders = {epoch: np.random.default_rng([self.seed, epoch]).permutation(len(self.examples))}
        return self._orders[epoch]

    def take(self, position: int, count: int) -> np.ndarray:
        size = len(self.examples)
        chunks = []
        while count > 0:
            epoch, offset = divmod(position, size)
            step = min(count, size - offset)
            chunks.append(self.examples[self._order(epoch)[offset : offset + step]])
            position, count = position + step, count - step
        return np.concatenate(chunks)


class FileStream:
    """The first D examples of the shards, read in order through a seeded shuffle buffer per
    epoch; each `take` tokenizes its examples in one batch.

    Reading is sequential; a jump in position (a resumed trial) replays its epoch from the start.
    It pickles without its read position (for a prefetch process), so `open_pairs` and `encode`
    are module functions or partials of them.
    """

    def __init__(self, open_pairs: Callable[[], Iterator[tuple[str, str]]], encode, size: int, seed: int):
        self.open_pairs, self.encode, self.size, self.seed = open_pairs, encode, size, seed
        self._position = -1
        self._iterator: Iterator[tuple[str, str]] | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_position": -1, "_iterator": None}

    def _epoch(self, epoch: int) -> Iterator[tuple[str, str]]:
        rng = np.random.default_rng([self.seed, epoch])
        pairs = islice(self.open_pairs(), self.size)
        buffer = list(islice(pairs, SHUFFLE_BUFFER - 1))
        produced = 0
        due = max(0, self.size - SHUFFLE_BUFFER + 1)  # one draw per example read into a full buffer
        while due > 0:
            # a block of draws gives the numbers one draw at a time would (numpy's generators
            # are sequential), at a fraction of their cost
            picks = rng.integers(SHUFFLE_BUFFER, size=min(DRAW_BLOCK, due)).tolist()
            due -= len(picks)
            before = produced
            for index, pair in zip(picks, pairs, strict=False):  # the data may end first
                buffer.append(pair)
                buffer[index], buffer[-1] = buffer[-1], buffer[index]
                yield buffer.pop()
                produced += 1
            if produced - before < len(picks):  # the data ran out: too few examples (raised below)
                break
        for index in rng.permutation(len(buffer)):
            yield buffer[index]
            produced += 1
        if produced < self.size:
            raise DataError(f"data holds {produced} examples, fewer than the data size {self.size}")

    def read(self, position: int, count: int) -> list[tuple[str, str]]:
        """The examples at positions [position, position + count), as text."""
        pairs: list[tuple[str, str]] = []
        while len(pairs) < count:
            epoch, offset = divmod(position + len(pairs), self.size)
            if self._iterator is None or self._position != position + len(pairs):
                self._iterator = islice(self._epoch(epoch), offset, None)
                self._position = position + len(pairs)
            wanted = count - len(pairs)
            pairs.extend(islice(self._iterator, wanted))
            got = len(pairs) - (count - wanted)
            self._position += got
            if got < wanted:  # the epoch ended: the next starts
                self._iterator = None
        return pairs

    def take(self, position: int, count: int) -> np.ndarray:
        return self.encode(self.read(position, count))


@lru_cache(maxsize=4)
def _world(seed: int, knobs: world_module.Knobs) -> world_module.World:
    return world_module.World(seed, knobs)


@lru_cache(maxsize=8)
def _world_examples(seed: int, knobs: world_module.Knobs, objective: Objective, size: int) -> np.ndarray:
    """Tokenized examples 0..size-1 of the world's training stream (cached across trials)."""
    world = _world(seed, knobs)
    pairs = world.training_texts(objective, 0, size)
    joined = objective.views == 1  # NTP reads the two texts of an example as one
    tokens = encode_examples(WordTokenizer(world.words), pairs, WORLD_MAX_LEN, joined=joined)
    return tokens.astype(np.int32)


@lru_cache(maxsize=4)
def _world_eval(seed: int, knobs: world_module.Knobs, count: int) -> tuple[list[str], EvalSet]:
    """The eval texts (row order) and the eval set made from them."""
    world = _world(seed, knobs)
    tokenizer = WordTokenizer(world.words)
    texts, references = world.eval_set(world_module.STREAM_EVAL, count)
    retrieval_texts, retrieval_references = world.eval_set(world_module.STREAM_RETRIEVAL, count)
    return texts, EvalSet(
        name=f"world-{count}",
        tokens=encode_texts(tokenizer, texts, WORLD_MAX_LEN),
        references=references,
        retrieval_tokens=encode_texts(tokenizer, retrieval_texts, WORLD_MAX_LEN),
        retrieval_references=retrieval_references,
    )


def world_data(config: TrialConfig) -> TrialData:
    """The world's stream for the trial, in memory, and its eval set (both cached per process)."""
    world_seed, knobs = config.data.world_seed, world_module.Knobs.of(config.data)
    size = int(config.eval.set.split("-")[1])
    examples = _world_examples(world_seed, knobs, objective_of(config.objective), config.data_size)
    return TrialData(
        take=InMemoryStream(examples, config.seed).take,
        eval_set=_world_eval(world_seed, knobs, size)[1],
        vocab_size=len(_world(world_seed, knobs).words),
        max_len=WORLD_MAX_LEN,
    )


def file_data(config: TrialConfig, cache_dir: Path, prefetch_workers: int) -> TrialData:
    """The files' stream for the trial, prefetched by `prefetch_workers` processes, or by a
    thread when 0, and its eval set."""
    data: DataConfig = config.data
    objective = objective_of(config.objective)
    if objective.documents:
        if data.documents is None:
            raise DataError(f"data.documents: {objective.name} needs a documents file (JSONL with 'text')")
        open_pairs = partial(iter_documents, document_shards(data))
    else:
        open_pairs = partial(iter_pairs, pair_shards(data))
    tokenizer = _file_tokenizer(data, cache_dir)
    encode = partial(encode_examples, tokenizer, max_len=data.max_len, joined=objective.views == 1)
    stream = FileStream(open_pairs, encode, config.data_size, config.seed)
    prefetcher = ProcessPrefetcher(stream, prefetch_workers) if prefetch_workers else Prefetcher(stream.take)

    texts, references = _file_eval(config)
    tokens = encode_texts(tokenizer, texts, data.max_len)
    half = len(texts) // 2  # no separate retrieval set: maps fit on the first half of the eval set
    return TrialData(
        take=prefetcher.take,
        eval_set=EvalSet(
            name=config.eval.set,
            tokens=tokens,
            references=references,
            retrieval_tokens=tokens[:half],
            retrieval_references=_first_rows(references, half),
        ),
        vocab_size=tokenizer.vocab_size,
        max_len=data.max_len,
    )


def _file_tokenizer(data: DataConfig, cache_dir: Path) -> Tokenizer:
    if data.tokenizer == "bytes":
        return ByteTokenizer()
    pairs = islice(iter_pairs(pair_shards(data)), BPE_TRAINING_TEXTS // 2)
    texts = [text for pair in pairs for text in pair]
    return BpeTokenizer(texts, data.vocab_size, cache_dir)


def world_scoring_set(config: TrialConfig) -> tuple[list[str], EvalSet]:
    """The world's eval texts (row order) and the eval set a trial scores against."""
    world_seed, knobs = config.data.world_seed, world_module.Knobs.of(config.data)
    return _world_eval(world_seed, knobs, int(config.eval.set.split("-")[1]))


def file_scoring_set(config: TrialConfig) -> tuple[list[str], EvalSet]:
    """The eval texts and references a files trial scores against, with no token stream opened:
    the eval tokens are left empty (the tokenizer may need training, and features made elsewhere
    need none)."""
    texts, references = _file_eval(config)
    half = len(texts) // 2  # as in file_data: retrieval maps fit on the first half
    return texts, EvalSet(
        name=config.eval.set,
        tokens=np.zeros((len(texts), 0), dtype=np.int64),
        references=references,
        retrieval_tokens=np.zeros((half, 0), dtype=np.int64),
        retrieval_references=_first_rows(references, half),
    )


def _file_eval(config: TrialConfig) -> tuple[list[str], dict[str, Reference]]:
    """The eval texts and references of a files trial: layer stacks allowed where the trial
    scores as platonic-rep does."""
    data = config.data
    features = {name: data.resolve(path) for name, path in data.eval_features}
    return read_eval(data.resolve(data.eval_texts), features, stacks=config.eval.scoring == "platonic-rep")


def _first_rows(references: dict[str, Reference], count: int) -> dict[str, Reference]:
    return {
        name: tuple(layer[:count] for layer in ref) if isinstance(ref, tuple) else ref[:count]
        for name, ref in references.items()
    }
