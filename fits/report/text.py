"""One cell formatter and plain-text tables for the CLI's stdout: aligned columns, numbers
right-aligned. The markdown report formats its cells with the same `cell`."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Table", "cell", "render_table", "samples_cell"]


@dataclass(frozen=True)
class Table:
    id: str  # stable: the HTML element's id, and how a page picks a table
    title: str
    headers: list[str]
    rows: list[list]

    def select(self, names: Sequence[str]) -> tuple[list[str], list[list]]:
        """(headers, rows) of the columns named, in that order."""
        at = [self.headers.index(name) for name in names]
        return list(names), [[row[i] for i in at] for row in self.rows]

    def records(self) -> list[dict[str, Any]]:
        """Each row as its cells by column name."""
        return [dict(zip(self.headers, row, strict=True)) for row in self.rows]


def samples_cell(samples: float) -> str:
    """A sample count in full, with thousands separators."""
    return f"{round(samples):,}"


def cell(value: Any) -> str:
    """A value as a table shows it: '-' for None, 4 significant digits for a float."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[cell(value) for value in row] for row in rows]
    numeric = [
        all(isinstance(row[i], int | float) or row[i] is None for row in rows) if rows else False
        for i in range(len(headers))
    ]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if numeric[i] else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, cells)])
