"""The house rules, read from the source: every import runs one way between rooms, and no module
imports itself back through any chain, TYPE_CHECKING and function-level imports included.

The flow is sweepfile -> run -> training/data -> db -> fits -> fits.report, and inside fits the
stages: curve -> claims (judge) -> next (plan) -> run (their composition, `FitRun`) -> report,
with the planted-truth harnesses beside run. A room may import only the rooms this table names:
the types it reads from upstream, the boxes it hands data to downstream. Every room may import
the foundation (the `foundation` package): the root of every error, sample sizes and orch's
version. Nothing of fits imports orchestrator, and only `fits.run.load` reads or writes the store.

The house rules of `tests/house_rules.py` fail, each test showing its rule catches a planted
break: functions of at most 60 lines and modules of at most 350, but for the few ALLOWED_LONG
names with their reasons; no claim kind, outcome or metric compared as a string outside its
catalog; no CLI command module imported by another module; docs/layout.md lists every module.
"""

import ast
from pathlib import Path

from tests.house_rules import (
    MODULE_LINES,
    catalog_strings,
    command_modules,
    layout_listing,
    long_functions,
    tree_listing,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("orchestrator", "fits", "db", "foundation")

ALLOWED: dict[str, set[str]] = {
    "foundation": set(),  # FOUNDATION: the root error, sizes, the version; every room may import it
    "db": {"foundation"},
    "orchestrator.errors": {"foundation"},
    "orchestrator.interrupts": set(),
    "orchestrator.outputs": {
        "orchestrator.errors"
    },  # never over an input, nor a file not orch's  # SIGTERM as Ctrl-C, and signals held back over a commit
    # claims are read with sweeps; a recorded sweep file is read into the design fits need
    "orchestrator.sweepfile": {
        "orchestrator.errors",
        "orchestrator.outputs",  # the mark of a sweep file orch next wrote
        "fits.claims",
        "fits.curve",
        "foundation",
    },
    "orchestrator.data": {
        "orchestrator.sweepfile",
        "orchestrator.errors",
        "orchestrator.extraction",  # a reference's sidecar says which rows it holds
        "orchestrator.outputs",
        "foundation",
    },
    "orchestrator.alignment": {"orchestrator.sweepfile", "foundation"},
    "orchestrator.training": {
        "orchestrator.sweepfile",
        "orchestrator.data",
        "orchestrator.alignment",
        "db",
        "foundation",
    },
    "orchestrator.run": {
        "orchestrator.sweepfile",
        "orchestrator.data",
        "orchestrator.training",
        "db",
        "orchestrator.errors",
        "orchestrator.interrupts",
        "foundation",
    },
    "orchestrator.features": {
        "orchestrator.alignment",
        "orchestrator.extraction",  # a features file's sidecar says which side it is
        "orchestrator.data",
        "orchestrator.errors",
        "foundation",
    },
    "orchestrator.extraction": {
        "orchestrator.errors",
        "orchestrator.outputs",
        "foundation",
    },  # pretrained models' features
    "orchestrator.measured": {  # those features scored as a trial's checkpoint is
        "orchestrator.extraction",
        "orchestrator.features",
        "orchestrator.sweepfile",
        "orchestrator.data",
        "orchestrator.training",
        "orchestrator.errors",
        "db",
        "foundation",
    },
    "orchestrator.baselines": {"orchestrator.sweepfile", "orchestrator.errors", "db", "foundation"},
    "orchestrator.imports": {
        "orchestrator.sweepfile",
        "orchestrator.errors",
        "orchestrator.export",  # what an export writes (its neutralised cells) it reads back
        "db",
        "fits.curve",
        "foundation",
    },
    "orchestrator.export": {"db"},  # the store's tables as files pandas reads back
    "fits": set(),  # the package
    "fits.curve": {"foundation"},  # the curve stage: laws, fits, bands, gaps on arrays; CurveSet
    "fits.claims": {"fits.curve", "foundation"},  # the judge stage: claim kinds, verdicts
    "fits.next": {"fits.curve", "fits.claims", "foundation"},  # the plan stage: beliefs, orch next's picks
    "fits.planted": {"fits.curve", "fits.claims", "fits.next"},  # the stages on planted truths
    "fits.run.results": {"fits.curve", "fits.claims", "fits.next"},  # FitRun: the stages composed
    "fits.run.load": {  # the store: the only fits module that reads it
        "fits.run.results",
        "fits.curve",
        "fits.claims",
        "db",
        "foundation",
    },
    "fits.run": {"fits.curve", "fits.claims", "fits.next", "fits.run.results", "fits.run.load", "foundation"},
    "fits.report.text": set(),  # one cell formatter: the report's tables and the CLI's
    "fits.report": {  # draws, never refits
        "fits.curve",
        "fits.claims",
        "fits.next",
        "fits.run.results",
        "fits.report.text",
    },
    "orchestrator.cli": {"*"},  # the edge: it wires every room together
    "orchestrator": {"orchestrator.cli", "foundation"},  # the package and `python -m orchestrator`
}
FOUNDATION = ("foundation",)
ALLOWED_LONG = {  # module or module::function -> why it may be long; at most 2 entries
    "orchestrator/training/loop.py::run_trial": "a training loop read top to bottom, as nanoGPT's train.py",
}
CATALOGS = (  # where a kind, an outcome or a metric is written as a string: their one definition
    "fits/claims/claim.py",
    "fits/claims/kinds.py",
    "orchestrator/sweepfile/catalog.py",
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_of(module: str) -> str:
    if module.split(".")[0] in FOUNDATION:
        return "foundation"
    rooms = [room for room in ALLOWED if module == room or module.startswith(room + ".")]
    assert rooms, f"{module} belongs to no room: add it to ALLOWED"
    return max(rooms, key=len)


def imports(path: Path, modules: set[str]) -> set[str]:
    """Every module of ours that `path` imports, anywhere in the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            if name.split(".")[0] in PACKAGES:
                while name not in modules:  # 'from db import Store' names the module 'db'
                    name = name.rsplit(".", 1)[0]
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}
    modules = set(paths)
    return {module: imports(path, modules) - {module} for module, path in paths.items()}


def test_every_import_runs_between_rooms_the_table_allows():
    wrong = []
    for module, targets in import_graph().items():
        room = room_of(module)
        for target in targets:
            other = room_of(target)
            if other != room and "*" not in ALLOWED[room] and other not in ALLOWED[room]:
                wrong.append(f"{module} ({room}) imports {target} ({other})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_module_imports_itself_back():
    graph = import_graph()
    state: dict[str, str] = {}
    cycles = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append(" -> ".join([*trail[trail.index(target) :], target]))
            elif target not in state:
                visit(target, [*trail, target])
        state[module] = "closed"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)


def test_the_room_table_has_no_cycle():
    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            room == goal or (room not in seen and reaches(room, goal, seen | {room}))
            for room in ALLOWED[start] - {"*"}
        )

    assert not [room for room in ALLOWED if reaches(room, room, {room})]


def _sources() -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): path.read_text()
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def test_the_allowlist_is_short_and_names_what_exists():
    assert len(ALLOWED_LONG) <= 2
    sources = _sources()
    for name in ALLOWED_LONG:
        path, _, function = name.partition("::")
        assert path in sources and (not function or f"def {function}(" in sources[path]), name


def test_every_function_stays_under_60_lines():
    long = [
        f"{path}::{name} ({lines} lines)"
        for path, source in _sources().items()
        for name, lines in long_functions(source)
        if f"{path}::{name}" not in ALLOWED_LONG
    ]
    assert not long, "functions over 60 lines (split out a step with a name):\n" + "\n".join(long)


def test_every_module_stays_under_350_lines():
    long = [
        f"{path} ({len(source.splitlines())} lines)"
        for path, source in _sources().items()
        if len(source.splitlines()) > MODULE_LINES and path not in ALLOWED_LONG
    ]
    assert not long, "modules over 350 lines (split one where it holds two ideas):\n" + "\n".join(long)


def test_no_kind_outcome_or_metric_is_compared_as_a_string_outside_its_catalog():
    found = [
        f"{path}:{line}: {code}"
        for path, source in _sources().items()
        if path not in CATALOGS
        for line, code in catalog_strings(source)
    ]
    assert not found, "compare the enum or ask the catalog entry:\n" + "\n".join(found)


def test_no_command_module_is_imported_by_another_module():
    cli = {path: source for path, source in _sources().items() if path.startswith("orchestrator/cli/")}
    commands = {module_name(ROOT / path) for path in command_modules(cli)}
    modules = {module_name(ROOT / path) for path in _sources()}
    wrong = [
        f"{module_name(ROOT / path)} imports {target}"
        for path in cli
        if not path.endswith("__init__.py")
        for target in imports(ROOT / path, modules) & commands
    ]
    assert commands and not wrong, "move what two commands share out of the command:\n" + "\n".join(wrong)


def test_docs_layout_lists_every_module_and_no_other():
    listed = layout_listing((ROOT / "docs" / "layout.md").read_text())
    tree = tree_listing(ROOT, PACKAGES)
    wrong = [
        f"{folder}/: the doc lists {sorted(listed.get(folder, set()) - names) or 'nothing more'}, "
        f"leaves out {sorted(names - listed.get(folder, set())) or 'nothing'}"
        for folder, names in sorted(tree.items())
        if listed.get(folder, set()) != names
    ]
    wrong += [f"{folder}/: no such folder" for folder in sorted(listed.keys() - tree.keys())]
    assert not wrong, "docs/layout.md against the tree:\n" + "\n".join(wrong)


PLANTED = """
def checked(claim):
    if claim.kind == "gap":
        return True
    match claim.verdict:
        case "supported":
            return False
""" + "\n".join(["def long():"] + ["    x = 1"] * 60)  # 61 lines


def test_the_rules_catch_a_planted_61_line_function_and_a_kind_compared_as_a_string():
    assert long_functions(PLANTED) == [("long", 61)]
    assert [line for line, _ in catalog_strings(PLANTED)] == [3, 6]
    assert catalog_strings("if metric == 'mutual_knn@10/layer2': pass") != []
    assert catalog_strings("if kind == 'csv': pass") == []  # not a catalog word


def test_the_rules_catch_a_command_module_imported_by_another(tmp_path):
    sources = {
        "a.py": "@cli.command()\ndef a():\n    pass\n",
        "b.py": "@click.group()\ndef cli():\n    pass\n",
    }
    assert command_modules(sources) == {"a.py"}


def test_the_layout_check_reads_notes_and_subfolders():
    doc = "    foundation/    (shared) errors (the root; x, y), sizes,\n                   version\n"
    doc += "    fits/          (stages)\n      curve/       laws, fit\n\n"
    assert layout_listing(doc) == {
        "foundation": {"errors", "sizes", "version"},
        "fits": {"curve"},
        "fits/curve": {"laws", "fit"},
    }
