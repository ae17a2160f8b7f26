"""A full disk is named as such: a store on a 400 KB tmpfs that fills up mid-write says "the disk
is full" in one line (SQLite says "disk I/O error" or "database or disk is full"), exit 1, and the
write it was making is not half there."""

import subprocess
import sys

import pytest

from db import Store

pytestmark = pytest.mark.processes  # a real tmpfs, mounted for the test (root only)


@pytest.fixture
def small_disk(tmp_path):
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()})")
    yield folder
    subprocess.run(["umount", "--lazy", str(folder)], check=True)


def test_a_store_on_a_full_disk_says_the_disk_is_full(small_disk, tmp_path):
    header = "source,model,objective,metric,reference,eval_set,samples,value"
    rows = [
        f"paper {i},model number {i} with a long name,ntp,cka,dino,wit,{i + 1}K,0.5" for i in range(20_000)
    ]
    (tmp_path / "big.csv").write_text("\n".join([header, *rows]) + "\n")
    url = f"sqlite:///{small_disk / 'orch.db'}"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "orchestrator",
            "--store",
            url,
            "baselines",
            "import",
            str(tmp_path / "big.csv"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"orch: error: store {url}: the disk is full (") and "free some space" in line
    store = Store.open(url, create=False)
    assert store.baselines_frame().empty  # the import landed whole or not at all
    store.close()
