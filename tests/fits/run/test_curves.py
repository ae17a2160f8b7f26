"""One curve on a real store's frame: its points, fit, forecasts, held-out cells and drawn bands."""

import pandas as pd
import pytest

from fits.curve.settings import FitSettings
from fits.run.curves import BAND_POINTS, score_earlier, select_points
from tests.stores import CHANCE, NULL_P95, SIZES


def test_points_are_final_checkpoints_past_random_init(simulated):
    _, frame = simulated
    chosen = select_points(frame, FitSettings(points="final"))
    assert (chosen.samples_seen > 0).all() and chosen.is_final.all()
    assert (
        select_points(frame, FitSettings(points="final", min_samples=SIZES[3])).samples_seen.min() == SIZES[3]
    )


def test_held_out_cells_are_forecast_and_scored(curves):
    good = curves["jepa_good"]
    (cell,) = good.held_out
    assert (cell.samples, cell.seeds) == (SIZES[-1], 3)
    assert cell.within_seed_noise == (cell.pi[0] <= cell.observed <= cell.pi[1])
    assert good.random_init == pytest.approx(0.03, abs=0.005)
    assert (good.chance, good.null_p95) == pytest.approx((CHANCE, NULL_P95))
    assert {f.samples for f in good.forecasts} == {900e6, SIZES[-1]}


def test_the_drawn_band_is_the_forecasts_own_kind_of_band(curves):
    ntp = curves["ntp"]
    assert ntp.ensemble.method == "bootstrap:200"  # every law's refits, so the drawn band is too
    assert len(ntp.band) == BAND_POINTS
    assert all("BOOTSTRAP:200" in f.flags for f in [*ntp.forecasts, *ntp.band])
    assert ntp.band[0].samples == ntp.points.samples[0]
    assert ntp.band[-1].samples == pytest.approx(900e6 * 1.05)


def test_earlier_forecasts_are_scored_once_against_cells_now_in_the_data(curves):
    good = curves["jepa_good"]
    trained, held = float(good.points.samples[-1]), good.held_out[0]
    row = {
        **good.key.as_dict(),
        "created": 1.0,
        "prediction": 0.15,
        "pi_low": 0.1,
        "pi_high": 0.2,
        "extrapolation": 2.0,
    }
    earlier = pd.DataFrame(
        [
            row | {"samples": trained},  # extrapolated then, measured and fitted now: scored
            row | {"samples": trained, "created": 2.0},  # the same cell again: not scored twice
            row | {"samples": held.samples},  # held out now: scored in the held-out table only
            row | {"samples": float(good.points.samples[0]), "extrapolation": 1.0},  # inside its data then
        ]
    )
    (scored,) = score_earlier(earlier, list(curves.values()))
    assert (scored.samples, scored.forecast_at) == (trained, 1.0)
    assert scored.observed == good.points.mean[-1]
    assert scored.verdict == ("confirmed" if 0.1 <= scored.observed <= 0.2 else "missed")


def test_every_curve_is_backtested_and_its_laws_weighed(curves):
    good = curves["jepa_good"]
    assert [cell.ratio for cell in good.backtest] == [2, 4]  # 7 trained sizes allow 2x and 4x
    assert set(good.fits) == {"saturating", "power", "logistic", "broken"}
    assert sum(good.ensemble.weights.values()) == pytest.approx(1)
