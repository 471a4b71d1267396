"""No command prints a DSN's password: every command that takes a DSN is
run (as a user runs it, a subprocess) on DSNs holding a planted password
that are malformed in several ways, and neither its stdout nor its
stderr holds the password or a piece of it. Each answer is one line,
exit 2 for a DSN that does not parse, 1 for a database that cannot be
reached or used, never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

TICKLER = [sys.executable, "-m", "tickler"]
SECRET = "S3CRETpw"


@dataclass(frozen=True)
class Dsn:
    why: str
    dsn: str
    exit_code: int  # 2: does not parse (a usage error); 1: cannot be used


def _dsns(closed_port: int) -> list[Dsn]:
    return [
        # libpq quotes a URI it cannot parse whole, password included.
        Dsn("bad bracket host", f"postgresql://ops:{SECRET}@[::1", 2),
        Dsn("bad port", f"postgresql://ops:{SECRET}@127.0.0.1:99999/test", 1),
        Dsn("unknown option", f"host=127.0.0.1 password={SECRET} bogus=1", 2),
        Dsn("unreachable host", f"postgresql://ops:{SECRET}@127.0.0.1:{closed_port}/test", 1),
        # ... and the token it cannot decode, which is the password here.
        Dsn("bad percent escape", f"postgresql://ops:{SECRET}%zz@127.0.0.1/test", 2),
        # A / in the password: libpq reads the user as the host and the
        # password's first piece as the port, and says so.
        Dsn("slash in the password", f"postgresql://localhost:{SECRET}/x@127.0.0.1/test", 1),
    ]


def _commands(dsn: str) -> dict[str, list[str]]:
    return {
        "check": ["check", dsn],
        "check --json": ["check", "--json", dsn],
        "inspect": ["inspect", dsn],
        "inspect --json": ["inspect", "--json", dsn],
        "inspect --why": ["inspect", "--why", "schedule-1", dsn],
        "reminders": ["reminders", dsn],
        "reminders --json": ["reminders", "--json", dsn],
        "db migrate": ["db", "migrate", "--dsn", dsn],
        "ui": ["ui", "--dsn", dsn, "--port", "0"],
        "worker": ["worker", "--dsn", dsn, "--deliver", "true"],
        "worker (TICKLER_DSN)": ["worker", "--deliver", "true"],
    }


@pytest.fixture(scope="module")
def closed_port() -> Iterator[int]:
    """A port bound but never listening: a connection to it is refused."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield bound.getsockname()[1]


def _run(name: str, args: list[str], dsn: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TICKLER_DSN": dsn} if "TICKLER_DSN" in name else None
    return subprocess.run(
        [*TICKLER, *args], capture_output=True, text=True, timeout=120, check=False, env=env
    )


@pytest.mark.parametrize("command", list(_commands("DSN")))
def test_no_command_prints_the_password(command: str, closed_port: int) -> None:
    cases = _dsns(closed_port)
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(lambda c: _run(command, _commands(c.dsn)[command], c.dsn), cases))
    for case, result in zip(cases, done, strict=True):
        shown = f"{command} on a DSN with a {case.why}: {result.stdout!r} {result.stderr!r}"
        assert SECRET not in result.stdout + result.stderr, shown
        assert SECRET[:4] not in result.stdout + result.stderr, shown  # nor a piece of it
        assert result.stdout == "", shown
        lines = result.stderr.splitlines()
        assert len(lines) == 1, shown
        assert lines[0].startswith("tickler: error: "), shown
        assert "Traceback" not in result.stderr, shown
        assert result.returncode == case.exit_code, shown


LOGGING_PROGRAM = """
import logging, sys
import click
from tickler.adapters.cli._options import configure_logging

@click.command()
@click.option("--dsn")
def command(dsn):
    configure_logging("INFO", sys.argv[1])
    logging.getLogger("psycopg.pool").warning("error connecting: %s", repr(dsn))
    try:
        raise ValueError(f"in URI: {dsn}")
    except ValueError:
        logging.getLogger("tickler").exception("the DSN failed")

command.main(["--dsn", sys.argv[2]], standalone_mode=False)
"""


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_the_log_never_holds_the_password(log_format: str) -> None:
    dsn = f"postgresql://ops:{SECRET}@[::1"
    done = subprocess.run(
        [sys.executable, "-c", LOGGING_PROGRAM, log_format, dsn],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "error connecting" in done.stderr
    assert "ValueError: in URI: postgresql://ops:***@[::1" in done.stderr  # the traceback too
    assert SECRET not in done.stderr
