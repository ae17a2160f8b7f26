"""The fit report: plots, `report.md` and a self-contained `report.html`, drawn from a `FitRun`.
Nothing here refits; every band on a plot is the band the fit computed.

Each fit run writes its own folder `<out>/<fit id>/`, and `<out>/latest` points to the newest:
a report never mixes two runs, and an earlier one is never overwritten."""

from pathlib import Path

import pandas as pd

from fits.report.html import write_html
from fits.report.markdown import write_markdown
from fits.report.plots import write_plots
from fits.results import FitRun

__all__ = ["write_report"]


def write_report(run: FitRun, out: Path, baselines: pd.DataFrame) -> Path:
    """Plots, report.md and report.html under `out/<fit id>/`; returns report.html."""
    folder = out / run.fit_id
    folder.mkdir(parents=True, exist_ok=False)
    plots = write_plots(run, folder, baselines)
    write_markdown(run, folder, plots)
    page = write_html(run, folder, plots)
    latest = out / "latest"
    staged = out / f".latest-{run.fit_id}"
    staged.symlink_to(run.fit_id, target_is_directory=True)
    staged.replace(latest)  # atomic: a reader never finds `latest` missing
    return page
