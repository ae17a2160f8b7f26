"""A pretrained model from a local folder, never the hub: the folder checked, hashed and loaded
through `transformers` (a two-tower model such as CLIP gives the tower of the side asked for)."""

import hashlib
import json
import pickle
import re
import warnings
from pathlib import Path
from typing import Any

from orchestrator.errors import InputError

__all__ = ["DTYPES", "check_model_folder", "folder_sha256", "image_settings", "load_model", "load_tokenizer"]

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
WEIGHTS = ("*.safetensors", "*.bin", "*.pt")
DTYPES = ("float32", "bfloat16", "float16")
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
CHUNK = 8 << 20
TOWERS = {"text": "text_model", "image": "vision_model"}  # a two-tower model's (CLIP's) parts


def check_model_folder(model: str) -> Path:
    """The folder of a saved model, or one line saying why it is not one (a hub id included)."""
    path = Path(model).expanduser()
    if not path.exists():
        if HUB_ID.match(model):
            raise InputError(
                f"--model {model}: looks like a Hugging Face hub id, and orch never downloads; on a machine "
                f"with internet run 'hf download {model} --local-dir DIR', copy DIR here and pass --model DIR"
            )
        raise InputError(f"--model {model}: no such folder")
    if not path.is_dir() or not (path / "config.json").is_file():
        raise InputError(
            f"--model {model}: not a model folder (no config.json; save one with save_pretrained)"
        )
    if not any(path.glob(pattern) for pattern in WEIGHTS):
        raise InputError(f"--model {model}: holds no weights (model.safetensors or pytorch_model.bin)")
    return path


def folder_sha256(folder: Path) -> str:
    """sha256 over every file of the folder (names and bytes, in name order): the model's identity."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


def load_model(folder: Path, side: str, dtype: str, device_map: str | None, max_memory: str | None) -> Any:
    """The model in eval mode, the tower of `side` where the folder holds two."""
    import torch
    from safetensors import SafetensorError
    from transformers import AutoModel
    from transformers.utils import logging

    logging.disable_progress_bar()  # stderr carries orch's own progress
    logging.set_verbosity_error()
    options: dict[str, Any] = {"local_files_only": True, "dtype": getattr(torch, dtype)}
    if device_map is not None:
        options["device_map"] = device_map
        if max_memory is not None:
            gpus = range(torch.cuda.device_count())
            options["max_memory"] = {**{gpu: max_memory for gpu in gpus}, "cpu": "1000GiB"}
    try:
        with warnings.catch_warnings():  # torch warns on a refused pickle; the refusal is our one line
            warnings.simplefilter("ignore")
            model = AutoModel.from_pretrained(folder, **options)
    except pickle.UnpicklingError:
        raise InputError(
            f"--model {folder}: its .bin weights hold Python objects besides tensors, which orch does not "
            "load (unpickling them could run code); save the model as safetensors "
            "(save_pretrained(..., safe_serialization=True)) and pass that folder"
        ) from None
    except SafetensorError as error:
        raise InputError(
            f"--model {folder}: a .safetensors file does not read ({_first_line(error)}); it may be cut "
            "short: copy the folder again"
        ) from None
    except (OSError, ValueError, KeyError, ImportError) as error:
        raise InputError(f"--model {folder}: transformers cannot load it ({_first_line(error)})") from None
    tower = getattr(model, TOWERS[side], None)
    return (tower if isinstance(tower, torch.nn.Module) else model).eval()


def load_tokenizer(folder: Path) -> Any:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InputError(
            f"--model {folder}: holds no tokenizer transformers can load ({_first_line(error)}); a vision "
            "model is read by orch features image"
        ) from None


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def image_settings(
    folder: Path, config: Any, compat: str | None = None, crop_pct: float = 1.0
) -> dict[str, Any]:
    """Resolution and normalisation: the model's native size, and the folder's processor mean and
    std (ImageNet's where it has none). The processor's crop size is not used: Hugging Face's
    DINOv2 processor crops to 224, while the published features were taken at the native 518.
    Under `compat` 'platonic-rep', the resize and crop of its timm eval transform (`images.pixels`)."""
    if not isinstance(getattr(config, "image_size", None), int):
        raise InputError(
            f"--model {folder}: not a vision model (its config has no image_size); a text model is read "
            "by orch features text"
        )
    processor = folder / "preprocessor_config.json"
    saved = json.loads(processor.read_text()) if processor.is_file() else {}
    resize = {
        None: "shorter side to size (rounded), bicubic; centre crop size x size",
        "platonic-rep": "shorter side to floor(size / crop_pct), the other truncated, bicubic; centre crop "
        "size x size, its offsets rounded (timm's eval transform, as platonic-rep extracts)",
    }[compat]
    return {
        "size": int(config.image_size),
        "resize": resize,
        **({"compat": compat, "crop_pct": crop_pct} if compat else {}),
        "mean": list(saved.get("image_mean", IMAGENET_MEAN)),
        "std": list(saved.get("image_std", IMAGENET_STD)),
    }
