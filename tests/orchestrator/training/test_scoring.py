"""A checkpoint's scores, as the trainer computes them once for every metric and reference, equal
to 1e-12 what each metric's own function, a slow per-item bootstrap and a slow permutation loop
give one at a time."""

import numpy as np
import pytest
import torch

from orchestrator.alignment import metric_function, neighbours, prepare
from orchestrator.alignment.neighbours import mutual_knn_from
from orchestrator.data.stream import EvalSet
from orchestrator.training.scoring import CheckpointScorer

ROWS, K = 120, 5
METRICS = (f"mutual_knn@{K}", f"cycle_knn@{K}", f"cknna@{K}", "cka", "cka_unbiased", "svcca")


def _world() -> tuple[EvalSet, list[torch.Tensor]]:
    rng = np.random.default_rng(0)
    image = rng.normal(size=(ROWS, 12)).astype(np.float32)  # as the trainer's references
    references = {"image": image, "noise": rng.normal(size=(ROWS, 9)).astype(np.float32)}
    layers = [
        torch.as_tensor(image[:, :8] + rng.normal(size=(ROWS, 8)), dtype=torch.float32),
        torch.as_tensor(rng.normal(size=(ROWS, 8)), dtype=torch.float32),
    ]
    tokens = np.zeros((ROWS, 4), dtype=np.int64)
    return EvalSet("world", tokens, references, tokens, references), layers


def _mutual_rows(text: torch.Tensor, target: torch.Tensor) -> np.ndarray:
    """|N_text(i) ∩ N_target(i)| / k, item by item."""
    a, b = neighbours(text, K).indices.tolist(), neighbours(target, K).indices.tolist()
    return np.array([len(set(x) & set(y)) / K for x, y in zip(a, b, strict=True)])


@pytest.fixture(scope="module")
def scored() -> tuple[dict[tuple[str, str], object], EvalSet, list[torch.Tensor]]:
    eval_set, layers = _world()
    scorer = CheckpointScorer(eval_set, METRICS, None)
    for _ in range(2):  # a second checkpoint reuses what the scorer keeps between checkpoints
        rows = {(s.metric, s.reference): s for s in scorer.score(layers, [])}
    return rows, eval_set, layers


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("reference", ["image", "noise"])
def test_every_value_equals_the_metric_function_on_the_prepared_features(scored, metric, reference):
    rows, eval_set, layers = scored
    target = prepare(eval_set.references[reference])
    values = [metric_function(metric)(prepare(layer), target) for layer in layers]
    for i, value in enumerate(values):
        assert rows[(f"{metric}/layer{i}", reference)].value == pytest.approx(value, abs=1e-12)
    assert rows[(metric, reference)].value == pytest.approx(max(values), abs=1e-12)


def test_the_item_se_and_null_equal_slow_loops_over_draws_and_permutations(scored):
    rows, eval_set, layers = scored
    image = prepare(eval_set.references["image"])
    texts = [prepare(layer) for layer in layers]
    per_item = np.stack([_mutual_rows(text, image) for text in texts])  # (L, n)
    picks = torch.randint(ROWS, (200, ROWS), generator=torch.Generator().manual_seed(0)).numpy()
    resampled = np.array([[row[p].mean() for p in picks] for row in per_item])  # (L, B)
    generator = torch.Generator().manual_seed(0)
    text_lists = [neighbours(text, K) for text in texts]
    shuffled = []
    for _ in range(100):
        order = torch.randperm(ROWS, generator=generator)
        moved = neighbours(image[order], K)
        shuffled.append([mutual_knn_from(lists, moved) for lists in text_lists])
    shuffled = np.array(shuffled)  # (P, L)
    metric = f"mutual_knn@{K}"
    for name, draws, nulls in [
        (metric, resampled.max(axis=0), shuffled.max(axis=1)),
        *((f"{metric}/layer{i}", resampled[i], shuffled[:, i]) for i in range(len(layers))),
    ]:
        row = rows[(name, "image")]
        assert row.se == pytest.approx(np.std(draws, ddof=1), abs=1e-12)
        assert row.null_mean == pytest.approx(nulls.mean(), abs=1e-12)
        assert row.null_p95 == pytest.approx(np.quantile(nulls, 0.95), abs=1e-12)
