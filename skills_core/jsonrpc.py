"""Sans-IO JSON-RPC 2.0: a newline-delimited endpoint, and one message on its own
(docs/protocol.md#envelope, docs/protocol.md#stdio).

Theory of operation
-------------------
One :class:`JsonRpcConnection` is one end of one byte stream: the stdio pipe of an MCP server, as
seen by the server or by the host that started it. The class knows nothing about roles, methods or
MCP semantics beyond the envelope; a server adapter and a client adapter drive the same code.

*Input.* :meth:`JsonRpcConnection.receive_data` only buffers bytes (``b""`` means end of stream).
:meth:`JsonRpcConnection.next_event` takes one complete line off the buffer, turns it into one event
and returns it, or returns :data:`NEED_DATA` when no complete line is buffered. A line ends at
``b"\\n"`` and nowhere else (docs/protocol.md#stdio: "one JSON-RPC message per line ... MUST NOT
contain embedded newlines"); a ``\\r`` before it is JSON whitespace and tolerated; blank lines are
skipped. The search for the newline resumes where the last one stopped, so a message arriving in
many chunks is scanned once. Decoding is strict: UTF-8 without replacement, RFC 8259 JSON without
``NaN``/``Infinity``, without numbers that overflow a double, without duplicate object keys (a JSON
object with two ``id`` members reads differently in different parsers) and without lone UTF-16
surrogate escapes (no UTF-8 writer can send those on, so they would break the reply). Decoded values
are classified per JSON-RPC 2.0 §4-§5 and MCP's schema (docs/protocol.md#envelope) into requests,
notifications (with ``notifications/cancelled`` surfaced as :class:`CancelRequested`) and responses,
which are matched against the requests this side sent.

*Problems never raise.* Anything the peer gets wrong becomes an event: :class:`InvalidMessage`
carries a :class:`~skills_core.errors.RemoteProtocolError` and, when JSON-RPC calls for one, the
exact error reply to write back; :class:`InvalidResponse` fails the one pending request that a
malformed response names; :class:`UnmatchedResponse` and :class:`LateResponse` report responses
nobody is waiting for. The connection never sends anything by itself: replies are suggestions that
the adapter writes or drops by its own policy. Only misuse by the caller raises
(:class:`~skills_core.errors.LocalProtocolError`).

*Output.* ``send_*`` methods return the bytes of one message, ``b"\\n"``-terminated, and record what
must be remembered: each :meth:`~JsonRpcConnection.send_request` allocates the next integer id and
adds a pending entry, which the matching response (or :meth:`~JsonRpcConnection.send_cancel`, or
the end of the stream) removes. Before serialising, every value is checked to be plain JSON
(string keys, finite numbers, valid Unicode, no sets or bytes): the connection never writes a
message that its own parser, or a strict peer, would have to reject.

*Answers.* A server's request handler answers with an :data:`Answer`: a result object, an
:class:`EncodedResult` (a result encoded once, spliced into any number of responses) or an
:class:`ErrorObject`. :meth:`~JsonRpcConnection.send_answer` turns any of them into the response
for a request id. The sends that answer requests change no state.

*End of stream.* After ``receive_data(b"")``, the remaining lines are returned, then one
:class:`ConnectionClosed` naming every request still pending; it is returned again on every later
call. A request sent after the end of stream could never be answered and is refused.

*One message on its own.* A transport without newline framing (an HTTP request body) reads one
message with :func:`parse_message`, and a caller that holds a decoded dict with
:func:`classify_message`. Both apply the endpoint's own checks, as the same module functions, in
the same order, and give the same verdict the message would get as a line of a stream, except
that a response is refused (-32600) rather than reported: only requests and notifications can be
sent to a server on their own.

The events live in :mod:`skills_core._jsonrpc_events` and the encoders in
:mod:`skills_core._jsonrpc_encode`; this module is where they are documented and exported.

Limits (explicit, so that a hostile or broken peer costs bounded memory):

* :data:`DEFAULT_MAX_MESSAGE_SIZE` bytes per line (configurable). A longer line is reported as soon
  as the buffer passes the limit, and the rest of it is dropped, never buffered, up to the next
  newline. The buffer therefore never holds more than the limit plus the last chunk received.
* :data:`MAX_REMEMBERED_CANCELLATIONS` cancelled ids, to recognise late responses.
* Nesting depth: bounded by the interpreter's recursion limit (about 1000 levels by default); a
  deeper message is a parse error, never a crash. Value objects that take JSON in apply the
  stricter :data:`skills_core.jsonvalue.MAX_JSON_DEPTH`.

Decisions where JSON-RPC 2.0 and MCP leave room (each repeated where it is implemented):

* A JSON array is a batch, which MCP removed in 2025-06-18: -32600 with id null, one reply.
* ``params`` that is not structured (a string, a number, ``null``) makes an invalid Request object
  (JSON-RPC §4.2: "MUST be provided as a Structured value"): -32600. ``params`` as an array is valid
  JSON-RPC, but MCP methods take named parameters only: -32602 (invalid params).
* Request ids are strings or integers; ``null``, booleans and fractional numbers are refused
  (MCP: "never null"; JSON-RPC §4: "Numbers SHOULD NOT contain fractional parts").
* A ``result`` must be an object: every MCP result is one (``Result`` in schema.ts, even ``ping``'s
  ``{}``); a scalar result is an invalid response.
* Unknown members of the envelope are ignored (JSON-RPC does not forbid them).
* A final line without a newline at end of stream is accepted when it decodes as JSON (a peer that
  writes its last message and exits should be heard); otherwise the stream is reported truncated.
* A response for a request we cancelled is a :class:`LateResponse` (MCP cancellation: the sender
  "SHOULD ignore any response to the request that arrives afterward"), not an
  :class:`UnmatchedResponse`, so adapters can drop the first and log the second.
* The ids of the peer's requests are not tracked: they are the peer's namespace, and answering
  each request once (or not at all, once cancelled) is the caller's job.
"""

from __future__ import annotations

import enum
import json
import math
from collections import Counter
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, NoReturn, cast, final

from ._jsonrpc_encode import (
    Answer,
    EncodedResult,
    ErrorObject,
    check_method,
    check_object,
    check_request_id,
    encode_response,
    encode_result,
    encode_text,
    invalid_argument,
)
from ._jsonrpc_events import (
    NEED_DATA,
    CancelRequested,
    ConnectionClosed,
    ErrorResponseReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    JSONObject,
    JsonRpcErrorKind,
    JsonRpcEvent,
    LateResponse,
    NeedData,
    NotificationReceived,
    ReceivedMessage,
    RequestId,
    RequestReceived,
    ResponseReceived,
    UnmatchedResponse,
    is_request_id,
    new_request,
)
from .errors import LocalProtocolError, RemoteProtocolError, quote_for_message
from .jsonvalue import JSONValue, json_type_name
from .spec import ErrorCode, Method

__all__ = [
    # limits
    "DEFAULT_MAX_MESSAGE_SIZE",
    "MAX_REMEMBERED_CANCELLATIONS",
    # types
    "JSONObject",
    "RequestId",
    "JsonRpcErrorKind",
    # the endpoint
    "JsonRpcConnection",
    "NeedData",
    "NEED_DATA",
    # one message on its own (HTTP bodies, dicts held in memory)
    "parse_message",
    "classify_message",
    "ReceivedMessage",
    # answers to send
    "Answer",
    "EncodedResult",
    "encode_result",
    "ErrorObject",
    # events
    "Event",
    "RequestReceived",
    "NotificationReceived",
    "CancelRequested",
    "ResponseReceived",
    "ErrorResponseReceived",
    "InvalidResponse",
    "LateResponse",
    "UnmatchedResponse",
    "InvalidMessage",
    "ConnectionClosed",
    "JsonRpcEvent",
]

# --- limits ----------------------------------------------------------------------------------

#: Largest message, in bytes, that the connection accepts or writes: 32 MiB.
#:
#: The limit counts every byte of a line before its ``\n`` (a ``\r`` and padding included). Why
#: this number: the largest single message MCP Skills needs is a ``resources/read`` result carrying
#: one file of the extension's 16 MiB per-skill maximum (ENTRY-17) as base64: 4 * ceil(16 MiB / 3)
#: = 22,369,624 bytes, plus an envelope of a few hundred bytes, plus about 1.6% more if the peer
#: escapes ``/`` as ``\/``. 32 MiB covers that with room to spare. Text content can expand more
#: (a newline becomes two bytes, a control character six, and an ``ensure_ascii`` writer turns each
#: CJK character into six bytes); such a file is refused unless both sides raise the limit, so
#: servers should send large escaping-heavy files as ``blob``. Precedents for a fixed cap on one
#: message: gRPC refuses received messages over 4 MiB by default; Chrome native messaging caps
#: messages to the host at 64 MiB; h11 caps an incomplete HTTP head at 16 KiB for the same reason
#: (``DEFAULT_MAX_INCOMPLETE_EVENT_SIZE``). Decoding one maximal line costs roughly three times
#: its size in memory at peak (bytes, text, parsed value).
DEFAULT_MAX_MESSAGE_SIZE: Final = 32 * 1024 * 1024

#: Smallest ``max_message_size`` accepted: every error reply the connection builds (id null, a
#: one-sentence message with quoted peer data cut to 120 characters) must fit.
_SMALLEST_MAX_MESSAGE_SIZE: Final = 1024

#: How many cancelled request ids are remembered so that their late responses are recognised.
#: MCP (docs/protocol.md#stdio) lets a response cross the cancellation on the wire, so one may
#: arrive about one round trip after :meth:`JsonRpcConnection.send_cancel`; a peer that honours the
#: cancellation sends none, so the entries are not removed by the peer and must be bounded. Hosts
#: keep a handful of requests in flight; 1024 covers any realistic burst. Beyond it the oldest id is
#: forgotten and its late response, if any, is reported as an :class:`UnmatchedResponse` instead.
MAX_REMEMBERED_CANCELLATIONS: Final = 1024


class _Blank(enum.Enum):
    BLANK = "BLANK"


# --- decoding --------------------------------------------------------------------------------


def _parse_error(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(
        message, kind=JsonRpcErrorKind.PARSE_ERROR, rpc_code=ErrorCode.PARSE_ERROR
    )


def _object_from_pairs(pairs: list[tuple[str, JSONValue]]) -> JSONObject:
    # RFC 8259 §4: "The names within an object SHOULD be unique"; when they are not, parsers
    # disagree on which value wins, so a message could mean one thing to a proxy and another to us.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        counts = Counter(key for key, _ in pairs)
        duplicate = max(counts, key=counts.__getitem__)
        raise _parse_error(f"duplicate object key {_quote(duplicate)}")
    return obj


def _reject_constant(name: str) -> NoReturn:
    # Python's json accepts NaN, Infinity and -Infinity by default; RFC 8259 §6 does not.
    raise _parse_error(f"{name} is not a JSON number")


def _parse_float(text: str) -> float:
    # "1e400" is valid JSON grammar but overflows a double to inf, which no JSON writer can send on.
    number = float(text)
    if math.isinf(number):
        raise _parse_error(f"number {_quote(text, 40)} is out of range")
    return number


_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_object_from_pairs,
    parse_float=_parse_float,
    parse_constant=_reject_constant,
)
#: The decoder's scanner, called directly: ``JSONDecoder.decode`` adds two regular-expression
#: matches and two Python calls around it, which a small request would pay for each time.
#: (``scan_once`` is the instance attribute ``JSONDecoder.__init__`` sets; typeshed omits it.)
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = vars(_DECODER)["scan_once"]
#: JSON whitespace (RFC 8259 §2): space, tab, LF and CR.
_WHITESPACE: Final = " \t\n\r"


def _contains_surrogate(value: JSONValue) -> bool:
    # A decoded string holds a surrogate code point only if it came from an unpaired escape such
    # as "\\ud800": json joins valid pairs, and strict UTF-8 decoding refuses encoded surrogates.
    stack: list[JSONValue] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            # isascii() is O(1) on CPython; encoding is the fastest full check.
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _parse_json(data: bytes | bytearray) -> JSONValue | _Blank:
    """Decode one JSON text: a line without its ``\\n``, or a whole message; strict (see above).

    Raises:
        RemoteProtocolError: a parse error (-32700).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _parse_error(
            f"the message is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        ) from exc
    text = text.strip(_WHITESPACE)
    if not text:
        return _Blank.BLANK
    try:
        value: JSONValue
        value, end = _SCAN(text, 0)
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    except StopIteration as exc:  # what the scanner raises when no value starts at 0
        raise _parse_error(
            f"the message is not valid JSON (Expecting value at character {exc.value})"
        ) from None
    except json.JSONDecodeError as exc:
        raise _parse_error(
            f"the message is not valid JSON ({exc.msg} at character {exc.pos})"
        ) from exc
    except ValueError as exc:
        # An integer longer than sys.get_int_max_str_digits() digits.
        raise _parse_error(
            f"the message is not valid JSON ({quote_for_message(str(exc))})"
        ) from exc
    except RecursionError as exc:
        raise _parse_error("JSON value is nested too deeply") from exc
    # A surrogate can only come from an escape: a message without a backslash needs no walk.
    # (A one-character search runs at memchr speed; a search for "\\ud" would be far slower.)
    if "\\" in text and _contains_surrogate(value):
        raise _parse_error("a string contains an unpaired UTF-16 surrogate escape")
    return value


def _quote(text: str, limit: int = 120) -> str:
    """quote_for_message for a peer's string, without building the repr of all of a huge one."""
    return quote_for_message(text[: limit + 8], limit)


def _known_code(code: int) -> int:
    # STYLE habit 5: known codes as IntEnum members, unknown integers passed through unchanged.
    try:
        return ErrorCode(code)
    except ValueError:
        return code


def _check_max_message_size(max_message_size: object) -> int:
    if not isinstance(max_message_size, int) or isinstance(max_message_size, bool):
        raise TypeError(f"max_message_size must be an int, not {type(max_message_size)}")
    if max_message_size < _SMALLEST_MAX_MESSAGE_SIZE:
        raise ValueError(
            f"max_message_size must be at least {_SMALLEST_MAX_MESSAGE_SIZE}, "
            f"got {max_message_size}"
        )
    return max_message_size


# --- classification (JSON-RPC 2.0 §4, §5; docs/protocol.md#envelope) ---------------------------
# One set of checks for every way a message arrives: a line of a stream (JsonRpcConnection), a
# whole body (parse_message) or a decoded value (classify_message).


def _classify_value(value: object, max_size: int) -> ReceivedMessage | None:
    """The verdict on one decoded message; None when it is a response (the caller decides)."""
    if isinstance(value, dict):
        if "method" in value:
            return _classify_call(value, max_size)
        if "result" in value or "error" in value:
            return None
        raw_id = value.get("id")
        return _refuse(
            _invalid_request("a message must have a 'method', a 'result' or an 'error'"),
            raw_id if is_request_id(raw_id) else None,
            max_size,
        )
    if isinstance(value, list):
        # JSON-RPC §6 batches; MCP removed them in 2025-06-18 and 2026-07-28 has none
        # (docs/protocol.md#envelope). JSON-RPC answers an invalid batch with a single -32600 and id
        # null.
        return _refuse(
            _invalid_request(
                "batches (JSON arrays) are not supported by MCP", JsonRpcErrorKind.BATCH
            ),
            None,
            max_size,
        )
    return _refuse(
        _invalid_request(f"a message must be a JSON object, not {json_type_name(value)}"),
        None,
        max_size,
    )


def _classify_call(message: JSONObject, max_size: int) -> ReceivedMessage:
    raw_id = message.get("id")
    # JSON-RPC §5: the reply carries the request's id when it can be read, else null. (The
    # exact types first: the check of every request, without a call.)
    reply_id: RequestId | None = None
    if type(raw_id) is int or type(raw_id) is str or is_request_id(raw_id):
        reply_id = raw_id
    has_id = reply_id is not None or "id" in message
    method = message["method"]
    if message.get("jsonrpc") != "2.0":
        # JSON-RPC §4: "jsonrpc ... MUST be exactly "2.0"".
        return _refuse(_invalid_request(_bad_version(message)), reply_id, max_size)
    if not isinstance(method, str):
        return _refuse(
            _invalid_request(f"'method' must be a string, not {json_type_name(method)}"),
            reply_id,
            max_size,
        )
    if has_id and reply_id is None:
        # MCP schema: "id: string | number /* never null */"; JSON-RPC §4: numbers "SHOULD NOT
        # contain fractional parts". A request without a usable id gets its reply with id null.
        return _refuse(
            _invalid_request(
                f"a request 'id' must be a string or an integer, not {json_type_name(raw_id)}"
            ),
            None,
            max_size,
        )
    params: JSONObject | None = None
    if "params" in message:
        raw_params = message["params"]
        if isinstance(raw_params, list):
            # Valid JSON-RPC (by-position), but every MCP method takes named params.
            error = RemoteProtocolError(
                f"{_quote(method)} takes named parameters (an object), not an array",
                kind=JsonRpcErrorKind.INVALID_PARAMS,
                rpc_code=ErrorCode.INVALID_PARAMS,
            )
            # JSON-RPC §4.1: a notification is never answered, even when it is wrong.
            return InvalidMessage(
                error=error, reply=_error_reply(error, reply_id, max_size) if has_id else None
            )
        if not isinstance(raw_params, dict):
            # JSON-RPC §4.2: params "MUST be provided as a Structured value".
            return _refuse(
                _invalid_request(f"'params' must be an object, not {json_type_name(raw_params)}"),
                reply_id,
                max_size,
            )
        params = raw_params
    if reply_id is not None:
        return new_request(reply_id, method, params)
    if method == Method.NOTIFICATIONS_CANCELLED:
        return _cancel_event(params)
    return NotificationReceived(method=method, params=params)


def _refuse(
    error: RemoteProtocolError, reply_id: RequestId | None, max_size: int
) -> InvalidMessage:
    return InvalidMessage(error=error, reply=_error_reply(error, reply_id, max_size))


def _error_reply(error: RemoteProtocolError, reply_id: RequestId | None, max_size: int) -> bytes:
    body = {"code": error.rpc_code, "message": error.message}
    data = encode_text({"jsonrpc": "2.0", "id": reply_id, "error": body}, True)
    if len(data) > max_size:
        # Only an id close to the size limit makes the reply too large; JSON-RPC's id null
        # still tells the peer that something it sent was refused.
        data = encode_text({"jsonrpc": "2.0", "id": None, "error": body}, True)
    return data + b"\n"


def _too_large(max_size: int) -> InvalidMessage:
    error = RemoteProtocolError(
        f"a message is longer than the maximum of {max_size} bytes",
        kind=JsonRpcErrorKind.MESSAGE_TOO_LARGE,
        rpc_code=ErrorCode.INVALID_REQUEST,
    )
    return _refuse(error, None, max_size)


# --- one message on its own ----------------------------------------------------------------------


def parse_message(
    data: bytes | bytearray, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> ReceivedMessage:
    """Read the bytes of exactly one JSON-RPC message, for transports without newline framing.

    An HTTP endpoint calls this on a request body. The checks are the endpoint's own, in the same
    order (size, UTF-8, strict JSON, then the envelope), so a body gets the verdict the same bytes
    would get as one line of a stream (a test checks this for arbitrary bytes), with two
    differences that follow from reading one message alone: JSON whitespace around it may include
    line breaks (a pretty-printed body is fine), and an empty body is a parse error.

    A response (a message with ``result`` or ``error`` and no ``method``) cannot be sent to a
    server that sends no requests: it is refused with -32600, id null (kind
    :attr:`JsonRpcErrorKind.UNEXPECTED_RESPONSE`), where a stream would report it and go on.

    Args:
        data: The message, with or without surrounding JSON whitespace.
        max_message_size: The largest message accepted, in bytes (at least 1024).

    Returns:
        :class:`RequestReceived` (answer it), :class:`NotificationReceived` or
        :class:`CancelRequested` (no reply is due; HTTP answers 202), or :class:`InvalidMessage`
        whose ``error.rpc_code`` is -32700 (parse error), -32600 (invalid request, batch,
        response, or ``error.kind`` :attr:`JsonRpcErrorKind.MESSAGE_TOO_LARGE`) or -32602 (array
        ``params``), and whose ``reply`` holds the error response to send (ending in ``\\n``), or
        ``None`` for a malformed notification, which is never answered (JSON-RPC §4.1).

    Raises:
        TypeError: ``max_message_size`` is not an int.
        ValueError: ``max_message_size`` is below 1024.
    """
    if max_message_size is not DEFAULT_MAX_MESSAGE_SIZE:  # the default needs no check
        _check_max_message_size(max_message_size)
    if len(data) > max_message_size:
        return _too_large(max_message_size)
    try:
        value = _parse_json(data)
    except RemoteProtocolError as error:
        return _refuse(error, None, max_message_size)
    if value is _Blank.BLANK:
        return _refuse(_parse_error("the message is empty"), None, max_message_size)
    return _classify_alone(value, max_message_size)


def classify_message(
    value: object, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> ReceivedMessage:
    """The verdict of :func:`parse_message` on a message already decoded (a dict you hold).

    Args:
        value: The decoded message: any JSON value (a dict is expected).
        max_message_size: Bounds the error reply (an id near it is replaced by null).

    Returns:
        As :func:`parse_message`.

    Raises:
        TypeError: ``max_message_size`` is not an int.
        ValueError: ``max_message_size`` is below 1024.
    """
    _check_max_message_size(max_message_size)
    return _classify_alone(value, max_message_size)


def _classify_alone(value: object, max_size: int) -> ReceivedMessage:
    """The verdict on one decoded message read on its own: a response is refused."""
    verdict = _classify_value(value, max_size)
    if verdict is None:
        error = _invalid_request(
            "a response cannot be sent here: only requests and notifications are accepted",
            JsonRpcErrorKind.UNEXPECTED_RESPONSE,
        )
        return _refuse(error, None, max_size)
    return verdict


# --- the connection --------------------------------------------------------------------------


@final
class JsonRpcConnection:
    """One end of a newline-delimited JSON-RPC 2.0 stream, without I/O.

    Not thread-safe: one task drives it (feed bytes, drain events, write the bytes it returns).

    Args:
        max_message_size: The largest line, in bytes before its ``\\n``, accepted from the peer
            and written by ``send_*``. At least 1024.

    Raises:
        TypeError: ``max_message_size`` is not an int.
        ValueError: ``max_message_size`` is below 1024.
    """

    def __init__(self, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._max_message_size = _check_max_message_size(max_message_size)
        # Bytes received and not yet consumed. Lines are consumed from the front, which CPython's
        # bytearray does in amortised O(1) by moving its start pointer.
        self._buffer = bytearray()
        # Every byte of _buffer before this offset is known not to be b"\n".
        self._scan_from = 0
        # Inside an oversized line: drop bytes until the next newline.
        self._discarding = False
        self._eof = False
        self._closed: ConnectionClosed | None = None
        self._next_id = 1
        self._pending: dict[RequestId, str] = {}
        # Cancelled request id -> method, oldest first (dicts keep insertion order).
        self._cancelled: dict[RequestId, str] = {}

    # --- state -------------------------------------------------------------------------------

    @property
    def max_message_size(self) -> int:
        """The largest line accepted or written, in bytes before the ``\\n``."""
        return self._max_message_size

    @property
    def pending(self) -> Mapping[RequestId, str]:
        """Read-only live view of the requests this side sent and awaits: id → method."""
        return MappingProxyType(self._pending)

    # --- input -------------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes received from the peer; ``b""`` means the peer closed the stream.

        Nothing is parsed here: call :meth:`next_event` until it returns :data:`NEED_DATA`.
        Calling ``receive_data(b"")`` again after the end of stream is harmless.

        Args:
            data: The next chunk of the byte stream, split anywhere, or ``b""`` at end of stream.

        Raises:
            LocalProtocolError: ``data`` is not empty and the end of stream was already received.
        """
        if self._eof:
            if data:
                raise LocalProtocolError(
                    "receive_data() got data after the end of stream",
                    kind=JsonRpcErrorKind.CLOSED,
                )
            return
        if not data:
            self._eof = True
            return
        if self._discarding:
            # The rest of an oversized line, already reported: drop it without buffering.
            newline = data.find(b"\n")
            if newline < 0:
                return
            self._discarding = False
            data = data[newline + 1 :]
        self._buffer += data

    def next_event(self) -> JsonRpcEvent | NeedData:
        """Parse the next buffered line into an event.

        Returns:
            The next event, or :data:`NEED_DATA` when no complete line is buffered and the stream
            has not ended. After the end of stream, :class:`ConnectionClosed` (repeatedly).
        """
        if self._closed is not None:
            return self._closed
        limit = self._max_message_size
        while (end := self._buffer.find(b"\n", self._scan_from)) >= 0:
            self._scan_from = 0
            if end > limit:
                del self._buffer[: end + 1]
                return _too_large(limit)
            line = self._buffer[:end]
            del self._buffer[: end + 1]
            try:
                value = _parse_json(line)
            except RemoteProtocolError as error:
                return _refuse(error, None, limit)
            if value is not _Blank.BLANK:
                event = _classify_value(value, limit)
                return event if event is not None else self._classify_response(value)
        self._scan_from = len(self._buffer)
        if self._scan_from > limit:
            # Report now rather than at the newline that may never come, and stop buffering.
            self._buffer.clear()
            self._scan_from = 0
            self._discarding = True
            return _too_large(limit)
        if not self._eof:
            return NEED_DATA
        return self._end_of_stream()

    def _end_of_stream(self) -> JsonRpcEvent:
        truncated = self._discarding
        if self._buffer:
            # MCP peers end every line with "\n", but one that writes its last message and exits
            # without it should still be heard. What does not decode is a message cut short.
            tail = bytes(self._buffer)
            self._buffer.clear()
            self._scan_from = 0
            try:
                value = _parse_json(tail)
            except RemoteProtocolError:
                truncated = True
            else:
                if value is not _Blank.BLANK:
                    event = _classify_value(value, self._max_message_size)
                    return event if event is not None else self._classify_response(value)
        self._closed = ConnectionClosed(failed=tuple(self._pending.items()), truncated=truncated)
        self._pending.clear()
        self._cancelled.clear()
        return self._closed

    # --- responses: matched against what is pending ------------------------------------------

    def _classify_response(self, message: JSONValue) -> JsonRpcEvent:
        assert isinstance(message, dict)  # _classify_value said so: a response
        raw_id = message.get("id")
        response_id = raw_id if is_request_id(raw_id) else None
        problem = _response_problem(message)
        if problem is not None:
            error = RemoteProtocolError(
                problem,
                kind=JsonRpcErrorKind.INVALID_RESPONSE,
                rpc_code=ErrorCode.INVALID_REQUEST,
            )
            if response_id is not None and response_id in self._pending:
                # Fail the request now rather than let it wait for a timeout.
                failed_method = self._pending.pop(response_id)
                return InvalidResponse(id=response_id, method=failed_method, error=error)
            # A response is never answered, however broken.
            return InvalidMessage(error=error, reply=None)
        result = message.get("result")
        error_object = message.get("error")
        # _response_problem has checked these shapes; the asserts only inform the type checker.
        assert result is None or isinstance(result, dict)
        assert error_object is None or isinstance(error_object, dict)
        if response_id is not None and response_id in self._pending:
            method = self._pending.pop(response_id)
            if error_object is None:
                assert result is not None
                return ResponseReceived(id=response_id, method=method, result=result)
            code = error_object["code"]
            text = error_object["message"]
            assert isinstance(code, int)
            assert isinstance(text, str)
            return ErrorResponseReceived(
                id=response_id,
                method=method,
                code=_known_code(code),
                message=text,
                data=error_object.get("data"),
            )
        if response_id is not None and response_id in self._cancelled:
            return LateResponse(
                id=response_id,
                method=self._cancelled.pop(response_id),
                result=result,
                error=error_object,
            )
        return UnmatchedResponse(id=response_id, result=result, error=error_object)

    # --- output ------------------------------------------------------------------------------

    def _encode(self, message: Mapping[str, object]) -> bytes:
        return self._sized(encode_text(message, True) + b"\n")

    def _sized(self, line: bytes) -> bytes:
        """``line`` (one message and its ``\\n``), when it is within the size limit."""
        if len(line) - 1 > self._max_message_size:
            raise LocalProtocolError(
                f"cannot send a message of {len(line) - 1} bytes: the maximum is "
                f"{self._max_message_size}",
                kind=JsonRpcErrorKind.MESSAGE_TOO_LARGE,
            )
        return line

    def send_request(
        self, method: str, params: Mapping[str, object] | None = None
    ) -> tuple[int, bytes]:
        """Build a request, allocating the next id (1, 2, 3, ...) and recording it as pending.

        Args:
            method: The method name (a :class:`~skills_core.spec.Method` member or any str).
            params: The ``params`` object, or ``None`` to leave it out.

        Returns:
            ``(id, data)``: the request id and the bytes to write. When this raises, no id is
            used up and nothing is recorded.

        Raises:
            LocalProtocolError: The stream has ended (no response could arrive), an argument has
                the wrong type, a value is not plain JSON, or the message is too large.
        """
        if self._eof:
            raise LocalProtocolError(
                "cannot send a request: the peer has closed the stream, so no response can arrive",
                kind=JsonRpcErrorKind.CLOSED,
            )
        name = check_method(method)
        request_id = self._next_id
        message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": name}
        if params is not None:
            message["params"] = check_object(params, "params")
        data = self._encode(message)
        self._next_id += 1
        self._pending[request_id] = name
        return request_id, data

    def send_notification(self, method: str, params: Mapping[str, object] | None = None) -> bytes:
        """Build a notification (a message that is never answered).

        Args:
            method: The method name.
            params: The ``params`` object, or ``None`` to leave it out.

        Returns:
            The bytes to write.

        Raises:
            LocalProtocolError: An argument has the wrong type, a value is not plain JSON, or the
                message is too large.
        """
        message: dict[str, object] = {"jsonrpc": "2.0", "method": check_method(method)}
        if params is not None:
            message["params"] = check_object(params, "params")
        return self._encode(message)

    def send_response(
        self,
        request_id: RequestId,
        result: Mapping[str, object] | EncodedResult,
        *,
        check_keys: bool = True,
    ) -> bytes:
        """Build the successful response to a request received from the peer.

        Args:
            request_id: The id of the request, as received.
            result: The result object (MCP results are always objects), or one encoded before
                with :func:`encode_result` (then only the id and the envelope are encoded; the
                bytes are the same either way).
            check_keys: Walk ``result`` first to refuse object keys that are not strings, which
                ``json.dumps`` would silently turn into strings. Everything else that is not
                plain JSON (NaN, sets, bytes, lone surrogates) is refused either way. Pass
                ``False`` only for results whose keys are strings by construction, such as a
                :class:`~skills_core.server.SkillsServer`'s; it saves a walk of every response.

        Returns:
            The bytes to write.

        Raises:
            LocalProtocolError: An argument has the wrong type, a value is not plain JSON, or the
                message is too large.
        """
        if type(result) is not EncodedResult:
            check_object(result, "a result")
        return self._sized(encode_response(request_id, result, check_keys, b"\n"))

    def send_error(
        self, request_id: RequestId | None, code: int, message: str, data: object = None
    ) -> bytes:
        """Build an error response.

        Args:
            request_id: The id of the request, or ``None`` when it could not be read.
            code: The error code (an :class:`~skills_core.spec.ErrorCode` member or any int).
            message: One sentence describing the error.
            data: Extra JSON data, or ``None`` to leave ``data`` out.

        Returns:
            The bytes to write.

        Raises:
            LocalProtocolError: An argument has the wrong type, a value is not plain JSON, or the
                message is too large.
        """
        # data is checked to be plain JSON when it is encoded, as every value sent is.
        error = ErrorObject(code=code, message=message, data=cast("JSONValue", data))
        return self._sized(encode_response(request_id, error, True, b"\n"))

    def send_answer(
        self,
        request_id: RequestId,
        answer: Mapping[str, object] | EncodedResult | ErrorObject,
        *,
        check_keys: bool = True,
    ) -> bytes:
        """Build the response that carries a request handler's answer (one call per request).

        The answer of :meth:`skills_core.server.ServerConnection.answer` goes here unchanged: a
        result object or an :class:`EncodedResult` becomes a success, an :class:`ErrorObject` an
        error response. This method, :meth:`send_response` and :meth:`send_error` change no state,
        so one connection can encode the answers of any number of HTTP requests.

        Args:
            request_id: The id of the request, as received.
            answer: What the handler answered.
            check_keys: As in :meth:`send_response`.

        Returns:
            The bytes to write (one line).

        Raises:
            LocalProtocolError: ``answer`` is none of the three, an argument has the wrong type, a
                value is not plain JSON, or the message is too large.
        """
        if type(answer) is not EncodedResult and type(answer) is not ErrorObject:
            check_object(answer, "an answer")
        return self._sized(encode_response(request_id, answer, check_keys, b"\n"))

    def send_cancel(self, request_id: RequestId, reason: str | None = None) -> bytes:
        """Cancel one of this side's pending requests with ``notifications/cancelled``.

        The request stops being pending. If its response still arrives (it may already be on the
        wire), :meth:`next_event` returns it as a :class:`LateResponse`. To send
        ``notifications/cancelled`` for a request this side did not send (a server ending a listen
        stream), use :meth:`send_notification`.

        Args:
            request_id: The id returned by :meth:`send_request`.
            reason: An optional human-readable reason.

        Returns:
            The bytes to write.

        Raises:
            LocalProtocolError: ``request_id`` is not pending (already answered, cancelled or never
                sent: check :attr:`pending`), or ``reason`` is not a str.
        """
        check_request_id(request_id)
        if reason is not None and not isinstance(reason, str):
            raise invalid_argument(f"a reason must be a str, not {type(reason).__name__}")
        if request_id not in self._pending:
            raise LocalProtocolError(
                f"cannot cancel request {request_id!r}: it is not pending",
                kind=JsonRpcErrorKind.NOT_PENDING,
            )
        params: JSONObject = {"requestId": request_id}
        if reason is not None:
            params["reason"] = reason
        data = self._encode(
            {"jsonrpc": "2.0", "method": Method.NOTIFICATIONS_CANCELLED.value, "params": params}
        )
        self._cancelled[request_id] = self._pending.pop(request_id)
        if len(self._cancelled) > MAX_REMEMBERED_CANCELLATIONS:
            del self._cancelled[next(iter(self._cancelled))]
        return data


# --- helpers for classification --------------------------------------------------------------


def _invalid_request(
    message: str, kind: JsonRpcErrorKind = JsonRpcErrorKind.INVALID_REQUEST
) -> RemoteProtocolError:
    return RemoteProtocolError(message, kind=kind, rpc_code=ErrorCode.INVALID_REQUEST)


def _bad_version(message: JSONObject) -> str:
    if "jsonrpc" not in message:
        return 'a message must have "jsonrpc": "2.0"'
    version = message["jsonrpc"]
    # Never repr() a peer's array or object: it may be nested nearly to the recursion limit.
    shown = _quote(version, 40) if isinstance(version, str) else json_type_name(version)
    return f"'jsonrpc' must be \"2.0\", not {shown}"


def _cancel_event(params: JSONObject | None) -> CancelRequested | InvalidMessage:
    # schema.ts CancelledNotificationParams: { requestId: RequestId; reason?: string }.
    members: JSONObject = {} if params is None else params
    request_id = members.get("requestId")
    reason = members.get("reason")
    if not is_request_id(request_id):
        problem = f"'params.requestId' must be a string or an integer, not {_member(members, 'requestId')}"
    elif "reason" in members and not isinstance(reason, str):
        problem = f"'params.reason' must be a string when present, not {json_type_name(reason)}"
    else:
        return CancelRequested(
            request_id=request_id, reason=reason if isinstance(reason, str) else None
        )
    error = RemoteProtocolError(
        f"invalid notifications/cancelled: {problem}",
        kind=JsonRpcErrorKind.INVALID_PARAMS,
        rpc_code=ErrorCode.INVALID_PARAMS,
    )
    # A notification is never answered (JSON-RPC §4.1); the adapter may log it.
    return InvalidMessage(error=error, reply=None)


def _member(obj: JSONObject, key: str) -> str:
    """Describe ``obj[key]`` for an error message: its JSON type, or "missing"."""
    return json_type_name(obj[key]) if key in obj else "missing"


def _response_problem(message: JSONObject) -> str | None:
    """Why ``message`` (which has a result or an error, and no method) is not a valid response."""
    if message.get("jsonrpc") != "2.0":
        return _bad_version(message)
    has_result = "result" in message
    if has_result and "error" in message:
        return "a response must not have both 'result' and 'error'"
    raw_id = message.get("id")
    if raw_id is not None and not is_request_id(raw_id):
        return f"a response 'id' must be a string, an integer or null, not {json_type_name(raw_id)}"
    if has_result:
        # MCP schema: JSONRPCResultResponse { id: RequestId; result: Result }, Result an object.
        if raw_id is None:
            return "a result response must have a string or integer 'id'"
        result = message["result"]
        if not isinstance(result, dict):
            return f"'result' must be an object (every MCP result is), not {json_type_name(result)}"
        return None
    # MCP schema: JSONRPCErrorResponse { id?: RequestId; error: { code; message; data? } }.
    error = message["error"]
    if not isinstance(error, dict):
        return f"'error' must be an object, not {json_type_name(error)}"
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        return f"'error.code' must be an integer, not {_member(error, 'code')}"
    if not isinstance(error.get("message"), str):
        return f"'error.message' must be a string, not {_member(error, 'message')}"
    return None
