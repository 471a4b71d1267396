"""Finding session files: a file as given, a tickler store directory, or a
harness root walked for ``<project>/<session>/session.jsonl[.zstd]``.

A directory is walked without following symbolic links, in sorted order, so
every run reports the same files in the same order. In a tickler store the
session files are its ``*.jsonl``; anywhere else, the files named as the
harness names its logs, plus any ``*.jsonl``/``*.jsonl.zstd`` given at the
top of the walked directory (a flat folder of session files).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tickler.adapters.cli._harness import LOG_NAMES
from tickler.adapters.stores._verify import is_store_dir

FLAT_SUFFIXES: Final = (".jsonl", ".jsonl.zstd")


@dataclass(frozen=True)
class Source:
    """One session file to check."""

    path: str
    in_store: bool  # inside a tickler store directory (a torn tail may be a crash's)
    harness: bool  # found by a walk as ROOT/<project>/<session>/session.jsonl[.zstd]


@dataclass(frozen=True)
class Found:
    sources: list[Source]
    stores: list[str]  # tickler store directories met, to verify as a whole


class NothingToCheck(Exception):
    """A directory holding no session file."""


def source_for_file(path: str) -> Source:
    """A file given by name: a harness log when named as the harness names
    them (its directory is then checked as a walk checks it)."""
    in_store = _is_store(Path(path).parent)
    return Source(path, in_store=in_store, harness=not in_store and Path(path).name in LOG_NAMES)


def find(directory: str) -> Found:
    """Every session file under ``directory``; raises OSError when it cannot
    be listed and NothingToCheck when it holds no session file."""
    top = Path(directory)
    if _is_store(top):
        found = Found(_store_files(top), [directory])
    else:
        found = Found([], [])
        next(top.iterdir(), None)  # an unlistable root is an error, not "nothing found"
        _walk(top, found)
    if not found.sources:
        raise NothingToCheck(
            f"{directory}: no session files (looked for <project>/<session>/session.jsonl"
            "[.zstd], *.jsonl, or a tickler store)"
        )
    return found


def _walk(top: Path, found: Found) -> None:
    for here, dirs, files in os.walk(top, onerror=None, followlinks=False):
        dirs.sort()
        folder = Path(here)
        stores = [name for name in dirs if _is_store(folder / name)]
        for name in stores:
            found.sources.extend(_store_files(folder / name))
            found.stores.append(str(folder / name))
        dirs[:] = [name for name in dirs if name not in stores]
        for name in sorted(files):
            path = folder / name
            if name in LOG_NAMES and _is_file(path):
                found.sources.append(Source(str(path), in_store=False, harness=True))
            elif folder == top and name.endswith(FLAT_SUFFIXES) and _is_file(path):
                found.sources.append(Source(str(path), in_store=False, harness=False))


def _store_files(store: Path) -> list[Source]:
    return [
        Source(str(path), in_store=True, harness=False)
        for path in sorted(store.glob("*.jsonl"))
        if _is_file(path)
    ]


def _is_file(path: Path) -> bool:
    """A file to check: a regular one (or a link to one), or a FIFO,
    socket or device, which its check reports without reading it."""
    if path.is_file():
        return True
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False
    return not (stat.S_ISDIR(mode) or stat.S_ISLNK(mode) or stat.S_ISREG(mode))


def _is_store(path: Path) -> bool:
    try:
        return is_store_dir(path)
    except OSError:
        return False
