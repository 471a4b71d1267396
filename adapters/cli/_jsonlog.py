"""``--log-format json``: one JSON object per log line.

Keys: ``time`` (UTC, ISO 8601 with milliseconds), ``level``, ``logger``,
``message``; then the span attributes known where the line was written
(``tickler.session.id``, ``tickler.occurrence.key``, from the log context
or a record's ``extra``), ``trace_id`` and ``span_id`` inside a recording
span, and ``exception`` (the formatted traceback) when there is one.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Final

from tickler.shell import OCCURRENCE_KEY, SESSION_ID, log_fields

_ATTRIBUTES: Final = (SESSION_ID, OCCURRENCE_KEY)


class JsonFormatter(logging.Formatter):
    """A log record as one line of JSON (non-ASCII and control characters
    escaped, so a line is always one line)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC)
        line: dict[str, object] = {
            "time": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(log_fields())
        for key in _ATTRIBUTES:  # given with the record (extra=...) wins
            value = record.__dict__.get(key)
            if value is not None:
                line[key] = str(value)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line)
