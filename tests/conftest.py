"""Hypothesis profiles for every test that uses it.

``TICKLER_HYPOTHESIS_PROFILE`` selects one:

* ``ci`` (default, what ``make test`` runs): derandomized. Each property draws
  the same examples on every run and every machine, so no run of the suite
  depends on the luck of the draw; no example database is read or written.
* ``explore`` (``make test-explore``): random draws, several times the
  examples, failures kept in the repository's (git-ignored) example database
  and replayed first next time. Run it after touching a rule; a failure it
  finds becomes an ``@example`` or a unit test.
* ``long``: a soak run of ``explore``, for before a release.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

# ``async def`` tests run on a fresh event loop each, by the plugin that
# ships with the store contract, as they do in a user's project.
pytest_plugins = ["tickler.testing"]

_DATABASE = DirectoryBasedExampleDatabase(
    Path(__file__).resolve().parents[1] / ".hypothesis" / "examples"
)
_COMMON = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

settings.register_profile(
    "ci",
    _COMMON,
    max_examples=40,
    stateful_step_count=25,
    derandomize=True,
    database=None,
    print_blob=True,
)
settings.register_profile(
    "explore", _COMMON, max_examples=300, stateful_step_count=40, database=_DATABASE
)
settings.register_profile(
    "long", _COMMON, max_examples=6000, stateful_step_count=100, database=_DATABASE
)
settings.load_profile(os.environ.get("TICKLER_HYPOTHESIS_PROFILE", "ci"))
