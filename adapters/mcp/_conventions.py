"""How the schedule tools look to an MCP client, beyond the catalog: a title
and behaviour hints per tool, an output schema MCP accepts, and the
structured content and error flag of each answer.

Pure functions over the catalog and the runtime's text; the MCP server
(:mod:`tickler.adapters.mcp._server`) turns them into SDK types.

* ``outputSchema`` is the catalog's output schema (a ``oneOf`` over the
  success shapes and the ten closed error shapes) with an object root, as MCP
  requires up to protocol 2025-11-25: the one array-valued success, the list
  of ``schedule_list``, is wrapped as ``{"reminders": [...]}``.
* ``structuredContent`` is the answer's JSON value, the same value the text
  holds (so it validates against ``outputSchema``, error values included),
  wrapped the same way when it is an array. A prompt may hold a lone
  surrogate (a JavaScript string may); the text escapes it, as
  ``JSON.stringify`` does, and the structured copy keeps the same string.
  The SDK's serialiser cannot write such a string (it refuses to encode it
  as UTF-8), so :func:`message_json` writes a message holding one, with the
  same ``\\uXXXX`` escape as the text.
* A ``schedule_create`` prompt longer than :data:`MAX_PROMPT_LENGTH`
  characters is refused with ``invalid_prompt`` (:func:`prompt_too_long`):
  the answer to such a call carries the prompt twice, and the SDK writes
  it in one piece, so the server caps what one call can cost. The
  reference has no limit.
* ``isError`` is true exactly for the closed error values (``{"code",
  "message", ...}`` with one of the ten codes). ``schedule_delete``'s
  ``{"id", "deleted": false, "code": "schedule_not_found"}`` is an ordinary
  answer, as in the reference, so it is not flagged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from returns.pipeline import is_successful
from returns.result import Failure

from tickler.core import (
    CREATE,
    DEFAULT_PROFILE,
    DELETE,
    ERROR_CODES,
    LIST,
    UPDATE,
    JsonSchema,
    Profile,
    error,
    parse_tool_call,
    render,
)

__all__ = [
    "LIST_KEY",
    "MAX_PROMPT_LENGTH",
    "PROMPT_TOO_LONG",
    "TOOL_HINTS",
    "ToolHints",
    "message_json",
    "output_schema",
    "prompt_too_long",
    "structured_answer",
]

LIST_KEY: Final = "reminders"
"""The key an array-valued answer is wrapped under in structured content."""

MAX_PROMPT_LENGTH: Final = 100_000
"""The longest ``schedule_create`` prompt the MCP server takes, in
characters (code points); the reference has no limit. However a client
escapes it (at most 12 bytes a character), a prompt this long fits in a
message under the transport's 4 MiB line limit."""

PROMPT_TOO_LONG: Final = f"prompt must be at most {MAX_PROMPT_LENGTH} characters."
"""The ``invalid_prompt`` message for a longer one (ours, not the reference's)."""

_CLOSED_CODES: Final = frozenset(ERROR_CODES)
_CHECKED_BEFORE_LENGTH: Final = frozenset({"invalid_selector", "invalid_prompt"})
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class ToolHints:
    """A tool's title (the reference's call-card title) and MCP annotations.

    The tools touch only the session's own schedule, so none is open-world.
    A hint left ``None`` is not sent (it only means something for tools
    that are not read-only).
    """

    title: str
    read_only: bool
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool = False


TOOL_HINTS: Final[dict[str, ToolHints]] = {
    CREATE: ToolHints("Create reminder", read_only=False, destructive=False, idempotent=False),
    LIST: ToolHints("List reminders", read_only=True),
    # Deleting an id twice leaves the same schedule as deleting it once.
    DELETE: ToolHints("Delete reminder", read_only=False, destructive=True, idempotent=True),
    # The same change again leaves the reminder as it was after the first
    # (a snooze is relative to now, so not quite: not idempotent).
    UPDATE: ToolHints("Change reminder", read_only=False, destructive=False, idempotent=False),
}


def output_schema(catalog_schema: JsonSchema) -> JsonSchema:
    """The MCP ``outputSchema`` for a catalog output schema: an object root,
    array branches wrapped under :data:`LIST_KEY`."""
    branches = catalog_schema["oneOf"]
    return {"type": "object", "oneOf": [_object_branch(branch) for branch in branches]}


def _object_branch(branch: JsonSchema) -> JsonSchema:
    if branch.get("type") != "array":
        return branch
    return {
        "type": "object",
        "properties": {LIST_KEY: branch},
        "required": [LIST_KEY],
        "additionalProperties": False,
    }


def structured_answer(text: str) -> tuple[dict[str, Any], bool]:
    """``(structuredContent, isError)`` for a tool's exact output text."""
    value = json.loads(text)  # a lone surrogate's escape reads as that surrogate
    if isinstance(value, list):
        return {LIST_KEY: value}, False
    if not isinstance(value, dict):
        raise ValueError(f"a tool answered a JSON {type(value).__name__}, not an object or array")
    return value, value.get("code") in _CLOSED_CODES


def message_json(value: object) -> str:
    """Compact JSON of a message's JSON value (as ``model_dump(mode="json")``
    gives it) whose strings may hold lone surrogates: each is written as a
    lower-case ``\\uXXXX`` escape, as ``JSON.stringify`` writes it, so the
    result encodes as UTF-8 and reads back as the same strings; all other
    text is written as itself."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    # Outside a string JSON has only ASCII, so every surrogate is in one.
    return f"\\u{ord(match.group()):04x}"


def prompt_too_long(name: str, args: object, profile: Profile = DEFAULT_PROFILE) -> str | None:
    """The answer to a ``schedule_create`` (or ``schedule_update``) whose prompt is longer than
    :data:`MAX_PROMPT_LENGTH` characters: ``invalid_prompt`` with
    :data:`PROMPT_TOO_LONG`, unless a check the reference makes first
    (the selector set, an empty prompt) refuses the call (``None``: the
    runtime gives that answer). ``None`` for every other call."""
    if name not in {CREATE, UPDATE} or not isinstance(args, Mapping):
        return None
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or len(prompt) <= MAX_PROMPT_LENGTH:
        return None
    parsed = parse_tool_call(name, args, profile=profile)
    if not is_successful(parsed) and parsed.failure().code in _CHECKED_BEFORE_LENGTH:
        return None
    return render(Failure(error("invalid_prompt", PROMPT_TOO_LONG)))
