"""The goal lock (`tests.goal_lock`): which files the slow goals depend on, what counts as a
change, and when the slow phase runs in full."""

import copy
import json

from fits.planted.monte_carlo import share
from tests.goal_lock import ROOT, check_locked, closure, compare, decide, differences, fingerprint, machine


def lock_of(now: dict, figures: dict | None = None) -> dict:
    return {"fingerprint": copy.deepcopy(now), "figures": figures or {}, "written": "today"}


def test_the_closure_holds_what_the_slow_goals_import_and_not_the_command_line():
    files = {str(path.relative_to(ROOT)) for path in closure()}
    for needed in (
        "fits/claims/verdicts.py",
        "fits/next/plan.py",
        "fits/next/beliefs.py",
        "fits/curve/laws.py",
        "tests/fits/planted/goals.py",
    ):
        assert needed in files, needed
    assert "fits/__init__.py" in files  # run on every import of fits
    assert not [f for f in files if f.startswith(("orchestrator/", "fits/report/"))]


def test_a_changed_line_a_new_file_and_a_package_version_are_each_named():
    now = fingerprint()
    old = copy.deepcopy(now)
    old["files"]["fits/claims/verdicts.py"] = "0" * 64
    del old["files"]["fits/next/plan.py"]
    old["packages"]["scipy"] = "0.1"
    assert differences(old, now) == [
        "fits/claims/verdicts.py",
        "fits/next/plan.py (new)",
        f"scipy 0.1 -> {now['packages']['scipy']}",
    ]
    assert differences(now, now) == []


def test_any_difference_runs_every_goal_in_full_and_a_match_runs_the_smoke_checks():
    now = fingerprint()
    moved = copy.deepcopy(now)
    moved["files"]["fits/curve/gaps.py"] = "0" * 64
    assert decide(lock_of(moved), now) == ("full", ["changed: fits/curve/gaps.py"])
    assert decide(None, now) == ("full", ["no lock yet"])
    assert decide(lock_of(now), now, full=True)[0] == "full"
    figures = {"huber": {"within_one_se": share(100, 100).as_dict(), "largest_shift": 0.9}}
    scale, missed = decide(lock_of(now, figures), now)
    assert scale == "smoke" and "huber" not in " ".join(missed)  # met
    assert "forecast_coverage: no figures in the lock" in missed  # every goal must be there


def test_figures_that_miss_a_goal_fail_the_lock_on_their_bound_not_their_value():
    # 96 of 100 seeds is above the 95% goal, but its Clopper-Pearson lower bound (91.08%) is not: missed
    figures = {"huber": {"within_one_se": share(96, 100).as_dict(), "largest_shift": 1.2}}
    missed = check_locked(lock_of(fingerprint(), figures))[-1]
    assert missed.startswith("huber: seeds moved under 1 SE 0.96 (SE 0.02") and "0.9108" in missed


def test_the_lock_records_the_machine_and_compare_counts_the_flips(tmp_path):
    assert {"cpu", "blas", "blas_kernel", "blas_threads"} <= machine(1).keys()
    paths = []
    for hits in (100, 96):
        figures = {"huber": {"within_one_se": share(hits, 100).as_dict(), "largest_shift": 1.0}}
        paths.append(tmp_path / f"{hits}.json")
        paths[-1].write_text(json.dumps({"machine": machine(1), "figures": figures}))
    lines = compare(paths)
    assert "huber: seeds moved under 1 SE (at least 0.95): 1 ±0 [0.9705, 1] ok | 0.96" in lines[1]
    assert lines[-1] == "1 figure(s) pass in one run and fail in another"
