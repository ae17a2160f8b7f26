"""`orch align`: score two row-paired feature files against each other."""

from pathlib import Path

import click

from fits.report.text import render_table
from orchestrator.cli.common import (
    emit_json,
    json_option,
    say,
)
from orchestrator.cli.group import cli
from orchestrator.cli.heartbeat import doing, working
from orchestrator.errors import InputError


@cli.command()
@click.argument("features_a", type=click.Path(dir_okay=False))
@click.argument("features_b", type=click.Path(dir_okay=False))
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    default=("mutual_knn@10", "cycle_knn@10", "cknna@10", "cka", "cka_unbiased", "svcca"),
    show_default=True,
)
@click.option("--clamp/--no-clamp", default=True, help="Clamp |x| at each layer's 95th percentile first.")
@click.option(
    "--compat",
    type=click.Choice(["platonic-rep"]),
    help="Score as platonic-rep does: one clamp for the layer stack, its metrics' own definitions, "
    "the best pair above 0.",
)
@click.option(
    "--precise",
    is_flag=True,
    help="With --compat: clamp at the exact 95th order statistic, as platonic-rep's --precise does.",
)
@json_option
@click.pass_context
@working
def align(
    ctx: click.Context,
    features_a: str,
    features_b: str,
    metrics: tuple[str, ...],
    clamp: bool,
    compat: str | None,
    precise: bool,
    as_json: bool,
) -> None:
    """Score the alignment of two row-paired feature files (.npy, or .npz with one array a layer).

    Retrieval metrics fit the A -> B map on the first half of the rows and score the second.

    Under --compat platonic-rep each metric is upstream's metric(y, x), with x the language side:
    where the files' sidecars (from orch features) say which is text, either order scores the
    same; else A is taken as x (give the text file first).

    \b
        orch align text.npy dinov2.npy --metric mutual_knn@10 --metric cka
        orch align llama.npz dinov2.npz --metric mutual_knn@10 --compat platonic-rep
    """
    from orchestrator.features import score_files

    if compat and ctx.get_parameter_source("clamp") is not click.core.ParameterSource.DEFAULT:
        raise InputError(f"--compat {compat} clamps as platonic-rep does: drop --clamp/--no-clamp")
    if precise and not compat:
        raise InputError("--precise is platonic-rep's clamp: give it with --compat platonic-rep")
    rows = score_files(
        Path(features_a),
        Path(features_b),
        metrics,
        clamp,
        notify=say,
        compat=compat,
        doing=doing,
        precise=precise,
    )
    if as_json:
        emit_json({"a": features_a, "b": features_b, "scores": rows})
        return
    headers = ["metric", "value", "layer_a", "layer_b"]
    click.echo(render_table(headers, [[r[h] for h in headers] for r in rows]))
