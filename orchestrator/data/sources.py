"""The two kinds of training data, each knowing its checks, its shape and its stream: the embedded
world (`data.source: world`) and files a user brings (`files`). `source_of(data)` finds one; how
each reads its part of a sweep file is `orchestrator.sweepfile.sources`."""

from pathlib import Path
from typing import Protocol

from orchestrator.data.files import check_files
from orchestrator.data.shape import TextShape, file_shape, world_shape
from orchestrator.data.stream import (
    EvalSet,
    TrialData,
    file_data,
    file_scoring_set,
    world_data,
    world_scoring_set,
)
from orchestrator.sweepfile import DataConfig, EvalConfig, TrialConfig

__all__ = ["SOURCES", "DataSource", "open_trial_data", "source_of"]


class DataSource(Protocol):
    def check(self, data: DataConfig, evaluation: EvalConfig) -> None:
        """Fail on the driver, before any trial starts, on data no trial could read or score."""
        ...

    def shape(self, data: DataConfig) -> TextShape: ...

    def open(self, config: TrialConfig, cache_dir: Path, prefetch_workers: int) -> TrialData: ...

    def scoring_set(self, config: TrialConfig) -> tuple[list[str], EvalSet]:
        """The eval texts and the references a trial scores against, without a token stream."""
        ...


class WorldSource:
    """Made in memory from the world's seed and knobs: nothing to check on disk."""

    def check(self, data: DataConfig, evaluation: EvalConfig) -> None:
        """The world's eval set size was checked against k when the sweep file was read."""

    def shape(self, data: DataConfig) -> TextShape:
        return world_shape(data)

    def open(self, config: TrialConfig, cache_dir: Path, prefetch_workers: int) -> TrialData:
        return world_data(config)

    def scoring_set(self, config: TrialConfig) -> tuple[list[str], EvalSet]:
        return world_scoring_set(config)


class FileSource:
    """Shards read in one seeded order, and an eval set with its reference features."""

    def check(self, data: DataConfig, evaluation: EvalConfig) -> None:
        check_files(data, evaluation.neighbours, stacks=evaluation.scoring == "platonic-rep")

    def shape(self, data: DataConfig) -> TextShape:
        return file_shape(data)

    def open(self, config: TrialConfig, cache_dir: Path, prefetch_workers: int) -> TrialData:
        return file_data(config, cache_dir, prefetch_workers)

    def scoring_set(self, config: TrialConfig) -> tuple[list[str], EvalSet]:
        return file_scoring_set(config)


SOURCES: dict[str, DataSource] = {"world": WorldSource(), "files": FileSource()}


def source_of(data: DataConfig) -> DataSource:
    return SOURCES[data.source]


def open_trial_data(config: TrialConfig, cache_dir: Path, prefetch_workers: int = 0) -> TrialData:
    """The trial's data; a file stream is prefetched by `prefetch_workers` processes, or by a
    thread when 0 (the world's stream is in memory)."""
    return source_of(config.data).open(config, cache_dir, prefetch_workers)
