"""tickler.core: every rule, as pure functions over immutable values.

Instants are ``int`` epoch milliseconds (UTC); the caller passes ``now``.
Nothing here performs I/O, reads a clock, uses asyncio or randomness.
"""

from tickler.core._at import parse_at
from tickler.core._calendar import (
    CalendarMsg,
    CalendarRule,
    CatchUp,
    catch_up,
    count_occurrences,
    latest_occurrence_at_or_before,
    local_time_text,
    next_occurrence,
    next_occurrences,
    parse_calendar,
)
from tickler.core._catalog import tool_catalog
from tickler.core._check import check_log
from tickler.core._codec import change_json, decode_change, decode_change_value, encode_change
from tickler.core._commands import (
    Command,
    CreateAfter,
    CreateAt,
    CreateCalendar,
    CreateEvery,
    CreateSchedule,
    DeleteSchedule,
    DeliverDue,
    ListSchedules,
    ToolCommand,
    UpdateSchedule,
    parse_tool_call,
)
from tickler.core._decide import decide, next_target, reminder_standing
from tickler.core._errors import (
    ERROR_CODES,
    CorruptScheduleLog,
    ErrorCode,
    Operation,
    ScheduleError,
    persistence_uncertain,
)
from tickler.core._fixedrate import EveryOccurrence, resolve_every_occurrence
from tickler.core._framing import every_batch_framing, one_shot_framing
from tickler.core._instant import MAX_INSTANT_MS, MIN_INSTANT_MS, format_instant, parse_instant
from tickler.core._model import (
    MIN_EVERY_INTERVAL_SECONDS,
    SCHEDULE_CHANGE_VERSION,
    AfterSchedule,
    AtSchedule,
    CalendarSchedule,
    CreateChange,
    CreateChangeV2,
    DeleteChange,
    DeleteChangeV2,
    DispatchChange,
    EverySchedule,
    ScheduleChange,
    ScheduleRecord,
    SeriesEnd,
    UpdateChange,
)
from tickler.core._outcomes import (
    Created,
    Deleted,
    Delivery,
    Listed,
    NotFound,
    Occurrence,
    Outcome,
    ScheduleView,
    ToolOutcome,
    Updated,
    Wait,
)
from tickler.core._profile import DEFAULT_PROFILE, PROFILES, Profile
from tickler.core._render import render
from tickler.core._rules import (
    Breach,
    ReminderState,
    Standing,
    is_due,
    series_points,
    series_step,
    standing_rule,
)
from tickler.core._session import (
    ParsedSession,
    SessionEvent,
    SessionFileError,
    SessionHeader,
    parse_session_jsonl,
)
from tickler.core._state import EMPTY_STATE, SCHEDULE_CHANGE, State, evolve, fold, fold_changes
from tickler.core._tools import handle
from tickler.core._zones import TZDATA_VERSION

__all__ = [
    "DEFAULT_PROFILE",
    "EMPTY_STATE",
    "ERROR_CODES",
    "MAX_INSTANT_MS",
    "MIN_EVERY_INTERVAL_SECONDS",
    "MIN_INSTANT_MS",
    "PROFILES",
    "SCHEDULE_CHANGE",
    "SCHEDULE_CHANGE_VERSION",
    "TZDATA_VERSION",
    "AfterSchedule",
    "AtSchedule",
    "Breach",
    "CalendarMsg",
    "CalendarRule",
    "CalendarSchedule",
    "CatchUp",
    "Command",
    "CorruptScheduleLog",
    "CreateAfter",
    "CreateAt",
    "CreateCalendar",
    "CreateChange",
    "CreateChangeV2",
    "CreateEvery",
    "CreateSchedule",
    "Created",
    "DeleteChange",
    "DeleteChangeV2",
    "DeleteSchedule",
    "Deleted",
    "DeliverDue",
    "Delivery",
    "DispatchChange",
    "ErrorCode",
    "EveryOccurrence",
    "EverySchedule",
    "ListSchedules",
    "Listed",
    "NotFound",
    "Occurrence",
    "Operation",
    "Outcome",
    "ParsedSession",
    "Profile",
    "ReminderState",
    "ScheduleChange",
    "ScheduleError",
    "ScheduleRecord",
    "ScheduleView",
    "SeriesEnd",
    "SessionEvent",
    "SessionFileError",
    "SessionHeader",
    "Standing",
    "State",
    "ToolCommand",
    "ToolOutcome",
    "UpdateChange",
    "UpdateSchedule",
    "Updated",
    "Wait",
    "catch_up",
    "change_json",
    "check_log",
    "count_occurrences",
    "decide",
    "decode_change",
    "decode_change_value",
    "encode_change",
    "every_batch_framing",
    "evolve",
    "fold",
    "fold_changes",
    "format_instant",
    "handle",
    "is_due",
    "latest_occurrence_at_or_before",
    "local_time_text",
    "next_occurrence",
    "next_occurrences",
    "next_target",
    "one_shot_framing",
    "parse_at",
    "parse_calendar",
    "parse_instant",
    "parse_session_jsonl",
    "parse_tool_call",
    "persistence_uncertain",
    "reminder_standing",
    "render",
    "resolve_every_occurrence",
    "series_points",
    "series_step",
    "standing_rule",
    "tool_catalog",
]


def __dir__() -> list[str]:
    return sorted(__all__)
