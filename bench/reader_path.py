"""The reader's path, replayed through `orch` itself: the preprint's four published points
imported as sweep `paper`, then rounds of `orch next --claim gap_42x --template
sweeps/goodview_vs_ntp_paper.yaml --write`, each round's picks given planted results (a truth
plus seed noise) and imported back into `paper` as the written file's header says, until
`orch check` decides `gap_42x` or the rounds run out. It prints each look's verdict, interval
and the GPU-hours the picks cost at the template's FLOPs model, and ends with one JSON line.

The truth: JEPA at 109M reaches a(N) = 0.13 - 0.08 (N / 1e5)^-0.25 (0.109 at 21.6M, as
published); NTP is JEPA slowed by --factor (41.7: the claim is true; 10: it is false). The
33M points keep their published values (gap_42x does not read them).

    python bench/reader_path.py --factor 41.7 --rounds 8
    python bench/reader_path.py --factor 10 --rounds 8 --seed 1
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from orchestrator.imports import COLUMNS

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = str(ROOT / "sweeps" / "claims" / "jepa_prh.yaml")
TEMPLATE = str(ROOT / "sweeps" / "goodview_vs_ntp_paper.yaml")
PUBLISHED = [  # (objective, model, samples, seed, value or None: the truth's)
    ("jepa_good", "base", 21.6e6, 0, None),
    ("ntp", "base", 900e6, 0, None),
    ("jepa_good", "33M", 21.6e6, 0, 0.108),
    ("ntp", "33M", 21.6e6, 0, 0.071),
]
CORRECT = {True: "supported", False: "contradicted"}


def jepa(samples: float) -> float:
    return 0.13 - 0.08 * (samples / 1e5) ** -0.25


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--factor", type=float, default=41.7, help="NTP's true slowing (the claim: 42x, x2)")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sigma", type=float, default=0.003, help="seed noise, also each point's SE")
    asked = parser.parse_args()
    rng = np.random.default_rng(asked.seed)
    truth = {"jepa_good": jepa, "ntp": lambda samples: jepa(samples / asked.factor)}
    with tempfile.TemporaryDirectory() as folder:
        orch = _orch(Path(folder))
        start = [(o, m, n, s, v if v is not None else truth[o](n)) for o, m, n, s, v in PUBLISHED]
        _land(orch, Path(folder) / "start.csv", start, asked.sigma, rng)
        hours, verdict = 0.0, {}
        for look in range(asked.rounds + 1):
            verdict = _gap_verdict(orch)
            print(
                f"look {look}: {verdict['verdict']} {verdict['interval']} after {hours:.1f} GPU-hours",
                flush=True,
            )
            if verdict["verdict"] != "inconclusive" or look == asked.rounds:
                break
            cells, cost = _next_round(orch, Path(folder) / f"round{look}.yaml")
            hours += cost
            print("  picks: " + ", ".join(f"{o}/{m} at {n:.3g} seed {s}" for o, m, n, s in cells), flush=True)
            runs = [(o, m, n, s, truth[o](n)) for o, m, n, s in cells]
            _land(orch, Path(folder) / f"round{look}.csv", runs, asked.sigma, rng)
    true_claim = 21 <= asked.factor <= 84
    outcome = "decided correctly" if verdict["verdict"] == CORRECT[true_claim] else verdict["verdict"]
    if verdict["verdict"] == CORRECT[not true_claim]:
        outcome = "WRONG"
    print(
        json.dumps(
            {
                "factor": asked.factor,
                "seed": asked.seed,
                "looks": look,
                "gpu_hours": round(hours, 1),
                "verdict": verdict["verdict"],
                "interval": verdict["interval"],
                "outcome": outcome,
            }
        )
    )


def _orch(folder: Path):
    url = f"sqlite:///{folder / 'paper.db'}"

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "orchestrator", "--store", url, *args],
            capture_output=True,
            text=True,
            cwd=folder,
        )
        if done.returncode != 0:
            sys.exit(f"orch {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    return run


def _land(orch, path: Path, runs: list, sigma: float, rng: np.random.Generator) -> None:
    """The runs' results (value plus seed noise, with `sigma` as their SE) imported into `paper`."""
    rows = [
        [o, m, int(n), s, int(n), "mutual_knn@10", "dinov2_vitb", "wit-1024", v + rng.normal(0, sigma)]
        for o, m, n, s, v in runs
    ]
    pd.DataFrame(rows, columns=list(COLUMNS)).assign(se=sigma).to_csv(path, index=False)
    orch("import", str(path), "--sweep", "paper")


def _gap_verdict(orch) -> dict:
    verdicts = json.loads(orch("check", CLAIMS, "paper", "--json"))["verdicts"]
    return next(v for v in verdicts if v["id"] == "gap_42x")


def _next_round(orch, path: Path) -> tuple[list[tuple[str, str, float, int]], float]:
    """orch next's picks for gap_42x, written with the template: (cells, their GPU-hours)."""
    plan = json.loads(
        orch(
            "next",
            CLAIMS,
            "paper",
            "--claim",
            "gap_42x",
            "--template",
            TEMPLATE,
            "--write",
            str(path),
            "--json",
        )
    )["plans"][0]
    raw = yaml.safe_load(path.read_text())
    first = {axis: values[0] for axis, values in raw["grid"].items()}
    cells = [
        (c["objective"], c["model"], float(c["data_size"]), c["seed"])
        for c in [first, *raw.get("include", [])]
    ]
    return cells, plan["gpu_hours"] or 0.0


if __name__ == "__main__":
    main()
