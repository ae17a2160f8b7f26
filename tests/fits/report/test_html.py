"""report.html in a real headless Chromium (Debian's package; `.ci/run` installs it): the page
loads from disk alone, the claims table and every plot render, the console stays silent."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fits.curve.settings import FitOptions
from fits.report import write_report
from fits.run.fit_run import run_fit
from tests.stores import SIM_DESIGN, simulated_store

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(
        CHROMIUM is None and not os.environ.get("ORCH_REQUIRE_BROWSER"), reason="no chromium on this machine"
    ),
]

# Appended to a copy of the page: measures what rendered and writes it into the DOM.
PROBE = """<script>
const svgs = [...document.querySelectorAll("figure svg")].map(s => {
  const box = s.getBoundingClientRect(); return [box.width, box.height, s.querySelectorAll("path").length];
});
const claims = document.querySelectorAll("#claims tbody tr").length;
document.body.setAttribute("data-probe", JSON.stringify({svgs, claims}));
</script></body>"""


def browse(page: Path, *args: str) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr"]
    return subprocess.run(
        [*command, "--v=0", *args, page.as_uri()], capture_output=True, text=True, timeout=120
    )


def rendered(page: Path, tmp_path: Path) -> tuple[dict, list[str]]:
    """(what the probe measured, the console's messages) for the page."""
    probed = tmp_path / f"probed-{page.name}"
    probed.write_text(page.read_text().replace("</body>", PROBE, 1))
    result = browse(probed, "--dump-dom")
    found = re.search(r'data-probe="([^"]*)"', result.stdout)
    assert found, result.stderr[-2000:]
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line]
    return json.loads(found.group(1).replace("&quot;", '"')), console


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    store = simulated_store(f"sqlite:///{folder / 'o.db'}")
    options = FitOptions(predict=(900_000_000,), gaps=("jepa_good:ntp",))
    return write_report(run_fit(store, "sim", options, SIM_DESIGN), folder / "reports" / "sim")


def test_the_page_renders_its_claims_and_every_plot_with_a_silent_console(report, tmp_path):
    probe, console = rendered(report, tmp_path)
    assert probe["claims"] == 1 and console == []
    assert len(probe["svgs"]) == len(list(report.parent.glob("*.svg"))) >= 4
    assert all(width > 200 and height > 100 and paths > 5 for width, height, paths in probe["svgs"])
    shot = tmp_path / "report.png"
    browse(report, "--hide-scrollbars", "--window-size=1300,2400", f"--screenshot={shot}")
    assert shot.stat().st_size > 20_000


def test_the_page_needs_nothing_but_itself(report):
    text = report.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:|//|file:)""", text)
    for section in ("Claims", "Provenance", "Glossary", "Forecasts", "Backtests"):
        assert f"<h2>{section}" in text
    assert "sweep_file_sha256" in text and "UNBOUNDED_LAW" in text


def test_the_probe_sees_a_broken_page(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text(
        '<html><body><table id="claims"><tbody></tbody></table><figure><svg></svg></figure>'
        "<script>console.error('boom')</script></body></html>"
    )
    probe, console = rendered(broken, tmp_path)
    assert probe["claims"] == 0 and probe["svgs"][0][2] == 0  # no rows, an empty drawing
    assert any("boom" in line for line in console)
