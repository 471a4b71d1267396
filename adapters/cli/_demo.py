"""``tickler demo``: the main job, offline, in well under a minute.

A session in a temporary JSONL store; the offline model creates an
``after``, an ``at`` (local time + IANA zone) and an ``every`` reminder
through the real tools; the runtime delivers them as follow-up turns on the
real clock; the agent process is killed with SIGKILL mid-way and restarted,
and nothing is lost or repeated; then the log is inspected and checked.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeAlias
from zoneinfo import ZoneInfo

import click
from rich.console import Console

from tickler.adapters._offline_model import OfflineModel
from tickler.adapters._times import local_zone
from tickler.adapters.cli._check import check_file
from tickler.adapters.cli._errors import CliError
from tickler.adapters.cli._inspect import inspect_session
from tickler.adapters.cli._output import console, print_json, print_report
from tickler.adapters.cli._session import live_session, open_store
from tickler.core import parse_session_jsonl
from tickler.shell._reference_host import TURN_INPUT, Model, TurnInput
from tickler.shell._runtime import ScheduleRuntime

SESSION = "demo"
ZONE = "Europe/Berlin"
AFTER_S = 3
AT_IN_S = 9
MARK = "@@"
Say: TypeAlias = Callable[[str], None]


def _say(text: str) -> None:
    print(text, flush=True)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _model_for(runtime: ScheduleRuntime) -> Model:
    def on_tool(name: str, args: dict[str, Any], output: str) -> None:
        _say(f"    tool {name} {json.dumps(args, ensure_ascii=False)}")
        _say(f"      -> {output}")

    offline = OfflineModel(runtime.call_tool, _now_ms, on_tool=on_tool, zone=local_zone())

    async def model(turn: TurnInput) -> str:
        if turn.source == "reminder":
            _say(f"  [turn {turn.n}] a reminder arrives as a follow-up turn:")
            for line in turn.text.splitlines():
                _say(f"      | {line}")
        else:
            _say(f"  [turn {turn.n}] user: {turn.text}")
        reply = await offline(turn)
        _say(f"  [turn {turn.n}] assistant: " + reply.replace("\n", "\n      "))
        return reply

    return model


async def _agent(store_dir: str, phase: str, messages: list[str]) -> None:
    """One agent process: the first one is killed; the second finishes."""
    store = open_store(store_dir)

    def on_reply(turn: TurnInput, reply: str) -> None:
        # Called once the turn and its reply are durable in the log.
        if turn.source == "reminder":
            _say(f"{MARK}delivered {turn.key}")

    async with live_session(store, SESSION, _model_for, on_reply=on_reply) as live:
        if phase == "first":
            for text in messages:
                await live.host.send(text)
                await live.host.when_idle()
            _say(f"{MARK}created")
            await asyncio.Event().wait()  # until killed
        else:
            state = live.runtime.state
            _say(f"  restarted: {len(state.entries)} reminders active, replayed from the log")
            while any(r.kind == "at" for r in live.runtime.state.active):  # noqa: ASYNC110
                await asyncio.sleep(0.1)  # a demo polls the state it shows
            await live.host.when_idle()
            await live.host.send("list")
            await live.host.when_idle()
    await store.close()


def run_agent(store_dir: str, phase: str, messages: list[str]) -> None:
    asyncio.run(_agent(store_dir, phase, messages))


def _spawn(store_dir: str, phase: str, messages: list[str]) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "tickler.adapters.cli", "_demo-agent", store_dir, phase]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # Our own interpreter and module, with the demo's own arguments.
    return subprocess.Popen(  # noqa: S603
        [*args, *messages], stdout=subprocess.PIPE, text=True, env=env, bufsize=1
    )


def _stream_until(child: subprocess.Popen[str], marker: str, deadline: float, say: Say) -> bool:
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith(MARK):
            if line[len(MARK) :].startswith(marker):
                return True
            continue
        say(line.rstrip("\n"))
        if time.monotonic() > deadline:
            break
    return False


def _at_message(now: datetime) -> str:
    local = (now + timedelta(seconds=AT_IN_S)).astimezone(ZoneInfo(ZONE))
    return f"remind me at {local:%H:%M:%S} {ZONE} on {local:%Y-%m-%d} to join the standup"


@contextmanager
def demo_store(store: str | None, *, keep: bool) -> Iterator[tuple[str, str | None]]:
    """The demo's store directory and, when it stays after the demo, the
    sentence that says where its session log is. ``store`` is used as it is
    (created if missing; refused when it already holds a demo session);
    without it a temporary directory is made, removed afterwards unless
    ``keep``."""
    if store is not None:
        directory = Path(store)
        if (directory / f"{SESSION}.jsonl").exists():
            raise CliError(f"{directory} already holds a demo session; choose another directory")
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"cannot use {directory} as the store: {exc.strerror or exc}") from None
        yield str(directory), _stays(directory)
    elif keep:
        directory = Path(tempfile.mkdtemp(prefix="tickler-demo-"))
        yield str(directory), _stays(directory)
    else:
        with tempfile.TemporaryDirectory(prefix="tickler-demo-") as scratch:
            yield scratch, None


def _stays(directory: Path) -> str:
    return f"the session log stays at {directory / f'{SESSION}.jsonl'}"


def run_demo(as_json: bool = False, store: str | None = None, keep: bool = False) -> int:
    """The story on stdout; with ``as_json`` the story goes to stderr and
    stdout gets one JSON document of the outcome. With ``store`` (a
    directory) or ``keep`` the session log stays for ``tickler inspect``
    and ``tickler check``."""
    stream = sys.stderr if as_json else sys.stdout
    out = console(stderr=as_json)

    def say(text: str) -> None:
        print(text, file=stream, flush=True)

    with demo_store(store, keep=keep) as (store_dir, kept):
        now = datetime.now(UTC)
        messages = [
            f"remind me in {AFTER_S} seconds to stretch",
            _at_message(now),
            "every 5 minutes drink water",
        ]
        say(f"tickler demo: session {SESSION!r} in a JSONL store at {store_dir}\n")
        say("1) An agent process starts; the model creates three reminders with the tools:")
        first = _spawn(store_dir, "first", messages)
        deadline = time.monotonic() + 30
        ok = _stream_until(first, "delivered", deadline, say)
        first.send_signal(signal.SIGKILL)
        first.wait()
        if not ok:
            raise click.ClickException("the first reminder was not delivered in time")
        say(f"\n2) kill -9 of the agent process (pid {first.pid}) with reminders still pending.")
        say("\n3) A new process opens the same session; the runtime resumes from the log:")
        second = _spawn(store_dir, "second", [])
        _stream_until(second, "never", time.monotonic() + 40, say)
        second.wait(timeout=30)
        path = Path(store_dir) / f"{SESSION}.jsonl"
        status = _epilogue(path, out, say, as_json, kept=kept is not None)
        if kept is not None:
            say(f"\n{kept}.")
        _next_steps(path if kept is not None else None, say)
        return status


def cli_command() -> str:
    """This CLI as a shell runs it from any folder: the full path of the
    ``tickler`` script that is running (``.venv/bin/tickler`` after ``make
    install``: it is on PATH only in an activated virtual environment), or
    this interpreter with ``-m`` when it runs as a module."""
    script = Path(sys.argv[0])
    if script.name == "tickler" and script.is_file():
        return shlex.quote(str(script.absolute()))
    return f"{shlex.quote(sys.executable)} -m tickler.adapters.cli"


def _next_steps(log: Path | None, say: Say) -> None:
    """What to run next, each command exactly as a shell takes it."""
    cli = cli_command()
    steps: list[tuple[str, str]] = []
    if log is None:
        steps.append(("run it again and keep the session log", f"{cli} demo --keep"))
    else:
        where = shlex.quote(str(log))
        steps.append(("the session log again, times in your zone", f"{cli} inspect {where}"))
        steps.append(("check it as the invariant checker does", f"{cli} check {where}"))
    steps.append(("chat with the offline model (type exit to leave)", f"{cli} chat"))
    say("\nNext, try (each command runs as shown, from any folder):")
    for what, command in steps:
        say(f"  {what}:\n    $ {command}")


def _epilogue(path: Path, out: Console, say: Say, as_json: bool, *, kept: bool) -> int:
    say("\n4) tickler inspect of the session log:")
    parsed = parse_session_jsonl(path.read_bytes())
    report = inspect_session(parsed, time.time_ns() // 1_000_000, ZoneInfo(ZONE))
    print_report(report, out)
    keys = Counter(
        json.loads(bytes(e.data))["key"]
        for e in parsed.events
        if e.type == TURN_INPUT and b'"key"' in bytes(e.data)
    )
    repeated = sorted(key for key, n in keys.items() if n > 1)
    verdict = check_file(str(path))
    say(f"\n5) tickler check: {verdict.as_text()}")
    say(
        f"   reminder turns: {sum(keys.values())} for {len(keys)} occurrences; "
        + ("nothing repeated, nothing lost." if not repeated else f"REPEATED: {repeated}")
    )
    every = [r for r in inspect_session(parsed, 0, ZoneInfo("UTC")).active if r["kind"] == "every"]
    if every:
        say(
            "   the every-5-minutes reminder stays active; next occurrence "
            f"{every[0]['scheduledAt']} (the floor is 300 s, so the demo does not wait for it)."
        )
    ok = not repeated and verdict.status == 0 and len(keys) >= 2
    if as_json:
        print_json(
            {
                "ok": ok,
                "sessionLog": str(path) if kept else None,  # None: removed with its store
                "reminderTurns": sum(keys.values()),
                "occurrences": sorted(keys),
                "repeated": repeated,
                "check": verdict.as_json(),
                "session": report.as_json(),
            }
        )
    return 0 if ok else 1
