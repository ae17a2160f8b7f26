"""The claims' intervals round by round (`fits.report.rounds_plot`), drawn from the store's rounds."""

import json

import matplotlib.colors as mcolors

from db import RoundRow
from fits.claims.claim import Claim, Outcome, Region, Verdict
from fits.curve.settings import FitSettings
from fits.report.rounds_plot import rounds_figure
from fits.run.results import FitRun

LEVEL = Claim(
    id="tight", kind="level", says="s", source="t", region=Region(0.093, 0.103), objective="a", at=64e3
)
GAP = Claim(id="gap", kind="gap", says="s", source="t", region=Region(10.0), faster="a", slower="b", at=64e3)


def look(verdict: str, low: float, high: float) -> dict:
    return {"verdict": verdict, "low": low, "high": high, "width": high - low}


def round_row(number: int, flops: float, before: dict, after: dict | None) -> RoundRow:
    expected = json.dumps({"tight": 0.008, "gap": 0.9})
    before_text, after_text = json.dumps(before), None if after is None else json.dumps(after)
    return RoundRow("s", number, "[]", flops, None, 0.99, before_text, expected, after_text, 0.0, None)


def run_with(rounds: tuple[RoundRow, ...]) -> FitRun:
    verdicts = tuple(Verdict(c, Outcome.INCONCLUSIVE, None, None, "b") for c in (LEVEL, GAP))
    return FitRun("s", "x", FitSettings(), verdicts=verdicts, rounds=rounds)


def test_each_claim_gets_a_panel_with_one_bar_per_look_coloured_by_its_verdict():
    grid = {"tight": look("inconclusive", 0.0905, 0.1048), "gap": look("supported", 16.0, float("inf"))}
    first = {"tight": look("inconclusive", 0.092, 0.103), "gap": look("supported", 18.0, float("inf"))}
    second = {"tight": look("supported", 0.0945, 0.1010), "gap": look("supported", 19.0, float("inf"))}
    rounds = (
        round_row(1, 4e12, grid, first),
        round_row(2, 3e12, first, second),
        round_row(3, 2e12, second, None),
    )
    figure = rounds_figure(run_with(rounds))
    tight, gap = figure.axes
    assert "tight: claimed [0.093, 0.103]" in tight.get_title() and gap.get_yscale() == "log"
    bars = [line for line in tight.get_lines() if line.get_linewidth() == 4]
    assert [line.get_xdata()[0] for line in bars] == [0.0, 4e12, 7e12]  # the unfinished round 3: no bar
    assert [mcolors.to_hex(line.get_color()) for line in bars] == [
        mcolors.to_hex(c) for c in ("tab:gray", "tab:gray", "tab:green")
    ]
    expected = [line for line in tight.get_lines() if line.get_linewidth() == 1]
    assert (
        len(expected) == 2
        and abs(float(expected[0].get_ydata()[1] - expected[0].get_ydata()[0]) - 0.008) < 1e-12
    )


def test_a_sweep_without_rounds_has_no_rounds_plot():
    assert rounds_figure(run_with(())) is None
