"""What `orch next`'s picks cost beyond FLOPs, and what bounds them: the sweep file they would run
under (the sweep's own, or a template for an imported sweep), its FLOPs model where the store
recorded none, GPU-hours at the dry run's throughput, a price, and the corpus's size."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from foundation.sizes import format_size

__all__ = ["Costs", "corpus_in", "corpus_note", "costs_of", "sweep_file"]


@dataclass(frozen=True)
class Costs:
    """What picks cost beyond FLOPs: the sweep file's FLOPs model where the store recorded none,
    GPU-hours at the dry run's throughput where the sweep file asks for GPUs, and their price."""

    per_sample: dict[tuple[str, str], float]  # (objective, model) -> training FLOPs a sample
    throughput: Any  # orchestrator.run.plan.Throughput
    on_gpus: bool
    price: float | None  # a GPU-hour's
    source: str | None  # the sweep file the model is read from

    def gpu_hours(self, run: Any, cells: list[Any]) -> float | None:
        """The cells' GPU-hours (None: no GPU asked for, or a cell's FLOPs unknown)."""
        known = {**self.per_sample, **run.curves.flops_per_sample}
        if not self.on_gpus or not cells or any((c.objective, c.model) not in known for c in cells):
            return None
        return sum(self.throughput.gpu_hours(c.flops) for c in cells)

    def text(self, run: Any, cells: list[Any]) -> str:
        hours = self.gpu_hours(run, cells)
        if hours is None:
            return ""
        line = (
            f", ~{hours:,.1f} GPU-hours (at {self.throughput.mfu:.0%} of "
            f"{self.throughput.peak_tflops:g} TFLOP/s a GPU, as orch sweep --dry-run)"
        )
        return line + (f", ~{hours * self.price:,.0f} at {self.price:g} a GPU-hour" if self.price else "")


def sweep_file(store: Any, sweep_name: str, template: str | None) -> Any:
    """The sweep file the picks would run under: the template, else the sweep's own where orch
    trained it (None: an imported sweep without a template)."""
    from orchestrator.sweepfile import load_spec, parse_spec
    from orchestrator.sweepfile.imported import imported_design

    if template is not None:
        return load_spec(template)
    row = store.find_sweep(sweep_name)
    raw = yaml.safe_load(row.spec_text) if row is not None and row.spec_text else None
    if not isinstance(raw, dict) or imported_design(raw) is not None:
        return None
    return parse_spec(raw, row.source, read_claims=False, base_dir=Path(row.source).resolve().parent)


def costs_of(spec: Any, throughput: Any, price: float | None, open_claims: list[tuple[Any, list]]) -> Costs:
    from orchestrator.run.plan import sample_flops

    if spec is None:
        return Costs({}, throughput, False, price, None)
    measured = [c for run, _ in open_claims for c in (*run.curves, *run.curves.unfitted)]  # a law or not
    pairs = {(c.key.objective, c.key.model) for c in measured}
    per_sample = {pair: flops for pair in pairs if (flops := sample_flops(spec, *pair)) is not None}
    on_gpus = spec.resources.gpu > 0 or any(r.gpu > 0 for _, r in spec.model_resources)
    return Costs(per_sample, throughput, on_gpus, price, spec.source)


def corpus_in(spec: Any) -> int | None:
    """The samples one epoch of the sweep file's training text holds (`orchestrator.data.files`),
    None where nothing says (the embedded world makes new samples: no corpus)."""
    from orchestrator.data.files import corpus_of

    return corpus_of(spec.data) if spec is not None and spec.data.source == "files" else None


def corpus_note(corpus: int | None, spec: Any) -> str:
    if corpus is not None:
        return (
            f"no candidate passes the corpus's {format_size(corpus)} samples (one epoch of the training text)"
        )
    if spec is not None and spec.data.source == "world":
        return "the embedded world makes new samples for every run: no corpus bounds the candidates"
    return (
        "the corpus's size is unknown: a candidate may pass one epoch of the training text "
        "(give --corpus, or data.corpus in the sweep file)"
    )
