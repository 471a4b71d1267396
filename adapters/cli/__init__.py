"""The ``tickler`` command line."""

from __future__ import annotations

import sys

from tickler.adapters.cli._app import cli
from tickler.adapters.cli._errors import run


def main(argv: list[str] | None = None) -> None:
    """Entry point: errors are one line on stderr and exit code 2."""
    sys.exit(run(cli, sys.argv[1:] if argv is None else argv))


__all__ = ["cli", "main"]
