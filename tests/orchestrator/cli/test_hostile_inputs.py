"""Hostile and careless inputs to every command, each run as `orch` runs it (in this process,
through click's CliRunner: `tests.cli`): one line on stderr naming the file or option, exit 2, no
traceback, and nothing written to the folder.

Each case writes its files into a folder of its own and returns the command's arguments; the
table is the count the faults issue asks for (the sweep-file table in test_spec is on top)."""

import io
import json
import resource
import signal
import sqlite3
import subprocess
import sys
import zipfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from db import Store
from tests.cli import orch
from tests.datasets import file_dataset, write_jsonl
from tests.stores import simulated_store

Setup = Callable[[Path], list[str]]
CASES: dict[str, tuple[Setup, str]] = {}


def case(expected: str) -> Callable[[Setup], Setup]:
    """Register a setup under its function name, with the text its one error line must hold."""

    def register(setup: Setup) -> Setup:
        CASES[setup.__name__] = (setup, expected)
        return setup

    return register


# --- a files-path sweep: the driver reads its files before any trial starts ------------------

PAIRS = [(f"a red ball {i}", f"the ball is red {i}") for i in range(40)]
TEXTS = [f"caption number {i}" for i in range(24)]


def files_sweep(
    folder: Path, objectives=("ntp",), eval_set="wit-24", metrics=("mutual_knn@10",), **top
) -> list[str]:
    data = file_dataset(folder, PAIRS, TEXTS, width=8)
    raw = {
        "name": "hostile",
        "store": f"sqlite:///{folder / 'orch.db'}",
        "data": data,
        "eval": {"set": eval_set, "metrics": list(metrics)},
        "grid": {"objective": list(objectives), "model": ["tiny"], "data_size": ["1K"], "seed": [0]},
        **top,
    }
    (folder / "s.yaml").write_text(yaml.safe_dump(raw))
    return ["sweep", "s.yaml", "--num-cpus", "1"]


@case("pairs.jsonl:2: not JSON")
def pairs_broken_at_row_2(folder):
    args = files_sweep(folder)
    lines = (folder / "pairs.jsonl").read_text().splitlines()
    (folder / "pairs.jsonl").write_text("\n".join([lines[0], "{oops", *lines[2:]]) + "\n")
    return args


@case("pairs.jsonl:3: not UTF-8")
def pairs_with_a_latin_1_byte(folder):
    args = files_sweep(folder)
    lines = (folder / "pairs.jsonl").read_bytes().splitlines()
    lines[2] = lines[2].replace(b"red", b"r\xe9d")
    (folder / "pairs.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return args


@case("pairs.jsonl:5: column 'caption_b' is empty")
def pairs_with_an_empty_caption(folder):
    args = files_sweep(folder)
    rows = [
        {"image_id": i, "caption_a": a, "caption_b": "" if i == 4 else b} for i, (a, b) in enumerate(PAIRS)
    ]
    write_jsonl(folder / "pairs.jsonl", rows)
    return args


@case("pairs.parquet: ")
def pairs_parquet_with_corrupted_pages(folder):
    args = files_sweep(folder)
    table = pa.table({"caption_a": [a for a, _ in PAIRS] * 50, "caption_b": [b for _, b in PAIRS] * 50})
    pq.write_table(table, folder / "pairs.parquet", compression="none")
    raw = bytearray((folder / "pairs.parquet").read_bytes())
    raw[200:1200] = b"\xff" * 1000
    (folder / "pairs.parquet").write_bytes(bytes(raw))
    spec = yaml.safe_load((folder / "s.yaml").read_text())
    spec["data"]["pairs"] = "pairs.parquet"
    (folder / "s.yaml").write_text(yaml.safe_dump(spec))
    return args


@case("pairs.jsonl: no such file")
def pairs_file_missing(folder):
    args = files_sweep(folder)
    (folder / "pairs.jsonl").unlink()
    return args


@case("data.documents: is required when the grid has jepa_bad")
def jepa_bad_without_documents(folder):
    return files_sweep(folder, objectives=("ntp", "jepa_bad"))


@case("docs.jsonl:2: column 'text' is missing or not text")
def documents_with_a_number_for_text(folder):
    args = files_sweep(folder, objectives=("jepa_bad",))
    write_jsonl(folder / "docs.jsonl", [{"text": "one two three four"}, {"text": 5}])
    spec = yaml.safe_load((folder / "s.yaml").read_text())
    spec["data"]["documents"] = "docs.jsonl"
    (folder / "s.yaml").write_text(yaml.safe_dump(spec))
    return args


@case("eval.jsonl: 24 eval texts, but a metric looks at 30 neighbours")
def eval_texts_fewer_than_k(folder):
    return files_sweep(folder, metrics=("cka", "mutual_knn@30"))


@case("eval.jsonl:3: column 'text' is empty")
def eval_text_empty(folder):
    args = files_sweep(folder)
    write_jsonl(folder / "eval.jsonl", [{"text": " " if i == 2 else t} for i, t in enumerate(TEXTS)])
    return args


def replace_features(folder: Path, array_writer: Callable[[Path], None]) -> list[str]:
    args = files_sweep(folder)
    array_writer(folder / "dino.npy")
    return args


@case("dtype <U5 is not numeric")
def features_of_strings(folder):
    return replace_features(folder, lambda p: np.save(p, np.full((24, 8), "hello")))


@case("complex values")
def features_complex(folder):
    return replace_features(folder, lambda p: np.save(p, np.ones((24, 8)) * (1 + 2j)))


@case("not a feature file")
def features_zero_bytes(folder):
    return replace_features(folder, lambda p: p.write_bytes(b""))


@case("holds NaN or inf")
def features_with_nan(folder):
    return replace_features(folder, lambda p: np.save(p, np.where(np.eye(24, 8) > 0, np.nan, 1.0)))


@case("dino.npy (reference 'dino'): 23 rows, but")
def features_one_row_short(folder):
    return replace_features(folder, lambda p: np.save(p, np.ones((23, 8))))


@case("not a feature file")
def features_pickled_objects(folder):
    return replace_features(folder, lambda p: np.save(p, np.array([{"a": 1}] * 24, dtype=object)))


@case("a stack of 2 layers, and eval.scoring orch scores one matrix a reference ('dino')")
def features_npz_of_two_layers(folder):
    def write(path: Path) -> None:
        np.savez(folder / "layers.npz", a=np.ones((24, 8)), b=np.ones((24, 8)))
        (folder / "layers.npz").rename(path)

    return replace_features(folder, write)


@case("holdout.objective[0]: 'jepa_god' is not among the sweep's trials' objectives")
def holdout_objective_not_in_grid(folder):
    return files_sweep(folder, holdout={"objective": ["jepa_god"]})


@case("holdout.data_size[0]: 2000 is not among")
def holdout_size_not_in_grid(folder):
    return files_sweep(folder, holdout={"data_size": ["2K"]})


@case("eval.set: is 129 characters, longer than the store's 128")
def eval_set_name_too_long(folder):
    return files_sweep(folder, eval_set="w" * 129)


@case("name: is 201 characters, longer than the store's 200")
def sweep_name_too_long(folder):
    args = files_sweep(folder)
    spec = yaml.safe_load((folder / "s.yaml").read_text())
    spec["name"] = "n" * 201
    (folder / "s.yaml").write_text(yaml.safe_dump(spec))
    return args


@case("s.yaml: cannot read (UnicodeDecodeError")
def sweep_file_not_utf8(folder):
    (folder / "s.yaml").write_bytes(b"name: caf\xe9\n")
    return ["sweep", "s.yaml"]


@case("Invalid value for 'SWEEP_FILE': File 's.yaml' is a directory")
def sweep_file_is_a_folder(folder):
    (folder / "s.yaml").mkdir()
    return ["sweep", "s.yaml"]


@case("Invalid value for '--num-cpus': 0 is not in the range")
def sweep_with_no_cpus(folder):
    return [*files_sweep(folder)[:-1], "0"]


@case("--budget, --max-rounds limit the rounds of --until-decided: add --until-decided")
def loop_limits_without_the_loop(folder):
    return [*files_sweep(folder), "--budget", "1e15", "--max-rounds", "2"]


@case("Invalid value for '--budget': '12 hours' is not FLOPs (3e15) or GPU-hours (12gpu-h)")
def loop_budget_in_hours(folder):
    return [*files_sweep(folder), "--until-decided", "--budget", "12 hours"]


@case("Invalid value for '--budget': '-3gpu-h' is not a positive finite budget")
def loop_budget_negative(folder):
    return [*files_sweep(folder), "--until-decided", "--budget", "-3gpu-h"]


@case("--until-decided runs rounds: drop --dry-run")
def loop_as_a_dry_run(folder):
    return [*files_sweep(folder), "--dry-run", "--until-decided"]


@case("s.yaml: states no claims, so --until-decided has nothing to decide (name a claims file: claims: FILE)")
def loop_without_claims(folder):
    return [*files_sweep(folder), "--until-decided"]


@case("--storage 's3://bucket/orch': trials write checkpoints as files")
def storage_in_a_bucket(folder):
    return [*files_sweep(folder), "--storage", "s3://bucket/orch"]


@case("cannot make folders in")
def storage_under_a_file(folder):
    (folder / "taken").write_text("a file, not a folder")
    return [*files_sweep(folder), "--storage", "file://" + str(folder / "taken" / "orch")]


@case("No such command 'swep'. Did you mean 'sweep'?")
def command_misspelt(folder):
    return ["swep", "s.yaml"]


# --- published baselines ----------------------------------------------------------------------

HEADER = "source,model,objective,metric,reference,eval_set,samples,value"


def baselines(folder: Path, body: bytes | str) -> list[str]:
    raw = body.encode() if isinstance(body, str) else body
    (folder / "b.csv").write_bytes(raw)
    return ["--store", f"sqlite:///{folder / 'orch.db'}", "baselines", "import", "b.csv"]


@case("b.csv:2: column model holds a control character")
def baseline_with_a_nul_byte(folder):
    return baselines(folder, f"{HEADER}\npaper,NTP\x00,ntp,cka,dino,wit,1M,0.1\n")


@case("b.csv:2: column model is 129 characters, longer than the store's 128")
def baseline_model_name_too_long(folder):
    return baselines(folder, f"{HEADER}\npaper,{'m' * 129},ntp,cka,dino,wit,1M,0.1\n")


@case("b.csv:3: more cells than the header has columns")
def baseline_row_with_an_extra_cell(folder):
    return baselines(
        folder, f"{HEADER}\npaper,m,ntp,cka,dino,wit,1M,0.1\npaper,m,ntp,cka,dino,wit,2M,0.1,x\n"
    )


@case("b.csv:2: se '-0.003' is not a positive number (leave it empty where none is known)")
def baseline_with_a_negative_se(folder):
    return baselines(folder, f"{HEADER},se\npaper,m,ntp,cka,dino,wit,1M,0.1,-0.003\n")


@case("b.csv:2: value 'nan' is not finite")
def baseline_value_nan(folder):
    return baselines(folder, f"{HEADER}\npaper,m,ntp,cka,dino,wit,1M,nan\n")


@case("b.csv:2: value 'high' is not a number")
def baseline_value_text(folder):
    return baselines(folder, f"{HEADER}\npaper,m,ntp,cka,dino,wit,1M,high\n")


@case("b.csv: cannot read CSV")
def baseline_file_latin_1(folder):
    return baselines(folder, f"{HEADER}\npaper,caf\xe9,ntp,cka,dino,wit,1M,0.1\n".encode("latin-1"))


@case("b.csv: missing column(s) source")
def baseline_file_empty(folder):
    return baselines(folder, "")


@case("b.csv: unknown column(s) seed")
def baseline_unknown_column(folder):
    return baselines(folder, f"{HEADER},seed\npaper,m,ntp,cka,dino,wit,1M,0.1,0\n")


@case("b.csv:2: column source is empty")
def baseline_without_source(folder):
    return baselines(folder, f"{HEADER}\n ,m,ntp,cka,dino,wit,1M,0.1\n")


@case("b.csv:2: samples: '-5' is not a size")
def baseline_negative_samples(folder):
    return baselines(folder, f"{HEADER}\npaper,m,ntp,cka,dino,wit,-5,0.1\n")


@case("--log mlfow=http://orch:***@host/?password=***: unknown backend 'mlfow'")
def sweep_log_to_an_unknown_backend_with_a_password(folder):
    return [*files_sweep(folder), "--log", "mlfow=http://orch:Pa'ssLeakCheck@host/?password=LeakCheck"]


@case("--log tensorboard=http://orch:***@host/: tensorboard takes no value")
def sweep_log_to_tensorboard_with_a_password(folder):
    return [*files_sweep(folder), "--log", "tensorboard=http://orch:LeakCheck@host/"]


@case("Invalid value for '--every': 10000000000.0 is not in the range 0.1<=x<=86400")
def status_watch_every_beyond_a_day(folder):
    return [*fit(folder)[:2], "status", "--watch", "--every", "1e10"]


@case("Invalid value for '--max-rounds': 1000000000 is not in the range 1<=x<=20")
def sweep_until_decided_with_a_billion_rounds(folder):
    return [*files_sweep(folder), "--until-decided", "--max-rounds", "1000000000"]


@case("train.batch_size: 32 is above the data size 16 of trial ntp/tiny/seed 0: a batch would hold")
def sweep_whose_data_size_is_below_its_batch(folder):
    args = files_sweep(folder)
    raw = yaml.safe_load((folder / "s.yaml").read_text())
    raw["grid"]["data_size"] = [16]
    (folder / "s.yaml").write_text(yaml.safe_dump(raw))
    return [*args, "--dry-run"]


@case("pairs.jsonl:2: not JSON")
def sweep_until_decided_on_a_broken_file(folder):
    """The loop checks its files before Ray starts or a store is made, as orch sweep does."""
    claim = {"id": "level", "says": "NTP aligns at 0.1", "source": "a test", "kind": "level"}
    claim |= {"objective": "ntp", "at": "1K", "value": 0.1, "tolerance": 0.05}
    args = files_sweep(folder, claims=[claim])
    raw = yaml.safe_load((folder / "s.yaml").read_text())
    raw["grid"]["seed"] = [0, 1]  # two seeds measure the noise: the design check says nothing
    (folder / "s.yaml").write_text(yaml.safe_dump(raw))
    lines = (folder / "pairs.jsonl").read_text().splitlines()
    (folder / "pairs.jsonl").write_text("\n".join([lines[0], "{oops", *lines[2:]]) + "\n")
    return [*args, "--until-decided"]


@case("dino.npy: its sidecar lists 3 row ids, but")
def sweep_whose_reference_sidecar_lists_too_few_rows(folder):
    args = files_sweep(folder)
    write_jsonl(folder / "eval.jsonl", [{"id": str(i), "text": text} for i, text in enumerate(TEXTS)])
    rows = {"count": 3, "ids": ["0", "1", "2"], "sha256": ["a", "b", "c"]}
    sidecar = {
        "format": "orch-features/1",
        "side": "image",
        "model": {"folder": "m", "sha256": "s"},
        "rows": rows,
    }
    (folder / "dino.json").write_text(json.dumps(sidecar))
    return args


# --- orch import of runs ------------------------------------------------------------------------

RUNS_HEADER = "objective,model,data_size,seed,samples_seen,metric,reference,eval_set,value"


def import_runs(folder: Path, text: str) -> list[str]:
    (folder / "runs.csv").write_text(text)
    return ["--store", f"sqlite:///{folder / 'orch.db'}", "import", "runs.csv", "--sweep", "theirs"]


@case("runs.csv: no rows to import (a header alone, or no trial done)")
def import_runs_of_a_header_alone(folder):
    return import_runs(folder, RUNS_HEADER + "\n")


@case("runs.csv: no rows to import (a header alone, or no trial done)")
def import_runs_whose_status_column_has_no_done_trial(folder):
    return import_runs(
        folder, f"{RUNS_HEADER},status\nntp,base,1M,0,1000000,mutual_knn@10,dino,wit,0.1,failed\n"
    )


# --- store URLs ---------------------------------------------------------------------------------


@case("sqlite://: an in-memory store keeps nothing")
def store_in_memory(folder):
    return ["--store", "sqlite://", "status"]


@case("mysql://u:***@db.example/x: the user name or password holds an unescaped '@'")
def store_unsupported_with_an_at_in_its_password(folder):
    return ["--store", "mysql://u:p@ss@W0rd-LeakCheck@db.example/x", "status"]


@case("cannot make its folder")
def store_under_a_file(folder):
    (folder / "blocker").write_text("")
    args = baselines(folder, f"{HEADER}\npaper,m,ntp,cka,dino,wit,1M,0.1\n")
    return ["--store", f"sqlite:///{folder / 'blocker' / 'orch.db'}", *args[2:]]


@case("not a store URL")
def store_not_a_url(folder):
    return ["--store", "::not a url::", "status"]


# --- orch align ----------------------------------------------------------------------------------


def align(folder: Path, a: np.ndarray, b: np.ndarray | None = None, *extra: str) -> list[str]:
    np.save(folder / "a.npy", a)
    np.save(folder / "b.npy", a if b is None else b)
    return ["align", "a.npy", "b.npy", *extra]


@case("0 rows x 4 columns (need 2+ rows")
def align_zero_rows(folder):
    return align(folder, np.zeros((0, 4)))


@case("30 rows x 0 columns")
def align_zero_width(folder):
    return align(folder, np.zeros((30, 0)))


@case("shape (30,) is not rows x width")
def align_one_dimensional(folder):
    return align(folder, np.ones(30))


@case("a.npz: not a feature file")
def align_zip_that_is_not_an_npz(folder):
    with zipfile.ZipFile(folder / "a.npz", "w") as archive:
        archive.writestr("notes.txt", "hello")
    np.save(folder / "b.npy", np.ones((30, 4)))
    return ["align", "a.npz", "b.npy"]


@case("a.npz: not a feature file")
def align_npz_with_a_pickled_layer(folder):
    np.savez(folder / "a.npz", layer=np.array([{"x": 1}] * 30, dtype=object))
    np.save(folder / "b.npy", np.ones((30, 4)))
    return ["align", "a.npz", "b.npy"]


@case("k must be at least 1")
def align_with_k_zero(folder):
    return align(folder, np.random.default_rng(0).normal(size=(30, 4)), None, "--metric", "mutual_knn@0")


# --- orch fit on a real store ------------------------------------------------------------------


def fit(folder: Path, *extra: str) -> list[str]:
    simulated_store(f"sqlite:///{folder / 'orch.db'}").close()  # its WAL folded in first
    return ["--store", f"sqlite:///{folder / 'orch.db'}", "fit", "--out", "reports", *extra]


@case("--at-alignment")
def fit_at_alignment_nan(folder):
    return fit(folder, "--at-alignment", "nan")


@case("--min-samples")
def fit_min_samples_beyond_every_run(folder):
    return fit(folder, "--min-samples", "1T")


@case("'12Q' is not a size")
def fit_predict_not_a_size(folder):
    return fit(folder, "--predict", "12Q")


@case("--gap")
def fit_gap_without_a_colon(folder):
    return fit(folder, "--gap", "jepa_good-ntp")


@case("--huber-delta nan: give a positive number of log units")
def fit_huber_delta_nan(folder):
    return fit(folder, "--huber-delta", "nan")


@case("--at and --at-alignment both name the gap's level: give one of them")
def fit_at_and_at_alignment(folder):
    return fit(folder, "--gap", "jepa_good:ntp", "--at", "290K", "--at-alignment", "0.1")


@case("--at sets the level of a gap: give the gap too (--gap A:B)")
def fit_at_without_a_gap(folder):
    return fit(folder, "--at", "290K")


@case("--gap jepa_good:jepa_good: a gap compares two objectives")
def fit_gap_of_an_objective_with_itself(folder):
    return fit(folder, "--gap", "jepa_good:jepa_good")


@case("--bootstrap 10000000: at most 10,000 refits")
def fit_bootstrap_beyond_reason(folder):
    return fit(folder, "--bootstrap", "10000000")


@case("--out /proc/orch: cannot write a report in /proc/orch/sim")
def fit_out_under_proc(folder):
    return [*fit(folder)[:-2], "--out", "/proc/orch"]


@case("cannot write a report in reports/sim (Too many levels of symbolic links)")
def fit_out_in_a_symlink_loop(folder):
    args = fit(folder)
    (folder / "reports").symlink_to("reports")
    return args


@case("cannot write a report in reports/sim (")
def fit_out_where_a_file_is(folder):
    args = fit(folder)
    (folder / "reports").mkdir()
    (folder / "reports" / "sim").write_text("a file where the sweep's report folder goes")
    return args


@case("--out /proc/orch: cannot make the folder")
def export_under_proc(folder):
    simulated_store(f"sqlite:///{folder / 'orch.db'}").close()
    return ["--store", f"sqlite:///{folder / 'orch.db'}", "export", "--out", "/proc/orch"]


@case("Invalid value for '--format'")
def export_in_an_unknown_format(folder):
    return ["export", "--format", "xml"]


@case("Invalid value for '--budget': 'nan' is not a positive finite budget")
def next_with_a_budget_of_nan(folder):
    return [*fit(folder)[:2], "next", "--budget", "nan"]


@case("Invalid value for '--seed': -5 is not in the range x>=0")
def next_with_a_negative_seed(folder):
    return [*fit(folder)[:2], "next", "--seed", "-5"]


@case("Invalid value for '--connect-timeout': 'nan' is not a finite number")
def sweep_connect_timeout_nan(folder):
    return [*files_sweep(folder), "--connect-timeout", "nan"]


# --- output paths: never an input of the command, never a file orch did not write -----------


def coco_captions(folder: Path, name: str = "captions.json") -> Path:
    annotations = [{"image_id": i // 2, "id": i, "caption": f"caption {i}"} for i in range(8)]
    (folder / name).write_text(json.dumps({"images": [], "annotations": annotations}))
    return folder / name


def parquet_captions(path: Path) -> None:
    pq.write_table(
        pa.Table.from_pylist([{"image_id": 1, "caption": "a"}, {"image_id": 1, "caption": "b"}]), path
    )


@case("--out captions.parquet: its sidecar captions.json is the input captions.json")
def data_pairs_sidecar_over_its_coco_input(folder):
    coco_captions(folder)
    return ["data", "pairs", "captions.json", "--out", "captions.parquet"]


@case("--out rows.parquet: rows.parquet is the input rows.parquet")
def data_pairs_out_is_its_input(folder):
    parquet_captions(folder / "rows.parquet")
    return ["data", "pairs", "rows.parquet", "--out", "rows.parquet"]


@case("--out docs.parquet: its sidecar docs.json is the input docs.json")
def data_chunks_sidecar_over_its_json_corpus(folder):
    write_jsonl(folder / "docs.json", [{"text": "one two three four"}])
    return ["data", "chunks", "docs.json", "--out", "docs.parquet"]


@case("--out pairs.parquet: its sidecar pairs.json is the input pairs.json")
def data_pairs_sidecar_over_its_eval_texts(folder):
    coco_captions(folder)
    write_jsonl(folder / "pairs.json", [{"text": "caption 1"}])
    return ["data", "pairs", "captions.json", "--eval-texts", "pairs.json", "--out", "pairs.parquet"]


@case("--out pairs.parquet: its sidecar pairs.json is there and orch did not write it")
def data_pairs_sidecar_over_a_file_orch_did_not_write(folder):
    coco_captions(folder)
    (folder / "pairs.json").write_text('{"my": "notes"}')
    return ["data", "pairs", "captions.json", "--out", "pairs.parquet"]


@case("--out link.parquet: link.parquet is the input captions.parquet")
def data_pairs_out_a_link_to_its_input(folder):
    parquet_captions(folder / "captions.parquet")
    (folder / "link.parquet").symlink_to("captions.parquet")
    return ["data", "pairs", "captions.parquet", "--out", "link.parquet"]


@case("Invalid value for '--seed': -1 is not in the range x>=0")
def data_pairs_with_a_negative_seed(folder):
    coco_captions(folder)
    return ["data", "pairs", "captions.json", "--rule", "one", "--seed", "-1", "--out", "p.parquet"]


@case("--eval-texts /dev/zero: not a file (give the eval set's JSONL)")
def data_pairs_reading_eval_texts_from_a_device(folder):
    coco_captions(folder)
    return ["data", "pairs", "captions.json", "--eval-texts", "/dev/zero", "--out", "p.parquet"]


@case("--out /proc/pairs.parquet: cannot write in /proc")
def data_pairs_out_where_no_file_can_be_made(folder):
    coco_captions(folder)
    return ["data", "pairs", "captions.json", "--out", "/proc/pairs.parquet"]


@case("--out /proc/chunks.parquet: cannot write in /proc")
def data_chunks_out_where_no_file_can_be_made(folder):
    write_jsonl(folder / "docs.jsonl", [{"text": "one two three four"}])
    return ["data", "chunks", "docs.jsonl", "--out", "/proc/chunks.parquet"]


@case("image '1' has 20,000 captions: --rule all would pair them 199,990,000 ways")
def data_pairs_all_of_an_image_with_20k_captions(folder):
    write_jsonl(folder / "rows.jsonl", [{"image_id": 1, "caption": f"caption {i}"} for i in range(20_000)])
    return ["data", "pairs", "rows.jsonl", "--rule", "all", "--out", "pairs.parquet"]


@case("--out eval.jsonl: eval.jsonl is the input")
def features_manifest_over_the_sweeps_eval_texts(folder):
    return ["features", "manifest", *files_sweep(folder)[1:2], "--out", "eval.jsonl"]


@case("--out s.yaml: s.yaml is the input s.yaml")
def features_manifest_over_its_sweep_file(folder):
    return ["features", "manifest", *files_sweep(folder)[1:2], "--out", "s.yaml"]


@case("--out notes.jsonl: notes.jsonl is there and orch did not write it")
def features_manifest_over_a_file_orch_did_not_write(folder):
    write_jsonl(folder / "notes.jsonl", [{"id": "0", "text": "mine"}])
    return ["features", "manifest", *files_sweep(folder)[1:2], "--out", "notes.jsonl"]


def next_of(folder: Path) -> list[str]:
    return [*fit(folder)[:2], "next"]


@case("--write orch.db: orch.db is the input")
def next_write_over_the_store(folder):
    return [*next_of(folder), "--write", "orch.db"]


@case("--write claims.yaml: claims.yaml is the input")
def next_write_over_its_claims_file(folder):
    (folder / "claims.yaml").write_text("claims: []\n")
    return [*next_of(folder), "claims.yaml", "sim", "--write", "claims.yaml"]


@case("--write template.yaml: template.yaml is the input")
def next_write_over_its_template(folder):
    (folder / "template.yaml").write_text("name: t\n")
    return [*next_of(folder), "--template", "template.yaml", "--write", "template.yaml"]


@case("--write sweep.yaml: sweep.yaml is there and orch did not write it")
def next_write_over_a_sweep_file_orch_did_not_write(folder):
    (folder / "sweep.yaml").write_text("name: mine\n")
    return [*next_of(folder), "--write", "sweep.yaml"]


@case("--write more.yaml: .more.yaml.partial (its partial file) is there and is not a file")
def next_write_where_its_partial_file_is_a_folder(folder):
    (folder / ".more.yaml.partial").mkdir()
    return [*next_of(folder), "--write", "more.yaml"]


# --- files that would make a reader work without bound ----------------------------------------


def laughs(levels: int = 9) -> str:
    """YAML's "billion laughs": a few hundred bytes whose aliases stand for 9**levels values."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@case("claims.yaml: refused: its aliases expand to more than")
def claims_whose_says_is_a_billion_laughs(folder):
    args = fit(folder)
    claim = "  - {id: g, kind: gap, faster: jepa_good, slower: ntp, value: 42, tolerance: 2, "
    (folder / "claims.yaml").write_text(laughs() + "claims:\n" + claim + "source: p, says: *l8}\n")
    return [*args[:2], "check", "claims.yaml", "sim"]


@case("s.yaml: refused: its aliases expand to more than")
def sweep_whose_grid_holds_a_billion_laughs(folder):
    files_sweep(folder)
    raw = (folder / "s.yaml").read_text()
    (folder / "s.yaml").write_text(laughs() + raw.replace("name: hostile", "name: *l8"))
    return ["sweep", "s.yaml", "--dry-run"]


@case("s.yaml: refused: nested more than 64 levels deep")
def sweep_nested_a_hundred_thousand_deep(folder):
    files_sweep(folder)
    (folder / "s.yaml").write_text("name: " + "[" * 100_000 + "]" * 100_000 + "\n")
    return ["sweep", "s.yaml", "--dry-run"]


# --- stores that are not orch's, or not there -------------------------------------------------


def foreign_sqlite(folder: Path, *tables: str) -> str:
    """A SQLite file of somebody else's, in rollback-journal mode (no WAL), with their tables."""
    with closing(sqlite3.connect(folder / "theirs.db")) as connection, connection:
        for table in tables:
            connection.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT)")
            connection.execute(f"INSERT INTO {table} (name) VALUES ('theirs')")
    return f"sqlite:///{folder / 'theirs.db'}"


@case("holds tables that are not orch's (people); nothing was written")
def db_upgrade_of_somebody_elses_database(folder):
    return ["--store", foreign_sqlite(folder, "people"), "db", "upgrade"]


@case("holds no orch tables (an empty database); nothing was written")
def db_upgrade_of_an_empty_file(folder):
    (folder / "empty.db").write_bytes(b"")
    return ["--store", f"sqlite:///{folder / 'empty.db'}", "db", "upgrade"]


@case("holds tables that are not orch's (people, sweeps)")
def sweep_into_a_database_with_its_own_sweeps_table(folder):
    url = foreign_sqlite(folder, "people", "sweeps")
    return ["--store", url, *files_sweep(folder)]


@case("holds tables that are not orch's (people)")
def baselines_import_into_somebody_elses_database(folder):
    args = baselines(folder, f"{HEADER}\npaper,m,ntp,cka,dino,wit,1M,0.1\n")
    return ["--store", foreign_sqlite(folder, "people"), *args[2:]]


@case("holds tables that are not orch's (people)")
def status_of_somebody_elses_database(folder):
    return ["--store", foreign_sqlite(folder, "people"), "status"]


@case("orch_meta holds no schema version orch could have written ('six')")
def store_whose_schema_version_is_not_a_number(folder):
    url = foreign_sqlite(folder)
    Store.open(url).close()
    # closed here, not by the garbage collector in the middle of the command under test; the
    # journal mode set outside a transaction, where SQLite can change it
    with closing(sqlite3.connect(folder / "theirs.db", isolation_level=None)) as connection:
        connection.execute("UPDATE orch_meta SET value = 'six' WHERE key = 'schema'")
        assert connection.execute("PRAGMA journal_mode=DELETE").fetchone() == ("delete",)
    return ["--store", url, "status"]


@case("orch_meta holds no schema version orch could have written (none)")
def store_whose_orch_meta_is_somebody_elses(folder):
    with closing(sqlite3.connect(folder / "theirs.db")) as connection:
        connection.execute("CREATE TABLE orch_meta (name TEXT, setting TEXT)")
        connection.commit()
    return ["--store", f"sqlite:///{folder / 'theirs.db'}", "status"]


@case("does not exist (run 'orch sweep FILE' first)")
def status_of_a_store_that_does_not_exist(folder):
    return ["--store", f"sqlite:///{folder / 'nowhere' / 'orch.db'}", "status"]


@case("does not exist (run 'orch sweep FILE' first)")
def status_of_a_store_under_a_file(folder):
    (folder / "a-file").write_text("not a folder")
    return ["--store", f"sqlite:///{folder / 'a-file' / 'orch.db'}", "status"]


@case("the user name or password holds an unescaped '@' (write it as %40)")
def store_password_with_an_unescaped_at(folder):
    return ["--store", "postgresql+psycopg://orch:Pa@ssLeakCheck@127.0.0.1:1/orch", "status"]


@case("its header claims shape (1000000000000, 4)")
def align_npy_whose_header_claims_a_trillion_rows(folder):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 4)}
    )
    (folder / "huge.npy").write_bytes(header.getvalue() + b"\0" * 64)
    align(folder, np.random.default_rng(0).normal(size=(30, 4)))
    return ["align", "a.npy", "huge.npy"]


@case("past 1e+150: their squares overflow and every score would read 0")
def align_features_near_the_largest_float(folder):
    return align(folder, np.full((30, 4), 1e308) * np.random.default_rng(0).uniform(0.5, 1, size=(30, 4)))


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file's size and time, but SQLite's shared-memory index, which any reader touches."""
    files = (p for p in folder.rglob("*") if not p.name.endswith("-shm"))
    return {str(p.relative_to(folder)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in files}


def run_case(folder: Path, setup: Setup) -> tuple[subprocess.CompletedProcess, dict, dict]:
    folder.mkdir()
    args = setup(folder)
    before = snapshot(folder)
    return orch(*args, cwd=folder), before, snapshot(folder)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_hostile_input_gets_one_line_exit_2_and_writes_nothing(tmp_path, name):
    setup, expected = CASES[name]
    result, before, after = run_case(tmp_path / name, setup)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("orch: error: ") and expected in lines[0], lines[0]
    assert "LeakCheck" not in result.stderr  # a password is never printed, however it is written
    assert after == before  # no store, no report, nothing half-written


def test_a_spreadsheet_csv_with_a_byte_order_mark_imports(tmp_path):
    (tmp_path / "b.csv").write_text(f"\ufeff{HEADER}\npaper,m,ntp,cka,dino,wit,1M,0.1\n", encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'orch.db'}"
    result = orch("--store", url, "baselines", "import", "b.csv", cwd=tmp_path)
    assert result.returncode == 0 and "1 of 1 rows added" in result.stderr, result.stderr
    assert list(Store.open(url).baselines_frame().source) == ["paper"]


def test_a_manifest_orch_wrote_is_written_again_in_place(tmp_path):
    sweep = str(Path(__file__).parents[3] / "sweeps" / "goodview_vs_ntp.yaml")
    for _ in range(2):
        result = orch("features", "manifest", sweep, "--out", "eval.jsonl", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (tmp_path / "eval.jsonl").read_text().splitlines()]
    assert len(rows) == 1024 and rows[0]["written_by"] == "orch features manifest"


@pytest.mark.parametrize("command", ["pairs", "chunks"])
def test_a_build_that_runs_out_of_room_midway_is_one_line_and_leaves_nothing(tmp_path, command):
    """A full disk, as a file-size limit (RLIMIT_FSIZE) met after the first writes succeed."""
    if command == "pairs":
        rows = [
            {"image_id": i, "caption": f"caption {j} of image {i}, some words"}
            for i in range(6000)
            for j in (0, 1)
        ]
    else:
        rows = [{"text": f"document {i} " + "word " * 60} for i in range(6000)]
    write_jsonl(tmp_path / "in.jsonl", rows)
    before = sorted(p.name for p in tmp_path.iterdir())

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))

    result = subprocess.run(
        [sys.executable, "-m", "orchestrator", "data", command, "in.jsonl", "--out", "out.parquet"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        preexec_fn=small_files,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip() == (
        "orch: error: --out out.parquet: no room to write it (File too large); nothing was written: "
        "free some space, or give an --out elsewhere"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == before
