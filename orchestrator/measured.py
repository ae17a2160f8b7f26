"""`orch baselines measure`: a pretrained model's features scored against a sweep's references
the way a trial's checkpoint is (each metric maximised over layers, with its eval-item SE and
permutation null), as measured baselines to stand beside the published ones.

Features pair with the eval set only row for row, so the pairing is checked before anything is
scored: the row count; for text features, each row's sha256 against the eval text's; and the
row ids against those of any reference that has a sidecar of its own."""

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from db import BaselineRow
from orchestrator.errors import InputError
from orchestrator.extraction.output import read_sidecar, sidecar_path
from orchestrator.features import load_layers
from orchestrator.sweepfile import Spec
from orchestrator.sweepfile.catalog import parse_metric

__all__ = ["MEASURED", "measure_baselines"]

MEASURED = "measured"  # the source of every measured row, beside a paper's name for published ones


def measure_baselines(
    features: Path, spec: Spec, name: str | None, objective: str
) -> tuple[list[BaselineRow], list[str]]:
    """One row per (metric, reference) of the sweep's eval section; and the metrics skipped."""
    import torch

    from orchestrator.data.sources import source_of
    from orchestrator.training.scoring import scorer_for

    sidecar = read_sidecar(features)
    if sidecar is None:
        raise InputError(
            f"{features}: no sidecar {sidecar_path(features)} beside it; make the features with "
            "orch features, which records how they were made"
        )
    layers = [matrix for _, matrix in load_layers(features)]
    texts, eval_set = source_of(spec.data).scoring_set(spec.trials[0])
    _check_pairing(features, sidecar, layers[0].shape[0], texts, spec)
    metrics = tuple(m for m in spec.eval.metrics if not parse_metric(m).metric.needs_map)
    skipped = [m for m in spec.eval.metrics if m not in metrics]
    scorer = scorer_for(eval_set, replace(spec.eval, metrics=metrics))
    scores = scorer.score([torch.from_numpy(np.ascontiguousarray(layer)) for layer in layers], [])
    digest = hashlib.sha256(sidecar_path(features).read_bytes()).hexdigest()
    model = name or Path(sidecar["model"]["folder"]).name
    rows = [
        BaselineRow(
            source=MEASURED,
            model=model,
            objective=objective,
            metric=score.metric,
            reference=score.reference,
            eval_set=eval_set.name,
            samples=None,
            value=float(score.value),
            se=score.se,
            null_mean=score.null_mean,
            null_p95=score.null_p95,
            chance=score.chance,
            sidecar_sha256=digest,
        )
        for score in scores
        if "/" not in score.metric  # the best over layers, as a trial's headline value
    ]
    return rows, skipped


def _check_pairing(features: Path, sidecar: dict[str, Any], rows: int, texts: list[str], spec: Spec) -> None:
    remake = f"make them from the eval set's texts (orch features manifest {spec.source})"
    if rows != len(texts):
        raise InputError(
            f"{features}: {rows} rows, but eval set {spec.eval.set} has {len(texts)}: features pair with "
            f"the eval set row for row; {remake}"
        )
    ids, hashes = sidecar["rows"]["ids"], sidecar["rows"]["sha256"]
    if sidecar["side"] == "text":
        for index, text in enumerate(texts):
            if hashlib.sha256(text.encode()).hexdigest() != hashes[index]:
                raise InputError(
                    f"{features}: row {index} ({ids[index]!r}) was made from another text than row {index} "
                    f"of eval set {spec.eval.set} (the sidecar's sha256 differs); {remake}"
                )
    for reference, path in spec.data.eval_features:
        theirs = read_sidecar(spec.data.resolve(path))
        if theirs is not None and theirs["rows"]["ids"] != ids:
            index = next(
                (i for i, (a, b) in enumerate(zip(ids, theirs["rows"]["ids"], strict=False)) if a != b),
                min(len(ids), len(theirs["rows"]["ids"])),
            )
            raise InputError(
                f"{features}: its rows are not those of reference {reference!r} ({path}): row {index} "
                "differs by the sidecars' ids; make both from one manifest"
            )
