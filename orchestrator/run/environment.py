"""The process environment a sweep runs in: Tune's settings, and what Ray's processes must not
inherit. Set for the sweep and put back after it."""

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["TUNE_SETTINGS", "sweep_environment"]

TUNE_SETTINGS = {
    "TUNE_DISABLE_SIGINT_HANDLER": "1",  # Ctrl-C is ours to handle
    "TUNE_DISABLE_AUTO_CALLBACK_LOGGERS": "1",  # the store is the record
    "TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S": "0",
    "RAY_AIR_NEW_OUTPUT": "0",
}


@contextmanager
def sweep_environment() -> Iterator[None]:
    """Tune's settings (where the user set none) for the sweep, and no store URL for Ray's
    processes to inherit: only the driver writes to the store, so its URL (a password, maybe)
    stays here, and the CLI has read ORCH_STORE already. The process's environment is put back
    afterwards, so that a second command run in the same process starts as the first did."""
    saved = dict(os.environ)
    os.environ |= {name: value for name, value in TUNE_SETTINGS.items() if name not in os.environ}
    os.environ.pop("ORCH_STORE", None)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ |= saved
