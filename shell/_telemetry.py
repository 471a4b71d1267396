"""Metrics and traces through the OpenTelemetry API, and the log context.

tickler reports through the API's global providers (``opentelemetry-api``,
the ``otel`` extra); the application configures the SDK and its exporters.
When the API is not installed, nothing of it is imported and every
measurement here is a no-op after one check. When it is installed but no
SDK is configured, the API's own no-op instruments take the measurements
and no span is started (a check of the global tracer provider per call).

The runtime calls in at a few points: a tool transaction (:class:`ToolCall`),
a committed change (:func:`committed`), a hand-over (:class:`Attempt`,
:func:`delivered`, :func:`delivery_failed`), a started runtime
(:func:`watch`); the PostgreSQL store at a lease granted over an expired
one (:func:`lease_takeovers`). The README's "Metrics and traces" section
lists the names.

The log context: while a tool call, a delivery or a session task runs, the
session id (and the occurrence key) are in a context variable, so a log line
written meanwhile can carry the same attributes as the spans
(:func:`log_fields`, read by ``tickler --log-format json``).
"""

from __future__ import annotations

import contextvars
import importlib.util
import weakref
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Final

from returns.pipeline import is_successful

from tickler._version import __version__
from tickler.core import (
    Created,
    Deleted,
    NotFound,
    ScheduleError,
    Updated,
    parse_instant,
    tool_catalog,
)
from tickler.shell._observer import Observed, RuntimeObserver, ToolResult
from tickler.shell._phase import Phase

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import CallbackOptions, Counter, MeterProvider, Observation
    from opentelemetry.trace import Span, TracerProvider

    from tickler.shell._clock import Clock
    from tickler.shell._host import FollowUp

SCOPE_NAME: Final = "tickler"
"""The instrumentation scope of the meter and the tracer."""

# Span and log attribute keys.
SESSION_ID: Final = "tickler.session.id"
OCCURRENCE_KEY: Final = "tickler.occurrence.key"
TOOL_NAME: Final = "tickler.tool.name"
RESULT_CODE: Final = "tickler.result.code"
ERROR_TYPE: Final = "error.type"

# Instrument and span names.
CREATED: Final = "tickler.reminders.created"
UPDATED: Final = "tickler.reminders.updated"
DELETED: Final = "tickler.reminders.deleted"
DELIVERIES: Final = "tickler.deliveries"
FAILED_ATTEMPTS: Final = "tickler.delivery_attempts.failed"
LATENESS: Final = "tickler.firing.lateness"
PENDING: Final = "tickler.reminders.pending"
OUTBOX_DEPTH: Final = "tickler.outbox.depth"
LEASE_TAKEOVERS: Final = "tickler.lease.takeovers"
TOOL_SPAN: Final = "tickler.tool/"  # + the tool's name
DELIVERY_SPAN: Final = "tickler.deliver"

# Result codes besides the closed error codes (tools) and the exception's
# class name (error.type of a failed delivery).
OK: Final = "ok"
NOT_FOUND: Final = "schedule_not_found"
FAILED: Final = "failed"
CANCELLED: Final = "cancelled"
UNKNOWN_TOOL: Final = "unknown"

# Closed codes that are the process's failure, not the caller's: their
# spans get an error status (a model's bad arguments do not, as a server's
# 4xx answers do not).
_OWN_FAILURES: Final = frozenset(
    {"persistence_uncertain", "corrupt_schedule_log", "internal_error"}
)


class _Scope:
    """What the log context knows now: the session, and during a hand-over
    its occurrence key and the attempt."""

    __slots__ = ("attempt", "key", "session_id")

    def __init__(
        self, session_id: str, key: str | None = None, attempt: Attempt | None = None
    ) -> None:
        self.session_id = session_id
        self.key = key
        self.attempt = attempt


_SCOPE: Final[contextvars.ContextVar[_Scope | None]] = contextvars.ContextVar(
    "tickler_scope", default=None
)


class _Otel:
    """The instruments and the tracer, made once from the API."""

    def __init__(
        self, meter_provider: MeterProvider | None, tracer_provider: TracerProvider | None
    ) -> None:
        from opentelemetry import metrics, trace
        from opentelemetry.context import Context
        from opentelemetry.metrics import Observation
        from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, StatusCode

        self._trace = trace
        self._observation = Observation
        self.error_status = StatusCode.ERROR
        self.root: Context = Context()
        self._no_tracing = (ProxyTracerProvider, NoOpTracerProvider)
        self._explicit_tracer = tracer_provider is not None
        meter = metrics.get_meter(SCOPE_NAME, __version__, meter_provider)
        self.tracer = trace.get_tracer(SCOPE_NAME, __version__, tracer_provider)
        self.created = meter.create_counter(
            CREATED, unit="{reminder}", description="Reminders created (changes committed)."
        )
        self.updated = meter.create_counter(
            UPDATED, unit="{reminder}", description="Reminders changed in place."
        )
        self.deleted = meter.create_counter(
            DELETED, unit="{reminder}", description="Reminders deleted by a tool call."
        )
        self.deliveries = meter.create_counter(
            DELIVERIES, unit="{follow-up}", description="Follow-ups the host or target took."
        )
        self.failed = meter.create_counter(
            FAILED_ATTEMPTS,
            unit="{attempt}",
            description="Hand-overs of a follow-up that failed (retried with backoff).",
        )
        self.lateness = meter.create_histogram(
            LATENESS,
            unit="ms",
            description="Hand-over time minus the instant of the follow-up's first occurrence.",
        )
        self.takeovers = meter.create_counter(
            LEASE_TAKEOVERS,
            unit="{session}",
            description="PostgreSQL sessions leased while the previous holder's lease had expired.",
        )
        meter.create_observable_gauge(
            PENDING,
            callbacks=[self._observe_pending],
            unit="{reminder}",
            description="Active reminders of the sessions this process runs.",
        )
        meter.create_observable_gauge(
            OUTBOX_DEPTH,
            callbacks=[self._observe_outbox],
            unit="{follow-up}",
            description="Follow-ups appended but not yet taken, in the sessions this process runs.",
        )
        # Counted by the outcome's type: one place, for every surface.
        self.by_outcome: dict[type, Counter] = {
            Created: self.created,
            Updated: self.updated,
            Deleted: self.deleted,
        }
        self.tools = frozenset(str(tool["name"]) for tool in tool_catalog())
        self.runtimes: weakref.WeakSet[Observed] = weakref.WeakSet()

    def tracing(self) -> bool:
        """Whether spans are wanted: a provider was given, or the global one
        is not the API's placeholder (set_tracer_provider was called)."""
        if self._explicit_tracer:
            return True
        return not isinstance(self._trace.get_tracer_provider(), self._no_tracing)

    def start_span(
        self, name: str, attributes: dict[str, str], parent: Context | None = None
    ) -> tuple[Span, object]:
        """Start a span and make it current; the token to detach it with."""
        from opentelemetry import context

        span = self.tracer.start_span(name, context=parent, attributes=attributes)
        return span, context.attach(self._trace.set_span_in_context(span))

    def _running(self) -> list[Observed]:
        return [runtime for runtime in list(self.runtimes) if runtime.phase is Phase.RUNNING]

    def _observe_pending(self, options: CallbackOptions) -> Iterable[Observation]:
        return [self._observation(sum(len(r.state.entries) for r in self._running()))]

    def _observe_outbox(self, options: CallbackOptions) -> Iterable[Observation]:
        return [self._observation(sum(len(r.pending_followups) for r in self._running()))]


def _end(span: Span, token: object) -> None:
    from opentelemetry import context

    span.end()
    context.detach(token)  # type: ignore[arg-type] # the attach token, kept opaque


def _make() -> _Otel | None:
    """The instruments on the global providers, or None without the API."""
    if importlib.util.find_spec("opentelemetry") is None:
        return None
    try:
        return _Otel(None, None)
    except ImportError:  # another opentelemetry package, without the API
        return None


_otel: _Otel | None = _make()


def enabled() -> bool:
    """Whether the OpenTelemetry API is in use."""
    return _otel is not None


def use_providers(
    meter_provider: MeterProvider | None = None, tracer_provider: TracerProvider | None = None
) -> None:
    """Report to these providers instead of the global ones (None: the
    global one again). For tests and for programs that keep their providers
    to themselves; runtimes already started keep being observed."""
    global _otel  # noqa: PLW0603 - the one switch, made rarely
    if importlib.util.find_spec("opentelemetry") is None:
        raise ImportError("OpenTelemetry needs the extra: pip install 'tickler-agents[otel]'")
    before = _otel
    _otel = _Otel(meter_provider, tracer_provider)
    if before is not None:
        _otel.runtimes.update(before.runtimes)


# -- the runtime's calls -------------------------------------------------------


class ToolCall:
    """One tool transaction: its span (``tickler.tool/<name>``) when spans
    are wanted, and the session in the log context meanwhile."""

    __slots__ = ("_scope", "_span", "_token", "_tool", "code")

    def __init__(self, session_id: str, tool: str) -> None:
        self._scope = _Scope(session_id)
        self._tool = tool
        self._span: tuple[Span, object] | None = None
        self.code: str | None = None

    def __enter__(self) -> ToolCall:
        self._token = _SCOPE.set(self._scope)
        otel = _otel
        if otel is not None and otel.tracing():
            tool = self._tool if self._tool in otel.tools else UNKNOWN_TOOL
            attributes = {SESSION_ID: self._scope.session_id, TOOL_NAME: tool}
            self._span = otel.start_span(TOOL_SPAN + tool, attributes)
        return self

    def ended(self, result: ToolResult) -> ToolResult:
        """Note the call's result (its code on the span); returns it."""
        if is_successful(result):
            self.code = NOT_FOUND if isinstance(result.unwrap(), NotFound) else OK
        else:
            self.code = result.failure().code
        return result

    def refused(self, error: ScheduleError) -> None:
        """The call was refused before the queue (its arguments' shape)."""
        self.code = error.code

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _SCOPE.reset(self._token)
        otel, span = _otel, self._span
        if span is None or otel is None:
            return
        code = self.code if self.code is not None else CANCELLED
        span[0].set_attribute(RESULT_CODE, code)
        if code in _OWN_FAILURES:
            span[0].set_attribute(ERROR_TYPE, code)
            span[0].set_status(otel.error_status, code)
        _end(*span)


def tool_call(session_id: str, tool: str) -> ToolCall:
    """``with tool_call(session, "schedule_create") as call: call.ended(...)``."""
    return ToolCall(session_id, tool)


def refused_call(session_id: str, tool: str, error: ScheduleError) -> None:
    """A tool call refused before the queue: a span of its own (the
    session's queue never saw it)."""
    with ToolCall(session_id, tool) as call:
        call.refused(error)


def committed(outcome: object) -> None:
    """A tool's changes were appended (the reminder stands, even when the
    barrier after them fails): count them by the outcome's type."""
    otel = _otel
    if otel is None:
        return
    counter = otel.by_outcome.get(type(outcome))
    if counter is not None:
        counter.add(1)


class Attempt:
    """One hand-over of a follow-up: its span (``tickler.deliver``, a root:
    a delivery is started by a timer, not by whoever armed it) when spans
    are wanted, and the session and occurrence key in the log context."""

    __slots__ = ("_scope", "_span", "_token", "code", "error")

    def __init__(self, session_id: str, key: str) -> None:
        self._scope = _Scope(session_id, key, self)
        self._span: tuple[Span, object] | None = None
        self.code: str | None = None
        self.error: BaseException | None = None

    def __enter__(self) -> Attempt:
        self._token = _SCOPE.set(self._scope)
        otel = _otel
        if otel is not None and otel.tracing():
            scope = self._scope
            attributes = {SESSION_ID: scope.session_id, OCCURRENCE_KEY: scope.key or ""}
            self._span = otel.start_span(DELIVERY_SPAN, attributes, otel.root)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _SCOPE.reset(self._token)
        otel, span = _otel, self._span
        if span is None or otel is None:
            return
        code = self.code if self.code is not None else CANCELLED
        span[0].set_attribute(RESULT_CODE, code)
        if self.error is not None:
            span[0].set_attribute(ERROR_TYPE, type(self.error).__name__)
            span[0].set_status(otel.error_status, str(self.error))
        _end(*span)


def attempt(session_id: str, key: str) -> Attempt:
    """``with attempt(session, message.key): <hand it over>``."""
    return Attempt(session_id, key)


def _current_attempt() -> Attempt | None:
    scope = _SCOPE.get()
    return None if scope is None else scope.attempt


def delivered(message: FollowUp, clock: Clock) -> None:
    """The host took ``message``: count it, and its lateness (now minus its
    first occurrence's instant, never below 0)."""
    current = _current_attempt()
    if current is not None:
        current.code = OK
    otel = _otel
    if otel is None:
        return
    otel.deliveries.add(1)
    first = message.occurrences[0].occurrence_at if message.occurrences else None
    if first is not None:
        otel.lateness.record(max(0, clock.now_ms() - parse_instant(first)))


def delivery_failed(error: BaseException) -> None:
    """A hand-over failed (the host raised, or the lease was too short to
    start it): it is retried; count it."""
    current = _current_attempt()
    if current is not None:
        current.code, current.error = FAILED, error
    otel = _otel
    if otel is not None:
        otel.failed.add(1, {ERROR_TYPE: type(error).__name__})


def watch(runtime: Observed) -> None:
    """Count a started runtime's reminders and outbox in this process's
    gauges while it runs (weakly held)."""
    otel = _otel
    if otel is not None:
        otel.runtimes.add(runtime)


def lease_takeovers(count: int) -> None:
    """The PostgreSQL store leased ``count`` sessions whose previous
    holder's lease had expired without being let go."""
    otel = _otel
    if otel is not None and count:
        otel.takeovers.add(count)


# -- the log context -------------------------------------------------------------


def bind_session(session_id: str) -> None:
    """Put ``session_id`` in the log context for the rest of the current
    task (a task of its own: a session's drive loop, a worker's session)."""
    _SCOPE.set(_Scope(session_id))


def log_fields() -> dict[str, str]:
    """The span attributes known where a log line is written (session id,
    occurrence key), and the current span's ``trace_id`` and ``span_id``
    when one is recording."""
    fields: dict[str, str] = {}
    scope = _SCOPE.get()
    if scope is not None:
        fields[SESSION_ID] = scope.session_id
        if scope.key is not None:
            fields[OCCURRENCE_KEY] = scope.key
    otel = _otel
    if otel is not None:
        context = otel._trace.get_current_span().get_span_context()
        if context.is_valid:
            fields["trace_id"] = format(context.trace_id, "032x")
            fields["span_id"] = format(context.span_id, "016x")
    return fields


class Telemetry:
    """The runtime's observer (:class:`~tickler.shell._observer.RuntimeObserver`):
    what the unit of work and the deliverer report, measured here."""

    __slots__ = ()

    watch = staticmethod(watch)
    tool_call = staticmethod(tool_call)
    committed = staticmethod(committed)
    attempt = staticmethod(attempt)
    delivered = staticmethod(delivered)
    delivery_failed = staticmethod(delivery_failed)
    bind_session = staticmethod(bind_session)


OBSERVER: Final[RuntimeObserver] = Telemetry()
"""The observer every :class:`~tickler.shell._runtime.ScheduleRuntime` reports to."""


__all__ = [
    "DELIVERY_SPAN",
    "OBSERVER",
    "OCCURRENCE_KEY",
    "RESULT_CODE",
    "SESSION_ID",
    "TOOL_NAME",
    "TOOL_SPAN",
    "Attempt",
    "Telemetry",
    "ToolCall",
    "attempt",
    "bind_session",
    "committed",
    "delivered",
    "delivery_failed",
    "enabled",
    "lease_takeovers",
    "log_fields",
    "refused_call",
    "tool_call",
    "use_providers",
    "watch",
]
