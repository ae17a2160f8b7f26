"""`orch check`: each claim's verdict on the sweep's measurements, read-only.

The claims come from a claims file, or from the sweep file the store recorded. One fit runs per
metric the claims are stated in (the sweep's default metric unless a claim names another);
nothing is written: `orch fit` stores a run with its verdicts."""

from pathlib import Path
from typing import Any

import click

from orchestrator.cli.common import SizeParam, emit_json, open_sweep, store_option
from orchestrator.cli.group import cli
from orchestrator.cli.results import fit_text, sweep_design
from orchestrator.errors import InputError
from orchestrator.interrupts import sigterm_interrupts

__all__ = ["check"]

EXIT_CONTRADICTED = 3  # `--strict`: a pipeline stops on a contradicted claim
DEFAULT_METRIC = "mutual_knn@10"


@cli.command()
@click.argument("targets", nargs=-1, metavar="[CLAIMS.yaml] [SWEEP]")
@click.option("--predict", multiple=True, type=SizeParam(), help="Forecast at S in the summary.")
@click.option("--detail", is_flag=True, help="Every law of every curve and every table, after the verdicts.")
@click.option("--strict", is_flag=True, help=f"Exit {EXIT_CONTRADICTED} when any claim is contradicted.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@store_option
@click.pass_context
def check(
    ctx: click.Context,
    targets: tuple[str, ...],
    predict: tuple[int, ...],
    detail: bool,
    strict: bool,
    as_json: bool,
) -> None:
    """Judge each claim: supported (its whole 95% interval inside the claimed region),
    contradicted (wholly outside) or inconclusive, with the reasons and caveats.

    \b
        orch check                                   # the newest sweep's own claims
        orch check sweeps/claims/jepa_prh.yaml goodview_vs_ntp_paper
        orch check --json --strict
    """
    claims_file, sweep_name = claims_and_sweep(targets, "check")
    store, sweep_name = open_sweep(ctx, sweep_name)
    design = sweep_design(store, sweep_name, DEFAULT_METRIC, claims_file)
    runs = claim_runs(store, sweep_name, design, predict)
    verdicts = [v for run in runs for v in run.verdicts]
    if as_json:
        emit_json(
            {
                "sweep": sweep_name,
                "claims": design.claims_source,
                "verdicts": [
                    v.as_dict() | {"before": run.earlier_verdicts.get(v.claim.id)}
                    for run in runs
                    for v in run.verdicts
                ],
                "fits": [_summary(run) for run in runs],
            }
        )
    else:
        click.echo("\n\n".join(fit_text(run, detail) for run in runs))
    if strict and any(v.verdict == "contradicted" for v in verdicts):
        ctx.exit(EXIT_CONTRADICTED)


def claim_runs(
    store: Any, sweep_name: str, design: Any, predict: tuple[int, ...] = (), command: str = "check"
) -> list[Any]:
    """One fit run per metric the claims are stated in, each with its verdicts; a sweep with no
    claims, or a claim on a metric the sweep did not measure, is an InputError."""
    from fits.results import FitOptions
    from fits.run import run_fit

    if not design.claims:
        raise InputError(
            f"sweep {sweep_name} states no claims: give a claims file "
            f"(orch {command} CLAIMS.yaml {sweep_name}), "
            "or name one in the sweep file (claims: FILE)"
        )
    measured = sorted({metric for metric, _ in store.measured(sweep_name)})
    for claim in design.claims:
        if claim.metric is not None and claim.metric not in measured:
            raise InputError(
                f"{design.claims_source}: claim {claim.id!r}: metric {claim.metric!r} was not measured in "
                f"{sweep_name} (measured: {', '.join(measured)})"
            )
    with sigterm_interrupts():
        return [
            run_fit(store, sweep_name, FitOptions(predict=predict, metric=metric), design)
            for metric in sorted({claim.metric or DEFAULT_METRIC for claim in design.claims})
        ]


def claims_and_sweep(targets: tuple[str, ...], command: str) -> tuple[str | None, str | None]:
    """(claims file, sweep name): a target ending in .yaml or .yml is the claims file."""
    files = [t for t in targets if Path(t).suffix in (".yaml", ".yml")]
    names = [t for t in targets if t not in files]
    if len(files) > 1 or len(names) > 1:
        raise InputError(
            f"orch {command} takes one claims file and one sweep name at most (got {', '.join(targets)})"
        )
    return (files[0] if files else None), (names[0] if names else None)


def _summary(run: Any) -> dict[str, Any]:
    """What `--json` gives of each fit behind the verdicts: its metric, each curve's heaviest law,
    forecasts and the calibration line's numbers."""
    return {
        "metric": run.options.metric,
        "curves": [
            {
                **c.key,
                "law": c.fit.law,
                "weight": c.ensemble.weights.get(c.fit.law),
                "forecasts": [f.as_dict() for f in c.forecasts],
            }
            for c in run.curves
        ],
        "calibration": run.calibration(),
        "skipped": run.skipped,
    }
