"""Hypothesis profiles for the property tests.

``TICKLER_HYPOTHESIS_PROFILE`` selects one:

* ``dev`` (default): quick, the whole folder in well under a minute on 2 cores;
* ``ci``: several times the examples, no example database, failures print a blob;
* ``long``: a soak run, for before a release or after touching the core.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

# The repository's own (git-ignored) example database, wherever pytest runs from.
_DATABASE = DirectoryBasedExampleDatabase(
    Path(__file__).resolve().parents[2] / ".hypothesis" / "examples"
)
_COMMON = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

settings.register_profile(
    "dev", _COMMON, max_examples=40, stateful_step_count=25, database=_DATABASE
)
settings.register_profile(
    "ci", _COMMON, max_examples=300, stateful_step_count=40, database=None, print_blob=True
)
settings.register_profile(
    "long", _COMMON, max_examples=6000, stateful_step_count=100, database=_DATABASE
)
settings.load_profile(os.environ.get("TICKLER_HYPOTHESIS_PROFILE", "dev"))
