"""The values JSON-RPC traffic is read as: ids, error kinds, and the events of an endpoint.

Theory of operation: :mod:`skills_core.jsonrpc` turns bytes into these values and is where they
are documented and exported; this module only defines them, so that the endpoint, the
one-message parser and the encoders share one home for each. Events are immutable records of what
the peer sent, made only by :mod:`skills_core.jsonrpc`; do not subclass them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, TypeAlias, TypeGuard, final

from ._fast import new_blank, slot_setters
from .errors import RemoteProtocolError
from .jsonvalue import JSONValue

__all__ = [
    "JSONObject",
    "RequestId",
    "JsonRpcErrorKind",
    "NeedData",
    "NEED_DATA",
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
    "ReceivedMessage",
]

# --- types -----------------------------------------------------------------------------------

#: A JSON object as decoded from the wire.
JSONObject: TypeAlias = dict[str, JSONValue]
#: A JSON-RPC request id: a string or an integer (MCP schema: ``string | number``, never null).
RequestId: TypeAlias = str | int


def is_request_id(value: object) -> TypeGuard[RequestId]:
    """Whether ``value`` is a request id (the one check of ids, for the jsonrpc modules)."""
    # bool is a subclass of int: true must not pass for 1 (and would match pending id 1 in a dict).
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class JsonRpcErrorKind(enum.StrEnum):
    """The ``kind`` of every :class:`~skills_core.errors.ProtocolError` of :mod:`skills_core.jsonrpc`."""

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
    #: A response where only a request or a notification can come: one message read on its own,
    #: such as the body of an HTTP POST to a server (-32600).
    UNEXPECTED_RESPONSE = "unexpected-response"
    #: The stream ended while requests were pending.
    CONNECTION_CLOSED = "connection-closed"
    #: Local: a value handed to a ``send_*`` method that is not plain JSON.
    NOT_SERIALIZABLE = "not-serializable"
    #: Local: an argument of the wrong type (an id, a method, params, a code).
    INVALID_ARGUMENT = "invalid-argument"
    #: Local: ``JsonRpcConnection.send_cancel`` for a request that is not pending.
    NOT_PENDING = "not-pending"
    #: Local: data or a request after the end of stream.
    CLOSED = "closed"


class NeedData(enum.Enum):
    """Type of :data:`NEED_DATA`, returned by ``next_event`` when no complete line is buffered."""

    NEED_DATA = "NEED_DATA"


#: ``next_event()`` has nothing to return until more data (or the end of stream) is received.
NEED_DATA: Final = NeedData.NEED_DATA


# --- events ----------------------------------------------------------------------------------
# Events are immutable records of what the peer sent. They are created only by the connection;
# do not subclass them. Their JSON payloads (params, result, data) are the decoded dicts and lists,
# handed over without copying: mutating them does not affect the connection.


class Event:
    """Base class of every event ``JsonRpcConnection.next_event`` returns."""

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


# A request event is made per request an endpoint reads, by a trusted constructor
# (skills_core._fast); bench_jsonrpc.py prints what the plain constructor would cost there.
_SET_ID, _SET_METHOD, _SET_PARAMS = slot_setters(RequestReceived, "id", "method", "params")


def new_request(request_id: RequestId, method: str, params: JSONObject | None) -> RequestReceived:
    """``RequestReceived(id=..., method=..., params=...)``: the trusted constructor, for the
    endpoint, which checked every part first."""
    event: RequestReceived = new_blank(RequestReceived)
    _SET_ID(event, request_id)
    _SET_METHOD(event, method)
    _SET_PARAMS(event, params)
    return event


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
    """The peer sent a well-formed ``notifications/cancelled`` (docs/protocol.md#stdio).

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
class UnmatchedResponse(Event):
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
    """A message that is not acceptable: too large, not JSON, not JSON-RPC.

    Attributes:
        error: What was wrong; ``error.kind`` is a :class:`JsonRpcErrorKind` and ``error.rpc_code``
            the JSON-RPC code.
        reply: The error response a server should write back (JSON-RPC §5: id null when the id
            could not be read), or ``None`` when no reply is appropriate (a notification, or a
            malformed response on a stream). A client adapter usually logs it and skips, or
            gives up.
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


#: Every event ``JsonRpcConnection.next_event`` can return, for exhaustive ``match``.
JsonRpcEvent: TypeAlias = (
    RequestReceived
    | NotificationReceived
    | CancelRequested
    | ResponseReceived
    | ErrorResponseReceived
    | InvalidResponse
    | LateResponse
    | UnmatchedResponse
    | InvalidMessage
    | ConnectionClosed
)

#: What one message read on its own can be (:func:`skills_core.jsonrpc.parse_message`): a
#: request, a notification, a cancellation, or a message to refuse.
ReceivedMessage: TypeAlias = (
    RequestReceived | NotificationReceived | CancelRequested | InvalidMessage
)
