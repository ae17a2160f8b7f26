"""Sweep files: expansion, keys, and one exact error line for every malformed file."""

import json

import pytest
import yaml

from foundation.sizes import format_size, parse_size
from orchestrator.errors import SpecError
from orchestrator.sweepfile import TrialConfig, load_spec, parse_spec
from tests.cli import ROOT, orch

BASE = {
    "name": "t",
    "grid": {
        "objective": ["jepa_good", "ntp"],
        "model": ["tiny"],
        "data_size": ["4K", "16K"],
        "seed": [0, 1],
    },
}


def spec_of(**changes):
    raw = json.loads(json.dumps(BASE))
    raw.update(changes)
    return parse_spec(raw, "t.yaml")


@pytest.mark.parametrize(
    ("text", "samples"),
    [("145K", 145_000), ("21.6M", 21_600_000), ("940M", 940_000_000), ("1.2B", 1_200_000_000), (4096, 4096)],
)
def test_sizes_parse(text, samples):
    assert parse_size(text) == samples


@pytest.mark.parametrize("bad", ["900X", -5, 0, 1.5, "1.5", "", "K", True, None, "1.2345K"])
def test_bad_sizes_are_rejected(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


def test_format_size_round_trips_common_sizes():
    for text in ["145K", "21.6M", "940M", "1.2B", "4K"]:
        assert format_size(parse_size(text)) == text


def test_grid_is_the_cartesian_product():
    spec = spec_of()
    cells = {(t.objective, t.data_size, t.seed) for t in spec.trials}
    assert len(spec.trials) == 8
    assert cells == {(o, d, s) for o in ("jepa_good", "ntp") for d in (4000, 16000) for s in (0, 1)}


def test_include_exclude_and_recipe_axes():
    grid = dict(BASE["grid"], **{"train.sigreg.weight": [0.02, 0.04], "train.grad_clip": [None, 1.0]})
    spec = spec_of(
        grid=grid,
        exclude=[{"objective": "ntp", "train.sigreg.weight": 0.04}],
        include=[{"objective": "jepa_bad", "model": "tiny", "data_size": "64K", "seed": 5}],
    )
    # 2 objectives x 2 sizes x 2 seeds x 2 weights x 2 clips = 32, minus 8 ntp@0.04, plus one.
    assert len(spec.trials) == 25
    weights = {t.train.sigreg.weight for t in spec.trials if t.objective == "ntp"}
    assert weights == {0.02}
    assert {t.train.grad_clip for t in spec.trials} == {None, 1.0}
    extra = [t for t in spec.trials if t.objective == "jepa_bad"]
    assert [(t.data_size, t.seed) for t in extra] == [(64_000, 5)]


def test_holdout_marks_cells():
    spec = spec_of(holdout={"data_size": ["16K"]})
    held = [t for t in spec.trials if spec.is_held_out(t)]
    assert len(held) == 4 and all(t.data_size == 16_000 for t in held)


def test_key_is_stable_across_key_order_and_sweep_name():
    a = spec_of()
    shuffled = {"grid": dict(reversed(list(BASE["grid"].items()))), "name": "other_name"}
    b = parse_spec(shuffled, "u.yaml")
    assert sorted(t.key for t in a.trials) == sorted(t.key for t in b.trials)


def test_key_is_fixed_across_python_versions():
    # Frozen value: changing what enters the key must be a deliberate KEY_VERSION bump.
    trial = spec_of().trials[0]
    assert trial.key == "c0a73f32c473dfd5d13fbde0b4cb9bed661da3d8355ee7aedfff528eef2194be"  # KEY_VERSION 2


def test_key_changes_with_anything_that_changes_the_result():
    base = spec_of().trials[0].key
    assert spec_of(train={"lr": 1e-4}).trials[0].key != base
    assert spec_of(train={"sigreg": {"weight": 0.1}}).trials[0].key != base
    assert spec_of(data={"source": "world", "seed": 1}).trials[0].key != base
    for knob, value in (("synonyms", 2), ("nuisance", 0.0), ("mention", 0.9)):  # every world knob
        assert spec_of(data={"source": "world", knob: value}).trials[0].key != base
    assert spec_of(data={"source": "world", "synonyms": 4}).trials[0].key == base  # the default
    assert spec_of(eval={"metrics": ["cka"]}).trials[0].key != base
    assert spec_of(resources={"cpu": 2}).trials[0].key == base
    # the global batch is the recipe's: more workers run the same experiment, under the same key
    assert spec_of(resources={"workers": 4, "placement": "spread"}).trials[0].key == base
    assert spec_of(resources={"model": {"tiny": {"workers": 2}}}).trials[0].key == base
    assert spec_of(holdout={"data_size": ["4K"]}).trials[0].key == base
    assert spec_of(eval={"scoring": "orch"}).trials[0].key == base  # the default: older keys stand
    assert spec_of(eval={"scoring": "platonic-rep"}).trials[0].key != base


def test_trial_config_round_trips_through_json():
    for trial in spec_of(grid=dict(BASE["grid"], **{"train.grad_clip": [None, 0.5]})).trials:
        assert TrialConfig.from_json(trial.to_json()) == trial
    scored = spec_of(eval={"scoring": "platonic-rep"}).trials[0]
    assert TrialConfig.from_json(scored.to_json()) == scored


@pytest.mark.parametrize("name", ["goodview_vs_ntp.yaml", "goodview_vs_ntp_paper.yaml"])
def test_shipped_sweeps_validate(name):
    spec = load_spec(ROOT / "sweeps" / name)
    objectives = {t.objective for t in spec.trials}
    assert objectives == {"jepa_good", "jepa_bad", "ntp"}
    assert {0, 1, 2} <= {t.seed for t in spec.trials}
    assert any(spec.is_held_out(t) for t in spec.trials) or spec.holdout_above is not None


def test_paper_sweep_holds_the_preprints_sizes_and_spends_900m_where_the_42x_is_read():
    spec = load_spec(ROOT / "sweeps" / "goodview_vs_ntp_paper.yaml")
    sizes = sorted({t.data_size for t in spec.trials})
    assert sizes[0] == 145_000 and sizes[-1] == 900_000_000
    assert {506_000, 1_770_000, 6_180_000, 21_600_000, 75_000_000, 260_000_000} <= set(sizes)
    assert {t.model for t in spec.trials} == {"33M", "base"}
    assert spec.data.source == "files" and spec.resources.gpu == 1 and spec.data.corpus == 940_000_000
    at_900m = [t for t in spec.trials if t.data_size == 900_000_000]
    assert {(t.objective, t.model) for t in at_900m} == {("ntp", "base")} and len(at_900m) == 6
    assert not any(spec.is_held_out(t) for t in at_900m)
    assert (
        "corpus" not in at_900m[0].identity()["data"]
    )  # how much text there is is not what a trial trains on
    held = [t for t in spec.trials if spec.is_held_out(t)]
    assert len({(t.objective, t.model, t.data_size) for t in held}) == 48
    assert not any((t.objective, t.model) in {("jepa_good", "base"), ("ntp", "base")} for t in held)


def test_holdout_rules_hold_out_a_trial_matching_any_of_them():
    """A list of rules holds out what any one of them matches: NTP at 4K, JEPA at 16K."""
    rules = [{"objective": ["ntp"], "data_size": ["4K"]}, {"objective": ["jepa_good"], "data_size": ["16K"]}]
    spec = spec_of(holdout=rules)
    held = {(t.objective, t.data_size) for t in spec.trials if spec.is_held_out(t)}
    assert held == {("ntp", 4000), ("jepa_good", 16000)}
    with pytest.raises(SpecError, match=r"holdout\[1\]\.data_size\[0\]: 8000 is not among"):
        spec_of(holdout=[{"objective": ["ntp"]}, {"data_size": ["8K"]}])
    with pytest.raises(SpecError, match=r"holdout\[0\]: is empty"):
        spec_of(holdout=[{}])
    with pytest.raises(SpecError, match=r"holdout: holds out every run of ntp on tiny: its law has no point"):
        spec_of(holdout={"objective": ["ntp"]})  # orch check --design passed it: a curve of no points


# --- malformed files: one line naming file and field, exit 2, no traceback ---------------

GOOD = yaml.safe_dump(BASE)


def with_grid(**axes):
    return yaml.safe_dump(dict(BASE, grid=dict(BASE["grid"], **axes)))


def with_top(**keys):
    return yaml.safe_dump(dict(BASE, **keys))


FILES = {
    "gridsize_x": (with_grid(data_size=["4K", "16K", "900X"]), "grid.data_size[2]: '900X' is not a size"),
    "size_negative": (with_grid(data_size=[-5]), "grid.data_size[0]: -5 is not a positive"),
    "size_zero": (with_grid(data_size=[0]), "grid.data_size[0]: 0 is not a positive"),
    "size_fraction": (with_grid(data_size=[1.5]), "grid.data_size[0]: 1.5 is not a whole number"),
    "top_typo": (with_top(grdi=1), "grdi: unknown key (did you mean 'grid'?)"),
    "no_grid": (yaml.safe_dump({"name": "x"}), "grid: is required"),
    "no_name": (yaml.safe_dump({"grid": BASE["grid"]}), "name: is required"),
    "name_space": (with_top(name="my sweep"), "name: 'my sweep' may hold only"),
    "objective": (
        with_grid(objective=["jepa_god"]),
        "grid.objective[0]: 'jepa_god' is not allowed (did you mean 'jepa_good'?)",
    ),
    "model": (with_grid(model=["huge"]), "grid.model[0]: 'huge' is not allowed"),
    "seed_negative": (with_grid(seed=[0, -1]), "grid.seed[1]: -1 is out of range"),
    "seed_text": (with_grid(seed=["a"]), "grid.seed[0]: expected a whole number, got 'a'"),
    "lr_negative": (with_top(train={"lr": -0.1}), "train.lr: -0.1 is out of range"),
    "lr_text": (with_top(train={"lr": "fast"}), "train.lr: expected a number, got 'fast'"),
    "batch_zero": (with_top(train={"batch_size": 0}), "train.batch_size: 0 is out of range"),
    "schedule": (with_top(train={"schedule": "linear"}), "train.schedule: 'linear' is not allowed"),
    "sigreg_weight": (with_top(train={"sigreg": {"weight": 2}}), "train.sigreg.weight: 2 is out of range"),
    "sigreg_typo": (
        with_top(train={"sigreg": {"slicess": 3}}),
        "train.sigreg.slicess: unknown key (did you mean 'slices'?)",
    ),
    "clip_negative": (with_top(train={"grad_clip": -1}), "train.grad_clip: -1 is out of range"),
    "train_typo": (with_top(train={"learning_rate": 1}), "train.learning_rate: unknown key"),
    "axis_value": (with_grid(**{"train.lr": [0.001, "x"]}), "grid.train.lr[1]: expected a number, got 'x'"),
    "axis_typo": (
        with_grid(**{"train.lrr": [0.1]}),
        "grid.train.lrr: unknown key (did you mean 'train.lr'?)",
    ),
    "axis_empty": (with_grid(objective=[]), "grid.objective: is empty"),
    "axis_scalar": (with_grid(objective="ntp"), "grid.objective: expected a list, got 'ntp'"),
    "axis_duplicate": (with_grid(seed=[0, 0]), "grid.seed[1]: 0 is listed twice"),
    "metric_unknown": (
        with_top(eval={"metrics": ["cka", "mutal_knn@10"]}),
        "eval.metrics[1]: 'mutal_knn@10' is not a metric",
    ),
    "metric_no_k": (
        with_top(eval={"metrics": ["mutual_knn"]}),
        "eval.metrics[0]: 'mutual_knn' needs a neighbour count",
    ),
    "checkpoints": (with_top(eval={"checkpoints": "log3"}), "eval.checkpoints: 'log3' is not allowed"),
    "eval_set": (with_top(eval={"set": "wit-1024"}), "eval.set: 'wit-1024' is not a world eval set"),
    "source": (with_top(data={"source": "s3"}), "data.source: 's3' is not allowed"),
    "files_no_pairs": (
        with_top(data={"source": "files", "eval": {"texts": "t", "features": {"d": "d.npy"}}}),
        "data.pairs: is required",
    ),
    "files_no_features": (
        with_top(
            data={"source": "files", "pairs": "p", "eval": {"texts": "t", "features": {}}}, eval={"set": "w"}
        ),
        "data.eval.features: is empty",
    ),
    "world_extra": (with_top(data={"source": "world", "pairs": "p"}), "data.pairs: unknown key"),
    "gpu_negative": (with_top(resources={"gpu": -1}), "resources.gpu: -1 is out of range"),
    "cpu_zero": (with_top(resources={"cpu": 0}), "resources.cpu: 0 is out of range"),
    "workers_zero": (with_top(resources={"workers": 0}), "resources.workers: 0 is out of range"),
    "placement_typo": (
        with_top(resources={"placement": "spred"}),
        "resources.placement: 'spred' is not allowed (did you mean 'spread'?)",
    ),
    "workers_past_last_batch": (
        with_top(train={"batch_size": 30}, resources={"model": {"tiny": {"workers": 16}}}),
        "resources.model.tiny.workers: 16 workers cannot share the last batch of 10 samples",
    ),
    "holdout_size": (with_top(holdout={"data_size": ["12Q"]}), "holdout.data_size[0]: '12Q' is not a size"),
    "exclude_off_grid": (
        with_top(exclude=[{"objective": "jepa_bad"}]),
        "exclude[0].objective: 'jepa_bad' is not on the grid",
    ),
    "exclude_all": (with_top(exclude=[{"model": "tiny"}]), "exclude: removes every trial"),
    "include_partial": (
        with_top(include=[{"objective": "ntp", "model": "tiny", "data_size": "4K"}]),
        "include[0].seed: is required",
    ),
    "yaml_syntax": ("name: x\ngrid: {objective: [ntp\n", "YAML syntax error at line 3"),
    "empty_file": ("", "(top): the file is empty"),
    "top_list": ("- 1\n- 2\n", "expected a mapping"),
    "store_empty": (with_top(store=""), "store: expected a non-empty string"),
    "name_dots": (with_top(name=".."), "name: '..' may hold only letters"),
    "name_hidden": (with_top(name=".sweep"), "not start with '.' or '-'"),
    "key_twice": (GOOD + "grid: {objective: [ntp]}\n", "duplicate key 'grid' (give each key once)"),
    "axis_key_twice": (
        "name: x\ngrid:\n  objective: [ntp]\n  objective: [jepa_good]\n  model: [tiny]\n"
        "  data_size: [4K]\n  seed: [0]\n",
        "line 4, column 3: duplicate key 'objective'",
    ),
    "grid_too_big": (
        with_grid(
            seed=list(range(1000)), data_size=[f"{k}K" for k in range(1, 101)], **{"train.lr": [1e-3, 2e-3]}
        ),
        "grid: 400,000 trials (data_size 100 x model 1 x objective 2 x seed 1000 x train.lr 2) is more than "
        "max_trials 100,000; set max_trials: 400000 at the top of the file to run it",
    ),
    "max_trials_zero": (with_top(max_trials=0), "max_trials: 0 is out of range"),
    "k_too_big": (
        with_top(eval={"set": "world-9", "metrics": ["cka", "mutual_knn@10"]}),
        "eval.metrics[1]: mutual_knn@10 needs more than 10 eval items, and world-9 has 9",
    ),
    "reference_unknown": (
        with_top(eval={"references": ["factor_mlp", "dinov2"]}),
        "eval.references[1]: 'dinov2' is not allowed",
    ),
    "scoring_unknown": (
        with_top(eval={"scoring": "upstream"}),
        "eval.scoring: 'upstream' is not allowed",
    ),
    "scoring_retrieval": (
        with_top(eval={"scoring": "platonic-rep", "metrics": ["mutual_knn@10", "retrieval_t2i@5"]}),
        "eval.metrics[1]: retrieval_t2i@5 is orch's own (platonic-rep has no retrieval metric)",
    ),
    "world_set_empty": (with_top(eval={"set": "world-0"}), "eval.set: 'world-0' is not a world eval set"),
    "world_set_tiny": (
        with_top(eval={"set": "world-4", "metrics": ["cka"]}),
        "'world-4' has to hold 8 to 100,000",
    ),
    "world_set_huge": (
        with_top(eval={"set": "world-1000000"}),
        "'world-1000000' has to hold 8 to 100,000 items",
    ),
    "size_huge": (with_grid(data_size=["4K", "20T"]), "grid.data_size[1]: '20T' is more than 10T samples"),
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_malformed_file_gets_one_exact_line(tmp_path, name):
    text, expected = FILES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    result = orch("sweep", str(path), "--dry-run", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"orch: error: {path}: ")
    assert expected in lines[0]
    assert not (tmp_path / "orch.db").exists()  # nothing written to the store


def test_spec_error_is_raised_in_process():
    with pytest.raises(SpecError, match=r"t.yaml: grid.model\[0\]"):
        spec_of(grid=dict(BASE["grid"], model=["nope"]))


def test_a_yaml_merge_key_is_yaml_and_its_keys_may_be_overridden(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text(
        "name: merged\n"
        "train: &recipe {batch_size: 64, lr: 0.002, schedule: constant, warmup: 0.0}\n"
        "grid: {objective: [ntp], model: [tiny], data_size: [2K], seed: [0]}\n"
        "include:\n"
        "  - <<: {objective: ntp, model: tiny, seed: 0}\n"
        "    data_size: 4K\n"
    )
    spec = load_spec(path)
    assert sorted(t.data_size for t in spec.trials) == [2000, 4000]
    assert spec.trials[0].train.batch_size == 64
    path.write_text(path.read_text().replace("    data_size: 4K\n", "    data_size: 4K\n    data_size: 8K\n"))
    with pytest.raises(SpecError, match="duplicate key 'data_size'"):
        load_spec(path)
