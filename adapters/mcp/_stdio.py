"""The stdio transport of tickler's MCP server: newline-delimited JSON-RPC on
the process's stdin and stdout, where every line read gets an answer.

The SDK's own transport (``mcp.server.stdio.stdio_server``) drops a line its
JSON reader refuses, so the request on it is never answered and the client
waits until its own timeout. Its reader refuses JSON the reference (whose
JavaScript reads it with ``JSON.parse``) accepts: a lone surrogate escape
(``"\\udc00"``), nesting deeper than about 200 levels, an integer of more
than 4,300 digits. This transport:

* reads each line with the SDK's reader first, then, when that refuses it,
  as ``JSON.parse`` would: any depth, lone surrogates as they are, an
  integer too large for a double as infinity (a number JSON cannot carry,
  which the tools refuse with the closed code for its place). A line that
  holds a valid message then is served like any other;
* answers a line that still holds no valid message with a JSON-RPC error:
  ``-32700`` (parse error) for text that is not JSON, ``-32600`` (invalid
  request) for JSON that is not a JSON-RPC message or for a line over
  :data:`MAX_LINE_BYTES`; with the request's ``id`` when one can be read
  from the line (from its first 64 KiB, for text that is not JSON or too
  long), else ``null``.
  A malformed response (the client's answer to the server) is logged, not
  answered; a blank line is skipped;
* reads a line over :data:`MAX_LINE_BYTES` no further than the limit and
  skips the rest as it arrives, so reading never holds more than that (a
  line under it still costs what its JSON values cost as Python objects);
* writes each message serialised once, as bytes, and a message that cannot
  be serialised as it is (a lone surrogate in a prompt or an error message)
  with each lone surrogate written as its ``\\uXXXX`` escape, as the tool's
  text writes it.

While it serves, fd 0 reads the null device and fd 1 writes to stderr (as
with the SDK's transport), so a child process or a stray ``print`` cannot
touch the protocol; both are restored at the end.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
from collections.abc import AsyncIterator, Collection, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, BinaryIO, Final, TypeAlias

import anyio
import anyio.to_thread
from pydantic import ValidationError

from tickler.adapters.mcp._conventions import message_json
from tickler.core import deep_json_loads, deep_json_value

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCError, JSONRPCMessage

__all__ = [
    "MAX_LINE_BYTES",
    "TooLong",
    "decode_line",
    "encode_message",
    "read_line",
    "stdio_transport",
]

logger = logging.getLogger("tickler.mcp")

MAX_LINE_BYTES: Final = 4 * 1024 * 1024
"""The longest line (one JSON-RPC message, without its newline) the server
reads, the SDK's default limit for an HTTP request body; a longer one is
answered ``-32600`` and skipped."""

_HEAD_BYTES: Final = 64 * 1024  # of a line that holds no message: where its id is looked for
_CHUNK: Final = 1024 * 1024  # read at a time
_WRITE_AT_ONCE: Final = 64 * 1024  # smaller messages go out with their newline in one write
_LARGEST_INT_DIGITS: Final = 4300  # Python's int() limit; JavaScript reads any length

RequestId: TypeAlias = "int | str"
Inbound: TypeAlias = "SessionMessage | JSONRPCError | None"


class TooLong:
    """An over-long line: its first bytes and its length."""

    __slots__ = ("head", "length")

    def __init__(self, head: bytes, length: int) -> None:
        self.head = head
        self.length = length


class _NoAnswer:
    """A line that gets no answer: it is a (malformed) response."""


_NO_ANSWER: Final = _NoAnswer()


# -- reading ------------------------------------------------------------------


def decode_line(line: bytes) -> Inbound:
    """What one line holds (its newline may be left on): the message to
    serve, the error response that answers it, or ``None`` when there is
    nothing to serve or answer (a blank line, a malformed response)."""
    from mcp.shared.message import SessionMessage
    from mcp.types import INVALID_REQUEST, PARSE_ERROR, jsonrpc_message_adapter

    if not line or line.isspace():
        return None
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValidationError:
        pass
    # Invalid UTF-8 reads as U+FFFD, as the SDK's reader and the reference's read it.
    text = line.decode("utf-8", "replace")
    try:
        value = js_json(text)
    except ValueError as exc:
        return _refusal(_head_addressee(text), PARSE_ERROR, "Parse error", f"not JSON ({exc})")
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_python(value, by_name=False))
    except ValidationError:
        pass
    addressee = _addressee(value, value.keys()) if isinstance(value, dict) else None
    return _refusal(
        addressee,
        INVALID_REQUEST,
        "Invalid Request: not a JSON-RPC 2.0 message",
        "not a JSON-RPC message",
    )


def _too_long(line: TooLong) -> JSONRPCError | None:
    from mcp.types import INVALID_REQUEST

    return _refusal(
        _head_addressee(line.head.decode("utf-8", "replace")),  # a cut character: U+FFFD
        INVALID_REQUEST,
        f"Invalid Request: a message may be at most {MAX_LINE_BYTES} bytes",
        f"{line.length} bytes long",
    )


def _refusal(
    addressee: RequestId | _NoAnswer | None, code: int, message: str, why: str
) -> JSONRPCError | None:
    if isinstance(addressee, _NoAnswer):
        logger.warning("dropped a malformed response from the client: %s", why)
        return None
    logger.warning("answered %d to request %r: the line is %s", code, addressee, why)
    return _error(addressee, code, message)


def js_json(text: str) -> object:
    """The JSON value ``text`` holds, read as JavaScript's ``JSON.parse``
    reads it: any nesting depth, lone surrogate escapes kept, an integer
    too long for Python's ``int()`` read as the (infinite) double it is.
    Raises ``ValueError`` for text that is not JSON."""
    try:
        return json.loads(text, parse_int=_js_int, parse_constant=_not_json)
    except RecursionError:
        return deep_json_loads(text)


def _js_int(digits: str) -> object:
    if len(digits) <= _LARGEST_INT_DIGITS:
        return int(digits)
    return float(digits)  # more than 4,300 digits: beyond any double, so infinity


def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _addressee(
    members: Mapping[str, object], keys: Collection[str]
) -> RequestId | _NoAnswer | None:
    """Whom an error about a malformed message goes to: the request's id
    (``None`` when it has no valid one), or no one for a response."""
    if "method" not in keys and ("result" in keys or "error" in keys):
        return _NO_ANSWER
    request_id = members.get("id")
    if isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    ):
        return request_id
    return None


_MEMBER_KEY: Final = re.compile(r'[ \t\n\r]*("(?:[^"\\\x00-\x1f]++|\\.)*+")[ \t\n\r]*:')
_OPEN: Final = re.compile(r"[ \t\n\r]*\{")
_COMMA: Final = re.compile(r"[ \t\n\r]*,")


def _head_addressee(text: str) -> RequestId | _NoAnswer | None:
    """:func:`_addressee` from the members a JSON object starts with: those
    read whole before the text stops being JSON or ends (and the key of the
    member it stops in), in its first :data:`_HEAD_BYTES` characters (this
    reader is slow, and the line may be long)."""
    text = text[:_HEAD_BYTES]
    members: dict[str, object] = {}
    keys: list[str] = []
    match = _OPEN.match(text)
    while match is not None:
        key = _MEMBER_KEY.match(text, match.end())
        if key is None:
            break
        try:
            name = json.loads(key.group(1))
        except ValueError:
            break
        keys.append(name)
        try:
            members[name], end = deep_json_value(text, key.end())
        except ValueError:
            break
        match = _COMMA.match(text, end)
    return _addressee(members, keys)


def _error(request_id: RequestId | None, code: int, message: str) -> JSONRPCError:
    from mcp.types import ErrorData, JSONRPCError

    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


def read_line(source: BinaryIO) -> bytes | TooLong | None:
    """One line (the last one may lack its newline), ``None`` at the end of
    the input. A line over the limit is read only that far, and the rest
    skipped as it arrives. The newline (JSON whitespace) is kept: cutting
    it off would copy the line."""
    chunk = source.readline(_CHUNK)
    if not chunk:
        return None
    if chunk.endswith(b"\n") or len(chunk) < _CHUNK:  # short without a newline: the end
        return chunk  # a line of one chunk, nearly every line
    chunks, length = [chunk], len(chunk)
    while True:
        chunk = source.readline(_CHUNK)
        length += len(chunk)
        if length - chunk.endswith(b"\n") > MAX_LINE_BYTES:
            break
        chunks.append(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return b"".join(chunks)
    head = chunks[0][:_HEAD_BYTES]
    del chunks
    while chunk and not chunk.endswith(b"\n"):
        chunk = source.readline(_CHUNK)
        length += len(chunk)
    return TooLong(head, length - chunk.endswith(b"\n"))


# -- writing ------------------------------------------------------------------


def encode_message(message: JSONRPCMessage) -> bytes:
    """The message as one JSON text, UTF-8 (no newline): what the SDK's
    transport writes, serialised once. A lone surrogate (which UTF-8 cannot
    carry as a character) is written as its ``\\uXXXX`` escape, as the tool's
    text writes it (:func:`~tickler.adapters.mcp._conventions.message_json`);
    a message that still cannot be serialised becomes an internal error for
    its request, or raises ``ValueError``."""
    from mcp.types import INTERNAL_ERROR, JSONRPCError, JSONRPCResponse, jsonrpc_message_adapter

    try:
        return jsonrpc_message_adapter.dump_json(message, by_alias=True, exclude_unset=True)
    except ValueError:
        pass
    try:
        plain = message.model_dump(by_alias=True, mode="json", exclude_unset=True)
        return message_json(plain).encode("utf-8")
    except (ValueError, RecursionError):
        if not isinstance(message, JSONRPCResponse | JSONRPCError) or message.id is None:
            raise
    logger.error("could not serialise the answer to request %r", message.id)
    fallback = _error(message.id, INTERNAL_ERROR, "Internal error: the answer could not be sent")
    return jsonrpc_message_adapter.dump_json(fallback, by_alias=True, exclude_unset=True)


def _write_line(fd: int, data: bytes) -> None:
    if len(data) < _WRITE_AT_ONCE:
        _write_all(fd, data + b"\n")
    else:
        _write_all(fd, data)
        _write_all(fd, b"\n")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# -- the transport --------------------------------------------------------------


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """``(read_stream, write_stream)`` for ``Server.run``, served over the
    process's stdin and stdout until stdin ends (or the block is left)."""
    from mcp.shared.message import SessionMessage

    with _claimed(0) as stdin_fd, _claimed(1) as stdout_fd:
        # closefd=False: a reader thread may still block on the descriptor after
        # the transport is done, so it is never closed and recycled under it.
        source = os.fdopen(stdin_fd, "rb", closefd=False)
        inbound_send, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
        reading = anyio.CancelScope()

        async def read() -> None:
            with reading:
                async with inbound_send, outbound.clone() as answers:
                    while not isinstance(item := await _next_inbound(source), _End):
                        try:
                            if isinstance(item, SessionMessage):
                                await inbound_send.send(item)
                            elif item is not None:
                                await answers.send(SessionMessage(item))
                        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                            return  # the server or the writer is gone
                        item = None  # not kept (with its arguments) until the next line

        async def write() -> None:
            async with outbound_receive:
                async for message in outbound_receive:
                    try:
                        await _write_message(stdout_fd, message.message)
                    except OSError as exc:  # the client closed its end
                        logger.warning("stopped writing to stdout: %s", exc)
                        return
                    del message  # not kept (with the answer) until the next one

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            try:
                yield inbound, outbound
            finally:
                reading.cancel()  # done already unless the server stopped first
                outbound.close()


class _End:
    """The end of the input."""


async def _write_message(fd: int, message: JSONRPCMessage) -> None:
    try:
        data = encode_message(message)
    except (ValueError, RecursionError):
        logger.exception("dropped an outgoing message that cannot be serialised")
        return
    await anyio.to_thread.run_sync(_write_line, fd, data)


async def _next_inbound(source: BinaryIO) -> Inbound | _End:
    """The next line's message, its error response, ``None`` (nothing to
    do), or ``_End`` at the end of the input. The line is read and decoded
    in a worker thread (a long line's slow path does not stall the event
    loop), and its bytes are released before this returns."""
    return await anyio.to_thread.run_sync(_read_inbound, source, abandon_on_cancel=True)


def _read_inbound(source: BinaryIO) -> Inbound | _End:
    line = read_line(source)
    if line is None:
        return _End()
    if isinstance(line, TooLong):
        return _too_long(line)
    return decode_line(line)


@contextmanager
def _claimed(fd: int) -> Iterator[int]:
    """A private duplicate of the standard descriptor ``fd`` (0 or 1) for
    the protocol, while ``fd`` itself reads the null device (stdin) or
    writes to stderr (stdout); restored on exit. The duplicate is never
    closed (see :func:`stdio_transport`)."""
    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    diversion = os.open(os.devnull, os.O_RDONLY) if fd == 0 else os.dup(2)
    try:
        os.dup2(diversion, fd)
    finally:
        os.close(diversion)
    try:
        yield private
    finally:
        os.dup2(private, fd)
