"""Whether every trial of a sweep can be placed on the live Ray cluster, checked before Tune
starts: a trial no node can hold would stay pending forever (Tune and Ray Train wait for it)."""

from orchestrator.errors import InputError
from orchestrator.run.parallel import DRIVER_CPU
from orchestrator.sweepfile import Resources, Spec, TrialConfig

__all__ = ["check_resources"]


def check_resources(spec: Spec, todo: list[TrialConfig]) -> None:
    """Every trial fits the live cluster (Tune or Ray Train would leave it pending), or an
    InputError that names what was asked for and what the cluster has."""
    import ray

    nodes = [node["Resources"] for node in ray.nodes() if node.get("Alive")]
    for model in sorted({t.model for t in todo}):
        problem = _unplaceable(spec.resources_for(model), nodes)
        if problem:
            raise InputError(
                f"{spec.source}: trials of model {model} {problem}; "
                f"lower `resources` or join a cluster with more"
            )


def _unplaceable(wants: Resources, nodes: list[dict[str, float]]) -> str | None:
    """Why no placement of `wants` on these nodes exists, or None: each worker on one node, a
    data-parallel trial's workers (with its driver's sliver) within the cluster's total, and on
    one node for `strict_pack`."""
    asked = f"ask for cpu {wants.cpu:g}, gpu {wants.gpu:g}"
    if not any(wants.cpu <= n.get("CPU", 0) and wants.gpu <= n.get("GPU", 0) for n in nodes):
        largest = max(nodes, key=lambda n: (n.get("GPU", 0), n.get("CPU", 0)), default={})
        has = f"cpu {largest.get('CPU', 0):g}, gpu {largest.get('GPU', 0):g}"
        return f"{asked}, but no node has that (the largest: {has})"
    if wants.workers == 1:
        return None
    cpu, gpu = wants.workers * wants.cpu + DRIVER_CPU, wants.workers * wants.gpu
    asked = (
        f"ask for {wants.workers} workers of cpu {wants.cpu:g}, gpu {wants.gpu:g} "
        f"(cpu {cpu:g}, gpu {gpu:g} in all)"
    )
    pools = nodes if wants.placement == "strict_pack" else [_summed(nodes)]
    if not any(cpu <= n.get("CPU", 0) and gpu <= n.get("GPU", 0) for n in pools):
        where = "one node" if wants.placement == "strict_pack" else "the cluster"
        return f"{asked}, more than {where} has"
    if wants.placement == "strict_spread" and wants.workers > len(nodes):
        return f"{asked} on as many nodes (strict_spread), but the cluster has {len(nodes)}"
    return None


def _summed(nodes: list[dict[str, float]]) -> dict[str, float]:
    return {kind: sum(n.get(kind, 0) for n in nodes) for kind in ("CPU", "GPU")}
