"""`orch next` advice a GPU owner can act on, on a paper reader's sparse import: the preprint's
published points plus one planted seed at each of its sizes (then a second). Every pick moves the
estimator the verdict reads (the seed means' gap where the laws' is withheld), no pick passes the
corpus, and the picks are priced in GPU-hours and written as a runnable sweep file."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from fits.curve.laws import saturating
from foundation.sizes import parse_size
from orchestrator.imports import COLUMNS
from orchestrator.sweepfile import load_spec
from tests.cli import ROOT, orch

CLAIMS = str(ROOT / "sweeps" / "claims" / "jepa_prh.yaml")
ORCH_CLAIMS = str(ROOT / "sweeps" / "claims" / "jepa_prh_orch.yaml")  # orch's own: the FLOPs gap
TEMPLATE = str(ROOT / "sweeps" / "goodview_vs_ntp_paper.yaml")
SIZES = ("145K", "506K", "1.77M", "6.18M", "21.6M", "75M", "260M", "900M")
PUBLISHED = {
    ("jepa_good", "base", "21.6M"): 0.109,
    ("ntp", "base", "900M"): 0.111,
    ("jepa_good", "33M", "21.6M"): 0.108,
    ("ntp", "33M", "21.6M"): 0.071,
}
TRUTH = {"33M": (0.16, 0.066, 0.25), "base": (0.2, 0.082, 0.25)}  # a third of the way up at 145K
SLOWER = {"jepa_good": 1.0, "ntp": 42.0, "jepa_bad": 400.0}
CORPUS = 940_000_000


def sparse_store(folder, seeds: int) -> str:
    """The published points as seed 0 where there is one, and planted seeds at every size."""
    rng = np.random.default_rng(1)
    rows = []
    for model, law in TRUTH.items():
        for objective, slower in SLOWER.items():
            for size in SIZES:
                for seed in range(seeds):
                    planted = saturating(parse_size(size) / slower, *law) + rng.normal(0, 0.003)
                    value = PUBLISHED.get((objective, model, size), planted) if seed == 0 else planted
                    row = [
                        objective,
                        model,
                        size,
                        seed,
                        size,
                        "mutual_knn@10",
                        "dinov2_vitb",
                        "wit-1024",
                        value,
                    ]
                    rows.append(row)
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(folder / "sparse.csv", index=False)
    url = f"sqlite:///{folder / 's.db'}"
    imported = orch("--store", url, "import", str(folder / "sparse.csv"), "--sweep", "sparse")
    assert imported.returncode == 0, imported.stderr
    return url


def planned(url: str, *options: str, claims: str = CLAIMS) -> dict:
    found = orch("--store", url, "next", claims, "sparse", "--template", TEMPLATE, "--json", *options)
    assert found.returncode == 0 and "Traceback" not in found.stderr, found.stderr
    (plan,) = json.loads(found.stdout)["plans"]
    return plan


def every_cell(plan: dict) -> list[dict]:
    return [*plan["ranked"], *plan["picks"], *plan["first"], *(r for n in plan["needs"] for r in n["runs"])]


def test_one_seed_a_size_plans_one_second_seed_a_curve_for_the_seed_means_gap_within_the_corpus(tmp_path):
    """With one seed a size the gap's verdict has no interval: the seed means' gap needs its
    noise measured on each curve, so one second seed of each, anywhere on it (its scatter is
    pooled over the curve): every size offered, the cheapest first; nothing below the grid,
    nothing past the 940M corpus."""
    url = sparse_store(tmp_path, seeds=1)
    plan = planned(url, "--budget", "1e21")
    needs = [n for n in plan["needs"] if n["claim"] == "gap_42x"]
    assert sorted(n["runs"][0]["objective"] for n in needs) == ["jepa_good", "ntp"]
    for need in needs:
        assert "(the seed means' gap pools its noise)" in need["what"]
        assert {r["data_size"] for r in need["runs"]} == {parse_size(s) for s in SIZES}
        assert need["runs"][0]["data_size"] == parse_size(SIZES[0]) and need["runs"][0]["seeds"] == 1
    first = {(c["objective"], c["data_size"]) for c in plan["first"]}
    assert {(o, parse_size(SIZES[0])) for o in ("jepa_good", "ntp")} <= first
    assert all(c["data_size"] <= CORPUS for c in every_cell(plan))
    assert plan["gpu_hours"] > 0
    (flops,) = [n for n in planned(url, claims=ORCH_CLAIMS)["needs"] if n["claim"] == "gap_42x_flops"]
    assert flops["what"].startswith("FLOPs per sample") and not flops["runs"]


def test_with_two_seeds_every_pick_narrows_the_estimator_its_verdict_reads(tmp_path):
    url = sparse_store(tmp_path, seeds=2)
    checked = orch("--store", url, "check", CLAIMS, "sparse", "--json")
    verdicts = {v["id"]: v for v in json.loads(checked.stdout)["verdicts"]}
    assert verdicts["gap_42x"]["basis"].startswith("the seed means' gap")
    plan = planned(url, "--runs", "8", "--gpu-hour-cost", "2.5")
    assert plan["picks"] and "gap_42x" in plan["claims"]
    widths = {claim: outlook["width"] for claim, outlook in plan["now"].items()}
    for pick in plan["picks"]:
        narrowed = {c: widths[c] - o["width"] for c, o in pick["outlooks"].items()}
        assert max(narrowed.values()) > 0, pick  # each pick narrows some claim's verdict interval
        assert min(narrowed.values()) >= -1e-9, pick  # and widens none
        widths = {c: o["width"] for c, o in pick["outlooks"].items()}
        assert pick["data_size"] <= CORPUS and pick["gpu_hours"] > 0
    # the seed means' gap reads NTP at 900M and JEPA either side of the crossing: a run anywhere
    # else leaves the gap's width where it was
    ranked = {
        (c["objective"], c["model"], c["data_size"], c["seeds"]): c["outlooks"]["gap_42x"]["width"]
        for c in plan["ranked"]
    }
    now = plan["now"]["gap_42x"]["width"]
    assert ranked[("ntp", "base", 900_000_000, 1)] < now
    assert ranked[("ntp", "33M", 900_000_000, 3)] == pytest.approx(now)  # another model's curve
    assert ranked[("ntp", "base", 145_000, 3)] == pytest.approx(now)
    assert ranked[("jepa_good", "base", 72_500, 3)] == pytest.approx(now)
    assert plan["cost"] == pytest.approx(plan["gpu_hours"] * 2.5)


def test_write_with_a_template_gives_an_imported_sweep_a_runnable_sweep_file(tmp_path):
    url = sparse_store(tmp_path, seeds=1)
    refused = orch("--store", url, "next", CLAIMS, "sparse", "--write", str(tmp_path / "x.yaml"))
    assert refused.returncode == 2 and "give --template SWEEP.yaml" in refused.stderr
    assert not (tmp_path / "x.yaml").exists()
    written = tmp_path / "more.yaml"
    result = orch(
        "--store",
        url,
        "next",
        CLAIMS,
        "sparse",
        "--template",
        TEMPLATE,
        "--runs",
        "3",
        "--write",
        str(written),
    )
    assert result.returncode == 0, result.stderr
    spec = load_spec(written)
    plan = yaml.safe_load(written.read_text())
    assert spec.name == "sparse_next" and "claims" not in plan and "holdout" not in plan
    assert len(spec.trials) == 3 and spec.data.corpus == CORPUS and spec.resources.gpu == 1
    assert all(t.data_size <= CORPUS for t in spec.trials)


def test_a_held_out_size_the_gap_reads_is_named_as_a_free_release(tmp_path):
    """The old design's import: NTP's 900M cells held out of its laws. Releasing them costs no
    run; the plan names it, and buys NTP seeds at 900M and JEPA seeds where it crosses."""
    from tests.orchestrator.cli.test_import import paper_curves

    url = f"sqlite:///{tmp_path / 'o.db'}"
    logs = paper_curves(tmp_path / "logs.csv")
    imported = orch("--store", url, "import", logs, "--sweep", "paper", "--holdout-above", "300M")
    assert imported.returncode == 0, imported.stderr
    found = orch(
        "--store", url, "next", CLAIMS, "paper", "--claim", "gap_42x", "--template", TEMPLATE, "--json"
    )
    assert found.returncode == 0, found.stderr
    payload = json.loads(found.stdout)
    (free,) = payload["free"]
    assert free.startswith("gap_42x: release 900M of ntp/base from the holdout (3 seed(s), already run)")
    assert "; a refit with it released: width x2.38 -> x" in free and "inconclusive -> " in free
    (plan,) = payload["plans"]
    assert {(p["objective"], p["data_size"]) for p in plan["picks"]} <= {
        ("ntp", 900_000_000),
        ("jepa_good", 21_600_000),
        ("jepa_good", 75_000_000),
    }
