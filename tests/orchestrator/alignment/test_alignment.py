"""Each metric against an independent dense float64 implementation in numpy (the PRH code's
definitions), on random and on structured data, plus the edge cases alignment.py documents."""

import numpy as np
import pytest
import torch

from orchestrator import alignment as al
from orchestrator.alignment.arrays import quantile, unit_rows

# --- independent references: dense n x n, numpy float64, written from the papers ----------


def ref_normalize(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def ref_knn(x, k):
    sims = ref_normalize(x) @ ref_normalize(x).T
    np.fill_diagonal(sims, -np.inf)
    order = np.lexsort((np.arange(len(x))[None, :].repeat(len(x), 0), -sims), axis=1)
    return order[:, :k]


def ref_mutual_knn(a, b, k):
    na, nb = ref_knn(a, k), ref_knn(b, k)
    return np.mean([len(set(na[i]) & set(nb[i])) / k for i in range(len(a))])


def ref_cycle_knn(a, b, k):
    na, nb = ref_knn(a, k), ref_knn(b, k)
    return np.mean([any(i in na[j] for j in nb[i]) for i in range(len(a))])


def ref_hsic_unbiased(K, L):
    n = len(K)
    K, L = K.copy(), L.copy()
    np.fill_diagonal(K, 0)
    np.fill_diagonal(L, 0)
    value = np.sum(K * L.T) + K.sum() * L.sum() / ((n - 1) * (n - 2)) - 2 * np.sum(K @ L) / (n - 2)
    return value / (n * (n - 3))


def ref_hsic_biased(K, L):
    n = len(K)
    H = np.eye(n) - 1 / n
    return np.trace(K @ H @ L @ H) / (n - 1) ** 2


def ref_cka(a, b, hsic):
    K, L = a @ a.T, b @ b.T
    return hsic(K, L) / np.sqrt(hsic(K, K) * hsic(L, L))


def ref_cknna(a, b, k):
    a, b = ref_normalize(a), ref_normalize(b)
    K, L = a @ a.T, b @ b.T
    n = len(a)

    def masked(K, L):
        mask_k = np.zeros((n, n))
        mask_l = np.zeros((n, n))
        for i, row in enumerate(ref_knn_from(K, k)):
            mask_k[i, row] = 1
        for i, row in enumerate(ref_knn_from(L, k)):
            mask_l[i, row] = 1
        mask = mask_k * mask_l
        return ref_hsic_unbiased(mask * K, mask * L)

    return masked(K, L) / np.sqrt(masked(K, K) * masked(L, L))


def ref_knn_from(sims, k):
    sims = sims.copy()
    np.fill_diagonal(sims, -np.inf)
    n = len(sims)
    return np.lexsort((np.arange(n)[None, :].repeat(n, 0), -sims), axis=1)[:, :k]


def ref_svcca(a, b, keep=0.99):
    def reduce(x):
        x = x - x.mean(0)
        u, s, _ = np.linalg.svd(x, full_matrices=False)
        share = np.cumsum(s**2) / np.sum(s**2)
        r = int(np.sum(share < keep)) + 1
        return u[:, :r]  # orthonormal basis of the kept directions

    qa, qb = reduce(a), reduce(b)
    return np.mean(np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False), 0, 1))


def ref_retrieval(q, g, k):
    sims = ref_normalize(q) @ ref_normalize(g).T
    hits = 0
    for i in range(len(q)):
        order = np.lexsort((np.arange(len(g)), -sims[i]))
        hits += i in order[:k]
    return hits / len(q)


# --- data -------------------------------------------------------------------------------


def random_pair(seed, n=300, da=24, db=16):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, da)), rng.normal(size=(n, db))


def structured_pair(seed, n=300):
    """Two views of shared clustered latents, through different nonlinear maps plus noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(12, 6))
    latent = centres[rng.integers(12, size=n)] + 0.3 * rng.normal(size=(n, 6))
    a = np.tanh(latent @ rng.normal(size=(6, 32))) + 0.1 * rng.normal(size=(n, 32))
    b = np.maximum(latent @ rng.normal(size=(6, 20)), 0) + 0.1 * rng.normal(size=(n, 20))
    return a, b


PAIRS = [random_pair(0), random_pair(1, n=97, da=5, db=40), structured_pair(2), structured_pair(3)]


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("k", [1, 5, 10])
def test_knn_metrics_match_reference(pair, k):
    a, b = pair
    assert al.mutual_knn(a, b, k) == pytest.approx(ref_mutual_knn(a, b, k), abs=1e-6)
    assert al.cycle_knn(a, b, k) == pytest.approx(ref_cycle_knn(a, b, k), abs=1e-6)


@pytest.mark.parametrize("pair", PAIRS)
def test_cka_matches_reference(pair):
    a, b = pair
    assert al.cka(a, b) == pytest.approx(ref_cka(a, b, ref_hsic_biased), abs=1e-6)
    assert al.cka_unbiased(a, b) == pytest.approx(ref_cka(a, b, ref_hsic_unbiased), abs=1e-6)


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("k", [2, 10])
def test_cknna_matches_reference(pair, k):
    a, b = pair
    assert al.cknna(a, b, k) == pytest.approx(ref_cknna(a, b, k), abs=1e-6)


@pytest.mark.parametrize("pair", PAIRS)
def test_svcca_matches_reference(pair):
    a, b = pair
    assert al.svcca(a, b) == pytest.approx(ref_svcca(a, b), abs=1e-6)


@pytest.mark.parametrize("k", [1, 5])
def test_retrieval_matches_reference(k):
    rng = np.random.default_rng(4)
    g = rng.normal(size=(200, 16))
    q = g + 0.8 * rng.normal(size=g.shape)
    assert al.retrieval(q, g, k) == pytest.approx(ref_retrieval(q, g, k), abs=1e-12)


def test_identical_spaces_score_one_and_unrelated_near_chance():
    a, _b = structured_pair(5, n=400)
    assert al.mutual_knn(a, a, 10) == 1.0
    assert al.cka(a, a) == pytest.approx(1.0)
    assert al.cknna(a, a, 10) == pytest.approx(1.0, abs=1e-6)
    x, y = random_pair(6, n=400)
    assert al.mutual_knn(x, y, 10) < 0.06  # chance is k/(n-1) = 0.025


def test_blockwise_knn_equals_one_block():
    a, _ = random_pair(7, n=257)
    full = al.knn(a, 7, block_rows=257)
    small = al.knn(a, 7, block_rows=10)
    assert torch.equal(full[0], small[0])
    assert torch.allclose(full[1], small[1])


def test_ties_go_to_the_lower_index():
    # Rows 1..4 are the same point: row 0's two nearest are 1 and 2, never 3 or 4.
    x = np.array([[1.0, 0.1], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    indices, _ = al.knn(x, 2)
    assert indices[0].tolist() == [1, 2]
    assert sorted(indices[3].tolist()) == [1, 2]


def test_torch_float32_input_agrees_with_numpy():
    a, b = structured_pair(8)
    value = al.mutual_knn(torch.tensor(a, dtype=torch.float32), torch.tensor(b).float(), 10)
    assert value == pytest.approx(al.mutual_knn(a, b, 10), abs=0.01)


@pytest.mark.parametrize("metric", [al.mutual_knn, al.cycle_knn, al.cka, al.cka_unbiased, al.cknna, al.svcca])
def test_constant_features_give_zero(metric):
    a = np.ones((50, 8))
    _, b = random_pair(9, n=50)
    assert metric(a, b) == 0.0
    assert metric(b, a) == 0.0


def test_edge_cases_raise():
    a, b = random_pair(10, n=20)
    with pytest.raises(al.AlignmentError, match="k=20"):
        al.mutual_knn(a, b, 20)
    with pytest.raises(al.AlignmentError, match="n > 3"):
        al.cka_unbiased(a[:3], b[:3])
    with pytest.raises(al.AlignmentError, match="paired"):
        al.cka(a, b[:10])
    with pytest.raises(al.AlignmentError, match="NaN"):
        al.cka(np.full((20, 3), np.nan), b)
    with pytest.raises(al.AlignmentError, match="2-D"):
        al.cka(a[:, 0], b)


def test_rotation_alignment_recovers_a_rotation_from_few_anchors():
    rng = np.random.default_rng(11)
    a = rng.normal(size=(500, 12))
    rotation, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    b = a @ rotation + 0.01 * rng.normal(size=a.shape)
    assert al.rotation_alignment(a, b, anchors=24) > 0.95
    unrelated = rng.normal(size=(500, 12))
    assert al.rotation_alignment(a, unrelated, anchors=24) < 0.05


def test_prepare_clamps_and_normalises():
    x = np.array([[1.0, 2.0], [3.0, 100.0], [0.5, -1.0]])
    prepared = al.prepare(x, clamp_quantile=0.5)
    assert torch.allclose(prepared.norm(dim=1), torch.ones(3, dtype=prepared.dtype))
    raw = al.prepare(x, clamp_quantile=None, normalize=False)
    assert torch.equal(raw, torch.as_tensor(x))


def test_the_clamp_quantile_is_torch_quantile_to_the_last_bit():
    """prepare's order-statistic quantile against torch.quantile's full sort: every score of a
    checkpoint starts from it, so its values must not move."""
    generator = torch.Generator().manual_seed(0)
    for size in (2, 3, 17, 1000, 65536, 70001):
        values = torch.randn(size, dtype=torch.float64, generator=generator).abs()
        for flat in (values, (values * 4).round()):  # and with ties
            for q in (0.0, 0.05, 0.5, 0.95, 0.999, 1.0):
                assert torch.equal(quantile(flat, q), torch.quantile(flat, q)), (size, q)
    x = torch.randn(1024, 64, generator=generator)
    limit = torch.quantile(x.abs().flatten().double(), 0.95).float()
    assert torch.equal(al.prepare(x), unit_rows(x.clamp(-limit, limit)))


def test_max_over_layers_names_the_best_pair():
    a, b = structured_pair(12)
    noise = np.random.default_rng(0).normal(size=a.shape)
    best, i, j = al.max_over_layers(al.cka, [noise, a], [b])
    assert (i, j) == (1, 0)
    assert best == pytest.approx(al.cka(a, b))


def test_metric_function_parses_names():
    a, b = structured_pair(13)
    assert al.metric_function("mutual_knn@5")(a, b) == al.mutual_knn(a, b, 5)
    assert al.metric_function("cka")(a, b) == al.cka(a, b)
    with pytest.raises(ValueError, match="not a metric"):
        al.metric_function("mutal_knn@5")


def test_retrieval_means_mapped_retrieval_everywhere():
    rng = np.random.default_rng(3)
    text = rng.normal(size=(200, 8))
    image = text @ rng.normal(size=(8, 12)) + 0.01 * rng.normal(size=(200, 12))  # another width
    # `orch align` fits the text -> image map on the first half and scores the second half;
    # a trial passes its own fitting rows: one definition, the same number.
    for name in ("retrieval_t2i", "retrieval_i2t"):
        direct = al.scorer(f"{name}@1")(text[100:], image[100:], 1, text[:100], image[:100])
        assert al.metric_function(f"{name}@1")(text, image) == direct == 1.0


def test_every_catalog_metric_has_its_functions():
    from orchestrator.sweepfile.catalog import METRICS

    for name, metric in METRICS.items():
        assert callable(al.scorer(f"{name}@5" if metric.takes_k else name))
        assert (al.neighbour_scorer(f"{name}@5" if metric.takes_k else name) is None) == (
            not metric.from_neighbours
        )
    assert METRICS["mutual_knn"].chance(10, 1024) == 10 / 1023
