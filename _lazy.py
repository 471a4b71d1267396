"""Names a package exports but imports on first use (PEP 562): one helper
for the facades (``tickler``, ``tickler.adapters``, ``tickler.adapters.stores``),
so that a name needing an extra costs nothing until it is used.

A leaf module (it imports nothing of tickler), like ``_version``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    namespace: dict[str, Any], homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package whose globals are
    ``namespace``: ``homes`` maps each lazy name to the module that defines
    it; a name is imported on first access and kept in ``namespace`` (later
    lookups skip ``__getattr__``); ``dir()`` shows the public names
    (``__all__``) only, not the helpers the package imports."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(namespace["__all__"])

    return __getattr__, __dir__
