"""`orch status --watch`: frames of counts, each curve's newest value with its SE and the claims'
intervals, refreshed while a trial is active, refitted at most every --refit-every seconds, and a
last frame with a fresh refit once the sweep ends; on the store a real sweep wrote (`tests.swept`)."""

import re
import threading
import time

from sqlalchemy import create_engine, update

from db import Store, TrialStatus, schema
from tests.cli import one_error_line, orch
from tests.stores import simulated_store
from tests.swept import SWEEP


def test_watch_refreshes_until_the_last_trial_ends_and_refits_at_its_end(swept):
    url = swept
    store = Store.open(url)
    last = store.trials_frame(SWEEP).key.iloc[-1]
    store.close()
    with create_engine(url).begin() as connection:  # as a live driver holds it mid-run
        running = {"status": "running", "lease_owner": "a-driver", "lease_heartbeat": time.time()}
        connection.execute(update(schema.trials).where(schema.trials.c.key == last).values(**running))

    def end_the_last_trial() -> None:
        time.sleep(1.5)
        writer = Store.open(url)
        writer.set_status(last, TrialStatus.DONE)
        writer.close()

    ender = threading.Thread(target=end_the_last_trial)
    ender.start()
    result = orch("--store", url, "status", SWEEP, "--watch", "--every", "0.2", "--refit-every", "600")
    ender.join()
    assert result.returncode == 0, result.stderr
    frames = [frame for frame in result.stdout.split("\n\n") if f"sweep {SWEEP}:" in frame]
    assert len(frames) >= 2
    assert "1 running" in frames[0] and "running" not in frames[-1]
    refits = set(re.findall(r"\(refitted in [\d.]+ s at [\d:]+\)", result.stdout))
    assert len(refits) == 2  # the first frame's and the last's: the frames between show the first
    last_frame = result.stdout[result.stdout.rindex(f"sweep {SWEEP}:") :]
    curve = next(
        line for line in last_frame.splitlines() if line.startswith("jepa_good tiny 1K vs factor_mlp")
    )
    assert curve.endswith("eval items")  # one seed: the SE is its score's over the eval items
    assert "Claims: 1 of 1 open" in last_frame and "good_first" in last_frame and "95% interval" in last_frame


def test_watch_on_a_killed_drivers_sweep_says_the_driver_is_gone_and_ends(swept):
    """A killed driver leaves its trial running, its lease beaten last two minutes ago."""
    last = Store.open(swept).trials_frame(SWEEP).key.iloc[-1]
    with create_engine(swept).begin() as connection:
        killed = {"status": "running", "lease_owner": "a-driver", "lease_heartbeat": time.time() - 120}
        connection.execute(update(schema.trials).where(schema.trials.c.key == last).values(**killed))
    result = orch("--store", swept, "status", SWEEP, "--watch", "--every", "0.2")
    assert result.returncode == 0, result.stderr
    assert f"orch: no driver holds sweep {SWEEP}'s 1 active trials" in result.stderr
    assert "its driver is gone" in result.stderr and result.stdout.count(f"sweep {SWEEP}:") == 1


def test_watch_on_a_sweep_without_claims_says_so_and_whose_spread_each_se_is(tmp_path):
    url = f"sqlite:///{tmp_path / 'o.db'}"
    simulated_store(url).close()  # three seeds a size, no claims
    result = orch("--store", url, "status", "--watch")
    assert result.returncode == 0, result.stderr
    assert "Claims: the sweep states none" in result.stdout and "mutual_knn@10" in result.stdout
    (curve,) = [line for line in result.stdout.splitlines() if line.startswith("jepa_good base 18.6M vs")]
    assert curve.split()[-1] == "seeds"  # 3 seeds: the SE is their spread over sqrt(3)


def test_watch_with_json_is_one_line_that_names_the_fix(swept):
    assert "drop --json" in one_error_line(orch("--store", swept, "status", "--watch", "--json"))
