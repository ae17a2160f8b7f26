"""Where one process stands in a trial that several run together (a data-parallel trial), and the
few collectives the trainer needs. `SOLO`, the one-process trial, calls no collective and
computes exactly what the trainer always has.

A data-parallel trial is the same experiment as its one-process run. Each of the `world`
processes takes a disjoint slice of every global batch (`rows`), and every statistic of the
batch that a loss is built from (the JEPA prediction error, SIGReg's empirical characteristic
function, NTP's mean over tokens) is summed over all the slices before the loss is formed
(`total`, `mean`). Every process so computes the global batch's loss, and its gradient is its own
rows' share of that loss's gradient. DDP averages the shares over the processes, so each process
scales its loss by `world` before backward (`for_backward`): the sum of the shares is the
one-process gradient.
"""

from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn

__all__ = ["SOLO", "Replica"]


@dataclass(frozen=True)
class Replica:
    """This process's rank among the `world` processes that run one trial."""

    rank: int = 0
    world: int = 1

    @property
    def solo(self) -> bool:
        return self.world == 1

    @property
    def leads(self) -> bool:
        """The leader evaluates, saves the checkpoints and reports the rows."""
        return self.rank == 0

    def rows(self, count: int) -> slice:
        """This process's rows of a global batch of `count` (contiguous, disjoint, all covered)."""
        return slice(count * self.rank // self.world, count * (self.rank + 1) // self.world)

    def total(self, local: torch.Tensor) -> torch.Tensor:
        """The sum of `local` over every process; its gradient flows to this process's share."""
        if self.solo:
            return local
        everyone = local.detach().clone()
        dist.all_reduce(everyone)
        return local + (everyone - local.detach())

    def count(self, local: int, device: torch.device) -> torch.Tensor | int:
        """How many rows (or elements) every process holds together, of this one's `local`."""
        if self.solo:
            return local
        return self.total(torch.tensor(float(local), device=device))

    def mean(self, local: torch.Tensor, dim: int | None = None) -> torch.Tensor:
        """The mean over every process's rows: along `dim`, or over all elements when None."""
        if self.solo:
            return local.mean() if dim is None else local.mean(dim=dim)
        if dim is None:
            return self.total(local.sum()) / self.count(local.numel(), local.device)
        return self.total(local.sum(dim=dim)) / self.count(local.shape[dim], local.device)

    def for_backward(self, loss: torch.Tensor) -> torch.Tensor:
        """The loss to call backward on: DDP averages gradients that `total` made shares of."""
        return loss if self.solo else loss * self.world

    def wrap(self, module: nn.Module, device: torch.device) -> nn.Module:
        """`module` under DDP, which all-reduces its gradients during backward (alone: itself)."""
        if self.solo:
            return module
        from torch.nn.parallel import DistributedDataParallel

        if device.type != "cuda":
            return DistributedDataParallel(module)
        index = device.index if device.index is not None else torch.cuda.current_device()
        return DistributedDataParallel(module, device_ids=[index])

    def agree(self, leader_says: bool, device: torch.device) -> bool:
        """The leader's answer, on every process (whether the trial has ended, after a checkpoint)."""
        if self.solo:
            return leader_says
        flag = torch.tensor([int(leader_says)], device=device)
        dist.broadcast(flag, src=0)
        return bool(flag.item())

    def barrier(self) -> None:
        if not self.solo:
            dist.barrier()


SOLO = Replica()
