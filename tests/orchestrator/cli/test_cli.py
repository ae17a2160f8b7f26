"""The `orch` command line: exit codes, exact JSON, one-line errors.

`orch` runs a command in this process (`tests.cli`, click's CliRunner); `orch_process` in a real
subprocess, where a test is about the process itself."""

import json
import subprocess
import sys
import zipfile

import numpy as np
import psutil
import pytest
import yaml

from db import SCHEMA_VERSION, CheckpointReport, Store, TrialStatus
from tests.cli import ROOT, one_error_line, orch
from tests.rows import measurement, trial_row
from tests.stores import simulated_store


def orch_process(*args, cwd=None) -> subprocess.CompletedProcess:
    """`orch ARGS` as a real subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def strict_json(text: str):
    """JSON as the standard has it: NaN and Infinity are not JSON."""

    def refuse(constant):
        raise AssertionError(f"{constant} in JSON output")

    return json.loads(text, parse_constant=refuse)


def test_version_and_help():
    assert orch_process("--version").stdout.startswith("orch, version ")
    help_text = orch_process("--help").stdout
    for command in ("sweep", "status", "fit", "align", "baselines"):
        assert command in help_text


def test_dry_run_json_lists_trials_and_totals(tmp_path):
    result = orch(
        "--store",
        f"sqlite:///{tmp_path / 'o.db'}",
        "sweep",
        str(ROOT / "sweeps/goodview_vs_ntp.yaml"),
        "--dry-run",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["sweep"] == "goodview_vs_ntp"
    assert set(payload["totals"]) == {
        "trials",
        "samples",
        "flops_est",
        "gpu_hours_est",
        "by_state",
        "packing",
    }
    assert payload["totals"]["gpu_hours_est"] is None  # the embedded sweep trains on CPUs
    assert payload["totals"]["trials"] == 9 and payload["totals"]["by_state"] == {"new": 9}
    assert payload["totals"]["samples"] == 3 * 3 * 64000  # one 64K run per objective and seed
    first = payload["trials"][0]
    expected = {
        "objective",
        "model",
        "n_params_est",
        "data_size",
        "seed",
        "recipe",
        "samples",
        "flops_est",
        "workers",
        "gpus",
        "gpu_hours_est",
        "wall_hours_est",
        "held_out",
        "pack",
        "key",
        "state",
    }
    assert set(first) == expected
    assert not (tmp_path / "o.db").exists()  # a dry run creates no store


def test_paper_grid_dry_run(tmp_path):
    result = orch(
        "--store",
        f"sqlite:///{tmp_path / 'o.db'}",
        "sweep",
        str(ROOT / "sweeps/goodview_vs_ntp_paper.yaml"),
        "--dry-run",
    )
    assert result.returncode == 0, result.stderr
    assert "342 trials" in result.stdout and "109M" in result.stdout and "900M" in result.stdout
    assert "design check of the claims (" in result.stdout
    assert "): every claim can be decided\n" in result.stdout
    assert "NEVER" not in result.stdout and "weak" not in result.stdout


def test_the_design_check_names_the_faults_of_the_paper_sweep_as_wave_3_shipped_it(tmp_path):
    """900M held out for NTP: the laws never see the level the 42x is read at; 12 held-out cells:
    the forecast claim's 0.8 bar is out of reach even at 12 of 12. --strict refuses it, and so
    does `orch check --design`, before anything runs."""
    old = str(ROOT / "tests" / "data" / "paper_sweep_v1.yaml")
    store = ("--store", f"sqlite:///{tmp_path / 'o.db'}")
    shown = orch(*store, "sweep", old, "--dry-run")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "1 of 14 claims can never be decided by this design; 1 only on weaker evidence" in shown.stdout
    (forecast,) = [line for line in lines if line.startswith("  law_forecasts: never: ")]
    assert "12 held-out cells" in forecast and "0.735, below the claimed 0.8" in forecast
    assert "hold out 17 cells at least" in forecast
    (gap,) = [line for line in lines if line.startswith("  gap_42x: weak: ")]
    assert "ntp/base's level at 900M, outside its fitted sizes (largest 260M; 900M is held out)" in gap
    assert "take 900M out of holdout for ntp/base" in gap
    strict = (
        ("sweep", old, "--dry-run", "--strict"),
        ("sweep", old, "--strict"),
        ("check", "--design", old, "--strict"),
    )
    for command in strict:
        refused = orch(*store, *command)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert "claim law_forecasts: the design can never decide it: 12 held-out cells" in refused.stderr
    assert not (tmp_path / "o.db").exists()
    payload = json.loads(orch("check", "--design", old, "--json").stdout)
    assert {c["claim"] for c in payload["design"] if not c["decidable"]} == {"law_forecasts"}


def test_a_dry_run_gives_each_trials_workers_and_the_plans_gpu_hours_and_makespan(tmp_path):
    """The paper's grid with its BERT-B cells on 8 GPUs each, planned on a 64-GPU cluster."""
    text = (ROOT / "sweeps/goodview_vs_ntp_paper.yaml").read_text()
    eight = text.replace(
        "resources: {cpu: 4, gpu: 1}", "resources: {cpu: 4, gpu: 1, model: {base: {workers: 8}}}"
    )
    assert eight != text
    sweep = tmp_path / "paper.yaml"
    sweep.write_text(eight.replace("claims: claims/jepa_prh.yaml", ""))
    args = (
        "--store",
        f"sqlite:///{tmp_path / 'o.db'}",
        "sweep",
        str(sweep),
        "--dry-run",
        "--cluster-gpus",
        "64",
    )
    payload = json.loads(orch(*args, "--json").stdout)
    workers = {row["model"]: row["workers"] for row in payload["trials"]}
    assert workers == {"33M": 1, "base": 8}
    totals = payload["totals"]
    hours = {(r["model"], r["data_size"], r["objective"]): r["wall_hours_est"] for r in payload["trials"]}
    # 40% of 989 TFLOP/s: a 900M NTP trial of the BERT-B shape (one sequence of 64 positions a
    # sample: its two captions joined) is about 27 hours on one GPU
    assert 24 < hours[("base", 900_000_000, "ntp")] * 8 < 29
    gpu_hours = sum(r["gpu_hours_est"] for r in payload["trials"])
    assert totals["gpu_hours_est"] == pytest.approx(gpu_hours)
    assert totals["makespan_floor_hours"] == pytest.approx(max(max(hours.values()), gpu_hours / 64))
    assert (
        totals["makespan_floor_hours"] <= totals["makespan_hours_est"] < 1.2 * totals["makespan_floor_hours"]
    )
    text_out = orch(*args).stdout
    assert f"~{gpu_hours:,.0f} GPU-hours (at 40% of 989 TFLOP/s a GPU" in text_out
    assert "on 64 GPUs: ~" in text_out and "with the longest trials started first" in text_out


def test_a_dry_run_shows_which_trials_share_a_pack_and_the_rates_it_estimated_them_from(tmp_path):
    """The embedded grid at 2K-8K: 27 short trials packed into processes by the assumed rate;
    once the store has measured a slow rate for each objective, none is short enough."""
    raw = yaml.safe_load((ROOT / "sweeps/goodview_vs_ntp.yaml").read_text())
    raw["grid"]["data_size"] = ["2K", "4K", "8K"]
    for only_the_full_sweep in ("claims", "holdout", "store"):
        raw.pop(only_the_full_sweep, None)
    sweep = tmp_path / "small.yaml"
    sweep.write_text(yaml.safe_dump(raw))
    url = f"sqlite:///{tmp_path / 'o.db'}"
    args = ("--store", url, "sweep", str(sweep), "--dry-run", "--num-cpus", "2")
    payload = json.loads(orch(*args, "--json").stdout)
    packing, packs = payload["totals"]["packing"], [row["pack"] for row in payload["trials"]]
    assert packing["packed"] == 27 and packing["rates"] == "assumed"
    assert packing["packs"] >= 2 and sorted(set(packs)) == list(range(1, packing["packs"] + 1))
    sizes = [packs.count(number) for number in range(1, packing["packs"] + 1)]
    assert max(sizes) - min(sizes) <= 2  # dealt out evenly, longest first
    text = orch(*args).stdout
    assert "27 of the 27 trials to run are estimated under 60 s (at an assumed rate: the store" in text
    assert f"run in {packing['packs']} packs, one process each" in text
    unpacked = json.loads(orch(*args, "--no-pack", "--json").stdout)
    assert {row["pack"] for row in unpacked["trials"]} == {None}
    assert "every trial runs in a process of its own" in orch(*args, "--no-pack").stdout
    assert "decided when the sweep runs" in orch(*args, "--address", "auto").stdout

    store = Store.open(url)  # one done 8K trial per objective, at 100 FLOP/s: every trial is long
    objectives = ("jepa_good", "jepa_bad", "ntp")
    rows = [trial_row(o.ljust(64, "0"), objective=o, data_size=8000, budget_samples=8000) for o in objectives]
    store.record_sweep("earlier", "name: earlier", "h", "e.yaml", rows)
    for row in rows:
        store.set_status(row.key, TrialStatus.RUNNING)
        loss = measurement(row.key, 8000, metric="train_loss", reference="", flops=1e6, wall_s=1e4)
        store.record_checkpoint(CheckpointReport(row.key, 8000, "done", None, 1e4, "h", "cpu", (loss,)))
        store.set_status(row.key, TrialStatus.DONE)
    measured = json.loads(orch(*args, "--json").stdout)["totals"]["packing"]
    assert measured == {"packs": 0, "packed": 0, "rates": "measured"}
    assert "no trial to run is estimated under 60 s (from the store's measured" in orch(*args).stdout


def test_status_on_empty_and_filled_store(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    missing = orch("--store", url, "status", "--json")
    assert missing.returncode == 2 and "does not exist (run 'orch sweep FILE' first)" in missing.stderr
    assert not (tmp_path / "o.db").exists()
    store = Store.open(url)
    empty = orch("--store", url, "status", "--json")
    assert empty.returncode == 0 and json.loads(empty.stdout) == {"store": url, "sweeps": []}
    rows = [trial_row("k" * 64), trial_row("p" * 64, seed=1)]  # one running, one still pending
    store.record_sweep("s", "name: s", "h", "s.yaml", rows)
    store.set_status("k" * 64, "running", host="h", device="cpu")
    store.record_checkpoint(CheckpointReport("k" * 64, 1000, "running", None, 123, "h", "cpu", ()))
    filled = json.loads(orch("--store", url, "status", "--json").stdout)
    (sweep,) = filled["sweeps"]
    assert sweep["totals"] == {
        "trials": 2,
        "by_status": {"pending": 1, "running": 1},
        "samples_seen": 1000,
        "budget_samples": 8000,
        "progress": 0.125,
    }
    running, pending = sweep["trials"]
    assert (running["status"], running["attempts"], running["n_params"], running["progress"]) == (
        "running",
        1,
        123,
        0.25,
    )
    assert (pending["status"], pending["n_params"]) == ("pending", None)
    missing = orch("--store", url, "status", "nope")
    assert "sweep 'nope' is not in" in one_error_line(missing)


def test_password_never_printed():
    result = orch("--store", "postgresql+psycopg://orch:s3cret@127.0.0.1:1/x", "status")
    line = one_error_line(result, code=1)
    assert "s3cret" not in result.stderr + result.stdout and "orch:***@127.0.0.1" in line


def test_align_scores_files_and_rejects_broken_ones(tmp_path):
    rng = np.random.default_rng(0)
    latent = rng.normal(size=(200, 8))
    np.save(tmp_path / "a.npy", latent @ rng.normal(size=(8, 16)))
    np.savez(tmp_path / "b.npz", early=rng.normal(size=(200, 12)), late=latent @ rng.normal(size=(8, 12)))
    result = orch(
        "align",
        str(tmp_path / "a.npy"),
        str(tmp_path / "b.npz"),
        "--metric",
        "mutual_knn@10",
        "--metric",
        "cka",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    scores = {row["metric"]: row for row in json.loads(result.stdout)["scores"]}
    assert scores["mutual_knn@10"]["layer_b"] == "late" and scores["cka"]["value"] > 0.5
    np.save(tmp_path / "short.npy", rng.normal(size=(150, 16)))
    nan = rng.normal(size=(200, 16))
    nan[5, 5] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    np.save(tmp_path / "flat.npy", rng.normal(size=200))
    (tmp_path / "junk.npy").write_text("not numpy")
    (tmp_path / "empty.npy").write_bytes(b"")
    np.save(tmp_path / "no_rows.npy", np.zeros((0, 16)))
    np.save(tmp_path / "no_width.npy", np.zeros((200, 0)))
    np.save(tmp_path / "complex.npy", rng.normal(size=(200, 16)) * (1 + 1j))
    np.save(tmp_path / "text.npy", np.full((200, 16), "x"))
    np.save(tmp_path / "bool.npy", np.ones((200, 16), dtype=bool))
    np.savez(tmp_path / "pickled.npz", layer=np.array([{"a": 1}] * 200, dtype=object))
    with zipfile.ZipFile(tmp_path / "zip.npz", "w") as archive:
        archive.writestr("readme.txt", "not an array")
    cases = {
        "short.npy": "rows must be paired",
        "nan.npy": "NaN",
        "flat.npy": "not rows x width",
        "junk.npy": "not a feature file",
        "empty.npy": "not a feature file",
        "no_rows.npy": "0 rows x 16 columns (need 2+ rows, 1+ column)",
        "no_width.npy": "200 rows x 0 columns",
        "complex.npy": "complex values",
        "text.npy": "dtype <U1 is not numeric",
        "bool.npy": "dtype bool is not numeric",
        "pickled.npz": "not a feature file (Object arrays cannot be loaded when allow_pickle=False)",
        "zip.npz": "not a feature file",
    }
    for name, message in cases.items():
        line = one_error_line(orch("align", str(tmp_path / "a.npy"), str(tmp_path / name)))
        assert name in line and message in line
    bad_metric = orch("align", str(tmp_path / "a.npy"), str(tmp_path / "a.npy"), "--metric", "mutal_knn@10")
    assert "not a metric" in one_error_line(bad_metric)


def test_published_table_imports_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    first = orch("--store", url, "baselines", "import", str(ROOT / "sweeps/published/jepa_prh.csv"))
    assert first.returncode == 0 and "22 of 22 rows added" in first.stderr
    again = orch("--store", url, "baselines", "import", str(ROOT / "sweeps/published/jepa_prh.csv"))
    assert "0 of 22 rows added" in again.stderr
    frame = Store.open(url).baselines_frame()
    assert frame.source.str.startswith("arXiv 2610.39302 v1").all()
    row = frame[(frame.model == "NTP 109M") & frame.samples.notna()].iloc[0]
    assert (row.samples, row.value) == (900e6, 0.111)
    qwen = frame[(frame.model == "Qwen2.5-72B") & (frame.metric == "mutual_knn@10")].iloc[0]
    assert qwen.se == pytest.approx((0.154 * 0.846 / 10240) ** 0.5, abs=5e-5)  # binomial, 1,024 x 10
    assert "se estimated" in qwen.note and frame[frame.metric == "cka"].se.isna().all()
    bad = tmp_path / "bad.csv"
    bad.write_text("source,model,objective,metric,reference,eval_set,samples,value\nx,m,o,k,r,e,12Q,0.1\n")
    assert "bad.csv:2: samples: '12Q' is not a size" in one_error_line(
        orch("--store", url, "baselines", "import", str(bad))
    )


def test_fit_end_to_end_on_a_store(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    simulated_store(url)
    args = (
        "--store",
        url,
        "fit",
        "--predict",
        "900M",
        "--gap",
        "jepa_good:ntp",
        "--out",
        str(tmp_path / "reports"),
        "--json",
    )
    result = orch(*args)
    assert result.returncode == 0, result.stderr
    payload = strict_json(result.stdout)
    assert {(f["objective"], f["reference"]) for f in payload["fits"]} == {
        ("jepa_good", "dino"),
        ("ntp", "dino"),
    }
    good = next(f for f in payload["fits"] if f["objective"] == "jepa_good")
    assert good["random_init"] == pytest.approx(0.03, abs=0.005)
    assert [h["samples"] for h in good["held_out"]] == [145_000 * 2**7]
    assert {f["samples"] for f in good["forecasts"]} == {900e6, 145_000 * 2**7}
    assert payload["calibration"]["held_out_cells"] == 2
    (gap,) = payload["gaps"]
    assert gap["ci"][0] <= 42 <= gap["ci"][1] and gap["identifiable"]
    assert set(gap) >= {"ratio", "ci", "identifiable", "reasons", "flags", "bound"}
    assert "SAMPLES_NOT_FLOPS" in gap["flags"]
    report = tmp_path / "reports" / "sim" / payload["fit_id"]
    assert (report / "report.md").exists() and (report / "scaling_base_dino.png").exists()
    assert any(p.name.startswith("gap_0") for p in report.glob("*.png"))
    again = json.loads(orch(*args).stdout)
    assert again["fit_id"] != payload["fit_id"] and report.exists()
    assert again["earlier_forecasts"] == []  # the same cells held out again: scored once, in held_out
    text = orch(*args[:-1]).stdout
    assert "Sample gaps" in text and "Held-out cells" not in text  # the short summary
    assert "Held-out cells" in orch(*args[:-1], "--detail").stdout


def test_fit_without_sweeps_is_bad_input(tmp_path):
    line = one_error_line(orch("--store", f"sqlite:///{tmp_path / 'o.db'}", "fit"))
    assert "does not exist" in line


def test_gap_against_a_single_checkpoint(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    simulated_store(url, ntp_sizes=1)
    result = orch("--store", url, "fit", "--gap", "jepa_good:ntp", "--out", str(tmp_path / "r"), "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert [f["objective"] for f in payload["fits"]] == ["jepa_good"]
    (gap,) = payload["gaps"]
    assert "B_SINGLE_CHECKPOINT" in gap["flags"] and gap["samples_b"] == 145_000 * 2**6
    assert gap["ci"][0] <= 42 <= gap["ci"][1] and gap["identifiable"]
    assert set(gap) >= {"ratio", "ci", "identifiable", "reasons", "flags", "bound"}
    assert any(line.startswith("ntp/base/") for line in payload["skipped"])


def test_an_old_store_is_refused_until_db_upgrade_upgrades_it(tmp_path):
    copy = tmp_path / "schema1.db"
    copy.write_bytes((ROOT / "tests" / "db" / "stores" / "schema1.db").read_bytes())
    url = f"sqlite:///{copy}"
    refused = orch("--store", url, "status")
    assert refused.returncode == 1
    assert f"run 'orch --store {url} db upgrade'" in one_error_line(refused, code=1)
    upgraded = orch("--store", url, "db", "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stderr.strip() == f"store {url} upgraded from schema 1 to {SCHEMA_VERSION}"
    status = orch("--store", url, "status", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["sweeps"][0]["name"] == "first"
    again = orch("--store", url, "db", "upgrade")
    assert again.stderr.strip() == f"store {url} is already at schema {SCHEMA_VERSION}"


def test_fit_json_is_standard_json_when_a_score_is_infinite(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    simulated_store(url)
    # Three fitted sizes: only the power law (2 parameters) is a law, and it has no finite AICc.
    args = ("--store", url, "fit", "--min-samples", "2320K", "--out", str(tmp_path / "r"), "--json")
    result = orch(*args)
    assert result.returncode == 0, result.stderr
    fits = strict_json(result.stdout)["fits"]
    assert {f["law"] for f in fits} == {"power"}
    assert all(f["laws"]["power"]["aicc"] is None and f["weights"] == {"power": 1.0} for f in fits)


def test_align_says_what_it_is_scoring_while_a_metric_takes_long(tmp_path, monkeypatch):
    monkeypatch.setattr("orchestrator.cli.heartbeat.HEARTBEAT_S", 0.05)
    monkeypatch.setattr("orchestrator.features.LONG_S", 0.0)
    np.save(tmp_path / "a.npy", np.random.default_rng(1).normal(size=(12_000, 8)))
    result = orch("align", "a.npy", "a.npy", "--metric", "mutual_knn@10", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    said = result.stderr.splitlines()
    assert any(
        line.startswith("orch: scoring mutual_knn@10 on 12,000 rows over 1 layer pair (") for line in said
    )
    assert said[-1].startswith("orch: mutual_knn@10: 1 (")  # and when it ends


def test_a_command_run_twice_in_one_process_answers_alike_and_leaves_no_store_open(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    simulated_store(url).close()
    first, second = (orch("--store", url, "status", "--json") for _ in range(2))
    assert first.returncode == second.returncode == 0 and first.stdout == second.stdout
    held = [f.path for f in psutil.Process().open_files() if f.path.startswith(str(tmp_path / "o.db"))]
    assert held == []  # the command's engine was disposed of as it ended
