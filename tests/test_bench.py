"""Every benchmark imports as `python bench/NAME.py` runs it: with bench/ first on the path, where
a file named like a package of orch (bench/fits.py once was) hides that package."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LOAD_EACH = """
import runpy, sys
sys.path.insert(0, "bench")
for path in sys.argv[1:]:
    runpy.run_path(path, run_name="smoke")  # defines everything, runs no benchmark
"""


def test_every_benchmark_imports_as_it_is_run():
    scripts = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "bench").glob("*.py"))
    assert "bench/gpu.py" in scripts
    result = subprocess.run(
        [sys.executable, "-c", LOAD_EACH, *scripts], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
