"""Streamable HTTP for a skills server: an ASGI 3 application, both protocol eras, standard library only.

Theory of operation
-------------------
ASGI is a calling convention, not a package (DESIGN.md decision 10): :class:`SkillsApp` is an
``async (scope, receive, send)`` callable that any ASGI server runs (uvicorn, hypercorn,
gunicorn with uvicorn workers). It serves one endpoint (``/mcp`` by default; under a ``root_path``
when mounted) and answers every HTTP exchange with one complete JSON answer: a skills server sends
no server-initiated messages and answers synchronously, so it never needs a stream
(http-transport.md §1; HTTP-17 allows JSON or SSE, the server's choice).

**The ladder.** Every request climbs the same rungs; the first that fails answers
(http-transport.md §2.3, §3.2; the numbers are the rows of §2.3):

1. the path is the endpoint, else 404 (HTTP-01);
2. ``Host`` is on the allow-list, else 421 (HTTP-04; the Python SDK's status, "misdirected");
3. an ``Origin``, when present, is on the allow-list, else 403 (HTTP-03). ``OPTIONS`` preflights
   are answered here, and only when CORS is configured;
4. a declared ``Content-Length`` over the cap is 413 before a byte is read (HTTP-05);
5. not ``POST``: 405 with ``Allow: POST`` (HTTP-02; legacy ``GET`` without an SSE ``Accept`` is 406,
   and legacy ``GET``/``DELETE`` are 405 too: see "Sessions" below);
6. ``Content-Type`` is not ``application/json``: 415; 7. ``Accept`` does not cover both
   ``application/json`` and ``text/event-stream``: 406 (HTTP-06; no ``Accept`` at all means
   "anything", RFC 9110 §12.5.1);
8. the body is read: over the cap while arriving (chunked) is 413, slower than the time bound is
   408, a client that goes away gets nothing (HTTP-19). It must be one JSON-RPC request or
   notification: bad JSON is 400/-32700, a batch, a response or a bad envelope 400/-32600, with id
   null (HTTP-07); a notification is 202 with an empty body (HTTP-08, HTTP-29).

Then the era (§3.3, HTTP-22): a ``MCP-Protocol-Version`` header naming a handshake version
(2024-11-05 .. 2025-11-25) is legacy, any other value modern; without the header, a body whose
``params._meta`` names a protocol version is modern, anything else legacy.

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

*Legacy* (2025-11-25; §3): ``initialize`` is answered by the server and its response carries a new
``Mcp-Session-Id``; every later request and notification must carry it (missing: 400, HTTP-24;
unknown, expired, forged or another principal's: 404, HTTP-25); a ``MCP-Protocol-Version`` header,
when sent, must be the session's version (400, HTTP-28). Answers, errors included, go in-band with
200 (HTTP-29); ``initialize`` on a live session is 400/-32600.

**Sessions** are self-contained (:mod:`skills_core.adapters._http_session`): the id carries the
negotiated version and an expiry under an HMAC, so any worker of any process sharing the key
checks it, and no client is pinned to a process. Such an id cannot be revoked before it expires
without state every worker shares, so ``DELETE`` is answered 405, which HTTP-26 allows ("2xx or
405") and clients tolerate (the TypeScript and Python SDKs, the conformance suite, which reports
the termination checks SKIPPED). A revocation list in the key file's directory was considered and
refused: it would be shared state after all, invisible to a second machine behind the same load
balancer, so a ``DELETE`` answered 2xx could leave a session alive elsewhere. Sessions are not
authentication (HTTP-42); when the embedding application authenticates, pass
``HttpOptions.principal`` and a session only works for the principal that opened it. There is no
``GET`` stream (HTTP-27: 405), as the server never speaks first.

**Pagination cursors** are signed by the server with its ``cursor_key``; give every worker the
same key (see :func:`derive_key`, :class:`AppConfig`) and a listing can alternate between workers.

**Security defaults** (http-transport.md §4): the ``Host`` allow-list defaults to the loopback
names (DNS-rebinding protection; pass ``allowed_hosts=None`` to switch it off, as for a server
behind a proxy that checks it), ``Origin`` must be listed when present (by default the loopback
origins, any port), no CORS headers unless ``cors=True``, a 4 MiB body cap (the Python SDK's),
30 s to receive a body, and no exception text in any answer: the server turns failures into
``-32603 Internal error``, and everything this module says is its own text. ``Authorization`` is
the embedding application's business (an ASGI middleware; see ``examples/http_auth.py``).

**Running it.** In code: ``SkillsApp(server, session_key=...)``. With an ASGI server that imports
by path, :func:`app_from_env` builds the app from environment variables (:class:`AppConfig`)::

    SKILLS_CORE_ROOTS=./skills SKILLS_CORE_CURSOR_KEY_FILE=./key \\
        uvicorn --factory skills_core.adapters.asgi:app_from_env --workers 4

``skills-core serve --http`` does exactly this with uvicorn. For an ASGI server without a factory
option (hypercorn, gunicorn with a uvicorn worker class), a one-line module of your own,
``app = app_from_env()``, gives it an app to import by path, with the same variables.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, TypeAlias, final

from skills_core.adapters._core import DEFAULT_DEFER_READS_OVER
from skills_core.adapters._http_session import SessionCodec
from skills_core.errors import LocalProtocolError
from skills_core.http_wire import decode_header_value
from skills_core.jsonrpc import (
    Answer,
    CancelRequested,
    ErrorObject,
    InvalidMessage,
    JsonRpcConnection,
    NotificationReceived,
    RequestId,
    RequestReceived,
    parse_message,
)
from skills_core.jsonvalue import JSONValue
from skills_core.server.handler import PendingRead, SkillsServer
from skills_core.spec import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    SUPPORTED_LEGACY_VERSIONS,
    SUPPORTED_MODERN_VERSIONS,
    ErrorCode,
    Method,
)

__all__ = [
    "DEFAULT_PATH",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_SESSION_TTL",
    "LOOPBACK_HOSTS",
    "LOOPBACK_ORIGINS",
    "HANDSHAKE_VERSIONS",
    "Scope",
    "Receive",
    "Send",
    "HttpOptions",
    "SkillsApp",
    "MIN_SECRET_BYTES",
    "derive_key",
    "read_key_file",
    "create_key_file",
    "AppConfig",
    "app_from_env",
]

Scope: TypeAlias = MutableMapping[str, Any]
Message: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]

#: The endpoint's path when none is given.
DEFAULT_PATH: Final = "/mcp"
#: Largest request body: 4 MiB, the Python SDK's cap. A request is small (a URI, a cursor); the
#: largest legitimate one is far below this.
DEFAULT_MAX_BODY_BYTES: Final = 4 << 20
#: Seconds a client has to send a whole body once its headers arrived (a slow body is cut off).
DEFAULT_BODY_TIMEOUT: Final = 30.0
#: Seconds a legacy session id stays valid: a day. After that the client gets 404 and, as
#: 2025-11-25 requires, initializes again.
DEFAULT_SESSION_TTL: Final = 24 * 3600
#: Host names allowed by default, any port (DNS-rebinding protection for a loopback server).
LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")
#: Origins allowed by default: pages served from the loopback names, any port.
LOOPBACK_ORIGINS: Final = ("http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*")
#: Versions that open a session with ``initialize``; a header naming one routes to legacy (§3.3).
HANDSHAKE_VERSIONS: Final = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})

# --- the options ------------------------------------------------------------------------------


def _host_and_port(authority: str) -> tuple[str, str]:
    """``("example.com", "8080")`` from ``"Example.com:8080"``; the port is ``""`` when absent."""
    authority = authority.lower()
    if authority.startswith("["):  # an IPv6 literal keeps its brackets
        end = authority.find("]")
        host, rest = authority[: end + 1], authority[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else ""
    host, colon, port = authority.rpartition(":")
    return (host, port) if colon else (authority, "")


@final
@dataclass(frozen=True, slots=True)
class _HostRules:
    """An allow-list: host names allowed on any port, and exact ``host:port`` pairs."""

    any_port: frozenset[str]
    exact: frozenset[str]

    @classmethod
    def parse(cls, patterns: Sequence[str]) -> _HostRules:
        any_port: set[str] = set()
        exact: set[str] = set()
        for pattern in patterns:
            host, port = _host_and_port(pattern.strip())
            if not host:
                raise ValueError(f"not a host name: {pattern!r}")
            if port in ("", "*"):
                any_port.add(host)
            else:
                exact.add(f"{host}:{port}")
        return cls(frozenset(any_port), frozenset(exact))

    def allows(self, authority: str) -> bool:
        host, port = _host_and_port(authority)
        return host in self.any_port or f"{host}:{port}" in self.exact


def _origin_authority(origin: str) -> tuple[str, str] | None:
    scheme, sep, authority = origin.lower().partition("://")
    if not sep or scheme not in ("http", "https") or not authority or "/" in authority:
        return None
    return scheme, authority


@final
@dataclass(frozen=True, slots=True)
class _OriginRules:
    """Origins allowed: ``scheme://host`` on any port, and exact ``scheme://host:port``."""

    any_port: frozenset[tuple[str, str]]
    exact: frozenset[str]

    @classmethod
    def parse(cls, patterns: Sequence[str]) -> _OriginRules:
        any_port: set[tuple[str, str]] = set()
        exact: set[str] = set()
        for pattern in patterns:
            parts = _origin_authority(pattern.strip())
            if parts is None:
                raise ValueError(f"not an origin (scheme://host[:port]): {pattern!r}")
            scheme, authority = parts
            host, port = _host_and_port(authority)
            if port == "*":
                any_port.add((scheme, host))
            else:
                exact.add(f"{scheme}://{authority}")
        return cls(frozenset(any_port), frozenset(exact))

    def allows(self, origin: str) -> bool:
        parts = _origin_authority(origin)
        if parts is None:  # "null", garbage: never allowed
            return False
        scheme, authority = parts
        if f"{scheme}://{authority}" in self.exact:
            return True
        return (scheme, _host_and_port(authority)[0]) in self.any_port


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HttpOptions:
    """How a :class:`SkillsApp` serves HTTP. Every default is the safe one.

    Attributes:
        path: The endpoint's path (under the ``root_path`` of a mount).
        allowed_hosts: ``Host`` values accepted: ``"name"`` or ``"name:*"`` for any port,
            ``"name:port"`` for one; ``None`` accepts any host (only behind a proxy that checks).
        allowed_origins: ``Origin`` values accepted when a request carries one:
            ``"scheme://host:*"`` for any port, ``"scheme://host[:port]"`` exactly. A request
            without ``Origin`` (any non-browser client) is not affected.
        cors: Answer CORS preflights and add CORS headers for allowed origins (for browser
            clients on other origins).
        max_body_bytes: Largest request body, checked before and while reading.
        body_timeout: Seconds to receive a whole body.
        session_ttl: Seconds a legacy session id stays valid.
        principal: ``scope -> name`` of the authenticated caller (set by your auth middleware),
            binding legacy sessions to whoever opened them; ``None`` when there is no auth.
    """

    path: str = DEFAULT_PATH
    allowed_hosts: tuple[str, ...] | None = LOOPBACK_HOSTS
    allowed_origins: tuple[str, ...] = LOOPBACK_ORIGINS
    cors: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    session_ttl: int = DEFAULT_SESSION_TTL
    principal: Callable[[Scope], str | None] | None = None
    _hosts: _HostRules | None = field(init=False, repr=False, compare=False)
    _origins: _OriginRules = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the settings and compile the allow-lists.

        Raises:
            ValueError: a setting is out of range, or a host or origin pattern is malformed.
        """
        if not self.path.startswith("/") or any(c in self.path for c in "?#"):
            raise ValueError(f"path must start with '/' and hold no query: {self.path!r}")
        if self.max_body_bytes < 1 or self.body_timeout <= 0 or self.session_ttl < 1:
            raise ValueError("max_body_bytes, body_timeout and session_ttl must be positive")
        hosts = None if self.allowed_hosts is None else _HostRules.parse(self.allowed_hosts)
        object.__setattr__(self, "_hosts", hosts)
        object.__setattr__(self, "_origins", _OriginRules.parse(self.allowed_origins))


# --- replies ----------------------------------------------------------------------------------

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

_CORS_ALLOW_HEADERS: Final = (
    b"content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name, "
    b"mcp-session-id, last-event-id"
)


@final
@dataclass(frozen=True, slots=True)
class _Reply:
    status: int
    body: bytes | _Deferred = b""
    content_type: bytes = _JSON
    headers: tuple[tuple[bytes, bytes], ...] = ()


def _text(status: int, message: str, *headers: tuple[bytes, bytes]) -> _Reply:
    return _Reply(status, message.encode("utf-8") + b"\n", _TEXT, headers)


#: Encodes responses; it sends nothing by itself and keeps no state for responses.
_WRITER: Final = JsonRpcConnection()


def _rpc_error(
    status: int,
    request_id: RequestId | None,
    code: int,
    message: str,
    data: JSONValue = None,
) -> _Reply:
    return _Reply(status, _WRITER.send_error(request_id, code, message, data))


def _mismatch(request_id: RequestId, message: str) -> _Reply:
    return _rpc_error(400, request_id, ErrorCode.HEADER_MISMATCH, message)


# --- reading the request ----------------------------------------------------------------------


def _media_types(values: bytes) -> set[str]:
    return {item.split(";", 1)[0].strip().lower() for item in values.decode("latin-1").split(",")}


def _accepts_json_and_sse(accept: bytes | None) -> bool:
    if accept is None:  # RFC 9110 §12.5.1: no Accept means any media type
        return True
    types = _media_types(accept)
    anything = "*/*" in types
    json_ok = anything or "application/json" in types or "application/*" in types
    sse_ok = anything or "text/event-stream" in types or "text/*" in types
    return json_ok and sse_ok


def _accepts_sse(accept: bytes | None) -> bool:
    if accept is None:
        return True
    types = _media_types(accept)
    return bool(types & {"text/event-stream", "text/*", "*/*"})


def _is_json(content_type: bytes | None) -> bool:
    return (
        content_type is not None
        and content_type.split(b";", 1)[0].strip().lower() == b"application/json"
    )


# --- the one call into the server ---------------------------------------------------------------


def _answer(
    server: SkillsServer,
    legacy_version: str | None,
    request_id: RequestId,
    method: str,
    params: dict[str, JSONValue] | None,
) -> tuple[bytes | _Deferred, int | None, str | None]:
    """Ask the server; return (the response, the error code or None, the legacy version after).

    The one call into the server: its one request path answers ``(method, params)`` with a value,
    in the legacy state a signed session id restored. A read of a large file comes back as a
    :class:`_Deferred`, which :meth:`SkillsApp.__call__` completes in a worker thread so that the
    event loop keeps serving other requests meanwhile.
    """
    connection = server.connection(legacy_version=legacy_version)
    answer = connection.answer(method, params, defer_reads_over=DEFAULT_DEFER_READS_OVER)
    if isinstance(answer, PendingRead):
        return _Deferred(request_id, answer), None, connection.legacy_version
    body, code = _encode(request_id, answer)
    return body, code, connection.legacy_version


def _encode(request_id: RequestId, answer: Answer) -> tuple[bytes, int | None]:
    """The response bytes of ``answer``, and its error code (None for a result)."""
    try:
        body = _WRITER.send_answer(request_id, answer, check_keys=False)
    except LocalProtocolError:  # a result that cannot be written (over the message cap)
        code = ErrorCode.INTERNAL_ERROR
        return _WRITER.send_error(request_id, code, "Internal error"), code
    return body, answer.code if isinstance(answer, ErrorObject) else None


@final
@dataclass(frozen=True, slots=True)
class _Deferred:
    """A ``resources/read`` answer still to be read and encoded, off the event loop."""

    request_id: RequestId
    read: PendingRead

    def complete(self) -> bytes:
        """Read, encode and frame the answer (blocking: call it in a worker thread)."""
        return _encode(self.request_id, self.read.complete())[0]


async def _in_worker_thread(work: Callable[[], bytes]) -> bytes:
    """Run ``work`` in a worker thread of the running event loop (asyncio, or trio)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not asyncio: trio (hypercorn's trio worker)
        import trio  # noqa: PLC0415 - only under trio, which is then installed

        return await trio.to_thread.run_sync(work)
    return await asyncio.to_thread(work)


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

# --- the application ----------------------------------------------------------------------------


class _Request:
    """The headers of one HTTP request that the ladder looks at, read once."""

    __slots__ = ("repeated", "values")

    def __init__(self, raw: Sequence[tuple[bytes, bytes]]) -> None:
        values: dict[bytes, bytes] = {}
        repeated: set[bytes] = set()
        for name, value in raw:
            earlier = values.get(name)
            if earlier is None:
                values[name] = value
            elif name in _SINGLE:
                repeated.add(name)
            else:  # a list-valued field sent as several lines (Accept): join them
                values[name] = earlier + b"," + value
        self.values = values
        self.repeated = repeated

    def get(self, name: bytes) -> bytes | None:
        return self.values.get(name)


@final
class SkillsApp:
    """An ASGI 3 application serving a :class:`~skills_core.server.SkillsServer` over HTTP.

    Example:
        >>> import os
        >>> from skills_core.server import server_from_roots
        >>> secret = os.urandom(32)
        >>> server = server_from_roots(["."], cursor_key=derive_key(secret, "cursor"))  # doctest: +SKIP
        >>> app = SkillsApp(server, session_key=derive_key(secret, "session"))  # doctest: +SKIP
    """

    __slots__ = ("_deadlines", "_endpoint", "_options", "_server", "_sessions")

    def __init__(
        self, server: SkillsServer, *, session_key: bytes, options: HttpOptions | None = None
    ) -> None:
        """Serve ``server``.

        Args:
            server: The skills server; its ``cursor_key`` must be the same in every worker.
            session_key: Signs legacy session ids; the same in every worker (at least 16 bytes).
            options: HTTP settings; the defaults are the safe ones.

        Raises:
            ValueError: ``session_key`` is too short.
        """
        self._server = server
        self._sessions = SessionCodec(session_key)
        self._options = options if options is not None else HttpOptions()
        self._endpoint = self._options.path
        self._deadlines = _Deadlines(self._options.body_timeout)

    @property
    def server(self) -> SkillsServer:
        """The skills server."""
        return self._server

    @property
    def options(self) -> HttpOptions:
        """The HTTP settings."""
        return self._options

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point: ``http`` and ``lifespan`` scopes (a WebSocket is refused)."""
        kind = scope["type"]
        if kind == "http":
            request = _Request(scope["headers"])
            reply, cors = await self._http(scope, request, receive)
            if reply is not None:
                if isinstance(reply.body, _Deferred):  # a large file: read off the event loop
                    reply = replace(reply, body=await _in_worker_thread(reply.body.complete))
                await _send_reply(send, reply, cors)
        elif kind == "lifespan":
            await _lifespan(receive, send)
        elif kind == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1003})

    async def _http(
        self, scope: Scope, request: _Request, receive: Receive
    ) -> tuple[_Reply | None, bytes | None]:
        """The reply (None when the client left) and the origin to name in CORS headers."""
        options = self._options
        path: str = scope["path"]
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        if path != self._endpoint:
            return _text(404, f"Not Found: the MCP endpoint is {root}{self._endpoint}"), None
        hosts = options._hosts
        if hosts is not None:
            host = request.get(_H_HOST)
            if host is None or _H_HOST in request.repeated:
                return _text(421, "Misdirected Request: no single Host header"), None
            if not hosts.allows(host.decode("latin-1")):
                return _text(421, "Misdirected Request: this Host is not served here"), None
        cors: bytes | None = None
        origin = request.get(_H_ORIGIN)
        if origin is not None:
            if _H_ORIGIN in request.repeated or not options._origins.allows(
                origin.decode("latin-1")
            ):
                return _text(403, "Forbidden: this Origin is not allowed"), None
            if options.cors:
                cors = origin
        method: str = scope["method"]
        if method == "OPTIONS" and cors is not None:
            return _Reply(204, b"", _TEXT, _PREFLIGHT), cors
        length = request.get(_H_CONTENT_LENGTH)
        if length is not None and (not length.isdigit() or int(length) > options.max_body_bytes):
            if length.isdigit():
                return _text(413, "Content Too Large: the body is over the limit"), cors
            return _text(400, "Bad Request: Content-Length is not a number"), cors
        if method != "POST":
            return self._not_post(method, request), cors
        if not _is_json(request.get(_H_CONTENT_TYPE)) or _H_CONTENT_TYPE in request.repeated:
            return _text(415, "Unsupported Media Type: send application/json"), cors
        if not _accepts_json_and_sse(request.get(_H_ACCEPT)):
            return (
                _text(
                    406, "Not Acceptable: Accept must allow application/json and text/event-stream"
                ),
                cors,
            )
        body = await _read_body(
            receive, options.max_body_bytes, self._deadlines, options.body_timeout
        )
        if not isinstance(body, bytes):
            return body, cors
        return self._post(scope, request, body), cors

    def _not_post(self, method: str, request: _Request) -> _Reply:
        if method == "GET":
            version = decode_header_value(request.get(_H_VERSION) or b"")
            legacy = not version or version in HANDSHAKE_VERSIONS
            if legacy and not _accepts_sse(request.get(_H_ACCEPT)):
                return _text(406, "Not Acceptable: a GET stream is text/event-stream")
            return _text(405, "Method Not Allowed: this server offers no GET stream", _ALLOW)
        if method == "DELETE":
            return _text(
                405,
                "Method Not Allowed: sessions end by themselves when they expire",
                _ALLOW,
            )
        return _text(405, "Method Not Allowed: use POST", _ALLOW)

    def _post(self, scope: Scope, request: _Request, body: bytes) -> _Reply:
        event = parse_message(body)
        header_version = request.get(_H_VERSION)
        if header_version is not None:
            version = decode_header_value(header_version)
            modern = version not in HANDSHAKE_VERSIONS
        else:
            modern = type(event) is RequestReceived and _meta_version(event.params) is not None
        if type(event) is InvalidMessage:
            reply = event.reply
            if reply is None:  # a notification with array params: refused, without an id
                reply = _WRITER.send_error(None, event.error.rpc_code, event.error.message)
            return _Reply(400, reply)
        # parse_message has refused an empty body (-32700) and a posted response (-32600) already.
        if modern:
            if type(event) is not RequestReceived:
                return _Reply(202)  # HTTP-08: none are defined; accepted and dropped
            return self._modern(request, event)
        return self._legacy(scope, request, event)

    # -- modern ---------------------------------------------------------------------------------

    def _modern(self, request: _Request, event: RequestReceived) -> _Reply:
        request_id, method, params = event.id, event.method, event.params
        meta_version = _meta_version(params)
        meta = params.get("_meta") if params is not None else None
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
        repeated = request.repeated
        if _H_VERSION in repeated or _H_METHOD in repeated or _H_NAME in repeated:
            return _mismatch(request_id, "Header mismatch: a routing header is sent twice")
        header_version = request.get(_H_VERSION)
        if header_version is None or decode_header_value(header_version) != meta_version:
            return _mismatch(
                request_id,
                "Header mismatch: MCP-Protocol-Version must equal the protocolVersion in _meta",
            )
        header_method = request.get(_H_METHOD)
        if header_method is None or decode_header_value(header_method) != method:
            return _mismatch(request_id, "Header mismatch: Mcp-Method must equal the method")
        named_by = _NAMED_BY.get(method)
        if named_by is not None:
            header_name = request.get(_H_NAME)
            value = params.get(named_by) if params is not None else None
            if header_name is None or decode_header_value(header_name) != value:
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
        body, code, _ = _answer(self._server, None, request_id, method, params)
        return _Reply(404 if code == ErrorCode.METHOD_NOT_FOUND else 200, body)

    # -- legacy ---------------------------------------------------------------------------------

    def _legacy(
        self,
        scope: Scope,
        request: _Request,
        event: RequestReceived | NotificationReceived | CancelRequested,
    ) -> _Reply:
        request_id = event.id if type(event) is RequestReceived else None
        initialize = type(event) is RequestReceived and event.method == Method.INITIALIZE
        header_version = request.get(_H_VERSION)
        version = None if header_version is None else decode_header_value(header_version)
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
        if _H_SESSION in request.repeated or _H_VERSION in request.repeated:
            return _rpc_error(
                400, request_id, ErrorCode.INVALID_REQUEST, "Bad Request: a header is sent twice"
            )
        principal = self._principal(scope)
        session_id = request.get(_H_SESSION)
        session_version = None
        if session_id is not None:
            session_version = self._sessions.open(
                session_id.decode("latin-1"), now=int(time.time()), principal=principal
            )
            if session_version is None:
                return _rpc_error(
                    404,
                    request_id,
                    ErrorCode.INVALID_REQUEST,
                    "Session not found: it expired or was never opened here; initialize again",
                )
        if initialize:
            assert type(event) is RequestReceived
            if session_version is not None:
                return _rpc_error(
                    400,
                    request_id,
                    ErrorCode.INVALID_REQUEST,
                    "Invalid Request: this session is initialized already",
                )
            return self._initialize(event, principal)
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
            return _Reply(202)
        body, _, _ = _answer(self._server, session_version, event.id, event.method, event.params)
        return _Reply(200, body)

    def _initialize(self, event: RequestReceived, principal: str) -> _Reply:
        body, code, negotiated = _answer(self._server, None, event.id, event.method, event.params)
        if code is not None or negotiated is None:
            return _Reply(200, body)  # in-band, and no session for a failed initialize
        session_id = self._sessions.mint(
            negotiated,
            expires=int(time.time()) + self._options.session_ttl,
            nonce=os.urandom(16),
            principal=principal,
        )
        return _Reply(200, body, _JSON, ((_H_SESSION, session_id.encode("ascii")),))

    def _principal(self, scope: Scope) -> str:
        principal_of = self._options.principal
        if principal_of is None:
            return ""
        return principal_of(scope) or ""


def _meta_version(params: dict[str, JSONValue] | None) -> str | None:
    """``params._meta`` protocolVersion when it is a string, else None."""
    if params is None:
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return None
    version = meta.get(META_PROTOCOL_VERSION)
    return version if isinstance(version, str) else None


_PREFLIGHT: Final = (
    (b"access-control-allow-methods", b"POST"),
    (b"access-control-allow-headers", _CORS_ALLOW_HEADERS),
    (b"access-control-max-age", b"600"),
)


async def _send_reply(send: Send, reply: _Reply, cors: bytes | None) -> None:
    assert isinstance(reply.body, bytes)  # a deferred read is completed before it is sent
    headers = [
        (b"content-type", reply.content_type),
        (b"content-length", str(len(reply.body)).encode("ascii")),
        *reply.headers,
    ]
    if cors is not None:
        headers += [
            (b"access-control-allow-origin", cors),
            (b"access-control-expose-headers", b"mcp-session-id"),
            (b"vary", b"origin"),
        ]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})


_TOO_SLOW: Final = "Request Timeout: the body did not arrive in time"


@final
class _Deadlines:
    """Body deadlines under asyncio: one timer per event loop, not one per request.

    ``asyncio.timeout`` schedules and cancels a timer for every request, which costs as much as
    answering a small request (6-12 µs here). Reading a body is a short wait almost always (it
    came with the headers), so instead each waiting task is put in a table with its deadline, and
    one sweep per event loop, every quarter of the timeout (at most a second), cancels the tasks
    past theirs. :meth:`read` turns that cancellation, and only that one, into a 408.
    """

    __slots__ = ("_expired", "_loop", "_sweep_every", "_sweeping", "_timeout", "_waiting")

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._sweep_every = min(timeout / 4, 1.0)
        self._waiting: dict[asyncio.Task[Any], float] = {}
        self._expired: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sweeping = False

    async def read(
        self, loop: asyncio.AbstractEventLoop, receive: Receive, cap: int
    ) -> bytes | _Reply | None:
        task = asyncio.current_task(loop)
        assert task is not None
        if loop is not self._loop:  # a new event loop (tests run several): start afresh
            self._loop, self._sweeping = loop, False
            self._waiting.clear()
            self._expired.clear()
        self._waiting[task] = loop.time() + self._timeout
        if not self._sweeping:
            self._sweeping = True
            loop.call_later(self._sweep_every, self._sweep, loop)
        try:
            return await _receive_all(receive, cap)
        except asyncio.CancelledError:
            if task not in self._expired:
                raise  # the ASGI server's cancellation, not ours
            task.uncancel()
            return _text(408, _TOO_SLOW)
        finally:
            del self._waiting[task]
            self._expired.discard(task)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        if loop is not self._loop:
            return
        now = loop.time()
        for task, deadline in self._waiting.items():
            if deadline <= now and task not in self._expired:
                self._expired.add(task)
                task.cancel()
        if self._waiting:
            loop.call_later(self._sweep_every, self._sweep, loop)
        else:
            self._sweeping = False


async def _read_body(
    receive: Receive, cap: int, deadlines: _Deadlines, timeout: float
) -> bytes | _Reply | None:
    """The whole body; a 413/408 reply when it is over ``cap`` or slow; None if the client left."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio: trio (hypercorn's trio worker)
        import trio  # noqa: PLC0415 - only under trio, which is then installed

        with trio.move_on_after(timeout):
            return await _receive_all(receive, cap)
        return _text(408, _TOO_SLOW)
    return await deadlines.read(loop, receive, cap)


async def _receive_all(receive: Receive, cap: int) -> bytes | _Reply | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # http.disconnect: nobody is left to answer
            return None
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            return _text(413, "Content Too Large: the body is over the limit")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _lifespan(receive: Receive, send: Send) -> None:
    # Nothing to start or stop: the server is built before the app, and holds no resources to
    # release. Acknowledging both lets an ASGI server that insists on lifespan run the app.
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


# --- keys -------------------------------------------------------------------------------------

#: Shortest shared secret accepted, in bytes (the generated ones are 64 hex characters).
MIN_SECRET_BYTES: Final = 32


def derive_key(secret: bytes, purpose: str) -> bytes:
    """A key for one purpose (``"cursor"``, ``"session"``) from the secret all workers share.

    Args:
        secret: The shared secret (from a key file or an environment variable).
        purpose: What the key signs; different purposes give independent keys.

    Returns:
        32 bytes.
    """
    return hmac.new(secret, b"skills-core/" + purpose.encode("utf-8"), hashlib.sha256).digest()


def _checked_secret(data: bytes, where: str) -> bytes:
    secret = data.strip()
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(
            f"{where}: the key must be at least {MIN_SECRET_BYTES} bytes "
            "(e.g. 64 hex characters from `python -c 'import secrets; print(secrets.token_hex(32))'`)"
        )
    return secret


def read_key_file(path: str) -> bytes:
    """The shared secret stored in ``path`` (surrounding whitespace ignored).

    Raises:
        OSError: the file cannot be read.
        ValueError: it holds fewer than :data:`MIN_SECRET_BYTES` bytes.
    """
    with open(path, "rb") as file:
        return _checked_secret(file.read(4096), path)


def create_key_file(path: str) -> bytes:
    """Create ``path`` (mode 0600, never over an existing file) holding a new secret; return it.

    Raises:
        FileExistsError: ``path`` exists (read it with :func:`read_key_file` instead).
        OSError: it cannot be created.
    """
    secret = os.urandom(32).hex().encode("ascii")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(secret + b"\n")
    return secret


# --- configuration from the environment (for ASGI servers that import an app by path) ---------

_ENV_PREFIX: Final = "SKILLS_CORE_"


def _split(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class AppConfig:
    """Everything :func:`app_from_env` needs, and its form as environment variables.

    ``skills-core serve --http`` fills one from its options and hands it to each worker through
    :meth:`to_environ`; a hypercorn or gunicorn deployment sets the same variables by hand:

    ================================  ===========================================================
    ``SKILLS_CORE_ROOTS``             folders of skills, separated by ``os.pathsep`` (required)
    ``SKILLS_CORE_CURSOR_KEY``        the shared secret itself, or:
    ``SKILLS_CORE_CURSOR_KEY_FILE``   a file holding it (one of the two is required)
    ``SKILLS_CORE_HTTP_PATH``         the endpoint (default ``/mcp``)
    ``SKILLS_CORE_ALLOWED_HOSTS``     comma-separated; ``*`` for any (default: loopback names)
    ``SKILLS_CORE_ALLOWED_ORIGINS``   comma-separated (default: loopback origins)
    ``SKILLS_CORE_CORS``              ``1`` to answer CORS for the allowed origins
    ``SKILLS_CORE_PAGE_SIZE``         entries per page (default 50)
    ``SKILLS_CORE_TTL_MS``            ``ttlMs`` of cacheable results (default 300000)
    ``SKILLS_CORE_NO_DIRECTORY_READ`` ``1`` to leave ``resources/directory/read`` out
    ``SKILLS_CORE_MAX_BODY_BYTES``    largest request body (default 4 MiB)
    ``SKILLS_CORE_BODY_TIMEOUT``      seconds to receive a body (default 30)
    ``SKILLS_CORE_INCLUDE_HIDDEN``    ``1`` to publish hidden files and folders too
    ``SKILLS_CORE_EXCLUDE``           globs of paths not to publish, one per line
    ``SKILLS_CORE_INDEX``             the digest index file to start warm from (shared by workers)
    ================================  ===========================================================

    Every worker must get the same secret: it signs cursors and session ids.
    """

    roots: tuple[str, ...]
    secret: bytes | None = None
    key_file: str | None = None
    path: str = DEFAULT_PATH
    allowed_hosts: tuple[str, ...] | None = LOOPBACK_HOSTS
    allowed_origins: tuple[str, ...] = LOOPBACK_ORIGINS
    cors: bool = False
    page_size: int | None = None
    ttl_ms: int | None = None
    directory_read: bool = True
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    include_hidden: bool = False
    exclude: tuple[str, ...] = ()
    index: str | None = None

    def to_environ(self) -> dict[str, str]:
        """The environment variables that make :meth:`from_environ` return this config."""
        env = {
            "ROOTS": os.pathsep.join(self.roots),
            "HTTP_PATH": self.path,
            "ALLOWED_HOSTS": "*" if self.allowed_hosts is None else ",".join(self.allowed_hosts),
            "ALLOWED_ORIGINS": ",".join(self.allowed_origins),
            "CORS": "1" if self.cors else "",
            "NO_DIRECTORY_READ": "" if self.directory_read else "1",
            "PAGE_SIZE": "" if self.page_size is None else str(self.page_size),
            "TTL_MS": "" if self.ttl_ms is None else str(self.ttl_ms),
            "CURSOR_KEY": "" if self.secret is None else self.secret.decode("latin-1"),
            "CURSOR_KEY_FILE": self.key_file or "",
            "MAX_BODY_BYTES": str(self.max_body_bytes),
            "BODY_TIMEOUT": str(self.body_timeout),
            "INCLUDE_HIDDEN": "1" if self.include_hidden else "",
            "EXCLUDE": "\n".join(self.exclude),
            "INDEX": self.index or "",
        }
        return {_ENV_PREFIX + name: value for name, value in env.items()}

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> AppConfig:
        """Read the variables in the table above.

        Raises:
            ValueError: a variable is missing or malformed (the message names it).
        """

        def get(name: str) -> str:
            return environ.get(_ENV_PREFIX + name, "").strip()

        roots = tuple(root for root in get("ROOTS").split(os.pathsep) if root)
        if not roots:
            raise ValueError(f"set {_ENV_PREFIX}ROOTS to the folders of skills to serve")
        secret_text, key_file = get("CURSOR_KEY"), get("CURSOR_KEY_FILE")
        if not secret_text and not key_file:
            raise ValueError(
                f"set {_ENV_PREFIX}CURSOR_KEY or {_ENV_PREFIX}CURSOR_KEY_FILE: every worker must "
                "sign cursors and sessions with the same secret"
            )
        hosts = get("ALLOWED_HOSTS")
        origins = get("ALLOWED_ORIGINS")
        return cls(
            roots=roots,
            secret=_checked_secret(secret_text.encode("latin-1"), _ENV_PREFIX + "CURSOR_KEY")
            if secret_text
            else None,
            key_file=key_file or None,
            path=get("HTTP_PATH") or DEFAULT_PATH,
            allowed_hosts=LOOPBACK_HOSTS if not hosts else None if hosts == "*" else _split(hosts),
            allowed_origins=_split(origins) if origins else LOOPBACK_ORIGINS,
            cors=get("CORS") == "1",
            page_size=_env_int(get("PAGE_SIZE"), "PAGE_SIZE"),
            ttl_ms=_env_int(get("TTL_MS"), "TTL_MS"),
            directory_read=get("NO_DIRECTORY_READ") != "1",
            max_body_bytes=_env_int(get("MAX_BODY_BYTES"), "MAX_BODY_BYTES")
            or DEFAULT_MAX_BODY_BYTES,
            body_timeout=_env_seconds(get("BODY_TIMEOUT"), "BODY_TIMEOUT"),
            include_hidden=get("INCLUDE_HIDDEN") == "1",
            exclude=tuple(glob for glob in get("EXCLUDE").split("\n") if glob),
            index=get("INDEX") or None,
        )

    def build(self) -> SkillsApp:
        """Scan the roots and make the app.

        Raises:
            OSError: a root or the key file cannot be read.
            ValueError: a setting is out of range.
        """
        from skills_core.server import ServerOptions, server_from_roots  # noqa: PLC0415

        secret = self.secret if self.secret is not None else read_key_file(str(self.key_file))
        settings: dict[str, Any] = {"directory_read": self.directory_read}
        if self.page_size is not None:
            settings["page_size"] = self.page_size
        if self.ttl_ms is not None:
            settings["ttl_ms"] = self.ttl_ms
        server = server_from_roots(
            list(self.roots),
            cursor_key=derive_key(secret, "cursor"),
            options=ServerOptions(**settings),
            include_hidden=self.include_hidden,
            exclude=self.exclude,
            index=self.index,
        )
        options = HttpOptions(
            path=self.path,
            allowed_hosts=self.allowed_hosts,
            allowed_origins=self.allowed_origins,
            cors=self.cors,
            max_body_bytes=self.max_body_bytes,
            body_timeout=self.body_timeout,
        )
        return SkillsApp(server, session_key=derive_key(secret, "session"), options=options)


def _env_int(text: str, name: str) -> int | None:
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{_ENV_PREFIX}{name} must be a whole number, not {text!r}") from None


def _env_seconds(text: str, name: str) -> float:
    if not text:
        return DEFAULT_BODY_TIMEOUT
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{_ENV_PREFIX}{name} must be a number of seconds, not {text!r}") from None


def app_from_env() -> SkillsApp:
    """The app that :class:`AppConfig` describes in ``os.environ`` (an ASGI factory).

    For ``uvicorn --factory skills_core.adapters.asgi:app_from_env``, or ``app = app_from_env()``
    in a module of your own for servers that import an app object; see :class:`AppConfig`.

    Raises:
        ValueError: a variable is missing or malformed.
        OSError: a root or the key file cannot be read.
    """
    return AppConfig.from_environ(os.environ).build()
