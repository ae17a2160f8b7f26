"""`orch import`: runs orch did not train, checked row by row, recorded once, fitted and judged
like a sweep's; `orch export` of a real sweep imports back to the same rows and fits."""

import json

import numpy as np
import pandas as pd
import pytest

from db import TRAINING_ROWS, Store
from fits.curve.laws import saturating
from orchestrator.imports import COLUMNS
from orchestrator.sweepfile.claims import load_claims
from tests.cli import ROOT, one_error_line, orch
from tests.rows import import_row
from tests.stores import simulated_store
from tests.swept import SWEEP

PAPER_SIZES = ["145K", "506K", "1.77M", "6.18M", "21.6M", "75M", "260M", "900M"]
NUMBERS = [145e3, 506e3, 1.77e6, 6.18e6, 21.6e6, 75e6, 260e6, 900e6]


def paper_curves(path, slowdowns=None) -> str:
    """The preprint's design, planted: jepa_good, then ntp 42x slower and jepa_bad 400x slower
    than it, for 33M and base, 3 seeds, each run's final checkpoint, as a released log would be."""
    rng = np.random.default_rng(0)
    slowdowns = slowdowns or {"jepa_good": 1.0, "ntp": 42.0, "jepa_bad": 400.0}
    truth = {"33M": (0.16, 0.066, 0.25), "base": (0.2, 0.082, 0.25)}  # a_inf, b, alpha: a third up at 145K
    rows = []
    for model, (a_inf, b, alpha) in truth.items():
        for objective, slow in slowdowns.items():
            for size, number in zip(PAPER_SIZES, NUMBERS, strict=True):
                for seed in range(3):
                    value = saturating(number / slow, a_inf, b, alpha) + rng.normal(0, 0.003)
                    rows.append(import_row(objective, model, size, seed, value))
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(path, index=False)
    return str(path)


def test_the_preprints_claims_on_imported_planted_curves_get_a_verdict_each(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    logs = paper_curves(tmp_path / "logs.csv")
    claims = str(ROOT / "sweeps" / "claims" / "jepa_prh.yaml")
    imported = orch(
        "--store", url, "import", logs, "--sweep", "paper", "--holdout-above", "300M", "--claims", claims
    )
    assert imported.returncode == 0, imported.stderr
    assert "paper: 144 of 144 trials and 144 of 144 rows added" in imported.stderr
    again = orch(
        "--store", url, "import", logs, "--sweep", "paper", "--holdout-above", "300M", "--claims", claims
    )
    assert "0 of 144 trials and 0 of 144 rows added" in again.stderr
    # runs added to the sweep without --claims: it keeps the claims it is checked against
    added = orch("--store", url, "import", logs, "--sweep", "paper", "--holdout-above", "300M")
    assert "0 of 144 trials and 0 of 144 rows added" in added.stderr
    result = orch("--store", url, "check", "paper", "--json")
    assert result.returncode == 0, result.stderr
    verdicts = {v["id"]: v for v in json.loads(result.stdout)["verdicts"]}
    assert set(verdicts) == {claim.id for claim in load_claims(claims)}
    gap = verdicts["gap_42x"]  # planted 42x; its interval reaches just below the claimed 21x here
    assert gap["interval"][0] <= 42 <= gap["interval"][1] and gap["verdict"] != "contradicted"
    assert "the seed means' gap" in gap["basis"]  # NTP's 900M cells are held out of its laws
    assert verdicts["good_above_ntp"]["verdict"] == verdicts["ntp_above_bad"]["verdict"] == "supported"
    assert all(v["reasons"] is not None and v["basis"] for v in verdicts.values())
    fit = orch("--store", url, "fit", "--out", str(tmp_path / "r"))
    assert fit.returncode == 0, fit.stderr
    assert fit.stdout.startswith("Claims (mutual_knn@10)") and "gap_42x" in fit.stdout
    page = (tmp_path / "r" / "paper" / "latest" / "report.html").read_text()
    on_the_fitted_metric = {claim.id for claim in load_claims(claims) if claim.metric is None}
    assert all(f"<td>{claim}</td>" in page for claim in on_the_fitted_metric)


# what names where a row lives, not what was measured: an import keys its trials by its own
# sweep, made them now, on no host
WHERE = ["key", "trial_key", "sweep", "config", "host", "device", "created", "started", "finished", "updated"]
TRIAL = ["objective", "model", "data_size", "seed"]
CELL = ["samples_seen", "metric", "reference", "eval_set"]


def test_a_real_sweeps_export_imports_back_with_every_row_equal(swept, tmp_path):
    """`orch export` of a real 2-trial sweep, imported into a new store and exported again: every
    measurement and every trial the same, row for row and column for column but where each lives,
    for every row kind a trial writes (a kind that did not round-trip would be missing or
    changed here)."""
    again = f"sqlite:///{tmp_path / 'again.db'}"
    assert orch("--store", swept, "export", SWEEP, "--out", str(tmp_path / "x")).returncode == 0
    imported = orch("--store", again, "import", str(tmp_path / "x" / "measurements.csv"), "--sweep", "again")
    assert imported.returncode == 0, imported.stderr
    assert orch("--store", again, "export", "again", "--out", str(tmp_path / "y")).returncode == 0
    for table, order in (("measurements", [*TRIAL, *CELL]), ("trials", TRIAL)):
        before, after = (
            pd.read_csv(tmp_path / f / f"{table}.csv", keep_default_na=False) for f in ("x", "y")
        )
        kept = [c for c in before.columns if c not in WHERE]
        assert list(after.columns) == list(before.columns) and len(before) > 0
        ordered = [frame[kept].sort_values(order).reset_index(drop=True) for frame in (before, after)]
        pd.testing.assert_frame_equal(*ordered)
    metrics = set(pd.read_csv(tmp_path / "y" / "measurements.csv").metric)
    assert {"mutual_knn@10", "mutual_knn@10/layer0", *TRAINING_ROWS} <= metrics


def test_an_exported_planted_sweep_imports_back_to_the_same_fits(tmp_path):
    """The same round trip on a planted sweep with laws to fit (its row kinds are a real sweep's:
    `tests/test_stores.py`): the import reads the same design, so the same fits."""
    url = f"sqlite:///{tmp_path / 'o.db'}"
    simulated_store(url).close()
    assert orch("--store", url, "export", "--out", str(tmp_path / "x")).returncode == 0
    imported = orch("--store", url, "import", str(tmp_path / "x" / "measurements.csv"), "--sweep", "again")
    assert imported.returncode == 0, imported.stderr
    fits = {}
    for sweep in ("sim", "again"):
        result = orch("--store", url, "fit", sweep, "--json", "--out", str(tmp_path / "r"))
        fits[sweep] = {
            (f["objective"], f["law"]): f["laws"][f["law"]]["params"]
            for f in json.loads(result.stdout)["fits"]
        }
    assert fits["sim"].keys() == fits["again"].keys() and fits["sim"]
    for key, params in fits["sim"].items():
        assert fits["again"][key] == pytest.approx(params, rel=1e-6)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"seed": "x"}, "row 3: seed 'x' is not a number"),
        ({"samples_seen": "2M"}, "row 3: samples_seen 2M is past the run's 1M"),
        ({"value": "nan"}, "row 3: value 'nan' is not a finite number"),
        ({"metric": "mutual_knn@"}, "row 3: metric 'mutual_knn@'"),
        ({"objective": ""}, "row 3: objective is empty"),
        ({"seed": "1e300"}, "row 3: seed '1e300' is not a whole number from 0 to 2147483647"),
        ({"model": "base\x07"}, "row 3: model holds a control character (U+0007)"),
        ({"flops": "nan"}, "row 3: flops 'nan' is not a finite non-negative number"),
        ({"data_size": "1e30"}, "row 3: data_size '1e30' is not a sample count"),
    ],
)
def test_a_bad_row_is_named_and_nothing_is_imported(tmp_path, row, expected):
    good = {"objective": "ntp", "model": "base", "data_size": "1M", "seed": "0", "samples_seen": "1M"}
    good |= {"metric": "mutual_knn@10", "reference": "dino", "eval_set": "wit", "value": "0.1"}
    path = tmp_path / "runs.csv"
    pd.DataFrame([good, good | {"seed": "1"} | row]).to_csv(path, index=False)
    url = f"sqlite:///{tmp_path / 'o.db'}"
    line = one_error_line(orch("--store", url, "import", str(path), "--sweep", "s"))
    assert expected in line and line.endswith("nothing was imported")
    assert not (tmp_path / "o.db").exists()


def test_a_sweep_orch_ran_is_not_overwritten_by_an_import(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    simulated_store(url).close()
    logs = paper_curves(tmp_path / "logs.csv")
    line = one_error_line(orch("--store", url, "import", logs, "--sweep", "sim"))
    assert "sweep sim in" in line and "was run by orch sweep: import under another --sweep" in line
    assert len(Store.open(url).trials_frame("sim")) == 48


def test_a_changed_file_under_an_imported_sweep_is_refused_naming_its_rows(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    logs = tmp_path / "logs.csv"
    paper_curves(logs)
    assert orch("--store", url, "import", str(logs), "--sweep", "paper").returncode == 0
    recorded = Store.open(url).find_sweep("paper").spec_text
    frame = pd.read_csv(logs)
    frame.assign(value=frame.value.where(frame.index != 4, 0.5)).to_csv(logs, index=False)
    line = one_error_line(orch("--store", url, "import", str(logs), "--sweep", "paper"))
    assert "logs.csv: 1 row(s) change values already imported (row 6: stored" in line and "file 0.5)" in line
    assert Store.open(url).find_sweep("paper").spec_text == recorded  # the record names the file it holds
    pd.concat([frame, frame.iloc[[4]].assign(seed=7, value=0.5)]).to_csv(logs, index=False)  # a run added
    added = orch("--store", url, "import", str(logs), "--sweep", "paper")
    assert added.returncode == 0 and "1 of 145 trials and 1 of 145 rows added" in added.stderr, added.stderr


def test_export_neutralises_formulas_and_import_takes_the_quote_off_again(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    formula = '=HYPERLINK("http://evil.example","open")'
    row = {"objective": "ntp", "model": formula, "data_size": "1M", "seed": "0", "samples_seen": "1M"}
    row |= {"metric": "mutual_knn@10", "reference": "@dino", "eval_set": "-wit", "value": "-0.1"}
    pd.DataFrame([row]).to_csv(tmp_path / "runs.csv", index=False)
    assert orch("--store", url, "import", str(tmp_path / "runs.csv"), "--sweep", "s").returncode == 0
    assert orch("--store", url, "export", "s", "--out", str(tmp_path / "x")).returncode == 0
    exported = pd.read_csv(tmp_path / "x" / "measurements.csv", dtype=str).iloc[0]
    assert (exported.model, exported.reference, exported.eval_set) == (f"'{formula}", "'@dino", "'-wit")
    assert exported.value == "-0.1"  # numbers stay numbers
    assert (
        orch("--store", url, "import", str(tmp_path / "x" / "measurements.csv"), "--sweep", "t").returncode
        == 0
    )
    assert set(Store.open(url).measurements_frame("t").model) == {formula}


def test_a_command_reading_the_newest_of_several_sweeps_names_it_first(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    simulated_store(url).close()
    assert (
        orch("--store", url, "import", paper_curves(tmp_path / "logs.csv"), "--sweep", "paper").returncode
        == 0
    )
    for command in (["check"], ["fit", "--out", str(tmp_path / "r")], ["next"], ["export", "--out", "x"]):
        result = orch("--store", url, *command, cwd=tmp_path)
        first = result.stderr.splitlines()[0]
        assert first == f"orch: sweep paper: the newest of 2 in {url} (name one: sim, paper)", result.stderr
    assert "the newest" not in orch("--store", url, "check", "sim").stderr
