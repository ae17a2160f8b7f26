"""Kernel and correlation metrics: linear CKA (biased and unbiased) and SVCCA, streamed over rows
with O(d^2) memory."""

from functools import cached_property

import numpy as np
import torch

from orchestrator.alignment.arrays import AlignmentError, Array, is_constant, paired

__all__ = ["LinearKernel", "cka", "cka_of", "cka_unbiased", "hsic_linear", "svcca"]


def _cross_moments(x: torch.Tensor, y: torch.Tensor, block_rows: int) -> dict[str, torch.Tensor]:
    """Sums over rows, in float64, that linear HSIC estimators are built from (O(d^2) memory)."""
    f64 = torch.float64
    moments = {
        "xy": torch.zeros(x.shape[1], y.shape[1], dtype=f64, device=x.device),
        "sx": torch.zeros(x.shape[1], dtype=f64, device=x.device),
        "sy": torch.zeros(y.shape[1], dtype=f64, device=x.device),
        "ax_y": torch.zeros(y.shape[1], dtype=f64, device=x.device),  # sum_i |x_i|^2 y_i
        "by_x": torch.zeros(x.shape[1], dtype=f64, device=x.device),  # sum_i |y_i|^2 x_i
        "ab": torch.zeros((), dtype=f64, device=x.device),  # sum_i |x_i|^2 |y_i|^2
    }
    for start in range(0, x.shape[0], block_rows):
        xb = x[start : start + block_rows].to(f64)
        yb = y[start : start + block_rows].to(f64)
        a, b = (xb * xb).sum(dim=1), (yb * yb).sum(dim=1)
        moments["xy"] += xb.T @ yb
        moments["sx"] += xb.sum(dim=0)
        moments["sy"] += yb.sum(dim=0)
        moments["ax_y"] += a @ yb
        moments["by_x"] += b @ xb
        moments["ab"] += a @ b
    return moments


def hsic_linear(x: torch.Tensor, y: torch.Tensor, unbiased: bool) -> float:
    """HSIC of linear kernels K = XX^T, L = YY^T without forming them.

    Biased: tr(KHLH)/(n-1)^2. Unbiased (Song et al. 2012):
    [tr(K~L~) + 1'K~1 1'L~1/((n-1)(n-2)) - 2/(n-2) 1'K~L~1] / (n(n-3)), K~ = K with zero diagonal.
    """
    n = x.shape[0]
    m = _cross_moments(x, y, block_rows=max(1, 2**22 // max(x.shape[1], y.shape[1], 1)))
    if not unbiased:
        centred = m["xy"] - torch.outer(m["sx"], m["sy"]) / n
        return float((centred * centred).sum()) / (n - 1) ** 2
    trace_kl = float((m["xy"] * m["xy"]).sum() - m["ab"])
    # 1'K~1 = |s_x|^2 - sum_i |x_i|^2, likewise for L.
    sum_a = float(m["sx"] @ m["sx"]) - float(_diag_sum(x))
    sum_b = float(m["sy"] @ m["sy"]) - float(_diag_sum(y))
    # 1'K~L~1 = sum_i (x_i.s_x - |x_i|^2)(y_i.s_y - |y_i|^2)
    cross = float(m["sx"] @ m["xy"] @ m["sy"] - m["ax_y"] @ m["sy"] - m["by_x"] @ m["sx"] + m["ab"])
    value = trace_kl + sum_a * sum_b / ((n - 1) * (n - 2)) - 2 * cross / (n - 2)
    return value / (n * (n - 3))


def _diag_sum(x: torch.Tensor) -> torch.Tensor:
    return (x.to(torch.float64) ** 2).sum()


class LinearKernel:
    """One side of linear CKA: its rows and its HSIC with itself, which is the same against any
    other side, so a trial computes a reference's once and a checkpoint layer's once."""

    def __init__(self, rows: torch.Tensor, unbiased: bool) -> None:
        self.rows, self.unbiased = rows, unbiased
        self.constant = is_constant(rows)

    @cached_property
    def self_hsic(self) -> float:
        return hsic_linear(self.rows, self.rows, self.unbiased)


def cka_of(x: LinearKernel, y: LinearKernel) -> float:
    """Linear CKA of two row-paired sides, biased or unbiased as they were built."""
    if x.unbiased and x.rows.shape[0] <= 3:
        raise AlignmentError(f"unbiased estimators need n > 3 rows, got {x.rows.shape[0]}")
    if x.constant or y.constant:
        return 0.0
    xy = hsic_linear(x.rows, y.rows, x.unbiased)
    if x.self_hsic <= 0 or y.self_hsic <= 0:
        return 0.0
    return xy / float(np.sqrt(x.self_hsic * y.self_hsic))


def _cka(a: Array, b: Array, unbiased: bool) -> float:
    ta, tb = paired(a, b)
    return cka_of(LinearKernel(ta, unbiased), LinearKernel(tb, unbiased))


def cka(a: Array, b: Array) -> float:
    """Linear CKA, the standard biased estimator (Kornblith et al. 2019), streamed over rows."""
    return _cka(a, b, unbiased=False)


def cka_unbiased(a: Array, b: Array) -> float:
    """Linear CKA from Song et al.'s unbiased HSIC, streamed over rows."""
    return _cka(a, b, unbiased=True)


def svcca(a: Array, b: Array, variance_kept: float = 0.99) -> float:
    """SVCCA (Raghu et al. 2017): keep the principal directions explaining `variance_kept` of
    each space, then the mean canonical correlation between them. From covariances: O(d^2)."""
    ta, tb = paired(a, b)
    if is_constant(ta) or is_constant(tb):
        return 0.0
    n = ta.shape[0]
    m = _cross_moments(ta, tb, block_rows=max(1, 2**22 // max(ta.shape[1], tb.shape[1])))
    cov_xy = (m["xy"] - torch.outer(m["sx"], m["sy"]) / n) / (n - 1)
    basis_x, scale_x = _principal(_covariance(ta), variance_kept)
    basis_y, scale_y = _principal(_covariance(tb), variance_kept)
    whitened = (basis_x / scale_x).T @ cov_xy @ (basis_y / scale_y)
    correlations = torch.linalg.svdvals(whitened).clamp(0, 1)
    return float(correlations.mean())


def _covariance(x: torch.Tensor) -> torch.Tensor:
    m = _cross_moments(x, x, block_rows=max(1, 2**22 // x.shape[1]))
    n = x.shape[0]
    return (m["xy"] - torch.outer(m["sx"], m["sx"]) / n) / (n - 1)


def _principal(cov: torch.Tensor, variance_kept: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Eigenvectors (columns) explaining `variance_kept` of the variance, and their std devs."""
    eigenvalues, vectors = torch.linalg.eigh(cov)
    eigenvalues, vectors = eigenvalues.flip(0).clamp_min(0), vectors.flip(1)
    share = torch.cumsum(eigenvalues, 0) / eigenvalues.sum()
    keep = int((share < variance_kept).sum()) + 1
    keep = min(keep, int((eigenvalues > eigenvalues[0] * 1e-12).sum()))
    return vectors[:, :keep], eigenvalues[:keep].sqrt()
