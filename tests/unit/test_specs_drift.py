"""The checked-in contracts under specs/ are exactly what the code generates."""

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SPECS = Path(__file__).resolve().parents[2] / "specs"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("specs_generate", SPECS / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "name",
    [
        "tool-catalog.json",
        "tool-catalog-extended.json",
        "change-schema.json",
        "change-schema-v2.json",
    ],
)
def test_checked_in_contract_matches_the_code(name: str) -> None:
    generated: str = _generator().contracts()[name]
    checked_in = (SPECS / name).read_text(encoding="utf-8")
    assert checked_in == generated, f"specs/{name} drifted: run `make specs`"
