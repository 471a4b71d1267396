"""tickler: durable, exactly-once reminders for LLM agents.

The pure rules live in :mod:`tickler.core`; the asyncio runtime in
:mod:`tickler.shell`; stores, agent frameworks and the CLI in
:mod:`tickler.adapters`.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tickler")
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.0.0"

__all__ = ["__version__"]
