"""`orch features` against a bare transformers loop over the same batches, side by side.

Random-initialised models saved to a temporary folder (nothing is downloaded): a small ViT
(DINOv2-shaped) and a small causal LM (GPT-2-shaped). Each way runs REPEATS times, alternating;
the medians and their ratio (orch / bare throughput; goal >= 0.95) are printed. Both ways decode
and resize the same images and tokenize the same texts; the bare loop pads on the left with
position ids from the mask and mean-pools every hidden state, as orch does.

    python bench/features.py              # 512 texts, 128 images, on CPU (or --device cuda)
    python bench/features.py --quick      # 128 texts, 32 images
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from orchestrator.extraction import Options, extract, read_items
from orchestrator.extraction.text import text_batches

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' tiny-model builders
import tiny_models as models  # bench/ is first on the path, as the benchmarks run

REPEATS = 5
LM = {"n_embd": 256, "n_layer": 4, "n_head": 4, "n_positions": 128}
VIT = {
    "hidden_size": 192,
    "num_hidden_layers": 6,
    "num_attention_heads": 3,
    "image_size": 112,
    "patch_size": 14,
}


def build(folder: Path, texts: int, images: int) -> None:
    import transformers as t

    words = models.tokenizer(eos=False)
    torch.manual_seed(0)
    t.GPT2Model(t.GPT2Config(vocab_size=len(words), pad_token_id=0, eos_token_id=3, **LM)).save_pretrained(
        folder / "lm"
    )
    words.save_pretrained(folder / "lm")
    t.Dinov2Model(t.Dinov2Config(**VIT)).save_pretrained(folder / "vit")
    rng = np.random.default_rng(0)
    lines = []
    for i in range(max(texts, images)):
        Image.fromarray(rng.integers(0, 256, (160, 200, 3), dtype=np.uint8)).save(folder / f"{i}.png")
        words_in_row = rng.choice(" ".join(models.SENTENCES).split(), size=int(rng.integers(4, 40)))
        lines.append(f'{{"id": "{i}", "text": "{" ".join(words_in_row)}", "image": "{i}.png"}}')
    (folder / "texts.jsonl").write_text("\n".join(lines[:texts]) + "\n")
    (folder / "images.jsonl").write_text("\n".join(lines[:images]) + "\n")


def bare_text(folder: Path, device: str, batch_tokens: int) -> int:
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(folder / "lm", local_files_only=True).eval().to(device)
    tokenizer = AutoTokenizer.from_pretrained(folder / "lm", local_files_only=True)
    texts = [row.text for row in read_items(folder / "texts.jsonl", "text")]
    ids = [tokenizer(text)["input_ids"] for text in texts]
    pooled = []
    with torch.inference_mode():
        for batch in text_batches([len(row) for row in ids], batch_tokens):
            width = max(len(ids[i]) for i in batch)
            input_ids = torch.zeros((len(batch), width), dtype=torch.long)
            mask = torch.zeros_like(input_ids)
            for row, i in enumerate(batch):
                input_ids[row, width - len(ids[i]) :] = torch.tensor(ids[i])
                mask[row, width - len(ids[i]) :] = 1
            position_ids = (mask.cumsum(-1) - 1).clamp(min=0)
            output = model(
                input_ids=input_ids.to(device),
                attention_mask=mask.to(device),
                position_ids=position_ids.to(device),
                output_hidden_states=True,
            )
            weights = mask.to(device)[..., None].float()
            pooled.append(
                [((h.float() * weights).sum(1) / weights.sum(1)).cpu() for h in output.hidden_states]
            )
    return len(texts)


def bare_images(folder: Path, device: str, batch: int) -> int:
    from transformers import AutoModel

    model = AutoModel.from_pretrained(folder / "vit", local_files_only=True).eval().to(device)
    size, mean, std = VIT["image_size"], np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    paths = [row.image for row in read_items(folder / "images.jsonl", "image")]
    cls = []
    with torch.inference_mode():
        for start in range(0, len(paths), batch):
            pixels = []
            for path in paths[start : start + batch]:
                with Image.open(path) as image:
                    image = image.convert("RGB")
                    scale = size / min(image.size)
                    w, h = max(size, round(image.width * scale)), max(size, round(image.height * scale))
                    image = image.resize((w, h), Image.Resampling.BICUBIC)
                    left, top = (w - size) // 2, (h - size) // 2
                    array = np.asarray(image.crop((left, top, left + size, top + size)), np.float32) / 255
                pixels.append(
                    torch.from_numpy(((array - mean) / std).astype(np.float32).transpose(2, 0, 1).copy())
                )
            output = model(pixel_values=torch.stack(pixels).to(device), output_hidden_states=True)
            cls.append([h[:, 0].float().cpu() for h in output.hidden_states[1:]])
    return len(paths)


def orch_way(folder: Path, side: str, device: str) -> int:
    model, data = ("lm", "texts.jsonl") if side == "text" else ("vit", "images.jsonl")
    items = read_items(folder / data, side)
    extract(folder / model, items, Options(side, dtype="float32", device=device), lambda _: None)
    return len(items)


def rate(run) -> float:
    started = time.perf_counter()
    rows = run()
    return rows / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    texts, images = (128, 32) if args.quick else (512, 128)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build(folder, texts, images)
        cases = {
            "text (rows/s)": (
                lambda: orch_way(folder, "text", args.device),
                lambda: bare_text(folder, args.device, 8192),
            ),
            "image (rows/s)": (
                lambda: orch_way(folder, "image", args.device),
                lambda: bare_images(folder, args.device, 32),
            ),
        }
        print(f"{'case':16} {'orch':>10} {'bare':>10} {'orch/bare':>10}   ({REPEATS} runs each, medians)")
        for name, (ours, bare) in cases.items():
            ours(), bare()  # warm: first-call allocations and thread pools
            orch_rates, bare_rates = [], []
            for _ in range(REPEATS):
                orch_rates.append(rate(ours))
                bare_rates.append(rate(bare))
            a, b = statistics.median(orch_rates), statistics.median(bare_rates)
            print(f"{name:16} {a:10.1f} {b:10.1f} {a / b:10.3f}")


if __name__ == "__main__":
    main()
