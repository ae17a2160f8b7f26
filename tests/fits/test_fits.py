"""Ground truth for the fitting math: simulated curves from known laws with seed noise."""

import numpy as np
import pytest

from fits.bands import forecast, score_holdout
from fits.bootstrap import bootstrap_band, bootstrap_gap, bootstrap_saturating
from fits.fit import FitError, curve_points, fit_curve, lack_of_fit, select_law
from fits.gaps import invert, sample_gap
from fits.laws import LAWS, logistic, saturating

SIZES = 145e3 * 2.0 ** np.arange(10)  # 145K .. 74M
TRUTH = {"a_inf": 0.2, "b": 0.05, "alpha": 0.3}
SIGMA = 0.005


def simulate(rng, law=saturating, truth=TRUTH, sizes=SIZES, seeds=3, sigma=SIGMA):
    samples = np.repeat(sizes, seeds)
    return samples, law(samples, **truth) + rng.normal(0, sigma, samples.size)


def test_laws_name_their_parameters():
    assert LAWS["saturating"].params == ("a_inf", "b", "alpha")
    assert LAWS["logistic"].params == ("lo", "hi", "log10_mid", "width")


def test_saturating_parameters_are_recovered():
    rng = np.random.default_rng(1)
    points = curve_points(*simulate(rng))
    fit = fit_curve(points, "saturating")
    assert fit.success and not [f for f in fit.flags if f.startswith("BOUND_HIT")]
    for name, truth in TRUTH.items():
        assert abs(fit.values[name] - truth) < 3 * fit.errors[name], name
    assert points.sigma_seed == pytest.approx(SIGMA, rel=0.4)


def test_lack_of_fit_rejects_a_true_law_about_five_percent_of_the_time():
    rng = np.random.default_rng(11)
    p_values = [fit_curve(curve_points(*simulate(rng)), "saturating").lof_p for _ in range(200)]
    assert 0.01 <= np.mean(np.array(p_values) < 0.05) <= 0.11


def test_inputs_are_copied_and_nan_raises():
    rng = np.random.default_rng(2)
    samples, values = simulate(rng)
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
    rng = np.random.default_rng(3)
    flat = curve_points(*simulate(rng, truth={"a_inf": 0.2, "b": 0.0, "alpha": 0.3}))
    assert any(flag.startswith("BOUND_HIT") for flag in fit_curve(flat, "saturating").flags)


def test_forecast_flags_extrapolation_and_scores_holdout():
    rng = np.random.default_rng(4)
    points = curve_points(*simulate(rng, sizes=SIZES[:7]))
    fit = fit_curve(points, "saturating")
    ahead = forecast(fit, points, SIZES[6] * 12)
    assert ahead.extrapolation == pytest.approx(12)
    assert "EXTRAPOLATED:12x" in ahead.flags
    assert ahead.pi[0] < ahead.ci[0] < ahead.prediction < ahead.ci[1] < ahead.pi[1]
    observed = saturating(SIZES[6] * 12, **TRUTH)
    assert abs(score_holdout(ahead, observed)) < 3


def prediction_coverage(simulations: int, factor: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    fitted = SIZES[:7]
    hits = 0
    for _ in range(simulations):
        points = curve_points(*simulate(rng, sizes=fitted))
        fit = fit_curve(points, "saturating")
        target = fitted[-1] * factor
        new_mean = saturating(target, **TRUTH) + rng.normal(0, SIGMA, 3).mean()
        band = forecast(fit, points, target, seeds=3)
        hits += band.pi[0] <= new_mean <= band.pi[1]
    return hits / simulations


@pytest.mark.slow
@pytest.mark.parametrize("factor", [4, 12])
def test_prediction_bands_cover_held_out_points(factor):
    coverage = prediction_coverage(200, factor, seed=factor)
    assert 0.90 <= coverage <= 0.99, coverage


def test_prediction_bands_cover_in_a_quick_check():
    # The fast suite's smaller version of the slow coverage test.
    assert prediction_coverage(40, 4, seed=7) >= 0.85


def planted_pair(rng, ratio=42.0):
    """B is A slowed down by `ratio` samples: f_B(S) = f_A(S / ratio)."""
    truth_b = dict(TRUTH, b=TRUTH["b"] * ratio ** TRUTH["alpha"])
    a = curve_points(*simulate(rng))
    b = curve_points(*simulate(rng, truth=truth_b))
    return fit_curve(a, "saturating"), fit_curve(b, "saturating")


def test_gap_interval_covers_a_planted_42x():
    fit_a, fit_b = planted_pair(np.random.default_rng(5))
    gap = sample_gap(fit_a, fit_b, samples_b=SIZES[-1])
    assert gap.interval[0] <= 42 <= gap.interval[1]
    assert gap.ratio == pytest.approx(42, rel=0.5)
    assert "N_A_OUTSIDE_OBSERVED_RANGE" not in gap.flags


@pytest.mark.slow
def test_gap_interval_coverage_over_simulations():
    rng = np.random.default_rng(6)
    covered = [
        (g := sample_gap(*planted_pair(rng), SIZES[-1])).interval[0] <= 42 <= g.interval[1]
        for _ in range(100)
    ]
    assert np.mean(covered) >= 0.88


def test_gap_flags_single_checkpoint_and_asymptote():
    fit_a, _ = planted_pair(np.random.default_rng(8))
    single = sample_gap(fit_a, None, samples_b=900e6, observed_b=0.15, observed_sigma_b=0.003)
    assert "B_SINGLE_CHECKPOINT" in single.flags and single.ratio is not None
    unreachable = sample_gap(fit_a, None, samples_b=900e6, observed_b=0.5)
    assert "TARGET_AT_OR_ABOVE_A_ASYMPTOTE" in unreachable.flags and unreachable.ratio is None


def test_invert_finds_the_samples_for_a_level():
    fit_a, _ = planted_pair(np.random.default_rng(9))
    level = float(fit_a.predict(2e6))
    assert invert(fit_a, level) == pytest.approx(2e6, rel=1e-6)


def test_a_logistic_truth_is_not_silently_fitted_with_the_default_law():
    rng = np.random.default_rng(10)
    truth = {"lo": 0.03, "hi": 0.15, "log10_mid": 6.2, "width": 0.25}
    points = curve_points(*simulate(rng, law=logistic, truth=truth))
    default = fit_curve(points, "saturating")
    chosen, table = select_law(points)
    assert "LOF_REJECT" in default.flags or chosen.law != "saturating"
    assert chosen.law in ("logistic", "broken")
    assert table["logistic"]["backtest"] < table["saturating"]["backtest"]


def test_lack_of_fit_needs_replicates():
    points = curve_points(SIZES, saturating(SIZES, **TRUTH))
    fit = fit_curve(points, "saturating")
    assert lack_of_fit(points, fit) is None


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
