"""Every Python block of README.md runs as written: each is a complete
program, run offline in a fresh directory. A block marked with a preceding
``<!-- fragment -->`` line is only compiled (the README keeps those few); one
marked ``<!-- pytest -->`` is a test module a user can copy, run by pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import tickler

README = Path(tickler.__file__).resolve().parent / "README.md"
FRAGMENT = "<!-- fragment -->"
PYTEST = "<!-- pytest -->"
# Unset, so every block takes its offline default.
ONLINE = ("TICKLER_MODEL", "OPENAI_API_KEY", "TICKLER_DIR")
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"  # the README's own default


def _drop_schema(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@dataclass(frozen=True)
class Block:
    line: int
    code: str
    fragment: bool
    pytest: bool = False


def blocks() -> list[Block]:
    lines = README.read_text().splitlines(keepends=True)
    found = []
    start: int | None = None
    for n, line in enumerate(lines):
        if start is None and line.rstrip() == "```python":
            start = n + 1
        elif start is not None and line.rstrip() == "```":
            previous = lines[start - 2].strip() if start >= 2 else ""
            code = "".join(lines[start:n])
            found.append(Block(start + 1, code, previous == FRAGMENT, previous == PYTEST))
            start = None
    assert start is None, "README.md has an unclosed python block"
    return found


def test_the_readme_has_its_blocks_and_few_fragments() -> None:
    found = blocks()
    assert len(found) >= 4
    assert sum(b.fragment for b in found) <= 1
    assert all("asyncio.run(main())" in b.code for b in found if "async def main" in b.code)
    assert any(b.pytest for b in found)


@pytest.mark.parametrize(
    "block", [b for b in blocks() if b.pytest], ids=lambda b: f"README.md:{b.line}"
)
def test_a_readme_test_module_passes_under_pytest(block: Block, tmp_path: Path) -> None:
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
    assert result.returncode == 0, f"README.md:{block.line}\n{result.stdout}\n{result.stderr}"
    tests = block.code.count("\ndef test_")
    assert tests >= 1
    assert f"{tests} passed" in result.stdout, result.stdout


@pytest.mark.parametrize(
    "block", [b for b in blocks() if not b.pytest], ids=lambda b: f"README.md:{b.line}"
)
def test_a_readme_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    if block.fragment:
        compile(block.code, f"README.md:{block.line}", "exec")
        return
    script = tmp_path / "snippet.py"
    script.write_text(block.code)
    # A PostgreSQL block works in a schema of its own, dropped afterwards.
    schema = f"readme_{os.getpid()}_{block.line}"
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
    assert result.returncode == 0, f"README.md:{block.line}\n{result.stdout}\n{result.stderr}"
    assert result.stdout.strip(), "a README program shows what it did"
    assert "Traceback" not in result.stderr
