"""The harness's names (golden cases in specs/vectors/harness-layout) and
the checked-in harness root, checked end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tickler.adapters.cli._harness import decode_segment, encode_segment, project_dir

GOLDEN = Path(__file__).resolve().parents[2] / "specs" / "vectors" / "harness-layout"
CASES = [json.loads(line) for line in (GOLDEN / "names.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['kind']}:{c['case']}" for c in CASES])
def test_names_match_the_harness(case: dict[str, Any]) -> None:
    if case["kind"] == "segment":
        assert encode_segment(case["input"]) == case["expected"]
        assert decode_segment(case["expected"]) == case["input"]
    elif case["kind"] == "decode":
        assert decode_segment(case["input"]) == case["expected"]
    else:
        assert project_dir(case["input"]) == case["expected"]


def test_every_id_round_trips_through_its_directory_name() -> None:
    for raw in ("x", "~~", "a\x00b", "\udfff\ud800", "é/😀", ".a", "..."):
        assert decode_segment(encode_segment(raw)) == raw


def test_empty_names_cannot_be_placed() -> None:
    with pytest.raises(ValueError, match="empty"):
        encode_segment("")
    with pytest.raises(ValueError, match="empty"):
        project_dir("")


def test_the_golden_root_checks_as_recorded() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tickler.adapters.cli", "check", "--json", "root"],
        cwd=GOLDEN,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    expected = json.loads((GOLDEN / "check.expected.json").read_text())
    assert json.loads(result.stdout) == expected
