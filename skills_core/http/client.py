"""The client half of Streamable HTTP, without I/O: what a POST carries, what its answer means.

Theory of operation
-------------------
An HTTP client transport for MCP is mostly decisions about bytes and headers: which headers a POST
carries, what a response's status and ``Content-Type`` mean, which message of a body answers the
request. Every such decision lives here as a pure function or a small state machine (bytes and
strings in, values out), so that it is tested without a network, fed whole and byte by byte, and
reusable by anyone who drives MCP over an HTTP library of their own.
:mod:`skills_core.adapters.http_client` is the thin httpx2 loop around it; the rest of the client
half is :mod:`skills_core.http.urls` (the endpoint's URL and redirects) and
:mod:`skills_core.http.eras` (finding the server's era).

* **Request headers** (docs/requirements.md#http-client rules 1, 2; HTTP-30, HTTP-31, HTTP-37).
  :func:`message_headers` derives a POST's headers from the message itself: a request whose
  ``params._meta`` holds a protocol version is modern (:func:`~skills_core.messages.request_era`,
  the rule the server follows too) and gets ``MCP-Protocol-Version`` (that same version, so header
  and body never disagree), ``Mcp-Method`` and, for ``resources/read``, ``tools/call`` and
  ``prompts/get``, ``Mcp-Name``; anything else is legacy and gets the negotiated version and the
  session id of its :class:`LegacySession`, if any. Values that are not plain visible ASCII travel
  as ``=?base64?...?=`` (:func:`~skills_core.http.headers.encode_header_value`).
* **Responses** (docs/requirements.md#http-client rules 3, 4; HTTP-33, HTTP-34).
  :func:`response_disposition` maps a status and a ``Content-Type`` to what must happen next;
  :class:`ResponseReader` turns a JSON or SSE body into the answer to one request, plus the
  notifications that came with it, through the JSON-RPC endpoint's own envelope checks
  (:class:`~skills_core.jsonrpc.JsonRpcConnection`); event streams are parsed by
  :class:`~skills_core.http.sse.SseParser` (WHATWG HTML §9.2.6, bounded); :func:`status_error` turns
  a non-2xx answer into a typed error, re-keying an id-null JSON-RPC error to the request (HTTP-34).

Errors are values or typed exceptions of :mod:`skills_core.errors`: a broken server yields
:class:`~skills_core.errors.TransportError` (kinds ``protocol``, ``closed``, ``http-status``)
or :class:`~skills_core.errors.JsonRpcError`, exactly as over stdio; its text is quoted and cut
(``quote_for_message``), never copied whole into a message.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias, final

from ..errors import (
    JsonRpcError,
    LocalProtocolError,
    RemoteProtocolError,
    TransportError,
    quote_for_message,
)
from ..jsonrpc import (
    NEED_DATA,
    ErrorResponseReceived,
    InvalidMessage,
    InvalidResponse,
    JSONObject,
    JsonRpcConnection,
    NotificationReceived,
    RequestId,
    RequestReceived,
    ResponseReceived,
    UnmatchedResponse,
)
from ..jsonvalue import JSONValue
from ..messages import Era, request_era
from ..spec import META_PROTOCOL_VERSION, Method
from .headers import (
    ACCEPT,
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    HEADER_SESSION_ID,
    JSON_MEDIA_TYPE,
    SSE_MEDIA_TYPE,
    encode_header_value,
)
from .sse import SseParser

__all__ = [
    "MAX_ERROR_BODY",
    # request headers
    "LegacySession",
    "message_headers",
    "session_headers",
    "check_session_id",
    # responses
    "BodyKind",
    "Disposition",
    "response_disposition",
    "bad_answer",
    "Answered",
    "Failed",
    "Noted",
    "NoteKind",
    "ReaderEvent",
    "ResponseReader",
    "status_error",
    "HttpStatusError",
]

#: Bytes of a non-2xx body read to find a JSON-RPC error in it. Error bodies are a few hundred
#: bytes; a larger one is not read further and counts as unrecognised.
MAX_ERROR_BODY: Final = 64 * 1024


#: Longest session id accepted: ids are opaque tokens (a UUID is 36 characters; a signed stateless
#: id a few hundred); this bounds what is echoed on every request.
_MAX_SESSION_ID: Final = 1024


# --- request headers ---------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LegacySession:
    """What a 2025-11-25 connection sends on every request after ``initialize`` (HTTP-37).

    Attributes:
        protocol_version: The version the server answered ``initialize`` with.
        session_id: The ``Mcp-Session-Id`` of the InitializeResult response, or ``None``.
    """

    protocol_version: str
    session_id: str | None


def _name_of(method: str, params: Mapping[str, object]) -> object:
    # T26 "Standard headers": Mcp-Name is params.uri for resources/read and params.name for
    # tools/call and prompts/get; it is undefined for every other method.
    if method == Method.RESOURCES_READ:
        return params.get("uri")
    if method in ("tools/call", "prompts/get"):
        return params.get("name")
    return None


def message_headers(
    method: str, params: Mapping[str, object] | None, *, session: LegacySession | None
) -> list[tuple[str, str]]:
    """Return the headers of the POST that carries one message (docs/requirements.md#http-client
    rules 1, 2, 7).

    Args:
        method: The message's method.
        params: Its ``params``. The message is modern when
            :func:`~skills_core.messages.request_era` says so (the host adds ``_meta`` to every
            modern request, never to a legacy one).
        session: The legacy session, once ``initialize`` has been answered; ignored for modern
            messages (a modern client never sends ``Mcp-Session-Id``).

    Returns:
        ``(name, value)`` pairs: ``Content-Type``, ``Accept``, then the era's headers.

    Raises:
        LocalProtocolError: kind ``bad-header``: a modern message whose protocol version is not a
            string, or a value that is not valid Unicode.
    """
    headers = [("Content-Type", JSON_MEDIA_TYPE), ("Accept", ACCEPT)]
    if params is not None and request_era(params) is Era.MODERN:
        meta = params["_meta"]
        assert isinstance(meta, Mapping)  # request_era: an object holding the version's key
        version = meta[META_PROTOCOL_VERSION]
        if not isinstance(version, str):
            raise LocalProtocolError(
                f"cannot send {_shown(method)}: the protocol version in its _meta is not a "
                "string, so no MCP-Protocol-Version header can carry it",
                kind="bad-header",
            )
        headers.append((HEADER_PROTOCOL_VERSION, encode_header_value(version)))
        headers.append((HEADER_METHOD, encode_header_value(method)))
        name = _name_of(method, params)
        if isinstance(name, str):
            headers.append((HEADER_NAME, encode_header_value(name)))
    elif session is not None:
        headers.extend(session_headers(session))
    return headers


def session_headers(session: LegacySession) -> list[tuple[str, str]]:
    """The headers naming a legacy session: on POSTs after ``initialize``, and on DELETE."""
    headers = [(HEADER_PROTOCOL_VERSION, session.protocol_version)]
    if session.session_id is not None:
        headers.append((HEADER_SESSION_ID, session.session_id))
    return headers


def check_session_id(value: str, *, label: str) -> str:
    """Return a server's ``Mcp-Session-Id`` if it is one: visible ASCII 0x21-0x7E (HTTP-23).

    Raises:
        TransportError: kind ``protocol``: empty, too long, or holding another character.
    """
    if 0 < len(value) <= _MAX_SESSION_ID and all("!" <= c <= "~" for c in value):
        return value
    raise TransportError(
        f"server {label!r} sent a session id that is not 1 to {_MAX_SESSION_ID} visible ASCII "
        f"characters ({quote_for_message(value, 60)})",
        kind="protocol",
    )


# --- response heads ----------------------------------------------------------------------------


class BodyKind(enum.Enum):
    """How a 2xx body carries messages."""

    #: ``application/json``: exactly one message.
    JSON = "json"
    #: ``text/event-stream``: events whose data are messages, the response among them.
    SSE = "sse"


class Disposition(enum.Enum):
    """What to do with a response, given its status and ``Content-Type``."""

    #: Read the body as one JSON message.
    READ_JSON = "read-json"
    #: Read the body as an event stream until the response arrives.
    READ_SSE = "read-sse"
    #: Done: a notification was accepted (2xx; the body, if any, is not read).
    ACCEPTED = "accepted"
    #: A 3xx: see :func:`redirect_target`.
    REDIRECT = "redirect"
    #: A non-2xx, non-3xx status: read at most :data:`MAX_ERROR_BODY` bytes, then
    #: :func:`status_error`.
    READ_ERROR = "read-error"
    #: A 2xx for a request with no body to read (202, 204) or another media type: an error.
    BAD_ANSWER = "bad-answer"


def _media_type(content_type: str | None) -> str:
    return (content_type or "").partition(";")[0].strip().lower()


def response_disposition(
    status: int, content_type: str | None, *, expects_response: bool
) -> Disposition:
    """Decide what a response means before its body is read (docs/requirements.md#http-client rules 3, 4).

    Args:
        status: The HTTP status code.
        content_type: The ``Content-Type`` header, or ``None``.
        expects_response: True for a request, False for a notification.

    Returns:
        The :class:`Disposition`.
    """
    if 300 <= status < 400:
        return Disposition.REDIRECT
    if not 200 <= status < 300:
        return Disposition.READ_ERROR
    if not expects_response:
        return Disposition.ACCEPTED
    media = _media_type(content_type)
    if status not in (202, 204):
        if media == JSON_MEDIA_TYPE:
            return Disposition.READ_JSON
        if media == SSE_MEDIA_TYPE:
            return Disposition.READ_SSE
    return Disposition.BAD_ANSWER


def bad_answer(status: int, content_type: str | None, *, method: str, label: str) -> TransportError:
    """The error for :attr:`Disposition.BAD_ANSWER`: no body for a request, or an unknown type.

    Returns:
        A ``TransportError`` of kind ``protocol`` (docs/requirements.md#http-client rules 3, 4: "202
        for a request → error", "other types → error").
    """
    if status in (202, 204):
        what = f"HTTP {status} and no response"
    else:
        shown = quote_for_message(content_type or "(none)", 60)
        what = f"Content-Type {shown} (expected {JSON_MEDIA_TYPE} or {SSE_MEDIA_TYPE})"
    return TransportError(
        f"server {label!r} answered the request {method} with {what}", kind="protocol"
    )


# --- response bodies ---------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Answered:
    """The request's result arrived."""

    result: JSONObject


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Failed:
    """The request failed: an error response (``JsonRpcError``) or a broken body
    (``TransportError``)."""

    error: JsonRpcError | TransportError


class NoteKind(enum.Enum):
    """What a :class:`Noted` skipped; each value names such things in the plural (for a count)."""

    #: An event whose type is not ``message``.
    OTHER_EVENT = "events of a type other than message"
    #: A request from the server, on the stream of a response (nobody answers it).
    REQUEST = "requests on a response stream"
    #: A response whose id is not the request's.
    OTHER_RESPONSE = "responses to other requests"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Noted:
    """Something on the stream was ignored (a request from the server, an answer to another id).

    Attributes:
        kind: What it was; a client counts them by kind and shows the first few of each.
        message: One line saying what was skipped; server text in it is quoted and cut.
    """

    kind: NoteKind
    message: str


#: What :class:`ResponseReader` produces. ``NotificationReceived`` is the JSON-RPC endpoint's event
#: for a notification that came on the stream; deliver it or drop it, never answer it.
ReaderEvent: TypeAlias = Answered | Failed | Noted | NotificationReceived


def _one_line(body: bytes) -> bytes | str:
    """``body`` as one newline-terminated line for the endpoint, or why it cannot be a message.

    A JSON text holds a raw LF only as whitespace (RFC 8259 §7: control characters inside strings
    must be escaped), so a pretty-printed body becomes one line by turning each LF into a space.
    A raw LF inside a string would become valid that way, so such a body is checked strictly first
    (and one nested too deeply for that check is refused: the endpoint would refuse it too).
    """
    if b"\n" not in body:
        return body + b"\n"
    try:
        json.loads(body)
    except ValueError:
        return "not JSON"
    except RecursionError:
        return "JSON nested too deeply"
    return body.replace(b"\n", b" ") + b"\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shown(value: object, limit: int = 60) -> str:
    """``value`` quoted and cut for a message, without building the repr of all of a huge string."""
    return quote_for_message(value[: limit + 8] if isinstance(value, str) else value, limit)


@final
class ResponseReader:
    """Read one 2xx response body for one request: the answer, and what came with it.

    The body is a JSON message (:attr:`BodyKind.JSON`) or an event stream (:attr:`BodyKind.SSE`).
    Each message goes through ``connection`` (the client's JSON-RPC endpoint, which allocated the
    request's id), so every envelope check is the endpoint's own. The reader is :attr:`done` once
    the response to ``request_id`` (or a failure) is out; stop reading then and close the stream.

    Args:
        connection: The endpoint that sent the request.
        request_id: The request's id.
        method: The request's method (for messages).
        kind: The body's kind, from :func:`response_disposition`.
        label: The server's label (for messages).

    Limits: a JSON body over the connection's ``max_message_size`` fails as soon as it passes it;
    an event stream fails when one event passes it, or when the whole stream passes twice it (the
    response plus as much again of notifications and keep-alives).
    """

    __slots__ = ("_body", "_conn", "_done", "_id", "_kind", "_label", "_method", "_sse", "_total")

    def __init__(
        self,
        connection: JsonRpcConnection,
        request_id: RequestId,
        *,
        method: str,
        kind: BodyKind,
        label: str,
    ) -> None:
        self._conn = connection
        self._id = request_id
        self._method = method
        self._kind = kind
        self._label = label
        self._body = bytearray()
        self._total = 0
        self._done = False
        self._sse = (
            SseParser(max_event_size=connection.max_message_size) if kind is BodyKind.SSE else None
        )

    @property
    def done(self) -> bool:
        """True once the answer (or a failure) has been produced; nothing more is read."""
        return self._done

    def _fail(self, message: str, kind: str = "protocol") -> list[ReaderEvent]:
        self._done = True
        return [Failed(error=TransportError(f"server {self._label!r} {message}", kind=kind))]

    def feed(self, data: bytes) -> list[ReaderEvent]:
        """Take the next chunk of the body; return what it completes."""
        if self._done or not data:
            return []
        limit = self._conn.max_message_size
        self._total += len(data)
        if self._sse is None:
            if self._total > limit:
                return self._fail(f"sent a response to {self._method} larger than {limit} bytes")
            self._body += data
            return []
        if self._total > 2 * limit:
            return self._fail(f"sent more than {2 * limit} bytes on the stream of {self._method}")
        try:
            events = self._sse.feed(data)
        except RemoteProtocolError as exc:
            return self._fail(f"broke the event stream of {self._method}: {exc.message}")
        out: list[ReaderEvent] = []
        for event in events:
            if event.event != "message":
                out.append(
                    Noted(
                        kind=NoteKind.OTHER_EVENT,
                        message=f"skipped an event of type {_shown(event.event)}",
                    )
                )
                continue
            out.extend(self._message(event.data))
            if self.done:  # the property: mypy would keep the narrowing of _done from above
                break
        return out

    def end(self) -> list[ReaderEvent]:
        """The body ended; return the answer of a JSON body, or the failure of a cut-short one."""
        if self._done:
            return []
        if self._sse is None:
            out = self._message(bytes(self._body))
            self._body = bytearray()
            if self.done:
                return out
            return out + self._fail(
                f"answered {self._method} with a message that is not its response"
            )
        return self._fail(
            f"ended the event stream of {self._method} before sending its response", "closed"
        )

    def _message(self, body: bytes) -> list[ReaderEvent]:
        line = _one_line(body)
        if isinstance(line, str):
            return self._fail(f"answered {self._method} with a body that is {line}")
        conn = self._conn
        conn.receive_data(line)
        out: list[ReaderEvent] = []
        while (event := conn.next_event()) is not NEED_DATA:
            out.extend(self._classify(event))
        return out

    def _classify(self, event: object) -> list[ReaderEvent]:
        label, method = self._label, self._method
        if isinstance(event, ResponseReceived) and event.id == self._id:
            self._done = True
            return [Answered(result=event.result)]
        if isinstance(event, ErrorResponseReceived) and event.id == self._id:
            self._done = True
            return [
                Failed(error=_rpc_error(label, method, int(event.code), event.message, event.data))
            ]
        if isinstance(event, UnmatchedResponse) and event.id is None and event.error is not None:
            # An error with id null (the server could not read the id) answers this POST (HTTP-34).
            self._done = True
            return [Failed(error=_rpc_error_object(label, method, event.error))]
        if isinstance(event, InvalidResponse) and event.id == self._id:
            return self._fail(f"broke JSON-RPC answering {method}: {event.error.message}")
        if isinstance(event, InvalidMessage):
            return self._fail(f"broke JSON-RPC answering {method}: {event.error.message}")
        if isinstance(event, NotificationReceived):
            return [event]
        if isinstance(event, RequestReceived):
            return [
                Noted(
                    kind=NoteKind.REQUEST,
                    message=f"ignored a request ({_shown(event.method)}) sent on a response stream",
                )
            ]
        if isinstance(event, UnmatchedResponse | ResponseReceived | ErrorResponseReceived):
            return [
                Noted(
                    kind=NoteKind.OTHER_RESPONSE,
                    message=f"ignored a response to another request ({_shown(event.id)})",
                )
            ]
        return []  # CancelRequested, LateResponse: nothing to do


#: Characters of a server's error message put into ours (the whole text stays in ``rpc_message``).
_ERROR_MESSAGE_SHOWN: Final = 300


def _rpc_error(label: str, method: str, code: int, message: str, data: object) -> JsonRpcError:
    return JsonRpcError(
        f"server {label!r} answered {method} with error {code}: "
        f"{_cut(message, _ERROR_MESSAGE_SHOWN)}",
        rpc_code=code,
        method=method,
        data=data,
        rpc_message=message,
    )


def _rpc_error_object(label: str, method: str, error: Mapping[str, JSONValue]) -> JsonRpcError:
    code = error["code"]
    message = error["message"]
    assert isinstance(code, int)
    assert isinstance(message, str)
    return _rpc_error(label, method, code, message, error.get("data"))


@final
class HttpStatusError(TransportError):
    """The server answered with an HTTP error status and no JSON-RPC error in the body.

    Attributes:
        kind: ``"http-status"``.
        status: The status code.
    """

    status: int

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message, kind="http-status")
        self.status = status


def status_error(
    status: int,
    body: bytes,
    *,
    connection: JsonRpcConnection,
    content_type: str | None,
    method: str,
    label: str,
    reason: str = "",
) -> JsonRpcError | HttpStatusError:
    """Turn a non-2xx, non-3xx answer into a typed error (docs/requirements.md#http-client rule 4; HTTP-34).

    A JSON body holding a JSON-RPC error response, for the refused request or with id null (a
    server that could not read the request), is surfaced as the
    :class:`~skills_core.errors.JsonRpcError` it is; anything else becomes an
    :class:`HttpStatusError` naming the status and quoting the start of the body.

    Args:
        status: The status code.
        body: Up to :data:`MAX_ERROR_BODY` bytes of the body.
        connection: The client's endpoint (its envelope checks read the body).
        content_type: The response's ``Content-Type``.
        method: The method of the message that was refused.
        label: The server's label.
        reason: The status line's reason phrase, if any.
    """
    line = _one_line(body) if _media_type(content_type) == JSON_MEDIA_TYPE and body else None
    if isinstance(line, bytes):
        connection.receive_data(line)
        found: JsonRpcError | None = None
        while (event := connection.next_event()) is not NEED_DATA:
            if isinstance(event, ErrorResponseReceived):
                found = _rpc_error(label, method, int(event.code), event.message, event.data)
            elif isinstance(event, UnmatchedResponse) and event.error is not None:
                found = _rpc_error_object(label, method, event.error)
        if found is not None:
            return JsonRpcError(
                found.message.replace(" with error ", f" with HTTP {status} and error ", 1),
                rpc_code=found.rpc_code,
                method=method,
                data=found.data,
                rpc_message=found.rpc_message,
            )
    text = body[:200].decode("utf-8", "replace").strip()
    detail = f": {quote_for_message(text)}" if text else ""
    phrase = f" {_cut(reason, 60)}" if reason else ""
    return HttpStatusError(
        f"server {label!r} answered {method} with HTTP {status}{phrase}{detail}", status=status
    )
