"""The two MCP entry points, ``tickler mcp`` and ``python -m
tickler.adapters.mcp._server``, are one command: the same options (with
``--log-level``), the same one-line usage errors with exit status 2, and a
delivery program that does not exist is refused at start, before anything is
created.

The servers here get an empty stdin, so they stop as soon as they started.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from tickler.adapters.cli import cli
from tickler.adapters.cli._errors import run
from tickler.core import tool_catalog

ENTRY_POINTS = {
    "tickler mcp": [sys.executable, "-m", "tickler.adapters.cli", "mcp"],
    "python -m": [sys.executable, "-m", "tickler", "mcp"],
}
BOUND_S = 120  # a hung server fails the test instead of blocking it


def serve(entry: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ENTRY_POINTS[entry], *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BOUND_S,
        check=False,
    )


def options(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", help_text))


def test_tickler_mcp_takes_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(cli, ["mcp", "--help"]) == 0
    via_cli = capsys.readouterr().out
    expected = {
        "--store",
        "--session",
        "--deliver-cmd",
        "--deliver-url",
        "--deliver-timeout",
        "--profile",
        "--log-level",
        "--log-format",
        "--help",
    }
    assert options(via_cli) == expected


EXAMPLE: Final = Path(__file__).resolve().parents[2] / "examples" / "mcp_server.md"


def test_the_help_and_the_example_say_which_tools_each_profile_serves(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 25, item 8: they said "three tools" while the default profile
    serves four."""
    extended = [tool["name"] for tool in tool_catalog(profile="extended")]
    reference = [tool["name"] for tool in tool_catalog(profile="reference")]
    assert (len(extended), len(reference)) == (4, 3)
    assert run(cli, ["--help"]) == 0
    summary = capsys.readouterr().out
    assert re.search(r"\n  mcp +Serve the four schedule tools over MCP", summary), summary
    assert run(cli, ["mcp", "--help"]) == 0
    detail = " ".join(capsys.readouterr().out.split())
    example = " ".join(EXAMPLE.read_text().split())
    for text in (detail, example):
        assert "three tools" not in text
        assert all(name in text for name in extended), text
    assert "Serve the four schedule tools" in detail
    assert "The extended profile (the default) serves" in detail
    assert "--profile reference serves the first three" in detail
    assert "The client's model gets four tools" in example


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_the_log_level_is_an_option_of_both(entry: str, tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    target = ("--store", store, "--session", "s", "--deliver-cmd", "true")
    quiet = serve(entry, *target, "--log-level", "WARNING")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    chatty = serve(entry, *target, "--log-level", "debug")
    assert chatty.returncode == 0, chatty.stderr
    assert "serving session s" in chatty.stderr
    assert "session s closed" in chatty.stderr


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("no-such-tickler-program --flag", "delivery command not found: no-such-tickler-program"),
        # A shell line is not run by a shell: its first word is the program.
        ("notify-me >> inbox.log", "delivery command not found: notify-me"),
    ],
)
def test_a_missing_delivery_program_is_refused_at_start(
    entry: str, command: str, reason: str, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    done = serve(entry, "--store", str(store), "--session", "s", "--deliver-cmd", command)
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("tickler: error: ")
    assert reason in line
    assert "without a shell" in line
    assert not store.exists()


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["--store", "d", "--session", "../escape", "--deliver-cmd", "true"], "session id"),
        (["--store", "d", "--session", "s"], "exactly one delivery target"),
        (["--store", "d", "--session", "s", "--deliver-url", "file:///x"], "http(s) URL"),
        (["--session", "s", "--deliver-cmd", "true"], "--store"),
        (["--store", "d", "--session", "s", "--deliver-cmd", "true", "--log-level", "X"], "'X'"),
        (["--store", "d", "--session", "s", "--deliver-url", "http://h/", "--deliver-timeout",
          "0"], "timeout must be positive"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line_and_exit_2_before_anything_runs(
    argv: list[str], reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "store")
    args = [store if arg == "d" else arg for arg in argv]
    assert run(cli, ["mcp", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith("tickler: error: ")
    assert reason in line
    assert not (tmp_path / "store").exists()
