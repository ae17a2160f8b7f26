"""Claims files: YAML -> validated `Claim`s, checked like sweep files (unknown keys are errors
with a did-you-mean, one line naming the file, the claim and the field). A sweep file names its
claims file (`claims: claims/testbed.yaml`, relative to the sweep file) or holds the list inline.

    claims:
      - id: gap_42x
        says: JEPA on good views reaches NTP's 900M alignment with 42x fewer samples
        source: Balestriero & LeCun 2025, Fig. 1
        kind: gap
        faster: jepa_good
        slower: ntp
        at: 900M            # or at_alignment: 0.109; neither: the middle of both curves' levels
        per: samples        # or flops
        value: 42
        tolerance: 2        # a factor for gaps (42 within x2), a width for levels
"""

import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from fits.claims.claim import Claim, Kind, Per, Region
from orchestrator.errors import SpecError
from orchestrator.sweepfile.catalog import OBJECTIVES, parse_metric
from orchestrator.sweepfile.fields import (
    FieldError,
    read_choice,
    read_list,
    read_mapping,
    read_number,
    read_size,
    read_string,
)
from orchestrator.sweepfile.yamlfile import read_yaml

__all__ = ["claims_of", "load_claims", "parse_claims"]

COMMON = ("id", "kind", "says", "source", "model", "metric", "reference", "eval_set")
REGION = ("value", "tolerance", "at_least", "at_most")
NOT_TEXT = ("kind", "at", "at_alignment", "per")  # read by their own readers below


def load_claims(path: str | Path) -> tuple[Claim, ...]:
    """Read and validate a claims file: a list under `claims:` (with, beside it, `caveats:`, the
    source's own caveats, carried into every verdict), or the list itself."""
    path = Path(path)
    _, raw = read_yaml(path)
    if isinstance(raw, dict) and "claims" in raw and set(raw) <= {"claims", "caveats"}:
        caveats = _caveats(raw.get("caveats"), str(path))
        return tuple(
            replace(claim, caveats=caveats) for claim in parse_claims(raw["claims"], str(path), "claims")
        )
    return parse_claims(raw, str(path))


def _caveats(raw: Any, source: str) -> tuple[str, ...]:
    try:
        listed = read_list(raw, "caveats") if raw is not None else []
        return tuple(read_string(item, f"caveats[{i}]") for i, item in enumerate(listed))
    except FieldError as error:
        raise SpecError(f"{source}: {error.path}: {error.message}") from None


def claims_of(raw: Any, source: str, base_dir: Path) -> tuple[tuple[Claim, ...], str]:
    """A sweep file's `claims` value: a file name (relative to the sweep file's folder
    `base_dir`) or the claims inline; returns them with where they were read from."""
    if isinstance(raw, str):
        path = Path(raw) if Path(raw).is_absolute() else base_dir / raw
        if not path.is_file():
            raise SpecError(
                f"{source}: claims: {raw!r} is not a file (give a path relative to the sweep file)"
            )
        return load_claims(path), str(path)
    return parse_claims(raw, source, prefix="claims"), source


def parse_claims(raw: Any, source: str, prefix: str = "") -> tuple[Claim, ...]:
    try:
        return _parse(raw, prefix)
    except FieldError as error:
        raise SpecError(f"{source}: {error.path}: {error.message}") from None


def _parse(raw: Any, prefix: str) -> tuple[Claim, ...]:
    if raw is None:
        raise FieldError(
            prefix or "(top)", "no claims (give a list of claims; see sweeps/claims/testbed.yaml)"
        )
    claims = [_claim(item, f"{prefix}[{i}]") for i, item in enumerate(read_list(raw, prefix or "(top)"))]
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        if claim.id in seen:
            raise FieldError(
                f"{prefix}[{i}].id", f"{claim.id!r} is given twice (each claim needs its own id)"
            )
        seen.add(claim.id)
    return tuple(claims)


def _claim(raw: Any, path: str) -> Claim:
    # the catalog holds each kind's judge: read here, on the driver, not where trials import this
    from fits.claims.kinds import CATALOG

    name = read_choice(read_mapping(raw, path, None).get("kind"), f"{path}.kind", tuple(Kind))
    kind = CATALOG[Kind(name)]
    known = (*COMMON, *kind.fields, *REGION)
    top = read_mapping(raw, path, known, required=("id", "kind", "says", "source", *kind.required))
    claim_id = read_string(top["id"], f"{path}.id")
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", claim_id):
        raise FieldError(f"{path}.id", f"{claim_id!r} may hold only letters, digits, '_', '.' and '-'")
    names = {
        key: read_string(top[key], f"{path}.{key}")
        for key in (*COMMON, *kind.fields)
        if key in top and key not in NOT_TEXT
    }
    if "at" in top:
        names["at"] = read_size(top["at"], f"{path}.at")
    if "at_alignment" in top:
        if "at" in top:
            raise FieldError(f"{path}.at_alignment", "at and at_alignment both set the gap's level: give one")
        names["at_alignment"] = read_number(top["at_alignment"], f"{path}.at_alignment")
    if "per" in top:
        names["per"] = Per(read_choice(top["per"], f"{path}.per", tuple(Per)))
    _check_names(names, path)
    for pair in (("faster", "slower"), ("above", "below")):
        if pair[0] in names and names.get(pair[0]) == names.get(pair[1]):
            raise FieldError(
                f"{path}.{pair[1]}", f"compares {names[pair[0]]!r} with itself (name two objectives)"
            )
    difference = kind.difference or "baseline" in names
    return Claim(kind=kind.kind, region=_region(top, path, kind.factor, difference), **names)


def _check_names(names: dict[str, Any], path: str) -> None:
    """The objectives and the metric a claim names are orch's (a typo is one line with a
    did-you-mean); whether the sweep measured them is the verdict's to say."""
    for key in ("faster", "slower", "objective", "above", "below"):
        if key in names:
            read_choice(names[key], f"{path}.{key}", tuple(OBJECTIVES))
    if "metric" in names:
        try:
            parse_metric(names["metric"].split("/")[0])
        except ValueError as error:
            raise FieldError(f"{path}.metric", str(error)) from None


def _region(top: dict, path: str, factor: bool, difference: bool) -> Region:
    """value with tolerance (a factor, or a width), or at_least and/or at_most; a claim on a
    difference (an order, a level against a baseline) defaults to at_least 0 (above means a
    positive difference)."""
    given = [key for key in REGION if key in top]
    if "value" in top:
        if "tolerance" not in top or {"at_least", "at_most"} & set(top):
            raise FieldError(f"{path}.value", "give a tolerance with a value, and no at_least or at_most")
        tolerance = read_number(top["tolerance"], f"{path}.tolerance", low=1 if factor else 0, low_open=True)
        value = read_number(top["value"], f"{path}.value", low=0 if factor else None, low_open=factor)
        return Region.around(value, tolerance, factor)
    if "tolerance" in top:
        raise FieldError(f"{path}.tolerance", "a tolerance needs a value (value: 42, tolerance: 2)")
    if not given:
        if difference:
            return Region(0.0, math.inf)
        raise FieldError(path, "states no region (give value and tolerance, or at_least / at_most)")
    low = read_number(top["at_least"], f"{path}.at_least") if "at_least" in top else -math.inf
    high = read_number(top["at_most"], f"{path}.at_most") if "at_most" in top else math.inf
    if low > high:
        raise FieldError(f"{path}.at_most", f"{high:g} is below at_least {low:g} (the region is empty)")
    return Region(low, high)
