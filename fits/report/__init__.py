"""The fit report: plots, `report.md` and a self-contained `report.html`, drawn from a `FitRun`.
Nothing here refits; every band on a plot is the band the fit computed.

Each fit run writes its own folder `<out>/<fit id>/`, and `<out>/latest` points to the newest:
a report never mixes two runs, and an earlier one is never overwritten. The drawing modules are
imported when a report is written, so `text` (the CLI's tables) loads without matplotlib."""

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fits.results import FitRun

__all__ = ["write_report"]


def write_report(run: "FitRun", out: Path) -> Path:
    """Plots, report.md and report.html under `out/<fit id>/`; returns report.html."""
    import pandas as pd

    from fits.report.html import write_html
    from fits.report.markdown import write_markdown
    from fits.report.plots import write_plots

    folder = out / run.fit_id
    folder.mkdir(parents=True, exist_ok=False)
    plots = write_plots(run, folder, pd.DataFrame() if run.baselines is None else run.baselines)
    write_markdown(run, folder, plots)
    page = write_html(run, folder, plots)
    latest = out / "latest"
    staged = out / f".latest-{run.fit_id}"
    staged.symlink_to(run.fit_id, target_is_directory=True)
    staged.replace(latest)  # atomic: a reader never finds `latest` missing
    return page
