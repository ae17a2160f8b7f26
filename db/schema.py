"""The store's tables. `SCHEMA_VERSION` changes with every change here, and `db.migrations` says
how an older store reaches it. A name has one width wherever it is stored (`WIDTHS`)."""

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from db.status import TrialStatus

__all__ = [
    "MEASUREMENT_NOISE",
    "POSITIONS_PER_SAMPLE",
    "SCHEMA_VERSION",
    "TOKENS_PER_SAMPLE",
    "TRAINING_ROWS",
    "TRAIN_LOSS",
    "WIDTHS",
    "baselines",
    "fits",
    "forecasts",
    "gaps",
    "measurements",
    "metadata",
    "orch_meta",
    "rounds",
    "sweep_trials",
    "sweeps",
    "trials",
    "verdicts",
]

SCHEMA_VERSION = 10
# Beside each measurement: its eval-item standard error, its permutation null (mean, 95th
# percentile) and the metric's chance level; NULL where a metric has none.
MEASUREMENT_NOISE = ("se", "null_mean", "null_p95", "chance")
TRAIN_LOSS = "train_loss"  # a trial's training-loss rows: no reference, eval set "train"
# What a trial's training ran, as rows beside its loss: real tokens and computed positions (a batch
# is padded to its longest row) per sample so far, the lengths its FLOPs are counted at
TOKENS_PER_SAMPLE, POSITIONS_PER_SAMPLE = "tokens_per_sample", "positions_per_sample"
TRAINING_ROWS = (TRAIN_LOSS, TOKENS_PER_SAMPLE, POSITIONS_PER_SAMPLE)
# The width of each kind of name, the same in every table that stores it.
WIDTHS = {"key": 64, "sweep": 200, "objective": 64, "model": 128, "metric": 64, "reference": 128}
WIDTHS |= {"eval_set": 128, "status": 16, "law": 32, "host": 255, "device": 64, "axis": 16}
WIDTHS |= {"claim": 128, "verdict": 16, "fit_run": 32, "side": 2}


BASELINE_KEY = ("source", "model", "objective", "metric", "reference", "eval_set", "samples", "note")


def _name(kind: str) -> String:
    return String(WIDTHS[kind])


def _curve() -> list[Column]:
    """The columns that name one fitted curve: its sweep, objective, model, metric, reference
    and eval set (fresh Column objects for each table)."""
    kinds = ("sweep", "objective", "model", "metric", "reference", "eval_set")
    return [Column(kind, _name(kind), nullable=False) for kind in kinds]


metadata = MetaData()

orch_meta = Table(
    "orch_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

sweeps = Table(
    "sweeps",
    metadata,
    Column("name", _name("sweep"), primary_key=True),
    Column("spec_text", Text, nullable=False),
    Column("spec_hash", String(64), nullable=False),
    Column("source", Text, nullable=False),
    Column("created", Float, nullable=False),  # unix seconds
    Column("updated", Float, nullable=False),
)

trials = Table(
    "trials",
    metadata,
    Column("key", _name("key"), primary_key=True),
    Column("config", Text, nullable=False),  # the TrialConfig's JSON
    Column("objective", _name("objective"), nullable=False),
    Column("model", _name("model"), nullable=False),
    Column("n_params", BigInteger),  # measured from the module once the trial has built it
    Column("data_size", BigInteger, nullable=False),
    Column("seed", Integer, nullable=False),
    Column("budget_samples", BigInteger, nullable=False),
    Column("status", _name("status"), nullable=False, default=TrialStatus.PENDING.value),
    Column("reason", Text),
    Column("attempts", Integer, nullable=False, default=0),
    Column("samples_seen", BigInteger, nullable=False, default=0),
    Column("host", _name("host")),
    Column("device", _name("device")),
    Column("created", Float, nullable=False),
    Column("started", Float),
    Column("finished", Float),
    Column("updated", Float, nullable=False),
    # The driver running the trial now (host:pid:token) and its last heartbeat, unix seconds;
    # NULL when no driver holds it. A second driver skips a trial under a live lease.
    Column("lease_owner", _name("host")),
    Column("lease_heartbeat", Float),
)

sweep_trials = Table(
    "sweep_trials",
    metadata,
    Column("sweep", _name("sweep"), ForeignKey("sweeps.name", ondelete="CASCADE"), nullable=False),
    Column("trial_key", _name("key"), ForeignKey("trials.key", ondelete="CASCADE"), nullable=False),
    Column("held_out", Integer, nullable=False, default=0),
    PrimaryKeyConstraint("sweep", "trial_key"),
)

measurements = Table(
    "measurements",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("trial_key", _name("key"), ForeignKey("trials.key", ondelete="CASCADE"), nullable=False),
    Column("samples_seen", BigInteger, nullable=False),
    Column("metric", _name("metric"), nullable=False),  # 'mutual_knn@10', or 'mutual_knn@10/layer2'
    Column("reference", _name("reference"), nullable=False),
    Column("eval_set", _name("eval_set"), nullable=False),
    Column("value", Float, nullable=False),
    Column("step", BigInteger, nullable=False),
    Column("flops", Float, nullable=False),
    Column("wall_s", Float, nullable=False),
    *(Column(name, Float) for name in MEASUREMENT_NOISE),
    UniqueConstraint("trial_key", "samples_seen", "metric", "reference", "eval_set", name="measurement_once"),
)

baselines = Table(
    "baselines",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("source", Text, nullable=False),
    Column("model", _name("model"), nullable=False),
    Column("objective", _name("objective"), nullable=False),
    Column("metric", _name("metric"), nullable=False),
    Column("reference", _name("reference"), nullable=False),
    Column("eval_set", _name("eval_set"), nullable=False),
    Column("samples", Float),  # None when the source gives no sample count
    Column("value", Float, nullable=False),
    Column("note", Text, nullable=False, default=""),
    # A measured baseline's noise, as a trial's value has it, and the sha256 of the sidecar of
    # the features it was measured on (`orch baselines measure`); NULL for a published one.
    *(Column(name, Float) for name in MEASUREMENT_NOISE),
    Column("sidecar_sha256", Text),
    # One row per point of a published curve; a row without samples is kept once by the store
    # (SQL never finds two NULLs equal).
    UniqueConstraint(*BASELINE_KEY, name="baseline_point_once"),
)

fits = Table(
    "fits",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *_curve(),
    Column("law", _name("law"), nullable=False),
    Column("params", Text, nullable=False),  # JSON: values, errors, covariance
    Column("flags", Text, nullable=False),  # JSON list
    Column("provenance", Text, nullable=False),  # JSON: bounds, starts, filters, versions
    Column("created", Float, nullable=False),
)

forecasts = Table(
    "forecasts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("fit_id", Integer, ForeignKey("fits.id", ondelete="CASCADE"), nullable=False),
    *_curve(),
    Column("samples", Float, nullable=False),
    Column("seeds", Integer, nullable=False),
    Column("prediction", Float, nullable=False),
    Column("ci_low", Float, nullable=False),
    Column("ci_high", Float, nullable=False),
    Column("pi_low", Float, nullable=False),
    Column("pi_high", Float, nullable=False),
    Column("extrapolation", Float, nullable=False),
    Column("flags", Text, nullable=False),
    Column("created", Float, nullable=False),
)

gaps = Table(
    "gaps",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sweep", _name("sweep"), nullable=False),
    Column("faster", _name("objective"), nullable=False),
    Column("slower", _name("objective"), nullable=False),
    Column("model", _name("model"), nullable=False),
    Column("metric", _name("metric"), nullable=False),
    Column("reference", _name("reference"), nullable=False),
    Column("target", Float, nullable=False),
    Column("ratio", Float),  # None when A never reaches the target
    Column("ratio_low", Float),  # None without an interval (published single checkpoints)
    Column("ratio_high", Float),
    Column("axis", _name("axis"), nullable=False),  # samples | flops
    Column("flags", Text, nullable=False),
    Column("created", Float, nullable=False),
    # schema 8: what the fit knew of the gap (NULL in rows written before)
    Column("identifiable", Integer),  # 1 when the data identify the ratio
    Column("reasons", Text),  # JSON list: why not, in words
    Column("bound_side", _name("side")),  # ">=" or "<=" where only a bound holds
    Column("bound_ratio", Float),
    Column("fit_run", _name("fit_run")),  # the fit run's id: its report folder
)

verdicts = Table(
    "verdicts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sweep", _name("sweep"), nullable=False),
    Column("claim", _name("claim"), nullable=False),  # the claim's id in its claims file
    Column("kind", _name("axis"), nullable=False),  # gap | level | order | forecast
    Column("says", Text, nullable=False),
    Column("verdict", _name("verdict"), nullable=False),  # supported | contradicted | inconclusive
    Column("value", Float),  # None where nothing was measured
    Column("low", Float),  # the interval; None without one
    Column("high", Float),
    Column("detail", Text, nullable=False),  # JSON: the claim, basis, reasons, caveats, missing, axes
    Column("created", Float, nullable=False),  # the fit run's time, shared with its fits
)

# `orch sweep --until-decided`: one row per round, written before its picks run (so that a rerun
# after a killed driver runs the same picks again, never new ones) and finished once they landed.
rounds = Table(
    "rounds",
    metadata,
    Column("sweep", _name("sweep"), ForeignKey("sweeps.name", ondelete="CASCADE"), nullable=False),
    Column("round", Integer, nullable=False),  # 1, 2, ...: the grid is before round 1
    Column("runs", Text, nullable=False),  # JSON: the include entries the picks became (seeds fixed)
    Column("flops", Float, nullable=False),  # the picks' FLOPs as the planner priced them
    Column("budget", Float),  # the loop's budget in FLOPs; NULL without one
    Column("confidence", Float, nullable=False),  # each look's confidence (the looks share 5%)
    Column("before", Text, nullable=False),  # JSON: claim id -> verdict, interval, width at the look before
    Column("expected", Text, nullable=False),  # JSON: claim id -> the width the planner expected after
    Column("after", Text),  # JSON: claim id -> verdict, interval, width once the picks landed; NULL until
    Column("started", Float, nullable=False),
    Column("finished", Float),
    PrimaryKeyConstraint("sweep", "round"),
)
