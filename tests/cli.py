"""`orch` run in this process through click's `CliRunner`: the exit code, stdout and stderr that
a real `orch` process gives, without its seconds of start-up (torch, Ray and pandas imported
anew). A test about a process's own life (signals, kills, clusters) starts a real one instead
(`tests.drivers`)."""

import contextlib
import os
import subprocess
import traceback
from pathlib import Path

from click.testing import CliRunner

from orchestrator.cli import cli

__all__ = ["ROOT", "one_error_line", "orch"]

ROOT = Path(__file__).resolve().parents[1]


def orch(
    *args: str, cwd: Path | str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`orch ARGS` in `cwd` with `env` added; an exception no command caught shows as the
    traceback a process would print, exit 1."""
    runner = CliRunner(env=env, catch_exceptions=True)
    with contextlib.chdir(cwd or os.getcwd()):
        result = runner.invoke(cli, list(args))
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(["orch", *args], result.exit_code, result.stdout, stderr)


def one_error_line(result: subprocess.CompletedProcess, code: int = 2) -> str:
    """The single line a bad input gets on stderr, with its exit code and no traceback."""
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]
