"""orch's own local Ray: started in a temp dir of its own, so that the processes a killed driver
left behind can be found and ended by the next run, without touching anyone else's Ray."""

import os
import re
from pathlib import Path
from typing import Any

__all__ = ["RAY_TEMP_DIR", "end_orphans", "end_stragglers", "local_ray_kwargs"]

RAY_TEMP_DIR = Path(os.environ.get("ORCH_RAY_TEMP_DIR", "/tmp/orch-ray"))
SESSION = re.compile(r"/session_[0-9_-]+_(\d+)/")  # Ray names a session after its driver's pid


def end_orphans(temp_dir: Path = RAY_TEMP_DIR, finished: frozenset[int] = frozenset()) -> list[int]:
    """End processes of orch's earlier local Ray sessions whose driver is gone (or is one of
    `finished`); return their pids.

    After SIGKILL of a driver, Ray's GCS and raylet exit but some agents live on; they hold files
    open in the session directory, which names the dead driver's pid.
    """
    import psutil

    ended = []
    prefix = str(temp_dir) + "/"
    for process in psutil.process_iter(["pid"]):
        if process.pid == os.getpid():
            continue  # the driver itself holds its own session's logs open
        try:
            paths = [f.path for f in process.open_files()]
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        drivers = {int(m.group(1)) for p in paths if p.startswith(prefix) and (m := SESSION.search(p))}
        if drivers and not any(psutil.pid_exists(pid) and pid not in finished for pid in drivers):
            try:
                process.kill()
                ended.append(process.pid)
            except psutil.NoSuchProcess:
                pass
    return ended


def end_stragglers(temp_dir: Path = RAY_TEMP_DIR) -> list[int]:
    """After `ray.shutdown()`: end what is left of this driver's session and of a killed driver's
    session whose workers were still starting when the run began (they opened their files late)."""
    return end_orphans(temp_dir, finished=frozenset({os.getpid()}))


def local_ray_kwargs(num_cpus: int | None, num_gpus: float | None = None) -> dict[str, Any]:
    """`ray.init` arguments for a single-machine Ray: explicit CPUs, no dashboard, our temp dir;
    GPUs as Ray detects them unless `num_gpus` says how many to offer."""
    end_orphans()
    RAY_TEMP_DIR.mkdir(parents=True, exist_ok=True)
    return {
        "num_cpus": num_cpus or os.cpu_count() or 1,
        **({} if num_gpus is None else {"num_gpus": num_gpus}),
        "include_dashboard": False,
        "_temp_dir": str(RAY_TEMP_DIR),
    }
