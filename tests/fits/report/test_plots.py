"""Plots draw the results they are given: the shaded bands are the fit's own, bootstrap included."""

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from fits.report.plots import _draw_curve, write_plots
from fits.results import FitOptions, FitRun
from tests.stores import NULL_P95


def shaded(axes: plt.Axes, label: str) -> set[tuple[float, float]]:
    """The (samples, alignment) vertices of the filled band with this legend label."""
    (band,) = [c for c in axes.collections if c.get_label() == label]
    return {(float(x), round(float(y), 12)) for x, y in band.get_paths()[0].vertices}


@pytest.mark.parametrize("kind", ["pi", "ci"])
def test_the_shaded_band_is_the_curves_own_band(curves, kind):
    ntp = curves["ntp"]  # a curve whose bands come from the seed bootstrap of every law
    figure, axes = plt.subplots()
    _draw_curve(axes, ntp, "tab:green")
    drawn = shaded(axes, {"ci": "ntp: 95% CI of the mean", "pi": "ntp: 95% PI of a 3-seed mean"}[kind])
    plt.close(figure)
    edges = {(b.samples, round(edge, 12)) for b in ntp.band for edge in getattr(b, kind)}
    assert edges <= drawn and len(drawn - edges) <= 2  # fill_between closes its path
    assert all("BOOTSTRAP:200" in b.flags for b in ntp.band)


def test_the_scaling_plot_draws_chance_and_the_null(curves):
    figure, axes = plt.subplots()
    _draw_curve(axes, curves["ntp"], "tab:green")
    levels = {round(line.get_ydata()[0], 6) for line in axes.lines if line.get_linestyle() == "-."}
    plt.close(figure)
    assert levels == {round(NULL_P95, 6)}


def test_every_plot_is_written_as_png_and_svg(curves, tmp_path):
    run = FitRun("sim", "sqlite:///o.db", FitOptions(), curves=list(curves.values()))
    paths = write_plots(run, tmp_path, pd.DataFrame())
    names = {p.name for p in paths}
    assert {"scaling_base_dino.png", "scaling_base_dino.svg", "residuals.png", "calibration.svg"} <= names
    assert all(p.stat().st_size > 1000 for p in paths)
