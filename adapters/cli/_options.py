"""Options several commands share."""

from __future__ import annotations

import logging
import sys
from typing import Final

import click

LOG_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
"""The one log line format of the long-running commands (mcp, worker)."""

log_level_option = click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="INFO",
    show_default=True,
    help="Level of the log on stderr.",
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


def configure_logging(level: str, log_format: str = "text") -> None:
    """The log on stderr at ``level``, in ``log_format``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(log_formatter(log_format))
    logging.basicConfig(level=level.upper(), handlers=[handler])
