"""The core's purity rule (``core/ruff.toml``'s banned-API list) reaches every
folder of the core: the domain and each of its rooms (``core/timing``,
``core/wire``). A module planted in each folder, importing a clock and the
disk, fails ruff; the same module in the shell passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLANTED = "import os\nimport time\n\nprint(os.getcwd(), time.time())\n"
CORE_FOLDERS = sorted(
    str(init.parent.relative_to(ROOT)) for init in (ROOT / "core").rglob("__init__.py")
)


def _banned(folder: str) -> list[str]:
    """The banned-API findings of ruff on the planted module as if it stood in ``folder``."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format=concise",
         "--select", "TID251", "--stdin-filename", f"{folder}/_planted.py", "-"],
        cwd=ROOT, input=PLANTED, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return [line for line in result.stdout.splitlines() if "TID251" in line]


def test_the_core_has_its_rooms() -> None:
    assert CORE_FOLDERS == ["core", "core/timing", "core/wire"]


@pytest.mark.parametrize("folder", CORE_FOLDERS)
def test_a_planted_impure_import_fails_in_every_folder_of_the_core(folder: str) -> None:
    found = _banned(folder)
    assert len(found) == 2, found
    assert "`os` is banned: core is pure: no I/O" in found[0]
    assert "`time` is banned: core is pure: take `now` as a parameter" in found[1]


def test_the_same_import_passes_in_the_shell() -> None:
    assert _banned("shell") == []
