"""The stores' sync thread counts the jobs it holds for the event loop
(``HAND_BACKS``), so that the timer heap, yielding just before a target,
lets it take the GIL: from the hand-over until the result is back on the
loop, and not after, also when the job fails or its loop is gone."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from tickler.adapters.stores._committer import SyncThread
from tickler.shell import HAND_BACKS


def _waiting_for(release: threading.Event) -> Callable[[], None]:
    def wait() -> None:
        release.wait()

    return wait


def test_a_job_counts_from_its_hand_over_until_its_result_is_back() -> None:
    async def run() -> list[int]:
        seen: list[int] = []
        before = HAND_BACKS.out  # (another test's job may still be out)
        release = threading.Event()
        wait = _waiting_for(release)
        syncer = SyncThread("test-sync")
        loop = asyncio.get_running_loop()
        outcomes: list[asyncio.Future[BaseException | None]] = [
            loop.create_future(),
            loop.create_future(),
        ]

        def failing() -> None:
            raise OSError("the disk is gone")

        try:
            syncer.submit(wait, outcomes[0].set_result)
            syncer.submit(failing, outcomes[1].set_result)
            seen.append(HAND_BACKS.out - before)  # both out
            release.set()
            first = await outcomes[0]
            second = await outcomes[1]
            assert first is None
            assert isinstance(second, OSError)
            seen.append(HAND_BACKS.out - before)  # both back
        finally:
            release.set()
            syncer.stop()
        return seen

    assert asyncio.run(run()) == [2, 0]


def test_a_job_whose_loop_is_gone_does_not_stay_counted() -> None:
    release = threading.Event()
    wait = _waiting_for(release)
    syncer = SyncThread("test-sync")
    before = HAND_BACKS.out

    async def hand_over() -> None:
        syncer.submit(wait, lambda error: None)

    asyncio.run(hand_over())  # the loop is closed with the job still out
    assert HAND_BACKS.out == before + 1
    release.set()
    syncer.stop()  # the thread finished the job and found the loop closed
    assert HAND_BACKS.out == before
