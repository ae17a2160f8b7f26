"""A trial's life cycle: its statuses, the ones that end it, and the moves between them."""

from enum import StrEnum

__all__ = ["ALLOWED_FROM", "FINISHED", "TrialStatus"]


class TrialStatus(StrEnum):
    """Where a trial stands; stored as its value ('pending', 'running', ...)."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    COLLAPSED = "collapsed"
    INTERRUPTED = "interrupted"

    @property
    def finished(self) -> bool:
        """Whether the trial reached its end (a rerun skips it)."""
        return self in FINISHED


FINISHED = (TrialStatus.DONE, TrialStatus.COLLAPSED)

# A trial may move to the status on the left only from those on the right.
ALLOWED_FROM: dict[TrialStatus, tuple[TrialStatus, ...]] = {
    TrialStatus.RUNNING: (
        TrialStatus.PENDING,
        TrialStatus.RUNNING,
        TrialStatus.INTERRUPTED,
        TrialStatus.FAILED,
    ),
    TrialStatus.DONE: (TrialStatus.RUNNING,),
    TrialStatus.FAILED: (TrialStatus.RUNNING, TrialStatus.PENDING, TrialStatus.INTERRUPTED),
    TrialStatus.COLLAPSED: (TrialStatus.RUNNING,),
    TrialStatus.INTERRUPTED: (TrialStatus.RUNNING, TrialStatus.PENDING),
}
