"""What the curve stage is asked: the user's options, the sweep's design they are resolved
against (read from the sweep file the store recorded and handed in by the caller: fits never
reads a sweep file itself), and the settings every fit function reads."""

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from fits.curve.laws import UNIT_SPAN, Span

__all__ = ["DEFAULT_METRIC", "FitOptions", "FitSettings", "GapPair", "Points", "SweepDesign"]

DEFAULT_METRIC = "mutual_knn@10"  # what a fit reads, and a claim naming no metric is stated in


class Points(StrEnum):
    """Which measurements are a curve's points."""

    AUTO = "auto"  # the sweep's design: ALL for constant-learning-rate runs, else FINAL
    FINAL = "final"  # each trial's final checkpoint: one run per data size
    ALL = "all"  # every checkpoint of one constant-learning-rate run per seed


@dataclass(frozen=True)
class GapPair:
    """`--gap A:B`: A, the objective said to need fewer samples, and B, read once."""

    faster: str
    slower: str

    @classmethod
    def of(cls, text: str) -> "GapPair":
        """A:B as written (the caller has checked it names two objectives)."""
        faster, _, slower = text.partition(":")
        return cls(faster, slower)

    def __str__(self) -> str:
        return f"{self.faster}:{self.slower}"


@dataclass(frozen=True)
class SweepDesign:
    """What a fit needs to know of its sweep beyond the rows."""

    points: Points  # ALL: constant-learning-rate runs, every checkpoint is a point; else FINAL
    holdout_above: int | None  # the file's holdout.samples_above: checkpoints past it held out
    ranges: dict[str, Span]  # each measured metric's range, from the metric registry
    grid: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # axis -> values (provenance)
    recipe: dict[str, Any] = field(default_factory=dict)  # the first trial's recipe (provenance)
    testbed: bool = False  # trained on the embedded synthetic world: every verdict says so
    imported: bool = False  # runs orch did not train (`orch import`): a row's `se` is its own


@dataclass(frozen=True)
class FitOptions:
    """What the user asked of `orch fit`."""

    predict: tuple[int, ...] = ()
    holdout: tuple[int, ...] = ()
    gaps: tuple[str, ...] = ()
    gap_at: int | None = None
    at_alignment: float | None = None
    metric: str = DEFAULT_METRIC
    reference: str | None = None
    min_samples: int | None = None
    bootstrap: int = 0  # seed-bootstrap refits of every law behind the bands (0: parametric draws)
    huber: float | None = None  # Huber's delta on log residuals: one diverged seed barely moves a fit
    profile: bool = False  # lmfit's profile-likelihood intervals for the heaviest laws' key parameters
    points: Points = Points.AUTO
    holdout_above: int | None = None  # checkpoints past this are held out; default: the sweep's
    seeds_for_forecast: int = 3
    detail: bool = True  # the plots' bands, every curve's backtests, joint laws (`orch check`: none)
    next_runs: bool = True  # the runs that would settle each open claim (`orch next` plans its own)

    def __post_init__(self) -> None:
        object.__setattr__(self, "points", Points(self.points))  # "all" as written on a command line

    def resolved(self, design: SweepDesign) -> "FitSettings":
        """These options with `auto`, an unset holdout and the metric's range from the sweep."""
        mine = {option.name: getattr(self, option.name) for option in fields(FitOptions)}
        return FitSettings(
            **mine
            | {
                "points": design.points if self.points is Points.AUTO else self.points,
                "holdout_above": design.holdout_above if self.holdout_above is None else self.holdout_above,
            },
            span=design.ranges.get(self.metric, UNIT_SPAN),
            given_se=design.imported,
        )


@dataclass(frozen=True)
class FitSettings(FitOptions):
    """The options resolved against the sweep: `points` is FINAL or ALL, `holdout_above` the
    user's or the file's, `span` the metric's range. What every fit function reads."""

    span: Span = UNIT_SPAN
    given_se: bool = False  # an imported row's `se` is what claims on one-seed points read

    @property
    def design(self) -> str:
        """Which points the fit uses, in words, for the report."""
        if self.points is Points.ALL:
            return (
                "every checkpoint of one constant-learning-rate run per seed; a run's checkpoints "
                "are correlated, so the seed bootstrap resamples whole runs"
            )
        return "each trial's final checkpoint (one run per data size)"
