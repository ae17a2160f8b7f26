"""Tokenizers that need no download: the world's own words, raw bytes, or a BPE trained on the
trial's training text and cached by the text's content hash.

Every tokenizer shares the four special ids of `SPECIALS`: pad 0, cls 1, sep 2, eos 3. Padding
is `PAD` everywhere: the encoders and losses read it from here.
"""

import hashlib
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path
from typing import Protocol

import numpy as np

__all__ = [
    "PAD",
    "SPECIALS",
    "BpeTokenizer",
    "ByteTokenizer",
    "Tokenizer",
    "WordTokenizer",
    "encode_examples",
    "encode_texts",
]

SPECIALS = ("[pad]", "[cls]", "[sep]", "[eos]")
PAD, CLS, SEP, EOS = range(len(SPECIALS))


class Tokenizer(Protocol):
    vocab_size: int

    def encode(self, text: str) -> list[int]: ...


class WordTokenizer:
    """Whitespace words from a closed vocabulary (the embedded world's)."""

    def __init__(self, words: Sequence[str]) -> None:
        self.index = {word: i for i, word in enumerate(words)}
        self.vocab_size = len(words)

    def encode(self, text: str) -> list[int]:
        return [self.index[word] for word in text.split()]


class ByteTokenizer:
    """UTF-8 bytes shifted past the special ids: any text, no training, vocabulary 260."""

    vocab_size = 256 + len(SPECIALS)

    def encode(self, text: str) -> list[int]:
        return [byte + len(SPECIALS) for byte in text.encode("utf-8")]


class BpeTokenizer:
    """Byte-level BPE from the `tokenizers` package, trained once per training text."""

    def __init__(self, texts: Iterable[str], vocab_size: int, cache_dir: Path) -> None:
        from tokenizers import Tokenizer as HFTokenizer
        from tokenizers import models, pre_tokenizers, trainers

        texts = list(texts)
        digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
        path = cache_dir / f"bpe-{vocab_size}-{digest}.json"
        if path.exists():
            self._tokenizer = HFTokenizer.from_file(str(path))
        else:
            tokenizer = HFTokenizer(models.BPE(unk_token=None))
            tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            trainer = trainers.BpeTrainer(
                vocab_size=vocab_size,
                special_tokens=list(SPECIALS),
                initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            )
            tokenizer.train_from_iterator(texts, trainer=trainer)
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".tmp")
            tokenizer.save(str(temporary))
            temporary.replace(path)
            self._tokenizer = tokenizer
        self.vocab_size = vocab_size

    def encode(self, text: str) -> list[int]:
        return self._tokenizer.encode(text).ids

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """Many texts in one call: the Rust encoder, in parallel, without the GIL (the fast form,
        where this `tokenizers` has it, skips the character offsets nobody here reads)."""
        encode = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)
        return [encoding.ids for encoding in encode(texts)]


def _encode_all(tokenizer: Tokenizer, texts: list[str]) -> list[list[int]]:
    batch = getattr(tokenizer, "encode_batch", None)
    return batch(texts) if batch is not None else [tokenizer.encode(text) for text in texts]


def encode_examples(
    tokenizer: Tokenizer, pairs: Sequence[tuple[str, str]], max_len: int, joined: bool
) -> np.ndarray:
    """Token ids, right-padded with 0: (n, 2, max_len) for two views, (n, 1, max_len) joined.

    Views are `[cls] text [eos]`; a joined pair (NTP) is `[cls] a [sep] b [eos]`. Truncation
    keeps the head of each text. Both texts of every pair go to the tokenizer in one call, in
    pair order, and the rows are laid out with array operations, not a loop per row: at a batch
    of short captions the loop cost as much as a tenth of the encoding.
    """
    n = len(pairs)
    out = np.full((n, 1 if joined else 2, max_len), PAD, dtype=np.int64)
    out[:, :, 0] = CLS
    ids = _encode_all(tokenizer, [text for pair in pairs for text in pair])  # a0, b0, a1, b1, ...
    if joined:
        row = out[:, 0]
        after_first = _place_ids(row, ids[0::2], np.ones(n, dtype=np.int64))
        _place_token(row, SEP, after_first)
        _place_token(row, EOS, _place_ids(row, ids[1::2], after_first + 1))
    else:  # row 2i is pair i's first view, row 2i + 1 its second
        views = out.reshape(2 * n, max_len)
        _place_token(views, EOS, _place_ids(views, ids, np.ones(2 * n, dtype=np.int64)))
    return out


def _place_ids(rows: np.ndarray, ids: list[list[int]], start: np.ndarray) -> np.ndarray:
    """Write row i's ids into `rows[i]` from column `start[i]` on, cut at the row's end; return
    the column after each row's ids."""
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
    which = np.repeat(np.arange(len(ids)), lengths)
    columns = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths - start, lengths)
    inside = columns < rows.shape[1]
    rows[which[inside], columns[inside]] = flat[inside]
    return start + lengths


def _place_token(rows: np.ndarray, token: int, columns: np.ndarray) -> None:
    """Write `token` at column `columns[i]` of row i, where that column is inside the row."""
    inside = np.flatnonzero(columns < rows.shape[1])
    rows[inside, columns[inside]] = token


def encode_texts(tokenizer: Tokenizer, texts: Sequence[str], max_len: int) -> np.ndarray:
    """(n, max_len) single texts as `[cls] text [eos]`, for evaluation."""
    return encode_examples(tokenizer, [(text, "") for text in texts], max_len, joined=False)[:, 0]
