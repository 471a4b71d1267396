"""One-line errors and exit codes for the CLI: never a traceback, never
a password (a DSN given as an argument or in ``TICKLER_DSN`` may be
quoted by the error; see :mod:`tickler.adapters._redact`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

import click

from tickler.adapters._redact import redact
from tickler.adapters.cli._visible import visible

USAGE = 2


class CliError(click.ClickException):
    """An error the user can act on; printed as one line, exit code 2."""

    exit_code = USAGE


def _one_line(text: str, given: Iterable[str]) -> str:
    """One line, no password of a DSN among ``given`` (the command's
    arguments), and nothing a terminal would obey (a path or id in the
    message may come from a log or a hostile file name)."""
    return visible(" ".join(redact(text, given).split()))


def command_strings() -> list[str]:
    """The text values of the running command's parameters (its DSN among
    them, from an argument or ``TICKLER_DSN``) and of the groups above it:
    what a message must not quote a password of."""
    found = [os.environ.get("TICKLER_DSN", "")]
    context = click.get_current_context(silent=True)
    while context is not None:
        for value in context.params.values():
            values = value if isinstance(value, tuple | list) else (value,)
            found += [v for v in values if isinstance(v, str)]
        context = context.parent
    return found


def echo_error(text: str) -> None:
    """Print ``text`` as the command's one error line on stderr, as
    :func:`run` prints the errors it catches (for the commands that exit 1
    after an error of their own)."""
    click.echo(f"tickler: error: {_one_line(text, command_strings())}", err=True)


def run(command: click.Command, args: list[str]) -> int:
    try:
        result = command.main(args=args, prog_name="tickler", standalone_mode=False)
    except click.exceptions.Abort:
        print("tickler: aborted", file=sys.stderr)
        return 130
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        given = [*args, os.environ.get("TICKLER_DSN", "")]
        print(f"tickler: error: {_one_line(exc.format_message(), given)}", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a CLI answers in one line, never a traceback
        text = f"{type(exc).__name__}: {exc}"
        given = [*args, os.environ.get("TICKLER_DSN", "")]
        print(f"tickler: error: {_one_line(text, given)}", file=sys.stderr)
        return USAGE
    return result if isinstance(result, int) else 0
