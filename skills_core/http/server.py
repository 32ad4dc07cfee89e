"""The server half of Streamable HTTP: the checks every request climbs before the server is asked.

Theory of operation
-------------------
:class:`HttpChecks` holds the rules of :class:`~skills_core.adapters.asgi.SkillsApp`
(docs/requirements.md#http-ladder, docs/requirements.md#http-legacy) and nothing of its I/O: it
takes what an ASGI scope and a body hold and answers with a :class:`Reply` (a refusal, or an answer
that needs no server) or a :class:`Call` (what to ask the server, and how to answer with what it
says). The app reads the body, asks the server, and sends. What the headers say is read by
:mod:`skills_core.http.headers`, the settings are :class:`~skills_core.http.options.HttpOptions`,
and legacy session ids are minted and opened by :class:`~skills_core.http.session.SessionCodec`.

**The ladder.** The first rung a request fails answers (the numbers are the rows of
docs/requirements.md#http-ladder):

1. the path is the endpoint, else 404 (HTTP-01);
2. ``Host`` is on the allow-list, else 421 (HTTP-04; the Python SDK's status, "misdirected");
3. an ``Origin``, when present, is on the allow-list, else 403 (HTTP-03). ``OPTIONS`` preflights
   are answered here, and only when CORS is configured. Both are parsed whole
   (:func:`~skills_core.http.options.parse_authority`, ``parse_origin``): a value is
   ``host[:port]`` (an origin ``scheme://host[:port]``) and nothing more, the port digits, so a
   value that merely starts with an allowed name (``[::1]evil.example``) is refused;
4. a declared ``Content-Length`` over the cap is 413 before a byte is read (HTTP-05);
5. not ``POST``: 405 with ``Allow: POST`` (HTTP-02; legacy ``GET`` without an SSE ``Accept`` is 406,
   a legacy ``GET`` with a session id opens the session's event stream (a :class:`StreamCall`:
   its change notifications, PUSH-03; an unknown session is 404), one without is 405, and
   ``DELETE`` is 405 too: see "Sessions" in :mod:`skills_core.adapters.asgi`);
6. ``Content-Type`` is not ``application/json``: 415; 7. ``Accept`` does not cover both
   ``application/json`` and ``text/event-stream``: 406 (HTTP-06). Each media range counts with
   its weight, and the most specific range naming a type decides (RFC 9110 §12.4.2, §12.5.1):
   ``q=0`` means "not acceptable", so ``*/*;q=0`` accepts nothing and ``text/event-stream;q=0,
   */*`` not SSE; a malformed weight counts as 0. No ``Accept`` at all means "anything";
8. the body (the app reads it: over the cap is 413, slower than the time bound 408) must be one
   JSON-RPC request or notification: bad JSON is 400/-32700, a batch, a response or a bad envelope
   400/-32600, with id null (HTTP-07); a notification is 202 with an empty body (HTTP-08, HTTP-29).

Then the era (docs/requirements.md#http-eras, HTTP-22): a ``MCP-Protocol-Version`` header naming a
handshake version (2024-11-05 .. 2025-11-25) is legacy, any other value modern; without the header,
the request's params decide, by the rule every transport follows
(:func:`~skills_core.messages.request_era`: a ``params._meta`` holding the protocol version's key is
modern, whatever its value; anything else legacy). A notification without the header is legacy.

*Modern* (2026-07-28, stateless; rows 11-19): ``_meta`` must hold ``protocolVersion`` and
``clientCapabilities`` (400/-32602, HTTP-09); the ``MCP-Protocol-Version`` header must equal it
(400/-32020, HTTP-10) and ``Mcp-Method`` the method (HTTP-11); ``Mcp-Name`` must equal
``params.uri`` of ``resources/read`` (``params.name`` of ``tools/call``/``prompts/get``) after the
``=?base64?..?=`` decoding (HTTP-12); a routing header sent twice is -32020 too; the version must be
one we serve (400/-32022 with ``data: {supported, requested}``, HTTP-13), and the method one the
modern era has (else 404/-32601, ``initialize`` and ``ping`` included: HTTP-14). Only then is the
server asked. Its answer goes out with 200, also when it is an error about the request's params
(an unknown skill, -32602): the status speaks for the HTTP exchange, and the error is the
application's answer (row 19 allows 200 or 400; this keeps one rule for both eras). A -32601 from
the server (``resources/directory/read`` undeclared) is 404. ``Mcp-Session-Id`` and
``Last-Event-ID`` are ignored and never minted on modern traffic (HTTP-20).

*Legacy* (2025-11-25; docs/requirements.md#http-legacy): ``initialize`` is answered by the server
and its response carries a new ``Mcp-Session-Id``; every later request and notification must carry
it (missing: 400, HTTP-24; unknown, expired, forged or another principal's: 404, HTTP-25); a
``MCP-Protocol-Version`` header, when sent, must be the session's version (400, HTTP-28). Answers,
errors included, go in-band with 200 (HTTP-29); ``initialize`` on a live session is 400/-32600.

**What a rung costs.** The verdicts that depend on a header's bytes alone (``Host``, ``Origin``,
``Content-Type``, ``Accept``, and the text a routing header carries) are remembered in small
tables keyed by those bytes, emptied when they pass :data:`MEMO_LIMIT` entries: a client sends the
same headers request after request, and pays a dictionary lookup for each rung instead of parsing
the header again. The tables hold verdicts of pure functions of the bytes and the fixed options,
so a remembered verdict is the one the rung would reach; a client that sends endless new values
only makes the tables start over.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, TypeVar, final

from ..errors import LocalProtocolError
from ..jsonrpc import (
    Answer,
    CancelRequested,
    ErrorObject,
    InvalidMessage,
    JSONObject,
    JsonRpcConnection,
    NotificationReceived,
    RequestId,
    RequestReceived,
    parse_message,
)
from ..jsonvalue import JSONValue
from ..messages import Era, request_era
from ..spec import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    SUPPORTED_LEGACY_VERSIONS,
    SUPPORTED_MODERN_VERSIONS,
    ErrorCode,
    Method,
)
from .headers import (
    HANDSHAKE_VERSIONS,
    accepts_json_and_sse,
    accepts_sse,
    decode_header_value,
)
from .options import HttpOptions, Scope
from .probes import Probe, probe_allows_host, probe_paths
from .session import SessionCodec

__all__ = [
    "MEMO_LIMIT",
    "Reply",
    "Call",
    "StreamCall",
    "Head",
    "HttpChecks",
    "encode_answer",
    "text_reply",
]

_JSON: Final = b"application/json"
_TEXT: Final = b"text/plain; charset=utf-8"
_ALLOW: Final = (b"allow", b"POST")

#: Header names, as ASGI gives them (lowercase bytes).
_H_HOST: Final = b"host"
_H_ORIGIN: Final = b"origin"
_H_CONTENT_TYPE: Final = b"content-type"
_H_CONTENT_LENGTH: Final = b"content-length"
_H_ACCEPT: Final = b"accept"
_H_VERSION: Final = b"mcp-protocol-version"
_H_METHOD: Final = b"mcp-method"
_H_NAME: Final = b"mcp-name"
_H_SESSION: Final = b"mcp-session-id"
#: Headers whose repetition is an error (the rest are joined or ignored).
_SINGLE: Final = frozenset(
    {
        _H_HOST,
        _H_ORIGIN,
        _H_CONTENT_TYPE,
        _H_CONTENT_LENGTH,
        _H_VERSION,
        _H_METHOD,
        _H_NAME,
        _H_SESSION,
    }
)
_NOTHING_REPEATED: Final[frozenset[bytes]] = frozenset()

#: ``Allow`` of a probe's 405.
_ALLOW_GET: Final = (b"allow", b"GET, HEAD")
_PROBE_METHODS: Final = frozenset({"GET", "HEAD"})
#: The method a reply names for a ``notifications/cancelled``.
_CANCELLED: Final = Method.NOTIFICATIONS_CANCELLED.value
#: Characters of a header value or path quoted in a log note.
_QUOTED: Final = 200

_CORS_ALLOW_HEADERS: Final = (
    b"content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name, "
    b"mcp-session-id, last-event-id"
)
_PREFLIGHT: Final = (
    (b"access-control-allow-methods", b"POST"),
    (b"access-control-allow-headers", _CORS_ALLOW_HEADERS),
    (b"access-control-max-age", b"600"),
)

#: Methods of the modern era that a skills server has (anything else is 404/-32601: HTTP-14).
_MODERN_METHODS: Final = frozenset(
    {
        Method.SERVER_DISCOVER,
        Method.SKILLS_LIST,
        Method.SKILLS_GET,
        Method.RESOURCES_READ,
        Method.RESOURCES_LIST,
        Method.RESOURCES_TEMPLATES_LIST,
        Method.RESOURCES_DIRECTORY_READ,
        "subscriptions/listen",  # a stream of change notifications (PUSH-06)
    }
)
#: The body member ``Mcp-Name`` mirrors, per method (T26; never required for skills/*).
_NAMED_BY: Final[Mapping[str, str]] = {
    Method.RESOURCES_READ: "uri",
    "tools/call": "name",
    "prompts/get": "name",
}
#: Every version we serve, for -32022's ``data.supported``.
_SERVED_VERSIONS: Final[list[JSONValue]] = [*SUPPORTED_MODERN_VERSIONS, *SUPPORTED_LEGACY_VERSIONS]

_MODERN: Final = Era.MODERN

#: Entries a table of remembered verdicts holds before it starts over.
MEMO_LIMIT: Final = 256


@final
class Reply:
    """What to send: a status, a body, its content type, more headers, and the CORS origin.

    And, for the operator's log (never sent): the JSON-RPC error code the body carries, the
    request's method when the body was read, and a note saying why a request was refused.
    """

    __slots__ = ("body", "code", "content_type", "cors", "headers", "method", "note", "status")

    def __init__(
        self,
        status: int,
        body: bytes = b"",
        content_type: bytes = _JSON,
        headers: tuple[tuple[bytes, bytes], ...] = (),
        cors: bytes | None = None,
    ) -> None:
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = headers
        #: The allowed ``Origin`` to name in CORS headers, or None (no CORS headers).
        self.cors = cors
        #: The JSON-RPC error code in the body, or None (a result, or not JSON-RPC).
        self.code: int | None = None
        #: The JSON-RPC method of the request, when its body was read and named one.
        self.method: str | None = None
        #: Why the request was refused, in words for a log (untrusted text quoted), or None.
        self.note: str | None = None


def text_reply(
    status: int, message: str, *headers: tuple[bytes, bytes], note: str | None = None
) -> Reply:
    """A reply of plain text: ``message`` and a line break; ``note`` says why, for a log."""
    reply = Reply(status, message.encode("utf-8") + b"\n", _TEXT, headers)
    reply.note = note
    return reply


#: Encodes responses; it sends nothing by itself and keeps no state for responses.
_WRITER: Final = JsonRpcConnection()


def _rpc_error(
    status: int,
    request_id: RequestId | None,
    code: int,
    message: str,
    data: JSONValue = None,
) -> Reply:
    reply = Reply(status, _WRITER.send_error(request_id, code, message, data))
    reply.code = code
    return reply


def _mismatch(request_id: RequestId, message: str) -> Reply:
    return _rpc_error(400, request_id, ErrorCode.HEADER_MISMATCH, message)


def encode_answer(request_id: RequestId, answer: Answer) -> tuple[bytes, int | None]:
    """The response bytes of ``answer``, and its error code (None for a result)."""
    try:
        body = _WRITER.send_answer(request_id, answer, check_keys=False)
    except LocalProtocolError:  # a result that cannot be written (over the message cap)
        code = ErrorCode.INTERNAL_ERROR
        return _WRITER.send_error(request_id, code, "Internal error"), code
    return body, answer.code if isinstance(answer, ErrorObject) else None


@final
class Call:
    """A request that passed every rung: what to ask the server, and how to answer."""

    __slots__ = (
        "cors",
        "id",
        "initialize",
        "legacy_version",
        "method",
        "params",
        "principal",
        "session",
    )

    def __init__(
        self,
        request_id: RequestId,
        method: str,
        params: JSONObject | None,
        *,
        legacy_version: str | None = None,
        initialize: bool = False,
        principal: str = "",
        cors: bytes | None = None,
        session: str = "",
    ) -> None:
        self.id = request_id
        self.method = method
        self.params = params
        #: The session's version (legacy), or None for a modern request or an ``initialize``.
        self.legacy_version = legacy_version
        #: An ``initialize``: a successful answer opens a session for ``principal``.
        self.initialize = initialize
        self.principal = principal
        self.cors = cors
        #: The legacy session id the request came with (``""`` for none).
        self.session = session


@final
class StreamCall:
    """A legacy ``GET`` that opens its session's event stream (PUSH-03): the app streams."""

    __slots__ = ("cors", "legacy_version", "session")

    def __init__(self, session: str, legacy_version: str, cors: bytes | None) -> None:
        self.session = session
        self.legacy_version = legacy_version
        self.cors = cors


@final
class Head:
    """The headers of one request that the later rungs read, each once; and its CORS origin."""

    __slots__ = ("cors", "repeated", "values")

    def __init__(
        self, values: dict[bytes, bytes], repeated: frozenset[bytes], cors: bytes | None
    ) -> None:
        self.values = values
        self.repeated = repeated
        self.cors = cors


def _gather(raw: Sequence[Sequence[bytes]]) -> tuple[dict[bytes, bytes], frozenset[bytes]]:
    """The headers by name, when some name is sent more than once: a single-valued header's
    first value (its repetition noted), a list-valued one's lines joined (``Accept``)."""
    values: dict[bytes, bytes] = {}
    repeated: set[bytes] = set()
    for name, value in raw:
        earlier = values.get(name)
        if earlier is None:
            values[name] = value
        elif name in _SINGLE:
            repeated.add(name)
        else:
            values[name] = earlier + b"," + value
    return values, frozenset(repeated)


def _is_json(content_type: bytes) -> bool:
    return content_type.split(b";", 1)[0].strip().lower() == b"application/json"


def _meta_version(params: JSONObject | None) -> str | None:
    """``params._meta`` protocolVersion when it is a string, else None."""
    if params is None:
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return None
    version = meta.get(META_PROTOCOL_VERSION)
    return version if isinstance(version, str) else None


@final
class HttpChecks:
    """The ladder of one app: its options, its session codec and its tables of verdicts.

    Thread safety: one event loop at a time (the tables are plain dictionaries).
    """

    __slots__ = (
        "_accepts",
        "_clock",
        "_decoded",
        "_endpoint",
        "_hosts",
        "_json_types",
        "_options",
        "_origins",
        "_probes",
        "_sessions",
    )

    def __init__(
        self, options: HttpOptions, sessions: SessionCodec, clock: Callable[[], int]
    ) -> None:
        """Check requests by ``options``; ``clock()`` is the time in whole seconds (sessions)."""
        self._options = options
        self._sessions = sessions
        self._clock = clock
        self._endpoint = options.path
        # Remembered verdicts, by the raw header value (see the module docstring).
        self._hosts: dict[bytes, bool] = {}
        self._origins: dict[bytes, bool] = {}
        self._json_types: dict[bytes, bool] = {}
        self._accepts: dict[bytes, bool] = {}
        self._decoded: dict[bytes, str | None] = {}
        #: Probe paths (relative to a mount's root path) -> probe names.
        self._probes = probe_paths(options.metrics)

    @property
    def options(self) -> HttpOptions:
        """The options the checks follow."""
        return self._options

    # -- rungs 1 to 7: the request line and headers ---------------------------------------------

    def head(self, scope: Scope) -> Head | Reply | Probe | StreamCall:
        """The headers the later rungs read, or the reply of the first of rungs 1-7 that fails.

        A probe's path (:mod:`~skills_core.http.probes`) instead of the endpoint is a
        :class:`~skills_core.http.probes.Probe` when its own checks pass; a legacy session's
        ``GET`` is a :class:`StreamCall` (its event stream).
        """
        path: str = scope["path"]
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        if path != self._endpoint:
            probe = self._probes.get(path)
            if probe is not None:
                return self._probe(probe, scope)
            return text_reply(
                404,
                f"Not Found: the MCP endpoint is {root}{self._endpoint}",
                note=f"the path {_quoted(path)} is not the endpoint",
            )
        raw = scope["headers"]
        if type(raw) is not list:
            raw = list(raw)
        values: dict[bytes, bytes] = dict(raw)
        if len(values) == len(raw):
            repeated = _NOTHING_REPEATED
        else:
            values, repeated = _gather(raw)
        options = self._options
        if options.allowed_hosts is not None:
            host = values.get(_H_HOST)
            if host is None or _H_HOST in repeated:
                return text_reply(
                    421,
                    "Misdirected Request: no single Host header",
                    note="no Host header" if host is None else "the Host header is sent twice",
                )
            allowed = self._hosts.get(host)
            if allowed is None:
                allowed = _remember(self._hosts, host, options.allows_host(host.decode("latin-1")))
            if not allowed:
                return _host_refused(host)
        cors: bytes | None = None
        origin = values.get(_H_ORIGIN)
        if origin is not None:
            allowed = self._origins.get(origin)
            if allowed is None:
                allowed = _remember(
                    self._origins, origin, options.allows_origin(origin.decode("latin-1"))
                )
            if not allowed or _H_ORIGIN in repeated:
                return _origin_refused(origin, _H_ORIGIN in repeated)
            if options.cors:
                cors = origin
        method: str = scope["method"]
        if method == "OPTIONS" and cors is not None:
            return Reply(204, b"", _TEXT, _PREFLIGHT, cors)
        if method == "GET" and values.get(_H_SESSION) is not None:
            return self._stream(values, repeated, scope, cors)
        reply = self._head_after_origin(method, values, repeated)
        if reply is not None:
            reply.cors = cors
            return reply
        return Head(values, repeated, cors)

    def _head_after_origin(
        self, method: str, values: dict[bytes, bytes], repeated: frozenset[bytes]
    ) -> Reply | None:
        """Rungs 4 to 7; None when all pass."""
        length = values.get(_H_CONTENT_LENGTH)
        if length is not None and (
            not length.isdigit() or int(length) > self._options.max_body_bytes
        ):
            if length.isdigit():
                return text_reply(
                    413,
                    "Content Too Large: the body is over the limit",
                    note=f"Content-Length {int(length)} is over the limit of "
                    f"{self._options.max_body_bytes} bytes",
                )
            return text_reply(
                400,
                "Bad Request: Content-Length is not a number",
                note=f"Content-Length {_quoted(length)} is not a number",
            )
        if method != "POST":
            return self._not_post(method, values)
        content_type = values.get(_H_CONTENT_TYPE)
        if content_type is None or _H_CONTENT_TYPE in repeated:
            return text_reply(
                415,
                "Unsupported Media Type: send application/json",
                note="no Content-Type header"
                if content_type is None
                else "the Content-Type header is sent twice",
            )
        is_json = self._json_types.get(content_type)
        if is_json is None:
            is_json = _remember(self._json_types, content_type, _is_json(content_type))
        if not is_json:
            return text_reply(
                415,
                "Unsupported Media Type: send application/json",
                note=f"Content-Type {_quoted(content_type)} is not application/json",
            )
        accept = values.get(_H_ACCEPT)
        if accept is not None:  # RFC 9110 §12.5.1: no Accept means any media type
            accepted = self._accepts.get(accept)
            if accepted is None:
                accepted = _remember(self._accepts, accept, accepts_json_and_sse(accept))
            if not accepted:
                return text_reply(
                    406,
                    "Not Acceptable: Accept must allow application/json and text/event-stream",
                    note=f"Accept {_quoted(accept)} does not allow both",
                )
        return None

    def _stream(
        self,
        values: dict[bytes, bytes],
        repeated: frozenset[bytes],
        scope: Scope,
        cors: bytes | None,
    ) -> Reply | StreamCall:
        """A legacy ``GET`` with a session id: its event stream, or why not."""
        verdict: Reply | StreamCall
        if not accepts_sse(values.get(_H_ACCEPT)):
            verdict = text_reply(406, "Not Acceptable: a GET stream is text/event-stream")
        elif _H_SESSION in repeated:
            verdict = text_reply(400, "Bad Request: a header is sent twice")
        else:
            principal_of = self._options.principal
            principal = "" if principal_of is None else principal_of(scope) or ""
            session = values[_H_SESSION].decode("latin-1")
            version = self._sessions.open(session, now=self._clock(), principal=principal)
            if version is None:
                verdict = text_reply(404, "Not Found: the session expired or was never opened")
            else:
                verdict = StreamCall(session, version, cors)
        if isinstance(verdict, Reply):
            verdict.cors = cors
        return verdict

    def _not_post(self, method: str, values: dict[bytes, bytes]) -> Reply:
        note = f"{_quoted(method)} is not POST"
        if method == "GET":
            version = self._text_of(values.get(_H_VERSION) or b"")
            legacy = not version or version in HANDSHAKE_VERSIONS
            if legacy and not accepts_sse(values.get(_H_ACCEPT)):
                return text_reply(
                    406, "Not Acceptable: a GET stream is text/event-stream", note=note
                )
            return text_reply(
                405, "Method Not Allowed: this server offers no GET stream", _ALLOW, note=note
            )
        if method == "DELETE":
            return text_reply(
                405,
                "Method Not Allowed: sessions end by themselves when they expire",
                _ALLOW,
                note=note,
            )
        return text_reply(405, "Method Not Allowed: use POST", _ALLOW, note=note)

    def _probe(self, name: str, scope: Scope) -> Probe | Reply:
        """A probe of this app (:mod:`~skills_core.http.probes`), or the reply refusing it."""
        values: dict[bytes, bytes] = {}
        repeated: set[bytes] = set()
        for key, value in scope["headers"]:
            if key in (_H_HOST, _H_ORIGIN):
                if key in values:
                    repeated.add(key)
                values[key] = value
        options = self._options
        host = values.get(_H_HOST)
        if host is None or _H_HOST in repeated:
            return text_reply(
                421, "Misdirected Request: no single Host header", note="a probe without one Host"
            )
        if not probe_allows_host(options, host.decode("latin-1")):
            return _host_refused(host)
        origin = values.get(_H_ORIGIN)
        if origin is not None and (
            _H_ORIGIN in repeated or not options.allows_origin(origin.decode("latin-1"))
        ):
            return _origin_refused(origin, _H_ORIGIN in repeated)
        method: str = scope["method"]
        if method not in _PROBE_METHODS:
            return text_reply(
                405,
                "Method Not Allowed: use GET",
                _ALLOW_GET,
                note=f"{_quoted(method)} is not GET",
            )
        return Probe(name)

    def _text_of(self, raw: bytes) -> str | None:
        """:func:`~skills_core.http.headers.decode_header_value` of ``raw``, remembered."""
        try:
            return self._decoded[raw]
        except KeyError:
            return _remember(self._decoded, raw, decode_header_value(raw))

    # -- rung 8 and the eras: the body --------------------------------------------------------------

    def body(self, head: Head, body: bytes, scope: Scope) -> Reply | Call:
        """The reply to a request whose headers passed, or the call to make for it."""
        event = parse_message(body)
        header_version = head.values.get(_H_VERSION)
        if header_version is not None:
            modern = self._text_of(header_version) not in HANDSHAKE_VERSIONS
        else:
            modern = type(event) is RequestReceived and request_era(event.params) is _MODERN
        if type(event) is InvalidMessage:
            reply = event.reply
            if reply is None:  # a notification with array params: refused, without an id
                reply = _WRITER.send_error(None, event.error.rpc_code, event.error.message)
            verdict: Reply | Call = Reply(400, reply)
        # parse_message has refused an empty body (-32700) and a posted response (-32600) already.
        elif not modern:
            verdict = self._legacy(head, event, scope)
        elif type(event) is RequestReceived:
            verdict = self._modern(head, event)
        else:
            verdict = Reply(202)  # HTTP-08: none are defined; accepted and dropped
        verdict.cors = head.cors
        if type(verdict) is Reply and type(event) is not InvalidMessage:
            verdict.method = event.method if type(event) is not CancelRequested else _CANCELLED
        return verdict

    def _modern(self, head: Head, event: RequestReceived) -> Reply | Call:
        request_id, method, params = event.id, event.method, event.params
        meta = params.get("_meta") if params is not None else None
        meta_version = _meta_version(params)
        if meta_version is None or not isinstance(meta, dict):
            return _rpc_error(
                400,
                request_id,
                ErrorCode.INVALID_PARAMS,
                f"Invalid params: _meta must carry {META_PROTOCOL_VERSION} (a string) and "
                f"{META_CLIENT_CAPABILITIES} (an object)",
            )
        if not isinstance(meta.get(META_CLIENT_CAPABILITIES), dict):
            return _rpc_error(
                400,
                request_id,
                ErrorCode.INVALID_PARAMS,
                f"Invalid params: _meta must carry {META_CLIENT_CAPABILITIES} (an object)",
            )
        values, repeated = head.values, head.repeated
        if repeated and (_H_VERSION in repeated or _H_METHOD in repeated or _H_NAME in repeated):
            return _mismatch(request_id, "Header mismatch: a routing header is sent twice")
        header_version = values.get(_H_VERSION)
        if header_version is None or self._text_of(header_version) != meta_version:
            return _mismatch(
                request_id,
                "Header mismatch: MCP-Protocol-Version must equal the protocolVersion in _meta",
            )
        header_method = values.get(_H_METHOD)
        if header_method is None or self._text_of(header_method) != method:
            return _mismatch(request_id, "Header mismatch: Mcp-Method must equal the method")
        named_by = _NAMED_BY.get(method)
        if named_by is not None:
            header_name = values.get(_H_NAME)
            value = params.get(named_by) if params is not None else None
            if header_name is None or self._text_of(header_name) != value:
                return _mismatch(
                    request_id, f"Header mismatch: Mcp-Name must equal params.{named_by}"
                )
        if meta_version not in SUPPORTED_MODERN_VERSIONS:
            return _rpc_error(
                400,
                request_id,
                ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": list(SUPPORTED_MODERN_VERSIONS), "requested": meta_version},
            )
        if method not in _MODERN_METHODS:
            return _rpc_error(
                404,
                request_id,
                ErrorCode.METHOD_NOT_FOUND,
                f"Method not found: {method[:100]!r} is not a method of protocol version "
                f"{meta_version} on this server",
            )
        return Call(request_id, method, params)

    def _legacy(
        self,
        head: Head,
        event: RequestReceived | NotificationReceived | CancelRequested,
        scope: Scope,
    ) -> Reply | Call:
        request_id = event.id if type(event) is RequestReceived else None
        initialize = type(event) is RequestReceived and event.method == Method.INITIALIZE
        values, repeated = head.values, head.repeated
        header_version = values.get(_H_VERSION)
        version = None if header_version is None else self._text_of(header_version)
        # initialize negotiates the version in its body (the answer names the one agreed on),
        # so a header on it routes the request and is otherwise not held against it.
        if version is not None and version not in SUPPORTED_LEGACY_VERSIONS and not initialize:
            return _rpc_error(
                400,
                request_id,
                ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": _SERVED_VERSIONS, "requested": version},
            )
        if _H_SESSION in repeated or _H_VERSION in repeated:
            return _rpc_error(
                400, request_id, ErrorCode.INVALID_REQUEST, "Bad Request: a header is sent twice"
            )
        principal_of = self._options.principal
        principal = "" if principal_of is None else principal_of(scope) or ""
        session_id = values.get(_H_SESSION)
        session_version = None
        if session_id is not None:
            session_version = self._sessions.open(
                session_id.decode("latin-1"), now=self._clock(), principal=principal
            )
            if session_version is None:
                reply = _rpc_error(
                    404,
                    request_id,
                    ErrorCode.INVALID_REQUEST,
                    "Session not found: it expired or was never opened here; initialize again",
                )
                reply.note = self._sessions.refusal(
                    session_id.decode("latin-1"), now=self._clock(), principal=principal
                )
                return reply
        if initialize:
            assert type(event) is RequestReceived
            if session_version is not None:
                return _rpc_error(
                    400,
                    request_id,
                    ErrorCode.INVALID_REQUEST,
                    "Invalid Request: this session is initialized already",
                )
            return Call(event.id, event.method, event.params, initialize=True, principal=principal)
        if session_version is None:
            return _rpc_error(
                400,
                request_id,
                ErrorCode.INVALID_REQUEST,
                "Bad Request: Mcp-Session-Id is required (send initialize first)",
            )
        if version is not None and version != session_version:
            return _rpc_error(
                400,
                request_id,
                ErrorCode.INVALID_REQUEST,
                f"Bad Request: MCP-Protocol-Version must be the session's version {session_version}",
            )
        if type(event) is not RequestReceived:
            return Reply(202)
        return Call(
            event.id,
            event.method,
            event.params,
            legacy_version=session_version,
            session=session_id.decode("latin-1") if session_id is not None else "",
        )

    # -- the answer -----------------------------------------------------------------------------

    def answered(
        self,
        call: Call,
        body: bytes,
        code: int | None,
        *,
        negotiated: str | None = None,
        nonce: bytes = b"",
    ) -> Reply:
        """The reply carrying the server's answer to ``call``.

        Args:
            call: What was asked.
            body: The response the server's answer was encoded to.
            code: Its error code, or None for a result.
            negotiated: For an ``initialize``: the ``protocolVersion`` its result names.
            nonce: For an ``initialize``: 16 random bytes, for the session id it opens.
        """
        if call.initialize:
            version = negotiated if code is None else None
            if version is None:
                reply = Reply(200, body)  # in-band, and no session for a failed initialize
            else:
                session_id = self._sessions.mint(
                    version,
                    expires=self._clock() + self._options.session_ttl,
                    nonce=nonce,
                    principal=call.principal,
                )
                reply = Reply(200, body, _JSON, ((_H_SESSION, session_id.encode("ascii")),))
        elif call.legacy_version is None:  # modern
            reply = Reply(404 if code == ErrorCode.METHOD_NOT_FOUND else 200, body)
        else:
            reply = Reply(200, body)
        reply.cors = call.cors
        reply.code = code
        return reply


def _quoted(value: str | bytes) -> str:
    """A header value or path as a log note quotes it (the log line escapes what it must)."""
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    return repr(text[:_QUOTED] + "..." if len(text) > _QUOTED else text)


def _host_refused(host: bytes) -> Reply:
    return text_reply(
        421,
        "Misdirected Request: this Host is not served here",
        note=f"the Host {_quoted(host)} is not on the allowed hosts",
    )


def _origin_refused(origin: bytes, repeated: bool) -> Reply:
    note = (
        "the Origin header is sent twice"
        if repeated
        else f"the Origin {_quoted(origin)} is not on the allowed origins"
    )
    return text_reply(403, "Forbidden: this Origin is not allowed", note=note)


_T = TypeVar("_T")


def _remember(table: dict[bytes, _T], key: bytes, value: _T) -> _T:
    """Put ``value`` in ``table`` (emptied first when full); return it."""
    if len(table) >= MEMO_LIMIT:
        table.clear()
    table[key] = value
    return value
