"""Figures the reliability tests report at the end of the run."""

from __future__ import annotations

import pytest

_FIGURES: dict[str, int] = {}


@pytest.fixture
def reliability_figures() -> dict[str, int]:
    """Put figures here; they are printed in the run's summary."""
    return _FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for name, value in _FIGURES.items():
        terminalreporter.write_line(f"reliability: {name}: {value}")
