"""The typed rows that cross the store's two seams: what a trial hands the driver's writer, and
what the fits read back. Both sides import these; a renamed field fails in review, not in a
running sweep."""

import types
from dataclasses import asdict, dataclass, fields
from typing import Any, get_type_hints

from db.status import TrialStatus

__all__ = [
    "BaselineRow",
    "CheckpointReport",
    "FitRow",
    "ForecastRow",
    "GapRow",
    "Measurement",
    "RoundRow",
    "SweepRow",
    "TrialInSweep",
    "TrialMeasurement",
    "TrialRow",
    "TrialState",
    "VerdictRow",
    "checked",
    "columns",
]


def columns(row_type: type) -> list[str]:
    """The field names of a row type, in order: the columns of its frame."""
    return [field.name for field in fields(row_type)]


def checked(row_type: type, raw: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """`raw` (JSON read back from a file) as `row_type`'s fields, each of the type it declares
    (an int is a float, a bool is no number); a TypeError names the first that is not. Fields in
    `skip` are the caller's to check."""
    name = row_type.__name__
    if not isinstance(raw, dict):
        raise TypeError(f"{name}: expected an object, got {type(raw).__name__}")
    hints = get_type_hints(row_type)
    if missing := [field for field in hints if field not in raw]:
        raise TypeError(f"{name}: missing {', '.join(missing)}")
    if extra := [field for field in raw if field not in hints]:
        raise TypeError(f"{name}: unknown {', '.join(map(str, extra))}")
    for field, hint in hints.items():
        if field not in skip and not _holds(hint, raw[field]):
            raise TypeError(f"{name}.{field}: {raw[field]!r} is not {getattr(hint, '__name__', hint)}")
    return {field: raw[field] for field in hints}


def _holds(hint: Any, value: Any) -> bool:
    if isinstance(hint, types.UnionType):
        return any(_holds(part, value) for part in hint.__args__)
    if hint is type(None):
        return value is None
    if isinstance(value, bool):
        return hint is bool
    if hint is float:
        return isinstance(value, int | float)
    if isinstance(hint, type) and issubclass(hint, TrialStatus):
        return value in set(TrialStatus)
    return isinstance(value, hint)


@dataclass(frozen=True)
class Measurement:
    """One number at one checkpoint; (trial_key, samples_seen, metric, reference, eval_set) is
    unique in the store."""

    trial_key: str
    samples_seen: int
    metric: str  # 'mutual_knn@10', or 'mutual_knn@10/layer2'
    reference: str
    eval_set: str
    value: float
    step: int
    flops: float
    wall_s: float
    se: float | None  # eval-item bootstrap standard error
    null_mean: float | None  # the score against shuffled references: mean and 95th percentile
    null_p95: float | None
    chance: float | None  # the metric's expected value for unrelated features

    @classmethod
    def from_dict(cls, raw: Any) -> "Measurement":
        """A row read back from a trial's report or history, checked field by field."""
        return cls(**checked(cls, raw))


@dataclass(frozen=True)
class TrialMeasurement(Measurement):
    """A measurement with its trial's columns: a row of `Store.measurements_frame`."""

    objective: str
    model: str
    n_params: int | None
    data_size: int
    seed: int
    budget_samples: int
    status: str
    sweep: str
    held_out: int


@dataclass(frozen=True)
class TrialRow:
    """A trial as `Store.record_sweep` registers it (pending when new)."""

    key: str
    config: str  # the TrialConfig's JSON
    objective: str
    model: str
    data_size: int
    seed: int
    budget_samples: int
    held_out: bool = False


@dataclass(frozen=True)
class SweepRow:
    """A sweep as the store records it: its file's text (secrets masked) and where it came from."""

    name: str
    spec_text: str
    spec_hash: str
    source: str
    created: float
    updated: float


@dataclass(frozen=True)
class TrialState:
    """A trial's record in the store (`Store.find_trial`)."""

    key: str
    config: str
    objective: str
    model: str
    n_params: int | None
    data_size: int
    seed: int
    budget_samples: int
    status: str
    reason: str | None
    attempts: int
    samples_seen: int
    host: str | None
    device: str | None
    created: float
    started: float | None
    finished: float | None
    updated: float
    lease_owner: str | None  # the driver running it now (host:pid:token)
    lease_heartbeat: float | None


@dataclass(frozen=True)
class TrialInSweep(TrialState):
    """A row of `Store.trials_frame`: a trial's record with the sweep that lists it."""

    sweep: str
    held_out: int


@dataclass(frozen=True)
class CheckpointReport:
    """What a trial reports at one checkpoint: its rows and where the trial stands. It travels
    through Ray Tune as a plain dict (`as_dict`) and is read back with `from_dict`."""

    trial_key: str
    samples_seen: int
    status: TrialStatus  # running | done | collapsed
    reason: str | None
    n_params: int
    host: str
    device: str
    rows: tuple[Measurement, ...]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: Any) -> "CheckpointReport":
        """The report a trial sent, checked field by field (TypeError names what is wrong)."""
        values = checked(cls, raw, skip=("rows",))
        if not isinstance(values["rows"], list | tuple):
            raise TypeError(f"CheckpointReport.rows: expected a list, got {type(values['rows']).__name__}")
        values["status"] = TrialStatus(values["status"])
        values["rows"] = tuple(Measurement.from_dict(row) for row in values["rows"])
        return cls(**values)


@dataclass(frozen=True)
class BaselineRow:
    """A published (or measured) curve point to show beside a sweep's curves; `samples` None
    where the source gives no sample count. A measured one (`orch baselines measure`) carries its
    noise and null where the metric has them, and the sha256 of its features' sidecar."""

    source: str
    model: str
    objective: str
    metric: str
    reference: str
    eval_set: str
    samples: float | None
    value: float
    note: str = ""
    se: float | None = None
    null_mean: float | None = None
    null_p95: float | None = None
    chance: float | None = None
    sidecar_sha256: str | None = None


@dataclass(frozen=True)
class FitRow:
    """One curve's fit in a fit run: its heaviest law; JSON columns hold the rest."""

    sweep: str
    objective: str
    model: str
    metric: str
    reference: str
    eval_set: str
    law: str
    params: str  # JSON: values, errors, covariance
    flags: str  # JSON list
    provenance: str  # JSON: every law, its weight and starts, bounds, points, backtests
    created: float


@dataclass(frozen=True)
class ForecastRow:
    """One forecast of a fitted curve; the store links it to its fit."""

    sweep: str
    objective: str
    model: str
    metric: str
    reference: str
    eval_set: str
    samples: float
    seeds: int
    prediction: float
    ci_low: float
    ci_high: float
    pi_low: float
    pi_high: float
    extrapolation: float
    flags: str  # JSON list
    created: float


@dataclass(frozen=True)
class GapRow:
    """A sample gap on one axis (samples or flops); the ratio and interval None where unknown."""

    sweep: str
    faster: str
    slower: str
    model: str
    metric: str
    reference: str
    target: float
    ratio: float | None
    ratio_low: float | None
    ratio_high: float | None
    axis: str  # samples | flops
    flags: str  # JSON list
    created: float
    identifiable: int  # 1 when the data identify the ratio, else 0
    reasons: str  # JSON list
    bound_side: str | None  # ">=" or "<=" where only a bound holds
    bound_ratio: float | None
    fit_run: str  # the fit run's id (its report folder)


@dataclass(frozen=True)
class VerdictRow:
    """A claim's verdict as one fit run gave it; `detail` holds the rest as JSON."""

    sweep: str
    claim: str
    kind: str
    says: str
    verdict: str
    value: float | None
    low: float | None
    high: float | None
    detail: str  # JSON
    created: float


@dataclass(frozen=True)
class RoundRow:
    """One round of `orch sweep --until-decided`: its picks as the include entries they became,
    their FLOPs, and each claim's interval before it, expected after it and (once its runs
    landed) found after it. The JSON fields are the driver's (`orchestrator.cli.until_decided`)."""

    sweep: str
    round: int
    runs: str  # JSON list of include entries: objective, model, data_size, seed
    flops: float
    budget: float | None
    confidence: float
    before: str  # JSON: claim id -> {verdict, low, high, width}
    expected: str  # JSON: claim id -> expected width
    after: str | None
    started: float
    finished: float | None
