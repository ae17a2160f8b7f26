"""Reading the YAML files users write (sweep files, claims files): safe, strict about duplicated
keys, bounded in size, depth and alias expansion, and every failure one line naming the file.

The bounds are far above any sweep or claims file a person writes (10^4 claims is about 2 MB)
and far below what hangs a reader: a "billion laughs" file is a few hundred bytes whose aliases
expand to 10^9 values, and 10^5 nested brackets exhaust Python's stack.
"""

from pathlib import Path
from typing import Any

import yaml

from orchestrator.errors import SpecError

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_EXPANDED", "read_yaml"]

MAX_BYTES = 64 * 2**20
MAX_DEPTH = 64  # nested mappings and lists
MAX_EXPANDED = 2_000_000  # values, each alias counted as every value it stands for


class _TooLarge(Exception):
    """The document passes a bound; its message says which."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """yaml.safe_load, except that a key given twice in one mapping is an error: YAML's last
    one wins, and a sweep would silently run a grid other than the one its author read. A merge
    key (`<<: *defaults`) is YAML's own: the keys it brings may be overridden by the mapping's."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (give each key once)", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                raise _TooLarge(f"nested more than {MAX_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _expanded(root: yaml.Node) -> int:
    """How many values the document stands for once every alias is replaced by its anchor's
    values: each node counted once per path to it (aliases share nodes), memoised by node."""
    sizes: dict[int, int] = {}
    order, todo = [], [root]
    while todo:  # children before parents, without recursion
        node = todo.pop()
        if id(node) in sizes:
            continue
        sizes[id(node)] = 0
        order.append(node)
        todo += _children(node)
    for node in reversed(order):
        sizes[id(node)] = min(1 + sum(sizes[id(child)] for child in _children(node)), MAX_EXPANDED + 1)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _load(text: str) -> Any:
    loader = _UniqueKeyLoader(text)
    try:
        root = loader.get_single_node()
        if root is not None and _expanded(root) > MAX_EXPANDED:
            raise _TooLarge(f"its aliases expand to more than {MAX_EXPANDED:,} values (write the values out)")
        return None if root is None else loader.construct_document(root)
    finally:
        loader.dispose()


def read_yaml(path: Path) -> tuple[str, Any]:
    """A YAML file's text and data (safe: builds no objects; a duplicated key is an error), or
    a one-line `SpecError` naming the file."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise SpecError(f"{path}: larger than the {MAX_BYTES:,} bytes a sweep or claims file may hold")
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"{path}: cannot read ({error.__class__.__name__}: {error})") from None
    try:
        raw = _load(text)  # a SafeLoader: builds no objects
    except _TooLarge as error:
        raise SpecError(f"{path}: refused: {error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise SpecError(f"{path}: YAML syntax error at {where}: {problem}") from None
    return text, raw
