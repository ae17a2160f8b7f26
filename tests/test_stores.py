"""The planted store the fit tests read (`tests.stores.simulated_store`: laws with seed noise, so
a fit has a truth to recover) holds every kind of row a real sweep writes (`tests.swept`): a
trial that starts writing a new kind of row fails this until the planted store writes it too, so
no test of a store's content misses a row kind a sweep has."""

import re

from db import Store
from tests.stores import simulated_store
from tests.swept import SWEEP


def row_kinds(store: Store, sweep: str) -> set[tuple[str, bool, str]]:
    """(metric with its layer number dropped, whether it has a reference, eval set or 'eval')."""
    frame = store.measurements_frame(sweep)
    return {
        (re.sub(r"/layer\d+$", "/layer", metric), bool(reference), "train" if eval_set == "train" else "eval")
        for metric, reference, eval_set in zip(frame.metric, frame.reference, frame.eval_set, strict=True)
    }


def test_the_planted_store_holds_every_row_kind_a_real_sweep_writes(swept, tmp_path):
    real = row_kinds(Store.open(swept), SWEEP)
    planted = row_kinds(simulated_store(f"sqlite:///{tmp_path / 'planted.db'}"), "sim")
    assert real and real <= planted, (
        f"row kinds a real sweep writes that the planted store lacks: {real - planted}"
    )
