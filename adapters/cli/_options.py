"""Options several commands share."""

from __future__ import annotations

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
