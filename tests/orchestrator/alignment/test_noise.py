"""Each score's noise and null: shuffled features sit inside their null, identical features score
1.0 far above it, and the vectorised item bootstrap matches a slow loop."""

import numpy as np
import pytest
import torch

from orchestrator.alignment import cycle_knn, mutual_knn, neighbours
from orchestrator.alignment.noise import (
    ItemDraws,
    ShuffledReference,
    item_se,
    per_item,
    permutation_nulls,
    row_scores,
)

MUTUAL = row_scores("mutual_knn")


def test_a_shuffled_reference_scores_inside_its_null_band():
    rng = np.random.default_rng(0)
    text = rng.normal(size=(400, 16))
    image = text @ rng.normal(size=(16, 24)) + 0.5 * rng.normal(size=(400, 24))
    shuffled = image[rng.permutation(400)]
    lists = [neighbours(text, 10)]
    null, _ = permutation_nulls(MUTUAL, lists, ShuffledReference(neighbours(shuffled, 10), MUTUAL))
    assert mutual_knn(text, shuffled) <= null.p95
    assert null.mean == pytest.approx(10 / 399, rel=0.3)  # chance: k / (n - 1)


def test_identical_features_score_one_far_above_their_null():
    text = np.random.default_rng(1).normal(size=(300, 12))
    lists = neighbours(text, 10)
    null, (layer,) = permutation_nulls(MUTUAL, [lists], ShuffledReference(lists, MUTUAL))
    assert mutual_knn(text, text) == 1.0
    assert null.p95 < 0.1 and layer == null  # one layer: the max is that layer


def test_the_item_bootstrap_matches_a_slow_loop():
    rng = np.random.default_rng(2)
    text, image = rng.normal(size=(60, 8)), rng.normal(size=(60, 8))
    layers = [neighbours(text, 5), neighbours(text[:, :4], 5)]
    target = neighbours(image, 5)
    se, per_layer = item_se(MUTUAL, layers, target, ItemDraws(60, draws=300, seed=3))
    picks = torch.randint(60, (300, 60), generator=torch.Generator().manual_seed(3))
    rows = [per_item(MUTUAL, layer, target.indices).numpy() for layer in layers]
    slow_max = [max(float(np.mean(r[list(p)])) for r in rows) for p in picks.numpy()]
    slow_first = [float(np.mean(rows[0][list(p)])) for p in picks.numpy()]
    assert se == pytest.approx(np.std(slow_max, ddof=1), rel=1e-9)
    assert per_layer[0] == pytest.approx(np.std(slow_first, ddof=1), rel=1e-9)


def test_a_permuted_reference_has_the_neighbours_of_its_shuffled_rows():
    image = np.random.default_rng(4).normal(size=(50, 6))
    (moved,) = ShuffledReference(neighbours(image, 4), MUTUAL, permutations=1, seed=5).positions
    order = torch.randperm(50, generator=torch.Generator().manual_seed(5))
    assert torch.equal(moved, MUTUAL.positions(neighbours(image[order.numpy()], 4).indices))


def test_per_item_values_average_to_the_metric():
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(80, 5)), rng.normal(size=(80, 7))
    na, nb = neighbours(a, 6), neighbours(b, 6)
    assert float(per_item(MUTUAL, na, nb.indices).mean()) == pytest.approx(mutual_knn(a, b, 6))
    assert float(per_item(row_scores("cycle_knn"), na, nb.indices).mean()) == pytest.approx(
        cycle_knn(a, b, 6)
    )
