"""`orch sweep`, the driver's side: the spec's trials as one Ray Tune run, with the store as the
record. Everything here runs in the driver; what a trial runs on its worker is `run.trainable`.

- The spec is the only grid: the trials the store lacks become one `tune.grid_search` of
  `TrialPack`s, longest first by their estimated time (`run.plan.estimated_seconds`); short
  trials share a pack, and so one process (`run.packing`).
- Only the driver writes (see `run.callbacks`).
- Each trial saves its resumable state under `<storage>/checkpoints/<trial key>` at every
  checkpoint, so a retry, or a rerun after Ctrl-C or a killed driver, resumes where it stopped.
"""

import logging
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from db import Store, TrialStatus, mask_text
from db.rates import training_rates
from orchestrator.data.sources import source_of
from orchestrator.interrupts import raise_interrupt
from orchestrator.run.callbacks import tune_callback
from orchestrator.run.cells import TrialCell, TrialPack, key_of
from orchestrator.run.cluster import CONNECT_TIMEOUT_S, check_reachable, connect
from orchestrator.run.environment import sweep_environment
from orchestrator.run.inputs import changed_inputs
from orchestrator.run.leases import LEASE_STALE_S, Heartbeat, claim, driver_id
from orchestrator.run.outbox import STORE_WAIT_S
from orchestrator.run.packing import PACK_BELOW_S, sweep_packs
from orchestrator.run.parallel import DRIVER_CPU
from orchestrator.run.placement import check_resources
from orchestrator.run.plan import trial_rows
from orchestrator.run.progress import ProgressView
from orchestrator.run.retries import RetryBudget, retry_scheduler
from orchestrator.run.storage import DEFAULT_STORAGE, check_storage
from orchestrator.run.tracking import Tracker, TrackingTarget
from orchestrator.run.trainable import trainable
from orchestrator.sweepfile import Spec, TrialConfig

__all__ = ["SweepOptions", "SweepOutcome", "ray_session", "run_sweep"]


@dataclass(frozen=True)
class SweepOptions:
    max_concurrent: int | None = None
    retries: int = 2
    address: str | None = None  # an existing Ray cluster: "auto" or HOST:PORT
    connect_timeout_s: float = CONNECT_TIMEOUT_S  # how long the cluster has to answer
    num_cpus: int | None = None  # for a local Ray; default: this machine's CPUs
    num_gpus: float | None = None  # for a local Ray; default: the GPUs Ray detects
    storage: Path = Path(DEFAULT_STORAGE)  # checkpoints and Ray's files; shared on a cluster (run.storage)
    runner: Callable[..., Any] | None = None  # the trial runner; default training.loop.run_trial
    progress: Callable[[str], None] | None = None  # where progress text goes (the CLI: stderr)
    live: bool = False  # rewrite one progress line in place (a terminal)
    store_wait_s: float = STORE_WAIT_S  # how long an unreachable store is waited out
    lease_stale_s: float = LEASE_STALE_S  # a lease without a heartbeat this long is a dead driver's
    pack_below_s: float = PACK_BELOW_S  # trials estimated shorter share a process (0: none do)
    log: tuple[TrackingTarget, ...] = ()  # `--log`: also track each trial in MLflow, TensorBoard, W&B


@dataclass
class SweepOutcome:
    name: str
    store: str
    counts: dict[TrialStatus, int] = field(default_factory=dict)
    skipped: int = 0
    leased: int = 0  # trials left to another driver that holds a live lease on them
    restarted: int = 0  # trials whose unusable checkpoint was set aside and which started over
    wall_s: float = 0.0
    interrupted: bool = False

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 1 if self.counts.get(TrialStatus.FAILED) else 0

    def as_dict(self) -> dict:
        return {
            "sweep": self.name,
            "store": self.store,
            "counts": self.counts,
            "skipped": self.skipped,
            "leased_elsewhere": self.leased,
            "restarted": self.restarted,
            "wall_s": round(self.wall_s, 2),
            "interrupted": self.interrupted,
            "exit_code": self.exit_code,
        }

    def summary(self) -> str:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(self.counts.items())) or "nothing run"
        ending = " (interrupted: run the same command to resume)" if self.interrupted else ""
        leased = f"; {self.leased} run by another driver (live lease)" if self.leased else ""
        if self.restarted:
            leased += f"; {self.restarted} started over (an unusable checkpoint set aside)"
        return (
            f"sweep {self.name}: {counts}; {self.skipped} already in {self.store}{leased}; "
            f"{self.wall_s:.1f} s{ending}"
        )


def run_sweep(spec: Spec, url: str, options: SweepOptions) -> SweepOutcome:
    """Run every trial the store does not have as done or collapsed; record every result."""
    started = time.perf_counter()
    source_of(spec.data).check(spec.data, spec.eval)  # bad files: before any trial starts
    if options.address and options.address != "auto":  # a cluster nobody answers for: no store made
        check_reachable(options.address, options.connect_timeout_s)
    storage = check_storage(options.storage)
    notify = _notice(options.progress)
    with closing(Store.open(url, notify=notify)) as store, sweep_environment():
        statuses = store.trial_statuses(t.key for t in spec.trials)
        todo = [t for t in spec.trials if not (t.key in statuses and statuses[t.key].finished)]
        changed = changed_inputs(store, spec, finished=len(spec.trials) - len(todo))
        for line in changed if notify else ():
            notify(line)
        outcome = SweepOutcome(spec.name, store.url, skipped=len(spec.trials) - len(todo))
        previous = signal.signal(signal.SIGTERM, raise_interrupt)
        owns_ray = False
        try:
            # Ray first: a cluster that cannot be joined leaves nothing in the store, no trial pending.
            owns_ray = bool(todo) and _start_ray(options)
            signal.signal(signal.SIGTERM, raise_interrupt)  # Ray's driver installs a handler of its own
            if todo:
                check_resources(spec, todo)  # a trial no node can hold would wait forever
            owner = driver_id()
            todo = _record_and_lease(spec, store, todo, owner, options, outcome)
            if todo:
                outcome.restarted = _run_leased(spec, store, todo, owner, url, options, storage)
        except KeyboardInterrupt:
            outcome.interrupted = True
            _mark_interrupted(store, todo)
        finally:
            signal.signal(signal.SIGTERM, previous)
            if owns_ray:
                _stop_ray(options)
        finished = store.trial_statuses(t.key for t in todo)
        for status in finished.values():
            outcome.counts[status] = outcome.counts.get(status, 0) + 1
        outcome.wall_s = time.perf_counter() - started
        return outcome


def _record_and_lease(
    spec: Spec,
    store: Store,
    todo: list[TrialConfig],
    owner: str,
    options: SweepOptions,
    outcome: SweepOutcome,
) -> list[TrialConfig]:
    """Record the sweep and lease to `owner` what no other driver runs: the trials it holds."""
    # The file is stored with its secrets masked (a password on its `store:` line).
    store.record_sweep(spec.name, mask_text(spec.text), spec.text_hash, spec.source, trial_rows(spec))
    held = claim(store, (t.key for t in todo), owner, options.lease_stale_s)  # not another driver's
    outcome.leased = len(todo) - len(held)
    return [t for t in todo if t.key in held]


def _run_leased(
    spec: Spec,
    store: Store,
    todo: list[TrialConfig],
    owner: str,
    url: str,
    options: SweepOptions,
    storage: Path,
) -> int:
    """Run the trials `owner` holds, beating its leases' heartbeat: how many started over."""
    rates = training_rates(store, {t.objective for t in todo})
    packs = sweep_packs(spec, todo, rates, _cluster(), options.max_concurrent, options.pack_below_s)
    with Heartbeat(store, owner, options.lease_stale_s):
        view = ProgressView(todo, options.progress, options.live)
        tracker = Tracker(spec.name, list(options.log), todo, storage, view.note) if options.log else None
        return _run_tune(spec, packs, url, options, storage, view, tracker)


def _notice(progress: Callable[[str], None] | None) -> Callable[[str], None] | None:
    """A line of the sweep's progress about the store (a long wait), or nothing without one."""
    return None if progress is None else lambda text: progress(f"orch: {text}\n")


def _mark_interrupted(store: Store, trials: list[TrialConfig]) -> None:
    for key, status in store.trial_statuses(t.key for t in trials).items():
        if status in (TrialStatus.RUNNING, TrialStatus.PENDING):
            store.set_status(key, TrialStatus.INTERRUPTED, reason="the sweep was interrupted")


@contextmanager
def ray_session(options: SweepOptions) -> Iterator[SweepOptions]:
    """One Ray session for several sweeps (`orch sweep --until-decided`'s rounds): Ray started or
    joined once, and the options each `run_sweep` inside gets (they find Ray up and leave it)."""
    owns_ray = _start_ray(options)
    try:
        yield replace(options, address=None)
    finally:
        if owns_ray:
            _stop_ray(options)


def _start_ray(options: SweepOptions) -> bool:
    """Connect to a cluster, or start orch's local Ray; True when this call started Ray."""
    if options.address:
        return connect(options.address, options.connect_timeout_s)
    import ray

    if ray.is_initialized():
        return False
    from orchestrator.run.raylocal import local_ray_kwargs

    # Ray's default for a new local cluster is token authentication (it makes ~/.ray/auth_token
    # when there is none); its warning saying so on every sweep is silenced, the mode is kept.
    logging.getLogger("ray._private.authentication").setLevel(logging.ERROR)
    ray.init(
        **local_ray_kwargs(options.num_cpus, options.num_gpus),
        logging_level=logging.WARNING,
        log_to_driver=False,
    )
    return True


def _stop_ray(options: SweepOptions) -> None:
    import ray

    ray.shutdown()
    if not options.address:
        from orchestrator.run.raylocal import end_stragglers

        end_stragglers()


def _cluster() -> dict[str, float]:
    """What the live cluster holds in all ("CPU", "GPU", ...)."""
    import ray

    return ray.cluster_resources()


def _run_tune(
    spec: Spec,
    packs: list[TrialPack],
    url: str,
    options: SweepOptions,
    storage: Path,
    view: ProgressView,
    tracker: Tracker | None,
) -> int:
    """Run the packs as one Tune run; returns how many trials started over from an unusable
    checkpoint."""
    from ray import tune

    by_key = {pack.key: pack for pack in packs}
    asks = {key: _tune_ask(pack.ask) for key, pack in by_key.items()}
    budget = RetryBudget(options.retries)
    packed = {key: pack.keys for key, pack in by_key.items()}
    callback = tune_callback(url, view, options.store_wait_s, budget, packed, tracker)
    with_resources = tune.with_resources(
        tune.with_parameters(
            trainable, packs=by_key, storage=str(storage), runner=options.runner, retries=options.retries
        ),
        lambda config: asks[config["trial"]],
    )
    tuner = tune.Tuner(
        with_resources,
        param_space={"trial": tune.grid_search(list(by_key))},
        tune_config=tune.TuneConfig(
            max_concurrent_trials=options.max_concurrent,
            reuse_actors=True,
            scheduler=retry_scheduler(budget),
            trial_name_creator=_trial_name,
            trial_dirname_creator=_trial_name,
        ),
        run_config=tune.RunConfig(
            name=f"{spec.name}-{time.strftime('%Y%m%d-%H%M%S')}",
            storage_path=str(storage / "ray"),
            failure_config=tune.FailureConfig(max_failures=-1),  # the budget counts (run.retries)
            callbacks=[callback],
            verbose=0,
        ),
    )
    # Tune's warnings are about its own result files, which the store replaces; errors still show.
    logging.getLogger("ray.tune").setLevel(logging.ERROR)
    view.begin()
    try:
        tuner.fit()
        callback.writer.drain()  # what a batch or an outage held back, before the outcome is read
        return len(callback.restarted)
    except KeyboardInterrupt:
        callback.writer.flush(force=True)  # the last batch, one try: the store has what trials sent
        raise
    except Exception:
        if callback.writer.gave_up is not None:  # raised inside a trial's callback, wrapped by Tune
            raise callback.writer.gave_up from None
        raise
    finally:
        callback.writer.close()
        view.end()


def _tune_ask(cell: TrialCell) -> dict[str, float]:
    """What the Tune trial holds: a one-process trial's own resources; a data-parallel trial's
    driver only a sliver of a CPU, since Ray Train places its workers."""
    if cell.workers > 1:
        return {"cpu": DRIVER_CPU, "gpu": 0}
    return {"cpu": cell.cpu, "gpu": cell.gpu}


def _trial_name(trial: Any) -> str:
    return key_of(trial)[:12]
