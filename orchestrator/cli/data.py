"""`orch data pairs|chunks`: the training files a files source reads, built from the formats
researchers hold, each with a sidecar that records how its rows were made."""

from pathlib import Path

import click

from orchestrator.cli.common import emit_json, json_option, say
from orchestrator.cli.group import cli
from orchestrator.cli.heartbeat import working

__all__ = ["data"]


@cli.group()
def data() -> None:
    """Build the training files of a files source (`data.pairs`, `data.documents`).

    \b
        orch data pairs captions_train2017.json --out pairs.parquet --eval-texts wit1024.jsonl
        orch data chunks documents.jsonl --out chunks.parquet --rule adjacent --words 64
    """


_INPUTS = click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False))
_OUT = click.option(
    "--out", required=True, type=click.Path(dir_okay=False), help="The file to write, X.parquet."
)
_EVAL = click.option(
    "--eval-texts",
    type=click.Path(dir_okay=False),
    help="The eval set's texts (JSONL with 'text'): those in the training text are counted and listed.",
)


@data.command("pairs")
@_INPUTS
@_OUT
@click.option(
    "--rule",
    type=click.Choice(["disjoint", "all", "one"]),
    default="disjoint",
    show_default=True,
    help="Which captions of an image pair up: in order, each once; every pair; one drawn pair.",
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="The draw of --rule one."
)
@click.option(
    "--skip-single", is_flag=True, help="Leave out images with one caption (counted), not refuse them."
)
@_EVAL
@json_option
@working
def pairs(
    inputs: tuple[str, ...],
    out: str,
    rule: str,
    seed: int,
    skip_single: bool,
    eval_texts: str | None,
    as_json: bool,
) -> None:
    """Caption pairs (image_id, caption_a, caption_b) from COCO caption JSON or (image_id, caption)
    rows in CSV, JSONL or Parquet; the sidecar X.json records the rule, inputs' sha256 and counts."""
    from orchestrator.data.pairs_builder import build_pairs

    sidecar = build_pairs(
        [Path(p) for p in inputs],
        Path(out),
        rule,
        seed,
        Path(eval_texts) if eval_texts else None,
        skip_single,
        notify=say,
    )
    _report(
        out,
        sidecar,
        as_json,
        f"{sidecar['counts']['pairs']:,} pairs of {sidecar['counts']['images']:,} images",
    )


@data.command("chunks")
@_INPUTS
@_OUT
@click.option(
    "--rule",
    type=click.Choice(["halves", "adjacent"]),
    default="halves",
    show_default=True,
    help="A document's two halves, or consecutive chunks of --words words paired off.",
)
@click.option(
    "--words", type=click.IntRange(min=1), default=64, show_default=True, help="Words a chunk (adjacent)."
)
@_EVAL
@json_option
@working
def chunks(
    inputs: tuple[str, ...], out: str, rule: str, words: int, eval_texts: str | None, as_json: bool
) -> None:
    """Bad views (doc_id, chunk_a, chunk_b) from documents (JSONL or Parquet with 'text'); the
    sidecar X.json records the rule, inputs' sha256 and counts."""
    from orchestrator.data.chunks_builder import build_chunks

    sidecar = build_chunks(
        [Path(p) for p in inputs],
        Path(out),
        rule,
        words,
        Path(eval_texts) if eval_texts else None,
        notify=say,
    )
    counts = sidecar["counts"]
    _report(out, sidecar, as_json, f"{counts['pairs']:,} pairs from {counts['documents']:,} documents")


def _report(out: str, sidecar: dict, as_json: bool, made: str) -> None:
    if as_json:
        emit_json(sidecar)
        return
    click.echo(f"{out}: {made} (rule {sidecar['rule']}); sidecar {Path(out).with_suffix('.json')}")
    if (overlap := sidecar["overlap"]) is not None:
        copies = f"{len(overlap['exact']):,} exact, {len(overlap['near']):,} near copies"
        listed = f" ({copies}: in the sidecar)" if overlap["count"] else ""
        found = f"{overlap['count']:,} of {overlap['of']:,} eval texts"
        click.echo(f"overlap: {found} occur in the training text{listed}")
