"""Tool arguments from a JSON Schema alone, the way PydanticAI's ``TestModel``
builds them: every property filled, the ``seed``-th member of an ``anyOf``
(``seed`` modulo their number), the ``seed``-th ``enum`` value, an integer's
``minimum`` plus ``seed``, a short string (``"a"`` for seed 0, as
``TestModel`` spells it), ``seed`` odd for ``true``. Neither LangChain nor
the OpenAI Agents SDK ships a model that builds calls from a schema, so
their schema-following tests use this; it knows the keywords the tool
schemas use and refuses a type it does not know, so a schema change cannot
slip past it.

``with_copied_id`` stands for what a model does on its own: an ``id`` is
copied from an earlier answer (a schema says only "a string").
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable
from typing import Any


def fill(schema: dict[str, Any], seed: int = 0) -> Any:
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][seed % len(schema["enum"])]
    if "anyOf" in schema:
        return fill(schema["anyOf"][seed % len(schema["anyOf"])], seed)
    kind = schema.get("type")
    if kind == "object":
        return {name: fill(member, seed) for name, member in schema.get("properties", {}).items()}
    if kind == "string":
        return _letters(seed) * max(1, schema.get("minLength", 1))
    if kind == "integer":
        return int(schema.get("minimum", 0)) + seed
    if kind == "boolean":
        return bool(seed % 2)
    if kind == "null":
        return None
    raise ValueError(f"a schema type this filler does not know: {kind!r}")


_CHARS = string.ascii_letters + string.digits + string.punctuation  # TestModel's


def _letters(seed: int) -> str:
    """``TestModel``'s strings: ``"a"`` for seed 0, ``"e"`` for seed 4."""
    text, rest = "", seed // len(_CHARS)
    while rest > 0:
        text += _CHARS[(rest - 1) % len(_CHARS)]
        rest //= len(_CHARS)
    return text + _CHARS[seed % len(_CHARS)]


def with_copied_id(arguments: dict[str, Any], answers: Iterable[str]) -> dict[str, Any]:
    """``arguments`` with ``id`` (if it has one) set to the newest
    reminder id among ``answers`` (tool answers, oldest first)."""
    if "id" not in arguments:
        return arguments
    for text in reversed(list(answers)):
        value = json.loads(text)
        shown = value if isinstance(value, list) else [value]
        ids = [v["id"] for v in shown if isinstance(v, dict) and "id" in v]
        if ids:
            return {**arguments, "id": ids[-1]}
    return arguments
