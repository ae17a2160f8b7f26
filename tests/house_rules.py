"""The house rules read from source text, each a function from text to the lines that break it,
so `tests/test_layout.py` holds the tree to them and shows each catches a planted break:

- a function over FUNCTION_LINES lines, a module over MODULE_LINES;
- a claim kind, a verdict's outcome or a metric compared as a string outside its catalog (its
  enum or its catalog entry is the one place a new one is added);
- a CLI command module importing another command module (a command is a skin over the library:
  what two commands share lives in a module that is no command);
- docs/layout.md naming a module its folder lacks, or leaving out one it has.
"""

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from fits.claims.claim import Kind, Outcome
from orchestrator.sweepfile.catalog import METRICS

__all__ = [
    "FUNCTION_LINES",
    "MODULE_LINES",
    "catalog_strings",
    "command_modules",
    "layout_listing",
    "long_functions",
    "tree_listing",
]

FUNCTION_LINES, MODULE_LINES = 60, 350
NOTES_COLUMN = 19  # in docs/layout.md's tree, where the lists start: a folder's name lies left of it
CATALOG_WORDS = {k.value for k in Kind} | {o.value for o in Outcome} | set(METRICS)
COMPARISONS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)


def long_functions(source: str) -> list[tuple[str, int]]:
    """(name, lines) of each function over FUNCTION_LINES lines, its docstring included."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > FUNCTION_LINES:
                found.append((node.name, length))
    return found


def _catalog_word(node: ast.AST) -> str | None:
    """The catalog word a string constant (or a tuple, list or set of them) names: a kind, an
    outcome, or a metric ('mutual_knn@10/layer2' names mutual_knn)."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return next((word for e in node.elts if (word := _catalog_word(e))), None)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        name = re.split(r"[@/]", node.value)[0]
        return name if name in CATALOG_WORDS else None
    return None


def catalog_strings(source: str) -> list[tuple[int, str]]:
    """(line, code) of each comparison, or match case, of a catalog word written as a string."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, COMPARISONS) for op in node.ops):
            sides = (node.left, *node.comparators)
            found += [(node.lineno, ast.unparse(node))] if any(map(_catalog_word, sides)) else []
        elif isinstance(node, ast.MatchValue) and _catalog_word(node.value):
            found.append((node.lineno, f"case {ast.unparse(node)}"))
    return found


def command_modules(sources: dict[str, str]) -> set[str]:
    """The modules that add a command or group to orch's (`@cli.command()`, `@cli.group()`)."""
    found = set()
    for module, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and any(_registers(d) for d in node.decorator_list):
                found.add(module)
    return found


def _registers(decorator: ast.expr) -> bool:
    """`@cli.command()` or `@baselines.group()`: on a group of ours (`@click.group()` makes one)."""
    call = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (
        isinstance(call, ast.Attribute)
        and call.attr in ("command", "group")
        and not (isinstance(call.value, ast.Name) and call.value.id == "click")
    )


def _without_parentheses(text: str) -> str:
    depth, kept = 0, []
    for char in text:
        depth += char == "("
        if depth == 0:
            kept.append(char)
        depth -= char == ")" and depth > 0
    return "".join(kept)


def layout_listing(doc: str) -> dict[str, set[str]]:
    """folder (as 'orchestrator/run') -> the modules and subfolders docs/layout.md lists for it:
    in its tree, a folder's line and the lines under it are a comma-separated list of names,
    each with its note in parentheses (a note before the first name is the folder's own); a
    subfolder with a line of its own is listed there."""
    block = doc[doc.index("    foundation/") :]
    block = block[: block.index("\n\n")]
    folders: list[tuple[int, str]] = []  # the open folders, (indent, name) from the top
    text: dict[str, str] = {}
    for line in block.splitlines():
        indent, first = len(line) - len(line.lstrip()), line.split()[0]
        if first.endswith("/") and indent < NOTES_COLUMN:
            folders = [(i, f) for i, f in folders if i < indent] + [(indent, first.rstrip("/"))]
            line = line.strip()[len(first) :]
        folder = "/".join(f for _, f in folders)
        text[folder] = text.get(folder, "") + " " + line.strip()
    listing = {
        folder: {item.split()[0] for item in _without_parentheses(listed).split(",") if item.strip()}
        for folder, listed in text.items()
    }
    for folder in text:
        parent, _, name = folder.rpartition("/")
        listing.get(parent, set()).add(name)
    return listing


def tree_listing(root: Path, packages: Iterable[str]) -> dict[str, set[str]]:
    """folder -> its modules and subfolders (no __init__ or __main__), as layout_listing gives."""
    found: dict[str, set[str]] = {}
    for package in packages:
        for path in (root / package).rglob("*.py"):
            folder = path.parent.relative_to(root)
            found.setdefault(str(folder), set())
            if path.stem not in ("__init__", "__main__"):
                found[str(folder)].add(path.stem)
            if path.name == "__init__.py" and str(folder) != package:
                found.setdefault(str(folder.parent), set()).add(folder.name)
    return found
