"""The README cannot drift from the CLI: every `orch` command in its code blocks parses with
orch's own click parser (the command exists, every flag is still named so, every value and every
file it names are good), except those whose line says it needs a GPU or a cluster; and `.ci/run`
runs the README's test command."""

import shlex
import warnings
from pathlib import Path

import click
import pytest

from orchestrator.cli import cli

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = ("needs a GPU", "needs a cluster")


def code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line in an indented (4 spaces) or fenced code block."""
    found, fenced, previous_blank = [], False, True
    in_indented = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            found.append((number, line))
            continue
        in_indented = line.startswith("    ") and (previous_blank or in_indented)
        if in_indented:
            found.append((number, line.strip()))
        previous_blank = not line.strip()
    return found


def readme_commands(text: str) -> list[tuple[int, list[str]]]:
    """Each `orch ...` command of the README's code blocks as the shell would split it, with its
    line; a command chained with && counts on its own; skipped: a line marked as needing a GPU
    or a cluster."""
    commands = []
    for number, line in code_lines(text):
        if any(mark in line for mark in SKIPPED):
            continue
        for part in line.split("&&"):
            if not part.strip().startswith("orch "):  # output, or another program's command
                continue
            words = shlex.split(part, comments=True)
            commands.append((number, words[1:]))
    return commands


def parse(args: list[str]) -> None:
    """Parse `orch ARGS` down to its command as the CLI would, without running it."""
    context = cli.make_context("orch", list(args))
    command: click.Command = cli
    while isinstance(command, click.Group) and (rest := _unparsed(context)):
        name, command, rest = command.resolve_command(context, rest)
        context = command.make_context(name, rest, parent=context)


def _unparsed(context: click.Context) -> list[str]:
    """What a group left for its subcommand: its name, then its arguments (Click 8 keeps the name
    apart, in `protected_args`, deprecated for Click 9, where `args` holds both)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [*context.protected_args, *context.args]


def written_files(commands: list[tuple[int, list[str]]]) -> set[str]:
    """The files an earlier README command writes (`--write`), which a later one reads."""
    return {args[i + 1] for _, args in commands for i, word in enumerate(args[:-1]) if word == "--write"}


README = (ROOT / "README.md").read_text()
COMMANDS = readme_commands(README)


def test_the_readme_shows_commands():
    assert len(COMMANDS) >= 8


@pytest.mark.parametrize(("line", "args"), COMMANDS, ids=[f"README.md:{n}" for n, _ in COMMANDS])
def test_each_readme_command_parses(line, args, tmp_path, monkeypatch):
    (tmp_path / "sweeps").symlink_to(ROOT / "sweeps")
    for name in written_files(COMMANDS):
        (tmp_path / name).write_text("name: stand-in\n")
    monkeypatch.chdir(tmp_path)
    try:
        parse(args)
    except click.exceptions.Exit as done:  # --help, --version
        assert done.exit_code == 0
    except click.ClickException as error:
        pytest.fail(f"README.md:{line}: orch {shlex.join(args)}: {error.format_message()}")


def test_ci_runs_the_readme_test_command():
    tests = next(line for _, line in code_lines(README) if "pytest" in line)
    command = tests.split("&&")[-1].strip()
    assert command == "python -m pytest -q" and command in (ROOT / ".ci" / "run").read_text()


def test_a_renamed_flag_fails_the_parse():
    with pytest.raises(click.NoSuchOption):
        parse(["status", "--watch", "--refit-interval", "60"])
