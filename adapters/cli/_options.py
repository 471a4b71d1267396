"""Options several commands share, and the stderr log they set up."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import Final

import click

from tickler.adapters._redact import Redaction
from tickler.adapters.cli._errors import command_strings

LOG_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Libraries that log every request at INFO (httpx: one line per URL
# delivery): shown from WARNING up, unless the log is at DEBUG.
CHATTY_LIBRARIES: Final = ("httpx", "httpcore")

log_level_option = click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="INFO",
    show_default=True,
    help="Level of the log on stderr.",
)

profile_option = click.option(
    "--profile",
    type=click.Choice(["reference", "extended"]),
    default="extended",
    show_default=True,
    help="The tool contract: reference (the exact v1 tools and events) or extended "
    "(calendar reminders, schedule_update, request_id, nextOccurrences).",
)

log_format_option = click.option(
    "--log-format",
    type=click.Choice(["text", "json"], case_sensitive=False),
    default="text",
    show_default=True,
    help="The log on stderr as text lines, or one JSON object per line.",
)


def log_formatter(log_format: str) -> logging.Formatter:
    """``text``: :data:`LOG_FORMAT` lines; ``json``: one JSON object a line
    (:class:`~tickler.adapters.cli._jsonlog.JsonFormatter`)."""
    if log_format.lower() == "json":
        from tickler.adapters.cli._jsonlog import JsonFormatter

        return JsonFormatter()
    return logging.Formatter(LOG_FORMAT)


class _Redacting(logging.Filter):
    """Every line without a password of the command's DSN (a library's
    warning may quote its connection's error), its traceback included."""

    def __init__(self, given: Iterable[str]) -> None:
        super().__init__()
        self._redact = Redaction(given)

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = self._redact(record.getMessage()), None
        if record.exc_info:
            trace = logging.Formatter().formatException(record.exc_info)
            record.exc_info, record.exc_text = None, self._redact(trace)
        elif record.exc_text:
            record.exc_text = self._redact(record.exc_text)
        return True


def configure_logging(level: str, log_format: str = "text") -> None:
    """The log on stderr at ``level``, in ``log_format``: tickler's lines
    and the warnings of the libraries underneath; their per-request INFO
    lines only at DEBUG. No line holds the password of a DSN the command
    was given."""
    level = level.upper()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(log_formatter(log_format))
    handler.addFilter(_Redacting(command_strings()))
    logging.basicConfig(level=level, handlers=[handler])
    for name in CHATTY_LIBRARIES:
        logging.getLogger(name).setLevel(logging.NOTSET if level == "DEBUG" else logging.WARNING)
