"""Reading the YAML files users write (sweep files, claims files): safe, strict about duplicated
keys, and every failure one line naming the file."""

from pathlib import Path
from typing import Any

import yaml

from orchestrator.errors import SpecError

__all__ = ["read_yaml"]


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


def read_yaml(path: Path) -> tuple[str, Any]:
    """A YAML file's text and data (safe: builds no objects; a duplicated key is an error), or
    a one-line `SpecError` naming the file."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"{path}: cannot read ({error.__class__.__name__}: {error})") from None
    try:
        raw = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: builds no objects
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise SpecError(f"{path}: YAML syntax error at {where}: {problem}") from None
    return text, raw
