"""Without the ``mcp`` extra, the MCP server module still imports (the CLI
imports it), and using it fails with one clear ImportError naming the extra
(simulated by blocking the imports through ``sys.modules``)."""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path

import pytest

from tickler.adapters.cli import cli
from tickler.adapters.cli._errors import run

MESSAGE = "tickler's MCP server adapter needs the extra: pip install 'tickler-agents[mcp]'"


def test_the_server_names_the_extra_when_mcp_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # "not installed"
    monkeypatch.delitem(sys.modules, "tickler.adapters.mcp._server", raising=False)
    monkeypatch.delitem(sys.modules, "tickler.adapters.cli._mcp", raising=False)
    server = importlib.import_module("tickler.adapters.cli._mcp")
    with pytest.raises(ImportError) as raised:
        server.run_mcp(str(tmp_path / "store"), "s", "true", None)
    assert str(raised.value) == MESSAGE
    assert not (tmp_path / "store").exists()

    argv = ["--store", str(tmp_path / "store"), "--session", "s", "--deliver-cmd", "true"]
    with caplog.at_level(logging.ERROR, logger="tickler.mcp"):
        assert run(cli, ["mcp", *argv]) == 1
    assert [r.getMessage() for r in caplog.records] == [MESSAGE]


def test_url_delivery_names_the_extra_when_httpx_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tickler.adapters.delivery._hosts import DeliverUrl

    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(ImportError) as raised:
        DeliverUrl("http://127.0.0.1:9/hook", session="s")
    assert str(raised.value) == (
        "tickler's URL delivery adapter needs the extra: pip install 'tickler-agents[mcp]'"
    )
