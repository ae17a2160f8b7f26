"""The progress line: counts, samples/s, and an ETA from samples left, not trials left."""

import time

from db import TrialStatus
from orchestrator.run.progress import ProgressView
from orchestrator.sweepfile import parse_spec


def test_the_eta_comes_from_samples_left_at_the_samples_rate():
    grid = {"objective": ["jepa_good"], "model": ["tiny"], "data_size": ["1K", "9K"], "seed": [0]}
    small, large = sorted(parse_spec({"name": "p", "grid": grid}, "p.yaml").trials, key=lambda t: t.data_size)
    view = ProgressView([small, large])
    view.started_at = time.monotonic() - 10.0  # 10 s in
    view.finished(small.key, TrialStatus.DONE, None)  # 1,000 of 10,000 samples: 100 samples/s
    line = view.line()
    assert line.startswith("1/2 done, 0 running, 0 failed | 100 samples/s")
    assert line.endswith("ETA 1:30")  # 9,000 samples at 100/s; by trials it would say 0:10
