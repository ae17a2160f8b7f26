"""End to end on the session's finished sweep: `orch features manifest`, `orch features text` (a
tiny GPT-2 built here), `orch align`, `orch baselines measure`, then `orch fit`, whose report shows
the measured baseline beside the published ones."""

import pytest

from bench import tiny_models as models
from tests.cli import orch
from tests.drivers import copy_of

pytestmark = pytest.mark.processes  # a finished sweep of real Ray trials: run by .ci/run
pytest.importorskip("transformers")


def test_a_measured_baseline_reaches_the_report(tmp_path, finished_sweep):
    sweep = copy_of(finished_sweep, tmp_path)
    models.text_model(tmp_path / "gpt2", "gpt2")
    for command in (
        ("features", "manifest", sweep.name, "--out", "eval.jsonl"),
        ("features", "text", "--model", "gpt2", "--data", "eval.jsonl", "--out", "gpt2.npz"),
        ("features", "image", "--model", "gpt2", "--data", "eval.jsonl", "--out", "no.npz"),
    ):
        done = orch(*command, cwd=tmp_path)
        if command[1] == "image":  # a text manifest has no images: one line, nothing written
            assert done.returncode == 2 and "missing field 'image'" in done.stderr
            assert not (tmp_path / "no.npz").exists()
        else:
            assert done.returncode == 0, done.stderr
    measured = orch("baselines", "measure", "gpt2.npz", sweep.name, "--name", "tiny-gpt2", cwd=tmp_path)
    assert measured.returncode == 0, measured.stderr
    fitted = orch("fit", "base", "--out", "reports", cwd=tmp_path)
    assert fitted.returncode == 0, fitted.stderr
    report = (tmp_path / "reports" / "base" / "latest" / "report.md").read_text()
    section = report[report.index("Baselines: published and measured") :]
    assert "tiny-gpt2" in section.splitlines()[4] and "measured" in section
