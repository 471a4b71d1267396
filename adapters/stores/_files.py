"""Small file-system steps the durable stores share.

Every sync goes through an injected ``fsync`` so tests can make any of them
fail on demand; nothing here mocks the file system.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeAlias

from tickler.shell._ports import StoreError

Fsync: TypeAlias = Callable[[int], None]


class CorruptStore(StoreError):
    """The store's files prove that something was lost or altered: a line,
    a journal record, a snapshot beyond its log. Reported, never repaired:
    nothing is dropped or deleted. ``line`` is 1-based, 0 when the damage is
    not a line (a journal byte, a snapshot)."""

    def __init__(self, path: Path, line: int, reason: str) -> None:
        super().__init__(f"{path}: line {line}: {reason}" if line else f"{path}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class SymlinkRefused(StoreError):
    """A store file or directory is a symbolic link: never followed, so a
    planted link cannot make the store read or write outside its directory."""


def open_nofollow(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` that refuses a symbolic link at ``path`` (raises
    :class:`SymlinkRefused`; other failures raise OSError)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        # O_NOFOLLOW on a link: ELOOP (EMLINK on some BSDs); O_DIRECTORY: ENOTDIR.
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR) and path.is_symlink():
            raise SymlinkRefused(f"{path} is a symbolic link: refused") from None
        raise


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
    fd = open_nofollow(path, os.O_RDONLY)
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
    new one, never a mix: temporary file (:func:`temp_path`), fsync, rename,
    directory fsync (through ``dir_fd`` when given, the directory's open
    descriptor). One writer per ``path`` at a time (the caller's lock); a
    temporary file a crash left is overwritten, a symbolic link refused."""
    tmp = temp_path(path)
    fd = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
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


def temp_path(path: Path) -> Path:
    """Where :func:`replace_atomically` writes ``path``'s next version: a
    fixed name, so whoever holds ``path``'s lock finds and removes what a
    crash left there."""
    return path.with_name(f".{path.name}.tmp")


def open_dir(path: Path, *, follow: bool = True) -> int:
    """A descriptor for syncing the directory's entries without opening it
    each time (an open can fail for want of descriptors; this one is held).
    ``follow=False`` refuses a symbolic link (a directory inside the store)."""
    if follow:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    return open_nofollow(path, os.O_RDONLY | os.O_DIRECTORY)


def reader(path: Path) -> BinaryIO:
    """A store file opened for reading, refusing a symbolic link
    (FileNotFoundError when absent)."""
    return os.fdopen(open_nofollow(path, os.O_RDONLY), "rb")


def read_nofollow(path: Path) -> bytes:
    """A whole store file, refusing a symbolic link (FileNotFoundError when
    absent)."""
    with reader(path) as file:
        return file.read()


def store_error(what: str, exc: BaseException) -> StoreError:
    """A StoreError that says what failed and why, chained by the caller."""
    return StoreError(f"{what}: {exc}")
