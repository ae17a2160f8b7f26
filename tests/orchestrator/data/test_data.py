"""The embedded world is reproducible and the file datasets load good files and reject bad ones."""

import itertools
import json
import re
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from orchestrator.data import world as W
from orchestrator.data.files import DataError, corpus_of, iter_documents, iter_pairs, read_eval
from orchestrator.data.prefetch import Prefetcher, ProcessPrefetcher
from orchestrator.data.shards import resolve_shards
from orchestrator.data.sources import open_trial_data
from orchestrator.data.stream import DRAW_BLOCK, SHUFFLE_BUFFER, FileStream, InMemoryStream
from orchestrator.data.tokenizer import CLS, EOS, PAD, SEP, BpeTokenizer, ByteTokenizer, encode_examples
from orchestrator.sweepfile import parse_spec
from orchestrator.sweepfile.catalog import OBJECTIVES
from orchestrator.sweepfile.sections import parse_data
from tests.datasets import file_dataset, write_jsonl

KNOBS = W.Knobs(synonyms=4, nuisance=3.0, mention=0.7)


def test_world_is_reproducible_from_its_seed():
    a, b, other = W.World(0, KNOBS), W.World(0, KNOBS), W.World(1, KNOBS)
    texts_a, features_a = a.eval_set(W.STREAM_EVAL, 64)
    texts_b, features_b = b.eval_set(W.STREAM_EVAL, 64)
    assert texts_a == texts_b
    for name in W.REFERENCES:
        np.testing.assert_array_equal(features_a[name], features_b[name])
    assert other.eval_set(W.STREAM_EVAL, 64)[0] != texts_a
    assert a.training_texts(OBJECTIVES["jepa_good"], 100, 5) == b.training_texts(
        OBJECTIVES["jepa_good"], 100, 5
    )


def values_named(caption: str) -> dict[str, set[str]]:
    """Factor -> the values a caption names, reading each synonym back to its value."""
    meaning = {
        form + plural: (factor, value)
        for factor, values in W.FACTORS.items()
        for value in values
        for form in W.forms(value, KNOBS.synonyms)
        for plural in ("", "s")
    }
    named: dict[str, set[str]] = {factor: set() for factor in W.FACTORS}
    for word in caption.split():
        if word in meaning:
            factor, value = meaning[word]
            named[factor].add(value)
    return named


def test_world_views_differ_as_designed():
    world = W.World(0, KNOBS)
    for caption_a, caption_b in world.training_texts(OBJECTIVES["jepa_good"], 0, 50):
        assert caption_a and caption_b and set(caption_a.split()) <= set(world.words)
    eval_texts, _ = world.eval_set(W.STREAM_EVAL, 32)
    retrieval_texts, _ = world.eval_set(W.STREAM_RETRIEVAL, 32)
    assert eval_texts != retrieval_texts  # two different held-out sets

    def agree(pairs, factor):  # of the pairs where both captions name the factor
        named = [(values_named(a)[factor], values_named(b)[factor]) for a, b in pairs]
        both = [(x, y) for x, y in named if x and y]
        return np.mean([bool(x & y) for x, y in both])

    good, bad = (
        world.training_texts(OBJECTIVES["jepa_good"], 0, 600),
        world.training_texts(OBJECTIVES["jepa_bad"], 0, 600),
    )
    # Good views name one scene; bad views (two chunks of one document) share its setting only.
    assert agree(good, "shape") == 1.0 and agree(good, "setting") == 1.0
    assert agree(bad, "setting") == 1.0 and agree(bad, "shape") < 0.5


def test_words_are_not_factors():
    world = W.World(0, KNOBS)
    captions = [a for a, _ in world.training_texts(OBJECTIVES["jepa_good"], 0, 400)]
    red = [c for c in captions if "red" in values_named(c)["colour"]]
    forms = {w for c in red for w in c.split() if w.removesuffix("s") in W.forms("red", KNOBS.synonyms)}
    assert forms == set(W.forms("red", KNOBS.synonyms))  # each value through all its synonyms
    chatter = [w for c in captions for w in c.split() if w.startswith("x")]
    assert 2.5 < len(chatter) / len(captions) < 3.5  # about `nuisance` chatter words a caption


def test_stream_positions_are_pure_and_epochs_reshuffle():
    examples = np.arange(10)[:, None, None] * np.ones((1, 2, 3), dtype=int)
    stream = InMemoryStream(examples, seed=3)
    first_epoch = stream.take(0, 10)[:, 0, 0]
    assert sorted(first_epoch) == list(range(10))
    np.testing.assert_array_equal(stream.take(4, 3), stream.take(0, 10)[4:7])
    second = stream.take(10, 10)[:, 0, 0]
    assert sorted(second) == list(range(10)) and list(second) != list(first_epoch)
    np.testing.assert_array_equal(stream.take(8, 4)[:, 0, 0], [*first_epoch[8:], *second[:2]])


def byte_stream(shard: Path, size: int = 40) -> FileStream:
    encode = partial(encode_examples, ByteTokenizer(), max_len=16, joined=False)
    return FileStream(partial(iter_pairs, [shard]), encode, size, seed=5)


def test_a_file_stream_resumes_exactly_and_prefetching_changes_no_batch(tmp_path):
    pairs = [(f"caption {i}", f"other {i}") for i in range(50)]
    shard = write_jsonl(tmp_path / "p.jsonl", [{"caption_a": a, "caption_b": b} for a, b in pairs])
    steps = [(0, 8), (8, 8), (16, 8), (24, 8), (32, 8), (40, 8), (48, 8), (20, 8), (28, 8)]  # then a resume
    direct = [byte_stream(shard).take(position, count) for position, count in steps]  # each fresh
    running, threaded = byte_stream(shard), Prefetcher(byte_stream(shard).take)
    processes = ProcessPrefetcher(byte_stream(shard), workers=2)
    for (position, count), expected in zip(steps, direct, strict=True):
        np.testing.assert_array_equal(running.take(position, count), expected)
        np.testing.assert_array_equal(threaded.take(position, count), expected)
        np.testing.assert_array_equal(processes.take(position, count), expected)
    workers = list(processes._processes)
    processes.close()
    assert len(workers) == 2 and not any(worker.is_alive() for worker in workers)
    epoch = np.concatenate(direct[:5])[:, 0, :]
    assert len({bytes(row) for row in epoch}) == 40  # one epoch visits each of the 40 examples once


def one_draw_at_a_time(items: list, seed: int, epoch: int) -> list:
    """The shuffle buffer as it was first written: one draw per example read into it."""
    rng, buffer, out = np.random.default_rng([seed, epoch]), [], []
    for item in items:
        buffer.append(item)
        if len(buffer) >= SHUFFLE_BUFFER:
            index = int(rng.integers(len(buffer)))
            buffer[index], buffer[-1] = buffer[-1], buffer[index]
            out.append(buffer.pop())
    return out + [buffer[index] for index in rng.permutation(len(buffer))]


@pytest.mark.parametrize(
    "size", [10, SHUFFLE_BUFFER - 1, SHUFFLE_BUFFER, SHUFFLE_BUFFER + 2 * DRAW_BLOCK + 7]
)
def test_an_epoch_is_the_order_one_draw_at_a_time_gave(size):
    items = [(f"a{i}", f"b{i}") for i in range(size)]
    stream = FileStream(lambda: iter(items), lambda pairs: pairs, size, seed=3)
    for epoch in (0, 1):  # read in uneven pieces, across the epoch's end
        got = [
            pair
            for start in range(0, size, 997)
            for pair in stream.read(epoch * size + start, min(997, size - start))
        ]
        assert got == one_draw_at_a_time(items, seed=3, epoch=epoch)


def test_parquet_pairs_read_a_column_at_a_time_are_the_rows_and_bad_rows_are_named(tmp_path):
    firsts = [f"first {i}" for i in range(20_000)]  # three record batches
    seconds = [f"second {i}" if i % 7 else f" second {i} " for i in range(20_000)]
    pq.write_table(
        pa.table({"caption_a": firsts, "caption_b": seconds, "n": range(20_000)}), tmp_path / "p.parquet"
    )
    assert list(iter_pairs([tmp_path / "p.parquet"])) == list(zip(firsts, seconds, strict=True))
    bad = {
        "caption_b is null": (
            pa.table({"caption_a": firsts, "caption_b": [*seconds[:9000], None, *seconds[9001:]]}),
            "row 9001: column 'caption_b' is missing or not text",
        ),
        "caption_a is blank": (
            pa.table({"caption_a": [*firsts[:12], " \t", *firsts[13:]], "caption_b": seconds}),
            "row 13: column 'caption_a' is empty",
        ),
        "caption_b is a number": (
            pa.table({"caption_a": firsts, "caption_b": range(20_000)}),
            "row 1: column 'caption_b' is missing or not text",
        ),
    }
    for name, (table, message) in bad.items():
        path = tmp_path / f"{name.replace(' ', '_')}.parquet"
        pq.write_table(table, path)
        with pytest.raises(DataError, match=re.escape(f"{path}: {message}")):
            list(iter_pairs([path]))


def test_a_prefetch_process_error_reaches_the_trainer_in_one_line(tmp_path):
    shard = write_jsonl(tmp_path / "p.jsonl", [{"caption_a": f"a {i}", "caption_b": "b"} for i in range(10)])
    prefetcher = ProcessPrefetcher(byte_stream(shard), workers=2)
    assert prefetcher.take(0, 8).shape == (8, 2, 16)  # the first 8 of 10 are there
    with pytest.raises(DataError, match="data holds 10 examples, fewer than the data size 40"):
        prefetcher.take(8, 8)


def test_pairs_from_jsonl_parquet_and_grouped_rows(tmp_path):
    pairs = [("a red disc", "a circle that is red"), ("two stars", "a star")]
    jsonl = write_jsonl(
        tmp_path / "p.jsonl",
        [{"image_id": i, "caption_a": a, "caption_b": b} for i, (a, b) in enumerate(pairs)],
    )
    assert list(iter_pairs([jsonl])) == pairs
    table = pa.table(
        {"image_id": [0, 1], "caption_a": [p[0] for p in pairs], "caption_b": [p[1] for p in pairs]}
    )
    pq.write_table(table, tmp_path / "p.parquet")
    assert list(iter_pairs([tmp_path / "p.parquet"])) == pairs
    grouped = write_jsonl(
        tmp_path / "g.jsonl", [{"image_id": 7, "caption": "x y"}, {"image_id": 7, "caption": "y z"}]
    )
    assert list(iter_pairs([grouped])) == [("x y", "y z")]
    docs = write_jsonl(tmp_path / "d.jsonl", [{"text": "one two three four"}])
    assert list(iter_documents([docs])) == [("one two", "three four")]


def test_shards_from_globs_and_lists_in_one_seeded_order_compressed_or_not(tmp_path):
    rows = [{"caption_a": f"a {i}", "caption_b": f"b {i}"} for i in range(40)]
    for shard in range(4):
        part = rows[shard * 10 : (shard + 1) * 10]
        text = "".join(json.dumps(row) + "\n" for row in part).encode()
        suffix, compression = [
            (".jsonl", None),
            (".jsonl.gz", "gzip"),
            (".jsonl.zst", "zstd"),
            (".jsonl", None),
        ][shard]
        with pa.output_stream(str(tmp_path / f"part-{shard}{suffix}"), compression=compression) as out:
            out.write(text)
    by_glob = resolve_shards("part-*", tmp_path, "data.pairs")
    by_list = resolve_shards(tuple(p.name for p in sorted(tmp_path.glob("part-*"))), tmp_path, "data.pairs")
    assert by_glob == by_list and sorted(by_glob) != by_glob  # one order, not the sorted one
    assert sorted(iter_pairs(by_glob)) == sorted((r["caption_a"], r["caption_b"]) for r in rows)
    first = list(itertools.islice(iter_pairs(by_glob), 15))
    assert first == list(iter_pairs(by_glob))[:15]  # a data size reads a prefix of one order
    with pytest.raises(DataError, match=r"data.pairs: 'none-\*.parquet' matches no file under"):
        resolve_shards("none-*.parquet", tmp_path, "data.pairs")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DataError, match=r"notes.txt: not a shard \(data.pairs takes .jsonl"):
        resolve_shards("*", tmp_path, "data.pairs")


def test_broken_files_are_rejected_naming_the_file(tmp_path):
    missing_column = write_jsonl(tmp_path / "m.jsonl", [{"image_id": 1, "caption_a": "x"}])
    with pytest.raises(DataError, match=r"m.jsonl:1: column 'caption_b' is missing"):
        list(iter_pairs([missing_column]))
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(DataError, match=r"bad.jsonl:1: not JSON"):
        list(iter_pairs([tmp_path / "bad.jsonl"]))
    with pytest.raises(DataError, match="no such file"):
        list(iter_pairs([tmp_path / "absent.jsonl"]))
    texts = write_jsonl(tmp_path / "t.jsonl", [{"text": "a"}, {"text": "b"}, {"text": "c"}])
    np.save(tmp_path / "short.npy", np.zeros((2, 4)))
    with pytest.raises(DataError, match=r"short.npy \(reference 'dino'\): 2 rows, but .*t.jsonl has 3 texts"):
        read_eval(texts, {"dino": tmp_path / "short.npy"})
    nan = np.zeros((3, 4))
    nan[1, 2] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    with pytest.raises(DataError, match=r"nan\.npy \(reference 'dino'\): holds NaN"):
        read_eval(texts, {"dino": tmp_path / "nan.npy"})


def test_tokenizers_share_special_ids(tmp_path):
    tokens = encode_examples(ByteTokenizer(), [("ab", "c")], max_len=8, joined=True)
    assert tokens.tolist() == [[[1, 97 + 4, 98 + 4, 2, 99 + 4, 3, 0, 0]]]
    texts = ["a red disc on the left", "two blue stars above a box"] * 50
    bpe = BpeTokenizer(texts, vocab_size=300, cache_dir=tmp_path)
    again = BpeTokenizer(texts, vocab_size=300, cache_dir=tmp_path)  # from the cache
    assert bpe.encode("a red disc") == again.encode("a red disc")
    assert len(list(tmp_path.glob("bpe-300-*.json"))) == 1
    assert min(bpe.encode("a red disc")) >= 4  # specials are never produced from text


@pytest.mark.parametrize("kind", ["bytes", "bpe"])
@pytest.mark.parametrize("max_len", [1, 2, 3, 6, 12, 40])
def test_encoded_rows_are_cls_text_eos_cut_at_max_len(max_len, kind, tmp_path):
    """The array layout against its definition, row by row: empty texts and every cut included;
    BPE through its batch encoder (one call for both texts of every pair), bytes text by text."""
    rng = np.random.default_rng(max_len)
    letters = "abcdefghijklmnopqrstuvwxyz "
    pairs = [
        (
            "".join(rng.choice(list(letters), rng.integers(0, 15))),
            "".join(rng.choice(list(letters), rng.integers(0, 15))),
        )
        for _ in range(60)
    ]
    texts = [text for pair in pairs for text in pair]
    tokenizer = BpeTokenizer(texts, vocab_size=300, cache_dir=tmp_path) if kind == "bpe" else ByteTokenizer()
    views = encode_examples(tokenizer, pairs, max_len=max_len, joined=False)
    joined = encode_examples(tokenizer, pairs, max_len=max_len, joined=True)
    ids = tokenizer.encode

    def padded(sequence: list[int]) -> list[int]:
        return (sequence + [PAD] * max_len)[:max_len]

    for row, (a, b) in enumerate(pairs):
        assert views[row].tolist() == [padded([CLS, *ids(a), EOS]), padded([CLS, *ids(b), EOS])]
        assert joined[row].tolist() == [padded([CLS, *ids(a), SEP, *ids(b), EOS])]


def test_file_trial_data_end_to_end(tmp_path):
    pairs = [(f"cap {i}", f"alt {i}") for i in range(40)]
    data = file_dataset(tmp_path, pairs, [f"eval {i}" for i in range(30)], width=8)
    write_jsonl(tmp_path / "docs.jsonl", [{"text": f"doc {i} has words in it"} for i in range(40)])
    raw = {
        "name": "f",
        "data": data | {"documents": "docs.jsonl", "max_len": 16},
        "eval": {"set": "toy-30"},
        "grid": {"objective": ["jepa_bad", "ntp"], "model": ["tiny"], "data_size": [32], "seed": [0]},
    }
    spec = parse_spec(raw, "f.yaml", base_dir=tmp_path)
    for config in spec.trials:
        data = open_trial_data(config, tmp_path / "cache")
        batch = data.take(30, 5)  # crosses into the second epoch
        assert batch.shape == (5, 1 if config.objective == "ntp" else 2, 16)
        np.testing.assert_array_equal(data.take(31, 2), batch[1:3])
        assert data.eval_set.references["dino"].shape == (30, 8)


@pytest.mark.parametrize(
    ("name", "array", "message"),
    [
        ("complex.npy", np.ones((3, 4)) * 1j, "complex values"),
        ("text.npy", np.full((3, 4), "x"), "dtype <U1 is not numeric"),
        ("one_row.npy", np.zeros((1, 4)), "1 rows x 4 columns (need 2+ rows, 1+ column)"),
        (
            "layers.npz",
            {"a": np.zeros((3, 4)), "b": np.zeros((3, 4))},
            "a stack of 2 layers, and eval.scoring orch scores one matrix a reference ('dino')",
        ),
        ("empty.npy", b"", "not a feature file"),
    ],
)
def test_a_bad_reference_matrix_is_one_line_naming_it(tmp_path, name, array, message):
    texts = write_jsonl(tmp_path / "t.jsonl", [{"text": "a"}, {"text": "b"}, {"text": "c"}])
    path = tmp_path / name
    if isinstance(array, bytes):
        path.write_bytes(array)
    elif isinstance(array, dict):
        np.savez(path, **array)
    else:
        np.save(path, array)
    with pytest.raises(DataError, match=re.escape(message)) as caught:
        read_eval(texts, {"dino": path})
    assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)


def test_a_layer_stack_reference_is_read_whole_and_its_rows_checked_against_the_texts(tmp_path):
    rows = [{"id": f"img{i}", "text": t} for i, t in enumerate("abc")]
    texts = write_jsonl(tmp_path / "t.jsonl", rows)
    stack = tmp_path / "dino.npz"
    np.savez(stack, layer_00=np.ones((3, 4)), layer_01=np.zeros((3, 6)))
    _, references = read_eval(texts, {"dino": stack}, stacks=True)
    assert [layer.shape for layer in references["dino"]] == [(3, 4), (3, 6)]
    np.savez(stack, layer_00=np.ones((3, 4)), layer_01=np.zeros((2, 4)))
    with pytest.raises(DataError, match=r"dino.npz\[layer_01\] \(reference 'dino'\): 2 rows, but .*has 3"):
        read_eval(texts, {"dino": stack}, stacks=True)
    np.savez(stack, layer_00=np.ones((3, 4)))
    sidecar = {
        "format": "orch-features/1",
        "side": "image",
        "model": {"folder": "/m", "sha256": "0" * 64},
        "rows": {"count": 3, "ids": ["img0", "img2", "img1"], "sha256": ["0" * 64] * 3},
    }
    stack.with_suffix(".json").write_text(json.dumps(sidecar))
    with pytest.raises(DataError, match=r"dino.npz: row 1 is id 'img2' by its sidecar, but .*t.jsonl row 1"):
        read_eval(texts, {"dino": stack}, stacks=True)


def test_the_corpus_is_the_stated_size_else_the_parquet_shards_footer_counts(tmp_path):
    table = pa.table({"image_id": range(37), "caption_a": ["a dog"] * 37, "caption_b": ["a cat"] * 37})
    for shard in ("p1.parquet", "p2.parquet"):
        pq.write_table(table, tmp_path / shard)
    data = {
        "source": "files",
        "pairs": "p*.parquet",
        "eval": {"texts": "e.jsonl", "features": {"r": "r.npy"}},
    }
    assert corpus_of(parse_data(data, str(tmp_path))) == 74
    assert corpus_of(parse_data({**data, "corpus": "940M"}, str(tmp_path))) == 940_000_000
    (tmp_path / "p3.jsonl").write_text('{"caption_a": "x", "caption_b": "y"}\n')
    assert corpus_of(parse_data({**data, "pairs": ["p*.parquet", "p3.jsonl"]}, str(tmp_path))) is None
    assert corpus_of(parse_data({**data, "pairs": "none*.parquet"}, str(tmp_path))) is None
