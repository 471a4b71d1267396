"""``tickler demo`` keeps its store when asked: ``--store DIR`` uses DIR
and leaves the session there; ``--keep`` keeps the temporary store and says
where it is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]


def tickler(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKLER, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_demo_with_store_leaves_a_valid_session_log_there(tmp_path: Path) -> None:
    store = tmp_path / "kept" / "store"
    result = tickler("demo", "--json", "--store", str(store), timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    log = store / "demo.jsonl"
    assert log.is_file()
    assert json.loads(result.stdout)["sessionLog"] == str(log)
    assert f"the session log stays at {log}" in result.stderr  # the story, with --json
    assert b'"type":"schedule/change"' in log.read_bytes()
    checked = tickler("check", str(log))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith(f"{log}: valid")
    # A second run would mix its story with the first one's reminders.
    again = tickler("demo", "--store", str(store))
    assert again.returncode == 2
    assert again.stderr.strip() == (
        f"tickler: error: {store} already holds a demo session; choose another directory"
    )


def test_keep_keeps_the_temporary_store_and_names_it() -> None:
    from tickler.adapters.cli._demo import demo_store

    with demo_store(None, keep=True) as (directory, note):
        (Path(directory) / "demo.jsonl").write_bytes(b"")
    try:
        assert Path(directory, "demo.jsonl").is_file()
        assert note == f"the session log stays at {Path(directory) / 'demo.jsonl'}"
    finally:
        (Path(directory) / "demo.jsonl").unlink()
        Path(directory).rmdir()


def test_without_keep_the_temporary_store_is_removed() -> None:
    from tickler.adapters.cli._demo import demo_store

    with demo_store(None, keep=False) as (directory, note):
        assert Path(directory).is_dir()
    assert not Path(directory).exists()
    assert note is None


def test_keep_and_store_are_one_choice() -> None:
    result = tickler("demo", "--keep", "--store", "somewhere")
    assert result.returncode == 2
    assert "--keep" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args", [["--keep"], ["--store", "x"]])
def test_the_options_are_documented(args: list[str]) -> None:
    assert args[0] in tickler("demo", "--help").stdout


def dry_run_demo(*args: str) -> str:
    """The last command ``make -n demo ARGS`` would run. Run as a top-level
    make (``make test`` is itself a make: its MAKELEVEL and flags would add
    "Entering/Leaving directory" lines)."""
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in {"MAKELEVEL", "MAKEFLAGS", "MFLAGS"}}
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "demo", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.rstrip().splitlines()[-1].rstrip()


def test_make_demo_passes_its_arguments() -> None:
    assert dry_run_demo() == ".venv/bin/tickler demo"
    assert dry_run_demo("DEMO_ARGS=--keep") == ".venv/bin/tickler demo --keep"
