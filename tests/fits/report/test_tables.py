"""The report's tables, one function each, keyed by an id: what the text, markdown and HTML show."""

from fits.report.tables import TABLES, tables
from fits.results import FitRun, FitSettings


def test_every_table_lists_every_fit_forecast_and_held_out_cell(curves):
    run = FitRun("sim", "sqlite:///o.db", FitSettings(), curves=list(curves.values()))
    found = {table.id: table for table in tables(run)}
    assert list(found) == list(TABLES)
    assert found["fits"].title == "Fits (mutual_knn@10)"
    assert len(found["fits"].rows) == 8  # every law of both curves, with its weight
    assert found["fits"].rows[0][1] == "saturating (100%)"
    assert len(found["forecasts"].rows) == sum(len(c.forecasts) for c in curves.values())
    assert [row[0] for row in found["held-out"].rows] == ["jepa_good base vs dino", "ntp base vs dino"]
    assert found["gaps"].rows == [] and found["joint"].rows == []  # none asked, one model size
    assert all(len(row) == len(table.headers) for table in found.values() for row in table.rows)
