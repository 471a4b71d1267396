"""The shared tool table: catalog entries bound to a runtime, handlers that
pass arguments through untouched and answer the runtime's text; argument
decoding for frameworks that hand over JSON text; no framework imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tickler.adapters.frameworks._tools import decode_arguments, schedule_tools
from tickler.core import tool_catalog

from .framework_support import async_test

FRAMEWORKS = ("pydantic_ai", "agents", "langchain_core", "openai", "pydantic")


class RecordingRuntime:
    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    async def call_tool(self, name: str, args: object) -> str:
        self.calls.append((name, args))
        return f"answer {len(self.calls)}"


def test_the_table_is_the_catalog() -> None:
    tools = schedule_tools(RecordingRuntime())
    assert [
        {
            "name": t.name,
            "description": t.description,
            "input_schema": t.input_schema,
            "output_schema": t.output_schema,
        }
        for t in tools
    ] == tool_catalog()


@async_test
async def test_handlers_pass_arguments_through_and_answer_the_runtime_text() -> None:
    runtime = RecordingRuntime()
    create, listing, delete, update = schedule_tools(runtime)
    odd: object = {"prompt": " x ", "after_seconds": 30.0, "bogus": None}
    assert await create.handler(odd) == "answer 1"
    assert await listing.handler(None) == "answer 2"
    assert await delete.handler("not an object") == "answer 3"
    assert await update.handler({"id": 5}) == "answer 4"
    assert runtime.calls == [
        ("schedule_create", odd),
        ("schedule_list", None),
        ("schedule_delete", "not an object"),
        ("schedule_update", {"id": 5}),
    ]
    assert runtime.calls[0][1] is odd


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", None),
        ("  \n", None),
        ('{"prompt":"x","after_seconds":10}', {"prompt": "x", "after_seconds": 10}),
        ('{"after_seconds":30.0}', {"after_seconds": 30.0}),
        ("[1, 2]", [1, 2]),
        ("not json", "not json"),
        ('{"prompt": "x"', '{"prompt": "x"'),
    ],
)
def test_decode_arguments(text: str, expected: object) -> None:
    assert decode_arguments(text) == expected


def test_importing_tickler_and_the_tool_table_imports_no_framework() -> None:
    probe = (
        "import sys, tickler, tickler.adapters, tickler.adapters.frameworks._tools\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(FRAMEWORKS)!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
