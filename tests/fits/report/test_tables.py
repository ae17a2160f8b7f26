"""The report's tables, one function each, keyed by an id: what the text, markdown and HTML
show; and a level as the tables print it."""

from fits.curve.curveset import CurveSet
from fits.curve.level import percent
from fits.curve.settings import FitSettings
from fits.report.tables import TABLES, tables
from fits.run.results import FitRun


def test_every_table_lists_every_fit_forecast_and_held_out_cell(curves):
    run = FitRun("sim", "sqlite:///o.db", FitSettings(), curves=CurveSet(tuple(curves.values())))
    found = {table.id: table for table in tables(run)}
    assert list(found) == list(TABLES)
    assert found["fits"].title == "Fits (mutual_knn@10)"
    assert len(found["fits"].rows) == 8  # every law of both curves, with its weight
    assert found["fits"].rows[0][1] == "saturating (100%)"
    assert len(found["forecasts"].rows) == sum(len(c.forecasts) for c in curves.values())
    assert [row[0] for row in found["held-out"].rows] == ["jepa_good base vs dino", "ntp base vs dino"]
    assert found["gaps"].rows == [] and found["joint"].rows == []  # none asked, one model size
    assert all(len(row) == len(table.headers) for table in found.values() for row in table.rows)


def test_published_and_measured_baselines_stand_side_by_side_with_the_measured_noise(curves):
    import pandas as pd

    from db import BaselineRow

    published = BaselineRow("paper", "Qwen2.5-72B", "ntp", "mutual_knn@10", "dino", "eval", None, 0.154)
    measured = BaselineRow(
        "measured",
        "mpnet",
        "contrastive",
        "mutual_knn@10",
        "dino",
        "eval",
        None,
        0.118,
        se=0.004,
        null_p95=0.012,
    )
    other_metric = BaselineRow("paper", "Qwen2.5-72B", "ntp", "cka", "dino", "eval", None, 0.4)
    rows = pd.DataFrame([vars(row) for row in (published, measured, other_metric)])
    run = FitRun(
        "sim", "sqlite:///o.db", FitSettings(), curves=CurveSet(tuple(curves.values()), baselines=rows)
    )
    table = TABLES["baselines"](run)
    assert table.rows == [
        ["Qwen2.5-72B", "ntp", "paper", "", "dino (eval)", "0.154", ""],
        ["mpnet", "contrastive", "measured", "", "dino (eval)", "0.118 ± 0.004", "0.012"],
    ]


def test_a_level_keeps_its_tail_so_a_loops_look_is_not_called_99_percent():
    levels = (0.95, 0.9, 0.99, 1 - 0.05 / 4, 1 - 0.05 / 101)  # the last: a loop of 100 rounds
    assert [percent(level) for level in levels] == ["95%", "90%", "99%", "98.8%", "99.95%"]
