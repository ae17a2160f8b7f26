"""End to end on a real sweep: `orch features manifest`, `orch features text` (a tiny GPT-2 built
here), `orch align`, `orch baselines measure`, then `orch fit`, whose report shows the measured
baseline beside the published ones."""

import pytest

from tests.drivers import run_orch, start_driver, sweep_raw, write_sweep
from tests.orchestrator.extraction import models

pytestmark = pytest.mark.processes  # real processes: run by .ci/run after the README's command
pytest.importorskip("transformers")


def test_a_measured_baseline_reaches_the_report(tmp_path, ray_cluster):
    raw = sweep_raw(name="base", sizes=("8K",), seeds=(0, 1))
    raw["train"] = {"schedule": "constant", "warmup": 0.0}  # every checkpoint a point of the curve
    sweep = write_sweep(tmp_path, raw)
    driver = start_driver(tmp_path, sweep, "--address", ray_cluster.address)
    _, stderr = driver.communicate(timeout=600)
    assert driver.returncode == 0, stderr
    models.text_model(tmp_path / "gpt2", "gpt2")
    for command in (
        ("features", "manifest", sweep.name, "--out", "eval.jsonl"),
        ("features", "text", "--model", "gpt2", "--data", "eval.jsonl", "--out", "gpt2.npz"),
        ("features", "image", "--model", "gpt2", "--data", "eval.jsonl", "--out", "no.npz"),
    ):
        done = run_orch(*command, cwd=tmp_path)
        if command[1] == "image":  # a text manifest has no images: one line, nothing written
            assert done.returncode == 2 and "missing field 'image'" in done.stderr
            assert not (tmp_path / "no.npz").exists()
        else:
            assert done.returncode == 0, done.stderr
    measured = run_orch("baselines", "measure", "gpt2.npz", sweep.name, "--name", "tiny-gpt2", cwd=tmp_path)
    assert measured.returncode == 0, measured.stderr
    fitted = run_orch("fit", "base", "--out", "reports", cwd=tmp_path)
    assert fitted.returncode == 0, fitted.stderr
    report = (tmp_path / "reports" / "base" / "latest" / "report.md").read_text()
    section = report[report.index("Baselines: published and measured") :]
    assert "tiny-gpt2" in section.splitlines()[4] and "measured" in section
