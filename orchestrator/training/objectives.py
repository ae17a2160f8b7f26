"""Training losses: JEPA with SIGReg (Balestriero & LeCun), and next-token prediction."""

import torch
import torch.nn.functional as F

from orchestrator.data.tokenizer import PAD
from orchestrator.training.replicas import SOLO, Replica

__all__ = ["jepa_loss", "ntp_loss", "sigreg"]

KNOTS = 17
T_MAX = 3.0
IGNORE = -100  # cross-entropy's ignore_index


def sigreg(
    embeddings: torch.Tensor, slices: int, generator: torch.Generator, replica: Replica = SOLO
) -> torch.Tensor:
    """Epps-Pulley statistic of random 1-D projections against N(0, 1), times the batch size.

    For each of `slices` random unit directions, the weighted squared distance between the
    projections' empirical characteristic function and exp(-t^2/2), window exp(-t^2/2), by the
    trapezoid rule on 17 knots over t in [0, 3] (doubled: the integrand is even), averaged over
    directions. In fp32. About 1 for Gaussian embeddings; about 0.41 N for a batch collapsed to 0.
    The characteristic function is a mean over the global batch, whichever `replica` holds the rows.
    """
    z = embeddings.float()
    N, D = replica.count(z.shape[0], z.device), z.shape[1]
    directions = torch.randn(D, slices, generator=generator, device="cpu").to(z.device)
    directions = directions / directions.norm(dim=0, keepdim=True)  # (D, S)
    projections = z @ directions  # (N, S)
    t = torch.linspace(0, T_MAX, KNOTS, device=z.device)  # (K,)
    target = torch.exp(-0.5 * t**2)  # (K,)
    angles = projections.unsqueeze(-1) * t  # (N, S, K)
    real = replica.mean(torch.cos(angles), dim=0)  # (S, K)
    imaginary = replica.mean(torch.sin(angles), dim=0)  # (S, K)
    integrand = ((real - target) ** 2 + imaginary**2) * target  # (S, K)
    statistic = 2 * torch.trapezoid(integrand, t, dim=-1)  # (S,)
    return N * statistic.mean()


def jepa_loss(
    views: list[torch.Tensor],
    weight: float,
    slices: int,
    generator: torch.Generator,
    replica: Replica = SOLO,
) -> tuple[torch.Tensor, dict[str, float]]:
    """L = (1 - weight) pred + weight SIGReg: pred is each view's MSE to the mean of the views."""
    stacked = torch.stack([v.float() for v in views])  # (V, B, P)
    centre = stacked.mean(dim=0, keepdim=True)  # (1, B, P)
    prediction = replica.mean((stacked - centre) ** 2)
    regulariser = torch.stack([sigreg(v, slices, generator, replica) for v in views]).mean()
    loss = (1 - weight) * prediction + weight * regulariser
    return loss, {"pred": float(prediction.detach()), "sigreg": float(regulariser.detach())}


def ntp_loss(logits: torch.Tensor, tokens: torch.Tensor, replica: Replica = SOLO) -> torch.Tensor:
    """Causal cross-entropy over the valid next tokens of the global batch: logits (B, T, V),
    tokens (B, T)."""
    targets = tokens[:, 1:].clone()  # (B, T-1)
    targets[targets == PAD] = IGNORE  # padding is not predicted
    logits = logits[:, :-1].float().reshape(-1, logits.shape[-1])
    if replica.solo:  # torch's own mean, as a one-process trial has always computed it
        return F.cross_entropy(logits, targets.reshape(-1), ignore_index=IGNORE)
    summed = F.cross_entropy(logits, targets.reshape(-1), ignore_index=IGNORE, reduction="sum")
    return replica.total(summed) / replica.count(int((targets != IGNORE).sum()), logits.device)
