"""The vectorised seed bootstrap agrees with the point fit and covers a planted gap."""

import numpy as np
import pytest

from fits.bootstrap import bootstrap_band, bootstrap_gap, bootstrap_saturating
from fits.fit import curve_points, fit_curve
from tests.fits.truth import SIZES, TRUTH, simulate


def test_seed_bootstrap_agrees_with_the_point_fit_and_covers_the_planted_gap():
    rng = np.random.default_rng(12)
    a = curve_points(*simulate(rng))
    b = curve_points(*simulate(rng, truth=dict(TRUTH, b=TRUTH["b"] * 42 ** TRUTH["alpha"])))
    refits = bootstrap_saturating(a, draws=400)
    fit = fit_curve(a, "saturating")
    assert np.median(refits[:, 0]) == pytest.approx(fit.values["a_inf"], abs=2 * fit.errors["a_inf"])
    (ci, pi) = bootstrap_band(refits, 74e6 * 4, a.sigma_seed, seeds=3)
    assert pi[0] <= ci[0] < ci[1] <= pi[1]
    covered = []
    for _ in range(30):
        a = curve_points(*simulate(rng))
        b = curve_points(*simulate(rng, truth=dict(TRUTH, b=TRUTH["b"] * 42 ** TRUTH["alpha"])))
        interval, _ = bootstrap_gap(a, b, SIZES[-1], draws=300)
        covered.append(interval is not None and interval[0] <= 42 <= interval[1])
    assert np.mean(covered) >= 0.8  # about 0.93 over 60 simulations
