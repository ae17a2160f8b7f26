"""`orch features text|image`: reference features from a pretrained model in a local folder."""

from pathlib import Path
from typing import Any

import click

from orchestrator.cli.common import say
from orchestrator.cli.group import cli
from orchestrator.cli.heartbeat import working
from orchestrator.errors import InputError

__all__ = ["features"]

INSTALL = "pip install 'orch[features]'"


@cli.group()
def features() -> None:
    """Features of a pretrained model (a local folder) for `orch align`, sweeps and baselines.

    \b
        orch features image --model models/dinov2-base --data wit.jsonl --out dinov2.npz
        orch features text --model models/all-mpnet-base-v2 --data wit.jsonl --out mpnet.npz
    """


def _shared(command: Any) -> Any:
    options = [
        click.option(
            "--model", required=True, help="A local model folder (save_pretrained); never a hub id."
        ),
        click.option(
            "--data",
            required=True,
            type=click.Path(),
            help="A JSONL manifest of {id, text | captions, image}, or a folder of files.",
        ),
        click.option(
            "--out", required=True, type=click.Path(dir_okay=False), help="The features file, X.npz."
        ),
        click.option(
            "--layers", default="all", show_default=True, help="Comma-separated layer indices (-1: last)."
        ),
        click.option("--device", default="auto", show_default=True, help="cpu, cuda, cuda:N, or auto."),
        click.option("--device-map", type=click.Choice(["auto"]), help="Spread a large model over the GPUs."),
        click.option("--max-memory", metavar="SIZE", help="With --device-map: at most this per GPU (40GiB)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


DTYPES = ["bfloat16", "float32", "float16"]
DTYPE_HELP = "The forward pass's precision (features are stored as float32)."


@features.command("text")
@_shared
@click.option(
    "--pool",
    type=click.Choice(["mean", "last", "eos"]),
    default="mean",
    show_default=True,
    help="A row's vector: the mean of its real tokens, its last real token, or its first EOS.",
)
@click.option("--dtype", type=click.Choice(DTYPES), default="bfloat16", show_default=True, help=DTYPE_HELP)
@click.option(
    "--batch-tokens",
    type=click.IntRange(min=1),
    default=8192,
    show_default=True,
    help="Padded tokens a batch may hold (rows are batched longest first).",
)
@working
def text(**options: Any) -> None:
    """Every hidden state of a text model, pooled over each row's real tokens (mean by default)."""
    _run("text", options)


@features.command("image")
@_shared
@click.option("--dtype", type=click.Choice(DTYPES), default="float32", show_default=True, help=DTYPE_HELP)
@click.option(
    "--batch-size",
    "batch_images",
    type=click.IntRange(min=1),
    default=32,
    show_default=True,
    help="Images a batch.",
)
@click.option(
    "--compat",
    type=click.Choice(["platonic-rep"]),
    help="Resize and crop as platonic-rep's timm transform does (truncated resize, rounded crop).",
)
@click.option(
    "--crop-pct",
    type=click.FloatRange(min=0.0, min_open=True, max=1.0),
    default=None,
    help="With --compat: the model's timm crop_pct (resize to size / crop_pct, crop size) [default: 1.0].",
)
@working
def image(**options: Any) -> None:
    """Every block's CLS token of a vision model (before the final norm), at its native size."""
    if options["crop_pct"] is not None and not options["compat"]:
        raise InputError("--crop-pct is platonic-rep's resize: give it with --compat platonic-rep")
    _run("image", options)


def _run(side: str, given: dict[str, Any]) -> None:
    try:
        import transformers  # noqa: F401
    except ImportError:
        raise InputError(f"orch features needs transformers: {INSTALL}") from None
    from orchestrator.extraction import Options, extract, read_items
    from orchestrator.extraction.models import check_model_folder, folder_sha256
    from orchestrator.extraction.output import check_out, write_features

    out = Path(given["out"])
    check_out(out, Path(given["data"]))
    if given["max_memory"] and not given["device_map"]:
        raise InputError("--max-memory caps what --device-map auto may place on a GPU: give both")
    folder = check_model_folder(given["model"])
    items = read_items(Path(given["data"]), side)
    options = Options(
        side=side,
        pool=given.get("pool", "mean"),
        dtype=given["dtype"],
        layers=_layers(given["layers"]),
        batch_tokens=given.get("batch_tokens", 8192),
        batch_images=given.get("batch_images", 32),
        device=given["device"],
        device_map=given["device_map"],
        max_memory=given["max_memory"],
        compat=given.get("compat"),
        crop_pct=given.get("crop_pct") or 1.0,
    )
    found = extract(folder, items, options, notify=say)
    write_features(out, found, items, folder, folder_sha256(folder), options)
    width = found.layers[0].shape[1]
    rate = len(items) / found.seconds if found.seconds else float("inf")
    say(
        f"wrote {out} ({len(items):,} rows x {len(found.layers)} layers, {width} wide; "
        f"{found.seconds:.1f} s, {rate:,.1f} rows/s on {found.device}) and its sidecar "
        f"{out.with_suffix('.json')}"
    )


def _layers(text: str) -> tuple[int, ...] | None:
    if text.strip() == "all":
        return None
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"--layers {text}: write 'all' or comma-separated indices such as 0,6,-1") from None


@features.command("manifest")
@click.argument("sweep_file", type=click.Path(dir_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The manifest, X.jsonl.")
def manifest(sweep_file: str, out: str) -> None:
    """The texts a sweep is scored on, as a manifest for `orch features text` (then `orch
    baselines measure` pairs the features with the eval set row for row).

    \b
        orch features manifest sweeps/goodview_vs_ntp.yaml --out eval.jsonl
    """
    import json

    from orchestrator.data.sources import source_of
    from orchestrator.outputs import MANIFEST_MARK, check_outputs, check_writable
    from orchestrator.run.inputs import scoring_files
    from orchestrator.sweepfile import load_spec

    spec, path = load_spec(sweep_file), Path(out)
    check_outputs("--out", [path], [Path(sweep_file), *scoring_files(spec).values()])
    check_writable("--out", path)
    texts, _ = source_of(spec.data).scoring_set(spec.trials[0])
    staged = path.with_name(f".{path.name}.partial")
    rows = ({"id": str(i), "text": text} | MANIFEST_MARK for i, text in enumerate(texts))
    try:
        staged.write_text("".join(json.dumps(row) + "\n" for row in rows))
        staged.replace(path)
    except OSError as error:
        raise InputError(f"--out {out}: cannot write it ({error.strerror or error})") from None
    finally:
        staged.unlink(missing_ok=True)
    say(f"wrote {out}: the {len(texts):,} texts of eval set {spec.eval.set}")
