"""The house rules, read from the source: every import runs one way between rooms, and no module
imports itself back through any chain, TYPE_CHECKING and function-level imports included.

The flow is sweepfile -> run -> training/data -> db -> fits -> fits.report, and inside fits the
stages: curve -> claims (judge) -> next (plan) -> run (their composition, `FitRun`) -> report,
with the planted-truth harnesses beside run. A room may import only the rooms this table names:
the types it reads from upstream, the boxes it hands data to downstream. Every room may import
the foundation (the `foundation` package): the root of every error, sample sizes and orch's
version. Nothing of fits imports orchestrator, and only `fits.run.load` reads or writes the store.
Modules stay small: past 350 lines a warning, past 500 a failure.
"""

import ast
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("orchestrator", "fits", "db", "foundation")

ALLOWED: dict[str, set[str]] = {
    "foundation": set(),  # FOUNDATION: the root error, sizes, the version; every room may import it
    "db": {"foundation"},
    "orchestrator.errors": {"foundation"},
    "orchestrator.interrupts": set(),  # SIGTERM as Ctrl-C, and signals held back over a commit
    # claims are read with sweeps; a recorded sweep file is read into the design fits need
    "orchestrator.sweepfile": {"orchestrator.errors", "fits.claims", "fits.curve", "foundation"},
    "orchestrator.data": {
        "orchestrator.sweepfile",
        "orchestrator.errors",
        "orchestrator.extraction",  # a reference's sidecar says which rows it holds
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
    "orchestrator.extraction": {"orchestrator.errors", "foundation"},  # pretrained models' features
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
LONG, MAX_LINES = 350, 500  # one idea a module: about 300 lines; past 350 a warning, past 500 a failure


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


def test_every_module_stays_small():
    paths = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    lines = {module_name(p): len(p.read_text().splitlines()) for p in paths}
    long = {module: n for module, n in lines.items() if n > LONG}
    if long:
        warnings.warn(f"modules over {LONG} lines (split one where it holds two ideas): {long}", stacklevel=1)
    assert not {m: n for m, n in long.items() if n > MAX_LINES}, f"modules over {MAX_LINES} lines"
