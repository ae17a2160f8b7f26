"""`orch sweep --log mlflow|tensorboard|wandb`: each orch trial's checkpoints, config and final
status, logged through Ray Tune's own logger callbacks (`MLflowLoggerCallback`,
`TBXLoggerCallback`, `WandbLoggerCallback`) so a sweep shows up where researchers already watch.

Tune sees packs (`run.packing`), not orch trials, so Tune's callbacks are not handed to Tune:
the driver's `TuneEvents` decodes each orch trial's start, reports and end and passes them here,
where every orch trial is a `TrackedTrial` of its own for Tune's callbacks. Step = samples seen.

The store stays the record: a backend that fails is one warning line and is dropped for the rest
of the sweep; no trial fails for it. Backends are built on the first event, in the driver, so
the callback that holds this stays picklable for Tune. What Tune pickles into its saved state
(`tuner.pkl`) is the tracker with its targets masked and no backend: a tracking URI's password
stays in the driver's memory, never on disk (orch never restores a tuner from that file).
"""

import importlib.util
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from db import CheckpointReport, TrialStatus, mask_text, mask_url
from orchestrator.errors import InputError
from orchestrator.sweepfile import TrialConfig

__all__ = ["BACKENDS", "TrackedTrial", "Tracker", "TrackingTarget", "mlflow_uri", "parse_target"]

BACKENDS = ("mlflow", "tensorboard", "wandb")
_NAME_UNSAFE = re.compile(r"[^\w.\- /]")  # what MLflow refuses in a metric name ('@' in mutual_knn@10)


@dataclass(frozen=True)
class TrackingTarget:
    """One `--log` value: a backend and where it writes (an MLflow tracking URI, a W&B project);
    None where its environment (MLFLOW_TRACKING_URI, WANDB_PROJECT) or orch's default decides."""

    backend: str
    where: str | None = None

    @property
    def label(self) -> str:
        return self.backend if self.where is None else f"{self.backend}={masked(self.where)}"


def masked(where: str) -> str:
    """A target's value as it may be shown or stored: a URI's password and secret parameters
    masked, whatever they hold (quotes and spaces included); a project name as it is."""
    return mask_url(where) if "://" in where else where


def mlflow_uri(where: str) -> str:
    """A tracking URI as MLflow 3 takes it: a folder (or a `file:` URI, MLflow's file store,
    which it no longer writes) is MLflow's SQLite store `mlflow.db` inside it, made here."""
    if "://" in where and not where.startswith("file:"):
        return where
    folder = Path(where.removeprefix("file://").removeprefix("file:")).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'mlflow.db'}"


def parse_target(value: str) -> TrackingTarget:
    """`mlflow[=URI]`, `tensorboard`, `wandb[=PROJECT]`: a target, or an InputError naming the fix."""
    backend, equals, where = value.partition("=")
    shown = f"{backend}{equals}{masked(where)}"  # an error echoes no password
    if backend not in BACKENDS:
        raise InputError(f"--log {shown}: unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    if equals and backend == "tensorboard":
        raise InputError(
            f"--log {shown}: tensorboard takes no value; it writes under --storage's tracking folder"
        )
    if equals and not where:
        raise InputError(f"--log {value}: give a value after =, or drop the =")
    package = {"mlflow": "mlflow", "tensorboard": "tensorboardX", "wandb": "wandb"}[backend]
    if importlib.util.find_spec(package) is None:
        raise InputError(f"--log {backend}: {package} is not installed; pip install 'orch[tracking]'")
    if backend == "wandb" and not _wandb_can_log():  # else Ray's W&B actors fail, a traceback each
        raise InputError(
            f"--log {shown}: no W&B login; run `wandb login` or set WANDB_API_KEY, or log offline "
            "(WANDB_MODE=offline) and `wandb sync` later"
        )
    return TrackingTarget(backend, where or None)


def _wandb_can_log() -> bool:
    """W&B logs offline, or online with a key in the environment or ~/.netrc (as `wandb login`
    leaves it)."""
    import netrc

    if os.environ.get("WANDB_MODE") in ("offline", "disabled", "dryrun") or os.environ.get("WANDB_API_KEY"):
        return True
    try:
        return netrc.netrc().authenticators("api.wandb.ai") is not None
    except (OSError, netrc.NetrcParseError):
        return False


@dataclass(eq=False)  # hashed by identity: Tune's callbacks key their runs by the trial object
class TrackedTrial:
    """What Tune's logger callbacks read of a trial, for one orch trial."""

    trial_id: str  # the orch trial key
    config: dict[str, Any]
    local_path: str  # its TensorBoard folder; W&B's working folder
    experiment_dir_name: str  # the sweep: W&B's group
    evaluated_params: dict[str, Any] = field(default_factory=dict)  # TensorBoard's hparams, at its end
    checkpoint: None = None
    samples_seen: int = 0  # at its last checkpoint

    def init_local_path(self) -> None:
        Path(self.local_path).mkdir(parents=True, exist_ok=True)

    def __str__(self) -> str:  # the run's name in each backend
        return self.trial_id[:12]


@contextmanager
def _environment_kept(name: str) -> Iterator[None]:
    """`name` in the environment as it was before: a backend that writes it (MLflow puts its
    tracking URI there, password and all) leaks it to the next sweep of this process otherwise."""
    before = os.environ.get(name)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def trial_params(trial: TrialConfig) -> dict[str, Any]:
    """The trial's config as flat parameters (`objective`, `train.lr`, ...), with its full key."""
    from ray.tune.utils import flatten_dict

    identity = {name: value for name, value in trial.identity().items() if name != "key_version"}
    return {"trial_key": trial.key, **flatten_dict(identity, delimiter=".")}


def checkpoint_metrics(report: CheckpointReport) -> dict[str, float]:
    """One checkpoint's numbers: each row's value and SE (`se/NAME`), samples seen and FLOPs. A
    row is named by its metric, then its reference and eval set where the sweep scores several;
    training rows (no reference) by their metric alone."""
    scored = [row for row in report.rows if row.reference]
    several = len({(row.reference, row.eval_set) for row in scored}) > 1
    metrics: dict[str, float] = {"samples_seen": float(report.samples_seen)}
    for row in report.rows:
        name = f"{row.metric}/{row.reference}/{row.eval_set}" if several and row.reference else row.metric
        name = _NAME_UNSAFE.sub("_", name)
        metrics[name] = row.value
        if row.se is not None:
            metrics[f"se/{name}"] = row.se
    if report.rows:  # every row of a checkpoint carries the FLOPs spent to reach it
        metrics["flops"] = report.rows[0].flops
    return metrics


class Tracker:
    """The sweep's tracking backends, fed one orch trial at a time by the driver."""

    def __init__(
        self,
        sweep: str,
        targets: list[TrackingTarget],
        trials: list[TrialConfig],
        storage: Path,
        warn: Callable[[str], None],
    ) -> None:
        self.sweep = sweep
        self.targets = targets
        self.params = {trial.key: trial_params(trial) for trial in trials}  # what each run logs as its config
        self.storage = storage
        self.warn = warn
        self._backends: dict[TrackingTarget, Any] | None = None  # built on the first event
        self._trials: dict[str, TrackedTrial] = {}

    def __getstate__(self) -> dict[str, Any]:
        shown = [TrackingTarget(t.backend, t.where and masked(t.where)) for t in self.targets]
        return vars(self) | {"targets": shown, "_backends": None}

    def started(self, key: str) -> None:
        if key in self._trials:  # a retry resumes the same run
            return
        trial = self._trials[key] = TrackedTrial(
            key, self.params[key], str(self._folder() / key[:12]), self.sweep
        )
        self._each("log_trial_start", trial)

    def checkpoint(self, report: CheckpointReport) -> None:
        trial = self._trials.get(report.trial_key)
        if trial is None:  # a finished trial's rows, re-reported from its checkpoint: logged once
            return
        trial.samples_seen = report.samples_seen
        self._log(trial, checkpoint_metrics(report))

    def finished(self, key: str, status: TrialStatus, reason: str | None) -> None:
        trial = self._trials.pop(key, None)
        if trial is None:
            return
        self._log(trial, {f"status/{status}": 1.0})
        trial.evaluated_params = {**trial.config, "status": str(status), "reason": reason or ""}
        self._each("log_trial_end", trial, status is TrialStatus.FAILED)

    def _log(self, trial: TrackedTrial, metrics: dict[str, float]) -> None:
        """`metrics` at the trial's samples seen: Tune's callbacks take the step from
        `timesteps_total`, or where that is 0 from `training_iteration`, so both carry it."""
        steps = {"timesteps_total": trial.samples_seen, "training_iteration": trial.samples_seen}
        self._each("log_trial_result", trial.samples_seen, trial, metrics | steps)

    def close(self) -> None:
        """Wait for the backends' writers (W&B's actors finish their files)."""
        self._each("on_experiment_end", [])
        self._backends = {}  # let them go while Ray is up (W&B's callback asks Ray as it is deleted)

    def _folder(self) -> Path:
        return self.storage / "tracking" / self.sweep

    def _each(self, method: str, *args: Any) -> None:
        for target, callback in list(self._live().items()):
            try:
                getattr(callback, method)(*args)
            except Exception as error:  # a backend's failure never fails a trial: the store has it all
                self._drop(target, error)

    def _live(self) -> dict[TrackingTarget, Any]:
        if self._backends is None:
            self._backends = {}
            for target in self.targets:
                try:
                    self._backends[target] = self._build(target)
                except Exception as error:
                    self._drop(target, error)
        return self._backends

    def _drop(self, target: TrackingTarget, error: BaseException) -> None:
        assert self._backends is not None
        self._backends.pop(target, None)
        said = str(error) if target.where is None else str(error).replace(target.where, masked(target.where))
        first = (said.strip().splitlines() or [type(error).__name__])[0][:200]  # the URI as given, masked
        self.warn(
            f"orch: warning: --log {target.label} stopped ({mask_text(first)}); "
            "the sweep goes on and the store keeps every row"
        )

    def _build(self, target: TrackingTarget) -> Any:
        """Tune's own logger callback for `target`, set up (MLflow's experiment is made here)."""
        if target.backend == "mlflow":
            from ray.air.integrations.mlflow import MLflowLoggerCallback

            logging.getLogger("mlflow").setLevel(logging.WARNING)  # its database set-up talks at INFO
            asked = target.where or os.environ.get("MLFLOW_TRACKING_URI") or str(self._folder().parent)
            callback = MLflowLoggerCallback(
                mlflow_uri(asked), experiment_name=self.sweep, tags={"orch.sweep": self.sweep}
            )
            with _environment_kept("MLFLOW_TRACKING_URI"):  # MLflow's set_tracking_uri writes it
                callback.setup()
            return callback
        if target.backend == "tensorboard":
            from ray.tune.logger import TBXLoggerCallback

            callback = TBXLoggerCallback()
        else:
            from ray.air.integrations.wandb import WandbLoggerCallback

            project = target.where or os.environ.get("WANDB_PROJECT") or "orch"
            mode = (
                {"mode": os.environ["WANDB_MODE"]} if "WANDB_MODE" in os.environ else {}
            )  # for Ray's actors
            callback = WandbLoggerCallback(project=project, group=self.sweep, tags=[self.sweep], **mode)
        callback.setup()
        return callback
