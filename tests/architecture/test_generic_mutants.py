"""The generic mutants of ``tests/mutants.py --generic``: which changes are
drawn, that each is made exactly where its node stands, and that a seed
draws the same sample; checked on a small module and on the core's own
files, without running the suite."""

from __future__ import annotations

import ast
import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tickler_mutants", ROOT / "tests" / "mutants.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the dataclasses look their module up
    spec.loader.exec_module(module)
    return module


mutants = _load()

SAMPLE = '''"""A module: if a < 1 and b == 2, then 3 + 4."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    LIMIT = 5 + 1

__all__ = ["limit"]


def limit(value: int, flag: Literal[7] = 7) -> bool:
    """True when value < 10 (a docstring)."""
    assert value >= 0
    if value < 10 and not flag:  # a comment with <= and 5
        return value + 1 > 2
    label = "é" if value == 3 else "e"
    while not label:
        label -= 1
    return False
'''


@cache
def core_files() -> tuple[tuple[str, str], ...]:
    """The core's modules (subpackages included) as the generic mode finds them."""
    return tuple(
        (file.relative_to(ROOT).as_posix(), file.read_text(encoding="utf-8"))
        for file in sorted(ROOT.glob(mutants.CORE_GLOB))
    )


def by_key(path: str, text: str) -> dict[str, object]:
    return {c.key: c for c in mutants.candidates_in(path, text)}


def test_the_candidates_of_a_small_module() -> None:
    """Docstrings, ``__all__``, annotations, ``TYPE_CHECKING`` and asserts
    are left alone; a comment's operators are never taken for the code's."""
    assert list(by_key("sample.py", SAMPLE)) == [
        "sample.py:13:42 `7` -> `6`",
        "sample.py:13:42 `7` -> `8`",
        "sample.py:16:8 `value < 10 and not flag` -> `not (value < 10 and not flag)`",
        "sample.py:16:14 `<` -> `<=`",
        "sample.py:16:16 `10` -> `11`",
        "sample.py:16:16 `10` -> `9`",
        "sample.py:16:19 `and` -> `or`",
        "sample.py:17:22 `+` -> `-`",
        "sample.py:17:24 `1` -> `0`",
        "sample.py:17:24 `1` -> `2`",
        "sample.py:17:26 `>` -> `>=`",
        "sample.py:17:28 `2` -> `1`",
        "sample.py:17:28 `2` -> `3`",
        "sample.py:18:20 `value == 3` -> `not (value == 3)`",
        "sample.py:18:26 `==` -> `!=`",
        "sample.py:18:29 `3` -> `2`",
        "sample.py:18:29 `3` -> `4`",
        "sample.py:19:11 `not label` -> `label`",
        "sample.py:20:15 `-` -> `+`",
        "sample.py:20:18 `1` -> `0`",
        "sample.py:20:18 `1` -> `2`",
    ]


@pytest.mark.parametrize(
    ("key", "before", "after"),
    [
        (
            "sample.py:16:14 `<` -> `<=`",
            "    if value < 10 and not flag:  # a comment with <= and 5\n",
            "    if value <= 10 and not flag:  # a comment with <= and 5\n",
        ),
        (
            "sample.py:16:8 `value < 10 and not flag` -> `not (value < 10 and not flag)`",
            "    if value < 10 and not flag:",
            "    if not (value < 10 and not flag):",
        ),
        # after a two-byte character on the line: ast counts bytes
        ("sample.py:18:26 `==` -> `!=`", 'if value == 3 else "e"', 'if value != 3 else "e"'),
        ("sample.py:19:11 `not label` -> `label`", "    while not label:", "    while label:"),
        ("sample.py:20:15 `-` -> `+`", "        label -= 1", "        label += 1"),
        ("sample.py:17:28 `2` -> `3`", "return value + 1 > 2\n", "return value + 1 > 3\n"),
    ],
)
def test_a_change_is_made_exactly_where_its_node_stands(key: str, before: str, after: str) -> None:
    mutated = mutants.apply(SAMPLE, by_key("sample.py", SAMPLE)[key])
    assert mutated == SAMPLE.replace(before, after, 1)
    assert mutated != SAMPLE


def test_a_change_is_refused_where_the_source_reads_otherwise() -> None:
    candidate = by_key("sample.py", SAMPLE)["sample.py:16:14 `<` -> `<=`"]
    with pytest.raises(ValueError, match="does not read"):
        mutants.apply(SAMPLE.replace("value < 10", "value > 10"), candidate)


def test_the_same_seed_draws_the_same_sample() -> None:
    candidates = [c for path, text in core_files() for c in mutants.candidates_in(path, text)]
    assert len(candidates) > 500
    first = mutants.draw(candidates, 1, 20)
    assert len(first) == 20
    assert mutants.draw(candidates, 1, 20) == first
    assert mutants.draw(candidates, 2, 20) != first
    assert mutants.draw(candidates, 1, 10**6) == sorted(
        candidates, key=lambda c: (c.path, c.start, c.new)
    )


def _docstring_lines(text: str) -> set[int]:
    """The lines of every string statement (docstrings)."""
    return {
        line
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }


def test_no_core_candidate_touches_a_docstring_and_each_parses() -> None:
    """Over the core's own modules (found by glob, subpackages included):
    no change falls in a docstring, each reads its text where it stands,
    and one in every 50 (all would take a minute), made, still parses."""
    assert core_files()
    for path, text in core_files():
        candidates = mutants.candidates_in(path, text)
        data = text.encode("utf-8")
        docstrings = _docstring_lines(text)
        assert not [c.key for c in candidates if c.line in docstrings], path
        for candidate in candidates:
            assert data[candidate.start : candidate.end].decode("utf-8") == candidate.old
        for candidate in candidates[::50]:
            ast.parse(mutants.apply(text, candidate))
