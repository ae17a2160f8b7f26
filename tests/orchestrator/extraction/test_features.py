"""`orch features` on tiny models built here (random weights, a tokenizer trained on the spot):
shapes and layers, a row's features independent of its batch and padding, row order, the block
CLS tokens of vision models, the sidecar, and every bad input in one line."""

import json
import os
import pickle
import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from bench import tiny_models as models
from orchestrator.errors import InputError
from orchestrator.extraction import Options, extract, read_items
from orchestrator.extraction.models import check_model_folder
from orchestrator.extraction.text import text_batches
from tests.cli import orch

pytest.importorskip("transformers")

TEXT_MODELS = ("gpt2", "llama", "mpnet", "clip")
IMAGE_MODELS = ("dinov2", "clip")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """Every tiny model and a manifest of 8 rows, made once for the module."""
    root = tmp_path_factory.mktemp("models")
    for kind in TEXT_MODELS:
        models.text_model(root / f"text_{kind}", kind)
    for kind in IMAGE_MODELS:
        models.image_model(root / f"image_{kind}", kind)
    models.manifest(root)
    return root


def features(folder: Path, kind: str, side: str, items=None, **options):
    items = read_items(folder / "manifest.jsonl", side) if items is None else items
    return extract(
        folder / f"{side}_{kind}", items, Options(side, dtype="float32", **options), lambda _: None
    )


@pytest.mark.parametrize("kind", TEXT_MODELS)
def test_a_text_model_gives_every_hidden_state_one_row_per_item(folder, kind):
    found = features(folder, kind, "text")
    assert len(found.layers) == models.BLOCKS + 1 and found.names[0] == "embeddings"
    assert all(layer.shape == (8, models.WIDTH) and layer.dtype == np.float32 for layer in found.layers)
    assert found.settings["causal"] == (kind != "mpnet")
    expected_last = "block 2 output, after the final norm" if kind in ("gpt2", "llama") else "block 2 output"
    assert found.names[-1] == expected_last  # CLIP's final norm is not in its hidden states


@pytest.mark.parametrize("pool", ["mean", "last", "eos"])
@pytest.mark.parametrize("kind", TEXT_MODELS)
def test_a_row_alone_equals_the_row_inside_a_padded_batch(folder, kind, pool):
    items = read_items(folder / "manifest.jsonl", "text")
    if pool == "eos" and kind in ("gpt2", "llama"):
        with pytest.raises(InputError, match=r"--pool eos: row 'row0' has no EOS token .*use --pool last"):
            features(folder, kind, "text", pool=pool)
        return
    together = features(folder, kind, "text", pool=pool)  # one batch, padded to the longest row
    for index, item in enumerate(items):
        alone = features(folder, kind, "text", items=[item], pool=pool)
        for batched, single in zip(together.layers, alone.layers, strict=True):
            np.testing.assert_allclose(batched[index], single[0], atol=1e-5, rtol=0)


@pytest.mark.parametrize("kind", ["gpt2", "mpnet"])
def test_batch_size_changes_nothing_and_rows_keep_the_manifest_order(folder, kind):
    whole = features(folder, kind, "text", batch_tokens=100_000)
    small = features(folder, kind, "text", batch_tokens=12)  # length-sorted buckets of 1 or 2 rows
    reversed_items = read_items(folder / "manifest.jsonl", "text")[::-1]
    backwards = features(folder, kind, "text", items=reversed_items)
    for a, b, c in zip(whole.layers, small.layers, backwards.layers, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)
        np.testing.assert_allclose(a, c[::-1], atol=1e-5, rtol=0)


def test_text_batches_hold_similar_lengths_within_the_token_budget():
    batches = text_batches([3, 9, 4, 9, 2, 30], batch_tokens=20)
    assert batches == [[5], [1, 3], [2, 0, 4]]  # the 30-token row goes alone; 9 + 9 = 18 fits


def torchvision_eval(image, size: int, crop_pct: float):
    """timm's eval transform as torchvision applies it, from its documented rules: Resize(floor(
    size / crop_pct)) on the shorter side, the longer truncated, bicubic; CenterCrop(size) with
    offsets int(round((side - size) / 2.0))."""
    from PIL import Image

    target = int(size / crop_pct)
    w, h = image.size
    new = (target, int(target * h / w)) if w <= h else (int(target * w / h), target)
    resized = image.convert("RGB").resize(new, Image.Resampling.BICUBIC)
    left, top = round((new[0] - size) / 2.0), round((new[1] - size) / 2.0)  # Python's round, as torchvision's
    return np.asarray(resized.crop((left, top, left + size, top + size)), dtype=np.float32) / 255.0


@pytest.mark.parametrize(("shape", "crop_pct"), [((45, 31), 0.9), ((31, 45), 0.9), ((40, 33), 1.0)])
def test_compat_platonic_rep_resizes_and_crops_as_timms_transform_does(tmp_path, shape, crop_pct):
    from PIL import Image

    from orchestrator.extraction.images import pixels
    from orchestrator.extraction.manifest import Item

    path = tmp_path / "i.png"
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, size=(*shape[::-1], 3), dtype=np.uint8)).save(path)
    settings = {
        "size": 28,
        "compat": "platonic-rep",
        "crop_pct": crop_pct,
        "mean": [0.0] * 3,
        "std": [1.0] * 3,
    }
    ours = pixels(Item("0", image=path), settings).numpy().transpose(1, 2, 0)
    with Image.open(path) as image:
        np.testing.assert_array_equal(ours, torchvision_eval(image, 28, crop_pct))
    own = pixels(Item("0", image=path), {**settings, "compat": None}).numpy().transpose(1, 2, 0)
    assert own.shape == ours.shape and not np.array_equal(own, ours)  # orch's own rounds and floors


@pytest.mark.parametrize("kind", IMAGE_MODELS)
def test_an_image_model_gives_every_blocks_cls_token_before_the_final_norm(folder, kind):
    import torch
    from PIL import Image

    from orchestrator.extraction.images import pixels
    from orchestrator.extraction.models import image_settings, load_model

    found = features(folder, kind, "image", batch_images=3)
    assert len(found.layers) == models.BLOCKS and all(
        layer.shape == (8, models.WIDTH) for layer in found.layers
    )
    assert all(name.endswith("CLS token, before the final norm") for name in found.names)
    model = load_model(folder / f"image_{kind}", "image", "float32", None, None)
    items = read_items(folder / "manifest.jsonl", "image")
    settings = image_settings(folder / f"image_{kind}", model.config)
    with torch.inference_mode():
        hidden = model(pixel_values=pixels(items[5], settings)[None], output_hidden_states=True).hidden_states
    for layer, states in zip(found.layers, hidden[1:], strict=True):  # Hugging Face's own states
        np.testing.assert_allclose(layer[5], states[0, 0].numpy(), atol=1e-5, rtol=0)
    with Image.open(items[5].image) as image:
        assert image.size != (settings["size"],) * 2  # each image was resized to the native size
    one = features(folder, kind, "image", items=items[5:6])
    np.testing.assert_allclose(found.layers[-1][5], one.layers[-1][0], atol=1e-5, rtol=0)


def test_layers_keeps_the_ones_asked_in_depth_order(folder):
    found = features(folder, "gpt2", "text", layers=(-1, 0))
    assert found.names == ["embeddings", "block 2 output, after the final norm"]
    with pytest.raises(InputError, match=r"--layers 7: the model has 3 layers"):
        features(folder, "gpt2", "text", layers=(7,))


def test_a_hub_id_or_a_folder_that_is_no_model_is_one_line(tmp_path):
    with pytest.raises(InputError, match=r"hub id, and orch never downloads; .*hf download Qwen/Qwen2.5-72B"):
        check_model_folder("Qwen/Qwen2.5-72B")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"not a model folder \(no config.json"):
        check_model_folder(str(tmp_path / "empty"))


def test_a_manifest_with_a_missing_field_or_an_image_that_does_not_decode_is_one_line(folder, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "a dog"}\n{"id": "b"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:2: missing field 'text'"):
        read_items(bad, "text")
    with pytest.raises(InputError, match=r"bad.jsonl:1: missing field 'image'"):
        read_items(bad, "image")
    (tmp_path / "broken.png").write_bytes(b"not a png")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x", "image": "broken.png"}\n')
    with pytest.raises(InputError, match=r"row 'x': image .*broken.png does not decode"):
        features(folder, "dinov2", "image", items=read_items(broken, "image"))


class Payload:
    """Unpickled, it would run a shell command: a .bin weights file from a stranger."""

    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_a_pickled_payload_or_a_cut_safetensors_is_refused_in_one_line(folder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    planted = tmp_path / "text_planted"
    shutil.copytree(folder / "text_gpt2", planted)
    (planted / "model.safetensors").unlink()
    (planted / "pytorch_model.bin").write_bytes(pickle.dumps({"weight": Payload()}))
    with pytest.raises(
        InputError, match=r"text_planted: its .bin weights hold Python objects .* safetensors"
    ) as refused:
        features(tmp_path, "planted", "text", items=read_items(folder / "manifest.jsonl", "text"))
    assert "weights_only" not in str(refused.value) and not (tmp_path / "pwned").exists()
    cut = tmp_path / "text_cut"
    shutil.copytree(folder / "text_gpt2", cut)
    weights = (cut / "model.safetensors").read_bytes()
    (cut / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    with pytest.raises(
        InputError, match=r"text_cut: a .safetensors file does not read .* copy the folder again"
    ):
        features(tmp_path, "cut", "text", items=read_items(folder / "manifest.jsonl", "text"))


def test_a_manifest_not_in_utf8_or_an_image_declaring_400_megapixels_is_one_line(folder, tmp_path):
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"id": "a", "text": "a dog"}\n{"id": "b", "text": "r\xe9d"}\n')
    with pytest.raises(InputError, match=r"latin.jsonl:2: not UTF-8 \(byte 0xe9 at column 23\)"):
        read_items(latin, "text")
    (tmp_path / "huge.png").write_bytes(png_header(20_000, 20_000))
    (tmp_path / "large.png").write_bytes(png_header(9_000, 9_000))
    for name in ("huge", "large"):
        manifest = tmp_path / f"{name}.jsonl"
        manifest.write_text(f'{{"id": "x", "image": "{name}.png"}}\n')
        with pytest.raises(InputError, match=rf"row 'x': image .*{name}.png"):
            features(folder, "dinov2", "image", items=read_items(manifest, "image"))


def png_header(width: int, height: int) -> bytes:
    """A PNG whose header declares width x height pixels, with almost no data behind it."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0" * 16))
        + chunk(b"IEND", b"")
    )


def test_a_folder_where_the_sidecar_goes_is_refused_before_either_file_is_written(folder, tmp_path):
    (tmp_path / "text.json").mkdir()
    args = ["--model", str(folder / "text_gpt2"), "--data", str(folder / "manifest.jsonl")]
    refused = orch("features", "text", *args, "--out", "text.npz", cwd=tmp_path)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "text.json is there and is not a file" in refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["text.json"]


def test_a_sidecar_over_the_manifest_it_reads_is_refused_and_the_manifest_kept(folder, tmp_path):
    manifest = tmp_path / "eval.json"
    manifest.write_bytes((folder / "manifest.jsonl").read_bytes())
    args = ["--model", str(folder / "text_gpt2"), "--data", "eval.json"]
    refused = orch("features", "text", *args, "--out", "eval.npz", cwd=tmp_path)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "its sidecar eval.json is the input eval.json" in refused.stderr
    assert manifest.read_bytes() == (folder / "manifest.jsonl").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.json"]


def test_the_commands_write_features_a_sidecar_and_score_them(folder, tmp_path):
    text = orch(
        "features",
        "text",
        "--model",
        str(folder / "text_gpt2"),
        "--data",
        str(folder / "manifest.jsonl"),
        "--out",
        "text.npz",
        "--dtype",
        "float32",
        cwd=tmp_path,
    )
    assert text.returncode == 0, text.stderr
    image = orch(
        "features",
        "image",
        "--model",
        str(folder / "image_dinov2"),
        "--data",
        str(folder / "manifest.jsonl"),
        "--out",
        "image.npz",
        cwd=tmp_path,
    )
    assert image.returncode == 0, image.stderr
    sidecar = json.loads((tmp_path / "text.json").read_text())
    assert sidecar["rows"]["ids"] == [f"row{i}" for i in range(8)] and sidecar["padding"].startswith("left")
    assert sidecar["model"]["type"] == "gpt2" and len(sidecar["model"]["sha256"]) == 64
    assert [layer["key"] for layer in sidecar["layers"]] == ["layer_00", "layer_01", "layer_02"]
    assert sidecar["versions"]["transformers"] and sidecar["dtype"] == "float32"
    with np.load(tmp_path / "text.npz") as saved:
        assert saved.files == ["layer_00", "layer_01", "layer_02"]
    scored = orch("align", "text.npz", "image.npz", "--metric", "mutual_knn@3", "--json", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert 0 <= json.loads(scored.stdout)["scores"][0]["value"] <= 1
    hub = orch(
        "features",
        "text",
        "--model",
        "meta-llama/Llama-3-70B",
        "--data",
        str(folder / "manifest.jsonl"),
        "--out",
        "x.npz",
        cwd=tmp_path,
    )
    assert hub.returncode == 2 and len(hub.stderr.strip().splitlines()) == 1 and "hub id" in hub.stderr
    assert not (tmp_path / "x.npz").exists() and not list(tmp_path.glob(".*partial"))


def test_a_row_longer_than_the_model_reads_is_cut_and_counted(folder, tmp_path):
    long = tmp_path / "long.jsonl"
    long.write_text(json.dumps({"id": "long", "text": " ".join(models.SENTENCES * 4)}) + "\n")
    found = features(folder, "gpt2", "text", items=read_items(long, "text"))
    assert found.settings["truncated_rows"] == 1 and found.settings["max_tokens"] == 64


def test_a_model_spread_by_device_map_gives_the_same_features(folder):
    pytest.importorskip("accelerate")
    placed = features(folder, "llama", "text", device_map="auto", max_memory="1GiB")
    whole = features(folder, "llama", "text")
    for a, b in zip(placed.layers, whole.layers, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6, rtol=0)


def test_a_model_of_the_other_side_is_one_line(folder):
    def other_side(model: str, side: str) -> None:
        items = read_items(folder / "manifest.jsonl", side)
        extract(folder / model, items, Options(side, dtype="float32"), lambda _: None)

    with pytest.raises(InputError, match=r"image_dinov2: holds no tokenizer .*read by orch features image"):
        other_side("image_dinov2", "text")
    with pytest.raises(InputError, match=r"text_gpt2: not a vision model .*read by orch features text"):
        other_side("text_gpt2", "image")
