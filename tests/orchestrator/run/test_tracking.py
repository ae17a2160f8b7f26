"""`orch sweep --log`: each orch trial's checkpoints, config and status reach MLflow and
TensorBoard through Ray Tune's own logger callbacks, read back with each tool's own reader (the
checkpoints a real sweep wrote, `tests.swept`); a backend that fails is one warning line."""

import dataclasses
import os
from importlib.util import find_spec

import pytest

from db import CheckpointReport, Store, TrialStatus
from db.rows import Measurement
from orchestrator.errors import InputError
from orchestrator.run.tracking import Tracker, parse_target, trial_params
from orchestrator.sweepfile import load_spec, parse_spec
from tests.drivers import sweep_raw
from tests.swept import SWEEP

pytestmark = pytest.mark.skipif(  # orch[tracking], which .ci/run installs; imported where used
    not all(find_spec(name) for name in ("mlflow", "tensorboardX", "tensorboard")),
    reason="needs orch[tracking]: mlflow, tensorboardX and tensorboard",
)

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
    import mlflow

    mlflow.set_tracking_uri(uri)
    return mlflow.search_runs(experiment_names=[experiment]).set_index("tags.mlflow.runName")


def _real_checkpoints(url: str) -> dict[str, list[CheckpointReport]]:
    """Each trial of the real sweep (`tests.swept`) as its checkpoints reached the driver: the
    rows the store holds, a report per checkpoint."""
    frame = Store.open(url).measurements_frame(SWEEP)
    fields = [f.name for f in dataclasses.fields(Measurement)]
    reports: dict[str, list[CheckpointReport]] = {}
    for (key, samples), rows in frame.groupby(["trial_key", "samples_seen"], sort=True):
        measured = tuple(
            Measurement(*(None if v != v else v for v in row)) for row in rows[fields].itertuples(index=False)
        )
        report = CheckpointReport(key, int(samples), TrialStatus.RUNNING, None, 100, "host", "cpu", measured)
        reports.setdefault(key, []).append(report)
    return reports


def test_each_trial_is_a_run_in_mlflow_and_tensorboard_with_every_checkpoint(swept, swept_folder, tmp_path):
    """The real sweep's checkpoints handed to the trackers as the driver hands them: one trial
    run to its end, the other ended as failed after them."""
    spec = load_spec(swept_folder / "swept.yaml")
    reports = _real_checkpoints(swept)
    done, failed = sorted(spec.trials, key=lambda t: t.objective)  # jepa_good, ntp
    targets = [parse_target("mlflow"), parse_target("tensorboard")]
    warnings: list[str] = []
    tracker = Tracker(SWEEP, targets, spec.trials, tmp_path, warnings.append)
    for trial, ending in ((done, TrialStatus.DONE), (failed, TrialStatus.FAILED)):
        tracker.started(trial.key)
        for report in reports[trial.key]:
            last = report is reports[trial.key][-1] and ending is TrialStatus.DONE
            tracker.checkpoint(dataclasses.replace(report, status=ending if last else report.status))
        tracker.finished(trial.key, ending, None if ending is TrialStatus.DONE else "ValueError: planted")
    tracker.close()
    assert warnings == []

    runs = _mlflow_runs(f"sqlite:///{tmp_path / 'tracking' / 'mlflow.db'}", SWEEP)
    assert set(runs.index) == {done.key[:12], failed.key[:12]}
    assert runs.loc[done.key[:12], "status"] == "FINISHED" and runs.loc[failed.key[:12], "status"] == "FAILED"
    assert runs.loc[done.key[:12], "params.trial_key"] == done.key
    assert runs.loc[done.key[:12], "params.seed"] == str(done.seed)
    assert runs.loc[done.key[:12], "params.objective"] == "jepa_good"
    assert set(runs["tags.orch.sweep"]) == {SWEEP}
    assert runs.loc[done.key[:12], "tags.trial_name"] == done.key[:12]
    assert runs.loc[done.key[:12], "metrics.status/done"] == 1.0
    stored = [
        (report.samples_seen, row.value)
        for report in reports[done.key]
        for row in report.rows
        if (row.metric, row.reference) == ("mutual_knn@10", "factor_mlp")
    ]
    name = "mutual_knn_10/factor_mlp/world-1024"  # two references: each row named by its own
    import mlflow
    from tensorboard.backend.event_processing import event_accumulator

    history = mlflow.MlflowClient().get_metric_history(runs.loc[done.key[:12], "run_id"], name)
    assert [(m.step, m.value) for m in history] == [(s, pytest.approx(v)) for s, v in stored] and stored
    losses = mlflow.MlflowClient().get_metric_history(runs.loc[done.key[:12], "run_id"], "train_loss")
    assert [m.step for m in losses] == [s for s, _ in stored if s > 0]  # training rows from the first step

    events = event_accumulator.EventAccumulator(str(tmp_path / "tracking" / SWEEP / done.key[:12]))
    events.Reload()
    scalars = events.Scalars(f"ray/tune/{name}")
    assert [(e.step, e.value) for e in scalars] == [(s, pytest.approx(v)) for s, v in stored]
    assert [e.step for e in events.Scalars(f"ray/tune/se/{name}")] == [s for s, _ in stored]


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


@pytest.mark.parametrize("form", ["{}", "file://{}"])
def test_mlflow_given_a_folder_keeps_its_sqlite_store_in_it(tmp_path, form):
    """A folder, or MLflow's file: URI (its file store, which MLflow 3 no longer writes), holds
    MLflow's SQLite store: the trial's run is read back from it."""
    folder = tmp_path / "runs" / "mlflow"
    warnings: list[str] = []
    (trial,) = ONE.trials
    tracker = Tracker(
        "s", [parse_target(f"mlflow={form.format(folder)}")], ONE.trials, tmp_path, warnings.append
    )
    _run(tracker, trial.key, TrialStatus.DONE)
    tracker.close()
    assert warnings == []
    runs = _mlflow_runs(f"sqlite:///{folder / 'mlflow.db'}", "s")
    assert list(runs.index) == [trial.key[:12]] and runs.loc[trial.key[:12], "status"] == "FINISHED"


def test_a_secret_in_a_tracking_uri_never_shows(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")  # nothing listens: fail at once
    target = parse_target("mlflow=http://u:Planted-S3cret@127.0.0.1:9/")
    warnings: list[str] = []
    tracker = Tracker("s", [target], ONE.trials, tmp_path, warnings.append)
    _run(tracker, ONE.trials[0].key, TrialStatus.DONE)
    assert len(warnings) == 1 and "Planted" not in warnings[0]
    assert warnings[0].startswith("orch: warning: --log mlflow=http://u:***@127.0.0.1:9/ stopped")


def test_a_tracking_uri_is_not_left_behind_for_the_next_sweep(tmp_path, monkeypatch):
    """MLflow writes the tracking URI it is given into the environment; the next sweep of the
    same process (the closed loop's rounds, a notebook) logs where its own --log says, and the
    first one's password is not left in the environment."""
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    remote = Tracker(
        "s", [parse_target("mlflow=http://u:Planted-S3cret@127.0.0.1:9/")], ONE.trials, tmp_path, [].append
    )
    _run(remote, ONE.trials[0].key, TrialStatus.DONE)
    assert "MLFLOW_TRACKING_URI" not in os.environ
    warnings: list[str] = []
    local = Tracker("s", [parse_target("mlflow")], ONE.trials, tmp_path, warnings.append)
    _run(local, ONE.trials[0].key, TrialStatus.DONE)
    local.close()
    assert warnings == [] and "MLFLOW_TRACKING_URI" not in os.environ
    assert len(_mlflow_runs(f"sqlite:///{tmp_path / 'tracking' / 'mlflow.db'}", "s")) == 1


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


def test_wandb_without_a_login_is_refused_before_the_sweep_and_offline_is_taken(tmp_path, monkeypatch):
    """Ray's W&B actors, logged in nowhere, fail with a traceback each and log nothing: refused
    up front, naming the three ways to log."""
    pytest.importorskip("wandb")
    for name in ("WANDB_MODE", "WANDB_API_KEY", "NETRC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc
    with pytest.raises(InputError, match="no W&B login; run `wandb login` or set WANDB_API_KEY"):
        parse_target("wandb=my-project")
    monkeypatch.setenv("WANDB_MODE", "offline")
    assert parse_target("wandb=my-project").where == "my-project"


def test_trial_params_are_flat():
    trial = parse_spec(sweep_raw(), "s.yaml").trials[0]
    params = trial_params(trial)
    assert params["trial_key"] == trial.key and params["data_size"] == trial.data_size
    assert "train.lr" in params and all(not isinstance(v, dict) for v in params.values())
