"""Small file-system steps the durable stores share.

Every sync goes through an injected ``fsync`` so tests can make any of them
fail on demand; nothing here mocks the file system.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeAlias

from tickler.shell import StoreError

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


# Opened without waiting: a FIFO's open waits for its other end, a
# terminal's may become this process's.
_NO_WAIT = os.O_NONBLOCK | os.O_NOCTTY
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def kind_of(mode: int) -> str:
    """What a file whose ``st_mode`` is ``mode`` is, when not a regular
    file: ``a FIFO (named pipe)``, ``a socket``, ..."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


class NotRegularFile(StoreError):
    """A store file is a FIFO, a socket or a device: never read nor
    written, since a read of a FIFO waits for a writer that may never come
    and a device's may never end. ``kind`` says which (:func:`kind_of`)."""

    def __init__(self, path: Path | str, mode: int) -> None:
        self.path = path
        self.kind = kind_of(mode)
        super().__init__(f"{path} is {self.kind}, not a regular file: refused")


def regular_fd(fd: int, path: Path | str) -> int:
    """``fd`` (opened with ``O_NONBLOCK``), blocking again, when it is a
    regular file; else it is closed and :class:`NotRegularFile` raised.
    Checked on the open file, so nothing can be swapped in between."""
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def require_sqlite_files(path: Path, *, created: bool = False) -> None:
    """Raise :class:`NotRegularFile` unless the SQLite database ``path``
    and each of its journals (``-journal``, ``-wal``, ``-shm``) that
    exists is a regular file (a link to one counts): SQLite opens them by
    name, and its open of a FIFO waits for a writer. ``path`` may be
    missing when ``created`` (the store creates it), else OSError. A file
    swapped in after this check is not seen."""
    for name in (path.name, *(path.name + suffix for suffix in ("-journal", "-wal", "-shm"))):
        try:
            mode = path.with_name(name).stat().st_mode
        except FileNotFoundError:
            if name == path.name and not created:
                raise
            continue
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path.with_name(name), mode)


def open_nofollow(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` that refuses a symbolic link at ``path`` (raises
    :class:`SymlinkRefused`) and, but for a directory (``O_DIRECTORY``),
    anything but a regular file (raises :class:`NotRegularFile`, without
    waiting on a FIFO); other failures raise OSError."""
    directory = bool(flags & os.O_DIRECTORY)
    try:
        fd = os.open(
            path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | (0 if directory else _NO_WAIT), mode
        )
    except OSError as exc:
        # O_NOFOLLOW on a link: ELOOP (EMLINK on some BSDs); O_DIRECTORY: ENOTDIR.
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR) and path.is_symlink():
            raise SymlinkRefused(f"{path} is a symbolic link: refused") from None
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO opened to write with no reader
            _refuse_special(path)
        raise
    return fd if directory else regular_fd(fd, path)


def _refuse_special(path: Path) -> None:
    """After an open failed with ENXIO: NotRegularFile when ``path`` is
    no regular file (else the caller raises the OSError)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        raise NotRegularFile(path, mode) from None


def open_regular(path: Path | str) -> BinaryIO:
    """A file outside a store's own files (a session file given by name,
    one the read model reads) opened for reading, following a link; raises
    :class:`NotRegularFile`, without waiting, for a FIFO, socket or device
    (OSError when it cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | _NO_WAIT)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            _refuse_special(Path(path))
        raise
    return os.fdopen(regular_fd(fd, path), "rb")


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
