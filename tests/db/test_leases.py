"""Trial leases in a real store (SQLite and Postgres): one driver per trial at a time."""

import time
from concurrent.futures import ThreadPoolExecutor

from db import Store
from tests.rows import trial_row

KEYS = [f"{i:064d}" for i in range(6)]


def leased_store(url: str) -> Store:
    store = Store.open(url)
    store.record_sweep("s", "text", "hash", "s.yaml", [trial_row(key) for key in KEYS])
    return store


def test_a_second_driver_gets_only_the_trials_no_live_driver_holds(store_url):
    store = leased_store(store_url)
    assert store.claim(KEYS[:4], "a", stale_after_s=60) == set(KEYS[:4])
    assert store.claim(KEYS, "b", stale_after_s=60) == set(KEYS[4:])
    assert store.claim(KEYS[:4], "a", stale_after_s=60) == set(KEYS[:4])  # a driver keeps its own
    assert store.lease_owners(KEYS) == {"a", "b"}


def test_a_stale_or_dead_lease_is_taken_over_and_a_finished_trial_never_is(store_url):
    store = leased_store(store_url)
    store.claim(KEYS[:2], "dead-driver", stale_after_s=60)
    store.claim(KEYS[2:4], "gone-quiet", stale_after_s=60)
    store.set_status(KEYS[5], "running")
    store.set_status(KEYS[5], "done")
    time.sleep(0.2)
    taken = store.claim(KEYS, "c", stale_after_s=0.1, dead=["dead-driver"])
    assert taken == set(KEYS[:5])  # the done trial stays unleased
    store.renew("c")
    assert store.claim(KEYS, "d", stale_after_s=60) == set()
    store.renew("c", release=True)
    assert store.claim(KEYS, "d", stale_after_s=60) == set(KEYS[:5])


def test_drivers_claiming_at_once_split_the_trials_between_them(store_url):
    leased_store(store_url)
    owners = [f"driver-{i}" for i in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        held = list(pool.map(lambda owner: Store.open(store_url).claim(KEYS, owner, 60), owners))
    assert sorted(key for keys in held for key in keys) == sorted(KEYS)  # each trial to exactly one
