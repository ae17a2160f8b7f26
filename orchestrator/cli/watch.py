"""`orch status --watch`: a sweep's science while it runs. Every `--every` seconds, from the
store: the trials' counts and each curve's newest value with its SE; at most every
`--refit-every` seconds, the claims judged again as `orch check` judges them (the fit is the
costly part, so it is the part that waits). Read-only; it ends once no trial of the sweep is
pending or running, after one last refit; when no driver holds the active trials any more (none
has beaten its lease for `LEASE_STALE_S`: a killed driver), saying so; or at Ctrl-C."""

import sys
import time
from typing import Any

import click

from fits.curve.settings import DEFAULT_METRIC
from fits.report.text import render_table
from foundation.sizes import format_size
from orchestrator.errors import InputError
from orchestrator.run.leases import LEASE_STALE_S

__all__ = ["watch_sweep"]

CLEAR = "\x1b[H\x1b[2J"  # a terminal's frame starts on a clean screen; a log gets one after another


def watch_sweep(store: Any, name: str, every_s: float, refit_every_s: float) -> None:
    """Show frames until the sweep has no active trial (then a last frame with a fresh refit)."""
    from orchestrator.run.status import ACTIVE, sweep_status

    claims_text, refitted_at = "", -float("inf")
    while True:
        status = sweep_status(store, name)
        active = sum(status["totals"]["by_status"].get(s, 0) for s in ACTIVE)
        if not active or time.monotonic() - refitted_at >= refit_every_s:
            started = time.monotonic()
            claims_text = _claims_text(store, name)
            refitted_at = time.monotonic()
            claims_text += f"\n(refitted in {refitted_at - started:.1f} s at {time.strftime('%H:%M:%S')})"
        frame = [_heading(status), _curves_text(store, name), claims_text]
        click.echo((CLEAR if sys.stdout.isatty() else "\n") + "\n\n".join(frame))
        if not active:
            return
        if _driver_gone(store, name):
            click.echo(
                f"orch: no driver holds sweep {name}'s {active} active trials (no lease beaten in "
                f"{LEASE_STALE_S:.0f} s): its driver is gone; rerun orch sweep on its file to resume them",
                err=True,
            )
            return
        time.sleep(every_s)


def _driver_gone(store: Any, name: str) -> bool:
    from orchestrator.run.status import ACTIVE

    trials = store.trials_frame(name)
    beats = trials[trials.status.isin(ACTIVE)].lease_heartbeat.dropna()
    return beats.empty or time.time() - float(beats.max()) > LEASE_STALE_S


def _heading(status: dict) -> str:
    from orchestrator.run.status import counts_line

    return f"{time.strftime('%H:%M:%S')}  sweep {status['name']}: {counts_line(status['totals'])}"


def _curves_text(store: Any, name: str) -> str:
    from orchestrator.run.status import latest_curves

    curves = latest_curves(store.measurements_frame(name, DEFAULT_METRIC))
    if not curves:
        return f"{DEFAULT_METRIC}: no checkpoint scored yet"
    rows = [
        [
            f"{c['objective']} {c['model']} {format_size(c['data_size'])} vs {c['reference']}",
            c["seeds"],
            format_size(c["samples_seen"]),
            c["mean"],
            c["se"],
            c["se_from"] or "-",
        ]
        for c in curves
    ]
    headers = ["curve", "seeds", "at samples", DEFAULT_METRIC, "SE", "SE over"]
    return f"Curves: the newest checkpoint every seed reached\n{render_table(headers, rows)}"


def _claims_text(store: Any, name: str) -> str:
    """The claims' verdicts and intervals now, as `orch check` gives them; or why not yet."""
    from fits.claims.claim import Outcome
    from fits.report.claims import INTERVAL, claims_table
    from orchestrator.cli.judging import claim_runs, sweep_design

    try:
        design, claims = sweep_design(store, name, DEFAULT_METRIC)
        if not claims:
            return "Claims: the sweep states none (claims: FILE in the sweep file)"
        checked = claim_runs(store, name, design, claims)
    except InputError as error:  # too few checkpoints to fit yet, say
        return f"Claims: not judged yet ({error})"
    table = claims_table(checked.verdicts, "Claims", {})
    headers, rows = table.select(["id", "claimed", "measured", INTERVAL, "verdict"])
    open_claims = sum(v.verdict is Outcome.INCONCLUSIVE for v in checked.verdicts)
    return f"Claims: {open_claims} of {len(rows)} open\n{render_table(headers, rows)}"
