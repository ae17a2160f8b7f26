"""What a paper claims, typed: a `Claim` names what is measured and the `Region` its value is
claimed to lie in; a `Verdict` is what a fit run says of it, built whole. A claims file
(`orchestrator.sweepfile.claims`) is read into claims; `fits.claims.kinds` holds what each kind of
claim needs and how it is judged. Types only."""

import math
from dataclasses import asdict, dataclass, field
from enum import StrEnum

__all__ = ["Claim", "ClaimSet", "Kind", "Outcome", "Per", "Region", "Verdict"]


class Kind(StrEnum):
    """What a claim states; each has its entry in `fits.claims.kinds.CATALOG`."""

    GAP = "gap"
    LEVEL = "level"
    ORDER = "order"
    DIFFERENCE = "difference"
    FORECAST = "forecast"


class Outcome(StrEnum):
    """A verdict: the whole interval inside the claimed region, wholly outside it, or neither."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    INCONCLUSIVE = "inconclusive"


class Per(StrEnum):
    """What a gap counts: samples seen, or training FLOPs."""

    SAMPLES = "samples"
    FLOPS = "flops"


@dataclass(frozen=True)
class Region:
    """The closed interval [low, high] a claimed value lies in (either end may be infinite)."""

    low: float = -math.inf
    high: float = math.inf

    @classmethod
    def around(cls, value: float, tolerance: float, factor: bool) -> "Region":
        """`value` within a `tolerance`: a factor (42 within x2 is [21, 84]) or a width (0.109
        within 0.01 is [0.099, 0.119])."""
        if factor:
            return cls(value / tolerance, value * tolerance)
        return cls(value - tolerance, value + tolerance)

    def holds(self, low: float, high: float) -> bool:
        """The whole of [low, high] lies inside."""
        return self.low <= low and high <= self.high

    def misses(self, low: float, high: float) -> bool:
        """No part of [low, high] lies inside."""
        return high < self.low or low > self.high

    def decide(self, interval: tuple[float, float] | None) -> Outcome:
        """supported when the whole interval lies inside, contradicted when none of it does."""
        if interval is None:
            return Outcome.INCONCLUSIVE
        if self.holds(*interval):
            return Outcome.SUPPORTED
        return Outcome.CONTRADICTED if self.misses(*interval) else Outcome.INCONCLUSIVE

    def __str__(self) -> str:
        if math.isinf(self.low) and math.isinf(self.high):
            return "any value"
        if math.isinf(self.high):
            return f">= {self.low:.4g}"
        if math.isinf(self.low):
            return f"<= {self.high:.4g}"
        return f"[{self.low:.4g}, {self.high:.4g}]"


@dataclass(frozen=True)
class Claim:
    """One checkable statement.

    - gap: `faster` reaches `slower`'s level with R = N_slower / N_faster times fewer samples
      (or FLOPs, `per`), the level being `slower`'s at `at` samples, `at_alignment`, or the
      middle of the levels both curves reach (neither given);
    - level: `objective`'s alignment at `at` samples; with `baseline`, its difference from that
      baseline model's value in the store (measured or published, same metric, reference and
      eval set), the region then holding the difference (default: at least 0, i.e. above it);
    - order: `above` aligns higher than `below` at every size both measured (the value is the
      smallest difference of their seed means), or at `at` alone;
    - difference: `above` minus `below` at `at` samples, both measured there (e.g. a 33M JEPA
      above a 33M NTP by at least 0.02 at 21.6M);
    - forecast: the share of held-out cells the laws forecast within seed noise (`objective`:
      one objective's cells; default every curve's).

    `model`, `metric`, `reference` and `eval_set` select the curves (None: the sweep's, where it
    has one).
    """

    id: str
    kind: Kind
    says: str
    source: str
    region: Region
    faster: str | None = None
    slower: str | None = None
    objective: str | None = None
    above: str | None = None
    below: str | None = None
    at: int | None = None
    at_alignment: float | None = None
    per: Per = Per.SAMPLES  # gap claims
    baseline: str | None = None  # level claims: compared with this baseline model's value
    model: str | None = None
    metric: str | None = None
    reference: str | None = None
    eval_set: str | None = None
    caveats: tuple[str, ...] = ()  # its source's own (a claims file's `caveats:`): on every verdict

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", Kind(self.kind))  # as a file or a test writes it
        object.__setattr__(self, "per", Per(self.per))
        object.__setattr__(self, "caveats", tuple(self.caveats))

    @property
    def objectives(self) -> tuple[str, ...]:
        """The objectives the claim is about, in the order it names them."""
        named = (self.faster, self.slower, self.objective, self.above, self.below)
        return tuple(name for name in named if name is not None)


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict with the measured value, its interval, what it rests on and why."""

    claim: Claim
    verdict: Outcome
    value: float | None
    interval: tuple[float, float] | None
    basis: str  # what the interval comes from, in words
    reasons: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # inconclusive: what would settle it
    flags: tuple[str, ...] = ()
    axes: dict[str, dict] = field(default_factory=dict)  # gap: samples and flops, each value + interval
    measured: dict | None = None  # gap: the model-free gap from the seed means

    def __post_init__(self) -> None:
        for name in ("reasons", "caveats", "missing", "flags"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def as_dict(self) -> dict:
        claim = asdict(self.claim) | {"region": [self.claim.region.low, self.claim.region.high]}
        return {
            "id": self.claim.id,
            "kind": self.claim.kind,
            "says": self.claim.says,
            "source": self.claim.source,
            "claim": claim,
            "verdict": self.verdict,
            "value": self.value,
            "interval": list(self.interval) if self.interval else None,
            "basis": self.basis,
            "reasons": list(self.reasons),
            "caveats": list(self.caveats),
            "missing": list(self.missing),
            "flags": list(self.flags),
            "axes": self.axes,
            "measured_gap": self.measured,
        }


@dataclass(frozen=True)
class ClaimSet:
    """The claims a run is judged against, and where they were read (named in a bad claim's line)."""

    claims: tuple[Claim, ...] = ()
    source: str = ""

    def __iter__(self):
        return iter(self.claims)

    def __len__(self) -> int:
        return len(self.claims)
