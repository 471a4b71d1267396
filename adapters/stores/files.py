"""Small file-system steps the durable stores share.

Every sync goes through an injected ``fsync`` so tests can make any of them
fail on demand; nothing here mocks the file system.
"""

from __future__ import annotations

import os
import secrets
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


def pwrite_all(fd: int, data: bytes, offset: int) -> None:
    """``write_all`` at ``offset`` (the file's own position unused)."""
    written = os.pwrite(fd, data, offset)
    if written != len(data):
        raise OSError(f"short write: {written} of {len(data)} bytes")


def sync_dir(path: Path, fsync: Fsync) -> None:
    """Make the directory's entries (a created, renamed or removed file)
    durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fsync(fd)
    finally:
        os.close(fd)


def sync_path(path: Path, fsync: Fsync) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
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


def replace_atomically(path: Path, data: bytes, fsync: Fsync, dir_fd: int | None = None) -> None:
    """Write ``data`` to ``path`` so that a crash leaves the old file or the
    new one, never a mix: temporary file, fsync, rename, directory fsync
    (through ``dir_fd`` when given, the directory's open descriptor)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        write_all(fd, data)
        fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    tmp.replace(path)
    if dir_fd is None:
        sync_dir(path.parent, fsync)
    else:
        fsync(dir_fd)


def open_dir(path: Path) -> int:
    """A descriptor for syncing the directory's entries without opening it
    each time (an open can fail for want of descriptors; this one is held)."""
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def store_error(what: str, exc: BaseException) -> StoreError:
    """A StoreError that says what failed and why, chained by the caller."""
    return StoreError(f"{what}: {exc}")
