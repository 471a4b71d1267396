"""How telemetry is switched on and off, each in a fresh interpreter:

* without OpenTelemetry importable, a session runs (tools, a delivery, the
  JSON log) and nothing of OpenTelemetry is imported;
* with the API and no SDK configured, nothing is traced; once the program
  sets the global providers (after tickler was imported and a session
  started, as an application may), the same instruments report to them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

BOUND_S = 120  # a hung child fails the test instead of blocking it

# One session on a virtual clock: a create, a list, a delivery; prints JSON.
SESSION = """
import asyncio, io, json, logging, sys

from tickler.adapters.cli._options import log_formatter
from tickler.adapters.stores._memory import MemoryStore
from tickler.shell import VirtualClock, TimerHeap, open_session, _telemetry

T0 = 1_785_931_200_000
stream = io.StringIO()
handler = logging.StreamHandler(stream)
handler.setFormatter(log_formatter("json"))
logging.getLogger("tickler").addHandler(handler)


class Host:
    def __init__(self) -> None:
        self.taken: list[str] = []
        self.fail = 1

    def claim_idle(self):
        class Claim:
            def release(self) -> None:
                pass
        return Claim()

    async def when_idle(self) -> None:
        pass

    async def followup(self, message) -> None:
        if self.fail:
            self.fail -= 1
            raise ConnectionError("down once")
        self.taken.append(message.key)


async def session(setup=None) -> dict:
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    host = Host()
    async with open_session(
        MemoryStore(), "s", host=lambda s: host, clock=clock, timers=timers
    ) as opened:
        if setup is not None:
            setup()
        created = json.loads(
            await opened.tools.call_tool("schedule_create", {"prompt": "p", "after_seconds": 1})
        )
        listed = json.loads(await opened.tools.call_tool("schedule_list", {}))
        await clock.advance(1000)
        await clock.advance(50)
    await timers.close()
    return {"created": created["id"], "listed": len(listed), "taken": host.taken}
"""

WITHOUT = (
    """
import sys
for name in ("opentelemetry", "opentelemetry.trace", "opentelemetry.metrics",
             "opentelemetry.context", "opentelemetry.sdk"):
    sys.modules[name] = None  # not importable
"""
    + SESSION
    + """
result = asyncio.run(session())
log = [json.loads(line) for line in stream.getvalue().splitlines()]
result["enabled"] = _telemetry.enabled()
result["imported"] = sorted(
    name for name, module in sys.modules.items()
    if name.split(".")[0] == "opentelemetry" and module is not None
)
result["warning"] = [line for line in log if "not taken" in line["message"]]
print(json.dumps(result))
"""
)

GLOBAL = (
    SESSION
    + """
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

reader = InMemoryMetricReader()
exporter = InMemorySpanExporter()


def configure() -> None:
    # As an application does, with tickler already imported and the
    # session already started.
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    tracers = TracerProvider()
    tracers.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(tracers)


before = asyncio.run(session())  # no SDK: nothing to read, no span
after = asyncio.run(session(configure))
found = {}
for resource in reader.get_metrics_data().resource_metrics:
    for scope in resource.scope_metrics:
        for metric in scope.metrics:
            if scope.scope.name == "tickler":
                found[metric.name] = sum(p.count if hasattr(p, "count") else p.value
                                         for p in metric.data.data_points)
spans = [[s.name, s.attributes.get("tickler.result.code")] for s in exporter.get_finished_spans()]
print(json.dumps({"before": before, "after": after, "metrics": found, "spans": spans,
                  "enabled": _telemetry.enabled()}))
"""
)


def run(program: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(program)],
        capture_output=True,
        text=True,
        timeout=BOUND_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


KEY = "schedule-1@2026-08-05T12:00:01.000Z"


def test_without_opentelemetry_a_session_runs_and_imports_nothing_of_it() -> None:
    result = run(WITHOUT)
    assert result["enabled"] is False
    assert result["imported"] == []
    assert (result["created"], result["listed"], result["taken"]) == ("schedule-1", 1, [KEY])
    # The JSON log still names the session and the occurrence.
    (warning,) = result["warning"]
    assert warning["tickler.session.id"] == "s"
    assert warning["tickler.occurrence.key"] == KEY
    assert "trace_id" not in warning


def test_the_global_providers_an_application_sets_later_get_the_measurements() -> None:
    result = run(GLOBAL)
    assert result["enabled"] is True
    assert result["before"]["taken"] == result["after"]["taken"] == [KEY]
    # Only the second session reported: the first ran before the SDK was set.
    assert result["metrics"] == {
        "tickler.reminders.created": 1,
        "tickler.deliveries": 1,
        "tickler.delivery_attempts.failed": 1,
        "tickler.firing.lateness": 1,  # one measurement
        "tickler.reminders.pending": 0,  # observed after the session ended
        "tickler.outbox.depth": 0,
    }
    assert result["spans"] == [
        ["tickler.tool/schedule_create", "ok"],
        ["tickler.tool/schedule_list", "ok"],
        ["tickler.deliver", "failed"],
        ["tickler.deliver", "ok"],
    ]
