"""The slow goals run when their code changes: a lock records what they were last measured on.

The slow tests (`-m slow`: the fitting procedure, the verdict rates and `orch next` on planted
truths) are deterministic for their code and the numerical packages under it, and take most of
an hour on 2 cores. `tests/goals.lock.json` records the sha256 of every file they import (their
import closure inside this repository, found by reading the import statements), the versions of
those packages, the command that wrote it and the figures it measured.

    python -m tests.goal_lock           # what .ci/run runs
    python -m tests.goal_lock --full    # measure again, whatever the lock says
    python -m tests.goal_lock --full --blas-threads 2 --out other.json   # a perturbed run
    python -m tests.goal_lock --compare tests/goals.lock.json other.json

Where the fingerprint matches the lock, the lock's figures are checked against the goals
(`tests.fits.planted.goals`) and each slow test runs as a smoke check (a few replicates, loose
bounds). Where it differs, every slow test runs in full and, when all pass, writes the lock: the
only writer. Commit the lock with the change that moved it. Either way every goal's figure is
printed with its Monte-Carlo SE, its bounds and its margin.

The slow tests run with BLAS and OpenMP pinned to one thread (BLAS_THREADS: a sum's order is then
the same on every run of this machine); `--blas-threads` runs them otherwise, the perturbation a
goal must not flip on. The lock records the machine (CPU, BLAS build, threads) beside the
fingerprint: a figure is exact for one machine, and a goal's bound must hold on any.
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
from typing import Any

from tests.fits.planted.goals import FIGURES_ENV, GOALS, misses, rows

__all__ = [
    "LOCK",
    "SLOW_TESTS",
    "check_locked",
    "closure",
    "compare",
    "decide",
    "differences",
    "figure_lines",
    "fingerprint",
    "machine",
]

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
BLAS_THREADS = 1
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


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


def machine(blas_threads: int) -> dict:
    """What a figure's last digits depend on beyond the fingerprint: the CPU, the BLAS numpy was
    built with, and the threads it ran on."""
    import numpy as np

    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [
            line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if "model name" in line
        ]
        cpu = names[0] if names else cpu
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "blas": f"{blas.get('name')} {blas.get('version')}",
        "blas_kernel": _openblas_kernel(np),
        "blas_threads": blas_threads,
    }


def _openblas_kernel(np: Any) -> str | None:
    """The kernel OpenBLAS chose for this CPU (its DYNAMIC_ARCH build picks one at load: Haswell,
    SkylakeX, ...), read from the library numpy's wheel carries; None where there is none."""
    import ctypes

    for library in Path(np.__file__).parent.parent.glob("numpy.libs/*openblas*"):
        name = getattr(ctypes.CDLL(str(library)), "scipy_openblas_get_corename64_", None)
        if name is not None:
            name.restype = ctypes.c_char_p
            return name().decode()
    return None


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


def _pytest(scale: str, env: dict[str, str], blas_threads: int) -> int:
    command = [sys.executable, "-m", "pytest", "-q", "-m", "slow", "--goals", scale, "--dist", "load"]
    command += ["--timeout", str(TIMEOUT_S), "--durations", "15", *SLOW_TESTS]
    threads = dict.fromkeys(THREAD_VARIABLES, str(blas_threads))
    print("$", " ".join(f"{k}={v}" for k, v in threads.items()), " ".join(command[1:]), flush=True)
    return subprocess.run(command, cwd=ROOT, env={**os.environ, **threads, **env}).returncode


def run_full(now: dict, blas_threads: int, out: Path) -> int:
    """Every slow goal in full; the lock (or `out`) written when all of them pass."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        code = _pytest("full", {FIGURES_ENV: folder}, blas_threads)
        figures = {p.stem: json.loads(p.read_text()) for p in Path(folder).glob("*.json")}
    print("\n".join(figure_lines(figures)), flush=True)
    if code != 0:
        print("goal lock: a slow goal failed; the lock is left as it was", flush=True)
        return code
    missing = sorted(GOALS.keys() - figures.keys())
    if missing:
        print(f"goal lock: no figures from {', '.join(missing)}; the lock is left as it was", flush=True)
        return 1
    lock = {
        "command": " ".join(["python -m tests.goal_lock", *sys.argv[1:]]),
        "written": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "took_s": round(time.monotonic() - started),
        "fingerprint": now,
        "machine": machine(blas_threads),
        "figures": figures,
    }
    out.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
    print(f"goal lock: written ({len(now['files'])} files); commit {out}", flush=True)
    return 0


def figure_lines(figures: dict, smoke: bool = False) -> list[str]:
    """Every goal's figures, one line each: value, SE, bounds, goal and margin, and ok or MISSED."""
    lines = []
    for goal in GOALS:
        if goal in figures:
            lines += [
                f"  {'ok    ' if r.ok else 'MISSED'} {goal}: {r.line()}"
                for r in rows(goal, figures[goal], smoke)
            ]
    return lines


def compare(paths: list[Path]) -> list[str]:
    """Two or more locks' figures side by side: each figure's value, SE and bounds in each, and
    whether each met its goal (the runs agree when every row's verdicts are the same)."""
    locks = [json.loads(path.read_text()) for path in paths]
    lines = ["  ".join(f"{path}: {lock.get('machine', {})}" for path, lock in zip(paths, locks, strict=True))]
    flipped = 0
    for goal in (g for g in GOALS if all(g in lock["figures"] for lock in locks)):
        tables = [rows(goal, lock["figures"][goal]) for lock in locks]
        for same in zip(*tables, strict=True):
            oks = {row.ok for row in same}
            flipped += len(oks) > 1
            told = " | ".join(
                f"{r.estimate['value']:.4g} ±{r.estimate['se']:.2g} [{r.estimate['low']:.4g}, "
                f"{r.estimate['high']:.4g}] {'ok' if r.ok else 'MISSED'}"
                for r in same
            )
            lines.append(f"{goal}: {same[0].figure} ({same[0].goal}): {told}")
    return [*lines, f"{flipped} figure(s) pass in one run and fail in another"]


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
    parser.add_argument("--blas-threads", type=int, default=BLAS_THREADS, help="BLAS and OpenMP threads")
    parser.add_argument("--out", type=Path, default=LOCK, help="where a full run writes its lock")
    parser.add_argument("--compare", type=Path, nargs="+", help="print these locks' figures side by side")
    args = parser.parse_args()
    if args.compare:
        print("\n".join(compare(args.compare)))
        return 0
    now = fingerprint()
    lock = json.loads(LOCK.read_text()) if LOCK.exists() else None
    scale, lines = decide(lock, now, args.full)
    if scale == "full":
        print(f"goal lock: {lines[0]}; running every slow goal in full", flush=True)
        return run_full(now, args.blas_threads, args.out)
    print(f"goal lock: the figures locked on {lock['written']} ({lock.get('machine')}):", flush=True)
    print("\n".join(figure_lines(lock["figures"])), flush=True)
    if lines:
        print("goal lock: the lock's figures miss their goals:\n  " + "\n  ".join(lines), flush=True)
        return 1
    print(
        f"goal lock: {len(now['files'])} files and {', '.join(PACKAGES)} as locked; "
        "its figures meet every goal. Smoke checks of each goal:",
        flush=True,
    )
    return _pytest("smoke", {}, args.blas_threads)


if __name__ == "__main__":
    sys.exit(main())
