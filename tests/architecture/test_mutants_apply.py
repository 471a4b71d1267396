"""The rule mutants (``tests/mutants.py``) still apply: each one's text is in
its file exactly once, so a moved module or a rewritten rule shows here, not
as an error in the middle of a ``make mutants`` run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

MUTANTS_FILE = Path(__file__).resolve().parents[1] / "mutants.py"


def _mutants() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tickler_mutants", MUTANTS_FILE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look the module up by name while the class is made.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_mutant_applies_to_its_file_once() -> None:
    mutants = _mutants()
    assert len(mutants.MUTANTS) > 0
    assert mutants.misplaced() == []


def test_a_mutant_whose_text_moved_is_reported() -> None:
    mutants = _mutants()
    moved = mutants.Mutant("moved", "core/_no_such_module.py", "x", "y")
    absent = mutants.Mutant("absent", "core/_rules.py", "no rule reads like this", "")
    assert mutants.misplaced((moved, absent)) == [
        "moved: the text to change is 0 times in core/_no_such_module.py",
        "absent: the text to change is 0 times in core/_rules.py",
    ]
