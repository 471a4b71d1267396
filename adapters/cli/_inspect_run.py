"""``tickler inspect PATH``: a report per session file, for a file or a
directory (a tickler store, a harness root); problems one line each on
stderr, exit codes as for ``check``."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

import click
from rich.text import Text

from tickler.adapters._times import zone_text
from tickler.adapters.cli._check import CORRUPT, Examined, FileVerdict, examine_paths, exit_code
from tickler.adapters.cli._errors import CliError
from tickler.adapters.cli._inspect import Report, inspect_session
from tickler.adapters.cli._output import console, print_json, print_report
from tickler.adapters.cli._visible import visible
from tickler.adapters.cli._why import Story, reminder_story
from tickler.core import CorruptScheduleLog, parse_instant


def _report(found: Examined, now_ms: int, zone: ZoneInfo) -> tuple[FileVerdict, Report | None]:
    """The file's report, when its events can be shown (a valid log, or one
    whose only fault is a torn tail: its complete lines are shown)."""
    verdict, parsed = found.verdict, found.parsed
    if parsed is None:
        return verdict, None
    try:
        return verdict, inspect_session(parsed, now_ms, zone)
    except CorruptScheduleLog as exc:  # a malformed runtime record: file:line, like check
        line = None if exc.index is None else parsed.lines[exc.index]
        corrupt = FileVerdict(verdict.path, CORRUPT, line, exc.reason, session=verdict.session)
        return corrupt, None
    except Exception as exc:  # noqa: BLE001 - this file's problem only
        reason = f"cannot be shown: {type(exc).__name__}: {exc}"
        return FileVerdict(verdict.path, CORRUPT, reason=reason, session=verdict.session), None


def inspect_paths(path: str, now_ms: int, zone: ZoneInfo, *, as_json: bool) -> int:
    found = examine_paths([path])
    return inspect_found(found, now_ms, zone, as_json=as_json, single=not Path(path).is_dir())


def inspect_found(
    found: list[Examined], now_ms: int, zone: ZoneInfo, *, as_json: bool, single: bool
) -> int:
    """Report each examined session (one alone when ``single``)."""
    results = [_report(item, now_ms, zone) for item in found]
    verdicts = [verdict for verdict, _ in results]
    if as_json:
        if single:
            reports = [report for _, report in results if report is not None]
            if reports:
                print_json(reports[0].as_json())
        else:
            print_json({"sessions": [_entry(verdict, report) for verdict, report in results]})
    else:
        out = console()
        for verdict, report in results:
            if report is None:
                continue
            if not single:
                out.print(Text(f"\n{verdict.label}", style="bold"))
            print_report(report, out)
    for verdict, _ in results:
        if verdict.status != 0 or verdict.torn_tail:
            click.echo(f"tickler: {verdict.as_text()}", err=True)
    return exit_code(verdicts)


def _entry(verdict: FileVerdict, report: Report | None) -> dict[str, object]:
    entry = verdict.as_json()
    if report is not None:
        entry["report"] = report.as_json()
    return entry


def _story(found: Examined, schedule_id: str, now_ms: int) -> tuple[FileVerdict, Story | None]:
    """The reminder's story in one file, when its log can be read and it
    created that reminder."""
    verdict, parsed = found.verdict, found.parsed
    if parsed is None:
        return verdict, None
    try:
        story = reminder_story(parsed, schedule_id, now_ms)
    except CorruptScheduleLog as exc:
        line = None if exc.index is None else parsed.lines[exc.index]
        return FileVerdict(verdict.path, CORRUPT, line, exc.reason, session=verdict.session), None
    return verdict, story if story.found else None


def why_paths(path: str, schedule_id: str, now_ms: int, zone: ZoneInfo, *, as_json: bool) -> int:
    """``inspect --why``: the story of ``schedule_id`` in every session of
    ``path`` that created it; exit 2 when none did."""
    return why_found(examine_paths([path]), path, schedule_id, now_ms, zone, as_json=as_json)


def why_found(
    found: list[Examined],
    source: str,
    schedule_id: str,
    now_ms: int,
    zone: ZoneInfo,
    *,
    as_json: bool,
) -> int:
    """The story of ``schedule_id`` in each examined session that created
    it (files, an SQLite store or a PostgreSQL schema); exit 2 when none did."""
    path = source
    results = [_story(item, schedule_id, now_ms) for item in found]
    stories = [story for _, story in results if story is not None]
    if as_json:
        print_json({"stories": [story.as_json() for story in stories]})
    else:
        for story in stories:
            print_story(story, zone)
    for verdict, _ in results:
        if verdict.status != 0 or verdict.torn_tail:
            click.echo(f"tickler: {verdict.as_text()}", err=True)
    code = exit_code([verdict for verdict, _ in results])
    if not stories and code == 0:
        raise CliError(f"no session in {path} ever created a reminder {schedule_id!r}")
    return code


def print_story(story: Story, zone: ZoneInfo) -> None:
    click.echo(
        f"reminder {visible(story.id)} in session {visible(story.session)} (now {story.now})"
    )
    for step in story.steps:
        local = zone_text(parse_instant(step.at), zone)
        click.echo(f"  {step.at} ({local})  {step.event:<15} {visible(step.text)}")
    click.echo(f"  {visible(story.status)}")
