"""What a trial's processes tell the driver: every message survives the Tune result it travels in."""

from orchestrator.run.messages import Failed, Reported, Restarted, Started, Workers, read, result_of


def test_every_message_reads_back_from_its_result_in_the_order_the_driver_acts_on_them():
    sent = [
        Reported({"trial_key": "k"}, resumed_at=0),
        Failed("k", "ValueError: x", retry=True),
        Restarted("k", "model.pt is truncated"),
        Started("k"),
        Workers("ffff0001"),
    ]
    result = result_of(*sent)
    assert all(isinstance(key, str) and key.startswith("orch_") for key in result)  # a plain dict
    assert read(result) == sent[::-1]
    assert read(result_of(Reported({"trial_key": "k"}))) == [Reported({"trial_key": "k"}, None)]
    assert read({"loss": 1.0}) == []  # Tune's own keys are not messages
