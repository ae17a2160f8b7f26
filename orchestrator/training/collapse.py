"""Collapse: a JEPA encoder that maps every text to one point (or one line) has stopped learning,
and its alignment numbers mean nothing. Judged against the untrained encoder's own spread, so
eval texts that are alike from the start are no collapse."""

import torch

__all__ = ["COLLAPSE_RANK", "COLLAPSE_SPREAD", "detect_collapse", "relative_spread"]

COLLAPSE_SPREAD = 0.05  # of the random-init spread; tiny runs: healthy x1.6, planted collapse x0.011
COLLAPSE_RANK = 1.5


def relative_spread(embeddings: torch.Tensor) -> float:
    """Spread between rows next to the rows' size: sqrt(total variance) / RMS row norm."""
    z = embeddings.double()
    size = float(z.pow(2).sum(dim=1).mean().sqrt())
    return float(z.var(dim=0).sum().sqrt()) / size if size > 0 else 0.0


def detect_collapse(embeddings: torch.Tensor, initial_spread: float) -> str | None:
    """A reason when eval embeddings have collapsed: their relative spread fell below
    COLLAPSE_SPREAD of the untrained encoder's (all texts map to one point), or their effective
    rank is near 1."""
    spread = relative_spread(embeddings)
    if initial_spread > 0 and spread < COLLAPSE_SPREAD * initial_spread:
        return f"relative embedding spread {spread:.2e} < {COLLAPSE_SPREAD} x its start {initial_spread:.2e}"
    z = embeddings.double()
    singular = torch.linalg.svdvals(z - z.mean(dim=0))
    p = singular / singular.sum()
    rank = float(torch.exp(-(p * torch.log(p.clamp_min(1e-30))).sum()))
    if rank < COLLAPSE_RANK:
        return f"effective rank {rank:.2f} < {COLLAPSE_RANK}"
    return None
