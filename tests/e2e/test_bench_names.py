"""The benchmarks run as scripts (``python bench/core.py``), which puts
``bench/`` first on the import path: a file there named like a standard
module (``calendar.py``) replaces it for every import in that process, and
the bench dies inside ``importlib.metadata`` before it measures anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_no_bench_module_shadows_the_standard_library() -> None:
    names = {p.stem for p in BENCH.glob("*.py")} | {
        p.name for p in BENCH.iterdir() if (p / "__init__.py").exists()
    }
    assert names, "no benchmark found"
    assert sorted(names & sys.stdlib_module_names) == []


def test_a_bench_script_starts_with_bench_first_on_the_path() -> None:
    # What `python bench/core.py` does to sys.path, without running a bench.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import tickler.core, calendar, email.utils; print(calendar.__file__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(BENCH)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert str(BENCH) not in out.stdout
