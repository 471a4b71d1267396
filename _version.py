"""tickler's version: a leaf module (it imports nothing), so that any layer
may read it without importing the package's facade, and the packaging reads
it too (``[tool.setuptools.dynamic]`` in pyproject.toml): one source."""

from __future__ import annotations

from typing import Final

__version__: Final = "0.1.0"
