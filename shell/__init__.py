"""tickler.shell: doing, not deciding - the asyncio runtime, sessions,
clocks, timers, the reference host, and the ports stores and agent
frameworks plug into. Every rule is :mod:`tickler.core`'s."""

from tickler.shell._check import check_session
from tickler.shell._clock import Clock, SystemClock, VirtualClock
from tickler.shell._handbacks import HAND_BACKS, HandBacks
from tickler.shell._host import (
    AgentHost,
    DrainingHost,
    FollowUp,
    IdleClaim,
    ReleaseOnce,
    SessionClosed,
    TimedHost,
)
from tickler.shell._loading import Loaded, load_session
from tickler.shell._operate import Operated, operate
from tickler.shell._pending import Pending, PendingDelivery, PendingTurn, pending_work
from tickler.shell._phase import Phase
from tickler.shell._ports import (
    FailureIndex,
    InvalidSessionId,
    LeasedLog,
    NewEvent,
    RecordedWake,
    SessionLocked,
    SessionLog,
    SessionStore,
    Snapshot,
    StoreError,
    WakeIndex,
    is_valid_session_id,
    validate_session_id,
)
from tickler.shell._records import (
    DELIVERED,
    FOLLOWUP,
    FOLLOWUP_FAILED,
    FailureCount,
    decode_delivered,
    decode_followup,
    decode_followup_failed,
)
from tickler.shell._reference_host import (
    TURN,
    TURN_INPUT,
    TURN_TIMEOUT_S,
    Model,
    ReferenceHost,
    TurnInput,
    TurnRecord,
    TurnReply,
)
from tickler.shell._reminders import Calendar, LocalTime, Reminder, ScheduleError
from tickler.shell._runtime import LEASE_MARGIN_S, LeaseTooShort, ScheduleRuntime
from tickler.shell._session import (
    HostFactory,
    Session,
    SessionTools,
    corrupt_session_tools,
    open_log_session,
    open_session,
)
from tickler.shell._telemetry import (
    OCCURRENCE_KEY,
    SESSION_ID,
    bind_session,
    lease_takeovers,
    log_fields,
)
from tickler.shell._timers import TimerHeap

__all__ = [
    "DELIVERED",
    "FOLLOWUP",
    "FOLLOWUP_FAILED",
    "HAND_BACKS",
    "LEASE_MARGIN_S",
    "OCCURRENCE_KEY",
    "SESSION_ID",
    "TURN",
    "TURN_INPUT",
    "TURN_TIMEOUT_S",
    "AgentHost",
    "Calendar",
    "Clock",
    "DrainingHost",
    "FailureCount",
    "FailureIndex",
    "FollowUp",
    "HandBacks",
    "HostFactory",
    "IdleClaim",
    "InvalidSessionId",
    "LeaseTooShort",
    "LeasedLog",
    "Loaded",
    "LocalTime",
    "Model",
    "NewEvent",
    "Operated",
    "Pending",
    "PendingDelivery",
    "PendingTurn",
    "Phase",
    "RecordedWake",
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
    "TurnRecord",
    "TurnReply",
    "VirtualClock",
    "WakeIndex",
    "bind_session",
    "check_session",
    "corrupt_session_tools",
    "decode_delivered",
    "decode_followup",
    "decode_followup_failed",
    "is_valid_session_id",
    "lease_takeovers",
    "load_session",
    "log_fields",
    "open_log_session",
    "open_session",
    "operate",
    "pending_work",
    "validate_session_id",
]
