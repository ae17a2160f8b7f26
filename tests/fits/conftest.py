"""A fitted simulated sweep, shared by the tests of the modules that assemble and draw fits."""

import pytest

from fits.curve.curveset import CURVE, CurveFit, CurveKey
from fits.curve.settings import FitOptions
from fits.run.curves import fit_group, select_points
from fits.run.load import load_measurements
from tests.stores import SIM_DESIGN, simulated_store

BOOTSTRAP = FitOptions(bootstrap=200, predict=(900_000_000,), gaps=("jepa_good:ntp",)).resolved(SIM_DESIGN)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """(store, measurements frame) of the simulated sweep 'sim'."""
    store = simulated_store(f"sqlite:///{tmp_path_factory.mktemp('store') / 'o.db'}")
    return store, load_measurements(store, "sim", "mutual_knn@10", None)


@pytest.fixture(scope="module")
def curves(simulated) -> dict[str, CurveFit]:
    """Objective -> its fitted curve, with seed-bootstrap bands where the law allows."""
    _, frame = simulated
    chosen = select_points(frame, BOOTSTRAP)
    return {
        values[0]: fit_group(CurveKey(*values), group, frame, BOOTSTRAP)
        for values, group in chosen.groupby(list(CURVE))
    }
