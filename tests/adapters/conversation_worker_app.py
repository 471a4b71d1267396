"""The app module a ``tickler worker --store`` of the conversation tests
imports (``--deliver conversation_worker_app:host``, run from this folder):
the framework host of CONVERSATION_FRAMEWORK with that framework's test
model (as ``conversation_child.py`` builds it), a host factory of one
parameter, as an app gives ``open_session``. Each reminder turn's reply and
what the model saw are appended to CONVERSATION_OUT as one JSON line."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tickler.shell._reference_host import ReferenceHost, TurnInput
from tickler.shell._session import Session

# Beside this module, imported as the worker imports this one (by its folder).
_child = importlib.import_module("conversation_child")
_seen: list[dict[str, Any]] = []
_make: Callable[[Session, Callable[[TurnInput, str], None]], ReferenceHost] = _child.HOSTS[
    os.environ["CONVERSATION_FRAMEWORK"]
](_seen)


def _note(turn: TurnInput, reply: str) -> None:
    if turn.source != "reminder":
        return
    line: dict[str, Any] = {"seen": _seen, "reply": reply}
    with Path(os.environ["CONVERSATION_OUT"]).open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def host(session: Session) -> ReferenceHost:
    return _make(session, _note)
