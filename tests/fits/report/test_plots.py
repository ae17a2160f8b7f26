"""Plots draw the results they are given: the shaded bands are the fit's own, bootstrap included."""

from dataclasses import replace

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from fits.curve.curveset import CurveSet
from fits.curve.gaps import Bound
from fits.curve.settings import FitSettings
from fits.report.plots import calibration_figure, gap_figure, residual_figure, write_plots
from fits.report.scaling_plot import draw_curve, scaling_figure
from fits.run.results import FitRun, GapEstimate
from tests.stores import NULL_P95


def shaded(axes: plt.Axes, label: str) -> set[tuple[float, float]]:
    """The (samples, alignment) vertices of the filled band with this legend label."""
    (band,) = [c for c in axes.collections if c.get_label() == label]
    return {(float(x), round(float(y), 12)) for x, y in band.get_paths()[0].vertices}


@pytest.mark.parametrize("kind", ["pi", "ci"])
def test_the_shaded_band_is_the_curves_own_band(curves, kind):
    ntp = curves["ntp"]  # a curve whose bands come from the seed bootstrap of every law
    figure, axes = plt.subplots()
    draw_curve(axes, ntp, "tab:green")
    drawn = shaded(axes, {"ci": "ntp: CI", "pi": "ntp: PI"}[kind])
    plt.close(figure)
    edges = {(b.samples, round(edge, 12)) for b in ntp.band for edge in getattr(b, kind)}
    assert edges <= drawn and len(drawn - edges) <= 2  # fill_between closes its path
    assert all("BOOTSTRAP:200" in b.flags for b in ntp.band)


def test_the_scaling_plot_draws_chance_and_the_null(curves):
    figure, axes = plt.subplots()
    draw_curve(axes, curves["ntp"], "tab:green")
    levels = {round(line.get_ydata()[0], 6) for line in axes.lines if line.get_linestyle() == "-."}
    plt.close(figure)
    assert levels == {round(NULL_P95, 6)}


def test_every_plot_is_written_as_png_and_svg(curves, tmp_path):
    run = FitRun("sim", "sqlite:///o.db", FitSettings(), curves=CurveSet(tuple(curves.values())))
    paths = write_plots(run, tmp_path, pd.DataFrame())
    names = {p.name for p in paths}
    assert {"scaling_base_dino.png", "scaling_base_dino.svg", "residuals.png", "calibration.svg"} <= names
    assert all(p.stat().st_size > 1000 for p in paths)


def published(reference: str, eval_set: str, model: str = "NTP 109M") -> pd.DataFrame:
    row = {"source": "paper", "model": model, "objective": "ntp", "metric": "mutual_knn@10"}
    return pd.DataFrame(
        [row | {"reference": reference, "eval_set": eval_set, "samples": 9e8, "value": 0.111}]
    )


def labels(figure: plt.Figure) -> list[str]:
    """The legend's entries (it stands beside the rightmost panel)."""
    return [text.get_text() for text in figure.axes[-1].get_legend().get_texts()]


def test_the_scaling_plot_frames_data_and_forecasts_and_labels_every_mark(curves):
    """The data keep the axis: the published 900M point, far past them, is drawn across a
    broken axis in a panel of its own; the legend names each objective once and each mark's
    style once."""
    sizes = {"base": 109.5e6}  # BERT-B's parameters, as its trials recorded them
    run = FitRun("sim", "x", FitSettings(), curves=CurveSet(tuple(curves.values()), model_sizes=sizes))
    figure = scaling_figure(run, "base", "dino", published("dino", "wit-1024"))
    near, beyond = figure.axes
    low, high = near.get_xlim()
    samples = [s for c in curves.values() for s in c.points.samples]
    samples += [f.samples for c in curves.values() for f in c.forecasts if f.samples < 900e6]
    assert low <= min(samples) and high >= max(samples) and high < 900e6 / 8  # the data, not 900M
    assert low > min(samples) / 3 and high < max(samples) * 3  # and not much more
    assert beyond.get_xlim()[0] < 900e6 < beyond.get_xlim()[1]
    assert near.get_ylim()[0] >= 0 and near.get_ylim()[1] <= 1
    names = labels(figure)
    assert [n.split(" ")[0] for n in names if "seeds; laws" in n] == [
        c.key.objective for c in curves.values()
    ]
    for expected in ("95% CI of the mean", "95% PI of a 3-seed mean", "random init", "chance", "held out"):
        assert sum(name.startswith(expected) for name in names) == 1, (expected, names)
    assert any(name.startswith("published: NTP 109M") for name in names)
    diamonds = [line for line in near.lines if line.get_marker() == "D"]
    assert len(diamonds) == sum(len(c.forecasts) for c in curves.values())  # each forecast marked
    assert beyond.get_legend().get_bbox_to_anchor().x0 > beyond.get_window_extent().x1 - 1  # outside
    assert any(
        text.get_text().startswith("flags") and "EXTRAPOLATED" in text.get_text() for text in figure.texts
    )
    plt.close(figure)


def test_without_far_points_the_scaling_plot_is_one_panel(curves):
    near = [replace(c, forecasts=tuple(f for f in c.forecasts if f.samples < 900e6)) for c in curves.values()]
    run = FitRun("sim", "x", FitSettings(), curves=CurveSet(tuple(near)))
    figure = scaling_figure(run, "base", "dino", pd.DataFrame())
    assert len(figure.axes) == 1 and figure.axes[0].get_legend() is not None
    plt.close(figure)


def test_published_points_appear_only_for_the_same_model_reference_and_eval_set(curves):
    run = FitRun(
        "sim", "x", FitSettings(), curves=CurveSet(tuple(curves.values()), model_sizes={"base": 109.5e6})
    )
    for reference, eval_set, model in (
        ("clip", "wit-1024", "NTP 109M"),
        ("dino", "coco", "NTP 109M"),
        ("dino", "wit-1024", "NTP 33M"),  # the other model's point: not on this panel
    ):
        figure = scaling_figure(run, "base", "dino", published(reference, eval_set, model))
        assert not any(name.startswith("published") for name in labels(figure)), model
        plt.close(figure)
    unsized = FitRun("sim", "x", FitSettings(), curves=CurveSet(tuple(curves.values())))  # an import
    figure = scaling_figure(unsized, "base", "dino", published("dino", "wit-1024"))
    assert not any(name.startswith("published") for name in labels(figure))  # unknown: none
    plt.close(figure)


def test_residuals_tell_references_apart_and_calibration_states_its_n(curves):
    twin = replace(curves["ntp"], key=replace(curves["ntp"].key, reference="clip"))
    run = FitRun("sim", "x", FitSettings(), curves=CurveSet((*curves.values(), twin)))
    residuals = residual_figure(run).axes[0]
    styles = {
        line.get_label(): (line.get_marker(), line.get_linestyle())
        for line in residuals.lines
        if "vs" in line.get_label()
    }
    assert styles["ntp vs dino (saturating)"] != styles["ntp vs clip (saturating)"]
    calibration = calibration_figure(run)
    cells = sum(len(c.held_out) for c in run.curves)
    assert f"n = {cells}," in calibration.axes[0].get_title()
    plt.close("all")


def test_a_gap_the_data_do_not_identify_is_a_text_panel(curves):
    gap = GapEstimate(
        "jepa_good",
        "ntp",
        "base",
        "mutual_knn@10",
        "dino",
        "wit-1024",
        0.1,
        None,
        None,
        None,
        None,
        False,
        ["A is above the target 0.1 from its first checkpoint"],
        Bound(">=", 12.0),
        None,
        [],
        ["NOT_IDENTIFIABLE"],
    )
    figure = gap_figure(FitRun("sim", "x", FitSettings(), curves=CurveSet(tuple(curves.values()))), gap)
    assert figure.axes == [] and "not identifiable (R >= 12x)" in figure.texts[0].get_text()
    plt.close(figure)


def test_a_forecast_whose_mean_lies_outside_its_own_interval_is_still_drawn(curves):
    """With two points a law mixture's mean can fall outside its draws' interval (`--min-samples`
    on a three-size sweep did): the plot draws the interval and the mean, and does not fail."""
    curve = curves["ntp"]
    (first, *rest) = curve.forecasts
    outside = replace(first, prediction=first.pi[1] + 0.01)
    run = FitRun("sim", "x", FitSettings(), curves=CurveSet((replace(curve, forecasts=(outside, *rest)),)))
    figure = scaling_figure(run, "base", "dino", pd.DataFrame())
    diamonds = [line for line in figure.axes[0].lines if line.get_marker() == "D"]
    plt.close(figure)
    assert diamonds[0].get_ydata()[0] == pytest.approx(outside.prediction)


def test_r_read_on_a_sliver_of_shared_levels_is_drawn_against_every_level_either_curve_reaches(curves):
    """The embedded sweep's tiny-model gap read R across 2e-5 of the metric: drawn on that
    sliver alone, its axis said nothing of where the curves lie, and its open whiskers ran off the
    chart. The axis spans both curves' levels, the sliver is named, and an open end is marked."""
    sliver = [
        {"target": 0.1 + 1e-6 * i, "samples_b": 1e6, "ratio": 80.0 - i, "interval": (12.0, float("inf"))}
        for i in range(7)
    ]
    gap = GapEstimate(
        *("jepa_good", "ntp", "base", "mutual_knn@10", "dino", "wit-1024", 0.1, None, None, None, None),
        False,
        ["interval open: 64% of draws do not reach the target within 4x of the data"],
        None,
        None,
        sliver,
        ["NOT_IDENTIFIABLE"],
    )
    figure = gap_figure(FitRun("sim", "x", FitSettings(), curves=CurveSet(tuple(curves.values()))), gap)
    (axes,) = figure.axes
    levels = [value for curve in curves.values() for value in curve.points.mean]
    low, high = axes.get_xlim()
    assert low <= min(levels) and high >= max(levels)
    said = " ".join(text.get_text() for text in axes.texts)
    assert "R is read across 0.1 to 0.10001 only: " in said and "of the levels either curve reaches" in said
    labels = axes.get_legend_handles_labels()[1]
    assert "open end: no bound that way" in labels
    assert any(label.startswith("ntp reaches ") for label in labels)
    plt.close(figure)
