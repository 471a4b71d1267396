"""Strategies for tool calls: arguments for every tool of both profiles,
drawn from each tool's input schema (everything the schema allows) and
beyond it (wrong types, extra keys, near misses of every format), so a
property can hold that any call gets a success or one of the ten closed
errors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, timedelta
from functools import cache
from typing import Any, Final

from hypothesis import strategies as st

from tickler.core import Profile, tool_catalog
from tickler.testing._changes import MAX_EVERY_SECONDS
from tickler.testing._values import (
    EPOCH,
    INSTANTS,
    MAX_MS,
    MAX_SAFE,
    MIN_MS,
    MS_PER_DAY,
    REFERENCE_NOW,
    SCHEDULE_IDS,
    ZONE_INPUTS,
    Json,
    blank_texts,
    json_values,
    load_zone,
    ms_of,
    nonblank_prompts,
    padded_texts,
    texts,
    tool_prompts,
    zone_names,
)

SECONDS_EDGES: Final = (
    0,
    -1,
    -300,
    1,
    299,
    300,
    301,
    86_400,
    MAX_SAFE,
    MAX_SAFE + 1,
    2**53,
    2**64,
    251_616_369_599,
    251_616_369_600,
    MAX_EVERY_SECONDS,
    MAX_EVERY_SECONDS + 1,
    1.5,
    30.0,
    300.0,
    -0.0,
    1e300,
    "300",
    True,
    False,
    None,
)


SECONDS_INPUTS: Final = st.one_of(
    st.integers(1, 100_000),
    st.integers(-10, 1_000),
    st.sampled_from(SECONDS_EDGES),
    st.floats(allow_nan=False, allow_infinity=False),
    json_values,
)
PROMPT_INPUTS: Final = st.one_of(tool_prompts, tool_prompts, json_values)


def _wall_fields(ms: int) -> tuple[str, str]:
    t = EPOCH + timedelta(milliseconds=ms)
    return (
        f"{t.year:04d}-{t.month:02d}-{t.day:02d}",
        f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}",
    )


@st.composite
def offset_at_strings(draw: st.DrawFn, now: int) -> str:
    """Strict RFC 3339 strings near ``now`` (or anywhere), with any offset form."""
    target = draw(
        st.one_of(
            st.integers(-2 * MS_PER_DAY, 2 * MS_PER_DAY).map(lambda d: now + d),
            st.sampled_from([now, now + 1, now - 1]),
            INSTANTS,
        )
    )
    target = max(MIN_MS, min(MAX_MS, target))
    offset_min = draw(st.one_of(st.just(0), st.integers(-23 * 60 - 59, 23 * 60 + 59)))
    wall = target + offset_min * 60_000
    if not MIN_MS <= wall <= MAX_MS:
        wall = target
        offset_min = 0
    date, clock = _wall_fields(wall)
    millis = f"{wall % 1000:03d}"
    digits = draw(st.integers(0, 3))
    fraction = "" if digits == 0 else "." + millis[:digits]
    if offset_min == 0 and draw(st.booleans()):
        zone = "Z"
    else:
        sign = "-" if offset_min < 0 else "+"
        zone = f"{sign}{abs(offset_min) // 60:02d}:{abs(offset_min) % 60:02d}"
    text = f"{date}T{clock}{fraction}{zone}"
    return draw(st.one_of(st.just(text), st.just(text), _broken(text)))


def _broken(text: str) -> st.SearchStrategy[str]:
    """Near misses of a valid at string."""
    return st.sampled_from(
        [
            text.replace("T", "t"),
            text.replace("Z", "z"),
            text.replace("T", " "),
            text[:-1] if text.endswith("Z") else text[:-3] + text[-2:],
            "0000" + text[4:],
            text[:5] + "13" + text[7:],
            text[:5] + "02-30" + text[10:],
            text[:5] + "04-31" + text[10:],
            text[:11] + "24" + text[13:],
            text[:17] + "60" + text[19:],
            text[:19] + ".1234" + ("Z" if text.endswith("Z") else "+00:00"),
            text[:19] + "-00:00",
            text[:19] + "+24:00",
            text[:19] + "+05:60",
            text[:19] + "+0800",
            text[:19] + "+08",
            text + "\n",
            " " + text,
            "\u0662" + text[1:],
        ]
    )


@st.composite
def local_at_objects(draw: st.DrawFn, now: int) -> Json:
    """Local ``{date, time, time_zone}`` values near ``now``, and near misses."""
    zone = draw(ZONE_INPUTS)
    target = draw(
        st.one_of(
            st.integers(-3 * MS_PER_DAY, 40 * MS_PER_DAY).map(lambda d: now + d),
            INSTANTS,
        )
    )
    target = max(MIN_MS + 3 * MS_PER_DAY, min(MAX_MS - 3 * MS_PER_DAY, target))
    wall = target
    if zone in zone_names():
        local = (EPOCH + timedelta(milliseconds=target)).astimezone(load_zone(zone))
        wall = ms_of(local.replace(tzinfo=UTC))
    date, clock = _wall_fields(wall)
    millis = draw(st.sampled_from(["", f".{wall % 1000:03d}", ".5", ".25"]))
    value: dict[str, Json] = {"date": date, "time": clock + millis, "time_zone": zone}
    tweak = draw(st.integers(0, 9))
    if tweak == 1:
        value["extra"] = draw(json_values)
    elif tweak == 2:
        del value[draw(st.sampled_from(sorted(value)))]
    elif tweak == 3:
        value[draw(st.sampled_from(sorted(value)))] = draw(json_values)
    elif tweak == 4:
        value["date"] = draw(
            st.sampled_from(["0000-01-01", "2026-02-30", "2026-13-01", "2026-1-1"])
        )
    elif tweak == 5:
        value["time"] = draw(
            st.sampled_from(["24:00:00", "12:60:00", "12:00:60", "12:00", "1:00:00"])
        )
    return value


def draw_at(draw: st.DrawFn, now: int) -> Json:
    """An ``at`` value: an offset string, a local object, or any JSON."""
    match draw(st.integers(0, 2)):
        case 0:
            return draw(offset_at_strings(now))
        case 1:
            return draw(local_at_objects(now))
        case _:
            return draw(json_values)


@st.composite
def create_arguments(draw: st.DrawFn, now: int) -> Json:
    """``schedule_create`` arguments: mostly one selector, sometimes not."""
    args: dict[str, Json] = {}
    if draw(st.integers(0, 9)) > 0:
        args["prompt"] = draw(PROMPT_INPUTS)
    selectors = draw(
        st.one_of(
            st.sampled_from([["after_seconds"], ["at"], ["every_seconds"]]),
            st.lists(st.sampled_from(["after_seconds", "at", "every_seconds"]), unique=True),
        )
    )
    for selector in selectors:
        args[selector] = draw_at(draw, now) if selector == "at" else draw(SECONDS_INPUTS)
    if draw(st.integers(0, 14)) == 0:
        args[draw(texts)] = draw(json_values)
    return args


@st.composite
def valid_create_arguments(draw: st.DrawFn, now: int) -> dict[str, Json]:
    """``schedule_create`` arguments likely to succeed at ``now``."""
    prompt = draw(nonblank_prompts)
    kind = draw(st.sampled_from(["after_seconds", "every_seconds", "at"]))
    value: Json
    if kind == "after_seconds":
        value = draw(st.integers(1, 40 * 86_400))
    elif kind == "every_seconds":
        value = draw(st.integers(300, 3 * 86_400))
    else:
        value = draw(offset_at_strings(now))
    return {"prompt": prompt, kind: value}


# --- arguments read from a JSON Schema ------------------------------------------

_KNOWN = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "anyOf",
        "enum",
        "pattern",
        "maxLength",
        "minimum",
        "description",
    }
)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values ``schema`` allows. hypothesis-jsonschema does not run on this
    Hypothesis, so this small reader stands in for the subset the extended
    tool schemas use (object, string with pattern or maxLength, integer with
    minimum, boolean, null, enum, anyOf); it refuses any keyword it does not
    know, so a schema change cannot slip past it untested."""
    unknown = schema.keys() - _KNOWN
    if unknown:
        raise ValueError(f"schema keywords this reader does not know: {sorted(unknown)}")
    if "anyOf" in schema:
        return st.one_of([from_schema(branch) for branch in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low = schema.get("minimum", -MAX_SAFE)
        # mostly small values, sometimes the edges of the safe range
        return st.one_of(st.integers(low, low + 100_000), st.integers(low, MAX_SAFE))
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True)
        return st.text(max_size=min(schema.get("maxLength", 40), 40))
    if kind == "object":
        assert schema.get("additionalProperties") is False
        required = set(schema.get("required", ()))
        properties = schema.get("properties", {})
        assert required == set(properties), "strict: every property required"
        return st.fixed_dictionaries({k: from_schema(v) for k, v in properties.items()})
    raise ValueError(f"schema type this reader does not know: {kind!r}")


# --- tool calls ---------------------------------------------------------------------

_SELECTORS: Final = ("after_seconds", "at", "every_seconds", "calendar")
_CRONS: Final = ("0 9 * * 1-5", "@daily", "30 2 * * *", "*/15 * * * *", "0 0 29 2 *")
# Near misses of the tool names: unknown tools, answered internal_error.
_OTHER_NAMES: Final = ("schedule_get", "Schedule_create", "schedule_create ", "", "schedule")


@dataclass(frozen=True)
class ToolCall:
    """A tool call as a model sends it: the tool's name and its arguments
    (any JSON value: an object, or anything a broken client sends)."""

    name: str
    arguments: Json


def _ids_near(arguments: dict[str, Any], ids: Sequence[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Half the time, aim an ``id`` at one of ``ids`` (reminders that exist)."""
    if "id" not in arguments or not ids:
        return st.just(arguments)
    return st.sampled_from([*ids, arguments["id"]]).map(
        lambda schedule_id: {**arguments, "id": schedule_id}
    )


def _readable_cron(arguments: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A calendar draw (in ``when``) often carries a cron that parses, so
    the answers are not all ``invalid_rule``."""
    when = arguments.get("when")
    if not isinstance(when, dict) or "calendar" not in when:
        return st.just(arguments)

    def readable(cron: str) -> dict[str, Any]:
        calendar = {**when["calendar"], "cron": cron, "time_zone": "Europe/Berlin"}
        return {**arguments, "when": {"calendar": calendar}}

    return st.one_of(st.just(arguments), st.sampled_from(_CRONS).map(readable))


def _update_often_keeps_its_schedule(
    arguments: dict[str, Any],
) -> st.SearchStrategy[dict[str, Any]]:
    """Half an update's draws leave ``when`` null, so its other changes
    are reached (the schema's draws carry a new schedule four times in five)."""
    if "id" not in arguments or "when" not in arguments:
        return st.just(arguments)
    return st.sampled_from([arguments, {**arguments, "when": None}])


def _in_when(arguments: dict[str, Json]) -> dict[str, Json]:
    """Flat create arguments in the ``when`` form the extended schema states."""
    flat = {k: v for k, v in arguments.items() if k in _SELECTORS}
    return {**{k: v for k, v in arguments.items() if k not in _SELECTORS}, "when": flat}


def schema_arguments(
    name: str, profile: Profile = "extended", ids: Sequence[str] = ()
) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments of tool ``name`` that its input schema allows (the extended
    profile's strict schemas), an ``id`` often one of ``ids``."""
    aimed = tuple(ids)
    return _from_tool_schema(name, profile).flatmap(lambda arguments: _ids_near(arguments, aimed))


@cache
def _from_tool_schema(name: str, profile: Profile) -> st.SearchStrategy[dict[str, Any]]:
    catalog = {tool["name"]: tool for tool in tool_catalog(profile=profile)}
    schema: dict[str, Any] = catalog[name]["input_schema"]
    return from_schema(schema).flatmap(_readable_cron).flatmap(_update_often_keeps_its_schedule)


@cache
def _tool_names(profile: Profile) -> tuple[str, ...]:
    return tuple(str(tool["name"]) for tool in tool_catalog(profile=profile))


def _id_value(ids: Sequence[str]) -> st.SearchStrategy[Json]:
    aimed = [st.sampled_from(list(ids))] if ids else []
    return st.one_of(*aimed, SCHEDULE_IDS, padded_texts, blank_texts, json_values)


def _by_hand(name: str, profile: Profile, now: int, ids: Sequence[str]) -> st.SearchStrategy[Json]:
    """Arguments beyond the schema: every form and near miss a field takes."""
    if name == "schedule_create":
        forms = [create_arguments(now), valid_create_arguments(now)]
        if profile == "extended":  # the flat selectors, or one in ``when``
            forms += [
                create_arguments(now).map(_in_when),
                valid_create_arguments(now).map(_in_when),
            ]
        return st.one_of(forms)
    if name == "schedule_delete":
        return st.fixed_dictionaries({}, optional={"id": _id_value(ids)})
    if name == "schedule_update":
        members = {
            "prompt": PROMPT_INPUTS,
            "paused": st.one_of(st.booleans(), json_values),
            "snooze_seconds": SECONDS_INPUTS,
        }
        return st.fixed_dictionaries({"id": _id_value(ids)}, optional=members)
    return st.one_of(st.just({}), st.dictionaries(texts, json_values, max_size=2))


@st.composite
def tool_calls(
    draw: st.DrawFn,
    profile: Profile = "reference",
    now: int = REFERENCE_NOW,
    ids: Sequence[str] = (),
) -> ToolCall:
    """Any call to a tool of ``profile``'s catalog at ``now``: arguments the
    schema allows (extended profile), every form of each field and its near
    misses, an extra key, arguments that are no object, and now and then an
    unknown tool. ``ids`` are ids worth aiming delete and update at."""
    names = _tool_names(profile)
    match draw(st.integers(0, 19)):
        case 0:
            return ToolCall(draw(st.sampled_from([*_OTHER_NAMES, *names])), draw(json_values))
        case 1:
            return ToolCall(draw(st.sampled_from(_OTHER_NAMES)), {})
        case _:
            name = draw(st.sampled_from(names))
    sources = [_by_hand(name, profile, now, ids)]
    if profile == "extended":
        sources.append(schema_arguments(name, profile, ids))
    arguments = draw(st.one_of(sources))
    if isinstance(arguments, dict) and draw(st.integers(0, 14)) == 0:
        arguments = {**arguments, draw(texts): draw(json_values)}
    return ToolCall(name, arguments)
