"""The client side of MCP's Streamable HTTP transport, without I/O (http-transport.md §5).

Theory of operation
-------------------
An HTTP client transport for MCP is mostly decisions about bytes and headers: which headers a POST
carries, what a response's status and ``Content-Type`` mean, how a ``text/event-stream`` body
splits into events, which message of a body answers the request, whether a redirect may be
followed, and what a failed ``server/discover`` probe says about the server's era. Every such
decision lives here as a pure function or a small state machine (bytes and strings in, values
out), so that it is tested without a network, fed whole and byte by byte, and reusable by anyone
who drives MCP over an HTTP library of their own. :mod:`skills_core.adapters.http_client` is the
thin httpx2 loop around it.

* **Headers** (§5.1, §5.2; HTTP-30, HTTP-31, HTTP-37, HTTP-40). :func:`message_headers` derives a
  POST's headers from the message itself: a request whose ``params._meta`` names a protocol
  version is modern and gets ``MCP-Protocol-Version`` (that same version, so header and body never
  disagree), ``Mcp-Method`` and, for ``resources/read``, ``tools/call`` and ``prompts/get``,
  ``Mcp-Name``; anything else is legacy and gets the negotiated version and the session id of its
  :class:`LegacySession`, if any. Values that are not plain visible ASCII travel as
  ``=?base64?...?=`` (:func:`encode_header_value`). Caller-supplied headers are checked by
  :func:`check_custom_header`: none of the reserved names, no line breaks or controls.
* **Responses** (§5.3, §5.4; HTTP-33, HTTP-34). :func:`response_disposition` maps a status and a
  ``Content-Type`` to what must happen next; :class:`ResponseReader` turns a JSON or SSE body into
  the answer to one request, plus the notifications that came with it, through the JSON-RPC
  endpoint's own envelope checks (:class:`~skills_core.jsonrpc.JsonRpcConnection`);
  :func:`status_error` turns a non-2xx answer into a typed error, re-keying an id-null JSON-RPC
  error to the request (HTTP-34).
* **SSE**: event streams are parsed by :class:`~skills_core.sse.SseParser` (WHATWG HTML §9.2.6,
  bounded; re-exported here), and :class:`ResponseReader` picks the answer out of its events.
* **Redirects** (§5.10; HTTP-41). :func:`redirect_target` follows 307 and 308 only (method and
  body kept), to the same origin only, at most :data:`MAX_REDIRECTS` times; 301/302/303 would turn
  the POST into a GET and are refused. Since no redirect leaves the origin, no header (the
  caller's ``Authorization`` included) is ever sent anywhere else.
* **Eras** (§5.5, §5.6; HTTP-35, HTTP-36). :func:`supported_version` picks the version to retry
  with after -32022; :func:`classify_probe` reads the outcome of the ``server/discover`` probe:
  a result naming a version we speak, or -32022 with one, is modern; a JSON-RPC error or an
  empty/unrecognised 400, 404 or 405 is legacy; 401, 403, 5xx and other statuses are errors,
  never era signals (network failures and timeouts never reach it). :class:`EraCache` remembers
  the verdict per origin.

Errors are values or typed exceptions of :mod:`skills_core.errors`: a broken server yields
:class:`~skills_core.errors.TransportError` (kinds ``protocol``, ``closed``, ``http-status``,
``redirect``) or :class:`~skills_core.errors.JsonRpcError`, exactly as over stdio; its text is
quoted and cut (``quote_for_message``), never copied whole into a message.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias, final
from urllib.parse import urljoin, urlsplit

from ..errors import (
    JsonRpcError,
    LocalProtocolError,
    RemoteProtocolError,
    SkillsError,
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
from ..messages import Era
from ..spec import (
    META_PROTOCOL_VERSION,
    SUPPORTED_LEGACY_VERSIONS,
    SUPPORTED_MODERN_VERSIONS,
    ErrorCode,
    Method,
)
from .sse import SseEvent, SseParser

__all__ = [
    # constants
    "ACCEPT",
    "JSON_MEDIA_TYPE",
    "SSE_MEDIA_TYPE",
    "HEADER_PROTOCOL_VERSION",
    "HEADER_METHOD",
    "HEADER_NAME",
    "HEADER_SESSION_ID",
    "RESERVED_HEADERS",
    "MAX_REDIRECTS",
    "MAX_ERROR_BODY",
    "MAX_URL_LENGTH",
    "HANDSHAKE_VERSIONS",
    # headers
    "encode_header_value",
    "decode_header_value",
    "check_custom_header",
    "LegacySession",
    "message_headers",
    "session_headers",
    "check_session_id",
    # responses
    "BodyKind",
    "Disposition",
    "response_disposition",
    "bad_answer",
    "SseEvent",
    "SseParser",
    "Answered",
    "Failed",
    "Noted",
    "NoteKind",
    "ReaderEvent",
    "ResponseReader",
    "status_error",
    "HttpStatusError",
    # redirects and origins
    "redirect_target",
    "origin_of",
    "check_url",
    # eras
    "supported_version",
    "with_protocol_version",
    "ProbeVerdict",
    "classify_probe",
    "EraCache",
]

# --- constants ---------------------------------------------------------------------------------

#: The one JSON media type MCP answers with (§2.2).
JSON_MEDIA_TYPE: Final = "application/json"
#: The SSE media type (§2.2).
SSE_MEDIA_TYPE: Final = "text/event-stream"
#: ``Accept`` of every POST: both answer types, as the transport requires (HTTP-30).
ACCEPT: Final = f"{JSON_MEDIA_TYPE}, {SSE_MEDIA_TYPE}"

#: Header names, as written on the wire (HTTP field names are case-insensitive).
HEADER_PROTOCOL_VERSION: Final = "MCP-Protocol-Version"
HEADER_METHOD: Final = "Mcp-Method"
HEADER_NAME: Final = "Mcp-Name"
HEADER_SESSION_ID: Final = "Mcp-Session-Id"

#: Header names a caller may not set (lower case): the transport's own (HTTP-40: "reserved headers
#: not overridable", as the TypeScript SDK does), and the ones that frame the message itself, which
#: a caller setting them could use to smuggle a second request into the connection.
RESERVED_HEADERS: Final = frozenset(
    {
        "accept",
        "accept-encoding",
        "connection",
        "content-encoding",
        "content-length",
        "content-type",
        "expect",
        "host",
        "keep-alive",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)

#: Redirect hops followed for one message. Only same-origin 307/308 are followed at all, so a
#: chain longer than a load balancer's one or two hops is a loop or a trap. (Precedents: browsers
#: and httpx stop at 20; curl at 50 when told to follow; none of them keep to one origin.)
MAX_REDIRECTS: Final = 5

#: The longest URL accepted, the server's or a redirect's (httpx's own limit).
MAX_URL_LENGTH: Final = 65536

#: Bytes of a non-2xx body read to find a JSON-RPC error in it. Error bodies are a few hundred
#: bytes; a larger one is not read further and counts as unrecognised.
MAX_ERROR_BODY: Final = 64 * 1024

#: Revisions that use the ``initialize`` handshake (everything older than the stateless one).
HANDSHAKE_VERSIONS: Final = frozenset({*SUPPORTED_LEGACY_VERSIONS, "2024-11-05"})

#: Longest session id accepted: ids are opaque tokens (a UUID is 36 characters; a signed stateless
#: id a few hundred); this bounds what is echoed on every request.
_MAX_SESSION_ID: Final = 1024

# --- header values (T26 "Value encoding") -------------------------------------------------------

_SENTINEL_PREFIX: Final = "=?base64?"
_SENTINEL_SUFFIX: Final = "?="
#: HTTP's optional whitespace around a field value (RFC 9110 §5.6.3: SP and HTAB).
_OWS: Final = " \t"
_TOKEN_CHARACTERS: Final = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


def _is_plain(value: str) -> bool:
    """True when ``value`` can travel as a header value unchanged and be read back the same."""
    if not value or value != value.strip(_OWS):
        return False  # empty vanishes; edge whitespace is stripped by every HTTP parser
    if value.startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX):
        return False  # would read back as an encoded value
    return all(" " <= c <= "~" for c in value)


def encode_header_value(value: str) -> str:
    """Return ``value`` as an HTTP header value, base64-wrapped when it is not plain ASCII.

    T26: values with non-ASCII or control characters (a tab included), leading or trailing
    spaces, or that look like the sentinel, and the empty value, are sent as
    ``=?base64?<base64 of UTF-8>?=``; others (visible ASCII and inner spaces) as they are.

    Args:
        value: The text to send (a URI, a method name).

    Returns:
        The header value; :func:`decode_header_value` gives ``value`` back.

    Raises:
        LocalProtocolError: ``value`` holds a lone surrogate (it has no UTF-8 form).

    Example:
        >>> encode_header_value("skill://caf\u00e9/SKILL.md")
        '=?base64?c2tpbGw6Ly9jYWbDqS9TS0lMTC5tZA==?='
    """
    if _is_plain(value):
        return value
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError:
        raise LocalProtocolError(
            f"cannot send {quote_for_message(value)} in a header: it is not valid Unicode",
            kind="bad-header",
        ) from None
    return f"{_SENTINEL_PREFIX}{base64.b64encode(raw).decode('ascii')}{_SENTINEL_SUFFIX}"


def decode_header_value(raw: bytes | str) -> str | None:
    """Return the text a received header value carries, or None when it cannot be read.

    Both ends use this one decoder: the server app compares the result with the body (HTTP-10..12),
    the client's tests check what it sends. Surrounding optional whitespace is removed first
    (RFC 9110 §5.6.3). A value wearing both markers must wrap canonical, padded base64 of UTF-8;
    any other value must be visible ASCII. None never equals a body value, so a caller's
    comparison fails, as the spec asks.

    Args:
        raw: The field value as received (ASGI gives bytes; MCP's header values are ASCII).

    Example:
        >>> decode_header_value(b" =?base64?c2tpbGw6Ly9jYWbDqS9TS0lMTC5tZA==?= ")
        'skill://café/SKILL.md'
        >>> decode_header_value(b"=?base64?not base64?=") is None
        True
    """
    try:
        text = (raw.decode("ascii") if isinstance(raw, bytes) else raw).strip(_OWS)
    except UnicodeDecodeError:
        return None
    if not (text.startswith(_SENTINEL_PREFIX) and text.endswith(_SENTINEL_SUFFIX)):
        return text if all(" " <= c <= "~" for c in text) else None
    if len(text) < len(_SENTINEL_PREFIX) + len(_SENTINEL_SUFFIX):  # "=?base64?=": markers overlap
        return None
    payload = text[len(_SENTINEL_PREFIX) : -len(_SENTINEL_SUFFIX)]
    try:
        data = base64.b64decode(payload, validate=True)
        if base64.b64encode(data).decode("ascii") != payload:
            return None  # not canonical: two spellings of one value would both match
        return data.decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return None


def check_custom_header(name: str, value: str) -> tuple[str, str]:
    """Check a header the caller wants sent on every request (``--header``); never quotes the value.

    HTTP-40: credentials go in headers (``Authorization``), never in the URL, and the transport's
    own headers cannot be overridden.

    Args:
        name: The field name (an RFC 9110 token).
        value: The field value; surrounding spaces and tabs are removed.

    Returns:
        ``(name, value)`` as they will be sent.

    Raises:
        LocalProtocolError: kind ``bad-header``: an empty or malformed name, a reserved name, or
            a value with a line break, a control character or a non-ASCII character. The message
            names the header, never its value (it is often a secret).
    """
    if not name or not set(name) <= _TOKEN_CHARACTERS:
        raise LocalProtocolError(
            f"header name {quote_for_message(name)} is not a valid HTTP field name",
            kind="bad-header",
        )
    if name.lower() in RESERVED_HEADERS:
        raise LocalProtocolError(
            f"header {name} is set by the transport itself and cannot be given",
            kind="bad-header",
        )
    stripped = value.strip(" \t")
    if not all(c == "\t" or " " <= c <= "~" for c in stripped):
        raise LocalProtocolError(
            f"the value of header {name} holds a line break, a control or a non-ASCII character",
            kind="bad-header",
        )
    return name, stripped


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
    """Return the headers of the POST that carries one message (§5.1, §5.2, §5.7).

    Args:
        method: The message's method.
        params: Its ``params``. When ``params._meta`` names a protocol version the message is
            modern (the host adds ``_meta`` to every modern request, never to a legacy one).
        session: The legacy session, once ``initialize`` has been answered; ignored for modern
            messages (a modern client never sends ``Mcp-Session-Id``).

    Returns:
        ``(name, value)`` pairs: ``Content-Type``, ``Accept``, then the era's headers.
    """
    headers = [("Content-Type", JSON_MEDIA_TYPE), ("Accept", ACCEPT)]
    meta = params.get("_meta") if params is not None else None
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, Mapping) else None
    if isinstance(version, str) and params is not None:
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
    """Decide what a response means before its body is read (§5.3, §5.4).

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
        A ``TransportError`` of kind ``protocol`` (§5.3, §5.4: "202 for a request → error",
        "other types → error").
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
    """Turn a non-2xx, non-3xx answer into a typed error (§5.4; HTTP-34).

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


# --- redirects and origins ---------------------------------------------------------------------

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def origin_of(url: str) -> str:
    """Return ``scheme://host:port`` of an http(s) URL, lower-cased, with the port made explicit.

    Raises:
        ValueError: Not an absolute ``http`` or ``https`` URL with a host.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError("not an absolute http:// or https:// URL")
    port = parts.port  # raises ValueError for a bad port
    if port is None:
        port = _DEFAULT_PORTS[scheme]
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def _has_control(text: str) -> bool:
    """True when ``text`` holds an ASCII control character (no URL may: HTTP clients refuse them)."""
    return any(c < " " or c == "\x7f" for c in text)


def check_url(url: str) -> str:
    """Return ``url`` if it can name an MCP endpoint: absolute http(s), no credentials (HTTP-40).

    Raises:
        ValueError: saying which; the URL itself is not repeated (it may carry a secret).
    """
    if _has_control(url):
        raise ValueError("the URL holds a control character")
    if len(url) > MAX_URL_LENGTH:
        raise ValueError(f"the URL is longer than {MAX_URL_LENGTH:,} characters")
    origin_of(url)
    if "@" in urlsplit(url).netloc:
        raise ValueError("credentials in the URL are refused; send them in a header instead")
    return url


def _join(url: str, location: str) -> str | None:
    """``location`` resolved against ``url``, or ``None`` when it is not a usable URL."""
    if _has_control(location) or len(location) > MAX_URL_LENGTH:
        return None
    try:
        target = urljoin(url, location)  # ValueError: "Invalid IPv6 URL"
        if urlsplit(target).scheme.lower() in _DEFAULT_PORTS:
            origin_of(target)  # ValueError: a port that is not a number, or out of range
    except ValueError:
        return None
    return target if len(target) <= MAX_URL_LENGTH else None


def redirect_target(url: str, status: int, location: str | None, *, hops: int, label: str) -> str:
    """Return the URL to send the same POST to after a 3xx, or refuse (§5.10; HTTP-41).

    Args:
        url: The URL that answered with the redirect.
        status: Its status.
        location: Its ``Location`` header.
        hops: Redirects already followed for this message.
        label: The server's label (for messages).

    Returns:
        The absolute target URL: same origin, without credentials, 307 or 308, within
        :data:`MAX_REDIRECTS`.

    Raises:
        TransportError: kind ``redirect``, naming the status and, for another origin, that origin
            (never the path or query, which may carry tokens); also for a ``Location`` that is not
            a URL (a control character in it, a broken IPv6 literal, a bad port).
    """
    if status not in (307, 308):
        why = (
            "which would turn the POST into a GET"
            if status in (301, 302, 303)
            else "which this client does not follow"
        )
        raise TransportError(
            f"server {label!r} answered with a {status} redirect, {why}", kind="redirect"
        )
    if hops >= MAX_REDIRECTS:
        raise TransportError(
            f"server {label!r} redirected more than {MAX_REDIRECTS} times", kind="redirect"
        )
    if not location:
        raise TransportError(
            f"server {label!r} answered with a {status} redirect without a Location",
            kind="redirect",
        )
    location = location.strip(_OWS)
    target = _join(url, location)
    if target is None:
        raise TransportError(
            f"server {label!r} answered with a {status} redirect whose Location is not a URL "
            "(a control character, or a malformed host or port)",
            kind="redirect",
        )
    try:
        there: str | None = origin_of(target)
    except ValueError:  # another scheme (a malformed URL of ours was refused by _join)
        there = None
    if there != origin_of(url):
        where = there if there is not None else "a URL that is not http(s)"
        raise TransportError(
            f"server {label!r} redirected to another origin ({quote_for_message(where, 80)}); "
            "redirects are followed only within the server's own origin",
            kind="redirect",
        )
    if "@" in urlsplit(target).netloc:
        raise TransportError(
            f"server {label!r} answered with a {status} redirect to a URL with credentials in it; "
            "credentials never travel in a URL",
            kind="redirect",
        )
    return target


# --- eras --------------------------------------------------------------------------------------


def supported_version(data: object, ours: Sequence[str] = SUPPORTED_MODERN_VERSIONS) -> str | None:
    """The version to retry with after -32022: ours, in our order, that ``data.supported`` lists.

    HTTP-35: "pick a version from data.supported, retry once". ``None`` when the error data has no
    valid ``supported`` list or it shares no version with ``ours``.
    """
    supported = _supported(data)
    return next((v for v in ours if v in supported), None) if supported else None


def _supported(data: object) -> list[str]:
    listed = data.get("supported") if isinstance(data, dict) else None
    if isinstance(listed, list) and all(isinstance(v, str) for v in listed):
        return [v for v in listed if isinstance(v, str)]
    return []


def with_protocol_version(params: Mapping[str, object], version: str) -> dict[str, object]:
    """``params`` with ``_meta``'s protocol version replaced (the -32022 retry; HTTP-35)."""
    meta = params.get("_meta")
    new_meta = dict(meta) if isinstance(meta, Mapping) else {}
    new_meta[META_PROTOCOL_VERSION] = version
    return {**params, "_meta": new_meta}


class ProbeVerdict(enum.Enum):
    """What the ``server/discover`` probe says about a server (§5.6; HTTP-36)."""

    #: It speaks a modern version we speak.
    MODERN = "modern"
    #: It does not understand the probe: use ``initialize``.
    LEGACY = "legacy"
    #: The probe failed for a reason that says nothing about the era: report it.
    ERROR = "error"


def classify_probe(
    status: int,
    *,
    result: Mapping[str, object] | None = None,
    error: SkillsError | None = None,
    ours: Sequence[str] = SUPPORTED_MODERN_VERSIONS,
) -> ProbeVerdict:
    """Classify the HTTP answer to a ``server/discover`` probe (§5.6; HTTP-36; TS probeClassifier).

    Network failures and timeouts never get here: they are errors, not era signals.

    Args:
        status: The HTTP status of the final answer (after any -32022 retry).
        result: The discover result, when there was one.
        error: The error otherwise: a :class:`~skills_core.errors.JsonRpcError` from the body, or
            the :class:`HttpStatusError` of a body without one, or another ``TransportError``.
        ours: The modern versions this client speaks.

    Returns:
        :attr:`ProbeVerdict.MODERN` for a result that lists one of ``ours``;
        :attr:`ProbeVerdict.LEGACY` for any other result, a JSON-RPC error (except a -32022 that
        lists modern versions only, and except under 401, 403 or 5xx), or a 400/404/405 without
        one; :attr:`ProbeVerdict.ERROR` otherwise.
    """
    if result is not None:
        versions = result.get("supportedVersions")
        if isinstance(versions, list) and any(v in versions for v in ours):
            return ProbeVerdict.MODERN
        return ProbeVerdict.LEGACY  # a discover result we cannot use: initialize may still work
    if status in (401, 403) or status >= 500:
        return ProbeVerdict.ERROR  # the auth layer's or the infrastructure's answer, not the era
    if isinstance(error, JsonRpcError):
        if error.rpc_code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
            supported = _supported(error.data)
            if any(v in supported for v in ours):
                return ProbeVerdict.ERROR  # the retry with that version was refused too
            if any(v not in HANDSHAKE_VERSIONS for v in supported):
                return ProbeVerdict.ERROR  # modern, but none we speak: initialize will not help
        return ProbeVerdict.LEGACY
    if isinstance(error, HttpStatusError) and status in (400, 404, 405):
        return ProbeVerdict.LEGACY
    return ProbeVerdict.ERROR


@final
class EraCache:
    """The era each origin was found to speak, so a second connection skips the probe (HTTP-36).

    A plain mapping owned by whoever opens connections (one per command run, say); nothing global.
    """

    __slots__ = ("_eras",)

    def __init__(self, eras: Iterable[tuple[str, Era]] = ()) -> None:
        self._eras: dict[str, Era] = {}
        for url, era in eras:
            self.put(url, era)

    def get(self, url: str) -> Era | None:
        """The era recorded for ``url``'s origin, or ``None``."""
        return self._eras.get(origin_of(url))

    def put(self, url: str, era: Era) -> None:
        """Record that ``url``'s origin speaks ``era``."""
        self._eras[origin_of(url)] = era
