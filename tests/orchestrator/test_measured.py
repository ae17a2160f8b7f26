"""`orch baselines measure`: a tiny pretrained model's features of a sweep's eval texts, scored
as a trial's checkpoint is and stored as measured baselines; features that do not pair with the
eval set row for row are refused in one line, before anything is scored or stored."""

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from bench import tiny_models as models
from db import WIDTHS, Store
from orchestrator.baselines import read_baselines
from orchestrator.data.sources import source_of
from orchestrator.errors import InputError
from orchestrator.measured import measure_baselines
from orchestrator.sweepfile import load_spec
from tests.cli import orch
from tests.datasets import file_dataset

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """The embedded sweep, its eval texts as a manifest, and a tiny GPT-2's features of them."""
    folder = tmp_path_factory.mktemp("world")
    raw = yaml.safe_load((Path(__file__).parents[2] / "sweeps" / "goodview_vs_ntp.yaml").read_text())
    raw.pop("claims")
    (folder / "sweep.yaml").write_text(yaml.safe_dump({**raw, "store": "sqlite:///orch.db"}))
    spec = load_spec(folder / "sweep.yaml")
    texts, _ = source_of(spec.data).scoring_set(spec.trials[0])
    (folder / "eval.jsonl").write_text(
        "".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(texts))
    )
    models.features_file(
        models.text_model(folder / "gpt2", "gpt2"), folder / "eval.jsonl", folder / "gpt2.npz"
    )
    return folder


def test_a_measured_baseline_has_every_metric_and_reference_with_the_trials_noise(world):
    rows, skipped = measure_baselines(world / "gpt2.npz", load_spec(world / "sweep.yaml"), None, "ntp")
    assert skipped == []
    assert {(r.metric, r.reference) for r in rows} == {
        (metric, reference)
        for metric in ("mutual_knn@10", "cka", "cknna@10")
        for reference in ("render_cnn", "factor_mlp")
    }
    sidecar = (world / "gpt2.json").read_bytes()
    assert all(r.source == "measured" and r.model == "gpt2" and r.eval_set == "world-1024" for r in rows)
    assert all(r.sidecar_sha256 == hashlib.sha256(sidecar).hexdigest() and r.samples is None for r in rows)
    knn = [r for r in rows if r.metric == "mutual_knn@10"]
    assert all(r.se > 0 and r.null_p95 is not None and r.chance is not None for r in knn)
    assert all(r.se is None for r in rows if r.metric == "cka")  # no item SE for CKA, as in trials


def test_the_command_stores_them_once_and_lists_them_beside_the_published(world):
    measured = orch("baselines", "measure", "gpt2.npz", "sweep.yaml", "--name", "GPT-2 tiny", cwd=world)
    assert measured.returncode == 0, measured.stderr
    assert "6 measured baseline(s) added" in measured.stderr and "mutual_knn@10" in measured.stdout
    store = Store.open(f"sqlite:///{world / 'orch.db'}", create=False)
    rows, _ = measure_baselines(
        world / "gpt2.npz", load_spec(world / "sweep.yaml"), "GPT-2 tiny", "pretrained"
    )
    assert store.write_baselines(rows) == 0  # the same features measured again: one row each
    published = Path(__file__).parents[2] / "sweeps" / "published" / "jepa_prh.csv"
    store.write_baselines(read_baselines(published, WIDTHS))
    listed = orch("baselines", "list", cwd=world)
    assert "measured" in listed.stdout and "GPT-2 tiny" in listed.stdout and "Qwen2.5-72B" in listed.stdout
    assert (store.baselines_frame().source == "measured").sum() == 6


def test_features_that_do_not_pair_with_the_eval_set_are_refused_in_one_line(world, tmp_path):
    spec = load_spec(world / "sweep.yaml")
    texts = [json.loads(line) for line in (world / "eval.jsonl").read_text().splitlines()]
    (tmp_path / "short.jsonl").write_text("".join(json.dumps(row) + "\n" for row in texts[:100]))
    swapped = [texts[1], texts[0], *texts[2:]]
    (tmp_path / "swapped.jsonl").write_text("".join(json.dumps(row) + "\n" for row in swapped))
    for name in ("short", "swapped"):
        made = orch(
            "features",
            "text",
            "--model",
            str(world / "gpt2"),
            "--data",
            f"{name}.jsonl",
            "--out",
            f"{name}.npz",
            cwd=tmp_path,
        )
        assert made.returncode == 0, made.stderr
    with pytest.raises(InputError, match=r"short.npz: 100 rows, but eval set world-1024 has 1024"):
        measure_baselines(tmp_path / "short.npz", spec, None, "ntp")
    with pytest.raises(InputError, match=r"swapped.npz: row 0 \('1'\) was made from another text than row 0"):
        measure_baselines(tmp_path / "swapped.npz", spec, None, "ntp")
    np.save(tmp_path / "bare.npy", np.zeros((1024, 4)))
    with pytest.raises(InputError, match=r"bare.npy: no sidecar .*bare.json beside it"):
        measure_baselines(tmp_path / "bare.npy", spec, None, "ntp")


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda car: car["rows"]["sha256"].pop(), "rows.sha256 is not a list of 1024 strings (rows.count)"),
        (lambda car: car.pop("model"), "model does not name its folder and sha256"),
        (lambda car: car["rows"].update(count="many"), "rows.count is not a count of rows"),
    ],
)
def test_a_damaged_sidecar_is_one_line_naming_its_field(world, tmp_path, damage, expected):
    (tmp_path / "f.npz").write_bytes((world / "gpt2.npz").read_bytes())
    sidecar = json.loads((world / "gpt2.json").read_text())
    damage(sidecar)
    (tmp_path / "f.json").write_text(json.dumps(sidecar))
    with pytest.raises(InputError, match=rf"f.json: {re.escape(expected)}; remake it with orch features"):
        measure_baselines(tmp_path / "f.npz", load_spec(world / "sweep.yaml"), None, "ntp")


def test_a_reference_made_from_other_rows_is_refused_by_the_sidecars_ids(tmp_path):
    texts = [f"{w} {v}" for w in models.SENTENCES for v in ("now", "then")]
    data = file_dataset(tmp_path, [(t, t) for t in texts], texts, width=8)
    sweep = {
        "name": "f",
        "data": data,
        "eval": {"set": "mini", "metrics": ["mutual_knn@3"]},
        "grid": {"objective": ["jepa_good"], "model": ["tiny"], "data_size": ["1K"], "seed": [0]},
    }
    (tmp_path / "f.yaml").write_text(yaml.safe_dump(sweep))
    models.text_model(tmp_path / "gpt2", "gpt2")
    models.features_file(tmp_path / "gpt2", tmp_path / "eval.jsonl", tmp_path / "t.npz")
    ids = [str(i) for i in range(len(texts))]
    reference = {
        "format": "orch-features/1",
        "side": "image",
        "model": {"folder": "dinov2", "sha256": "0" * 64},
        "rows": {"count": len(ids), "ids": ids[::-1], "sha256": ids},
    }
    (tmp_path / "dino.json").write_text(json.dumps(reference))
    refused = orch("baselines", "measure", "t.npz", "f.yaml", cwd=tmp_path)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "its rows are not those of reference 'dino' (dino.npy): row 0 differs" in refused.stderr
    reference["rows"]["ids"] = ids
    (tmp_path / "dino.json").write_text(json.dumps(reference))
    rows, _ = measure_baselines(tmp_path / "t.npz", load_spec(tmp_path / "f.yaml"), None, "ntp")
    assert {(r.metric, r.reference) for r in rows} == {("mutual_knn@3", "dino")}


def test_layers_of_different_row_counts_are_one_line_naming_the_file(world, tmp_path):
    np.savez(tmp_path / "f.npz", layer_00=np.ones((1024, 4)), layer_01=np.ones((1000, 4)))
    (tmp_path / "f.json").write_text((world / "gpt2.json").read_text())
    with pytest.raises(InputError, match=r"f.npz: layers hold different row counts \[1000, 1024\]; remake"):
        measure_baselines(tmp_path / "f.npz", load_spec(world / "sweep.yaml"), None, "ntp")
