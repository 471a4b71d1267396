"""``tickler.testing.replay`` checks a log the way ``tickler check`` does:
the same verdict, index and reason for the schedule log and for tickler's
own records after the seed prefix, and a parsed file's header gives the
seed length. Drawn logs, written as files, get the verdicts their
strategies promise."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from returns.pipeline import is_successful

from tickler.adapters.cli._check import CORRUPT, VALID, check_file
from tickler.core import fold, parse_session_jsonl
from tickler.testing import replay, session_file
from tickler.testing.strategies import DamagedLog, ValidLog, damaged_logs, session_logs

HEADER = b'{"type":"session","version":0,"id":"s1","createdAt":1785931200000,"seedLength":2}'
CREATE = (
    b'{"version":1,"operation":"create","schedule":{"id":"schedule-1","kind":"at",'
    b'"prompt":"tea","scheduledAt":"2026-08-05T12:00:00.000Z"}}'
)
BROKEN_CHANGE = b'{"version":2,"operation":"create"}'
BROKEN_FOLLOWUP = b'{"key":7}'


def _file(*events: tuple[str, bytes]) -> bytes:
    lines = [HEADER]
    for seq, (type_, data) in enumerate(events):
        lines.append(b'{"type":"%s","seq":%d,"time":0,"data":%s}' % (type_.encode(), seq, data))
    return b"\n".join(lines) + b"\n"


def _written(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "my-session.jsonl"  # not a harness layout: no placement check
    path.write_bytes(data)
    return str(path)


def test_a_valid_file_replays_to_its_fold_past_the_seed_prefix(tmp_path: Path) -> None:
    # The seed prefix (the parent's) holds a broken change and a broken
    # follow-up: neither is read.
    data = _file(
        ("schedule/change", BROKEN_CHANGE),
        ("tickler/followup", BROKEN_FOLLOWUP),
        ("schedule/change", CREATE),
    )
    parsed = parse_session_jsonl(data)
    result = replay(parsed)
    assert is_successful(result)
    assert result.unwrap() == fold(parsed.events, 2)
    assert [r.id for r in result.unwrap().active] == ["schedule-1"]
    assert replay(parsed.events, 2).unwrap() == result.unwrap()
    assert not is_successful(replay(parsed.events))  # no seed: the broken change is read
    assert check_file(_written(tmp_path, data)).status == VALID


def test_a_malformed_tickler_record_is_corrupt_as_tickler_check_says(tmp_path: Path) -> None:
    data = _file(
        ("message", b"{}"),
        ("message", b"{}"),
        ("schedule/change", CREATE),
        ("tickler/followup", BROKEN_FOLLOWUP),
    )
    result = replay(parse_session_jsonl(data))
    assert not is_successful(result)
    failure = result.failure()
    assert failure.index == 3
    assert failure.reason.startswith("malformed tickler/followup record")
    verdict = check_file(_written(tmp_path, data))
    assert (verdict.status, verdict.line, verdict.reason) == (CORRUPT, 5, failure.reason)


def test_a_corrupt_schedule_change_is_reported_as_tickler_check_reports_it(
    tmp_path: Path,
) -> None:
    data = _file(("message", b"{}"), ("message", b"{}"), ("schedule/change", BROKEN_CHANGE))
    failure = replay(parse_session_jsonl(data)).failure()
    assert (failure.index, failure.reason) == (2, "schedule/change version must be 1")
    verdict = check_file(_written(tmp_path, data))
    assert (verdict.status, verdict.line, verdict.reason) == (CORRUPT, 4, failure.reason)


@settings(max_examples=20)
@given(logs=damaged_logs())
def test_a_damaged_log_as_a_file_gets_tickler_checks_verdict_at_its_line(
    tmp_path_factory: pytest.TempPathFactory, logs: DamagedLog
) -> None:
    data = session_file(logs.events, logs.seed_length)
    failure = replay(parse_session_jsonl(data)).failure()
    assert (failure.index, failure.reason) == (logs.index, logs.reason)
    verdict = check_file(_written(tmp_path_factory.mktemp("damaged"), data))
    # the header is line 1, event i is line i + 2
    assert (verdict.status, verdict.line, verdict.reason) == (CORRUPT, logs.index + 2, logs.reason)


@settings(max_examples=20)
@given(log=session_logs())
def test_a_session_log_as_a_file_is_valid_for_tickler_check(
    tmp_path_factory: pytest.TempPathFactory, log: ValidLog
) -> None:
    data = session_file(log.events, log.seed_length)
    state = replay(parse_session_jsonl(data)).unwrap()
    assert state == log.state()
    verdict = check_file(_written(tmp_path_factory.mktemp("valid"), data))
    assert (verdict.status, verdict.events, verdict.active) == (
        VALID,
        len(log.events),
        len(state.active),
    )
