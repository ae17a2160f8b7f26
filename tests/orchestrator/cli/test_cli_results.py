"""`orch fit`, `report`, `export`, `baselines list` and `status FILE` through a real subprocess:
every mistake is one line naming the valid values (exit 2), and every new command does its job."""

import json

import pandas as pd
import pytest

from tests.cli import ROOT, one_error_line, orch
from tests.stores import simulated_store


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('cli') / 'o.db'}"
    simulated_store(url)
    return url


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--gap", "jepa_god:ntp"],
            "'jepa_god' is not an objective of sim (did you mean jepa_good?) (jepa_good, ntp)",
        ),
        (
            ["--gap", "jepa_good-ntp"],
            "--gap 'jepa_good-ntp': write A:B, two objectives of the sweep (jepa_good, ntp)",
        ),
        (["--metric", "CKA"], "is not a metric (one of mutual_knn@10, cycle_knn@10"),
        (
            ["--metric", "cka"],
            "--metric 'cka' was not measured in sim (measured: mutual_knn@10, mutual_knn@10/layer0, "
            "mutual_knn@10/layer1)",
        ),
        (
            ["--reference", "dinoo"],
            "--reference 'dinoo' was not measured in sim (did you mean dino?) (measured: dino)",
        ),
        (["--holdout", "33K"], "--holdout 33K is not a data size of sim (145K, 290K,"),
        (["--min-samples", "1T"], "no measurement past random init at or above --min-samples"),
        (["--gap", "jepa_good:ntp", "--at-alignment", "nan"], "--at-alignment nan: give a level inside"),
        (["--gap", "jepa_good:ntp", "--at-alignment", "1.5"], "mutual_knn@10's range (0, 1)"),
    ],
)
def test_a_fit_option_naming_nothing_the_sweep_has_is_one_line(store, tmp_path, args, expected):
    # --store after the subcommand works as well as before it
    line = one_error_line(orch("fit", "--store", store, "--out", str(tmp_path), *args))
    assert line.startswith("orch: error: ") and expected in line
    assert not any(tmp_path.iterdir())  # nothing written


def test_min_samples_fits_what_is_left_and_writes_the_report(store, tmp_path):
    result = orch("--store", store, "fit", "--min-samples", "4K", "--out", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert {f["objective"] for f in payload["fits"]} == {"jepa_good", "ntp"}
    assert (tmp_path / "sim" / "latest" / "report.html").exists()


def test_points_all_on_decaying_runs_warns_and_says_why(store, tmp_path):
    result = orch("--store", store, "fit", "--points", "all", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "orch: warning: --points all on runs whose learning rate decays" in result.stderr


def test_report_writes_a_page_and_prints_its_path(store, tmp_path):
    result = orch("report", "--store", store, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    page = tmp_path / "sim" / "latest" / "report.html"
    assert result.stdout.strip().endswith("report.html") and page.exists()
    assert "<h2>Claims" in page.read_text()


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> tuple[str, list[dict]]:
    """A planted store fitted twice (its URL, and what each fit printed): a gap with its ratio,
    then one at a level ntp never reaches (a bound, no ratio)."""
    folder = tmp_path_factory.mktemp("fitted")
    url = f"sqlite:///{folder / 'o.db'}"
    simulated_store(url).close()
    runs = [
        ("--gap", "jepa_good:ntp", "--predict", "900M"),
        ("--gap", "jepa_good:ntp", "--at-alignment", "0.19"),
    ]
    printed = [
        json.loads(orch("--store", url, "fit", *args, "--out", str(folder / "r"), "--json").stdout)
        for args in runs
    ]
    return url, printed


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_export_holds_what_the_fit_printed_and_reads_back_with_pandas(fitted, tmp_path, kind):
    url, printed = fitted
    result = orch("export", "sim", "--store", url, "--format", kind, "--out", str(tmp_path / "x"))
    assert result.returncode == 0, result.stderr
    read = pd.read_csv if kind == "csv" else pd.read_parquet
    names = ("trials", "measurements", "fits", "forecasts", "gaps", "verdicts", "laws")
    frames = {name: read(tmp_path / "x" / f"{name}.{kind}") for name in names}
    assert not list((tmp_path / "x").glob(".*partial"))
    for name, frame in frames.items():  # no column hides behind a pandas attribute
        assert not [c for c in frame.columns if hasattr(pd.DataFrame, c)], name
    listed = (lambda v: list(v)) if kind == "parquet" else json.loads
    gaps = frames["gaps"][frames["gaps"].axis == "samples"]
    assert [bool(g["identifiable"]) for run in printed for g in run["gaps"]] == [True, False]
    for run in printed:
        (gap,) = run["gaps"]
        (row,) = gaps[gaps.fit_run == run["fit_id"]].itertuples()
        assert bool(row.identifiable) == gap["identifiable"] and listed(row.reasons) == gap["reasons"]
        assert listed(row.gap_flags) == gap["flags"]
        assert (None if pd.isna(row.ratio) else row.ratio) == pytest.approx(gap["ratio"])
        bound = gap["bound"] or {"side": None, "ratio": None}
        side = None if pd.isna(row.bound_side) else row.bound_side
        assert (side, row.bound_ratio if side else None) == (bound["side"], bound["ratio"])
    laws = frames["laws"]
    assert len(laws) == sum(len(curve["laws"]) for run in printed for curve in run["fits"])
    for curve in printed[-1]["fits"]:
        mine = laws[(laws.objective == curve["objective"]) & (laws.created == laws.created.max())]
        weights = dict.fromkeys(curve["laws"], 0.0) | curve["weights"]  # --json leaves out weight 0
        assert dict(zip(mine.law, mine.weight, strict=True)) == pytest.approx(weights)
        assert mine[mine.heaviest == 1].law.tolist() == [curve["law"]]
        assert set(mine.law) == set(curve["laws"])  # every law, not only the heaviest
    shown = [f["prediction"] for run in printed for c in run["fits"] for f in c["forecasts"]]
    assert None not in shown and len(shown) == len(frames["forecasts"])
    assert sorted(frames["forecasts"].prediction) == pytest.approx(sorted(shown))
    assert len(frames["trials"]) == len(frames["trials"].key.unique()) and len(frames["verdicts"]) == 0


def test_baselines_list_leaves_a_missing_sample_count_blank(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    header = "source,model,objective,metric,reference,eval_set,samples,value"
    rows = ["paper,m 33M,ntp,cka,dino,wit,,0.1", "paper,m 33M,jepa_good,cka,dino,wit,21.6M,0.2"]
    (tmp_path / "b.csv").write_text("\n".join([header, *rows]) + "\n")
    assert orch("--store", url, "baselines", "import", str(tmp_path / "b.csv")).returncode == 0
    listed = orch("--store", url, "baselines", "list")
    assert listed.returncode == 0 and "nan" not in listed.stdout.lower() and "21.6M" in listed.stdout
    (missing,) = [line for line in listed.stdout.splitlines() if " ntp " in line]
    assert missing.split() == ["paper", "m", "33M", "ntp", "cka", "dino", "wit", "0.1"]
    printed = json.loads(orch("--store", url, "baselines", "list", "--json").stdout)["baselines"]
    assert sorted(row["samples"] is None for row in printed) == [False, True]


def test_baselines_list_shows_what_import_stored(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    csv = ROOT / "sweeps" / "published" / "jepa_prh.csv"
    assert orch("--store", url, "baselines", "import", str(csv)).returncode == 0
    listed = orch("baselines", "list", "--store", url, "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["baselines"]
    assert len(rows) == len(pd.read_csv(csv)) and {"source", "samples", "value"} <= set(rows[0])


def test_status_of_a_sweep_file_reads_that_files_store_in_grid_order(store, tmp_path):
    path = store.removeprefix("sqlite:///")
    sweep = tmp_path / "sim.yaml"
    grid = "{objective: [jepa_good], model: [base], data_size: [1K], seed: [0]}"
    sweep.write_text(f"name: sim\nstore: sqlite:///{path}\ngrid: {grid}\n")
    result = orch("status", str(sweep), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    trials = json.loads(result.stdout)["sweeps"][0]["trials"]
    order = [(t["objective"], t["model"], t["data_size"], t["seed"]) for t in trials]
    assert order == sorted(order) and len(order) == 48


def test_stores_that_would_keep_nothing_or_are_not_orch_stores_are_one_line(tmp_path):
    csv = str(ROOT / "sweeps" / "published" / "jepa_prh.csv")
    memory = one_error_line(orch("--store", "sqlite://", "baselines", "import", csv))
    assert "an in-memory store keeps nothing after the command (give a file: sqlite:///orch.db)" in memory
    (tmp_path / "zero.db").write_bytes(b"")
    for command in (["fit"], ["status"], ["export"], ["baselines", "list"]):
        line = one_error_line(orch("--store", f"sqlite:///{tmp_path / 'zero.db'}", *command, cwd=tmp_path))
        assert "holds no orch tables (an empty database); nothing was written" in line, command
    assert (tmp_path / "zero.db").stat().st_size == 0
    (tmp_path / "file").write_text("x")
    nested = one_error_line(
        orch("--store", f"sqlite:///{tmp_path / 'file' / 'o.db'}", "baselines", "import", csv)
    )
    assert nested.endswith(f"cannot make its folder {tmp_path / 'file'} (a file is in the way)")
