"""Sans-IO JSON-RPC 2.0 endpoint with newline-delimited framing (base-protocol.md §1.2, §1.7).

Theory of operation
-------------------
One :class:`JsonRpcConnection` is one end of one byte stream: the stdio pipe of an MCP server, as
seen by the server or by the host that started it. The class knows nothing about roles, methods or
MCP semantics beyond the envelope; a server adapter and a client adapter drive the same code.

*Input.* :meth:`JsonRpcConnection.receive_data` only buffers bytes (``b""`` means end of stream).
:meth:`JsonRpcConnection.next_event` takes one complete line off the buffer, turns it into one event
and returns it, or returns :data:`NEED_DATA` when no complete line is buffered. A line ends at
``b"\\n"`` and nowhere else (§1.7: "one JSON-RPC message per line ... MUST NOT contain embedded
newlines"); a ``\\r`` before it is JSON whitespace and tolerated; blank lines are skipped. The search
for the newline resumes where the last one stopped, so a message arriving in many chunks is scanned
once. Decoding is strict: UTF-8 without replacement, RFC 8259 JSON without ``NaN``/``Infinity``,
without numbers that overflow a double, without duplicate object keys (a JSON object with two ``id``
members reads differently in different parsers) and without lone UTF-16 surrogate escapes (no UTF-8
writer can send those on, so they would break the reply). Decoded values are classified per
JSON-RPC 2.0 §4-§5 and MCP's schema (§1.2) into requests, notifications (with
``notifications/cancelled`` surfaced as :class:`CancelRequested`) and responses, which are matched
against the requests this side sent.

*Problems never raise.* Anything the peer gets wrong becomes an event: :class:`InvalidMessage`
carries a :class:`~skills_core.errors.RemoteProtocolError` and, when JSON-RPC calls for one, the
exact error reply to write back; :class:`InvalidResponse` fails the one pending request that a
malformed response names; :class:`UnexpectedResponse` and :class:`LateResponse` report responses
nobody is waiting for. The connection never sends anything by itself: replies are suggestions that
the adapter writes or drops by its own policy. Only misuse by the caller raises
(:class:`~skills_core.errors.LocalProtocolError`).

*Output.* ``send_*`` methods return the bytes of one message, ``b"\\n"``-terminated, and record what
must be remembered: each :meth:`~JsonRpcConnection.send_request` allocates the next integer id and
adds a pending entry, which the matching response (or :meth:`~JsonRpcConnection.send_cancel`, or
the end of the stream) removes. Before serialising, every value is checked to be plain JSON
(string keys, finite numbers, valid Unicode, no sets or bytes): the connection never writes a
message that its own parser, or a strict peer, would have to reject.

*End of stream.* After ``receive_data(b"")``, the remaining lines are returned, then one
:class:`ConnectionClosed` naming every request still pending; it is returned again on every later
call. A request sent after the end of stream could never be answered and is refused.

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
  :class:`UnexpectedResponse`, so adapters can drop the first and log the second.
* The ids of the peer's requests are not tracked: they are the peer's namespace, and answering
  each request once (or not at all, once cancelled) is the caller's job.
"""

from __future__ import annotations

import enum
import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, NoReturn, TypeAlias, TypeGuard, final

from skills_core.errors import LocalProtocolError, RemoteProtocolError, quote_for_message
from skills_core.jsonvalue import JSONValue, json_type_name
from skills_core.spec import ErrorCode, Method

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
    "EncodedResult",
    "encode_result",
    "NeedData",
    "NEED_DATA",
    # events
    "Event",
    "RequestReceived",
    "NotificationReceived",
    "CancelRequested",
    "ResponseReceived",
    "ErrorResponseReceived",
    "InvalidResponse",
    "LateResponse",
    "UnexpectedResponse",
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
#: MCP (§1.7) lets a response cross the cancellation on the wire, so one may arrive about one round
#: trip after :meth:`JsonRpcConnection.send_cancel`; a peer that honours the cancellation sends
#: none, so the entries are not removed by the peer and must be bounded. Hosts keep a handful of
#: requests in flight; 1024 covers any realistic burst. Beyond it the oldest id is forgotten and its
#: late response, if any, is reported as an :class:`UnexpectedResponse` instead.
MAX_REMEMBERED_CANCELLATIONS: Final = 1024

# --- types -----------------------------------------------------------------------------------

#: A JSON object as decoded from the wire.
JSONObject: TypeAlias = "dict[str, JSONValue]"
#: A JSON-RPC request id: a string or an integer (MCP schema: ``string | number``, never null).
RequestId: TypeAlias = str | int


class JsonRpcErrorKind(enum.StrEnum):
    """The ``kind`` of every :class:`~skills_core.errors.ProtocolError` this module creates."""

    #: A line longer than the maximum message size (received, or refused on send).
    MESSAGE_TOO_LARGE = "message-too-large"
    #: Not UTF-8, not JSON, NaN/Infinity, duplicate keys, lone surrogates, too deep (-32700).
    PARSE_ERROR = "parse-error"
    #: A JSON array: a batch, which MCP does not allow (-32600).
    BATCH = "batch"
    #: A value that is not a valid JSON-RPC Request object (-32600).
    INVALID_REQUEST = "invalid-request"
    #: A well-formed message whose ``params`` MCP cannot accept (-32602).
    INVALID_PARAMS = "invalid-params"
    #: A malformed response; never answered.
    INVALID_RESPONSE = "invalid-response"
    #: The stream ended while requests were pending.
    CONNECTION_CLOSED = "connection-closed"
    #: Local: a value handed to a ``send_*`` method that is not plain JSON.
    NOT_SERIALIZABLE = "not-serializable"
    #: Local: an argument of the wrong type (an id, a method, params, a code).
    INVALID_ARGUMENT = "invalid-argument"
    #: Local: :meth:`JsonRpcConnection.send_cancel` for a request that is not pending.
    NOT_PENDING = "not-pending"
    #: Local: data or a request after the end of stream.
    CLOSED = "closed"


class NeedData(enum.Enum):
    """Type of :data:`NEED_DATA`, returned by ``next_event`` when no complete line is buffered."""

    NEED_DATA = "NEED_DATA"


#: ``next_event()`` has nothing to return until more data (or the end of stream) is received.
NEED_DATA: Final = NeedData.NEED_DATA


class _Blank(enum.Enum):
    BLANK = "BLANK"


# --- events ----------------------------------------------------------------------------------
# Events are immutable records of what the peer sent. They are created only by the connection;
# do not subclass them. Their JSON payloads (params, result, data) are the decoded dicts and lists,
# handed over without copying: mutating them does not affect the connection.


class Event:
    """Base class of every event :meth:`JsonRpcConnection.next_event` returns."""

    __slots__ = ()


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestReceived(Event):
    """The peer sent a request; answer it with ``send_response`` or ``send_error``.

    Attributes:
        id: The request id (a string or an integer), to be echoed in the reply.
        method: The method name (not checked against any list; unknown ones are for the caller).
        params: The ``params`` object, or ``None`` when the request had none.
    """

    id: RequestId
    method: str
    params: JSONObject | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class NotificationReceived(Event):
    """The peer sent a notification (no reply is ever due; JSON-RPC §4.1).

    Attributes:
        method: The method name.
        params: The ``params`` object, or ``None`` when it had none.
    """

    method: str
    params: JSONObject | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CancelRequested(Event):
    """The peer sent a well-formed ``notifications/cancelled`` (base-protocol.md §1.7).

    Sent by a client to cancel one of its requests, or by a server to end a listen stream. The
    event changes no state: ``request_id`` may name a request of either side.

    Attributes:
        request_id: The ``requestId`` of the cancelled request.
        reason: The optional human-readable ``reason``.
    """

    request_id: RequestId
    reason: str | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseReceived(Event):
    """A result for a request this side sent; the request is no longer pending.

    Attributes:
        id: The id of the request.
        method: The method of the request, as it was sent.
        result: The ``result`` object.
    """

    id: RequestId
    method: str
    result: JSONObject


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorResponseReceived(Event):
    """An error response for a request this side sent; the request is no longer pending.

    Attributes:
        id: The id of the request.
        method: The method of the request, as it was sent.
        code: The error code: an :class:`~skills_core.spec.ErrorCode` member when known, else the
            integer as received.
        message: The error message.
        data: The ``data`` member, or ``None`` when it was absent (or null).
    """

    id: RequestId
    method: str
    code: int
    message: str
    data: JSONValue


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidResponse(Event):
    """A malformed response that names a pending request; that request has failed.

    No reply is due (a response is never answered). The adapter fails the request with ``error``.

    Attributes:
        id: The id of the failed request.
        method: The method of the failed request.
        error: What was wrong with the response.
    """

    id: RequestId
    method: str
    error: RemoteProtocolError


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LateResponse(Event):
    """A response for a request this side had cancelled; MCP says to ignore it.

    Attributes:
        id: The id of the cancelled request.
        method: Its method.
        result: The ``result`` object, or ``None`` for an error response.
        error: The ``error`` object (integer ``code``, string ``message``), or ``None``.
    """

    id: RequestId
    method: str
    result: JSONObject | None
    error: JSONObject | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class UnexpectedResponse(Event):
    """A well-formed response that matches no pending request. Reported, never answered.

    An error response with id null (the peer could not read something this side sent) is one.

    Attributes:
        id: The response id, or ``None`` when it was null or absent.
        result: The ``result`` object, or ``None`` for an error response.
        error: The ``error`` object (integer ``code``, string ``message``), or ``None``.
    """

    id: RequestId | None
    result: JSONObject | None
    error: JSONObject | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidMessage(Event):
    """A line that is not an acceptable message: too large, not JSON, not JSON-RPC.

    Attributes:
        error: What was wrong; ``error.kind`` is a :class:`JsonRpcErrorKind` and ``error.rpc_code``
            the JSON-RPC code.
        reply: The error response a server should write back (JSON-RPC §5: id null when the id
            could not be read), or ``None`` when no reply is appropriate (a notification, or a
            malformed response). A client adapter usually logs it and skips, or gives up.
    """

    error: RemoteProtocolError
    reply: bytes | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionClosed(Event):
    """The stream has ended; returned once all lines are consumed, and again on every later call.

    Attributes:
        failed: ``(id, method)`` of every request that was still pending, in the order sent. They
            will never be answered; :meth:`error_for` makes the error to fail each with.
        truncated: True when the stream ended inside a message (a last line without a newline
            that is not complete JSON, or an oversized line that never ended).
    """

    failed: tuple[tuple[RequestId, str], ...]
    truncated: bool

    def error_for(self, request_id: RequestId) -> RemoteProtocolError:
        """Return a new error explaining why request ``request_id`` will never be answered.

        Args:
            request_id: The id of a request, normally one of :attr:`failed`.

        Returns:
            A :class:`~skills_core.errors.RemoteProtocolError` of kind ``connection-closed``.
        """
        methods = dict(self.failed)
        if request_id in methods:
            what = f"request {request_id!r} ({methods[request_id]})"
        else:
            what = f"request {request_id!r}"
        message = f"the peer closed the connection before answering {what}"
        if self.truncated:
            message += "; its last message was cut off"
        return RemoteProtocolError(message, kind=JsonRpcErrorKind.CONNECTION_CLOSED)


#: Every event :meth:`JsonRpcConnection.next_event` can return, for exhaustive ``match``.
JsonRpcEvent: TypeAlias = (
    RequestReceived
    | NotificationReceived
    | CancelRequested
    | ResponseReceived
    | ErrorResponseReceived
    | InvalidResponse
    | LateResponse
    | UnexpectedResponse
    | InvalidMessage
    | ConnectionClosed
)

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


# One encoder for every message: json.dumps with keyword arguments builds a new one per call,
# which costs as much as encoding a 1 KB result.
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)

_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_object_from_pairs,
    parse_float=_parse_float,
    parse_constant=_reject_constant,
)


def _contains_surrogate(value: JSONValue) -> bool:
    # A decoded string holds a surrogate code point only if it came from an unpaired escape such
    # as "\\ud800": json joins valid pairs, and strict UTF-8 decoding refuses encoded surrogates.
    stack: list[JSONValue] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            # isascii() is O(1) on CPython; encoding is the fastest full check (~1 GB/s).
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


def _parse_line(line: bytes | bytearray) -> JSONValue | _Blank:
    """Decode one line (without its ``\\n``); raise a parse-error RemoteProtocolError."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _parse_error(f"line is not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    # JSON whitespace (RFC 8259 §2) is space, tab, CR and LF; LF cannot occur inside a line.
    text = text.strip(" \t\r")
    if not text:
        return _Blank.BLANK
    try:
        value: JSONValue = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise _parse_error(f"line is not valid JSON ({exc.msg} at character {exc.pos})") from exc
    except ValueError as exc:
        # An integer longer than sys.get_int_max_str_digits() digits.
        raise _parse_error(f"line is not valid JSON ({quote_for_message(str(exc))})") from exc
    except RecursionError as exc:
        raise _parse_error("JSON value is nested too deeply") from exc
    # A surrogate can only come from an escape: a message without a backslash needs no walk.
    # (A one-character search runs at memchr speed; searching "\\ud" would cost half a parse.)
    if "\\" in text and _contains_surrogate(value):
        raise _parse_error("a string contains an unpaired UTF-16 surrogate escape")
    return value


def _quote(text: str, limit: int = 120) -> str:
    """quote_for_message for a peer's string, without building the repr of all of a huge one."""
    return quote_for_message(text[: limit + 8], limit)


def _is_request_id(value: object) -> TypeGuard[RequestId]:
    # bool is a subclass of int: true must not pass for 1 (and would match pending id 1 in a dict).
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _known_code(code: int) -> int:
    # STYLE habit 5: known codes as IntEnum members, unknown integers passed through unchanged.
    try:
        return ErrorCode(code)
    except ValueError:
        return code


# --- encoding --------------------------------------------------------------------------------


def _to_json(value: object) -> JSONValue:
    """Return ``value`` as plain JSON data, or raise LocalProtocolError (no silent coercion)."""
    if value is None or isinstance(value, str | int):  # bool is an int
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _not_serializable(f"{value!r} is not a JSON number")
    if isinstance(value, Mapping):
        obj: JSONObject = {}
        for key, item in value.items():
            # json.dumps would silently turn 1, 1.5, True and None keys into strings, and
            # {1: a, "1": b} into an object with a duplicate key.
            if not isinstance(key, str):
                raise _not_serializable(
                    f"object key {quote_for_message(key)} is {type(key).__name__}, not str"
                )
            obj[key] = _to_json(item)
        return obj
    # Tuples are accepted as arrays, as json.dumps does: nothing is lost in the JSON data model.
    if isinstance(value, list | tuple):
        return [_to_json(item) for item in value]
    raise _not_serializable(f"a Python {type(value).__name__} is not a JSON value")


def _not_serializable(message: str) -> LocalProtocolError:
    return LocalProtocolError(f"cannot send: {message}", kind=JsonRpcErrorKind.NOT_SERIALIZABLE)


def _invalid_argument(message: str) -> LocalProtocolError:
    return LocalProtocolError(message, kind=JsonRpcErrorKind.INVALID_ARGUMENT)


def _check_request_id(request_id: object) -> RequestId:
    if _is_request_id(request_id):
        return request_id
    raise _invalid_argument(
        f"a request id must be a str or an int, not {type(request_id).__name__}"
    )


def _check_method(method: object) -> str:
    if not isinstance(method, str):
        raise _invalid_argument(f"a method name must be a str, not {type(method).__name__}")
    # The plain value of a str subclass: str() would give "M.X" for a (str, Enum) member.
    return str.__str__(method)


def _check_object(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise _invalid_argument(
            f"{what} must be a mapping (MCP uses named members only), not {type(value).__name__}"
        )
    return value


#: Line separators that JSON leaves unescaped but str.splitlines() and JavaScript-era tools split
#: on. json.dumps emits them only inside strings, where the escape means the same character.
_UNSAFE_SEPARATORS: Final = (("\x85", "\\u0085"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def _encode_text(value: object, check_keys: bool) -> bytes:
    """The compact UTF-8 JSON of ``value`` (raises LocalProtocolError), with no size check."""
    try:
        text = _ENCODER.encode(_to_json(value) if check_keys else value)
        for char, escape in _UNSAFE_SEPARATORS:
            if char in text:
                text = text.replace(char, escape)
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _not_serializable("a string contains a lone surrogate") from exc
    except ValueError as exc:
        raise _not_serializable(quote_for_message(str(exc))) from exc
    except RecursionError as exc:
        raise _not_serializable("the value is nested too deeply, or contains itself") from exc
    except TypeError as exc:  # only without check_keys: _to_json refuses these itself
        raise _not_serializable(quote_for_message(str(exc))) from exc


@final
class EncodedResult:
    """A result object encoded once, to be sent in any number of responses.

    Made only by :func:`encode_result`, so its bytes are always the compact JSON object this module
    would write for the same result; :meth:`JsonRpcConnection.send_response` splices them into a
    response without encoding the result again. A server that answers the same request many times
    (the same file read over and over) saves most of the cost of a response this way.
    """

    __slots__ = ("_json",)

    _json: bytes

    def __init__(self) -> None:
        raise TypeError("EncodedResult is made by encode_result(), not directly")

    @property
    def json(self) -> bytes:
        """The encoded result object: compact UTF-8 JSON, no line break."""
        return self._json

    def __len__(self) -> int:
        """Length of :attr:`json` in bytes."""
        return len(self._json)

    def __repr__(self) -> str:
        return f"<EncodedResult of {len(self._json)} bytes>"


def encode_result(result: Mapping[str, object], *, check_keys: bool = True) -> EncodedResult:
    """Encode a result object once, for :meth:`JsonRpcConnection.send_response` to reuse.

    Args:
        result: The result object, exactly as ``send_response`` would take it.
        check_keys: As in :meth:`JsonRpcConnection.send_response`.

    Raises:
        LocalProtocolError: ``result`` is not a mapping, or a value is not plain JSON. (The
            message-size cap is a connection's, so ``send_response`` checks it.)
    """
    data = _encode_text(_check_object(result, "a result"), check_keys)
    encoded = object.__new__(EncodedResult)
    encoded._json = data
    return encoded


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
        if not isinstance(max_message_size, int) or isinstance(max_message_size, bool):
            raise TypeError(f"max_message_size must be an int, not {type(max_message_size)}")
        if max_message_size < _SMALLEST_MAX_MESSAGE_SIZE:
            raise ValueError(
                f"max_message_size must be at least {_SMALLEST_MAX_MESSAGE_SIZE}, "
                f"got {max_message_size}"
            )
        self._max_message_size = max_message_size
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
                return self._too_large()
            line = self._buffer[:end]
            del self._buffer[: end + 1]
            try:
                value = _parse_line(line)
            except RemoteProtocolError as error:
                return self._invalid(error, reply_id=None)
            if value is not _Blank.BLANK:
                return self._classify(value)
        self._scan_from = len(self._buffer)
        if self._scan_from > limit:
            # Report now rather than at the newline that may never come, and stop buffering.
            self._buffer.clear()
            self._scan_from = 0
            self._discarding = True
            return self._too_large()
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
                value = _parse_line(tail)
            except RemoteProtocolError:
                truncated = True
            else:
                if value is not _Blank.BLANK:
                    return self._classify(value)
        self._closed = ConnectionClosed(failed=tuple(self._pending.items()), truncated=truncated)
        self._pending.clear()
        self._cancelled.clear()
        return self._closed

    # --- classification (JSON-RPC 2.0 §4, §5; base-protocol.md §1.2) ---------------------------

    def _classify(self, value: JSONValue) -> JsonRpcEvent:
        if isinstance(value, list):
            # JSON-RPC §6 batches; MCP removed them in 2025-06-18 and 2026-07-28 has none (§1.2).
            # JSON-RPC answers an invalid batch with a single -32600 and id null.
            return self._invalid(
                _invalid_request(
                    "batches (JSON arrays) are not supported by MCP", JsonRpcErrorKind.BATCH
                ),
                reply_id=None,
            )
        if not isinstance(value, dict):
            return self._invalid(
                _invalid_request(f"a message must be a JSON object, not {json_type_name(value)}"),
                reply_id=None,
            )
        if "method" in value:
            return self._classify_call(value)
        if "result" in value or "error" in value:
            return self._classify_response(value)
        raw_id = value.get("id")
        return self._invalid(
            _invalid_request("a message must have a 'method', a 'result' or an 'error'"),
            reply_id=raw_id if _is_request_id(raw_id) else None,
        )

    def _classify_call(self, message: JSONObject) -> JsonRpcEvent:
        has_id = "id" in message
        raw_id = message.get("id")
        # JSON-RPC §5: the reply carries the request's id when it can be read, else null.
        reply_id = raw_id if _is_request_id(raw_id) else None
        method = message["method"]
        if message.get("jsonrpc") != "2.0":
            # JSON-RPC §4: "jsonrpc ... MUST be exactly "2.0"".
            return self._invalid(_invalid_request(_bad_version(message)), reply_id=reply_id)
        if not isinstance(method, str):
            return self._invalid(
                _invalid_request(f"'method' must be a string, not {json_type_name(method)}"),
                reply_id=reply_id,
            )
        if has_id and reply_id is None:
            # MCP schema: "id: string | number /* never null */"; JSON-RPC §4: numbers "SHOULD NOT
            # contain fractional parts". A request without a usable id gets its reply with id null.
            return self._invalid(
                _invalid_request(
                    f"a request 'id' must be a string or an integer, not {json_type_name(raw_id)}"
                ),
                reply_id=None,
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
                    error=error, reply=self._error_reply(error, reply_id) if has_id else None
                )
            if not isinstance(raw_params, dict):
                # JSON-RPC §4.2: params "MUST be provided as a Structured value".
                return self._invalid(
                    _invalid_request(
                        f"'params' must be an object, not {json_type_name(raw_params)}"
                    ),
                    reply_id=reply_id,
                )
            params = raw_params
        if reply_id is not None:
            return RequestReceived(id=reply_id, method=method, params=params)
        if method == Method.NOTIFICATIONS_CANCELLED:
            return _cancel_event(params)
        return NotificationReceived(method=method, params=params)

    def _classify_response(self, message: JSONObject) -> JsonRpcEvent:
        raw_id = message.get("id")
        response_id = raw_id if _is_request_id(raw_id) else None
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
        return UnexpectedResponse(id=response_id, result=result, error=error_object)

    # --- error replies -----------------------------------------------------------------------

    def _invalid(self, error: RemoteProtocolError, *, reply_id: RequestId | None) -> InvalidMessage:
        return InvalidMessage(error=error, reply=self._error_reply(error, reply_id))

    def _error_reply(self, error: RemoteProtocolError, reply_id: RequestId | None) -> bytes:
        body = {"code": error.rpc_code, "message": error.message}
        try:
            return self._encode({"jsonrpc": "2.0", "id": reply_id, "error": body})
        except LocalProtocolError:
            # Only an id close to the size limit makes the reply too large; JSON-RPC's id null
            # still tells the peer that something it sent was refused.
            return self._encode({"jsonrpc": "2.0", "id": None, "error": body})

    def _too_large(self) -> InvalidMessage:
        error = RemoteProtocolError(
            f"a message is longer than the maximum of {self._max_message_size} bytes",
            kind=JsonRpcErrorKind.MESSAGE_TOO_LARGE,
            rpc_code=ErrorCode.INVALID_REQUEST,
        )
        return self._invalid(error, reply_id=None)

    # --- output ------------------------------------------------------------------------------

    def _encode(self, message: Mapping[str, object], *, check_keys: bool = True) -> bytes:
        return self._checked_size(_encode_text(message, check_keys))

    def _checked_size(self, data: bytes) -> bytes:
        if len(data) > self._max_message_size:
            raise LocalProtocolError(
                f"cannot send a message of {len(data)} bytes: the maximum is "
                f"{self._max_message_size}",
                kind=JsonRpcErrorKind.MESSAGE_TOO_LARGE,
            )
        return data + b"\n"

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
        name = _check_method(method)
        request_id = self._next_id
        message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": name}
        if params is not None:
            message["params"] = _check_object(params, "params")
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
        message: dict[str, object] = {"jsonrpc": "2.0", "method": _check_method(method)}
        if params is not None:
            message["params"] = _check_object(params, "params")
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
        if type(result) is EncodedResult:
            # The bytes the dict below would encode to, key order included.
            if type(request_id) is int and -(1 << 53) < request_id < 1 << 53:
                encoded_id = str(request_id).encode()  # what json writes, without its overhead
            else:
                encoded_id = _encode_text(_check_request_id(request_id), False)
            return self._checked_size(
                b'{"jsonrpc":"2.0","id":' + encoded_id + b',"result":' + result._json + b"}"
            )
        message: dict[str, object] = {
            "jsonrpc": "2.0",
            "id": _check_request_id(request_id),
            "result": _check_object(result, "a result"),
        }
        return self._encode(message, check_keys=check_keys)

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
        if request_id is not None:
            _check_request_id(request_id)
        if not isinstance(code, int) or isinstance(code, bool):
            raise _invalid_argument(f"an error code must be an int, not {type(code).__name__}")
        if not isinstance(message, str):
            raise _invalid_argument(f"an error message must be a str, not {type(message).__name__}")
        error: dict[str, object] = {"code": int(code), "message": message}
        if data is not None:
            error["data"] = data
        return self._encode({"jsonrpc": "2.0", "id": request_id, "error": error})

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
        _check_request_id(request_id)
        if reason is not None and not isinstance(reason, str):
            raise _invalid_argument(f"a reason must be a str, not {type(reason).__name__}")
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
    if not _is_request_id(request_id):
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
    if raw_id is not None and not _is_request_id(raw_id):
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
