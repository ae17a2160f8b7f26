"""`orch data pairs` and `orch data chunks`: which captions pair up under each rule, the same pairs
from every input format, the sidecar's record (rule, inputs' sha256, counts, overlap with the
eval texts), and one line for each bad input with nothing left behind."""

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from orchestrator.data.files import iter_documents, iter_pairs
from tests.cli import one_error_line, orch
from tests.datasets import write_jsonl

# image 7's captions are far apart in the input (another image's between), as COCO's are
ROWS = [
    {"image_id": 7, "caption": "a cat on a mat"},
    {"image_id": 3, "caption": "two dogs run"},
    {"image_id": 3, "caption": "dogs running in a field"},
    {"image_id": 7, "caption": "a cat sits on a rug"},
    {"image_id": 7, "caption": "the cat rests"},
    {"image_id": 3, "caption": "a pair of dogs"},
    {"image_id": 7, "caption": "A  cat on a MAT"},
]
DOGS = ["two dogs run", "dogs running in a field", "a pair of dogs"]
CATS = ["a cat on a mat", "a cat sits on a rug", "the cat rests", "A  cat on a MAT"]


def write_inputs(folder: Path) -> dict[str, Path]:
    """The same rows as COCO caption JSON, JSONL, CSV and Parquet."""
    coco = folder / "captions.json"
    annotations = [dict(row, id=i) for i, row in enumerate(ROWS)]
    coco.write_text(json.dumps({"images": [], "annotations": annotations}))
    csv = folder / "rows.csv"
    csv.write_text("image_id,caption\n" + "".join(f'{r["image_id"]},"{r["caption"]}"\n' for r in ROWS))
    parquet = folder / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), parquet)
    return {"coco": coco, "jsonl": write_jsonl(folder / "rows.jsonl", ROWS), "csv": csv, "parquet": parquet}


def pairs_of(path: Path) -> list[tuple[str, str, str]]:
    return sorted((r["image_id"], r["caption_a"], r["caption_b"]) for r in pq.read_table(path).to_pylist())


def build(folder: Path, *args: str) -> dict:
    result = orch("data", "pairs", *args, "--out", "pairs.parquet", cwd=folder)
    assert result.returncode == 0, result.stderr
    return json.loads((folder / "pairs.json").read_text())


@pytest.mark.parametrize("kind", ["coco", "jsonl", "csv", "parquet"])
def test_every_input_format_gives_the_same_pairs_and_the_sidecar_records_how(tmp_path, kind):
    source = write_inputs(tmp_path)[kind]
    sidecar = build(tmp_path, str(source))
    assert pairs_of(tmp_path / "pairs.parquet") == sorted(
        [("3", DOGS[0], DOGS[1]), ("7", CATS[0], CATS[1]), ("7", CATS[2], CATS[3])]
    )
    assert sidecar["rule"] == "disjoint" and sidecar["format"] == "orch-pairs/1"
    assert sidecar["inputs"] == [
        {"path": str(source.resolve()), "sha256": hashlib.sha256(source.read_bytes()).hexdigest(), "rows": 7}
    ]
    assert sidecar["counts"] == {"captions": 7, "images": 2, "pairs": 3, "single": 0, "unused": 1}
    assert list(iter_pairs([tmp_path / "pairs.parquet"]))  # what a files source reads
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no part left behind
    assert build(tmp_path, str(source)) == sidecar  # run again: what orch wrote there is replaced


def test_every_pair_and_one_drawn_pair_and_the_overlap_with_the_eval_texts(tmp_path):
    source = write_inputs(tmp_path)["jsonl"]
    write_jsonl(tmp_path / "eval.jsonl", [{"text": "a cat on a mat"}, {"text": "a bird"}])
    every = build(tmp_path, str(source), "--rule", "all", "--eval-texts", "eval.jsonl")
    assert every["counts"]["pairs"] == 3 + 6 and len(pairs_of(tmp_path / "pairs.parquet")) == 9
    assert every["overlap"]["count"] == 1 and every["overlap"]["texts"] == ["a cat on a mat"]
    one = build(tmp_path, str(source), "--rule", "one", "--seed", "3")
    drawn = pairs_of(tmp_path / "pairs.parquet")
    assert one["seed"] == 3 and [image for image, _, _ in drawn] == ["3", "7"]
    assert all({a, b} <= set(DOGS if image == "3" else CATS) and a != b for image, a, b in drawn)
    build(tmp_path, str(source), "--rule", "one", "--seed", "3")
    assert pairs_of(tmp_path / "pairs.parquet") == drawn  # the seed decides the draw


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "no_id.json",
            json.dumps({"annotations": [{"image_id": 1, "caption": "x"}, {"caption": "y"}]}),
            "no_id.json: annotations[1]: no image_id (every row needs image_id and caption)",
        ),
        ("no_id.jsonl", '{"image_id": 1, "caption": "a"}\n{"caption": "b"}\n', "no_id.jsonl:2: no image_id"),
        ("header.csv", "id,caption\n1,a\n", "header.csv: no image_id column in its header"),
        (
            "single.jsonl",
            "".join(
                json.dumps({"image_id": i, "caption": c}) + "\n" for i, c in [(1, "a"), (2, "b"), (1, "c")]
            ),
            "single.jsonl:2: image '2' has 1 caption, and a pair needs 2: drop its row, or pass",
        ),
        ("empty.jsonl", '{"image_id": 1, "caption": " "}\n', "empty.jsonl:1: caption is empty"),
    ],
)
def test_a_bad_input_is_one_line_naming_file_and_row_and_writes_nothing(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    line = one_error_line(orch("data", "pairs", name, "--out", "pairs.parquet", cwd=tmp_path))
    assert message in line
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_single_caption_images_may_be_counted_out(tmp_path):
    write_jsonl(tmp_path / "rows.jsonl", [*ROWS, {"image_id": 9, "caption": "alone"}])
    sidecar = build(tmp_path, "rows.jsonl", "--skip-single")
    assert sidecar["counts"]["single"] == 1 and sidecar["counts"]["pairs"] == 3


def test_documents_are_cut_by_the_recorded_rule_and_read_as_bad_views(tmp_path):
    write_jsonl(
        tmp_path / "docs.jsonl",
        [
            {"id": "d1", "text": "one two three four five six seven"},
            {"text": "solo"},
            {"text": "a cat on a mat today"},
        ],
    )
    evals = ["A cat on a mat", "Five six.", "three four", "a bird"]  # the first's "mat" is in no chunk
    write_jsonl(tmp_path / "eval.jsonl", [{"text": text} for text in evals])
    result = orch(
        "data", "chunks", "docs.jsonl", "--out", "chunks.parquet", "--rule", "adjacent", "--words", "2",
        "--eval-texts", "eval.jsonl", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    sidecar = json.loads((tmp_path / "chunks.json").read_text())
    assert (sidecar["rule"], sidecar["words"]) == ("adjacent", 2)
    assert sidecar["counts"] == {"documents": 3, "pairs": 2 + 0 + 1, "short": 1, "unused": 0 + 1 + 1}
    overlap = sidecar["overlap"]  # in the chunks written: a document's unused tail is not trained on
    assert (overlap["exact"], overlap["near"], overlap["count"]) == (["three four"], ["Five six."], 2)
    assert list(iter_documents([tmp_path / "chunks.parquet"])) == [
        ("one two", "three four"),
        ("five six", "seven"),
        ("a cat", "on a"),
    ]
    halves = orch("data", "chunks", "docs.jsonl", "--out", "halves.parquet", cwd=tmp_path)
    assert halves.returncode == 0, halves.stderr
    assert list(iter_documents([tmp_path / "halves.parquet"])) == list(
        iter_documents([tmp_path / "docs.jsonl"])
    )


def test_the_overlap_counts_the_captions_paired_as_exact_and_near_copies(tmp_path):
    """An exact copy, an upper-cased copy and one without its final period are in the pairs; a
    caption the disjoint rule leaves over and an image's single caption (--skip-single) are in
    the input only, and so in no trial's training text."""
    captions = [
        (1, "A dog runs on the beach."), (1, "a dog on sand"),
        (2, "A RED KITE IN THE SKY."), (2, "kite flying"),
        (3, "Two birds on a wire"), (3, "birds sitting"),
        (4, "a horse"), (4, "a rider"), (4, "A man rides a horse."),
        (5, "A boat on a lake."),
    ]  # fmt: skip
    annotations = [{"image_id": i, "id": n, "caption": c} for n, (i, c) in enumerate(captions)]
    (tmp_path / "captions.json").write_text(json.dumps({"images": [], "annotations": annotations}))
    evals = ["A dog runs on the beach.", "A red kite in the sky.", "Two birds on a wire."]
    evals += ["A man rides a horse.", "A boat on a lake.", "A cat."]
    write_jsonl(tmp_path / "eval.jsonl", [{"text": text} for text in evals])
    sidecar = build(tmp_path, "captions.json", "--skip-single", "--eval-texts", "eval.jsonl")
    assert (sidecar["counts"]["unused"], sidecar["counts"]["single"]) == (1, 1)
    overlap = sidecar["overlap"]
    assert overlap["exact"] == ["A dog runs on the beach."]
    assert overlap["near"] == ["A red kite in the sky.", "Two birds on a wire."]
    assert (overlap["count"], overlap["of"]) == (3, 6) and "near copy" in overlap["rule"]


def test_sizes_read_nested_subsets_that_cover_as_many_images_as_the_file_allows(tmp_path):
    """A trial of size D reads the file's first D pairs (`iter_pairs`, then the stream's prefix):
    under every rule and seed, a smaller size's pairs are a larger's first ones, and D pairs
    cover min(D, images) images; the order of the images is the seed's, whatever the rule."""
    images = 40
    rows = [
        {"image_id": f"img{i}", "caption": f"caption {k} of {i}"} for k in range(5) for i in range(images)
    ]
    write_jsonl(tmp_path / "rows.jsonl", rows)  # each image's captions far apart, as COCO's are
    first_round = {}
    for rule, seed in (("all", 0), ("disjoint", 0), ("all", 1)):
        build(tmp_path, "rows.jsonl", "--rule", rule, "--seed", str(seed))
        table = pq.read_table(tmp_path / "pairs.parquet")
        written = list(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True))
        assert [(a, b) for _, a, b in written] == list(iter_pairs([tmp_path / "pairs.parquet"]))
        for small, large in ((10, 40), (40, 100), (100, len(written))):
            assert len({image for image, _, _ in written[:small]}) == min(small, images)
            assert set(written[:small]) <= set(written[:large])
        first_round[rule, seed] = [image for image, _, _ in written[:images]]
        order = json.loads((tmp_path / "pairs.json").read_text())["order"]
        assert order["pairs_per_round"][0] == images and sum(order["pairs_per_round"]) == len(written)
    assert first_round["all", 0] == first_round["disjoint", 0] != first_round["all", 1]
