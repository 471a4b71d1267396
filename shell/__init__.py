"""tickler.shell: doing, not deciding - the asyncio runtime, sessions,
clocks, timers, the reference host, and the ports stores and agent
frameworks plug into. Every rule is :mod:`tickler.core`'s."""

from tickler.shell._check import check_session
from tickler.shell._clock import Clock, SystemClock, VirtualClock
from tickler.shell._host import (
    AgentHost,
    DrainingHost,
    FollowUp,
    IdleClaim,
    ReleaseOnce,
    SessionClosed,
    TimedHost,
)
from tickler.shell._pending import Pending, PendingDelivery, PendingTurn, pending_work
from tickler.shell._phase import Phase
from tickler.shell._ports import (
    FailureIndex,
    InvalidSessionId,
    LeasedLog,
    NewEvent,
    SessionLocked,
    SessionLog,
    SessionStore,
    Snapshot,
    StoreError,
    WakeIndex,
    is_valid_session_id,
    validate_session_id,
)
from tickler.shell._reference_host import ReferenceHost, TurnInput, TurnReply
from tickler.shell._reminders import Calendar, LocalTime, Reminder, ScheduleError
from tickler.shell._runtime import LeaseTooShort, ScheduleRuntime
from tickler.shell._session import (
    HostFactory,
    Session,
    SessionTools,
    open_log_session,
    open_session,
)
from tickler.shell._timers import TimerHeap

__all__ = [
    "AgentHost",
    "Calendar",
    "Clock",
    "DrainingHost",
    "FailureIndex",
    "FollowUp",
    "HostFactory",
    "IdleClaim",
    "InvalidSessionId",
    "LeaseTooShort",
    "LeasedLog",
    "LocalTime",
    "NewEvent",
    "Pending",
    "PendingDelivery",
    "PendingTurn",
    "Phase",
    "ReferenceHost",
    "ReleaseOnce",
    "Reminder",
    "ScheduleError",
    "ScheduleRuntime",
    "Session",
    "SessionClosed",
    "SessionLocked",
    "SessionLog",
    "SessionStore",
    "SessionTools",
    "Snapshot",
    "StoreError",
    "SystemClock",
    "TimedHost",
    "TimerHeap",
    "TurnInput",
    "TurnReply",
    "VirtualClock",
    "WakeIndex",
    "check_session",
    "is_valid_session_id",
    "open_log_session",
    "open_session",
    "pending_work",
    "validate_session_id",
]
