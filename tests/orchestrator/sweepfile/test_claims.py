"""Claims files and a sweep file's `claims:`: read into `Claim`s, every mistake one line naming
the file and the field."""

import math

import pytest
import yaml

from orchestrator.errors import SpecError
from orchestrator.sweepfile import load_spec
from orchestrator.sweepfile.claims import load_claims

ROOT = __import__("pathlib").Path(__file__).resolve().parents[3]
GAP = {"id": "g", "kind": "gap", "says": "s", "source": "p", "faster": "jepa_good", "slower": "ntp"}


def write(path, claims) -> str:
    path.write_text(yaml.safe_dump({"claims": claims}))
    return str(path)


def test_the_shipped_claims_files_read():
    paper = load_claims(ROOT / "sweeps" / "claims" / "jepa_prh.yaml")
    assert {c.kind for c in paper} == {"gap", "level", "order", "difference", "forecast"}
    (gap,) = [c for c in paper if c.id == "gap_42x"]
    assert (gap.region.low, gap.region.high, gap.at, gap.model) == (21, 84, 900_000_000, "base")
    spec = load_spec(ROOT / "sweeps" / "goodview_vs_ntp_paper.yaml")
    assert spec.claims == paper and spec.claims_source.endswith("jepa_prh.yaml")
    assert load_spec(ROOT / "sweeps" / "goodview_vs_ntp.yaml").claims
    flickr = load_claims(ROOT / "sweeps" / "claims" / "jepa_prh_flickr.yaml")
    assert {c.eval_set for c in flickr} == {"flickr"} and {c.region.high for c in flickr} == {0}


def test_regions_read_as_their_kind_means_them(tmp_path):
    claims = load_claims(
        write(
            tmp_path / "c.yaml",
            [
                {**GAP, "value": 42, "tolerance": 2},
                {**GAP, "id": "g2", "at_least": 10, "per": "flops"},
                {
                    "id": "l",
                    "kind": "level",
                    "says": "s",
                    "source": "p",
                    "objective": "ntp",
                    "at": "21.6M",
                    "value": 0.1,
                    "tolerance": 0.01,
                },
                {
                    "id": "o",
                    "kind": "order",
                    "says": "s",
                    "source": "p",
                    "above": "jepa_good",
                    "below": "ntp",
                },
            ],
        )
    )
    assert [(c.region.low, c.region.high) for c in claims] == [
        (21, 84),
        (10, math.inf),
        (pytest.approx(0.09), pytest.approx(0.11)),
        (0, math.inf),
    ]
    assert claims[1].per == "flops" and claims[2].at == 21_600_000


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ({**GAP, "value": 42}, "claims[0].value: give a tolerance with a value"),
        ({**GAP, "value": 42, "tolerance": 0.5}, "claims[0].tolerance: 0.5 is out of range"),
        ({**GAP, "at_least": 50, "at_most": 10}, "claims[0].at_most: 10 is below at_least 50"),
        (
            {**GAP, "at": "900M", "at_alignment": 0.1, "at_least": 1},
            "at and at_alignment both set the gap's level",
        ),
        ({**GAP, "slower": "jepa_good", "at_least": 1}, "claims[0].slower: compares 'jepa_good' with itself"),
        (
            {**GAP, "per": "flop", "at_least": 1},
            "claims[0].per: 'flop' is not allowed (did you mean 'flops'?)",
        ),
        ({**GAP, "at": "9X", "at_least": 1}, "claims[0].at: '9X' is not a size"),
        ({k: v for k, v in GAP.items() if k != "says"} | {"at_least": 1}, "claims[0].says: is required"),
        ({**GAP, "id": "a b", "at_least": 1}, "claims[0].id: 'a b' may hold only letters"),
    ],
)
def test_each_mistake_is_one_line_naming_file_and_field(tmp_path, claim, expected):
    path = write(tmp_path / "c.yaml", [claim])
    with pytest.raises(SpecError) as error:
        load_claims(path)
    assert str(error.value).startswith(f"{path}: ") and expected in str(error.value)
    assert "\n" not in str(error.value)


def test_a_sweep_file_names_its_claims_file_or_holds_them_inline(tmp_path):
    write(tmp_path / "claims.yaml", [{**GAP, "at_least": 1}])
    sweep = tmp_path / "s.yaml"
    grid = "{objective: [jepa_good, ntp], model: [tiny], data_size: [2K], seed: [0]}"
    sweep.write_text(f"name: s\ngrid: {grid}\nclaims: claims.yaml\n")
    assert load_spec(sweep).claims[0].id == "g"
    sweep.write_text(
        f"name: s\ngrid: {grid}\nclaims: [{{id: g, kind: gap, says: s, source: p, faster: ntp}}]\n"
    )
    with pytest.raises(SpecError, match=r"s.yaml: claims\[0\].slower: is required"):
        load_spec(sweep)
    sweep.write_text(f"name: s\ngrid: {grid}\nclaims: missing.yaml\n")
    with pytest.raises(SpecError, match=r"claims: 'missing\.yaml' is not a file"):
        load_spec(sweep)


def test_a_claim_the_sweep_can_never_judge_is_refused_with_the_sweep_file(tmp_path):
    sweep = tmp_path / "s.yaml"
    grid = "{objective: [jepa_good, ntp], model: [tiny], data_size: [2K], seed: [0]}"
    for field, expected in [
        (
            "faster: jepa_bad",
            "claim 'g': 'jepa_bad' is not an objective of sweep s (did you mean jepa_good?)",
        ),
        ("model: base", "claim 'g': 'base' is not a model of sweep s (tiny)"),
        ("metric: cka", "claim 'g': 'cka' is not a metric of sweep s"),
    ]:
        fields = "faster: jepa_good, slower: ntp" if "faster" not in field else f"{field}, slower: ntp"
        extra = "" if "faster" in field else f", {field}"
        sweep.write_text(
            f"name: s\ngrid: {grid}\n"
            f"claims: [{{id: g, kind: gap, says: s, source: p, {fields}{extra}, at_least: 2}}]\n"
        )
        with pytest.raises(SpecError) as error:
            load_spec(sweep)
        assert expected in str(error.value), str(error.value)


def test_a_level_against_a_baseline_claims_a_positive_difference_unless_it_says_more(tmp_path):
    level = {"id": "l", "kind": "level", "says": "s", "source": "p", "objective": "jepa_good", "at": "21.6M"}
    above, by = load_claims(
        write(
            tmp_path / "c.yaml",
            [
                {**level, "baseline": "all-mpnet-base-v2"},
                {**level, "id": "m", "baseline": "x", "at_least": 0.01},
            ],
        )
    )
    assert (above.baseline, above.region.low, above.region.high) == ("all-mpnet-base-v2", 0.0, math.inf)
    assert (by.region.low, by.region.high) == (0.01, math.inf)
    with pytest.raises(SpecError, match=r"c.yaml: claims\[0\]: states no region"):
        load_claims(write(tmp_path / "c.yaml", [level]))


def test_a_claims_files_caveats_reach_every_claim_and_a_bad_one_is_one_line(tmp_path):
    path, gap = tmp_path / "c.yaml", {**GAP, "value": 42, "tolerance": 2}
    path.write_text(yaml.safe_dump({"caveats": ["one seed each"], "claims": [gap, {**gap, "id": "g2"}]}))
    assert {c.caveats for c in load_claims(path)} == {("one seed each",)}
    path.write_text(yaml.safe_dump({"caveats": [""], "claims": [gap]}))
    with pytest.raises(SpecError, match=r"c.yaml: caveats\[0\]: "):
        load_claims(path)
    path.write_text(yaml.safe_dump({"caveat": ["typo"], "claims": [gap]}))
    with pytest.raises(SpecError):
        load_claims(path)
