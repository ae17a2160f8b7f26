"""The environment a sweep runs in is set for it and put back after it."""

import os

import pytest

from orchestrator.run.environment import TUNE_SETTINGS, sweep_environment


def test_a_sweep_hides_the_store_url_from_ray_and_puts_the_environment_back(monkeypatch):
    monkeypatch.setenv("ORCH_STORE", "postgresql+psycopg://orch:secret@db/orch")
    monkeypatch.setenv("RAY_AIR_NEW_OUTPUT", "1")  # the user's own setting is kept
    before = dict(os.environ)
    with sweep_environment():
        assert "ORCH_STORE" not in os.environ
        assert os.environ["RAY_AIR_NEW_OUTPUT"] == "1"
        assert os.environ["TUNE_DISABLE_SIGINT_HANDLER"] == TUNE_SETTINGS["TUNE_DISABLE_SIGINT_HANDLER"]
        os.environ["RAY_SOMETHING_RAY_SET"] = "x"
    assert dict(os.environ) == before
    with pytest.raises(KeyboardInterrupt), sweep_environment():
        raise KeyboardInterrupt
    assert dict(os.environ) == before
