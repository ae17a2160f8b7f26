"""`orch next` on a store of planted curves: a ranked plan for each open claim, the same plan
for the same seed, the picks written as a sweep file whose `include:` holds them with new seeds,
and every bad input one line with exit 2 (a decided claim: said, exit 0)."""

import json

import pytest

from orchestrator.run.plan import Throughput
from orchestrator.sweepfile import load_spec
from tests.cli import one_error_line, orch
from tests.orchestrator.cli.test_check import ORDER, TRUE_GAP, claim, write_claims
from tests.stores import SIZES, simulated_store

TIGHT_GAP = claim("gap_tight", "gap", faster="jepa_good", slower="ntp", value=42, tolerance=1.05)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('next') / 'o.db'}"
    simulated_store(url, claims=[TRUE_GAP, TIGHT_GAP, ORDER]).close()
    return url


def test_next_plans_the_open_claim_and_writes_its_picks_as_a_sweep_file(store, tmp_path):
    more = tmp_path / "more.yaml"
    result = orch("--store", store, "next", "--json", "--runs", "4", "--write", str(more))
    assert result.returncode == 0, result.stderr
    (plan,) = json.loads(result.stdout)["plans"]
    assert plan["claims"] == ["gap_tight"]
    assert plan["flops_known"] and len(plan["ranked"]) == 2 * 10 * 3  # 2 objectives, 8 sizes + 2, 1-3 seeds
    assert sum(p["seeds"] for p in plan["picks"]) <= 4 and plan["picks"]
    now, after = plan["now"]["gap_tight"]["width"], plan["picks"][-1]["outlooks"]["gap_tight"]["width"]
    assert after < now
    spec = load_spec(more)
    assert spec.name == "sim"
    grid = {(o, size, seed) for o in ("jepa_good", "ntp") for size in SIZES for seed in range(3)}
    added = [t for t in spec.trials if (t.objective, t.data_size, t.seed) not in grid]
    picked = sorted((p["objective"], p["data_size"]) for p in plan["picks"] for _ in range(p["seeds"]))
    assert sorted((t.objective, t.data_size) for t in added) == picked
    first = more.read_text()  # the same call again, as text, over the file it wrote: the same picks
    text = orch("--store", store, "next", "--runs", "4", "--write", str(more))
    assert text.returncode == 0, text.stderr
    assert more.read_text() == first
    assert (
        "claim gap_tight (gap): inconclusive" in text.stdout
        and "picks, each given the ones before it" in text.stdout
    )
    both = json.loads(orch("--store", store, "next", "--json", "--budget", "2e15", "--runs", "2").stdout)
    picks = both["plans"][0]["picks"]
    assert picks and sum(p["seeds"] for p in picks) <= 2 and sum(p["flops"] for p in picks) <= 2e15
    hours = Throughput(312.0, 0.4).gpu_hours(2e15)  # the same budget in GPU-hours, as orch sweep takes it
    args = ("--json", "--budget", f"{hours!r}gpu-h", "--runs", "2", "--peak-tflops", "312", "--mfu", "0.4")
    in_hours = orch("--store", store, "next", *args)
    assert in_hours.returncode == 0, in_hours.stderr
    assert json.loads(in_hours.stdout)["plans"][0]["picks"] == picks


def test_a_budget_too_small_is_the_only_line_though_a_claim_is_not_planned(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    forecast = claim("forecasts", "forecast", at_least=0.999)  # the largest size is held out
    simulated_store(url, claims=[TIGHT_GAP, forecast]).close()
    line = one_error_line(orch("--store", url, "next", "--budget", "1000"))
    assert "--budget 1e+03 is below the cheapest" in line


def test_a_decided_claim_is_said_and_exits_0(store):
    result = orch("--store", store, "next", "--claim", "gap_42x")
    assert result.returncode == 0
    assert "claim gap_42x is already supported" in result.stderr and "nothing to plan" in result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--claim", "gap_tigth"], "no claim 'gap_tigth' (did you mean gap_tight?)"),
        (["--budget", "1000"], "--budget 1e+03 is below the cheapest candidate run"),
    ],
)
def test_bad_input_is_one_line(store, args, expected):
    assert expected in one_error_line(orch("--store", store, "next", *args))


def test_a_sweep_without_claims_is_one_line(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    simulated_store(url).close()
    line = one_error_line(orch("--store", url, "next"))
    assert "sweep sim states no claims: give a claims file (orch next CLAIMS.yaml sim)" in line


def test_a_claims_file_is_planned_like_the_sweeps_own(store, tmp_path):
    path = write_claims(tmp_path, [TIGHT_GAP])
    result = orch("--store", store, "next", path, "sim", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["plans"][0]["claims"] == ["gap_tight"]


def test_a_bound_with_no_value_reads_as_the_verdict_table_shows_it():
    from fits.claims.claim import Claim, Region, Verdict
    from orchestrator.cli.plan_text import interval

    gap = Claim("g", "gap", "", "test", Region(21, 84), faster="a", slower="b")
    assert interval(Verdict(gap, "inconclusive", None, (2.5, float("inf")), "a bound")) == "- [2.5x, inf]"
