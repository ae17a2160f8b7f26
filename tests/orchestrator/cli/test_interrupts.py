"""A fit is stored and reported whole, or not at all: SIGTERM and Ctrl-C during `orch fit` and
`orch export` exit 130 and leave no report folder, no partial file and no fit run; a report
folder that cannot be written is refused before any fitting."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from db import Store
from tests.rows import measurement, trial_row
from tests.stores import simulated_store

pytestmark = pytest.mark.processes  # real `orch` processes, signalled


def start(folder: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "--store", f"sqlite:///{folder / 'orch.db'}", *args],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
    )


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if not p.name.startswith("orch.db")}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_fit_exits_130_with_no_report_and_no_rows(tmp_path, signum):
    simulated_store(f"sqlite:///{tmp_path / 'orch.db'}").close()
    before = files(tmp_path)
    # 10,000 refits a law (the most --bootstrap allows): about 9.5 s in all on 2 cores, where 4000
    # took 6.5-7.3 s and once finished before a signal sent at 6 s
    fitting = start(tmp_path, "fit", "--bootstrap", "10000", "--predict", "900M", "--out", "reports")
    time.sleep(4)  # past start-up (about 2 s) and the option checks: the fit is running
    assert fitting.poll() is None, fitting.communicate()
    fitting.send_signal(signum)
    _, stderr = fitting.communicate(timeout=60)
    assert fitting.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "orch: interrupted" and "Traceback" not in stderr
    assert files(tmp_path) == before  # no report folder, nothing staged, no `latest`
    assert Store.open(f"sqlite:///{tmp_path / 'orch.db'}", create=False).table_frame("forecasts", "sim").empty


def test_a_fit_that_lands_is_whole(tmp_path):
    simulated_store(f"sqlite:///{tmp_path / 'orch.db'}").close()
    done = start(tmp_path, "fit", "--predict", "900M", "--out", "reports")
    _, stderr = done.communicate(timeout=300)
    assert done.returncode == 0, stderr
    (folder,) = [p for p in (tmp_path / "reports" / "sim").iterdir() if p.name != "latest"]
    assert (tmp_path / "reports" / "sim" / "latest").resolve() == folder.resolve()
    assert {"report.html", "report.md"} <= {p.name for p in folder.iterdir()}
    assert not list((tmp_path / "reports" / "sim").glob(".*"))  # no staging left behind
    assert (
        not Store.open(f"sqlite:///{tmp_path / 'orch.db'}", create=False)
        .table_frame("forecasts", "sim")
        .empty
    )


def test_a_signal_during_export_exits_130_and_leaves_no_file(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'orch.db'}")
    trials = [trial_row(f"{i:064d}", seed=i) for i in range(100)]
    store.record_sweep("big", "name: big", "h", "big.yaml", trials)
    store.write_measurements(
        [measurement(t.key, s, metric=f"m{j}") for t in trials for s in range(200) for j in range(10)]
    )
    store.close()
    exporting = start(tmp_path, "export", "big", "--out", "out")
    # Signalled as soon as the first table is written, while the 200,000 measurements are: a
    # fixed sleep let a fast machine finish the whole export first.
    assert exporting.stderr.readline() == "out/trials.csv: 100 rows\n"
    assert exporting.poll() is None, exporting.communicate()
    exporting.send_signal(signal.SIGTERM)
    _, stderr = exporting.communicate(timeout=60)
    assert exporting.returncode == 130, stderr
    assert not (tmp_path / "out").exists()  # no table, no partial, no folder it made


def test_sigterm_during_import_exits_130_and_writes_no_store(tmp_path):
    from bench.imports import write_rows

    write_rows(tmp_path / "runs.csv", 400_000, np.random.default_rng(0))
    importing = start(tmp_path, "import", "runs.csv", "--sweep", "big")
    # signalled at its first progress line, while it reads: a fixed sleep could miss the read
    assert "rows read and checked" in importing.stderr.readline()
    importing.send_signal(signal.SIGTERM)
    _, stderr = importing.communicate(timeout=60)
    assert importing.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "orch: interrupted" and "Traceback" not in stderr
    assert not (tmp_path / "orch.db").exists()


def test_sigterm_during_features_exits_130_and_writes_neither_file(tmp_path):
    from bench import tiny_models

    model = tiny_models.text_model(tmp_path / "gpt2", "gpt2")
    rows = (json.dumps({"id": str(i), "text": tiny_models.SENTENCES[i % 8]}) for i in range(200_000))
    (tmp_path / "rows.jsonl").write_text("\n".join(rows) + "\n")
    args = ["--model", str(model), "--data", "rows.jsonl", "--out", "f.npz"]
    extracting = start(tmp_path, "features", "text", *args)
    # signalled at its first line (its heartbeat or its progress), while it loads or extracts
    assert extracting.stderr.readline().startswith("orch: ")
    extracting.send_signal(signal.SIGTERM)
    _, stderr = extracting.communicate(timeout=60)
    assert extracting.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "orch: interrupted" and "Traceback" not in stderr
    assert not list(tmp_path.glob("*f.*"))  # no features, no sidecar, nothing staged
