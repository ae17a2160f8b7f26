"""The house rules, read from the source: every import runs one way between rooms, and no module
imports itself back through any chain, TYPE_CHECKING and function-level imports included.

The flow is spec -> run -> training/data -> db -> fits -> fits.report. A room may import only the
rooms this table names: the types it reads from upstream, the boxes it hands data to downstream.
Every room may import the foundation (the `foundation` package): the root of every
error, sample sizes and orch's version. Nothing of fits imports orchestrator, and only
`fits.load` reads or writes the store.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("orchestrator", "fits", "db", "foundation")

ALLOWED: dict[str, set[str]] = {
    "foundation": set(),  # FOUNDATION: the root error, sizes, the version; every room may import it
    "db": {"foundation"},
    "orchestrator.errors": {"foundation"},
    "orchestrator.interrupts": set(),  # SIGTERM as Ctrl-C, and signals held back over a commit
    "orchestrator.sweepfile": {
        "orchestrator.errors",
        "fits.claim",
        "foundation",
    },  # claims are read with sweeps
    "orchestrator.data": {"orchestrator.sweepfile", "orchestrator.errors", "foundation"},
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
    "orchestrator.imports": {"orchestrator.sweepfile", "orchestrator.errors", "db", "foundation"},
    "orchestrator.export": {"db"},  # the store's tables as files pandas reads back
    "fits.math": {"foundation"},  # FITS_MATH: arrays in, arrays out
    "fits.claim": set(),  # what a claim states: types only, read by the claims-file parser
    "fits.results": {"fits.math", "fits.claim"},
    "fits.baseline_level": {"fits.math", "fits.results", "fits.claim"},  # a level against a baseline
    "fits.verdicts": {"fits.math", "fits.results", "fits.claim", "fits.baseline_level", "foundation"},
    "fits.calibration": {"fits.math", "fits.results", "fits.claim", "fits.verdicts"},  # bench/fitting.py
    "fits.seed_noise": {"fits.results", "fits.verdicts"},  # seed sd against S, for planning
    "fits.beliefs": {"fits.math", "fits.results", "fits.claim", "fits.verdicts", "fits.seed_noise"},
    "fits.plan": {"fits.beliefs", "fits.results", "fits.claim", "fits.verdicts"},  # orch next's picks
    "fits.plan_check": {"fits.math", "fits.beliefs", "fits.plan", "fits.calibration", "fits.verdicts"},
    "fits.check": {"fits.math", "fits.results", "foundation"},
    "fits.curves": {"fits.math", "fits.results"},
    "fits.gap_estimates": {"fits.math", "fits.results"},
    "fits.load": {
        "fits.results",
        "fits.claim",
        "db",
        "foundation",
    },  # the store: the only fits module that reads it
    "fits.report.text": set(),  # one cell formatter: the report's tables and the CLI's
    "fits.report": {"fits.math", "fits.results", "fits.claim", "fits.report.text"},  # draws, never refits
    "fits.run": {
        "fits.math",
        "fits.results",
        "fits.check",
        "fits.curves",
        "fits.gap_estimates",
        "fits.verdicts",
        "fits.plan",
        "fits.load",
    },
    "orchestrator.cli": {"*"},  # the edge: it wires every room together
    "orchestrator": {"orchestrator.cli", "foundation"},  # the package and `python -m orchestrator`
}
FOUNDATION = ("foundation",)
MAX_LINES = 350  # one idea a module: about 300 lines
FITS_MATH = (
    "fits.laws",
    "fits.solve",
    "fits.fit",
    "fits.ensemble",
    "fits.bands",
    "fits.backtest",
    "fits.gaps",
    "fits.joint",
    "fits.bootstrap",
    "fits.level",
    "fits.planted",  # the procedure on planted truths, for bench/fitting.py and the tests
    "fits.finish",  # lmfit's finish of the batched solver's best start, and its profiles
    "fits.weighted_fit",  # a law's best weighted fit to arrays (curves and the joint law)
    "fits.measured_gap",  # the model-free gap from the seed means
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_of(module: str) -> str:
    if module.split(".")[0] in FOUNDATION:
        return "foundation"
    if module == "fits" or module.startswith(FITS_MATH):
        return "fits.math"
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
    long = {module_name(p): n for p in paths if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"
