"""The sweep file, typed: what users write (sizes, fields, the catalog of names) and what it
becomes (a frozen `Spec` with one `TrialConfig` per grid cell). Torch-free and I/O-free but for
reading the file itself."""

from orchestrator.sweepfile.config import (
    CORE_AXES,
    DEFAULT_STORE,
    KEY_VERSION,
    DataConfig,
    EvalConfig,
    Resources,
    Spec,
    TrainConfig,
    TrialConfig,
)
from orchestrator.sweepfile.load import load_spec, parse_spec

__all__ = [
    "CORE_AXES",
    "DEFAULT_STORE",
    "KEY_VERSION",
    "DataConfig",
    "EvalConfig",
    "Resources",
    "Spec",
    "TrainConfig",
    "TrialConfig",
    "load_spec",
    "parse_spec",
]
