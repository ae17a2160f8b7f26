"""`orch check`: each claim's verdict on the sweep's measurements, read-only.

The claims come from a claims file, or from the sweep file the store recorded. One fit runs per
metric the claims are stated in (the sweep's default metric unless a claim names another);
nothing is written: `orch fit` stores a run with its verdicts."""

from typing import Any

import click

from fits.curve.settings import DEFAULT_METRIC
from orchestrator.cli.common import (
    SizeParam,
    claims_targets,
    emit_json,
    json_option,
    open_sweep,
    say,
    store_option,
)
from orchestrator.cli.group import cli
from orchestrator.cli.heartbeat import doing, working
from orchestrator.cli.judging import claim_runs, claims_and_sweep, sweep_design
from orchestrator.cli.run_text import fit_text, verdicts_text
from orchestrator.errors import InputError

__all__ = ["check"]

EXIT_CONTRADICTED = 3  # `--strict`: a pipeline stops on a contradicted claim


@cli.command()
@claims_targets
@click.option("--predict", multiple=True, type=SizeParam(), help="Forecast at S in the summary.")
@click.option("--detail", is_flag=True, help="Every law of every curve and every table, after the verdicts.")
@click.option("--strict", is_flag=True, help=f"Exit {EXIT_CONTRADICTED} when any claim is contradicted.")
@click.option(
    "--design",
    "design_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Before any run: whether SWEEP.yaml's design can decide each of its claims (no store is read; "
    "with --strict, exit 2 where one never can).",
)
@json_option
@store_option
@click.pass_context
@working
def check(
    ctx: click.Context,
    targets: tuple[str, ...],
    predict: tuple[int, ...],
    detail: bool,
    strict: bool,
    design_file: str | None,
    as_json: bool,
) -> None:
    """Judge each claim: supported (its whole 95% interval inside the claimed region),
    contradicted (wholly outside) or inconclusive, with the reasons and caveats.

    \b
        orch check                                   # the newest sweep's own claims
        orch check sweeps/claims/jepa_prh.yaml goodview_vs_ntp_paper
        orch check --json --strict
        orch check --design sweeps/goodview_vs_ntp_paper.yaml
    """
    from fits.claims.claim import Outcome
    from fits.report.tables import VERDICTS
    from orchestrator.imports.provenance import pooled_sources

    if design_file is not None:
        from orchestrator.cli.dry_run import show_design

        if targets:
            raise InputError("--design checks the sweep file's own claims: give no claims file or sweep")
        show_design(design_file, as_json, strict)
        return

    claims_file, sweep_name = claims_and_sweep(targets, "check")
    store, sweep_name = open_sweep(ctx, sweep_name)
    design, claims = sweep_design(store, sweep_name, DEFAULT_METRIC, claims_file)
    # only what it shows: forecasts, backtests and joint laws where asked for
    shown = VERDICTS + (("forecasts",) if predict else ())
    doing(f"fitting sweep {sweep_name}'s curves and judging its {len(claims)} claims")
    checked = claim_runs(store, sweep_name, design, claims, predict=predict, detail=detail or bool(predict))
    for line in pooled_sources(store.trials_frame(sweep_name)):
        say(f"note: {line}")
    if as_json:
        befores = {k: v for run in checked.runs for k, v in run.earlier_verdicts.items()}
        emit_json(
            {
                "sweep": sweep_name,
                "claims": claims.source,
                "verdicts": [v.as_dict() | {"before": befores.get(v.claim.id)} for v in checked.verdicts],
                "fits": [_summary(run, detail or bool(predict)) for run in checked.runs],
            }
        )
    else:
        click.echo("\n\n".join(_check_text(checked, detail, shown)))
    if strict and any(v.verdict is Outcome.CONTRADICTED for v in checked.verdicts):
        ctx.exit(EXIT_CONTRADICTED)


def _check_text(checked: Any, detail: bool, shown: tuple[str, ...]) -> list[str]:
    """Each fit run's verdicts and tables, then the claims on metrics the sweep did not measure."""
    from fits.report.claims import claims_table

    parts = [fit_text(run, detail, shown) for run in checked.runs]
    if checked.unmeasured:
        parts.append(verdicts_text(claims_table(checked.unmeasured, "Claims (not measured)", {})))
    return parts


def _summary(run: Any, detail: bool) -> dict[str, Any]:
    """What `--json` gives of each fit behind the verdicts: its metric and each curve's heaviest
    law; with `--detail`, each curve's forecasts and the calibration line's numbers too."""
    curves = []
    for c in run.curves:
        curve = {**c.key.as_dict(), "law": c.fit.law, "weight": c.ensemble.weights.get(c.fit.law)}
        curves.append(curve | ({"forecasts": [f.as_dict() for f in c.forecasts]} if detail else {}))
    found = {"metric": run.options.metric, "curves": curves, "skipped": run.skipped}
    return found | ({"calibration": run.calibration()} if detail else {})
