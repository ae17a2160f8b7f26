"""The typed sweep: a frozen `Spec` and one `TrialConfig` per grid cell, and the trial's key.

A trial's key is the sha256 of the canonical JSON of `TrialConfig.identity()`: objective, model,
data size, seed, the resolved `train` recipe, the `data` section and the `eval` section, plus
`KEY_VERSION`. The sweep's name, store, resources and holdout never enter it, so the same trial in
two sweeps is one trial and resources can change without rerunning anything.
"""

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fits.claims.claim import Claim
from fits.curve.settings import Points
from orchestrator.sweepfile.catalog import parse_metric

__all__ = [
    "CORE_AXES",
    "DEFAULT_STORE",
    "KEY_VERSION",
    "DataConfig",
    "EvalConfig",
    "Resources",
    "SigRegConfig",
    "Spec",
    "TrainConfig",
    "TrialConfig",
    "held_out",
]

KEY_VERSION = 2  # bump when a code change alters what an unchanged trial config produces
CORE_AXES = ("objective", "model", "data_size", "seed")
DEFAULT_STORE = "sqlite:///orch.db"


@dataclass(frozen=True)
class SigRegConfig:
    weight: float
    slices: int


@dataclass(frozen=True)
class TrainConfig:
    """The recipe: optimiser, schedule and regulariser, all of which enter the trial key."""

    batch_size: int
    lr: float
    weight_decay: float
    warmup: float  # fraction of the trial's sample budget
    schedule: str
    epochs: float  # passes over the trial's data size: budget = epochs x data_size samples
    grad_clip: float | None
    sigreg: SigRegConfig


@dataclass(frozen=True)
class DataConfig:
    source: str  # world | files
    world_seed: int = 0
    world_synonyms: int = 4  # the embedded world's knobs: see orchestrator.data.world.Knobs
    world_nuisance: float = 3.0
    world_mention: float = 0.7
    pairs: str | tuple[str, ...] | None = None  # a path or glob, or a list of them: shards
    documents: str | tuple[str, ...] | None = None
    eval_texts: str | None = None
    eval_features: tuple[tuple[str, str], ...] = ()
    tokenizer: str = "bytes"
    vocab_size: int = 256
    max_len: int = 64
    base_dir: str = field(default=".", compare=False)  # where relative paths resolve; not in key
    # the samples one epoch of the training text holds (files: `data.corpus`), None where unbounded
    # or not stated; it bounds the sizes a plan proposes, and is not in the key
    corpus: int | None = field(default=None, compare=False)

    def resolve(self, path: str) -> Path:
        return (Path(self.base_dir) / path).resolve()


def checkpoint_schedule(budget: int, first: int, per_octave: int) -> list[int]:
    """Samples-seen targets: 0 (random init), first x 2^(j / per_octave) below the budget, budget."""
    targets = [0]
    j = 0
    while (target := round(first * 2 ** (j / per_octave))) < budget:
        if target > targets[-1]:
            targets.append(target)
        j += 1
    return [*targets, budget]


@dataclass(frozen=True)
class EvalConfig:
    set: str
    metrics: tuple[str, ...]
    per_octave: int
    first_checkpoint: int
    references: tuple[str, ...] | None
    scoring: str = "orch"  # or "platonic-rep": SCORINGS

    @property
    def neighbours(self) -> int:
        """The largest k of the metrics: the eval set needs more items than this."""
        return max((parse_metric(metric).k or 0 for metric in self.metrics), default=0)


SCORINGS = ("orch", "platonic-rep")  # eval.scoring: orch's own procedure, or upstream's

PLACEMENTS = ("pack", "spread", "strict_pack", "strict_spread")  # Ray's placement strategies


@dataclass(frozen=True)
class Resources:
    """What one trial asks of the cluster: `workers` processes (a data-parallel trial when more
    than one), each with `cpu` and `gpu`, placed by `placement` (Ray's strategy, lower case)."""

    cpu: float
    gpu: float
    workers: int = 1
    placement: str = "pack"


@dataclass(frozen=True)
class TrialConfig:
    objective: str
    model: str
    data_size: int
    seed: int
    train: TrainConfig
    data: DataConfig
    eval: EvalConfig

    def identity(self) -> dict[str, Any]:
        """Everything that changes this trial's result, and nothing else (its parts are shared
        between trials: read, never change them)."""
        return {
            "key_version": KEY_VERSION,
            "objective": self.objective,
            "model": self.model,
            "data_size": self.data_size,
            "seed": self.seed,
            "train": _plain(self.train),
            "data": _plain(self.data),
            "eval": _plain(self.eval),
        }

    @functools.cached_property
    def key(self) -> str:
        canonical = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def budget_samples(self) -> int:
        return max(1, round(self.train.epochs * self.data_size))

    @property
    def checkpoints(self) -> list[int]:
        """The samples seen at which the trial is scored (0: the random init)."""
        return checkpoint_schedule(self.budget_samples, self.eval.first_checkpoint, self.eval.per_octave)

    def to_json(self) -> str:
        return json.dumps({**self.identity(), "base_dir": self.data.base_dir}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "TrialConfig":
        raw = json.loads(text)
        train = dict(raw["train"], sigreg=SigRegConfig(**raw["train"]["sigreg"]))
        data = dict(raw["data"], base_dir=raw.get("base_dir", "."))
        data["eval_features"] = tuple(tuple(pair) for pair in data["eval_features"])
        for role in ("pairs", "documents"):  # shards: a list in JSON, a tuple in the config
            if isinstance(data.get(role), list):
                data[role] = tuple(data[role])
        evaluation = dict(raw["eval"], metrics=tuple(raw["eval"]["metrics"]))
        if evaluation["references"] is not None:
            evaluation["references"] = tuple(evaluation["references"])
        return cls(
            objective=raw["objective"],
            model=raw["model"],
            data_size=raw["data_size"],
            seed=raw["seed"],
            train=TrainConfig(**train),
            data=DataConfig(**data),
            eval=EvalConfig(**evaluation),
        )


@dataclass(frozen=True)
class Spec:
    name: str
    store: str
    data: DataConfig
    eval: EvalConfig
    trials: tuple[TrialConfig, ...]
    resources: Resources
    model_resources: tuple[tuple[str, Resources], ...]
    holdout: tuple[tuple[tuple[str, tuple[Any, ...]], ...], ...]  # rules: a trial matching one is held out
    holdout_above: int | None  # checkpoints past this many samples seen are held out
    source: str
    text: str
    claims: tuple[Claim, ...] = ()  # what the sweep is run to check (`claims:`), read with the file
    claims_source: str | None = None  # the claims file, or the sweep file when they are inline

    @property
    def text_hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def design(self) -> Points:
        """'all' when every trial runs at a constant learning rate, so that its checkpoints are
        points of one curve; 'final' otherwise (a decaying run is one point, at its end)."""
        return Points.ALL if all(t.train.schedule == "constant" for t in self.trials) else Points.FINAL

    def resources_for(self, model: str) -> Resources:
        return dict(self.model_resources).get(model, self.resources)

    def is_held_out(self, trial: TrialConfig) -> bool:
        return held_out(self.holdout, trial)


def held_out(rules: tuple[tuple[tuple[str, tuple[Any, ...]], ...], ...], trial: TrialConfig) -> bool:
    """Whether a holdout rule matches the trial (every axis it names holds the trial's value)."""
    return any(all(getattr(trial, axis) in values for axis, values in rule) for rule in rules)


@functools.lru_cache(maxsize=256)
def _plain(section: "TrainConfig | DataConfig | EvalConfig") -> dict[str, Any]:
    """A section as plain JSON-ready data, made once for the many trials that share it (a grid of
    10^5 trials has a handful of distinct sections); a data section without its base_dir, which
    says where the files are, and its corpus, which says how much they hold: neither is what a
    trial trains on. An eval section scored by orch's own procedure says nothing of its scoring."""
    plain = asdict(section)
    plain.pop("base_dir", None)
    plain.pop("corpus", None)
    if plain.get("scoring") == "orch":  # the default, left out so that older trials keep their key
        del plain["scoring"]
    return plain
