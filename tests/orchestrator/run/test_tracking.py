"""`orch sweep --log`: each orch trial's checkpoints, config and status reach MLflow and
TensorBoard through Ray Tune's own logger callbacks, read back with each tool's own reader; a
backend that fails is one warning line."""

import pytest

from db import CheckpointReport, TrialStatus
from db.rows import Measurement
from orchestrator.errors import InputError
from orchestrator.run.tracking import Tracker, parse_target, trial_params
from orchestrator.sweepfile import parse_spec
from tests.drivers import sweep_raw

mlflow = pytest.importorskip("mlflow")  # orch[tracking], which .ci/run installs
pytest.importorskip("tensorboardX")
tensorboard_events = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

SAMPLES = (0, 1024, 2048)
ONE = parse_spec(sweep_raw(objectives=("jepa_good",), seeds=(0,)), "s.yaml")  # a sweep of one trial


def _report(key: str, samples: int, status: TrialStatus = TrialStatus.RUNNING) -> CheckpointReport:
    rows = tuple(
        Measurement(
            key, samples, metric, "dinov2", "wit", 0.1 + samples / 1e5, 32, 1e9, 1.0, 0.01, None, None, None
        )
        for metric in ("mutual_knn@10", "cka")
    )
    return CheckpointReport(key, samples, status, None, 100, "host", "cpu", rows)


def _run(tracker: Tracker, key: str, ending: TrialStatus) -> None:
    tracker.started(key)
    for samples in SAMPLES:
        last = samples == SAMPLES[-1] and ending is TrialStatus.DONE
        tracker.checkpoint(_report(key, samples, TrialStatus.DONE if last else TrialStatus.RUNNING))
    tracker.finished(key, ending, None if ending is TrialStatus.DONE else "ValueError: planted")


def _mlflow_runs(uri: str, experiment: str):
    mlflow.set_tracking_uri(uri)
    return mlflow.search_runs(experiment_names=[experiment]).set_index("tags.mlflow.runName")


def test_each_trial_is_a_run_in_mlflow_and_tensorboard_with_every_checkpoint(tmp_path):
    spec = parse_spec(sweep_raw(objectives=("jepa_good",)), "s.yaml")
    done, failed = spec.trials
    warnings: list[str] = []
    targets = [parse_target("mlflow"), parse_target("tensorboard")]
    tracker = Tracker("s", targets, spec.trials, tmp_path, warnings.append)
    _run(tracker, done.key, TrialStatus.DONE)
    _run(tracker, failed.key, TrialStatus.FAILED)
    tracker.close()
    assert warnings == []

    runs = _mlflow_runs(f"sqlite:///{tmp_path / 'tracking' / 'mlflow.db'}", "s")
    assert set(runs.index) == {done.key[:12], failed.key[:12]}
    assert runs.loc[done.key[:12], "status"] == "FINISHED" and runs.loc[failed.key[:12], "status"] == "FAILED"
    assert runs.loc[done.key[:12], "params.trial_key"] == done.key
    assert runs.loc[done.key[:12], "params.seed"] == str(done.seed)
    assert runs.loc[done.key[:12], "params.objective"] == "jepa_good"
    assert (
        set(runs["tags.orch.sweep"]) == {"s"} and runs.loc[done.key[:12], "tags.trial_name"] == done.key[:12]
    )
    assert runs.loc[done.key[:12], "metrics.status/done"] == 1.0
    history = mlflow.MlflowClient().get_metric_history(runs.loc[done.key[:12], "run_id"], "mutual_knn_10")
    assert [(m.step, m.value) for m in history] == [(s, pytest.approx(0.1 + s / 1e5)) for s in SAMPLES]

    events = tensorboard_events.EventAccumulator(str(tmp_path / "tracking" / "s" / done.key[:12]))
    events.Reload()
    scalars = events.Scalars("ray/tune/mutual_knn_10")
    assert [(e.step, e.value) for e in scalars] == [(s, pytest.approx(0.1 + s / 1e5)) for s in SAMPLES]
    assert [e.step for e in events.Scalars("ray/tune/se/cka")] == list(SAMPLES)


def test_a_backend_that_fails_is_one_warning_line_and_the_others_go_on(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    broken = parse_target(f"mlflow=sqlite:///{blocker}/mlflow.db")
    warnings: list[str] = []
    (trial,) = ONE.trials
    tracker = Tracker("s", [broken, parse_target("tensorboard")], ONE.trials, tmp_path, warnings.append)
    _run(tracker, trial.key, TrialStatus.DONE)
    tracker.close()
    assert len(warnings) == 1 and warnings[0].startswith(f"orch: warning: --log mlflow=sqlite:///{blocker}")
    assert "\n" not in warnings[0] and "the store keeps every row" in warnings[0]
    assert list((tmp_path / "tracking" / "s" / trial.key[:12]).glob("events.out.tfevents.*"))


def test_a_secret_in_a_tracking_uri_never_shows(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")  # nothing listens: fail at once
    target = parse_target("mlflow=http://u:Planted-S3cret@127.0.0.1:9/")
    warnings: list[str] = []
    tracker = Tracker("s", [target], ONE.trials, tmp_path, warnings.append)
    _run(tracker, ONE.trials[0].key, TrialStatus.DONE)
    assert len(warnings) == 1 and "Planted" not in warnings[0]
    assert warnings[0].startswith("orch: warning: --log mlflow=http://u:***@127.0.0.1:9/ stopped")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("neptune", "unknown backend 'neptune'; use one of mlflow, tensorboard, wandb"),
        ("tensorboard=runs", "tensorboard takes no value"),
        ("mlflow=", "give a value after ="),
    ],
)
def test_a_bad_log_value_names_the_fix(value, says):
    with pytest.raises(InputError, match=says):
        parse_target(value)


def test_trial_params_are_flat():
    trial = parse_spec(sweep_raw(), "s.yaml").trials[0]
    params = trial_params(trial)
    assert params["trial_key"] == trial.key and params["data_size"] == trial.data_size
    assert "train.lr" in params and all(not isinstance(v, dict) for v in params.values())
