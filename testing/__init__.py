"""Testing with tickler: the store contract, one test suite for every
``SessionStore`` (tickler's own and yours); :func:`replay`, a log checked
the way ``tickler check`` checks one, and :func:`session_file`, events as a
session file; and, in
:mod:`tickler.testing.strategies`, Hypothesis strategies for tool calls and
for valid and damaged session logs (see "Property-based replay tests of
your own", docs/property-tests.md).

A store joins by subclassing :class:`StoreContract` (its storage is the store
instance, e.g. memory) or :class:`DurableStoreContract` (its storage outlives
an instance: it adds the lock-out tests for a second store and for another
process) in a ``test_*.py`` module, and overriding one fixture, ``backend``,
that returns a :class:`StoreBackend` (:class:`DurableStoreBackend`) over
fresh, empty storage:

- ``async open_store() -> SessionStore``: a store over that storage; a NEW
  instance each call for a durable store, the same one otherwise;
- ``async footprint() -> object``: an ``==``-comparable snapshot of all that
  exists in the storage (files, rows), so a refused open is seen to leave
  nothing behind;
- ``child_spec() -> tuple[str, str]`` (durable only): ``(target, location)``
  from which another Python process opens the same storage: ``target`` is
  ``"package.module:function"`` or ``"path/to/file.py:function"``, a
  function (or class) that takes ``location`` and returns the store or an
  awaitable of it. The child process sees this process's ``sys.path``.

The test methods are ``async def``, each run on a fresh event loop by this
module's pytest plugin: name it once in the top-level ``conftest.py``::

    pytest_plugins = ["tickler.testing"]

(or run ``pytest -p tickler.testing``). It runs every ``async def`` test that
no other async plugin claims (a test marked ``asyncio``, ``anyio`` or
``trio`` is left to its own plugin). So open loop-bound resources such as
connections in ``open_store``, never in a fixture; fixtures are plain (sync)
functions, and a class-scoped one must be a ``@classmethod``. For a
hypothetical key-value store::

    class KvBackend:
        def __init__(self, url: str) -> None:
            self.url = url

        async def open_store(self) -> SessionStore:
            return await KvStore.connect(self.url)

        async def footprint(self) -> object:
            return sorted(kv_keys(self.url))

        def child_spec(self) -> tuple[str, str]:
            return ("kvstore:KvStore.connect", self.url)


    class TestKvStoreContract(DurableStoreContract):
        @pytest.fixture
        def backend(self) -> Iterator[DurableStoreBackend]:
            url = create_namespace()  # its own, so parallel runs never collide
            yield KvBackend(url)
            drop_namespace(url)

Errors say what they are about: :class:`~tickler.shell.SessionLocked` names
the session, an append to a closed log raises ``StoreError`` saying
"closed", a snapshot beyond the log ``StoreError`` saying "beyond", and an
event that would not read back (data that is not one line of JSON, a
negative time) ``ValueError`` saying "read back" or "one line".

pytest (and, for the strategies, Hypothesis) is a test-time dependency:
``pip install 'tickler-agents[testing]'``.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import subprocess
import sys
from typing import ClassVar, Literal, Protocol

try:
    import pytest
except ImportError as error:  # pytest is no dependency of tickler itself
    raise ImportError(
        "tickler.testing needs pytest: pip install 'tickler-agents[testing]'"
    ) from error

from tickler.shell import (
    InvalidSessionId,
    NewEvent,
    SessionLocked,
    SessionLog,
    SessionStore,
    Snapshot,
    StoreError,
)
from tickler.testing._files import session_file
from tickler.testing._replay import replay

__all__ = [
    "DurableStoreBackend",
    "DurableStoreContract",
    "StoreBackend",
    "StoreContract",
    "expected",
    "new_events",
    "replay",
    "session_file",
    "summary",
    "try_open_in_child",
]

_BAD_SESSION_IDS: tuple[object, ...] = (
    "",
    ".",
    "..",
    "../x",
    "a/b",
    "/abs",
    ".hidden",
    "a" * 201,
    "a\x00b",
    7,
    None,
)
"""Session ids every store refuses with ``InvalidSessionId``."""

# Markers of the async plugins that run their own tests.
_OTHER_RUNNERS = ("asyncio", "anyio", "trio")
_CHILD = "tickler._contract_child"


class StoreBackend(Protocol):
    """The storage one contract test runs against (fresh and empty)."""

    async def open_store(self) -> SessionStore:
        """A store over this storage: a new instance each call when durable,
        else the same instance (it is the storage)."""
        ...

    async def footprint(self) -> object:
        """All that exists in the storage, comparable with ``==``."""
        ...


class DurableStoreBackend(StoreBackend, Protocol):
    """Storage that outlives a store instance, reachable from another process."""

    def child_spec(self) -> tuple[str, str]:
        """``(target, location)``: ``target`` (``"package.module:function"``
        or ``"path/to/file.py:function"``) called with ``location`` in
        another process opens a store over the same storage."""
        ...


def new_events(count: int, *, start: int = 0, kind: str = "note") -> list[NewEvent]:
    """``count`` events numbered from ``start``; their data is JSON that says
    its number (and holds non-ASCII text), their time ``1000 + number``."""
    return [
        NewEvent(kind, f'{{"n":{start + index},"text":"é ✓"}}'.encode(), 1_000 + start + index)
        for index in range(count)
    ]


def summary(log: SessionLog, start: int = 0) -> list[tuple[int, str, int, bytes]]:
    """``(seq, type, time, data)`` of each event of ``log`` from ``start``."""
    return [(item.seq, item.type, item.time, bytes(item.data)) for item in log.events(start)]


def expected(events: list[NewEvent], start: int = 0) -> list[tuple[int, str, int, bytes]]:
    """What :func:`summary` gives for a log holding ``events`` from seq 0."""
    return [(seq, item.type, item.time, item.data) for seq, item in enumerate(events)][start:]


def try_open_in_child(spec: tuple[str, str], session_id: str) -> Literal["locked", "opened"]:
    """Open a store from ``spec`` (a :meth:`DurableStoreBackend.child_spec`)
    in a new Python process and try to open ``session_id`` for writing there;
    what it answered. The child closes what it opened before it exits."""
    target, location = spec
    path = os.pathsep.join(entry for entry in sys.path if entry)  # PYTHONPATH's included
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-m", _CHILD, target, location, session_id],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "PYTHONPATH": path},
    )
    answer = done.stdout.strip()
    if done.returncode != 0 or answer not in ("locked", "opened"):
        raise AssertionError(
            f"the child process ({target} {location}) failed with exit code"
            f" {done.returncode}:\n{done.stdout}{done.stderr}"
        )
    return "locked" if answer == "locked" else "opened"


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an ``async def`` test with ``asyncio.run`` (a fresh event loop),
    unless another async plugin's marker claims it."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    if any(pyfuncitem.get_closest_marker(name) for name in _OTHER_RUNNERS):
        return None
    # As pytest's own hook does: ``argnames`` are the test's parameters (not
    # ``self``); ``funcargs`` holds every fixture the test requested.
    names = pyfuncitem._fixtureinfo.argnames
    asyncio.run(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names}))
    return True


class StoreContract:
    """Every store's contract. Not collected itself (no ``Test`` prefix)."""

    durable: ClassVar[bool] = False

    @pytest.fixture
    def backend(self) -> StoreBackend:
        raise NotImplementedError(f"{type(self).__name__} must override the backend fixture")

    async def test_append_is_ordered_with_contiguous_seq(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        first = log.append(new_events(3))
        empty = log.append([])
        second = log.append(new_events(1, start=3))
        assert [item.seq for item in first] == [0, 1, 2]
        assert empty == ()
        assert [item.seq for item in second] == [3]
        assert bytes(second[0].data) == new_events(1, start=3)[0].data
        assert log.length == 4
        assert summary(log) == expected(new_events(4))
        await store.close()

    async def test_events_from_a_start(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        log.append(new_events(700))
        for start in (0, 1, 255, 256, 257, 511, 699):
            assert summary(log, start) == expected(new_events(700), start)
        assert summary(log, 700) == []
        assert summary(log, 10_000) == []
        await store.close()

    async def test_header(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s-1_a.b", created_at=1_700_000_000_000)
        assert isinstance(store, SessionStore)
        assert isinstance(log, SessionLog)
        assert log.header.id == "s-1_a.b"
        assert log.header.created_at == 1_700_000_000_000
        assert log.header.owned_from == 0
        assert "s-1_a.b" in store.session_ids()
        await store.close()

    async def test_reopen_keeps_everything(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        log.append(new_events(10))
        await log.flush()
        await log.save_snapshot(Snapshot(8, b"state through 8"))
        log.append(new_events(2, start=10))
        await log.flush()
        await store.close()

        again = await backend.open_store()
        if self.durable:
            assert again is not store  # else this would prove nothing durable
        else:
            assert again is store  # the instance is the storage
        log = await again.open("s1", created_at=99)
        assert log.header.created_at == 5  # the stored header wins
        assert log.length == 12
        assert summary(log) == expected(new_events(12))
        assert log.load_snapshot() == Snapshot(8, b"state through 8")
        assert (log.append(new_events(1, start=12)))[0].seq == 12
        await again.close()

    async def test_one_writer_per_session(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        with pytest.raises(SessionLocked, match="s1"):
            await store.open("s1", created_at=5)
        other = await store.open("s2", created_at=5)  # other sessions are free
        await log.close()
        reopened = await store.open("s1", created_at=5)  # close released the lock
        await reopened.close()
        await other.close()
        await store.close()

    @pytest.mark.parametrize("bad", _BAD_SESSION_IDS, ids=repr)
    async def test_bad_session_ids_are_refused(self, backend: StoreBackend, bad: object) -> None:
        store = await backend.open_store()
        before = await backend.footprint()
        with pytest.raises(InvalidSessionId):
            await store.open(bad, created_at=5)  # type: ignore[arg-type]
        assert await backend.footprint() == before
        assert store.session_ids() == []
        await store.close()

    async def test_snapshots_round_trip(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        assert log.load_snapshot() is None
        log.append(new_events(5))
        await log.save_snapshot(Snapshot(3, b"\x00binary\xff"))
        assert log.load_snapshot() == Snapshot(3, b"\x00binary\xff")
        await log.save_snapshot(Snapshot(5, b"newer"))
        assert log.load_snapshot() == Snapshot(5, b"newer")
        await store.close()

    async def test_close_is_idempotent_and_releases_the_lock(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        log.append(new_events(2))
        await log.close()
        await log.close()
        await store.close()
        await store.close()
        again = await backend.open_store()
        log = await again.open("s1", created_at=5)
        assert log.length == 2
        await again.close()

    async def test_concurrent_appends_and_flushes_stay_contiguous(
        self, backend: StoreBackend
    ) -> None:
        store = await backend.open_store()
        logs = [await store.open(f"s{index}", created_at=5) for index in range(8)]

        async def drive(log: SessionLog) -> None:
            for round_ in range(20):
                log.append(new_events(1 + round_ % 3, start=log.length))
                await log.flush()

        await asyncio.gather(*(drive(log) for log in logs))
        for log in logs:
            assert [item.seq for item in log.events()] == list(range(log.length))
            assert summary(log) == expected(new_events(log.length))
        await store.close()

    async def test_flush_with_nothing_appended_returns(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        await log.flush()
        log.append(new_events(1))
        await log.flush()
        await log.flush()
        await store.close()

    # -- what every store refuses -----------------------------------------

    async def test_a_snapshot_beyond_the_log_is_refused(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        log.append(new_events(2))
        with pytest.raises(StoreError, match="beyond"):
            await log.save_snapshot(Snapshot(3, b"too far"))
        assert log.load_snapshot() is None
        await store.close()

    async def test_appending_to_a_closed_log_raises(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        await log.close()
        with pytest.raises(StoreError, match="closed"):
            log.append(new_events(1))
        await store.close()

    @pytest.mark.parametrize(
        "data", [b"{bad", b'{"a":\n1}', b"", b"1 2"], ids=["not-json", "newline", "empty", "two"]
    )
    async def test_events_that_would_not_read_back_are_refused(
        self, backend: StoreBackend, data: bytes
    ) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        log.append(new_events(1))
        with pytest.raises(ValueError, match=r"read back|one line"):
            log.append([*new_events(1, start=1), NewEvent("bad", data, 1)])
        assert log.length == 1  # nothing of the batch was appended
        await log.flush()
        await store.close()
        again = await backend.open_store()
        log = await again.open("s1", created_at=5)
        assert summary(log) == expected(new_events(1))
        await again.close()

    async def test_a_negative_time_is_refused(self, backend: StoreBackend) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        with pytest.raises(ValueError, match="read back"):
            log.append([NewEvent("note", b"{}", -1)])
        assert log.length == 0
        await store.close()


class DurableStoreContract(StoreContract):
    """The contract of a store whose storage outlives a store instance: it
    also locks out a second instance and another process."""

    durable: ClassVar[bool] = True

    @pytest.fixture
    def backend(self) -> DurableStoreBackend:
        raise NotImplementedError(f"{type(self).__name__} must override the backend fixture")

    async def test_a_second_store_on_the_same_storage_is_locked_out(
        self, backend: DurableStoreBackend
    ) -> None:
        first = await backend.open_store()
        log = await first.open("s1", created_at=5)
        second = await backend.open_store()
        with pytest.raises(SessionLocked):
            await second.open("s1", created_at=5)
        await log.close()
        await (await second.open("s1", created_at=5)).close()
        await second.close()
        await first.close()

    async def test_a_writer_in_another_process_is_locked_out(
        self, backend: DurableStoreBackend
    ) -> None:
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        assert try_open_in_child(backend.child_spec(), "s1") == "locked"
        await log.close()
        assert try_open_in_child(backend.child_spec(), "s1") == "opened"
        await store.close()
