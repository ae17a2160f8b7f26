"""The retry budget's verdicts: a lost node never uses a retry, any other error uses one."""

from orchestrator.run.retries import GIVE_UP, LOST, RETRY, RetryBudget

NODE = "0658736b3551c7111f0087ac917c0829a8e867d93fbcecfd4080d3de"
NODE_DIED = f"ActorDiedError: ...\nThe actor died because its node has died. Node Id: {NODE}\n"


def test_a_lost_node_never_uses_a_retry_and_other_errors_do():
    budget = RetryBudget(retries=1)
    assert [budget.record("a", NODE_DIED, {NODE}) for _ in range(3)] == [LOST] * 3
    assert budget.record("a", "ValueError: boom", {NODE}) == RETRY
    assert budget.record("a", NODE_DIED, {NODE}) == LOST
    assert budget.record("a", "ValueError: boom", {NODE}) == GIVE_UP and budget.gave_up("a")
    assert (budget.lost["a"], budget.failures["a"]) == (4, 2)
    assert budget.record("b", "ValueError: boom", set()) == RETRY and not budget.gave_up("b")


def test_a_node_the_cluster_still_lists_as_alive_is_a_failure():
    """The error text alone is not enough: the cluster must also list the node as dead."""
    budget = RetryBudget(retries=0)
    assert budget.record("a", NODE_DIED, dead_nodes=set()) == GIVE_UP
