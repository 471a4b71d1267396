"""``tickler demo``: the main job, offline, in well under a minute.

A session in a temporary JSONL store (the default store). An agent process
takes a chat's messages: the user says their name; the offline model
creates "every weekday at 9:00 Europe/Berlin" (a calendar reminder) and a
one-shot due in a few seconds through the real tools. Then the agent
process is killed with SIGKILL, as a chat agent's process goes away after
its reply: the session is cold, nothing holds it. ``tickler worker
--store`` wakes it when the one-shot falls due and runs the reminder turn
with the session's agent (a host factory, :func:`demo_host`), which reads
the conversation back from the log and answers with the user's name. Then
the log is inspected and checked: nothing lost, nothing repeated.
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeAlias
from zoneinfo import ZoneInfo

import click
from rich.console import Console

from tickler.adapters._times import local_zone
from tickler.adapters.cli._check import check_file
from tickler.adapters.cli._errors import CliError
from tickler.adapters.cli._inspect import inspect_session
from tickler.adapters.cli._output import console, print_json, print_report
from tickler.adapters.cli._session import live_session, open_store
from tickler.adapters.offline._model import OfflineModel, earlier_turns
from tickler.core import ParsedSession, parse_session_jsonl
from tickler.shell import TURN, TURN_INPUT, Model, ReferenceHost, Session, SessionTools, TurnInput

SESSION = "demo"
ZONE = "Europe/Berlin"
NAME = "Ada"
AFTER_S = 6
MARK = "@@"
Say: TypeAlias = Callable[[str], None]


def _say(text: str) -> None:
    print(text, flush=True)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _model_for(tools: SessionTools, history: Sequence[tuple[TurnInput, str]] = ()) -> Model:
    def on_tool(name: str, args: dict[str, Any], output: str) -> None:
        _say(f"    tool {name} {json.dumps(args, ensure_ascii=False)}")
        _say(f"      -> {output}")

    offline = OfflineModel(
        tools.call_tool, _now_ms, on_tool=on_tool, zone=local_zone(), history=history
    )

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


async def _agent(store_dir: str, messages: list[str]) -> None:
    """The agent process: it takes the chat's messages, then waits to be
    killed (its reminders still pending)."""
    store = open_store(store_dir)
    async with live_session(store, SESSION, _model_for) as live:
        for text in messages:
            await live.host.send(text)
            await live.host.when_idle()
        _say(f"{MARK}created")
        await asyncio.Event().wait()  # until killed


def run_agent(store_dir: str, messages: list[str]) -> None:
    asyncio.run(_agent(store_dir, messages))


def demo_host(session: Session) -> ReferenceHost:
    """The session's agent, as the worker builds it (``tickler worker
    --deliver tickler.adapters.cli._demo:demo_host``): the offline model,
    given the conversation so far from the session's log."""

    def on_reply(turn: TurnInput, reply: str) -> None:
        # Called once the turn and its reply are durable in the log.
        if turn.source == "reminder":
            _say(f"{MARK}delivered {turn.key}")

    model = _model_for(session.tools, earlier_turns(session.log))
    return ReferenceHost(session.log, model, session.clock, on_reply=on_reply)


def _spawn(args: list[str]) -> subprocess.Popen[str]:
    """This CLI in a new process: its stdout (and log lines) read line by line."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # Our own interpreter and module, with the demo's own arguments.
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "tickler.adapters.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        bufsize=1,
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
        messages = [
            f"My name is {NAME}.",
            f"every weekday at 9:00 {ZONE} to write the standup notes",
            f"remind me in {AFTER_S} seconds to stretch",
        ]
        say(f"tickler demo: session {SESSION!r} in a JSONL store at {store_dir}\n")
        say(
            "1) An agent process takes a chat's messages: the user says their name, and "
            "the model creates two reminders with the tools:"
        )
        first = _spawn(["_demo-agent", store_dir, *messages])
        ok = _stream_until(first, "created", time.monotonic() + 60, say)
        first.send_signal(signal.SIGKILL)
        first.wait()
        if not ok:
            raise click.ClickException("the agent did not create its reminders in time")
        say(
            f"\n2) kill -9 of the agent process (pid {first.pid}), as a chat agent's process "
            "goes away after its reply: nothing holds the session now (it is cold), and "
            f"its stretch reminder falls due within {AFTER_S} seconds."
        )
        say(
            "\n3) tickler worker --store wakes the cold session when the reminder falls due; "
            "the reminder turn runs with the conversation, read back from the log:"
        )
        worker = _spawn(
            [
                *("worker", "--store", store_dir, "--deliver", f"{__name__}:demo_host"),
                *("--poll", "0.5", "--log-level", "WARNING"),
            ]
        )
        ok = _stream_until(worker, "delivered", time.monotonic() + 60, say)
        worker.send_signal(signal.SIGTERM)
        _stream_until(worker, "never", time.monotonic() + 30, say)
        worker.wait(timeout=30)
        if not ok:
            raise click.ClickException("the worker did not deliver the reminder in time")
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
    replies = [
        json.loads(bytes(e.data))["reply"]
        for e in parsed.events
        if e.type == TURN and json.loads(bytes(e.data))["input"] in reminder_inputs(parsed)
    ]
    remembered = bool(replies) and all(NAME in reply for reply in replies)
    say(
        "   the reminder turn knew the conversation: "
        + (f"it greeted {NAME} by name." if remembered else "NO, it did not know the name.")
    )
    weekly = list(inspect_session(parsed, 0, ZoneInfo("UTC")).active)
    if weekly:
        say(
            f"   the weekday reminder stays active; next occurrence {weekly[0]['scheduledAt']} "
            "(a worker running then delivers it, whether or not an agent process holds the "
            "session)."
        )
    ok = not repeated and verdict.status == 0 and len(keys) == 1 and remembered
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


def reminder_inputs(parsed: ParsedSession) -> set[int]:
    """The numbers of the turn inputs that are reminders."""
    found = set()
    for event in parsed.events:
        if event.type == TURN_INPUT:
            item = json.loads(bytes(event.data))
            if item.get("source") == "reminder":
                found.add(item["n"])
    return found
