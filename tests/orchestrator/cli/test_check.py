"""`orch check` and the claims `orch fit` judges, on a store of planted curves (jepa_good needs
42x fewer samples than ntp): a verdict per claim in text, JSON and the report, stored with the
fit run; every claims-file mistake one line, exit 2, nothing written."""

import json

import pytest
import yaml

from db import Store
from tests.cli import one_error_line, orch
from tests.stores import simulated_store


def claim(id: str, kind: str, **fields) -> dict:
    return {"id": id, "kind": kind, "says": f"{id} holds", "source": "planted", **fields}


TRUE_GAP = claim("gap_42x", "gap", faster="jepa_good", slower="ntp", value=42, tolerance=2)
FALSE_GAP = claim("gap_5x", "gap", faster="jepa_good", slower="ntp", value=5, tolerance=2)
ORDER = claim("good_above_ntp", "order", above="jepa_good", below="ntp")
LEVEL = claim("far", "level", objective="ntp", at="37M", at_least=0.5)
CLAIMS = [TRUE_GAP, FALSE_GAP, ORDER, LEVEL]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('check') / 'o.db'}"
    simulated_store(url, claims=CLAIMS).close()
    return url


def write_claims(folder, claims) -> str:
    path = folder / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": claims}))
    return str(path)


def test_check_gives_each_claim_a_verdict_with_its_interval(store):
    result = orch("--store", store, "check", "--json")
    assert result.returncode == 0, result.stderr
    verdicts = {v["id"]: v for v in json.loads(result.stdout)["verdicts"]}
    assert {k: v["verdict"] for k, v in verdicts.items()} == {
        "gap_42x": "supported",
        "gap_5x": "contradicted",
        "good_above_ntp": "supported",
        "far": "contradicted",
    }
    gap = verdicts["gap_42x"]
    low, high = gap["interval"]
    assert 21 <= low < gap["value"] < high <= 84
    assert set(gap["axes"]) == {"samples", "flops"} and gap["measured_gap"]["interval"] is not None
    assert any("samples, not FLOPs" in c for c in gap["caveats"])
    text = orch("--store", store, "check")
    assert text.returncode == 0
    first = text.stdout.splitlines()[:3]
    assert first[0].startswith("Claims") and "verdict" in first[1]
    assert "CONTRADICTED" in text.stdout and "SUPPORTED" in text.stdout


def test_strict_exits_3_on_a_contradicted_claim(store, tmp_path):
    assert orch("--store", store, "check", "--strict").returncode == 3
    only_true = write_claims(tmp_path, [TRUE_GAP, ORDER])
    assert orch("--store", store, "check", only_true, "sim", "--strict").returncode == 0


def test_fit_stores_the_verdicts_and_the_next_fit_shows_a_change(store, tmp_path):
    first = orch("--store", store, "fit", "--out", str(tmp_path), "--json")
    assert first.returncode == 0, first.stderr
    assert len(json.loads(first.stdout)["verdicts"]) == 4
    stored = Store.open(store).table_frame("verdicts", "sim")
    assert sorted(stored.claim) == sorted(c["id"] for c in CLAIMS)
    assert set(stored.verdict) == {"supported", "contradicted"}
    page = (tmp_path / "sim" / "latest" / "report.html").read_text()
    assert page.index('id="verdicts"') < page.index("<h2>Plots") < page.index('id="fits"')
    markdown = (tmp_path / "sim" / "latest" / "report.md").read_text()
    assert markdown.index("## Claims") < markdown.index("## Plots") < markdown.index("## Fits")
    with Store.open(store).session_scope() as connection:  # as if the first fit had said otherwise
        connection.exec_driver_sql("UPDATE verdicts SET verdict = 'inconclusive' WHERE claim = 'gap_42x'")
    again = json.loads(orch("--store", store, "check", "--json").stdout)
    before = {v["id"]: v["before"] for v in again["verdicts"]}
    assert before["gap_42x"][0] == "inconclusive"


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ([{**TRUE_GAP, "tolerence": 2}], "claims[0].tolerence: unknown key (did you mean 'tolerance'?)"),
        (
            [{**TRUE_GAP, "faster": "jepa_god"}],
            "claims[0].faster: 'jepa_god' is not allowed (did you mean 'jepa_good'?)",
        ),
        ([{**TRUE_GAP, "metric": "mutal_knn@10"}], "claims[0].metric: 'mutal_knn@10' is not a metric"),
        (
            [claim("x", "level", objective="ntp", at="1M")],
            "claims[0]: states no region (give value and tolerance",
        ),
        ([{**TRUE_GAP, "kind": "gapp"}], "claims[0].kind: 'gapp' is not allowed (did you mean 'gap'?)"),
        ([TRUE_GAP, TRUE_GAP], "claims[1].id: 'gap_42x' is given twice"),
    ],
)
def test_a_claims_file_mistake_is_one_line_and_writes_nothing(store, tmp_path, claims, expected):
    path = write_claims(tmp_path, claims)
    before = len(Store.open(store).table_frame("verdicts", "sim"))
    line = one_error_line(orch("--store", store, "check", path))
    assert expected in line and path in line
    assert "recorded sweep file" not in line and "orch sweep" not in line  # the claims file is at fault
    assert len(Store.open(store).table_frame("verdicts", "sim")) == before


def test_a_sweep_without_claims_says_how_to_give_them(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    simulated_store(url).close()
    line = one_error_line(orch("--store", url, "check"))
    assert "sweep sim states no claims: give a claims file (orch check CLAIMS.yaml sim)" in line


def test_a_claim_the_sweep_cannot_speak_to_is_inconclusive_and_the_others_are_judged(store, tmp_path):
    claims = [
        {**LEVEL, "at": "900M"},  # more than 4x past every size measured
        {**ORDER, "id": "on_cka", "metric": "cka"},  # a metric the sweep did not measure
        claim("bad", "order", above="ntp", below="jepa_bad"),  # an objective it did not run
        claim("good_base", "level", objective="jepa_good", model="33M", at="1.16M", at_least=0),
        {**ORDER, "id": "typo", "reference": "dinp"},  # a reference misspelt
        {**ORDER, "id": "huge", "model": "bas"},  # a model misspelt
        TRUE_GAP,
    ]
    result = orch("--store", store, "check", write_claims(tmp_path, claims), "--json")
    assert result.returncode == 0, result.stderr
    verdicts = {v["id"]: v for v in json.loads(result.stdout)["verdicts"]}
    assert verdicts["gap_42x"]["verdict"] == "supported"
    why = {claim_id: " ".join(v["reasons"]) for claim_id, v in verdicts.items() if claim_id != "gap_42x"}
    assert all(verdicts[claim_id]["verdict"] == "inconclusive" for claim_id in why)
    assert "at 900M is more than 4x past every size measured" in why["far"]
    assert (
        "not measured: metric cka (measured: mutual_knn@10, mutual_knn@10/layer0, mutual_knn@10/layer1)"
        in why["on_cka"]
    )
    assert "not measured: objective jepa_bad" in why["bad"]
    assert "not measured: model 33M of jepa_good (measured: base)" in why["good_base"]
    assert "not measured: reference dinp of jepa_good (did you mean dino?) (measured: dino)" in why["typo"]
    assert "not measured: model bas of jepa_good (did you mean base?) (measured: base)" in why["huge"]


def test_markup_in_a_claim_is_text_in_report_md_as_in_report_html(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    says = '<img src=x onerror="alert(1)"> a | b'
    simulated_store(url, claims=[{**TRUE_GAP, "says": says, "source": "<b>paper</b>"}]).close()
    assert orch("--store", url, "fit", "--out", str(tmp_path / "r")).returncode == 0
    markdown = (tmp_path / "r" / "sim" / "latest" / "report.md").read_text()
    page = (tmp_path / "r" / "sim" / "latest" / "report.html").read_text()
    for report in (markdown, page):
        assert "<img" not in report and "<b>" not in report and "&lt;img src=x onerror=" in report
    assert "&lt;b>paper&lt;/b>" in markdown and "&lt;b&gt;paper&lt;/b&gt;" in page
    assert "a \\| b" in markdown  # a bar inside a cell stays inside it


def test_a_command_quiet_for_longer_than_the_heartbeat_says_what_it_is_doing(store, monkeypatch):
    monkeypatch.setattr("orchestrator.cli.heartbeat.HEARTBEAT_S", 0.05)  # the fits take longer than this
    result = orch("--store", store, "check")
    assert result.returncode == 0, result.stderr
    beats = [line for line in result.stderr.splitlines() if line.endswith("s so far)")]
    assert beats and all(line.startswith("orch: ") for line in beats)
    assert any("fitting sweep sim's curves and judging its 4 claims" in line for line in beats), beats
