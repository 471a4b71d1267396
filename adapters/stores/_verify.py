"""What ``tickler check`` learns about a JSONL store directory as a whole.

A plain parse of one session file sees its lines; it cannot see what only
the store's other files tell: a damaged journal, a snapshot covering more
events than its file holds, a file holding fewer events than its length
file records (whole lines cut from its end), whether a torn final line is a crash's cut (a
journal holds the event it cut: opening the session completes it) or damage
(no journal does: opening refuses it), symbolic links the store refuses.
These are the same rules :class:`~tickler.adapters.stores._jsonl.JsonlStore`
applies when it opens, read here without changing anything: no lock is
taken, no file written, no link followed. Bad lines are left to the file's
own parse (``parse_session_jsonl``), so they are not reported twice.

Journals of running writers are read too: their records cover the torn
tails a write in progress shows, and the end of such a journal is read as
a cut, never as damage.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tickler.adapters.stores._files import (
    CorruptStore,
    NotRegularFile,
    SymlinkRefused,
    kind_of,
    open_nofollow,
    read_nofollow,
)
from tickler.adapters.stores._lengthfile import SUFFIX, length_path, read_length
from tickler.adapters.stores._recovery import cut_reason, journal_order
from tickler.adapters.stores._scan import Scanned, line_number, scan_file
from tickler.adapters.stores._snapshotfile import decode_snapshot, read_head, through_of
from tickler.adapters.stores._wal import scan_journal
from tickler.shell import is_valid_session_id

JOURNAL_DIR: Final = ".journal"
_STORE_SUFFIXES: Final = (".jsonl", ".snapshot", ".tmp", SUFFIX)


@dataclass(frozen=True)
class StoreProblem:
    """Damage the store refuses to open (or would lose data over):
    ``line`` is 1-based, 0 when the damage is not a line."""

    path: Path
    line: int
    reason: str


def is_store_dir(path: Path) -> bool:
    """A directory a :class:`JsonlStore` has opened (it holds ``.journal``)."""
    journal = path / JOURNAL_DIR
    return path.is_dir() and (journal.is_dir() or journal.is_symlink())


def verify_store_dir(path: Path) -> list[StoreProblem]:
    """Every store-level problem of the store directory ``path``, in a
    stable order (read-only; see the module docstring)."""
    problems = _symlinks(path) + _not_regular(path)
    journal_dir = path / JOURNAL_DIR
    covered: dict[str, dict[int, bytes]] = {}
    if journal_dir.is_dir() and not journal_dir.is_symlink():
        covered = _journals(journal_dir, problems)
    for file in sorted(path.glob("*.jsonl")):
        session_id = file.stem
        if file.is_symlink() or not is_valid_session_id(session_id):
            continue
        problems += _session(file, covered.get(session_id, {}))
    return problems


def crash_tail_expected(session_file: Path) -> bool:
    """Whether the session file ends in a torn line that a journal of its
    store covers: a crash's cut, which opening the session completes from
    the journal. False when it has no torn line, when no journal covers it
    (damage), or when it is not in a store."""
    store = session_file.parent
    if not is_store_dir(store) or (store / JOURNAL_DIR).is_symlink():
        return False
    scanned = _scan(session_file)
    if scanned is None or scanned.torn is None:
        return False
    lines = _journals(store / JOURNAL_DIR, []).get(session_file.stem, {})
    return scanned.length in lines


def _symlinks(path: Path) -> list[StoreProblem]:
    """The store's files and directories that are symbolic links."""
    found: list[Path] = []
    for entry in sorted(os.scandir(path), key=lambda entry: entry.name):
        if entry.is_symlink() and (
            entry.name == JOURNAL_DIR or entry.name.endswith(_STORE_SUFFIXES)
        ):
            found.append(Path(entry.path))
    journal_dir = path / JOURNAL_DIR
    if journal_dir.is_dir() and not journal_dir.is_symlink():
        found += sorted(p for p in journal_dir.glob("*.wal") if p.is_symlink())
    return [StoreProblem(p, 0, "a symbolic link: the store refuses to follow it") for p in found]


def _not_regular(path: Path) -> list[StoreProblem]:
    """The store's snapshots, length files and journals that are FIFOs,
    sockets or devices (a session file's own verdict says so for it; a
    temporary file is removed when its session opens)."""
    found: list[StoreProblem] = []
    for entry in sorted(os.scandir(path), key=lambda entry: entry.name):
        if entry.name.endswith((".snapshot", SUFFIX)):
            mode = entry.stat(follow_symlinks=False).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                found.append(StoreProblem(Path(entry.path), 0, _refused(mode)))
    journal_dir = path / JOURNAL_DIR
    if journal_dir.is_dir() and not journal_dir.is_symlink():
        for wal in sorted(journal_dir.glob("*.wal")):
            mode = wal.lstat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                found.append(StoreProblem(wal, 0, _refused(mode)))
    return found


def _refused(mode: int) -> str:
    return f"{kind_of(mode)}, not a regular file: the store refuses to read it"


def _journals(journal_dir: Path, problems: list[StoreProblem]) -> dict[str, dict[int, bytes]]:
    """The event lines the journals hold, per session and seq (up to any
    damage, which is added to ``problems``), oldest journal first per
    owner, as a replay reads them."""
    covered: dict[str, dict[int, bytes]] = {}
    for path in sorted(journal_dir.glob("*.wal"), key=journal_order):
        try:
            data = read_nofollow(path)
        except (FileNotFoundError, SymlinkRefused, NotRegularFile):
            continue  # checkpointed meanwhile, or a link or FIFO (reported as such)
        scan = scan_journal(data)
        if scan.damage is not None:
            offset, reason = scan.damage
            problems.append(StoreProblem(path, 0, f"byte {offset}: {reason}"))
        for record in scan.records:
            if not is_valid_session_id(record.session_id):
                problems.append(
                    StoreProblem(
                        path, 0, f"a record names an invalid session {record.session_id!r}"
                    )
                )
                continue
            covered.setdefault(record.session_id, {}).update(record.numbered())
    return covered


def _session(file: Path, lines: dict[int, bytes]) -> list[StoreProblem]:
    scanned = _scan(file)
    if scanned is None:
        return []  # a bad line: the file's own parse reports it
    problems: list[StoreProblem] = []
    torn = False
    if scanned.torn is not None and scanned.length not in lines:
        torn = True
        problems.append(
            StoreProblem(
                file,
                _line_of(file, scanned.end),
                f"torn final line ({len(scanned.torn)} bytes, no newline, not JSON) that no "
                "journal covers: the file was cut after it was written, not by a crash",
            )
        )
    length = scanned.length  # as a replay would complete it from the journals
    while length in lines:
        length += 1
    beyond = [seq for seq in lines if seq >= length]
    if beyond:
        problems.append(
            StoreProblem(
                file,
                0,
                f"a journal holds seq {min(beyond)} but the file ends at seq {length}: "
                "events are missing",
            )
        )
    if not torn:  # a torn line is cut from a file: one report of the cut
        problems += _length(file, scanned, length)
    problems += _snapshot(file.with_suffix(".snapshot"), length)
    return problems


def _length(file: Path, scanned: Scanned, length: int) -> list[StoreProblem]:
    """A file that holds fewer events (as a replay would complete it) than
    its length file records."""
    path = length_path(file)
    try:
        recorded = read_length(path)
    except (SymlinkRefused, NotRegularFile, OSError):
        return []  # a link or FIFO is reported as such; an unreadable file tells nothing
    if recorded is None or length >= recorded:
        return []
    return [StoreProblem(file, _line_of(file, scanned.end), cut_reason(length, recorded, path))]


def _snapshot(path: Path, length: int) -> list[StoreProblem]:
    try:
        head = read_head(path)
        through = None if head is None else through_of(head)
        # A damaged snapshot (its checksum fails) is ignored by the store:
        # derived data, nothing lost.
        if through is None or through <= length or decode_snapshot(read_nofollow(path)) is None:
            return []
    except (SymlinkRefused, NotRegularFile, FileNotFoundError):
        return []  # a link or FIFO is reported as such
    return [
        StoreProblem(
            path,
            0,
            f"the snapshot covers {through} events but the session file holds {length}: "
            "events it covered were lost",
        )
    ]


def _scan(file: Path) -> Scanned | None:
    """The file scanned read-only, or None (a bad line, a link, gone)."""
    try:
        fd = open_nofollow(file, os.O_RDONLY)
    except (OSError, SymlinkRefused, NotRegularFile):
        return None  # a FIFO's own verdict says so
    try:
        scanned = scan_file(fd, file)
    except CorruptStore:
        return None
    finally:
        os.close(fd)
    return scanned if scanned.header is not None else None


def _line_of(file: Path, offset: int) -> int:
    fd = open_nofollow(file, os.O_RDONLY)
    try:
        return line_number(fd, offset)
    finally:
        os.close(fd)
