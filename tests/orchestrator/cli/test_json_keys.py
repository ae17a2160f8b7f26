"""Every `--json` output's keys are snake_case, however deep: readers index them by name, and a
key like "date (UTC)" breaks every tool that maps JSON onto columns or attributes. Values that
name things (a law, a metric, a size) are data and may be anything; a dict keyed by such names
is listed in DATA_KEYED."""

import json
import re

import numpy as np
import pytest

from tests.cli import ROOT, orch
from tests.stores import simulated_store

SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
DATA_KEYED = {"weights", "counts", "params", "errors", "axes", "now", "outlooks"}  # laws, statuses, claim ids


def keys_not_snake(payload, path: str = "") -> list[str]:
    """The paths of every key that is not snake_case; a DATA_KEYED dict's values still count."""
    found = []
    if isinstance(payload, dict):
        for key, value in payload.items():
            if path.rsplit(".", 1)[-1] not in DATA_KEYED and not SNAKE.match(str(key)):
                found.append(f"{path}.{key}")
            found += keys_not_snake(value, f"{path}.{key}")
    elif isinstance(payload, list):
        for item in payload:
            found += keys_not_snake(item, f"{path}[]")
    return found


def test_the_walk_finds_a_key_with_a_space_however_deep():
    assert keys_not_snake({"a": [{"date (UTC)": 1}], "weights": {"Power Law": 1}}) == [".a[].date (UTC)"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("json")
    url = f"sqlite:///{folder / 'o.db'}"
    claim = {"id": "g", "kind": "gap", "faster": "jepa_good", "slower": "ntp", "at_least": 1}
    tight = claim | {"id": "g.tight", "value": 42, "tolerance": 1.05}  # inconclusive: orch next plans it
    tight.pop("at_least")
    claims = [c | {"says": "A first", "source": "a test"} for c in (claim, tight)]
    simulated_store(url, claims=claims).close()
    header = "source,model,objective,metric,reference,eval_set,samples,value"
    (folder / "b.csv").write_text(f"{header}\npaper,m base,ntp,mutual_knn@10,dino,wit-1024,,0.1\n")
    assert orch("--store", url, "baselines", "import", str(folder / "b.csv")).returncode == 0
    return url


def command_outputs(store: str, folder) -> dict[str, dict]:
    rng = np.random.default_rng(0)
    np.save(folder / "a.npy", rng.standard_normal((40, 4)).astype(np.float32))
    np.save(folder / "b.npy", rng.standard_normal((40, 4)).astype(np.float32))
    sweep = ROOT / "sweeps" / "goodview_vs_ntp.yaml"
    commands = {
        "fit": ["--store", store, "fit", "--gap", "jepa_good:ntp", "--predict", "900M", "--out", str(folder)],
        "check": ["--store", store, "check"],
        "next": ["--store", store, "next"],
        "status": ["--store", store, "status"],
        "baselines list": ["--store", store, "baselines", "list"],
        "align": ["align", str(folder / "a.npy"), str(folder / "b.npy"), "--metric", "cka"],
        "sweep --dry-run": ["--store", store, "sweep", str(sweep), "--dry-run"],
    }
    outputs = {}
    for name, args in commands.items():
        result = orch(*args, "--json")
        assert result.returncode == 0, (name, result.stderr)
        outputs[name] = json.loads(result.stdout)
    return outputs


def test_every_commands_json_keys_are_snake_case(store, tmp_path):
    for name, payload in command_outputs(store, tmp_path).items():
        assert keys_not_snake(payload) == [], name
