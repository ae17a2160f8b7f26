"""What a trial's processes tell the driver, typed. Each message travels as one key of a Tune
result (Tune carries plain dicts): a worker writes it with `result_of`, the driver reads every
message of a result with `read`, in the order it acts on them.

- `Workers`: a data-parallel trial's first result, its workers' placement group (the driver
  removes it whenever the trial stops);
- `Started`: the trial (of the pack) that starts now;
- `Restarted`: its checkpoint was unusable, set aside, and the trial starts over;
- `Failed`: a packed trial's error, caught in the pack's process (`retry`: it is retried there);
- `Reported`: a `CheckpointReport` as a plain dict, read back with `CheckpointReport.from_dict`
  (`resumed_at`: in the first report of a trial resumed from a checkpoint).
"""

from dataclasses import dataclass
from typing import Any

__all__ = ["Failed", "Message", "Reported", "Restarted", "Started", "Workers", "read", "result_of"]

REPORT, RESUMED = "orch_checkpoint", "orch_resumed_at"


@dataclass(frozen=True)
class Workers:
    placement_group: str


@dataclass(frozen=True)
class Started:
    key: str


@dataclass(frozen=True)
class Restarted:
    key: str
    reason: str


@dataclass(frozen=True)
class Failed:
    key: str
    error: str
    retry: bool


@dataclass(frozen=True)
class Reported:
    report: dict  # `CheckpointReport.as_dict()`: the driver checks it field by field
    resumed_at: int | None = None


Message = Workers | Started | Restarted | Failed | Reported
_KEYS = {Workers: "orch_workers", Started: "orch_started", Restarted: "orch_restarted", Failed: "orch_failed"}


def result_of(*messages: Message) -> dict[str, Any]:
    """The Tune result that carries `messages`."""
    result: dict[str, Any] = {}
    for message in messages:
        if isinstance(message, Reported):
            result[REPORT] = message.report
            if message.resumed_at is not None:
                result[RESUMED] = message.resumed_at
        elif isinstance(message, Workers | Started):
            result[_KEYS[type(message)]] = next(iter(vars(message).values()))
        else:
            result[_KEYS[type(message)]] = vars(message)
    return result


def read(result: dict[str, Any]) -> list[Message]:
    """Every message a Tune result carries, in the order the driver acts on them."""
    found: list[Message] = []
    if _KEYS[Workers] in result:
        found.append(Workers(result[_KEYS[Workers]]))
    if _KEYS[Started] in result:
        found.append(Started(result[_KEYS[Started]]))
    for kind in (Restarted, Failed):
        if _KEYS[kind] in result:
            found.append(kind(**result[_KEYS[kind]]))
    if REPORT in result:
        found.append(Reported(result[REPORT], result.get(RESUMED)))
    return found
