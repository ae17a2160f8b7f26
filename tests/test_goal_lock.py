"""The goal lock (`tests.goal_lock`): which files the slow goals depend on, what counts as a
change, and when the slow phase runs in full."""

import copy

from tests.goal_lock import ROOT, check_locked, closure, decide, differences, fingerprint


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
    figures = {"huber": {"largest_shift": 0.5}}
    scale, missed = decide(lock_of(now, figures), now)
    assert scale == "smoke" and "huber" not in " ".join(missed)  # met
    assert "forecast_coverage: no figures in the lock" in missed  # every goal must be there


def test_figures_that_miss_a_goal_fail_the_lock():
    assert check_locked(lock_of(fingerprint(), {"huber": {"largest_shift": 1.2}}))[-1].startswith("huber: ")
