"""`orch sweep --retries`: failures use retries, lost nodes do not.

Tune counts every error against one `max_failures`, a node that went away (a preempted GPU, a
killed raylet) as much as a bug. A lost node is not the trial's fault, so orch runs Tune with
unlimited retries and keeps the count here. After each error `RetryBudget.record` gives a verdict:

- LOST: the error says the trial's node died, and the cluster lists that node as dead. The trial
  is requeued and resumes from its last checkpoint on a live node; no retry is used.
- RETRY: any other error, with a retry left.
- GIVE_UP: no retry left. The scheduler from `retry_scheduler` stops the requeued trial (a Tune
  scheduler may stop trials), and the callback records it as failed with its error.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.run.cells import key_of

__all__ = ["GIVE_UP", "LOST", "RETRY", "RetryBudget", "error_line", "retry_scheduler"]

LOST, RETRY, GIVE_UP = "lost", "retry", "give up"
NODE_DIED = re.compile(r"its node has died\. Node Id: ([0-9a-f]+)")  # Ray's ActorDiedError text
FAILURE_HEADER = "Failure # "  # Tune appends each error to the trial's error file after this


@dataclass
class RetryBudget:
    """Per trial key: the failures counted, the nodes lost, and the verdict on its last error."""

    retries: int
    failures: dict[str, int] = field(default_factory=dict)
    lost: dict[str, int] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)
    to_stop: set[str] = field(default_factory=set)  # given up, still queued by Tune

    def record(self, key: str, error: str, dead_nodes: set[str]) -> str:
        """The verdict on `error`, the text of the trial's latest failure."""
        died = NODE_DIED.search(error)
        if died and died.group(1) in dead_nodes:
            self.lost[key] = self.lost.get(key, 0) + 1
            verdict = LOST
        else:
            self.failures[key] = self.failures.get(key, 0) + 1
            verdict = RETRY if self.failures[key] <= self.retries else GIVE_UP
        if verdict == GIVE_UP:
            self.to_stop.add(key)
        self.verdicts[key] = verdict
        return verdict

    def gave_up(self, key: str) -> bool:
        return self.verdicts.get(key) == GIVE_UP


def last_failure(trial: Any) -> str:
    """The text of the trial's latest error, from Tune's error file ('' when there is none)."""
    path = getattr(trial, "error_file", None)
    text = Path(path).read_text() if path and Path(path).exists() else ""
    return text.rsplit(FAILURE_HEADER, 1)[-1]


def error_line(trial: Any) -> str:
    """The latest error's last line ('ValueError: boom'), for the store and the progress view."""
    lines = [line.strip() for line in last_failure(trial).splitlines() if line.strip()]
    return (lines[-1] if lines else "unknown error")[:500]


def retry_scheduler(budget: RetryBudget) -> Any:
    """A FIFO `ray.tune` scheduler that records each error in `budget` and stops the trials that
    have no retry left (Ray imported only when a sweep runs)."""
    import ray
    from ray.tune.experiment import Trial
    from ray.tune.schedulers import FIFOScheduler

    class _RetryScheduler(FIFOScheduler):
        def on_trial_error(self, tune_controller: Any, trial: Any) -> None:
            dead = {node["NodeID"] for node in ray.nodes() if not node.get("Alive")}
            budget.record(key_of(trial), last_failure(trial), dead)
            super().on_trial_error(tune_controller, trial)

        def choose_trial_to_run(self, tune_controller: Any) -> Any:
            if budget.to_stop:  # looked for only then: Tune asks every 0.1 s, of every trial
                for trial in tune_controller.get_trials():
                    if trial.status == Trial.PENDING and key_of(trial) in budget.to_stop:
                        budget.to_stop.discard(key_of(trial))
                        tune_controller.stop_trial(trial)
            return super().choose_trial_to_run(tune_controller)

    return _RetryScheduler()
