"""Each framework adapter without its extra installed fails with one clear
ImportError naming the extra to install (simulated by blocking the
framework's import through ``sys.modules``)."""

from __future__ import annotations

import importlib
import sys

import pytest


@pytest.mark.parametrize(
    ("adapter", "framework", "message"),
    [
        (
            "tickler.adapters.pydantic_ai",
            "pydantic_ai",
            "tickler's PydanticAI adapter needs the extra: "
            "pip install 'tickler-agents[pydantic-ai]'",
        ),
        (
            "tickler.adapters.openai_agents",
            "agents",
            "tickler's OpenAI Agents SDK adapter needs the extra: "
            "pip install 'tickler-agents[openai-agents]'",
        ),
        (
            "tickler.adapters.langchain",
            "langchain_core",
            "tickler's LangChain adapter needs the extra: pip install 'tickler-agents[langchain]'",
        ),
        (
            "tickler.adapters.stores._postgres",
            "psycopg",
            "tickler's PostgreSQL adapter needs the extra: pip install 'tickler-agents[postgres]'",
        ),
        (
            "tickler.adapters.dashboard._app",
            "starlette",
            "tickler's dashboard adapter needs the extra: pip install 'tickler-agents[ui]'",
        ),
        (
            "tickler.adapters.dashboard._app",
            "jinja2",
            "tickler's dashboard adapter needs the extra: pip install 'tickler-agents[ui]'",
        ),
    ],
)
def test_an_adapter_without_its_extra_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, adapter: str, framework: str, message: str
) -> None:
    # "Not installed": the framework and any of its modules already loaded.
    for name in [framework, *(m for m in sys.modules if m.startswith(f"{framework}."))]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, adapter, raising=False)
    with pytest.raises(ImportError) as raised:
        importlib.import_module(adapter)
    assert str(raised.value) == message
    assert isinstance(raised.value.__cause__, ImportError)
    assert adapter not in sys.modules
