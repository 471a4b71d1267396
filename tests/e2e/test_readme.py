"""Every Python block of README.md and of the documentation (docs/*.md)
runs as written: each is a complete program, run offline in a fresh
directory. A block marked with a preceding ``<!-- fragment -->`` line is only
compiled (the pages keep those few); one marked ``<!-- pytest -->`` is a test
module a user can copy, run by pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import tickler

ROOT = Path(tickler.__file__).resolve().parent
README = ROOT / "README.md"
PAGES = (README, *sorted((ROOT / "docs").glob("*.md")))
FRAGMENT = "<!-- fragment -->"
PYTEST = "<!-- pytest -->"
# Unset, so every block takes its offline default.
ONLINE = ("TICKLER_MODEL", "OPENAI_API_KEY", "TICKLER_DIR")
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"  # the pages' own default


def _drop_schema(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@dataclass(frozen=True)
class Block:
    page: str  # README.md, or docs/NAME.md
    line: int
    code: str
    fragment: bool
    pytest: bool = False

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def page_blocks(path: Path) -> list[Block]:
    page = path.relative_to(ROOT).as_posix()
    lines = path.read_text().splitlines(keepends=True)
    found = []
    start: int | None = None
    for n, line in enumerate(lines):
        if start is None and line.rstrip() == "```python":
            start = n + 1
        elif start is not None and line.rstrip() == "```":
            previous = lines[start - 2].strip() if start >= 2 else ""
            code = "".join(lines[start:n])
            found.append(Block(page, start + 1, code, previous == FRAGMENT, previous == PYTEST))
            start = None
    assert start is None, f"{page} has an unclosed python block"
    return found


def blocks() -> list[Block]:
    return [block for path in PAGES for block in page_blocks(path)]


def test_the_pages_have_their_blocks_and_few_fragments() -> None:
    found = blocks()
    assert len(found) >= 4
    assert sum(b.fragment for b in found) <= 1
    assert all("asyncio.run(main())" in b.code for b in found if "async def main" in b.code)
    assert any(b.pytest for b in found)
    # The README's quickstart is a program too, and so is a page of each topic's.
    assert [b.fragment for b in page_blocks(README)] == [False]
    assert len(found) >= 19


@pytest.mark.parametrize("block", [b for b in blocks() if b.pytest], ids=lambda b: b.where)
def test_a_test_module_of_the_docs_passes_under_pytest(block: Block, tmp_path: Path) -> None:
    (tmp_path / "test_readme_example.py").write_text(block.code)
    env = {k: v for k, v in os.environ.items() if k not in ONLINE}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"{block.where}\n{result.stdout}\n{result.stderr}"
    tests = block.code.count("\ndef test_")
    assert tests >= 1
    assert f"{tests} passed" in result.stdout, result.stdout


@pytest.mark.parametrize("block", [b for b in blocks() if not b.pytest], ids=lambda b: b.where)
def test_a_block_of_the_docs_runs_as_written(block: Block, tmp_path: Path) -> None:
    if block.fragment:
        compile(block.code, block.where, "exec")
        return
    script = tmp_path / "snippet.py"
    script.write_text(block.code)
    # A PostgreSQL block works in a schema of its own, dropped afterwards.
    stem = Path(block.page).stem.replace("-", "_").lower()
    schema = f"readme_{os.getpid()}_{stem}_{block.line}"
    env = {k: v for k, v in os.environ.items() if k not in ONLINE}
    env["TICKLER_SCHEMA"] = schema
    try:
        result = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        if "PostgresStore" in block.code:
            _drop_schema(env.get("TICKLER_DSN", DEFAULT_DSN), schema)
    assert result.returncode == 0, f"{block.where}\n{result.stdout}\n{result.stderr}"
    assert result.stdout.strip(), "a program of the docs shows what it did"
    assert "Traceback" not in result.stderr
