"""`orch sweep --log` on real Ray Tune trials: every checkpoint the store has reaches MLflow,
TensorBoard and W&B (offline), read back with their own readers; a broken tracking URI costs one
line and the sweep completes."""

import functools

import pytest

from db import Store
from tests.cli import orch
from tests.drivers import sweep_raw, wait_for, write_sweep

mlflow = pytest.importorskip("mlflow")  # orch[tracking], which .ci/run installs
pytest.importorskip("tensorboardX")
tensorboard_events = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

pytestmark = [pytest.mark.processes, pytest.mark.usefixtures("ray_cluster")]


def test_a_two_trial_sweep_reaches_mlflow_tensorboard_and_wandb(tmp_path):
    path = write_sweep(tmp_path, sweep_raw(objectives=("jepa_good",)))
    storage, db = tmp_path / "storage", f"sqlite:///{tmp_path / 'orch.db'}"
    logs = ("--log", "mlflow", "--log", "tensorboard", "--log", "wandb")
    result = orch(
        "--store", db, "sweep", str(path), "--storage", str(storage), *logs, env={"WANDB_MODE": "offline"}
    )
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    rows = Store.open(db).measurements_frame("s")
    rows = rows[rows.metric == "mutual_knn@10"]
    assert rows.trial_key.nunique() == 2 and rows.reference.nunique() == 2  # named with their reference

    mlflow.set_tracking_uri(f"sqlite:///{storage / 'tracking' / 'mlflow.db'}")
    runs = mlflow.search_runs(experiment_names=["s"]).set_index("params.trial_key")
    assert set(runs.index) == set(rows.trial_key) and set(runs.status) == {"FINISHED"}
    assert set(runs["tags.orch.sweep"]) == {"s"} and set(runs["metrics.status/done"]) == {1.0}
    client = mlflow.MlflowClient()
    for (key, reference, eval_set), stored in rows.groupby(["trial_key", "reference", "eval_set"]):
        name = f"mutual_knn_10/{reference}/{eval_set}"
        expected = [(s, pytest.approx(v)) for s, v in zip(stored.samples_seen, stored.value, strict=True)]
        history = client.get_metric_history(runs.loc[key, "run_id"], name)
        assert sorted((m.step, m.value) for m in history) == expected
        events = tensorboard_events.EventAccumulator(str(storage / "tracking" / "s" / key[:12]))
        events.Reload()
        assert [(e.step, e.value) for e in events.Scalars(f"ray/tune/{name}")] == expected
        folder = storage / "tracking" / "s" / key[:12] / "wandb"
        wait_for(functools.partial(_wandb_holds, folder, key, name), timeout=60)  # W&B's service writes it


def test_a_broken_tracking_uri_costs_one_line_and_the_sweep_completes(tmp_path):
    path = write_sweep(tmp_path, sweep_raw(objectives=("jepa_good",), seeds=(0,)))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    db = f"sqlite:///{tmp_path / 'orch.db'}"
    broken = f"mlflow=sqlite:///{blocker}/mlflow.db"
    result = orch("--store", db, "sweep", str(path), "--storage", str(tmp_path / "storage"), "--log", broken)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and f"orch: warning: --log {broken} stopped (" in warnings[0]
    assert "1 done" in result.stdout


def _wandb_holds(folder, key: str, name: str) -> bool:
    """Whether the trial's W&B offline run file holds the metric `name` (W&B's service process
    may still be writing it as the sweep returns)."""
    found = list(folder.glob(f"offline-run-*-{key}/run-{key}.wandb"))
    return bool(found) and name.encode() in found[0].read_bytes()


def test_a_tracking_uris_password_reaches_no_file_and_no_line(tmp_path):
    """The password of an MLflow server's URI (in its user info and its query), and one holding a
    quote: in no line the sweep prints and in no file under its folder (Tune's saved state in
    `tuner.pkl` included)."""
    path = write_sweep(tmp_path, sweep_raw(objectives=("jepa_good",), seeds=(0,)))
    uri = "http://orch:Leak'Check@127.0.0.1:9/?password=LeakQuery"  # nothing listens on port 9
    db = f"sqlite:///{tmp_path / 'orch.db'}"
    env = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "2"}
    result = orch("--store", db, "sweep", str(path), "--log", f"mlflow={uri}", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "--log mlflow=http://orch:***@127.0.0.1:9/?password=*** stopped (" in result.stderr
    assert not [s for s in ("Leak'Check", "LeakQuery") if s in result.stdout + result.stderr]
    assert (tmp_path / ".orch").is_dir()
    for file in (f for f in tmp_path.rglob("*") if f.is_file() and not f.is_symlink()):
        assert b"LeakQuery" not in file.read_bytes() and b"Leak'Check" not in file.read_bytes(), file
