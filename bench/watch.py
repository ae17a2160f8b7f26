"""What `orch status --watch` costs a sweep: the embedded sweep (at a smaller data size) run
alone and with a watch beside it, alternately, each on a fresh store; prints each wall time and
the ratio watched / alone. The watch refreshes every --every seconds and refits the claims at most
every --refit-every seconds, on the same cores as the trials.

    python bench/watch.py --data-size 8K --pairs 2 --every 2 --refit-every 10
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def sweep_file(folder: Path, data_size: str) -> Path:
    raw = yaml.safe_load((ROOT / "sweeps" / "goodview_vs_ntp.yaml").read_text())
    raw["grid"]["data_size"] = [data_size]
    raw["holdout"] = {"samples_above": "4K"}
    raw["claims"] = str(ROOT / "sweeps" / "claims" / "testbed.yaml")
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def run(folder: Path, sweep: Path, watch: list[str] | None) -> tuple[float, int]:
    """The sweep's wall seconds, and how many frames a watch beside it printed (0 without)."""
    store = f"sqlite:///{folder / 'orch.db'}"
    orch = [sys.executable, "-m", "orchestrator", "--store", store]
    started = time.perf_counter()
    driver = subprocess.Popen(
        [*orch, "sweep", str(sweep)], cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    watcher = None
    if watch is not None:
        while driver.poll() is None:  # the watch starts once the sweep is in the store
            probe = subprocess.run([*orch, "status", "--json"], cwd=folder, capture_output=True, text=True)
            if probe.returncode == 0 and '"running"' in probe.stdout:
                break
            time.sleep(1)
        command = [*orch, "status", "--watch", *watch]
        watcher = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, text=True)
    driver.wait()
    seconds = time.perf_counter() - started  # the sweep's own time: the watch's last frame comes after
    frames = watcher.communicate()[0].count("Curves:") if watcher else 0
    return seconds, frames


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-size", default="8K")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--every", default="2")
    parser.add_argument("--refit-every", default="10")
    args = parser.parse_args()
    watch = ["--every", args.every, "--refit-every", args.refit_every]
    alone, watched = [], []
    for pair in range(args.pairs):
        for label, times in (("alone", alone), ("watched", watched)):
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                seconds, frames = run(
                    folder, sweep_file(folder, args.data_size), watch if label == "watched" else None
                )
            times.append(seconds)
            shown = f", {frames} frames" if frames else ""
            print(f"pair {pair + 1} {label}: {seconds:.1f} s{shown}", flush=True)
    ratio = sum(watched) / sum(alone)
    print(
        f"sweep at {args.data_size}: alone {sum(alone) / len(alone):.1f} s, watched (--every {args.every} "
        f"--refit-every {args.refit_every}) {sum(watched) / len(watched):.1f} s; watched / alone {ratio:.3f}"
    )


if __name__ == "__main__":
    main()
