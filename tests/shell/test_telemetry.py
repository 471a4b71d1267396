"""Metrics and spans, read with the OpenTelemetry SDK's in-memory reader
and exporter: a session on a virtual clock goes through creates, a list,
deletes, a refused call, a failed hand-over, a delivery and a create whose
barrier fails; every counter, the lateness histogram (exact, on the virtual
clock), both gauges and every span with its attributes are checked. A log
line written meanwhile carries the span's attributes (``--log-format json``).
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Final

import pytest
from opentelemetry.trace import StatusCode

from tickler.adapters.cli._jsonlog import JsonFormatter
from tickler.adapters.stores._memory import MemoryStore
from tickler.shell._clock import VirtualClock
from tickler.shell._session import ScheduleError, open_session
from tickler.shell._timers import TimerHeap

from .support import SECOND, T0, ScriptedHost, async_test, rig
from .telemetry_support import readings

KEY: Final = "schedule-1@2026-08-05T12:00:10.000Z"
SESSION: Final = "s1"


def counts(metrics: dict[str, Any]) -> dict[str, int | float]:
    names = (
        "tickler.reminders.created",
        "tickler.reminders.updated",
        "tickler.reminders.deleted",
        "tickler.deliveries",
        "tickler.delivery_attempts.failed",
        "tickler.reminders.pending",
        "tickler.outbox.depth",
    )
    return {name: metrics[name].value if name in metrics else 0 for name in names}


def expected(**values: int) -> dict[str, int]:
    """Every count 0 but those given (``reminders_created=2`` ...)."""
    names = {
        "created": "tickler.reminders.created",
        "updated": "tickler.reminders.updated",
        "deleted": "tickler.reminders.deleted",
        "deliveries": "tickler.deliveries",
        "failed": "tickler.delivery_attempts.failed",
        "pending": "tickler.reminders.pending",
        "outbox": "tickler.outbox.depth",
    }
    unknown = set(values) - set(names)
    assert not unknown, unknown
    return {full: values.get(short, 0) for short, full in names.items()}


@contextmanager
def json_log(name: str) -> Iterator[io.StringIO]:
    """``name``'s records, formatted as ``--log-format json`` formats them."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger(name)
    logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)


@async_test
async def test_a_session_is_counted_and_traced() -> None:
    with readings() as otel, json_log("tickler.runtime") as log_lines:
        async with rig() as r:
            assert (await r.create(prompt="a", after_seconds=10))["id"] == "schedule-1"
            assert (await r.create(prompt="b", after_seconds=3600))["id"] == "schedule-2"
            assert len(await r.views()) == 2
            assert (await r.delete("schedule-2"))["deleted"] is True
            assert (await r.delete("schedule-9"))["deleted"] is False  # not found: not counted
            refused = await r.tool("schedule_create", {"prompt": "no selector"})
            assert refused["code"] == "invalid_selector"  # before the queue: not counted
            assert counts(otel.metrics()) == expected(created=2, deleted=1, pending=1)

            # The host refuses the first hand-over (at the due instant); the
            # retry 50 ms later is taken.
            r.host.followup_errors = 1
            await r.advance(10 * SECOND)
            assert r.host.taken == []
            assert counts(otel.metrics()) == expected(created=2, deleted=1, failed=1, outbox=1)
            await r.advance(50)
            assert r.host.keys == [KEY]
            assert r.host.taken_wall == [T0 + 10 * SECOND + 50]
            metrics = otel.metrics()
            assert counts(metrics) == expected(created=2, deleted=1, failed=1, deliveries=1)
            (lateness,) = metrics["tickler.firing.lateness"].points
            assert (lateness.count, lateness.sum, lateness.min, lateness.max) == (1, 50, 50, 50)
            assert metrics["tickler.firing.lateness"].unit == "ms"
            (failure,) = metrics["tickler.delivery_attempts.failed"].points
            assert dict(failure.attributes) == {"error.type": "HostFault"}

            # A create whose barrier fails answers persistence_uncertain, but
            # its change was appended and stands: it is counted.
            r.log.fail("flush", skip=1)
            uncertain = await r.create(prompt="c", after_seconds=7200)
            assert uncertain["code"] == "persistence_uncertain"
            assert counts(otel.metrics()) == expected(
                created=3, deleted=1, failed=1, deliveries=1, pending=1
            )
            units = {name: metric.unit for name, metric in otel.metrics().items()}
        # Disposed: the gauges no longer count its session.
        assert counts(otel.metrics()) == expected(created=3, deleted=1, failed=1, deliveries=1)

    assert units == {
        "tickler.reminders.created": "{reminder}",
        "tickler.reminders.deleted": "{reminder}",
        "tickler.deliveries": "{follow-up}",
        "tickler.delivery_attempts.failed": "{attempt}",
        "tickler.firing.lateness": "ms",
        "tickler.reminders.pending": "{reminder}",
        "tickler.outbox.depth": "{follow-up}",
    }
    spans = otel.spans()
    assert [(s.name, (s.attributes or {}).get("tickler.result.code")) for s in spans] == [
        ("tickler.tool/schedule_create", "ok"),
        ("tickler.tool/schedule_create", "ok"),
        ("tickler.tool/schedule_list", "ok"),
        ("tickler.tool/schedule_delete", "ok"),
        ("tickler.tool/schedule_delete", "schedule_not_found"),
        ("tickler.tool/schedule_create", "invalid_selector"),
        ("tickler.deliver", "failed"),
        ("tickler.deliver", "ok"),
        ("tickler.tool/schedule_create", "persistence_uncertain"),
    ]
    for span in spans:
        attributes = dict(span.attributes or {})
        assert attributes["tickler.session.id"] == SESSION
        if span.name == "tickler.deliver":
            assert attributes["tickler.occurrence.key"] == KEY
            assert span.parent is None  # a delivery is a trace of its own
        else:
            assert attributes["tickler.tool.name"] == span.name.removeprefix("tickler.tool/")
    failed, taken = (s for s in spans if s.name == "tickler.deliver")
    assert failed.status.status_code is StatusCode.ERROR
    assert (failed.attributes or {})["error.type"] == "HostFault"
    assert taken.status.status_code is StatusCode.UNSET
    # The process's own failure is an error; a model's bad arguments are not.
    by_code = {(s.attributes or {})["tickler.result.code"]: s for s in spans}
    assert by_code["persistence_uncertain"].status.status_code is StatusCode.ERROR
    assert by_code["invalid_selector"].status.status_code is StatusCode.UNSET

    # The warning about the refused hand-over names the session and the key.
    lines = [json.loads(line) for line in log_lines.getvalue().splitlines()]
    (warning,) = [line for line in lines if "not taken" in line["message"]]
    assert warning["level"] == "WARNING"
    assert warning["logger"] == "tickler.runtime"
    assert warning["tickler.session.id"] == SESSION
    assert warning["tickler.occurrence.key"] == KEY
    assert (warning["trace_id"], warning["span_id"]) == (
        format(failed.context.trace_id, "032x"),
        format(failed.context.span_id, "016x"),
    )
    assert set(warning) == {
        "time",
        "level",
        "logger",
        "message",
        "tickler.session.id",
        "tickler.occurrence.key",
        "trace_id",
        "span_id",
    }


@async_test
async def test_the_typed_api_and_the_session_tools_are_traced_alike() -> None:
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    calls: list[str] = []
    with readings() as otel:
        async with open_session(
            MemoryStore(),
            "typed",
            host=lambda session: ScriptedHost(calls, clock),
            clock=clock,
            timers=timers,
        ) as session:
            reminder = await session.schedule("stand up", after=timedelta(minutes=5))
            assert await session.cancel(reminder.id) is True
            with pytest.raises(ScheduleError) as refused:
                await session.schedule("   ", after=timedelta(minutes=5))
            assert refused.value.code == "invalid_prompt"
            answer = await session.tools.call_tool("schedule_teleport", {})
            assert json.loads(answer)["code"] == "internal_error"
        await timers.close()
        assert counts(otel.metrics()) == expected(created=1, deleted=1)
    assert [(s.name, dict(s.attributes or {})) for s in otel.spans()] == [
        (
            "tickler.tool/schedule_create",
            {
                "tickler.session.id": "typed",
                "tickler.tool.name": "schedule_create",
                "tickler.result.code": "ok",
            },
        ),
        (
            "tickler.tool/schedule_delete",
            {
                "tickler.session.id": "typed",
                "tickler.tool.name": "schedule_delete",
                "tickler.result.code": "ok",
            },
        ),
        (
            "tickler.tool/schedule_create",
            {
                "tickler.session.id": "typed",
                "tickler.tool.name": "schedule_create",
                "tickler.result.code": "invalid_prompt",
            },
        ),
        (  # a name that is no tool is not made a span name
            "tickler.tool/unknown",
            {
                "tickler.session.id": "typed",
                "tickler.tool.name": "unknown",
                "tickler.result.code": "internal_error",
                "error.type": "internal_error",
            },
        ),
    ]


async def test_an_update_that_changes_something_is_counted_once() -> None:
    with readings() as otel:
        async with rig() as r:
            assert (await r.create(prompt="a", every_seconds=300))["id"] == "schedule-1"
            paused = await r.tool("schedule_update", {"id": "schedule-1", "paused": True})
            assert paused["state"] == "paused"
            # Nothing differs: no change is appended, nothing counted.
            again = await r.tool("schedule_update", {"id": "schedule-1", "paused": True})
            assert again["state"] == "paused"
            missing = await r.tool("schedule_update", {"id": "schedule-9", "prompt": "x"})
            assert missing["code"] == "schedule_not_found"
            renamed = await r.tool("schedule_update", {"id": "schedule-1", "prompt": "b"})
            assert renamed["prompt"] == "b"
            metrics = otel.metrics()
    assert metrics["tickler.reminders.updated"].value == 2
    assert metrics["tickler.reminders.updated"].unit == "{reminder}"
    assert metrics["tickler.reminders.created"].value == 1
    assert "tickler.reminders.deleted" not in metrics
