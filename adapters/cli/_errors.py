"""One-line errors and exit codes for the CLI: never a traceback."""

from __future__ import annotations

import sys

import click

from tickler.adapters.cli._visible import visible

USAGE = 2


class CliError(click.ClickException):
    """An error the user can act on; printed as one line, exit code 2."""

    exit_code = USAGE


def _one_line(text: str) -> str:
    """One line, and nothing a terminal would obey (a path or id in the
    message may come from a log or a hostile file name)."""
    return visible(" ".join(text.split()))


def run(command: click.Command, args: list[str]) -> int:
    try:
        result = command.main(args=args, prog_name="tickler", standalone_mode=False)
    except click.exceptions.Abort:
        print("tickler: aborted", file=sys.stderr)
        return 130
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        print(f"tickler: error: {_one_line(exc.format_message())}", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a CLI answers in one line, never a traceback
        print(f"tickler: error: {_one_line(f'{type(exc).__name__}: {exc}')}", file=sys.stderr)
        return USAGE
    return result if isinstance(result, int) else 0
