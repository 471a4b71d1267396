"""The error an adapter raises when its framework's extra is not installed."""

from __future__ import annotations


def missing_extra(framework: str, extra: str) -> ImportError:
    """The error an adapter raises when its framework is not installed."""
    return ImportError(
        f"tickler's {framework} adapter needs the extra: pip install 'tickler-agents[{extra}]'"
    )
