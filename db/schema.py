"""The store's tables. `SCHEMA_VERSION` changes with every change here, and `db.migrations` says
how an older store reaches it."""

from sqlalchemy import (
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

__all__ = [
    "SCHEMA_VERSION",
    "TRIAL_STATUSES",
    "baselines",
    "fits",
    "forecasts",
    "gaps",
    "measurements",
    "metadata",
    "orch_meta",
    "sweep_trials",
    "sweeps",
    "trials",
]

SCHEMA_VERSION = 1
TRIAL_STATUSES = ("pending", "running", "done", "failed", "collapsed", "interrupted")

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
    Column("name", String(200), primary_key=True),
    Column("spec_text", Text, nullable=False),
    Column("spec_hash", String(64), nullable=False),
    Column("source", Text, nullable=False),
    Column("created", Float, nullable=False),  # unix seconds
    Column("updated", Float, nullable=False),
)

trials = Table(
    "trials",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("config", Text, nullable=False),  # the TrialConfig's JSON
    Column("objective", String(32), nullable=False),
    Column("model", String(32), nullable=False),
    Column("n_params", Integer),  # measured from the module once the trial has built it
    Column("data_size", Integer, nullable=False),
    Column("seed", Integer, nullable=False),
    Column("budget_samples", Integer, nullable=False),
    Column("status", String(16), nullable=False, default="pending"),
    Column("reason", Text),
    Column("attempts", Integer, nullable=False, default=0),
    Column("samples_seen", Integer, nullable=False, default=0),
    Column("host", String(255)),
    Column("device", String(64)),
    Column("created", Float, nullable=False),
    Column("started", Float),
    Column("finished", Float),
    Column("updated", Float, nullable=False),
)

sweep_trials = Table(
    "sweep_trials",
    metadata,
    Column("sweep", String(200), ForeignKey("sweeps.name", ondelete="CASCADE"), nullable=False),
    Column("trial_key", String(64), ForeignKey("trials.key", ondelete="CASCADE"), nullable=False),
    Column("held_out", Integer, nullable=False, default=0),
    PrimaryKeyConstraint("sweep", "trial_key"),
)

measurements = Table(
    "measurements",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("trial_key", String(64), ForeignKey("trials.key", ondelete="CASCADE"), nullable=False),
    Column("samples_seen", Integer, nullable=False),
    Column("metric", String(64), nullable=False),  # 'mutual_knn@10', or 'mutual_knn@10/layer2'
    Column("reference", String(64), nullable=False),
    Column("eval_set", String(64), nullable=False),
    Column("value", Float, nullable=False),
    Column("step", Integer, nullable=False),
    Column("flops", Float, nullable=False),
    Column("wall_s", Float, nullable=False),
    UniqueConstraint("trial_key", "samples_seen", "metric", "reference", "eval_set", name="measurement_once"),
)

baselines = Table(
    "baselines",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("source", Text, nullable=False),
    Column("model", String(128), nullable=False),
    Column("objective", String(64), nullable=False),
    Column("metric", String(64), nullable=False),
    Column("reference", String(128), nullable=False),
    Column("eval_set", String(64), nullable=False),
    Column("samples", Float),  # None when the source gives no sample count
    Column("value", Float, nullable=False),
    Column("note", Text, nullable=False, default=""),
    UniqueConstraint(
        "source",
        "model",
        "objective",
        "metric",
        "reference",
        "eval_set",
        "note",
        name="baseline_once",
    ),
)

fits = Table(
    "fits",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("sweep", String(200), nullable=False),
    Column("objective", String(32), nullable=False),
    Column("model", String(32), nullable=False),
    Column("metric", String(64), nullable=False),
    Column("reference", String(64), nullable=False),
    Column("eval_set", String(64), nullable=False),
    Column("law", String(32), nullable=False),
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
    Column("sweep", String(200), nullable=False),
    Column("objective", String(32), nullable=False),
    Column("model", String(32), nullable=False),
    Column("metric", String(64), nullable=False),
    Column("reference", String(64), nullable=False),
    Column("eval_set", String(64), nullable=False),
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
    Column("sweep", String(200), nullable=False),
    Column("faster", String(32), nullable=False),
    Column("slower", String(32), nullable=False),
    Column("model", String(32), nullable=False),
    Column("metric", String(64), nullable=False),
    Column("reference", String(64), nullable=False),
    Column("target", Float, nullable=False),
    Column("ratio", Float),  # None when A never reaches the target
    Column("ratio_low", Float),  # None without an interval (published single checkpoints)
    Column("ratio_high", Float),
    Column("axis", String(16), nullable=False),  # samples | flops
    Column("flags", Text, nullable=False),
    Column("created", Float, nullable=False),
)
