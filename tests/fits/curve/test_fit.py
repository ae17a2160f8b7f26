"""Fitting one curve: parameters recovered from a grid of starts, lack of fit, flags, weights."""

import numpy as np
import pytest
from scipy import stats

from fits.curve.fit import FitError, curve_points, fit_curve, fit_laws, lack_of_fit, law_weights
from fits.curve.laws import logistic, saturating
from tests.fits.truth import SIGMA, SIZES, TRUTH, ensemble_of, simulate_fixed


def test_saturating_parameters_are_recovered():
    points = simulate_fixed(np.random.default_rng(1))
    fit = fit_curve(points, "saturating")
    assert fit.success and fit.starts > 1 and not [f for f in fit.flags if f.startswith("BOUND_HIT")]
    for name, truth in TRUTH.items():
        assert abs(fit.values[name] - truth) < 3 * fit.errors[name], name
    assert points.sigma_seed == pytest.approx(SIGMA, rel=0.4)


def test_lack_of_fit_rejects_a_true_law_about_five_percent_of_the_time():
    rng = np.random.default_rng(11)
    p_values = [fit_curve(simulate_fixed(rng), "saturating").lof_p for _ in range(200)]
    assert 0.01 <= np.mean(np.array(p_values) < 0.05) <= 0.11


def test_inputs_are_copied_and_nan_raises():
    rng = np.random.default_rng(2)
    samples = np.repeat(SIZES, 3)
    values = saturating(samples, **TRUTH) + rng.normal(0, SIGMA, samples.size)
    kept = values.copy()
    fit_curve(curve_points(samples, values), "saturating")
    np.testing.assert_array_equal(values, kept)
    values[3] = np.nan
    with pytest.raises(FitError, match="NaN"):
        curve_points(samples, values)
    assert len(curve_points(samples, values, allow_nan=True).samples) == 10


def test_flags_for_a_single_point_and_a_bound():
    single = curve_points([1e6, 1e6, 1e6], [0.1, 0.11, 0.09])
    with pytest.raises(FitError, match="parameters"):
        fit_curve(single, "saturating")
    flat = simulate_fixed(np.random.default_rng(3), {"a_inf": 0.2, "b": 0.0, "alpha": 0.3})
    assert any(flag.startswith("BOUND_HIT") for flag in fit_curve(flat, "saturating").flags)


def test_a_logistic_truth_gives_the_logistic_law_the_weight():
    truth = {"lo": 0.03, "rise": 0.12, "log10_mid": 6.2, "width": 0.25}
    points = simulate_fixed(np.random.default_rng(10), truth, law=logistic)
    fits = fit_laws(points)
    weights = law_weights(fits)
    assert "LOF_REJECT" in fits["saturating"].flags
    assert max(weights, key=weights.get) == "logistic" and sum(weights.values()) == pytest.approx(1)


def test_weights_fall_to_the_simplest_converged_laws_when_aicc_is_undefined():
    points = simulate_fixed(np.random.default_rng(4), sizes=SIZES[:3])
    weights = law_weights(fit_laws(points))
    assert weights["power"] == 1.0  # two parameters, three points: no AICc for any law


def test_huber_keeps_the_fit_where_it_was_when_one_seed_diverges():
    samples = np.repeat(SIZES, 3)
    values = saturating(samples, **TRUTH) + np.random.default_rng(5).normal(0, SIGMA, samples.size)
    clean = fit_curve(curve_points(samples, values), "saturating", huber=1e-2)
    values[15] *= 0.5
    moved = fit_curve(curve_points(samples, values), "saturating", huber=1e-2)
    squares = fit_curve(curve_points(samples, values), "saturating")
    shift = max(abs(moved.values[p] - clean.values[p]) / clean.errors[p] for p in clean.params)
    assert shift < 1 and moved.loss == "huber"
    assert max(abs(squares.values[p] - clean.values[p]) / clean.errors[p] for p in clean.params) > 1


def test_the_first_points_of_a_curve_keep_their_runs():
    samples = np.repeat(SIZES[:6], 3)
    values = saturating(samples, **TRUTH) + np.random.default_rng(6).normal(0, SIGMA, samples.size)
    points = curve_points(samples, values, runs=np.tile([0, 1, 2], 6))
    early = points.first(4)
    assert list(early.samples) == list(SIZES[:4])
    np.testing.assert_array_equal(early.run_values, points.run_values[:, :4])


def test_lack_of_fit_needs_replicates():
    points = curve_points(SIZES, saturating(SIZES, **TRUTH))
    fit = fit_curve(points, "saturating")
    assert lack_of_fit(points, fit) is None


def test_one_seed_per_size_takes_its_noise_from_the_residuals():
    rng = np.random.default_rng(6)
    samples = SIZES.astype(float)
    clean = saturating(samples, **TRUTH)
    quiet = fit_laws(curve_points(samples, clean + rng.normal(0, SIGMA, samples.size)))
    noisy_points = curve_points(samples, clean + rng.normal(0, 4 * SIGMA, samples.size))
    noisy = fit_laws(noisy_points)
    assert all("NOISE_FROM_RESIDUALS" in fit.flags for fit in [*quiet.values(), *noisy.values()])
    ratio = noisy["saturating"].errors["a_inf"] / quiet["saturating"].errors["a_inf"]
    assert 2 < ratio < 8, ratio  # the assumed 1e-3 gave both the same errors
    ensemble = ensemble_of(noisy_points)
    assert ensemble.sigma_seed == pytest.approx(4 * SIGMA, rel=0.5)
    assert ensemble.dof == ensemble.heaviest.dof > 0


def test_a_few_replicates_pool_their_scatter_with_the_residuals_of_a_law_that_fits():
    # One size with 2 seeds, the rest with 1: a pure-error dof of 1 alone would stretch every
    # interval by t(1); the law's residuals measure the same variance.
    rng = np.random.default_rng(3)
    samples = np.array([*SIZES, SIZES[4]], dtype=float)
    points = curve_points(samples, saturating(samples, **TRUTH) + rng.normal(0, SIGMA, samples.size))
    ensemble = ensemble_of(points)
    heaviest = ensemble.heaviest
    assert points.pooled_df == 1 and "LOF_REJECT" not in heaviest.flags
    assert "NOISE_FROM_RESIDUALS" not in heaviest.flags
    assert ensemble.dof == 1 + heaviest.dof
    low, high = np.sqrt(stats.chi2.ppf([0.005, 0.995], ensemble.dof) / ensemble.dof)
    assert low < ensemble.sigma_seed / SIGMA < high  # the chi-square's 99% at its dof
    # seed sum of squares + residual sum of squares, over seed dof + residual dof
    pooled = points.sigma_seed**2 * (1 + heaviest.chi_square) / (1 + heaviest.dof)
    assert ensemble.sigma_seed**2 == pytest.approx(pooled, rel=1e-9)


def test_checkpoints_of_the_same_runs_keep_their_seed_scatter_unless_there_is_none():
    rng = np.random.default_rng(4)
    values = saturating(SIZES, **TRUTH)
    offsets = rng.normal(0, SIGMA, (2, 1))
    replicated = curve_points(
        np.tile(SIZES, 2), (values + offsets).ravel(), runs=np.repeat([0, 1], len(SIZES))
    )
    assert replicated.run_values is not None
    assert ensemble_of(replicated).dof == replicated.pooled_df
    alone = curve_points(SIZES, values + rng.normal(0, SIGMA, len(SIZES)), runs=np.zeros(len(SIZES)))
    assert all("NOISE_FROM_RESIDUALS" in fit.flags for fit in fit_laws(alone).values())
