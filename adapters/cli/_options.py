"""Options several commands share, and the stderr log they set up."""

from __future__ import annotations

import logging
import sys
from typing import Final

import click

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


def configure_logging(level: str) -> None:
    """The log on stderr at ``level``: tickler's lines and the warnings of
    the libraries underneath; their per-request INFO lines only at DEBUG."""
    level = level.upper()
    logging.basicConfig(stream=sys.stderr, level=level, format=LOG_FORMAT)
    for name in CHATTY_LIBRARIES:
        logging.getLogger(name).setLevel(logging.NOTSET if level == "DEBUG" else logging.WARNING)
