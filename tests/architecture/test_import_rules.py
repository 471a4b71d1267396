"""The import rules of the layers (``import_rules.py``): the package keeps
them, and each rule fails on a planted breach: a tree of modules written
here, with the package's own folders, where one module breaks one rule."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .import_rules import module_files, problems

CLEAN = {
    "__init__.py": "",
    "_version.py": "__version__ = '0'\n",
    "core/__init__.py": "from tickler.core._rules import rule\n",
    "core/_rules.py": "from tickler.core.timing import parse\ndef rule() -> int:\n    return 1\n",
    "core/_errors.py": "class Oops(Exception): ...\n",
    # The core's rooms: timing uses the wire and the vocabulary.
    "core/wire/__init__.py": "from tickler.core.wire._text import trim\n",
    "core/wire/_text.py": "def trim(text: str) -> str:\n    return text.strip()\n",
    "core/timing/__init__.py": "from tickler.core.timing._instant import parse\n",
    "core/timing/_instant.py": "from tickler.core._errors import Oops\n"
    "from tickler.core.wire import trim\n",
    "shell/__init__.py": "from tickler.shell._runtime import Runtime\n",
    "shell/_runtime.py": "from tickler.core import rule\nfrom tickler._version import __version__\n"
    "class Runtime: ...\n",
    "adapters/__init__.py": "",
    "adapters/_store.py": "from tickler.shell import Runtime\nfrom tickler.core import rule\n",
    "adapters/cli/__init__.py": "",
    "adapters/cli/_app.py": "from tickler.adapters._store import Runtime\n"
    "from . import _commands\n",
    "adapters/cli/_commands.py": "import tickler.adapters._store\n",
}


def plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in {**CLEAN, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_the_package_keeps_the_rules() -> None:
    assert problems() == []


def test_the_planted_tree_is_clean_and_read_whole(tmp_path: Path) -> None:
    root = plant(tmp_path, {})
    assert "tickler.adapters.cli._commands" in module_files(root)
    assert problems(root) == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"adapters/_store.py": "from tickler.shell._runtime import Runtime\n"},
            "tickler.adapters._store:1 imports tickler.shell._runtime: a private module of shell",
        ),
        (
            # Inside a function, and by the module's plain name.
            {"adapters/_store.py": "def f():\n    import tickler.core._rules\n"},
            "tickler.adapters._store:2 imports tickler.core._rules: a private module of core",
        ),
        (
            {
                "shell/_runtime.py": """
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from tickler.core._rules import rule
                """
            },
            "tickler.shell._runtime:4 imports tickler.core._rules: a private module of core",
        ),
        (
            {"core/_rules.py": "def rule():\n    from tickler.shell import Runtime\n"},
            "tickler.core._rules:2 imports tickler.shell: core may not import shell",
        ),
        (
            {"shell/_runtime.py": "from tickler.adapters import _store\n"},
            "tickler.shell._runtime:1 imports tickler.adapters._store: shell may not import",
        ),
    ],
)
def test_a_planted_layer_breach_fails(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    found = problems(plant(tmp_path, files))
    # An import upwards closes a cycle too (the layer above imports this one).
    breaches = [line for line in found if not line.startswith("import cycle: ")]
    assert len(breaches) == 1, found
    assert breaches[0].startswith(expected), found


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"core/_rules.py": "from tickler.core.timing._instant import parse\n"},
            "tickler.core._rules:1 imports tickler.core.timing._instant:"
            " a private module of tickler.core.timing, use tickler.core.timing",
        ),
        (
            {"core/wire/_text.py": "def trim():\n    from tickler.core._rules import rule\n"},
            "tickler.core.wire._text:2 imports tickler.core._rules:"
            " tickler.core.wire may not import the domain",
        ),
        (
            {"core/wire/_text.py": "from tickler.core.timing import parse\n"},
            "tickler.core.wire._text:1 imports tickler.core.timing:"
            " tickler.core.wire may not import tickler.core.timing",
        ),
        (
            {"core/timing/_instant.py": "from tickler.core.wire._text import trim\n"},
            "tickler.core.timing._instant:1 imports tickler.core.wire._text:"
            " a private module of tickler.core.wire",
        ),
        (
            {"core/_errors.py": "from tickler.core.wire import trim\n"},
            "tickler.core._errors:1 imports tickler.core.wire:"
            " the vocabulary imports nothing of the core",
        ),
    ],
)
def test_a_planted_room_breach_fails(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    found = problems(plant(tmp_path, files))
    breaches = [line for line in found if not line.startswith("import cycle: ")]
    assert len(breaches) == 1, found
    assert breaches[0].startswith(expected), found


@pytest.mark.parametrize(
    ("files", "cycle"),
    [
        (
            # The cycle hidden in a function: it never fails at import time.
            {"adapters/cli/_commands.py": "def f():\n    from . import _app\n"},
            "tickler.adapters.cli._app <-> tickler.adapters.cli._commands",
        ),
        (
            # Over three modules.
            {"adapters/_store.py": "from .cli._app import x\n"},
            "tickler.adapters._store <-> tickler.adapters.cli._app"
            " <-> tickler.adapters.cli._commands",
        ),
    ],
)
def test_a_planted_cycle_fails(tmp_path: Path, files: dict[str, str], cycle: str) -> None:
    assert problems(plant(tmp_path, files)) == [f"import cycle: {cycle}"]


def test_the_version_imported_from_the_package_root_is_a_cycle(tmp_path: Path) -> None:
    """The root's facade imports the layers (lazily, or for type checkers)."""
    found = problems(
        plant(
            tmp_path,
            {
                "__init__.py": "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from tickler.shell import Runtime\n",
                "shell/_runtime.py": "from tickler import __version__\nclass Runtime: ...\n",
            },
        )
    )
    assert found == ["import cycle: tickler <-> tickler.shell <-> tickler.shell._runtime"]
