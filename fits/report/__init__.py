"""The fit report: plots, `report.md` and a self-contained `report.html`, drawn from a `FitRun`.
Nothing here refits; every band on a plot is the band the fit computed.

Each fit run writes its own folder `<out>/<fit id>/`, and `<out>/latest` points to the newest:
a report never mixes two runs, and an earlier one is never overwritten. A report is written whole
into a staging folder first (`stage_report`); the caller places it, stores the run and points
`latest` at it only when both are ready, or discards it. The drawing modules are imported when a
report is written, so `text` (the CLI's tables) loads without matplotlib."""

import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fits.run.results import FitRun

__all__ = ["StagedReport", "check_folder", "stage_report", "unmake", "write_report"]


def check_folder(folder: Path) -> list[Path]:
    """Make `folder` and prove a file can be written there, before any fitting: an OSError
    (read-only, a file in the way, a symlink loop, /proc) says why it cannot hold a report.
    Returns the folders it made, outermost first, for `unmake` when the fit does not land."""
    made = [path for path in [*reversed(folder.parents), folder] if not path.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / f".write-check-{uuid.uuid4().hex[:8]}"
    probe.write_text("")
    probe.unlink()
    return made


def unmake(made: list[Path]) -> None:
    """Remove the folders `check_folder` made, innermost first, where they are still empty."""
    for path in reversed(made):
        try:
            path.rmdir()
        except OSError:
            return


@dataclass(frozen=True)
class StagedReport:
    """A whole report in `staging`, not yet where readers look."""

    staging: Path
    folder: Path  # where it goes: <out>/<fit id>

    def place(self) -> Path:
        """Rename it into place; returns report.html."""
        self.staging.rename(self.folder)
        return self.folder / "report.html"

    def point_latest(self) -> None:
        """`<out>/latest` -> this report, swapped atomically (a reader never finds it missing)."""
        out = self.folder.parent
        staged = out / f".latest-{self.folder.name}"
        staged.symlink_to(self.folder.name, target_is_directory=True)
        staged.replace(out / "latest")

    def discard(self) -> None:
        """Remove what was written, staged or placed."""
        for path in (self.staging, self.folder):
            shutil.rmtree(path, ignore_errors=True)


def stage_report(run: "FitRun", out: Path) -> StagedReport:
    """Plots, report.md and report.html in a staging folder under `out`; nothing is where
    readers look until `place`."""
    import pandas as pd

    from fits.report.html import write_html
    from fits.report.markdown import write_markdown
    from fits.report.plots import write_plots

    staged = StagedReport(out / f".{run.fit_id}.partial", out / run.fit_id)
    staged.staging.mkdir(parents=True, exist_ok=False)
    try:
        plots = write_plots(run, staged.staging, pd.DataFrame() if run.baselines is None else run.baselines)
        write_markdown(run, staged.staging, plots)
        write_html(run, staged.staging, plots)
    except BaseException:
        staged.discard()
        raise
    return staged


def write_report(run: "FitRun", out: Path) -> Path:
    """A report placed at once with `latest` pointing to it (no store rows to wait for)."""
    staged = stage_report(run, out)
    page = staged.place()
    staged.point_latest()
    return page
