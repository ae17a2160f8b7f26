"""The metric names a sweep file may list, parsed without importing torch."""

import re
from dataclasses import dataclass

__all__ = ["METRICS", "MetricName", "parse_metric"]

# name -> whether it takes @k
METRICS: dict[str, bool] = {
    "mutual_knn": True,
    "cycle_knn": True,
    "cknna": True,
    "cka": False,
    "cka_unbiased": False,
    "svcca": False,
    "retrieval_t2i": True,
    "retrieval_i2t": True,
}
_PATTERN = re.compile(r"^([a-z_0-9]+?)(?:@([0-9]+))?$")


@dataclass(frozen=True)
class MetricName:
    name: str
    k: int | None

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"


def parse_metric(text: str) -> MetricName:
    """Parse 'mutual_knn@10' or 'cka'; raise ValueError with the names allowed."""
    match = _PATTERN.match(text.strip()) if isinstance(text, str) else None
    known = ", ".join(f"{n}@10" if takes_k else n for n, takes_k in METRICS.items())
    if not match or match.group(1) not in METRICS:
        raise ValueError(f"{text!r} is not a metric (one of {known})")
    name, k = match.group(1), match.group(2)
    if METRICS[name] and k is None:
        raise ValueError(f"{text!r} needs a neighbour count (write {name}@10)")
    if not METRICS[name] and k is not None:
        raise ValueError(f"{text!r} takes no @k (write {name})")
    if k is not None and int(k) < 1:
        raise ValueError(f"{text!r}: k must be at least 1")
    return MetricName(name, int(k) if k is not None else None)
