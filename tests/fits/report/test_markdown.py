"""report.md: the tables the CLI prints (`tables`), written with the plots."""

from pathlib import Path

from fits.curve.curveset import CurveSet
from fits.curve.settings import FitSettings
from fits.report.markdown import calibration_line, write_markdown
from fits.run.results import FitRun


def test_report_md_holds_the_tables_and_links_the_png_plots(curves, tmp_path):
    run = FitRun("sim", "sqlite:///o.db", FitSettings(), curves=CurveSet(tuple(curves.values())))
    path = write_markdown(run, tmp_path, [Path("scaling_base_dino.png"), Path("scaling_base_dino.svg")])
    text = path.read_text()
    assert path.name == "report.md" and "## Held-out cells" in text
    assert "![scaling_base_dino](scaling_base_dino.png)" in text and ".svg" not in text
    cells = run.calibration()
    line = calibration_line(run)
    assert line.startswith("Calibration, the weaker first: ")
    assert f"held-out cells {cells['within_seed_noise']} of 2 within seed noise" in line
    assert f"from {cells['runs']} runs" in line and "backtests at " in line
    weaker_first = "backtests at" if cells["weaker"] == "backtest" else "held-out cells"
    assert line.removeprefix("Calibration, the weaker first: ").startswith(weaker_first)
