"""What a fit needs of a recorded sweep file, read from the text the store recorded with it: its
design (which checkpoints are points, what is held out, the metrics' ranges, the grid and the
recipe, whether it trained on the embedded world) and the claims it is judged against (a claims
file's, else the ones the sweep file states). A record this orch cannot read is an InputError: a
fit never guesses the design."""

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from fits.claims.claim import ClaimSet
from fits.curve.laws import Span
from fits.curve.settings import SweepDesign
from orchestrator.errors import InputError, SpecError
from orchestrator.sweepfile.catalog import parse_metric
from orchestrator.sweepfile.claims import claims_of, load_claims
from orchestrator.sweepfile.config import CORE_AXES
from orchestrator.sweepfile.imported import imported_design
from orchestrator.sweepfile.load import parse_spec
from orchestrator.sweepfile.sources import rules_of

__all__ = ["Recorded", "metric_range", "sweep_design"]


@dataclass(frozen=True)
class Recorded:
    """A sweep as the store recorded it: its name, the store's URL, its file's text and where
    that file was read."""

    name: str
    store: str
    text: str
    source: str


def sweep_design(
    recorded: Recorded, measured: list[str], metric: str, claims_file: str | None, warn: Any
) -> tuple[SweepDesign, ClaimSet]:
    """The design and the claims of a recorded sweep, for a fit of `metric` (`measured`: every
    metric the sweep measured, for their ranges; `warn`: says why a sweep's claims were not read)."""
    ranges = {name: span for name in measured if (span := metric_range(name))}
    try:
        span = parse_metric(metric.split("/")[0]).metric.range
    except ValueError as error:
        raise InputError(f"--metric {error}") from None
    given = ClaimSet(load_claims(claims_file), claims_file) if claims_file else None  # its errors name it
    again = "run 'orch sweep FILE' again to record it"
    where = f"sweep {recorded.name} in {recorded.store}"
    try:
        raw = yaml.safe_load(recorded.text)
        if not isinstance(raw, dict):  # a sweep recorded through the API without its text
            raise InputError(f"{where}: no sweep file is recorded with it; {again}")
        claims = given if given is not None else ClaimSet(*_recorded(raw, recorded, warn))
        if (imported := imported_design(raw)) is not None:  # runs orch did not train: no recipe, no grid
            points, holdout_above = imported
            return SweepDesign(points, holdout_above, ranges | {metric: span}, imported=True), claims
        spec = parse_spec(raw, recorded.source, read_claims=False)
    except (SpecError, yaml.YAMLError) as error:
        reason = str(error).splitlines()[0]
        raise InputError(
            f"{where}: its recorded sweep file does not read in this orch ({reason}); {again}"
        ) from None
    design = SweepDesign(
        points=spec.design,
        holdout_above=spec.holdout_above,
        ranges=ranges | {metric: span},
        grid={axis: tuple({getattr(t, axis) for t in spec.trials}) for axis in CORE_AXES},
        recipe=asdict(spec.trials[0].train),
        testbed=rules_of(spec.data).testbed,
    )
    return design, claims


def _recorded(raw: dict, recorded: Recorded, warn: Any) -> tuple[tuple, str]:
    """The claims the recorded sweep file states; none, with a warning, when its claims file
    no longer reads (it may have moved since the sweep ran)."""
    if "claims" not in raw:
        return (), ""
    try:
        return claims_of(raw["claims"], recorded.source, Path(recorded.source).parent)
    except SpecError as error:
        warn(f"warning: the sweep's claims were not judged: {error}")
        return (), ""


def metric_range(name: str) -> Span | None:
    """The range a metric's values live in (a layer suffix, '/layer2', names the same metric);
    None for a name the registry does not hold (the training loss)."""
    try:
        return parse_metric(name.split("/")[0]).metric.range
    except ValueError:
        return None
