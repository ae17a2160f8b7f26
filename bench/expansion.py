"""Grid expansion at 10^3, 10^4 and 10^5 trials: `load_spec` and the dry run's plan, side by
side, with the time per trial at each size (flat when expansion is linear).

    python bench/expansion.py
"""

import tempfile
import time
from pathlib import Path

import yaml

from orchestrator.run.plan import plan
from orchestrator.sweepfile import load_spec


def sweep_file(folder: Path, trials: int) -> Path:
    """objective 2 x data_size 100 x seeds: `trials` cells of the tiny model."""
    raw = {
        "name": f"grid{trials}",
        "grid": {
            "objective": ["ntp", "jepa_good"],
            "model": ["tiny"],
            "data_size": [f"{k}K" for k in range(1, 101)],
            "seed": list(range(trials // 200)),
        },
    }
    path = folder / f"grid{trials}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        per_trial = {}
        for trials in (1_000, 10_000, 100_000):
            path = sweep_file(Path(folder), trials)
            started = time.perf_counter()
            spec = load_spec(path)
            loaded = time.perf_counter()
            plan(spec, {})
            done = time.perf_counter()
            per_trial[trials] = (done - started) / trials
            print(
                f"{trials:>7,} trials: load_spec {loaded - started:6.2f} s, plan {done - loaded:6.2f} s, "
                f"{per_trial[trials] * 1e6:6.1f} us per trial"
            )
        print(f"per-trial time, 10^5 vs 10^3: {per_trial[100_000] / per_trial[1_000]:.2f}x (1.0 = linear)")


if __name__ == "__main__":
    main()
