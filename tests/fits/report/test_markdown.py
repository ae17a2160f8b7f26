"""The report's tables: the same sections the CLI prints, written to report.md with the plots."""

from pathlib import Path

from fits.report.markdown import calibration_line, sections, write_markdown
from fits.results import FitOptions, FitRun


def test_sections_list_every_fit_forecast_and_held_out_cell(curves):
    run = FitRun("sim", "sqlite:///o.db", FitOptions(), curves=list(curves.values()))
    tables = {title: rows for title, _, rows in sections(run)}
    assert len(tables["Fits (mutual_knn@10)"]) == 8  # every law of both curves, with its weight
    assert tables["Fits (mutual_knn@10)"][0][1] == "saturating (100%)"
    assert len(tables["Forecasts"]) == sum(len(c.forecasts) for c in curves.values())
    assert [row[0] for row in tables["Held-out cells"]] == ["jepa_good base vs dino", "ntp base vs dino"]
    cells = run.calibration()
    assert calibration_line(run).startswith(f"Calibration: {cells['within_seed_noise']} of 2 held-out")


def test_report_md_holds_the_tables_and_links_the_png_plots(curves, tmp_path):
    run = FitRun("sim", "sqlite:///o.db", FitOptions(), curves=list(curves.values()))
    path = write_markdown(run, tmp_path, [Path("scaling_base_dino.png"), Path("scaling_base_dino.svg")])
    text = path.read_text()
    assert path.name == "report.md" and "## Held-out cells" in text
    assert "![scaling_base_dino](scaling_base_dino.png)" in text and ".svg" not in text
