"""``handle``: one tool call, parsed, decided and rendered, in one pure call."""

from __future__ import annotations

from returns.pipeline import is_successful
from returns.result import Failure

from tickler.core._commands import parse_tool_call
from tickler.core._decide import decide
from tickler.core._errors import INTERNAL_ERROR
from tickler.core._model import ScheduleChange
from tickler.core._profile import DEFAULT_PROFILE, Profile
from tickler.core._render import error_json, render
from tickler.core._state import State


def handle(
    state: State, tool_name: str, args: object, now: int, *, profile: Profile = DEFAULT_PROFILE
) -> tuple[tuple[ScheduleChange, ...], str]:
    """The changes to append and the exact tool output text. Never raises on
    any tool input: a malformed call answers one of the ten closed codes.
    ``profile`` picks the contract (``reference``: exactly v1)."""
    parsed = parse_tool_call(tool_name, args, profile=profile)
    if not is_successful(parsed):
        return (), render(Failure(parsed.failure()))
    try:
        changes, result = decide(state, parsed.unwrap(), now, profile=profile)
        return changes, render(result)
    except Exception:  # noqa: BLE001 - the reference's contract: any fault is internal_error
        return (), error_json(INTERNAL_ERROR)
