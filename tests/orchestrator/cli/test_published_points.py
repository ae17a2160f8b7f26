"""A reader's first use of orch: the preprint's four published points imported as a CSV, its
claims file checked. Every claim gets a verdict with its reason, exit 0; `orch fit` and `orch
next` answer too; nothing is decided from a noise no one measured; the page shows one row a gap."""

import json

import pandas as pd
import pytest
import yaml

from db import Store
from orchestrator.imports import COLUMNS
from tests.cli import ROOT, orch
from tests.rows import import_row

CLAIMS = str(ROOT / "sweeps" / "claims" / "jepa_prh.yaml")
PUBLISHED = str(ROOT / "sweeps" / "published" / "jepa_prh.csv")

# §4.2's points with a sample count: (objective, model, samples, value); the base model is 109M
PAPER = (
    ("jepa_good", "base", "21.6M", 0.109),
    ("ntp", "base", "900M", 0.111),
    ("jepa_good", "33M", "21.6M", 0.108),
    ("ntp", "33M", "21.6M", 0.071),
)
PARAMETERS = {"base": 109e6, "33M": 33e6}


def paper_store(folder, points=PAPER, se: float | None = None) -> str:
    """A store holding `points` imported as sweep 'paper', one seed each (with `se` where given)."""
    rows = [import_row(objective, model, size, 0, value) for objective, model, size, value in points]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["n_params"] = frame.model.map(PARAMETERS)
    if se is not None:
        frame["se"] = se
    frame.to_csv(folder / "points.csv", index=False)
    url = f"sqlite:///{folder / 'p.db'}"
    imported = orch("--store", url, "import", str(folder / "points.csv"), "--sweep", "paper")
    assert imported.returncode == 0, imported.stderr
    return url


def verdicts(url: str) -> dict[str, dict]:
    checked = orch("--store", url, "check", CLAIMS, "paper", "--json")
    assert checked.returncode == 0 and "Traceback" not in checked.stderr, checked.stderr
    return {v["id"]: v for v in json.loads(checked.stdout)["verdicts"]}


def test_the_four_published_points_get_a_verdict_a_claim_with_reasons_and_decide_nothing(tmp_path):
    url = paper_store(tmp_path)
    found = verdicts(url)
    assert len(found) == 14 and {v["verdict"] for v in found.values()} == {"inconclusive"}
    recipes = "the preprint's objectives ran different recipes: a comparison between them mixes"
    assert all(any(c.startswith(recipes) for c in v["caveats"]) for v in found.values())  # the file's
    assert all(v["reasons"] and v["missing"] for v in found.values())
    assert "a second seed of jepa_good/33M at 21.6M" in found["good_33m_at_21.6M"]["missing"]
    assert any("not measured: objective jepa_bad" in why for why in found["ntp_above_bad"]["reasons"])
    assert any("R <= 41.7x as the point values suggest" in why for why in found["gap_42x"]["reasons"])
    text = orch("--store", url, "check", CLAIMS, "paper")
    assert text.returncode == 0 and "[inf, inf]" not in text.stdout and "Traceback" not in text.stderr
    fit = orch("--store", url, "fit", "paper", "--gap", "jepa_good:ntp", "--out", str(tmp_path / "r"))
    assert fit.returncode == 0 and "Traceback" not in fit.stderr, fit.stderr
    planned = orch("--store", url, "next", CLAIMS, "paper", "--json")
    assert planned.returncode == 0 and "Traceback" not in planned.stderr, planned.stderr
    (plan,) = json.loads(planned.stdout)["plans"]
    assert {need["claim"] for need in plan["needs"]} >= {"gap_42x", "good_33m_at_21.6M"} and plan["first"]


def test_two_points_a_curve_and_one_seed_each_support_no_gap(tmp_path):
    """The wave-3 fault: two points a curve fitted a law with an assumed noise and said SUPPORTED."""
    points = (
        ("jepa_good", "base", "6.18M", 0.095),
        ("jepa_good", "base", "21.6M", 0.109),
        ("ntp", "base", "260M", 0.104),
        ("ntp", "base", "900M", 0.111),
    )
    gap = verdicts(paper_store(tmp_path, points))["gap_42x"]
    assert gap["verdict"] == "inconclusive" and gap["interval"] is None


@pytest.mark.parametrize(("se", "expected"), [(0.002, "supported"), (0.02, "inconclusive")])
def test_imported_ses_decide_the_level_claims_they_are_precise_enough_for(tmp_path, se, expected):
    found = verdicts(paper_store(tmp_path, se=se))
    for claim in ("good_33m_at_21.6M", "ntp_33m_at_21.6M"):
        assert found[claim]["verdict"] == expected, found[claim]
        assert "SE given with the imported row" in found[claim]["basis"] or expected == "inconclusive"


def test_the_report_shows_one_row_a_gap_with_the_published_bound_beside_the_fits(tmp_path):
    url = paper_store(tmp_path)
    assert orch("--store", url, "baselines", "import", PUBLISHED).returncode == 0
    fit = orch("--store", url, "fit", "paper", "--gap", "jepa_good:ntp", "--out", str(tmp_path / "r"))
    assert fit.returncode == 0, fit.stderr
    report = (tmp_path / "r" / "paper" / "latest" / "report.md").read_text()
    assert "Published checkpoints" not in report  # no second gap table
    (base,) = [line for line in report.splitlines() if line.startswith("| jepa_good:ntp | base vs")]
    assert "R <= 41.7x at a* 0.111" in base and "not identifiable" in base  # one row, each with its basis
    assert not any(line.startswith("| jepa_good:ntp | JEPA 109M") for line in report.splitlines())


def test_a_baseline_name_with_several_published_values_is_one_line_naming_them(tmp_path):
    url = paper_store(tmp_path, se=0.002)
    rows = pd.read_csv(PUBLISHED)
    rows.loc[rows.value.isin([0.168, 0.184]), "model"] = "JEPA 109M"  # the CSV before each had its name
    assert rows.duplicated(["model", "metric", "reference", "eval_set"]).any()
    rows.to_csv(tmp_path / "published.csv", index=False)
    assert orch("--store", url, "baselines", "import", str(tmp_path / "published.csv")).returncode == 0
    (tmp_path / "c.yaml").write_text(
        "claims:\n  - {id: b, says: x, source: y, kind: level, objective: jepa_good, model: base, "
        "at: 21.6M, baseline: JEPA 109M, at_least: 0}\n"
    )
    checked = orch("--store", url, "check", str(tmp_path / "c.yaml"), "paper")
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    (line,) = checked.stderr.strip().splitlines()
    assert "0.184" in line and "0.168" in line and "own model name" in line


def test_the_published_csv_gives_each_number_its_own_name():
    rows = pd.read_csv(PUBLISHED)
    assert not rows.duplicated(["model", "metric", "reference", "eval_set"]).any()


def test_the_planner_names_a_size_both_objectives_lack_before_it_plans_an_order(tmp_path):
    planned = orch("--store", paper_store(tmp_path, se=0.002), "next", CLAIMS, "paper", "--json")
    assert planned.returncode == 0 and "Traceback" not in planned.stderr, planned.stderr
    (plan,) = json.loads(planned.stdout)["plans"]
    (order,) = [need for need in plan["needs"] if need["claim"] == "good_above_ntp"]
    assert order["what"] == "jepa_good and ntp measured at 260M"
    assert {(run["objective"], run["data_size"]) for run in order["runs"]} == {
        ("jepa_good", 260_000_000),
        ("ntp", 260_000_000),
    }


def test_the_picks_on_the_published_points_are_priced_by_the_template(tmp_path):
    """Curves of one point have no law; their runs are priced by the template's FLOPs model all
    the same, and the report's table does not pass samples off as FLOPs."""
    url = paper_store(tmp_path, se=0.003)
    template = str(ROOT / "sweeps" / "goodview_vs_ntp_paper.yaml")
    planned = orch(
        "--store", url, "next", CLAIMS, "paper", "--template", template, "--gpu-hour-cost", "2.5", "--json"
    )
    assert planned.returncode == 0, planned.stderr
    (plan,) = json.loads(planned.stdout)["plans"]
    cells = [*plan["first"], *(pick["cell"] for pick in plan["picks"])]
    assert cells and all(c["flops"] > 1e3 * c["data_size"] * c["seeds"] for c in cells)  # FLOPs, not samples
    assert plan["gpu_hours"] > 0 and plan["cost"] == pytest.approx(2.5 * plan["gpu_hours"])
    jepa = sorted(c["data_size"] for c in plan["first"] if c["objective"] == "jepa_good")
    assert len(jepa) == 2 and all(21.6e6 / 2 <= size <= 21.6e6 * 2 for size in jepa)  # a law's sizes, near
    offered = {(c["objective"], c["data_size"]) for c in plan["ranked"]}
    assert ("jepa_good", 40_400_000) in offered  # the template's sizes past JEPA's crossing of 0.111
    assert max(size for _, size in offered) <= 940e6  # its corpus
    table = orch("--store", url, "check", CLAIMS, "paper").stdout
    assert "- (orch next --template)" in table and "2.16e+07" not in table


def test_the_written_picks_take_new_seeds_and_their_results_import_back_into_the_sweep(tmp_path):
    """The reader's round trip: `orch next --write` on the published points, the picks' results
    (planted here) imported into the same sweep. A pick never reuses a recorded seed of its
    objective and model, so nothing collides with the published points, and the claims judge
    the published and the new runs together."""
    url = paper_store(tmp_path, se=0.003)
    template = str(ROOT / "sweeps" / "goodview_vs_ntp_paper.yaml")
    wrote = orch(
        "--store", url, "next", CLAIMS, "paper", "--template", template, "--write", "more.yaml", cwd=tmp_path
    )
    assert wrote.returncode == 0, wrote.stderr
    raw = yaml.safe_load((tmp_path / "more.yaml").read_text())
    cells = [raw["grid"] | {}, *raw.get("include", [])]
    cells = [
        {axis: (value[0] if isinstance(value, list) else value) for axis, value in c.items()} for c in cells
    ]
    recorded = {(objective, model, 0) for objective, model, *_ in PAPER}
    assert cells and not {(c["objective"], c["model"], c["seed"]) for c in cells} & recorded
    planted = [
        import_row(c["objective"], c["model"], str(c["data_size"]), c["seed"], 0.1 + 1e-3 * c["seed"])
        for c in cells
    ]
    frame = pd.DataFrame(planted, columns=list(COLUMNS)).assign(se=0.003)
    frame.to_csv(tmp_path / "results.csv", index=False)
    imported = orch("--store", url, "import", str(tmp_path / "results.csv"), "--sweep", "paper")
    assert imported.returncode == 0, imported.stderr
    assert (
        f"paper: {len(cells)} of {len(cells)} trials and {len(cells)} of {len(cells)} rows added"
        in imported.stderr
    )
    assert "--sweep paper" in (tmp_path / "more.yaml").read_text().splitlines()[2]  # the header's round trip
    trials = Store.open(url).trials_frame("paper")
    assert len(trials) == len(PAPER) + len(cells)
    assert len(verdicts(url)) == 14  # the claims file still judges the one sweep
    pooled = "its seeds come from points.csv and results.csv; their scatter pools the files' recipes"
    assert pooled in imported.stderr  # a published seed and a rerun are not two seeds of one run
    assert pooled in orch("--store", url, "check", CLAIMS, "paper").stderr
