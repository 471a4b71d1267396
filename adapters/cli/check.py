"""``tickler check``: the invariant checker over session files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from returns.pipeline import is_successful

from tickler.core import SessionFileError, check_log, parse_session_jsonl

VALID, CORRUPT, UNREADABLE = 0, 1, 2


@dataclass(frozen=True)
class FileVerdict:
    path: str
    status: int  # VALID, CORRUPT or UNREADABLE
    line: int | None = None
    reason: str | None = None
    events: int = 0
    active: int = 0
    torn_tail: bool = False

    def as_json(self) -> dict[str, object]:
        label = {VALID: "valid", CORRUPT: "corrupt", UNREADABLE: "unreadable"}[self.status]
        out: dict[str, object] = {"path": self.path, "status": label}
        if self.line is not None:
            out["line"] = self.line
        if self.reason is not None:
            out["reason"] = self.reason
        if self.status == VALID:
            out.update(events=self.events, active=self.active, tornTail=self.torn_tail)
        return out

    def as_text(self) -> str:
        if self.status == VALID:
            note = "; a torn final line (crash mid-write) was ignored" if self.torn_tail else ""
            return f"{self.path}: valid ({self.events} events, {self.active} active){note}"
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.reason}"


def check_file(path: str) -> FileVerdict:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return FileVerdict(path, UNREADABLE, reason=f"cannot read: {exc.strerror or exc}")
    try:
        parsed = parse_session_jsonl(data)
    except SessionFileError as exc:
        status = UNREADABLE if exc.line == 1 and "header" in exc.reason else CORRUPT
        return FileVerdict(path, status, line=exc.line, reason=exc.reason)
    result = check_log(parsed.events, parsed.header.owned_from)
    if not is_successful(result):
        failure = result.failure()
        line = None if failure.index is None else parsed.lines[failure.index]
        return FileVerdict(path, CORRUPT, line=line, reason=failure.reason)
    state = result.unwrap()
    return FileVerdict(
        path,
        VALID,
        events=len(parsed.events),
        active=len(state.entries),
        torn_tail=parsed.torn_tail is not None,
    )
