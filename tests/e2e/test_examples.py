"""Every file in examples/ runs offline, as its docstring says, and shows
the reminder it set arriving."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tickler

EXAMPLES = Path(tickler.__file__).resolve().parent / "examples"
# What each example prints once its reminder came back (a file added to
# examples/ without an entry here fails the test below).
EXPECTED = {
    "pydantic_ai_agent.py": "[reminder turn]",
    "openai_agents_agent.py": "[reminder turn]",
    "langchain_tools.py": "[reminder turn]",
    "mcp_client.py": "delivered schedule-1@",
    "typed_api.py": "[reminder turn] schedule-1@",
}
ONLINE = ("TICKLER_MODEL", "OPENAI_API_KEY", "TICKLER_DIR")


def test_every_example_has_an_expectation() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_an_example_runs_offline(name: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ONLINE}
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"{name}\n{result.stdout}\n{result.stderr}"
    assert EXPECTED[name] in result.stdout, result.stdout
