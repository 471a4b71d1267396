"""Fixtures for the store tests: one store factory per backend. ``async
def`` tests (functions or methods) run on a fresh event loop, by the
``tickler.testing`` plugin (tests/conftest.py names it)."""

from __future__ import annotations

import errno
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._memory import MemoryStore
from tickler.adapters.stores._sqlite import SqliteStore
from tickler.shell._ports import SessionStore
from tickler.testing import new_events as new_events  # noqa: PLC0414 - re-exported for the store tests

from .pgsupport import FIGURES

CHILD = Path(__file__).with_name("store_child.py")
DURABLE = ("jsonl", "sqlite")
CLASSES = {"jsonl": "JsonlStore", "sqlite": "SqliteStore"}


def store_path(kind: str, root: Path) -> Path:
    return root / ("sessions.db" if kind == "sqlite" else "sessions")


def make_store(kind: str, root: Path) -> SessionStore:
    if kind == "jsonl":
        return JsonlStore(store_path(kind, root))
    if kind == "sqlite":
        return SqliteStore(store_path(kind, root))
    raise ValueError(kind)


@dataclass
class Stores:
    """Opens stores of one kind over the same storage. ``reopen`` gives a
    new store instance (memory: the same one, its only storage)."""

    kind: str
    root: Path
    _memory: MemoryStore | None = None

    @property
    def durable(self) -> bool:
        return self.kind in DURABLE

    @property
    def path(self) -> Path:
        return store_path(self.kind, self.root)

    def open(self) -> SessionStore:
        if self.kind == "memory":
            if self._memory is None:
                self._memory = MemoryStore()
            return self._memory
        return make_store(self.kind, self.root)

    # -- the contract's DurableStoreBackend (tickler.testing) --

    async def open_store(self) -> SessionStore:
        return self.open()

    async def footprint(self) -> frozenset[str]:
        """Every path in the test directory holding the root, so a stray
        file beside the root counts too."""
        return frozenset(tree(self.root.parent))

    def child_spec(self) -> tuple[str, str]:
        """The public store class itself opens the storage in the child."""
        if self.kind not in CLASSES:
            raise ValueError(f"{self.kind} storage is this process's own")
        return (f"tickler.adapters.stores:{CLASSES[self.kind]}", str(self.path))


@pytest.fixture(params=["memory", *DURABLE])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    return Stores(str(request.param), tmp_path / "data")


@pytest.fixture(params=DURABLE)
def durable(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    return Stores(str(request.param), tmp_path / "data")


def run_child(*args: str) -> str:
    """Run the helper script in a child process; its stdout."""
    done = subprocess.run(
        [sys.executable, str(CHILD), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "PYTHONTZPATH": ""},
    )
    return done.stdout


def tree(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


class FileSizeLimit:
    """RLIMIT_FSIZE, a real write failure: past the limit a write is cut
    short, or fails with EFBIG (SIGXFSZ is ignored meanwhile)."""

    def __init__(self) -> None:
        self._soft, self._hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    def cap(self, size: int) -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, self._hard))

    def lift(self) -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (self._soft, self._hard))


@pytest.fixture
def fsize_limit() -> Iterator[FileSizeLimit]:
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = FileSizeLimit()
    try:
        yield limit
    finally:
        limit.lift()
        signal.signal(signal.SIGXFSZ, previous)


class FlakyFsync:
    """A real ``os.fsync`` that raises EIO, on demand, for chosen kinds of
    file: ``journal`` (.wal), ``session`` (.jsonl), ``length`` (.length),
    ``dir``, ``other``."""

    KINDS = ("journal", "session", "length", "dir", "other")

    def __init__(self) -> None:
        self.failing: set[str] = set()
        self.calls: list[str] = []

    def __call__(self, fd: int) -> None:
        kind = self.kind(fd)
        self.calls.append(kind)
        if kind in self.failing:
            raise OSError(errno.EIO, f"injected fsync failure ({kind})")
        os.fsync(fd)

    def fail(self, *kinds: str) -> None:
        self.failing = set(kinds or self.KINDS)

    def heal(self) -> None:
        self.failing = set()

    @staticmethod
    def kind(fd: int) -> str:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            return "dir"
        target = str(Path(f"/proc/self/fd/{fd}").readlink())
        if target.endswith(".wal"):
            return "journal"
        if target.endswith(".jsonl"):
            return "session"
        if target.endswith(".length"):
            return "length"
        return "other"


def open_fds() -> int:
    """Descriptors this process holds."""
    return sum(1 for _ in Path("/proc/self/fd").iterdir())


class DescriptorLimit:
    """RLIMIT_NOFILE lowered to the lowest free descriptor number: a real
    EMFILE for every open, socket or dup until ``lift()``."""

    def __init__(self) -> None:
        self._soft, self._hard = resource.getrlimit(resource.RLIMIT_NOFILE)

    def exhaust(self) -> None:
        lowest = os.open(os.devnull, os.O_RDONLY)  # the kernel hands out the lowest free number
        os.close(lowest)
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowest, self._hard))

    def lift(self) -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (self._soft, self._hard))


@pytest.fixture
def fd_limit() -> Iterator[DescriptorLimit]:
    limit = DescriptorLimit()
    try:
        yield limit
    finally:
        limit.lift()


class GatedFsync:
    """A real ``os.fsync`` that holds every session file's sync (``.jsonl``)
    until the gate opens; ``held`` is set once one waits there."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.held = threading.Event()

    def __call__(self, fd: int) -> None:
        if FlakyFsync.kind(fd) == "session" and not self.gate.is_set():
            self.held.set()
            self.gate.wait()
        os.fsync(fd)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for name, value in FIGURES.items():
        terminalreporter.write_line(f"postgres: {name}: {value:g}")
