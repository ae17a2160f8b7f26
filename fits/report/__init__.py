"""The fit report: plots and `report.md`, drawn from a `FitRun`. Nothing here refits; every band
on a plot is the band the fit computed."""

from pathlib import Path

import pandas as pd

from fits.report.markdown import write_markdown
from fits.report.plots import write_plots
from fits.results import FitRun

__all__ = ["write_report"]


def write_report(run: FitRun, out: Path, baselines: pd.DataFrame) -> Path:
    """Plots and report.md under `out`, replacing an earlier fit's plots; returns report.md."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob("*.png"), *out.glob("*.svg")]:
        stale.unlink()
    return write_markdown(run, out, write_plots(run, out, baselines))
