"""Trial runners that wrap the real `run_trial` with planted faults, for the scheduler tests.

Ray pickles them by value (see conftest), so workers need not import this module.
"""

import json
from pathlib import Path

from orchestrator.training.loop import run_trial


def fail_once_after_first_checkpoint(config, on_checkpoint, resume, device, cache_dir: Path, host: str):
    """Raise right after the first checkpoint past S=0, on the first attempt only; note where
    each attempt started so the test can assert it resumed from the checkpoint."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    marker = cache_dir / f"failed-{config.key}"
    with (cache_dir / f"starts-{config.key}.jsonl").open("a") as log:
        log.write(json.dumps({"step": resume.state.step if resume else 0}) + "\n")

    def reporting(checkpoint):
        on_checkpoint(checkpoint)
        if checkpoint.report.samples_seen > 0 and not marker.exists():
            marker.touch()
            raise RuntimeError("planted fault after the first checkpoint")

    return run_trial(config, reporting, resume=resume, device=device, cache_dir=cache_dir, host=host)


def ntp_always_fails(config, on_checkpoint, resume, device, cache_dir: Path, host: str):
    if config.objective == "ntp":
        raise ValueError("planted failure for ntp")
    return run_trial(config, on_checkpoint, resume=resume, device=device, cache_dir=cache_dir, host=host)
