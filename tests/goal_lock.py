"""The slow goals run when their code changes: a lock records what they were last measured on.

The slow tests (`-m slow`: the fitting procedure, the verdict rates and `orch next` on planted
truths) are deterministic for their code and the numerical packages under it, and take most of
an hour on 2 cores. `tests/goals.lock.json` records the sha256 of every file they import (their
import closure inside this repository, found by reading the import statements), the versions of
those packages, the command that wrote it and the figures it measured.

    python -m tests.goal_lock           # what .ci/run runs
    python -m tests.goal_lock --full    # measure again, whatever the lock says

Where the fingerprint matches the lock, the lock's figures are checked against the goals
(`tests.fits.goals`) and each slow test runs as a smoke check (a few replicates, loose bounds).
Where it differs, every slow test runs in full and, when all pass, writes the lock: the only
writer. Commit the lock with the change that moved it.
"""

import argparse
import ast
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from tests.fits.planted.goals import FIGURES_ENV, GOALS, misses

__all__ = ["LOCK", "SLOW_TESTS", "check_locked", "closure", "decide", "differences", "fingerprint"]

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "tests" / "goals.lock.json"
SLOW_TESTS = (
    "tests/fits/planted/test_procedure.py",
    "tests/fits/planted/test_calibration.py",
    "tests/fits/planted/test_plan_check.py",
)
HARNESS = ("tests/fits/planted/goals.py",)  # the goals and their scales (pytest --goals full|smoke)
PACKAGES = ("numpy", "scipy", "lmfit", "pandas")  # the numbers under the goals' figures
OURS = ("fits", "foundation", "db", "orchestrator", "tests")
TIMEOUT_S = 2400  # each slow test may take 40 minutes on 2 slow cores


def _module_file(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(path: Path) -> set[str]:
    """Every module of ours `path` names in an import, anywhere in the file, with the packages
    above it (importing `fits.next.plan` runs `fits/__init__.py` first)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}".strip(".")
            names |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    found = set()
    for name in names:
        parts = name.split(".")
        if parts[0] in OURS:
            found |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return found


def closure(starts: tuple[str, ...] = SLOW_TESTS + HARNESS) -> list[Path]:
    """The files of ours the slow tests import, directly or through others: their closure."""
    todo = [ROOT / start for start in starts]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo += [file for module in _imported(path) if (file := _module_file(module)) is not None]
    return sorted(seen)


def fingerprint() -> dict:
    """What the slow goals' figures depend on: each file's sha256, the packages' versions, Python's."""
    files = {str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest() for p in closure()}
    versions = {name: metadata.version(name) for name in PACKAGES}
    return {"files": files, "packages": versions, "python": platform.python_version()}


def differences(old: dict, new: dict) -> list[str]:
    """What changed between two fingerprints, one item a line."""
    changed = [f"{path} (new)" for path in new["files"].keys() - old.get("files", {}).keys()]
    changed += [f"{path} (gone)" for path in old.get("files", {}).keys() - new["files"].keys()]
    changed += [
        p for p in new["files"].keys() & old.get("files", {}).keys() if new["files"][p] != old["files"][p]
    ]
    for name, version in new["packages"].items():
        if old.get("packages", {}).get(name) != version:
            changed.append(f"{name} {old.get('packages', {}).get(name)} -> {version}")
    if old.get("python") != new["python"]:
        changed.append(f"python {old.get('python')} -> {new['python']}")
    return sorted(changed)


def _pytest(scale: str, env: dict[str, str]) -> int:
    command = [sys.executable, "-m", "pytest", "-q", "-m", "slow", "--goals", scale, "--dist", "load"]
    command += ["--timeout", str(TIMEOUT_S), "--durations", "15", *SLOW_TESTS]
    print("$", " ".join(command[1:]), flush=True)
    return subprocess.run(command, cwd=ROOT, env={**os.environ, **env}).returncode


def run_full(now: dict) -> int:
    """Every slow goal in full; the lock written when all of them pass."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        code = _pytest("full", {FIGURES_ENV: folder})
        figures = {p.stem: json.loads(p.read_text()) for p in Path(folder).glob("*.json")}
    if code != 0:
        print("goal lock: a slow goal failed; the lock is left as it was", flush=True)
        return code
    missing = sorted(GOALS.keys() - figures.keys())
    if missing:
        print(f"goal lock: no figures from {', '.join(missing)}; the lock is left as it was", flush=True)
        return 1
    lock = {
        "command": "python -m tests.goal_lock",
        "written": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "took_s": round(time.monotonic() - started),
        "fingerprint": now,
        "figures": figures,
    }
    LOCK.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
    print(f"goal lock: written ({len(now['files'])} files); commit {LOCK.relative_to(ROOT)}", flush=True)
    return 0


def check_locked(lock: dict) -> list[str]:
    """The goals the lock's own figures miss (none: every goal met when it was measured)."""
    found = [f"{goal}: no figures in the lock" for goal in GOALS if goal not in lock["figures"]]
    for goal, figures in lock["figures"].items():
        found += [f"{goal}: {line}" for line in misses(goal, figures)]
    return found


def decide(lock: dict | None, now: dict, full: bool = False) -> tuple[str, list[str]]:
    """("full", why) where the goals must be measured again, else ("smoke", the goals the lock's
    figures miss: none where all is well)."""
    if full:
        return "full", ["asked to measure again"]
    if lock is None:
        return "full", ["no lock yet"]
    changed = differences(lock["fingerprint"], now)
    if changed:
        return "full", [f"changed: {', '.join(changed)}"]
    return "smoke", check_locked(lock)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="measure every goal again and write the lock")
    now = fingerprint()
    lock = json.loads(LOCK.read_text()) if LOCK.exists() else None
    scale, lines = decide(lock, now, parser.parse_args().full)
    if scale == "full":
        print(f"goal lock: {lines[0]}; running every slow goal in full", flush=True)
        return run_full(now)
    if lines:
        print("goal lock: the lock's figures miss their goals:\n  " + "\n  ".join(lines), flush=True)
        return 1
    print(
        f"goal lock: {len(now['files'])} files and {', '.join(PACKAGES)} as locked on {lock['written']}; "
        "its figures meet every goal. Smoke checks of each goal:",
        flush=True,
    )
    return _pytest("smoke", {})


if __name__ == "__main__":
    sys.exit(main())
