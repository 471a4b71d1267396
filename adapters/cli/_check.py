"""``tickler check``: the invariant checker over session files.

Every file gets its own verdict, whatever happens to the others: a file
that cannot be read, is corrupt, or makes the checker itself fail is
reported and the next one is checked.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from msgspec import UnsetType
from returns.pipeline import is_successful
from returns.result import Result

from tickler.adapters.cli._check_index import index_rows, jsonl_index
from tickler.adapters.cli._check_index import problems as index_problems
from tickler.adapters.cli._files import NothingToCheck, Source, find, source_for_file
from tickler.adapters.cli._harness import decode_segment, expected_place
from tickler.adapters.cli._visible import visible
from tickler.adapters.cli._zstdlog import ZstdLogError, ZstdTooLarge, read_zstd_log
from tickler.adapters.read._model import is_dsn
from tickler.adapters.stores._files import NotRegularFile, open_regular
from tickler.adapters.stores._verify import crash_tail_expected, verify_store_dir
from tickler.core import (
    CorruptScheduleLog,
    ParsedSession,
    SessionFileError,
    State,
    is_json,
    parse_session_jsonl,
)
from tickler.shell import check_session

VALID, CORRUPT, UNREADABLE = 0, 1, 2
TORN_LINE = "torn final line (no newline, not JSON): the file was cut, or its writer crashed"
TORN_FRAME = "torn final zstd frame at byte {at}: the file was cut, or its writer crashed"
OPEN_LINE = "the final line has no newline: the harness takes it for a torn record and drops it"
CRASH_TAIL = "a torn final line (crash mid-write) was ignored; the store trims it when it opens"


@dataclass(frozen=True)
class FileVerdict:
    path: str
    status: int  # VALID, CORRUPT or UNREADABLE
    line: int | None = None
    reason: str | None = None
    events: int = 0
    active: int = 0
    torn_tail: bool = False
    session: str | None = None  # the id a harness directory name stands for

    def as_json(self) -> dict[str, object]:
        label = {VALID: "valid", CORRUPT: "corrupt", UNREADABLE: "unreadable"}[self.status]
        out: dict[str, object] = {"path": self.path, "status": label}
        if self.session is not None:
            out["session"] = self.session
        if self.line is not None:
            out["line"] = self.line
        if self.reason is not None:
            out["reason"] = self.reason
        if self.status == VALID:
            out.update(events=self.events, active=self.active, tornTail=self.torn_tail)
        return out

    @property
    def label(self) -> str:
        """The file and its session, made visible."""
        session = "" if self.session is None else f' [session "{visible(self.session)}"]'
        return visible(self.path) + session

    def as_text(self) -> str:
        """One line, every log- or file-derived part made visible."""
        if self.status == VALID:
            note = f"; {CRASH_TAIL}" if self.torn_tail else ""
            return f"{self.label}: valid ({self.events} events, {self.active} active){note}"
        where = visible(self.path) + ("" if self.line is None else f":{self.line}")
        session = "" if self.session is None else f' [session "{visible(self.session)}"]'
        return f"{where}{session}: {visible(self.reason or '')}"


@dataclass(frozen=True)
class Examined:
    verdict: FileVerdict
    parsed: ParsedSession | None = None  # what a reader can show: the valid events


def exit_code(verdicts: Iterable[FileVerdict]) -> int:
    """1 when any log is corrupt (the finding that matters most), else 2 when
    an input could not be read or checked, else 0."""
    statuses = {verdict.status for verdict in verdicts}
    if CORRUPT in statuses:
        return CORRUPT
    return UNREADABLE if UNREADABLE in statuses else VALID


def check_file(path: str) -> FileVerdict:
    return examine(source_for_file(path)).verdict


def examine_paths(paths: Iterable[str], *, with_index: bool = False) -> list[Examined]:
    """Each path: a file, or a directory walked for session files; with
    ``with_index``, each store's wake index against its logs too."""
    out: list[Examined] = []
    for path in paths:
        out.extend(_examine_path(path, with_index))
    return out


def _examine_path(path: str, with_index: bool) -> list[Examined]:
    if not Path(path).is_dir():
        source = source_for_file(path)
        found = [examine(source)]
        if source.in_store:
            store = str(Path(path).parent)
            found += _store_problems(store, found, only=path)
            if with_index:
                found += _index_problems(str(jsonl_index(Path(store))), store, found)
        return found
    try:
        listing = find(path)
    except NothingToCheck as exc:
        return [Examined(FileVerdict(path, UNREADABLE, reason=str(exc).removeprefix(f"{path}: ")))]
    except OSError as exc:
        reason = f"cannot read: {exc.strerror or exc}"
        return [Examined(FileVerdict(path, UNREADABLE, reason=reason))]
    found = [examine(source) for source in listing.sources]
    for store in listing.stores:
        found += _store_problems(store, found)
        if with_index:
            found += _index_problems(str(jsonl_index(Path(store))), store, found)
    return found


def _index_problems(database: str, store: str, seen: list[Examined]) -> list[Examined]:
    """The wake index of a store against its sessions' logs (the valid ones
    among ``seen``): one verdict per session the index is behind, or one for
    an index that cannot be read."""
    try:
        rows = index_rows(Path(database))
    except sqlite3.DatabaseError as exc:
        why = f"the wake index cannot be read ({exc}): a worker that starts makes it anew"
        return [Examined(FileVerdict(database, CORRUPT, reason=why))]
    if rows is None:
        return []
    sessions = [
        (_session_of(store, e), e.parsed)
        for e in seen
        if e.verdict.status == VALID and e.parsed is not None and _in(store, e.verdict.path)
    ]
    now = time.time_ns() // 1_000_000
    return [
        Examined(FileVerdict(database, CORRUPT, reason=why, session=session_id))
        for session_id, why in index_problems(rows, sessions, now)
    ]


def _in(store: str, path: str) -> bool:
    return _same(str(Path(path).parent), store) or path == store


def _session_of(store: str, examined: Examined) -> str:
    """A stored session's id: its verdict names it (a database), or its file does."""
    if examined.verdict.session is not None:
        return examined.verdict.session
    return Path(examined.verdict.path).stem


def _store_problems(store: str, seen: list[Examined], only: str | None = None) -> list[Examined]:
    """What the store's other files tell (journals, snapshots, links), as
    verdicts; one a file's own verdict already gives is not repeated."""
    try:
        problems = verify_store_dir(Path(store))
    except Exception as exc:  # noqa: BLE001 - reported as this store's verdict
        return [Examined(FileVerdict(store, UNREADABLE, reason=_failure(exc)))]
    told = {(e.verdict.path, e.verdict.line) for e in seen if e.verdict.status == CORRUPT}
    out: list[Examined] = []
    for problem in problems:
        path, line = str(problem.path), problem.line or None  # line 0: not a line
        if (path, line) in told or (only is not None and not _same(path, only)):
            continue
        out.append(Examined(FileVerdict(path, CORRUPT, line=line, reason=problem.reason)))
    return out


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def examine(source: Source) -> Examined:
    """The verdict on one session file; never raises."""
    session = decode_segment(_place(source.path).parent.name) if source.harness else None
    try:
        return _examine(source, session)
    except Exception as exc:  # noqa: BLE001 - one file's failure is that file's verdict only
        return Examined(FileVerdict(source.path, UNREADABLE, reason=_failure(exc), session=session))


def _place(path: str) -> Path:
    """Where the file is, by name: ``session.jsonl`` names its directory
    too. Lexical, so a symbolic link is not followed."""
    return Path(os.path.abspath(path))  # noqa: PTH100 - Path.resolve() follows links


def _failure(exc: BaseException) -> str:
    return f"cannot be checked: {type(exc).__name__}: {exc}"


def _read(source: Source, session: str | None) -> tuple[bytes, int | None] | FileVerdict:
    """The file's JSONL text (a zstd log inflated) and where a cut final
    zstd frame starts, or the verdict when that cannot be had."""
    path = source.path
    try:
        with open_regular(path) as file:  # a FIFO would block, a device never end
            data = file.read()
    except NotRegularFile as exc:
        reason = f"{exc.kind}, not a regular file"
        return FileVerdict(path, UNREADABLE, reason=reason, session=session)
    except OSError as exc:
        return FileVerdict(
            path, UNREADABLE, reason=f"cannot read: {exc.strerror or exc}", session=session
        )
    if not path.endswith(".zstd"):
        return data, None
    try:
        log = read_zstd_log(data)
    except ZstdLogError as exc:
        return FileVerdict(path, CORRUPT, exc.line, exc.reason, session=session)
    except ZstdTooLarge as exc:
        return FileVerdict(path, UNREADABLE, reason=str(exc), session=session)
    return log.text, log.torn_at


def _examine(source: Source, session: str | None) -> Examined:
    path = source.path
    read = _read(source, session)
    if isinstance(read, FileVerdict):
        return Examined(read)
    data, torn_at = read
    # Outside a store, the file is read as the harness reads it (and as
    # parse_session_jsonl does): a final line without its newline, JSON or
    # not, is a torn record, not read. Inside, as the store reads it: it
    # completes a whole JSON final line.
    if source.in_store and (tail := _open_tail(data)) and is_json(tail):
        data += b"\n"
    try:
        parsed = parse_session_jsonl(data)
    except SessionFileError as exc:
        status = UNREADABLE if exc.line == 1 and "header" in exc.reason else CORRUPT
        return Examined(FileVerdict(path, status, exc.line, exc.reason, session=session))
    if source.harness and (misplaced := _misplaced(_place(path), parsed)):
        return Examined(FileVerdict(path, CORRUPT, 1, misplaced, session=session))
    result = check_session(parsed.events, parsed.header.owned_from)
    if (problem := _fault(result, parsed)) is not None:
        line, reason = problem
        return Examined(FileVerdict(path, CORRUPT, line, reason, session=session))
    torn = parsed.torn_tail is not None or torn_at is not None
    if torn and not (source.in_store and crash_tail_expected(Path(path))):
        # Outside a store nothing tells a crash's tail from a cut file: a log
        # closed cleanly must never pass as valid with its end missing.
        line = data.count(b"\n") + 1
        if torn_at is not None:
            reason = TORN_FRAME.format(at=torn_at)
        else:
            cut = parsed.torn_tail
            reason = OPEN_LINE if cut is not None and is_json(cut) else TORN_LINE
        return Examined(FileVerdict(path, CORRUPT, line, reason, session=session), parsed)
    verdict = FileVerdict(
        path,
        VALID,
        events=len(parsed.events),
        active=len(result.unwrap().entries),
        torn_tail=torn,
        session=session,
    )
    return Examined(verdict, parsed)


def _open_tail(data: bytes) -> bytes:
    """The final line when it has no newline (and is not blank), else b""."""
    tail = data[data.rfind(b"\n") + 1 :]
    return tail if tail.strip() else b""


def _misplaced(path: Path, parsed: ParsedSession) -> str | None:
    """Why the harness would refuse a log found at ``path``, if it would: its
    header's id and cwd name another directory."""
    header = parsed.header
    cwd = None if isinstance(header.cwd, UnsetType) else header.cwd
    try:
        expected = expected_place(header.id, cwd)
    except ValueError as exc:
        return f"the harness cannot place this header: {exc}"
    actual = f"{path.parent.parent.name}/{path.parent.name}"
    if expected == actual:
        return None
    return f"by its header's id and cwd this log belongs in {expected}, not in {actual}"


def _fault(
    result: Result[State, CorruptScheduleLog], parsed: ParsedSession
) -> tuple[int | None, str] | None:
    """The (line, reason) that makes the log corrupt for the runtime, from
    ``check_session``'s verdict on it."""
    if is_successful(result):
        return None
    failure = result.failure()
    return (None if failure.index is None else parsed.lines[failure.index]), failure.reason


def examine_parsed(path: str, parsed: ParsedSession, session: str) -> Examined:
    """The verdict on a stored session's events (a database row set):
    the same invariants as a file's; a fault names the event's seq."""
    result = check_session(parsed.events, parsed.header.owned_from)
    if (problem := _fault(result, parsed)) is not None:
        seq, reason = problem
        reason = reason if seq is None else f"event {seq}: {reason}"
        return Examined(FileVerdict(path, CORRUPT, reason=reason, session=session))
    verdict = FileVerdict(
        path,
        VALID,
        events=len(parsed.events),
        active=len(result.unwrap().entries),
        session=session,
    )
    return Examined(verdict, parsed)


def examine_database(
    source: str, schema: str, session_id: str | None, *, with_index: bool = False
) -> list[Examined]:
    """Every session of an SQLite store file or a PostgreSQL schema (or
    ``session_id``), read-only. Raises DatabaseUnreachable; a store that
    cannot be read otherwise is one unreadable verdict."""
    from tickler.adapters.cli._db_sessions import describe, read_sessions, unreachable_type
    from tickler.shell import StoreError

    label = describe(source, schema)
    found: list[Examined] = []
    try:
        for stored in read_sessions(source, schema, session_id):
            if stored.parsed is None:
                why = stored.problem
                found.append(
                    Examined(FileVerdict(label, CORRUPT, reason=why, session=stored.session_id))
                )
            else:
                found.append(examine_parsed(label, stored.parsed, stored.session_id))
    except StoreError as exc:
        if isinstance(exc, unreachable_type(source)):
            raise
        return [*found, Examined(FileVerdict(label, UNREADABLE, reason=str(exc)))]
    if not found:
        what = "no sessions" if session_id is None else f"no session {session_id!r}"
        return [Examined(FileVerdict(label, UNREADABLE, reason=what))]
    if with_index and not is_dsn(source):  # an SQLite store's wake index is in its file
        found += _index_problems(source, source, found)
    return found
