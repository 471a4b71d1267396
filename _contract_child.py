"""The other process of the store contract's cross-process lock-out test
(:func:`tickler.testing.try_open_in_child` runs it; it needs no pytest).

    python -m tickler._contract_child TARGET LOCATION SESSION

calls TARGET's function with LOCATION to get a store (or an awaitable of
one), tries to open SESSION for writing, prints ``locked`` or ``opened``,
and closes what it opened. TARGET is ``package.module:function`` (the
function may be a class, or ``Class.method``) or ``path/to/file.py:function``.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from types import ModuleType

from tickler.shell import SessionLocked, SessionStore

USAGE = "usage: python -m tickler._contract_child TARGET LOCATION SESSION"


def _module(name: str) -> ModuleType:
    if not name.endswith(".py"):
        return importlib.import_module(name)
    spec = importlib.util.spec_from_file_location("_tickler_contract_opener", name)
    if spec is None or spec.loader is None:
        raise SystemExit(f"tickler._contract_child: cannot load {name!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look a module up
    spec.loader.exec_module(module)
    return module


def load_opener(target: str) -> Callable[[str], object]:
    """The callable ``target`` names (see the module's docstring)."""
    name, colon, path = target.rpartition(":")
    if not colon or not name or not path:
        raise SystemExit(
            f"tickler._contract_child: {target!r} is not 'package.module:function'"
            " or 'path/to/file.py:function'"
        )
    found: object = _module(name)
    for attribute in path.split("."):
        found = getattr(found, attribute, None)
    if not callable(found):
        raise SystemExit(f"tickler._contract_child: {target!r} is not a callable")
    return found


async def try_open(opener: Callable[[str], object], location: str, session_id: str) -> str:
    made = opener(location)
    store = await made if inspect.isawaitable(made) else made
    if not isinstance(store, SessionStore):
        raise SystemExit(f"tickler._contract_child: {opener!r} gave {store!r}, not a SessionStore")
    try:
        log = await store.open(session_id, created_at=1)
    except SessionLocked:
        return "locked"
    else:
        await log.close()
        return "opened"
    finally:
        await store.close()  # a store holding connections must not outlive the check


def main(argv: list[str]) -> None:
    if len(argv) != 3:
        raise SystemExit(USAGE)
    target, location, session_id = argv
    print(asyncio.run(try_open(load_opener(target), location, session_id)))  # noqa: T201


if __name__ == "__main__":
    main(sys.argv[1:])
