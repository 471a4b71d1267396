"""Small file-system steps the durable stores share.

Every sync goes through an injected ``fsync`` so tests can make any of them
fail on demand; nothing here mocks the file system.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from tickler.shell.ports import StoreError

Fsync: TypeAlias = Callable[[int], None]


def write_all(fd: int, data: bytes) -> None:
    """One ``write`` of the whole buffer; a short write is an error (the
    caller truncates back), so a batch never lands in two pieces."""
    written = os.write(fd, data)
    if written != len(data):
        raise OSError(f"short write: {written} of {len(data)} bytes")


def sync_dir(path: Path, fsync: Fsync) -> None:
    """Make the directory's entries (a created, renamed or removed file)
    durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fsync(fd)
    finally:
        os.close(fd)


def sync_path(path: Path, fsync: Fsync) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        fsync(fd)
    finally:
        os.close(fd)


def make_dir(path: Path, fsync: Fsync) -> None:
    """Create ``path`` (and parents) durably, if absent."""
    if path.is_dir():
        return
    make_dir(path.parent, fsync)
    try:
        path.mkdir()
    except FileExistsError:
        return
    sync_dir(path.parent, fsync)


def replace_atomically(path: Path, data: bytes, fsync: Fsync) -> None:
    """Write ``data`` to ``path`` so that a crash leaves the old file or the
    new one, never a mix: temporary file, fsync, rename, directory fsync."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_all(fd, data)
        fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    tmp.replace(path)
    sync_dir(path.parent, fsync)


def store_error(what: str, exc: BaseException) -> StoreError:
    """A StoreError that says what failed and why, chained by the caller."""
    return StoreError(f"{what}: {exc}")
