"""Representation-alignment metrics on two row-paired feature matrices (numpy or torch).

Definitions follow Huh et al., "The Platonic Representation Hypothesis" (2024), and its code:
cosine similarity on L2-normalised rows, self excluded from its own neighbours. Everything is
pure: arrays in, floats out, computed in the inputs' precision (float64 in, float64 out).

Scalability: nearest neighbours come from a blockwise top-k that never forms the n x n matrix
(memory O(block x n)); linear and unbiased CKA, and SVCCA, stream over rows with O(d^2) memory.

Decisions:
- k >= n, fewer than 2 rows, rows that differ in count, NaN or inf: `AlignmentError`.
- Unbiased estimators (cka_unbiased, cknna) need n > 3.
- A constant feature matrix (every row the same) has no structure: every metric gives 0.0.
- Ties in similarity go to the lower row index, so results never depend on the backend's sort.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from orchestrator.spec.catalog import METRICS, parse_metric

__all__ = [
    "AlignmentError",
    "Neighbours",
    "cka",
    "cka_unbiased",
    "cknna",
    "cknna_from",
    "cycle_knn",
    "cycle_knn_from",
    "knn",
    "mapped_retrieval",
    "max_over_layers",
    "metric_function",
    "mutual_knn",
    "mutual_knn_from",
    "neighbours",
    "prepare",
    "retrieval",
    "retrieval_i2t",
    "retrieval_t2i",
    "rotation_alignment",
    "scorer",
    "svcca",
]

Array = np.ndarray | torch.Tensor
BLOCK_ELEMENTS = 2**24  # similarity block of block_rows x n entries: 64 MiB in float32


class AlignmentError(ValueError):
    """Inputs a metric cannot score (mismatched rows, NaN, k too large, too few rows)."""


def _tensor(x: Array) -> torch.Tensor:
    t = torch.as_tensor(x)
    if t.ndim != 2:
        raise AlignmentError(f"features must be 2-D (rows x width), got shape {tuple(t.shape)}")
    if not torch.is_floating_point(t) or t.dtype in (torch.float16, torch.bfloat16):
        t = t.float()
    if not bool(torch.isfinite(t).all()):
        raise AlignmentError("features hold NaN or inf")
    return t


def _pair(a: Array, b: Array) -> tuple[torch.Tensor, torch.Tensor]:
    ta, tb = _tensor(a), _tensor(b)
    if ta.shape[0] != tb.shape[0]:
        raise AlignmentError(f"rows are not paired: {ta.shape[0]} rows against {tb.shape[0]}")
    if ta.shape[0] < 2:
        raise AlignmentError("need at least 2 rows")
    dtype = torch.promote_types(ta.dtype, tb.dtype)
    return ta.to(dtype), tb.to(device=ta.device, dtype=dtype)


def _is_constant(x: torch.Tensor) -> bool:
    return bool((x == x[:1]).all())


def _check_k(k: int, n: int) -> None:
    if not 1 <= k < n:
        raise AlignmentError(f"k={k} needs 1 <= k < n={n} rows")


def prepare(x: Array, clamp_quantile: float | None = 0.95, normalize: bool = True) -> torch.Tensor:
    """The protocol's feature preparation: clamp |x| at its quantile, then L2-normalise rows."""
    t = _tensor(x)
    if clamp_quantile is not None:
        flat = t.abs().flatten()
        if flat.numel() > 2**24:  # torch.quantile's size limit; a seeded subsample is plenty
            flat = flat[torch.randperm(flat.numel(), generator=torch.Generator().manual_seed(0))]
            flat = flat[: 2**24]
        limit = torch.quantile(flat.to(torch.float64), clamp_quantile).to(t.dtype)
        t = t.clamp(-limit, limit)
    if normalize:
        t = _normalize(t)
    return t


def _normalize(t: torch.Tensor) -> torch.Tensor:
    return t / t.norm(dim=1, keepdim=True).clamp_min(torch.finfo(t.dtype).tiny)


def knn(x: Array, k: int, block_rows: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(indices, cosine similarities), each (n, k), of every row's k nearest other rows.

    Blockwise: a block of rows against all rows at a time, never the n x n matrix. Ties go to
    the lower index (exact, by re-sorting the rare rows whose k-th value is tied).
    """
    t = _normalize(_tensor(x))
    n = t.shape[0]
    _check_k(k, n)
    rows = block_rows or max(1, min(n, BLOCK_ELEMENTS // n))
    indices = torch.empty((n, k), dtype=torch.long, device=t.device)
    values = torch.empty((n, k), dtype=t.dtype, device=t.device)
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        sims = t[start:stop] @ t.T  # (block, n)
        sims[torch.arange(stop - start), torch.arange(start, stop)] = -torch.inf
        top_values, top_indices = torch.topk(sims, k, dim=1)
        kth = top_values[:, -1:]
        # A tie at the k-th value with a candidate left out: settle it by index.
        tied = (sims == kth).sum(dim=1) > (top_values == kth).sum(dim=1)
        for row in torch.nonzero(tied).flatten().tolist():
            order = _stable_order(sims[row])[:k]
            top_indices[row], top_values[row] = order, sims[row, order]
        indices[start:stop], values[start:stop] = top_indices, top_values
    return indices, values


def _stable_order(row: torch.Tensor) -> torch.Tensor:
    """Indices by descending value, ties by ascending index."""
    return torch.sort(row, descending=True, stable=True).indices


@dataclass(frozen=True)
class Neighbours:
    """Every row's k nearest other rows of one feature matrix; `constant` when it has no
    structure (every row the same), which scores 0 against anything."""

    indices: torch.Tensor  # (n, k)
    values: torch.Tensor  # (n, k) cosine similarities
    constant: bool

    @property
    def k(self) -> int:
        return self.indices.shape[1]


def neighbours(x: Array, k: int) -> Neighbours:
    """The k-NN lists the neighbour metrics are built from; compute once, score many times."""
    t = _tensor(x)
    _check_k(k, t.shape[0])
    if _is_constant(t):
        empty = torch.zeros((t.shape[0], k), dtype=torch.long)
        return Neighbours(empty, empty.to(t.dtype), constant=True)
    return Neighbours(*knn(t, k), constant=False)


def _check_lists(na: Neighbours, nb: Neighbours) -> None:
    if na.indices.shape != nb.indices.shape:
        raise AlignmentError(
            f"neighbour lists differ in shape: {tuple(na.indices.shape)}, {tuple(nb.indices.shape)}"
        )


def mutual_knn_from(na: Neighbours, nb: Neighbours) -> float:
    """Mean over rows of |N_A(i) ∩ N_B(i)| / k (Huh et al. 2024, eq. for m_NN)."""
    _check_lists(na, nb)
    if na.constant or nb.constant:
        return 0.0
    return float(_overlap(na.indices, nb.indices).double().sum(dim=1).mean() / na.k)


def _overlap(na: torch.Tensor, nb: torch.Tensor) -> torch.Tensor:
    """(n, k) mask: whether each of A's neighbours is also among B's."""
    return (na[:, :, None] == nb[:, None, :]).any(dim=2)


def cycle_knn_from(na: Neighbours, nb: Neighbours) -> float:
    """Fraction of rows i that reappear among A-neighbours of i's B-neighbours (Huh et al.)."""
    _check_lists(na, nb)
    if na.constant or nb.constant:
        return 0.0
    n = na.indices.shape[0]
    back = na.indices[nb.indices]  # (n, k, k): A-neighbours of each B-neighbour
    hits = (back == torch.arange(n, device=back.device)[:, None, None]).flatten(1).any(dim=1)
    return float(hits.double().mean())


def cknna_from(na: Neighbours, nb: Neighbours) -> float:
    """CKNNA (Huh et al. 2024): unbiased HSIC of K and L kept only where j is among i's k
    nearest neighbours in both spaces, normalised as CKA. Built from the two top-k lists."""
    _check_lists(na, nb)
    n = na.indices.shape[0]
    if n <= 3:
        raise AlignmentError(f"unbiased estimators need n > 3 rows, got {n}")
    if na.constant or nb.constant:
        return 0.0
    a, b = (na.indices, na.values), (nb.indices, nb.values)
    kl, kk, ll = _masked_hsic(*a, *b, n), _masked_hsic(*a, *a, n), _masked_hsic(*b, *b, n)
    denominator = float(np.sqrt(max(kk * ll, 0.0)))
    return kl / denominator if denominator > 0 else 0.0


def mutual_knn(a: Array, b: Array, k: int = 10) -> float:
    """Mutual k-NN alignment of two row-paired feature matrices (see `mutual_knn_from`)."""
    ta, tb = _pair(a, b)
    return mutual_knn_from(neighbours(ta, k), neighbours(tb, k))


def cycle_knn(a: Array, b: Array, k: int = 10) -> float:
    """Cycle k-NN of two row-paired feature matrices (see `cycle_knn_from`)."""
    ta, tb = _pair(a, b)
    return cycle_knn_from(neighbours(ta, k), neighbours(tb, k))


def cknna(a: Array, b: Array, k: int = 10) -> float:
    """CKNNA of two row-paired feature matrices (see `cknna_from`)."""
    ta, tb = _pair(a, b)
    if ta.shape[0] <= 3:
        raise AlignmentError(f"unbiased estimators need n > 3 rows, got {ta.shape[0]}")
    return cknna_from(neighbours(ta, k), neighbours(tb, k))


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


def _hsic_linear(x: torch.Tensor, y: torch.Tensor, unbiased: bool) -> float:
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


def _cka(a: Array, b: Array, unbiased: bool) -> float:
    ta, tb = _pair(a, b)
    if unbiased and ta.shape[0] <= 3:
        raise AlignmentError(f"unbiased estimators need n > 3 rows, got {ta.shape[0]}")
    if _is_constant(ta) or _is_constant(tb):
        return 0.0
    xy = _hsic_linear(ta, tb, unbiased)
    xx = _hsic_linear(ta, ta, unbiased)
    yy = _hsic_linear(tb, tb, unbiased)
    if xx <= 0 or yy <= 0:
        return 0.0
    return xy / float(np.sqrt(xx * yy))


def cka(a: Array, b: Array) -> float:
    """Linear CKA, the standard biased estimator (Kornblith et al. 2019), streamed over rows."""
    return _cka(a, b, unbiased=False)


def cka_unbiased(a: Array, b: Array) -> float:
    """Linear CKA from Song et al.'s unbiased HSIC, streamed over rows."""
    return _cka(a, b, unbiased=True)


def _masked_hsic(na: torch.Tensor, va: torch.Tensor, nb: torch.Tensor, vb: torch.Tensor, n: int) -> float:
    """Unbiased HSIC of (mask*K, mask*L), mask_ij = [j in N_A(i) and j in N_B(i)]; sparse."""
    f64 = torch.float64
    match = na[:, :, None] == nb[:, None, :]  # (n, k, k)
    kept = match.any(dim=2)  # (n, k): A-neighbour j of i is also a B-neighbour
    rows = torch.arange(n, device=na.device)[:, None].expand_as(na)[kept]
    cols = na[kept]
    k_values = va.to(f64)[kept]
    l_values = (match.to(f64) * vb.to(f64)[:, None, :]).sum(dim=2)[kept]
    # tr(K~ L~^T... ) as in the reference: sum_ij K~_ij L~_ji needs the transposed entry of L.
    codes = rows * n + cols
    transposed = cols * n + rows
    order = torch.argsort(codes)
    sorted_codes = codes[order]
    position = torch.searchsorted(sorted_codes, transposed).clamp(max=len(codes) - 1)
    present = sorted_codes[position] == transposed if len(codes) else transposed.bool()
    l_transposed = torch.where(present, l_values[order][position], torch.zeros_like(l_values))
    trace_term = float((k_values * l_transposed).sum())
    sum_k, sum_l = float(k_values.sum()), float(l_values.sum())
    col_sum_k = torch.zeros(n, dtype=f64, device=na.device).index_add_(0, cols, k_values)
    row_sum_l = torch.zeros(n, dtype=f64, device=na.device).index_add_(0, rows, l_values)
    cross = float(col_sum_k @ row_sum_l)
    value = trace_term + sum_k * sum_l / ((n - 1) * (n - 2)) - 2 * cross / (n - 2)
    return value / (n * (n - 3))


def svcca(a: Array, b: Array, variance_kept: float = 0.99) -> float:
    """SVCCA (Raghu et al. 2017): keep the principal directions explaining `variance_kept` of
    each space, then the mean canonical correlation between them. From covariances: O(d^2)."""
    ta, tb = _pair(a, b)
    if _is_constant(ta) or _is_constant(tb):
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


def retrieval(queries: Array, gallery: Array, k: int = 1) -> float:
    """R@k: fraction of queries i whose partner gallery[i] ranks in the top k by cosine.

    Both sets live in one space (map them there first, e.g. with `rotation_alignment`'s map).
    Ties rank the lower index first.
    """
    q, g = _pair(queries, gallery)
    if q.shape[1] != g.shape[1]:
        raise AlignmentError(f"retrieval needs one space: widths {q.shape[1]} and {g.shape[1]}")
    n = q.shape[0]
    _check_k(k, n + 1)
    q, g = _normalize(q), _normalize(g)
    rows = max(1, min(n, BLOCK_ELEMENTS // n))
    hits = 0
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        sims = q[start:stop] @ g.T  # (block, n)
        own = torch.arange(start, stop, device=q.device)
        target = sims[torch.arange(stop - start), own][:, None]
        ahead = (sims > target).sum(dim=1)
        ahead += ((sims == target) & (torch.arange(n, device=q.device)[None, :] < own[:, None])).sum(dim=1)
        hits += int((ahead < k).sum())
    return hits / n


def rotation_alignment(
    a: Array, b: Array, anchors: int = 10, placement: str = "spread", seed: int = 0
) -> float:
    """R@1 on held-back pairs after one orthogonal map fitted on `anchors` pairs.

    Both spaces are first reduced by their own PCA to the smaller width (no pairing used), then
    orthogonal Procrustes on the anchors (W = UV^T from svd(A_m^T B_m)); the score is R@1 of
    mapped A against B over the remaining rows. `placement`: 'spread' picks anchors by
    farthest-point sampling in A, 'random' uniformly (seeded).
    """
    ta, tb = _pair(a, b)
    n = ta.shape[0]
    if not 1 <= anchors <= n - 2:
        raise AlignmentError(f"anchors={anchors} needs 1 <= anchors <= n-2={n - 2}")
    if _is_constant(ta) or _is_constant(tb):
        return 0.0
    width = min(ta.shape[1], tb.shape[1], n - 1)
    xa, xb = _normalize(_pca(ta, width)), _normalize(_pca(tb, width))
    chosen = _anchors(xa, anchors, placement, seed)
    rest = torch.ones(n, dtype=torch.bool, device=ta.device)
    rest[chosen] = False
    u, _, vt = torch.linalg.svd(xa[chosen].T @ xb[chosen], full_matrices=False)
    rotation = u @ vt  # (width, width)
    return retrieval(xa[rest] @ rotation, xb[rest], k=1)


def _pca(x: torch.Tensor, width: int) -> torch.Tensor:
    centred = x - x.mean(dim=0, keepdim=True)
    _, vectors = torch.linalg.eigh(centred.T @ centred)
    return centred @ vectors.flip(1)[:, :width]


def _anchors(x: torch.Tensor, count: int, placement: str, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    if placement == "random":
        return torch.randperm(x.shape[0], generator=generator)[:count].to(x.device)
    if placement != "spread":
        raise AlignmentError(f"placement {placement!r} is not 'spread' or 'random'")
    chosen = [int(torch.randint(x.shape[0], (1,), generator=generator))]
    distance = 1 - x @ x[chosen[0]]
    for _ in range(count - 1):
        chosen.append(int(torch.argmax(distance)))
        distance = torch.minimum(distance, 1 - x @ x[chosen[-1]])
    return torch.tensor(chosen, device=x.device)


def mapped_retrieval(text_fit: Array, image_fit: Array, text: Array, image: Array) -> torch.Tensor:
    """The text rows mapped into the image space by least squares fitted on held-back pairs."""
    mapping = torch.linalg.lstsq(_tensor(text_fit).double(), _tensor(image_fit).double()).solution
    return _tensor(text).double() @ mapping


def retrieval_t2i(text: Array, image: Array, k: int, text_fit: Array, image_fit: Array) -> float:
    """R@k of each text's image among all images, after the text -> image map (`mapped_retrieval`)."""
    return retrieval(mapped_retrieval(text_fit, image_fit, text, image), _tensor(image).double(), k)


def retrieval_i2t(text: Array, image: Array, k: int, text_fit: Array, image_fit: Array) -> float:
    """R@k of each image's text among all mapped texts (the same map as `retrieval_t2i`)."""
    return retrieval(_tensor(image).double(), mapped_retrieval(text_fit, image_fit, text, image), k)


def neighbour_scorer(name: str) -> Callable[[Neighbours, Neighbours], float] | None:
    """The function that scores two k-NN lists for a metric built from them, else None."""
    return _FROM_NEIGHBOURS.get(parse_metric(name).name)


def scorer(name: str) -> Callable[..., float]:
    """A metric's own function: (a, b), (a, b, k), or (text, image, k, text_fit, image_fit)."""
    return _SCORERS[parse_metric(name).name]


def metric_function(name: str) -> Callable[[Array, Array], float]:
    """The scorer for a metric name, e.g. 'mutual_knn@10' or 'cka', on two row-paired matrices.

    A metric that needs a map (retrieval) fits it on the first half of the rows and scores the
    second half, so no pair is scored by a map that saw it.
    """
    parsed = parse_metric(name)
    score = _SCORERS[parsed.name]
    if parsed.metric.needs_map:

        def split_and_score(a: Array, b: Array) -> float:
            ta, tb = _pair(a, b)
            half = ta.shape[0] // 2
            return score(ta[half:], tb[half:], parsed.k, ta[:half], tb[:half])

        return split_and_score
    if parsed.k is None:
        return score
    return lambda a, b: score(a, b, parsed.k)


def max_over_layers(
    score: Callable[[Array, Array], float], layers_a: Sequence[Array], layers_b: Sequence[Array]
) -> tuple[float, int, int]:
    """The best score over every (layer of A, layer of B) pair, and which pair gave it."""
    best = (-np.inf, -1, -1)
    for i, layer_a in enumerate(layers_a):
        for j, layer_b in enumerate(layers_b):
            value = score(layer_a, layer_b)
            if value > best[0]:
                best = (value, i, j)
    return best


# Each catalog entry's functions, looked up once: a metric named in the catalog without its
# function here fails at import, not in a running trial.
_SCORERS: dict[str, Callable[..., float]] = {name: globals()[m.scorer] for name, m in METRICS.items()}
_FROM_NEIGHBOURS: dict[str, Callable[[Neighbours, Neighbours], float]] = {
    name: globals()[m.from_neighbours] for name, m in METRICS.items() if m.from_neighbours
}
