"""Tiny pretrained-model folders built on the spot (random weights, `save_pretrained`), with a
tokenizer trained on a few sentences: what `orch features` reads, with nothing downloaded. The
benchmarks build theirs with it (bench/features.py), and so do the tests."""

from pathlib import Path

import numpy as np
from PIL import Image

SENTENCES = [
    "a dog runs on the beach",
    "two cats sleep on a red sofa",
    "the city at night with bright lights",
    "a bowl of fruit on a wooden table",
    "children play football in the park",
    "a small boat on a calm lake",
    "snow covers the mountain village",
    "an old man reads a newspaper",
]
WIDTH, HEADS, BLOCKS = 32, 4, 2


def tokenizer(eos: bool):
    """A word-level tokenizer trained on SENTENCES; with `eos`, every row ends in </s>."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel(unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.train_from_iterator(
        SENTENCES, trainers.WordLevelTrainer(special_tokens=["<pad>", "<unk>", "<s>", "</s>"])
    )
    if eos:
        core.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", special_tokens=[("<s>", 2), ("</s>", 3)]
        )
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )


def text_config(kind: str, vocab: int):
    import transformers as t

    common = {"vocab_size": vocab, "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 3}
    if kind == "gpt2":
        return t.GPT2Config(n_embd=WIDTH, n_layer=BLOCKS, n_head=HEADS, n_positions=64, **common)
    if kind == "llama":
        return t.LlamaConfig(
            hidden_size=WIDTH,
            intermediate_size=64,
            num_hidden_layers=BLOCKS,
            num_attention_heads=HEADS,
            num_key_value_heads=2,
            max_position_embeddings=64,
            **common,
        )
    if kind == "mpnet":
        return t.MPNetConfig(
            hidden_size=WIDTH,
            intermediate_size=64,
            num_hidden_layers=BLOCKS,
            num_attention_heads=HEADS,
            max_position_embeddings=66,
            **common,
        )
    raise ValueError(kind)


def text_model(folder: Path, kind: str) -> Path:
    """A tiny text model of `kind` (gpt2, llama, mpnet, clip) saved with its tokenizer."""
    import torch
    import transformers as t

    torch.manual_seed(0)
    words = tokenizer(eos=kind in ("mpnet", "clip"))
    if kind == "clip":
        model = t.CLIPModel(clip_config(len(words)))
    else:
        model = t.AutoModel.from_config(text_config(kind, len(words)))
    model.save_pretrained(folder)
    words.save_pretrained(folder)
    return folder


def clip_config(vocab: int):
    import transformers as t

    tower = {
        "hidden_size": WIDTH,
        "intermediate_size": 64,
        "num_hidden_layers": BLOCKS,
        "num_attention_heads": HEADS,
    }
    return t.CLIPConfig(
        text_config={
            **tower,
            "vocab_size": vocab,
            "max_position_embeddings": 64,
            "pad_token_id": 0,
            "bos_token_id": 2,
            "eos_token_id": 3,
        },
        vision_config={**tower, "image_size": 32, "patch_size": 8},
        projection_dim=16,
    )


def image_model(folder: Path, kind: str) -> Path:
    """A tiny vision model of `kind` (dinov2, clip) saved with a processor config."""
    import json

    import torch
    import transformers as t

    torch.manual_seed(0)
    if kind == "dinov2":
        model = t.Dinov2Model(
            t.Dinov2Config(
                hidden_size=WIDTH,
                num_hidden_layers=BLOCKS,
                num_attention_heads=HEADS,
                mlp_ratio=2,
                image_size=28,
                patch_size=14,
            )
        )
        processor = {
            "image_mean": [0.485, 0.456, 0.406],
            "image_std": [0.229, 0.224, 0.225],
            "crop_size": {"height": 224, "width": 224},
        }
    else:
        model = t.CLIPModel(clip_config(16))
        processor = {"image_mean": [0.481, 0.458, 0.408], "image_std": [0.269, 0.261, 0.276]}
    model.save_pretrained(folder)
    (folder / "preprocessor_config.json").write_text(json.dumps(processor))
    return folder


def manifest(folder: Path, rows: int = 8) -> Path:
    """A JSONL manifest of `rows` rows, each with captions and an image of its own."""
    import json

    rng = np.random.default_rng(0)
    lines = []
    for i in range(rows):
        image = folder / f"image_{i}.png"
        Image.fromarray(rng.integers(0, 256, (40 + 4 * i, 48, 3), dtype=np.uint8)).save(image)
        captions = [SENTENCES[i % len(SENTENCES)], SENTENCES[(i + 3) % len(SENTENCES)]]
        lines.append(json.dumps({"id": f"row{i}", "captions": captions, "image": image.name}))
    path = folder / "manifest.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def features_file(model: Path, data: Path, out: Path, side: str = "text") -> Path:
    """What `orch features` writes (the features and their sidecar), made in this process."""
    from orchestrator.extraction import Options, extract, read_items
    from orchestrator.extraction.models import folder_sha256
    from orchestrator.extraction.output import write_features

    items, options = read_items(data, side), Options(side, dtype="float32")
    write_features(
        out, extract(model, items, options, lambda _: None), items, model, folder_sha256(model), options
    )
    return out
