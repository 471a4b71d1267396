"""Tool profiles on every framework surface: ``reference`` shows the exact
v1 catalog (the checked-in ``specs/tool-catalog.json``, byte for byte),
``extended`` (the default) shows the extended catalog; a surface follows
the profile of the session whose tools it wraps, and refuses another."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from returns.result import Result

import tickler
from tickler.adapters.frameworks._tools import schedule_tools, tools_profile
from tickler.adapters.langchain import langchain_tools
from tickler.adapters.mcp._server import create_server
from tickler.adapters.openai_agents import openai_agents_tools
from tickler.adapters.pydantic_ai import schedule_toolset
from tickler.adapters.stores._memory import MemoryStore
from tickler.core import Profile, ScheduleError, ToolCommand, ToolOutcome, tool_catalog
from tickler.shell._clock import VirtualClock
from tickler.shell._session import SessionTools, open_session
from tickler.shell._timers import TimerHeap

ROOT = Path(tickler.__file__).resolve().parent
NOW = 1_785_931_200_000  # 2026-08-05T12:00:00Z


def _triples(entries: list[dict[str, Any]]) -> list[tuple[str, str, object]]:
    return [(e["name"], e["description"], e["input_schema"]) for e in entries]


def _reference_file() -> list[dict[str, Any]]:
    catalog: list[dict[str, Any]] = json.loads((ROOT / "specs" / "tool-catalog.json").read_text())
    return catalog


async def _refuse(command: ToolCommand) -> Result[ToolOutcome, ScheduleError]:
    raise AssertionError(f"no call is made, yet {command!r} came")


def _tools(profile: Profile) -> SessionTools:
    return SessionTools(_refuse, profile=profile)


def test_the_reference_catalog_is_the_v1_file_byte_for_byte() -> None:
    text = json.dumps(tool_catalog(profile="reference"), indent=2, ensure_ascii=False) + "\n"
    assert text == (ROOT / "specs" / "tool-catalog.json").read_text()
    assert [e["name"] for e in _reference_file()] == [
        "schedule_create",
        "schedule_list",
        "schedule_delete",
    ]


@pytest.mark.parametrize("profile", ["reference", "extended"])
def test_every_framework_shows_its_sessions_profile(profile: Profile) -> None:
    expected = _triples(
        _reference_file() if profile == "reference" else tool_catalog(profile="extended")
    )
    tools = _tools(profile)
    table = schedule_tools(tools)
    assert [(t.name, t.description, t.input_schema) for t in table] == expected
    assert [(t.name, t.description, t.args_schema) for t in langchain_tools(tools)] == expected
    # (strict mode closes the schemas the SDK is given: only names and texts)
    assert [(t.name, t.description) for t in openai_agents_tools(tools)] == [
        (name, text) for name, text, _ in expected
    ]
    offered = schedule_toolset(tools).tools
    assert [name for name, _ in offered.items()] == [name for name, _, _ in expected]


def test_a_surface_refuses_a_profile_its_session_does_not_speak() -> None:
    tools = _tools("reference")
    assert tools_profile(tools) == "reference"
    assert tools_profile(tools, "reference") == "reference"
    with pytest.raises(ValueError, match="speak the 'reference' profile, not 'extended'"):
        schedule_tools(tools, profile="extended")
    with pytest.raises(ValueError, match="speak the 'reference' profile"):
        langchain_tools(tools, profile="extended")
    with pytest.raises(ValueError, match="profile must be 'reference' or 'extended'"):
        tools_profile(tools, "v1")

    class Plain:  # a caller that says nothing of its profile: the default
        async def call_tool(self, name: str, args: object) -> str:
            return "[]"

    assert tools_profile(Plain()) == "extended"
    assert tools_profile(Plain(), "reference") == "reference"


@pytest.mark.parametrize("profile", ["reference", "extended"])
def test_the_mcp_server_lists_its_sessions_profile(profile: Profile) -> None:
    expected = _triples(
        _reference_file() if profile == "reference" else tool_catalog(profile="extended")
    )

    async def scenario() -> list[tuple[str, str, object]]:
        clock = VirtualClock(NOW)
        store = MemoryStore()
        timers = TimerHeap(clock)
        try:
            async with (
                open_session(
                    store,
                    "s",
                    host=lambda _s: _Quiet(),
                    clock=clock,
                    timers=timers,
                    profile=profile,
                ) as session,
                Client(create_server(session.tools)) as client,
            ):
                listed = (await client.list_tools()).tools
                return [(t.name, t.description or "", t.input_schema) for t in listed]
        finally:
            await timers.close()
            await store.close()

    assert asyncio.run(scenario()) == expected


class _Quiet:
    def claim_idle(self) -> None:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()

    async def followup(self, message: object) -> None:
        raise AssertionError("nothing falls due")


def test_the_commands_take_a_profile_and_refuse_an_unknown_one(tmp_path: Path) -> None:
    for command in ("mcp", "chat", "worker"):
        helped = subprocess.run(
            [sys.executable, "-m", "tickler", command, "--help"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "--profile [reference|extended]" in helped, command
    bad = subprocess.run(
        [sys.executable, "-m", "tickler", "chat", "--store", str(tmp_path), "--profile", "v1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert "'v1' is not one of 'reference', 'extended'" in bad.stderr


def test_chat_in_the_reference_profile_keeps_to_v1(tmp_path: Path) -> None:
    """A calendar phrase gets the v1 tools' refusal, and the log holds no
    event of a later version."""
    done = subprocess.run(
        [sys.executable, "-m", "tickler", "chat", "--store", str(tmp_path), "--profile",
         "reference"],
        input="every weekday at 9 to write notes\n",
        env={"TZ": "UTC", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        "assistant> Sorry, that did not work: schedule_create accepts exactly one of "
        "after_seconds, at, or every_seconds."
    ) in done.stdout
    assert '"version":2' not in (tmp_path / "chat.jsonl").read_text()
