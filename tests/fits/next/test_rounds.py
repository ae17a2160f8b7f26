"""The closed loop's rules (`fits.next.rounds`): the looks' shared error rate and a round's share
of the budget."""

import pytest

from fits.next.rounds import ALPHA, Stop, look_confidence, round_budget


@pytest.mark.parametrize(("rounds", "confidence"), [(1, 0.975), (4, 0.99), (9, 0.995)])
def test_the_grids_look_and_one_after_each_round_share_alpha(rounds, confidence):
    assert look_confidence(rounds) == pytest.approx(confidence)
    assert (rounds + 1) * (1 - look_confidence(rounds)) == pytest.approx(ALPHA)


def test_a_round_spends_its_share_of_what_is_left():
    assert round_budget(12.0, 3) == 4.0
    assert round_budget(12.0, 0) == 12.0  # the last round (or past it) may spend all that is left


def test_the_stop_reasons_read_as_sentences():
    assert str(Stop.BUDGET).startswith("the budget is spent")
    assert Stop.DECIDED.name.lower() == "decided"
