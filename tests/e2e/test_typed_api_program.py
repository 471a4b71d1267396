"""The typed API is typed: ``examples/typed_api.py`` passes ``mypy
--strict`` under the project's own configuration, and a program that
misuses the API (an ``int`` for a ``timedelta``, a string for an instant, a
write to a frozen ``Reminder``, a method its host does not have) fails it
at each misuse. The example itself runs offline (tests/e2e/test_examples.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import tickler

ROOT = Path(tickler.__file__).resolve().parent
EXAMPLE = ROOT / "examples" / "typed_api.py"

MISUSE = """\
from datetime import timedelta

from tickler import MemoryStore, ReferenceHost, Session, TurnInput, open_session


async def misuse() -> None:
    async def turn(item: TurnInput) -> str:
        return "ok"

    def host(session: Session) -> ReferenceHost:
        return ReferenceHost(session.log, turn, session.clock)

    async with open_session(MemoryStore(), "s", host=host) as session:
        await session.schedule("x", after=300)
        await session.schedule("x", at="2031-03-07T08:00:00Z")
        reminder = await session.schedule("x", every=timedelta(hours=1))
        reminder.prompt = "changed"
        await session.host.no_such_method()
        await session.cancel(7)
"""
# The line of each misuse and what mypy says there.
EXPECTED = {
    14: 'Argument "after" to "schedule" of "Session" has incompatible type "int"',
    15: 'Argument "at" to "schedule" of "Session" has incompatible type "str"',
    17: 'Property "prompt" defined in "Reminder" is read-only',
    18: '"ReferenceHost" has no attribute "no_such_method"',
    19: 'Argument 1 to "cancel" of "Session" has incompatible type "int"',
}


def test_the_example_passes_mypy_strict_and_a_misuse_fails_it(tmp_path: Path) -> None:
    misuse = tmp_path / "misuse.py"
    misuse.write_text(MISUSE)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            str(EXAMPLE),
            str(misuse),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert [line for line in errors if "typed_api.py" in line] == [], done.stdout
    found: dict[int, str] = {}
    for error in errors:
        match = re.match(r".*misuse\.py:(\d+): error: (.*)", error)
        assert match is not None, error
        found[int(match.group(1))] = match.group(2)
    assert sorted(found) == sorted(EXPECTED), done.stdout
    for number, message in EXPECTED.items():
        assert found[number].startswith(message), (number, found[number])
    assert done.returncode == 1
