"""The batched solver: many problems at once, bounds held, starts that matter, Huber's loss."""

import numpy as np
import pytest

from fits.curve.fit import fit_curve, point_weights
from fits.curve.laws import LAWS, saturating
from fits.curve.solve import huber_loss, least_squares, start_grid
from fits.planted.procedure import draw_truth, simulate
from tests.fits.truth import SIZES, TRUTH

LAW = LAWS["saturating"]
LOWER, UPPER = np.array([0.0, 0.0, 0.01]), np.array([1.0, np.inf, 2.0])


def test_a_batch_of_noise_free_curves_is_recovered_at_once():
    truths = np.array([[0.2, 0.05, 0.3], [0.3, 0.1, 0.5], [0.15, 0.02, 0.2]])
    curves = saturating(SIZES[None, :], truths[:, :1], truths[:, 1:2], truths[:, 2:])
    starts = np.tile([[0.5, 0.1, 1.0]], (3, 1))
    solution = least_squares(LAW.function, SIZES, curves, 1.0, starts, LOWER, UPPER)
    np.testing.assert_allclose(solution.theta, truths, rtol=1e-4)
    assert solution.converged.all() and solution.jacobian.shape == (3, len(SIZES), 3)


def test_bounds_hold_when_the_data_pull_past_them():
    flat = np.full(len(SIZES), 0.1)
    solution = least_squares(LAW.function, SIZES, flat, 1.0, np.array([[0.3, 0.1, 0.5]]), LOWER, UPPER)
    assert (solution.theta >= LOWER).all() and (solution.theta <= UPPER).all()
    assert solution.loss[0] < 1e-10  # b = 0 at its bound, a_inf = 0.1


def test_the_grid_starts_with_the_guess_and_stays_inside_the_bounds():
    bounds = {"a_inf": (0.1, 1.0), "b": (0.0, np.inf), "alpha": (0.01, 2.0)}
    grid = start_grid({"a_inf": 0.25, "b": 0.05, "alpha": 0.3}, bounds, limit=20)
    assert grid.shape == (20, 3) and list(grid[0]) == [0.25, 0.05, 0.3]
    assert (grid[:, 0] >= 0.1).all() and (grid[:, 2] <= 2.0).all()


def test_huber_ignores_one_wild_point_that_least_squares_follows():
    values = saturating(SIZES, **TRUTH)
    values[4] *= 0.5
    start = np.array([[0.3, 0.1, 0.5]])
    squares = least_squares(LAW.function, SIZES, values, 1.0, start, LOWER, UPPER)
    huber = least_squares(LAW.function, SIZES, values, 1.0, start, LOWER, UPPER, huber=1e-2)
    truth = np.array(list(TRUTH.values()))
    huber_error, squares_error = (np.abs(s.theta[0] - truth).max() for s in (huber, squares))
    assert huber_error < 0.01 and 5 * huber_error < squares_error


def test_huber_loss_is_quadratic_inside_delta_and_linear_outside():
    np.testing.assert_allclose(huber_loss(np.array([0.5, -2.0]), 1.0), 0.125 + 1.5)


def test_the_grid_of_starts_fits_at_least_as_well_as_lmfit_from_the_guess():
    """An independent solver (lmfit's Levenberg-Marquardt from the law's own guess) never finds
    a lower chi-square than the grid of starts does."""
    lmfit = pytest.importorskip("lmfit")
    rng = np.random.default_rng(7)
    for name in ("saturating", "logistic", "broken"):
        law = LAWS[name]
        for _ in range(3):
            points = simulate(rng, draw_truth(rng))
            ours = fit_curve(points, name)
            bounds = law.bounds(points.samples, points.mean, (0.0, 1.0))
            model = lmfit.Model(law.function, independent_vars=["S"])
            parameters = model.make_params()
            for param, start in law.guess(points.samples, points.mean).items():
                low, high = bounds[param]
                parameters[param].set(value=float(np.clip(start, low + 1e-9, high - 1e-9)), min=low, max=high)
            theirs = model.fit(points.mean, parameters, S=points.samples, weights=point_weights(points))
            assert ours.chi_square <= float(np.sum(theirs.residual**2)) * (1 + 1e-6), name
