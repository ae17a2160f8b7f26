"""Retrieval metrics: R@k in one space, after a least-squares text -> image map fitted on
held-back pairs (`retrieval_t2i`, `retrieval_i2t`), or after an orthogonal map on a few anchors
(`rotation_alignment`)."""

import torch

from orchestrator.alignment.arrays import (
    BLOCK_ELEMENTS,
    AlignmentError,
    Array,
    as_matrix,
    check_k,
    is_constant,
    paired,
    unit_rows,
)

__all__ = ["mapped_retrieval", "retrieval", "retrieval_i2t", "retrieval_t2i", "rotation_alignment"]


def retrieval(queries: Array, gallery: Array, k: int = 1) -> float:
    """R@k: fraction of queries i whose partner gallery[i] ranks in the top k by cosine.

    Both sets live in one space (map them there first, e.g. with `rotation_alignment`'s map).
    Ties rank the lower index first.
    """
    q, g = paired(queries, gallery)
    if q.shape[1] != g.shape[1]:
        raise AlignmentError(f"retrieval needs one space: widths {q.shape[1]} and {g.shape[1]}")
    n = q.shape[0]
    check_k(k, n + 1)
    q, g = unit_rows(q), unit_rows(g)
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
    ta, tb = paired(a, b)
    n = ta.shape[0]
    if not 1 <= anchors <= n - 2:
        raise AlignmentError(f"anchors={anchors} needs 1 <= anchors <= n-2={n - 2}")
    if is_constant(ta) or is_constant(tb):
        return 0.0
    width = min(ta.shape[1], tb.shape[1], n - 1)
    xa, xb = unit_rows(_pca(ta, width)), unit_rows(_pca(tb, width))
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
    mapping = torch.linalg.lstsq(as_matrix(text_fit).double(), as_matrix(image_fit).double()).solution
    return as_matrix(text).double() @ mapping


def retrieval_t2i(text: Array, image: Array, k: int, text_fit: Array, image_fit: Array) -> float:
    """R@k of each text's image among all images, after the text -> image map (`mapped_retrieval`)."""
    return retrieval(mapped_retrieval(text_fit, image_fit, text, image), as_matrix(image).double(), k)


def retrieval_i2t(text: Array, image: Array, k: int, text_fit: Array, image_fit: Array) -> float:
    """R@k of each image's text among all mapped texts (the same map as `retrieval_t2i`)."""
    return retrieval(as_matrix(image).double(), mapped_retrieval(text_fit, image_fit, text, image), k)
