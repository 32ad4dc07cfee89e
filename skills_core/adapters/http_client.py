"""HTTP client adapter: a host's connection to an MCP server over Streamable HTTP, both eras.

Theory of operation: :class:`HttpClient` is one more requester behind the host's effect pump.
Called as ``client(method, params)`` it is the pump's ``send`` itself
(``sc.pump_async(host, effects, {"docs": client})``), each request bounded by the ``timeout`` it
was made with; ``request(method, params, timeout=...)`` takes its own bound (what
:func:`~skills_core.host.driver.carry_out` uses). Either returns the result or raises
:class:`~skills_core.errors.JsonRpcError` / :class:`~skills_core.errors.TransportError`, exactly
as the stdio clients do, and
``negotiate(...)`` settles the era the way HTTP signals it (docs/requirements.md#http-client rule 6), which
:func:`~skills_core.host.driver.handshake` asks it to do. Every decision about headers,
statuses, bodies, redirects and eras is made by the pure :mod:`skills_core.http`; this module
only moves bytes with httpx2 and keeps time with anyio, so it runs under asyncio and trio alike.
It is the only module that imports httpx2 (the ``http-client`` extra).

One message is one POST. The response is streamed, never buffered whole: a ``Content-Length`` over
the message cap is refused before the body is read, a body is abandoned the moment it passes the
cap, and an event stream is read only until the response to the request arrives (then the
connection is closed). Each request is bounded by its ``timeout`` from first byte sent to response
received; connecting, and every read, by their own timeouts. Redirects: same-origin 307/308 only.

Eras. Modern (2026-07-28): every request carries ``_meta`` (the host adds it) and headers derived
from it; -32022 with a version we speak is retried once with it (HTTP-35); a timed-out request is
cancelled by closing its stream (HTTP-38). Legacy (2025-11-25): ``initialize`` (its response's
``Mcp-Session-Id`` kept), ``notifications/initialized``, then the session id and negotiated
version on every request; a 404 to a request carrying the session id means the session is gone:
initialize again and retry once (HTTP-37); a timed-out request gets ``notifications/cancelled``
(HTTP-38); closing sends DELETE (any answer, 405 included, is fine). Negotiation (unpinned): probe
with ``server/discover``; :func:`~skills_core.http.eras.classify_probe` decides; the verdict is kept
per origin in an :class:`~skills_core.http.eras.EraCache` when one is given (HTTP-36).

Change notifications (PUSH-03, PUSH-06). :meth:`HttpClient.listen` opens the stream a server
sends them on: for 2026-07-28 a ``subscriptions/listen`` POST whose answer is an event stream (it
returns once the acknowledgement arrives, with the honored filter), for 2025-11-25 the session's
``GET`` stream. The stream is read by a task of the client's own until it ends (the listen
request's result, the server closing it, or :meth:`aclose`); each notification on it goes to the
callback :meth:`watch_notifications` set, and :attr:`alive` turns False when it ends. Each event
is bounded by the message cap; a stream's total is not (it is meant to last), but each event is
delivered and dropped at once.

Guarantees: TLS certificates and host names are verified (the system's trust store, or
``SSL_CERT_FILE``; a custom ``ssl.SSLContext`` may replace it, never switch it off);
``Accept-Encoding: identity`` and any other content coding refused, so what is counted is what
arrives; extra headers (``Authorization``) are checked once and sent on every request to this
server only, never in a message. What is skipped on a response stream (events of another type,
requests from the server, responses to other ids) is reported as the stdio clients report their
noise: the first few of each kind, then how many in all when the client closes, however many the
server sends. Whatever a server answers ends in a ``TransportError`` or ``JsonRpcError`` (a
malformed status line, header, ``Location`` or chunk, an event stream or a JSON body that cannot be
read, an early close), never in another exception, and the text quoted from it is cut.
"""

from __future__ import annotations

import contextlib
import json
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, TypeVar, final

try:
    import anyio
    import httpx2
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        "the HTTP client transport needs httpx2 and anyio: pip install httpx2 anyio "
        "(or, for an installed skills-core, pip install 'skills-core[http-client]')"
    ) from exc

from .._version import __version__
from ..client_stream import ReportCounter
from ..errors import JsonRpcError, SkillsError, TransportError, quote_for_message
from ..host.driver import CLIENT_INFO
from ..host.handshake import Negotiated, handshake_request, outcome_of
from ..http.client import (
    MAX_ERROR_BODY,
    Answered,
    BodyKind,
    Disposition,
    Failed,
    LegacySession,
    Noted,
    ReaderEvent,
    ResponseReader,
    bad_answer,
    check_session_id,
    message_headers,
    response_disposition,
    session_headers,
    status_error,
)
from ..http.eras import (
    EraCache,
    ProbeVerdict,
    classify_probe,
    supported_version,
    with_protocol_version,
)
from ..http.headers import check_custom_header
from ..http.sse import SseParser
from ..http.urls import check_url, redirect_target
from ..jsonrpc import (
    DEFAULT_MAX_MESSAGE_SIZE,
    JSONObject,
    JsonRpcConnection,
    NotificationReceived,
    RequestId,
)
from ..jsonvalue import JSONValue
from ..messages import Era, Implementation, request_era
from ..spec import (
    SUPPORTED_LEGACY_VERSIONS,
    SUPPORTED_MODERN_VERSIONS,
    ErrorCode,
    Method,
)
from ._io import report_to_stderr

__all__ = [
    "HttpClient",
    "open_http_client",
    "REQUEST_TIMEOUT",
    "CONNECT_TIMEOUT",
    "READ_TIMEOUT",
    "CLOSE_TIMEOUT",
]

_T = TypeVar("_T")

#: Seconds a request waits for its answer when the client is called as the pump's ``send``.
REQUEST_TIMEOUT: Final = 10.0
#: Seconds to establish a connection (TCP and TLS).
CONNECT_TIMEOUT: Final = 10.0
#: Seconds without a byte while sending or receiving before the connection is given up (the python
#: SDK's read default); each request is also bounded as a whole by its own ``timeout``.
READ_TIMEOUT: Final = 300.0
#: Seconds allowed for the courtesy messages nobody waits on: DELETE at close, and a legacy
#: ``notifications/cancelled`` after a timeout.
CLOSE_TIMEOUT: Final = 5.0


@final
@dataclass(frozen=True, slots=True)
class _Exchange:
    """How one message's POST ended (after redirects), as a value."""

    status: int
    result: JSONObject | None = None
    error: JsonRpcError | TransportError | None = None
    session_id: str | None = None  # the response's Mcp-Session-Id, as sent
    session_sent: bool = False  # the POST carried a session id


@final
class HttpClient:
    """A JSON-RPC connection to one MCP server over Streamable HTTP (see :func:`open_http_client`).

    Args:
        url: The server's MCP endpoint, exactly (no path is added).
        label: The host-assigned label of this server, used in every message.
        client: The httpx2 client to send with (made by :func:`open_http_client`).
        headers: Extra ``(name, value)`` headers for every request (checked; never shown).
        era_cache: Where era verdicts are kept per origin, shared between connections.
        max_message_size: The largest message accepted or sent, in bytes.
        on_notification: Called with each notification that arrives on a response stream; they
            are dropped when ``None``. Never answered.
        on_report: Called with one line for each thing ignored (a request sent on a stream, ...):
            of each kind, the first :data:`~skills_core.client_stream.REPORTS_SHOWN`; then, at
            :meth:`aclose`, one line with how many there were in all.
        timeout: Seconds each request waits for its answer when the client is called as the
            pump's ``send`` (``None``: forever); :meth:`request` takes its own.

    Attributes:
        timeout: As given; change it to change the next calls' bound.

    Raises:
        ValueError: ``url`` is not an absolute http(s) URL, or it carries credentials.
        LocalProtocolError: a header is reserved or malformed (the message never shows its value).
    """

    def __init__(
        self,
        url: str,
        *,
        label: str,
        client: httpx2.AsyncClient,
        headers: Sequence[tuple[str, str]] = (),
        era_cache: EraCache | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        on_notification: Callable[[NotificationReceived], None] | None = None,
        on_report: Callable[[str], None] = report_to_stderr,
        timeout: float | None = REQUEST_TIMEOUT,
    ) -> None:
        check_url(url)
        try:
            httpx2.URL(url)
        except httpx2.InvalidURL:
            raise ValueError(
                "not a URL this client can send to (its host, port or length)"
            ) from None
        self._url = url
        self.label = label
        self._client = client
        self._extra = [check_custom_header(name, value) for name, value in headers]
        self._cache = era_cache
        self._rpc = JsonRpcConnection(max_message_size=max_message_size)
        self._on_notification = on_notification
        self._on_report = on_report
        self._reports = ReportCounter(label=label)
        self._session: LegacySession | None = None
        self._era: Era | None = None
        self._init_params: dict[str, JSONValue] | None = None
        self.timeout = timeout
        #: Where :meth:`listen` runs its stream (set by :func:`open_http_client`).
        self.tasks: anyio.abc.TaskGroup | None = None
        self._on_change: Callable[[str, dict[str, JSONValue] | None], None] | None = None
        self._streaming = False
        self._stream_ended = False

    @property
    def url(self) -> str:
        """The endpoint."""
        return self._url

    @property
    def era(self) -> Era | None:
        """The era negotiated, or ``None`` before :meth:`negotiate`."""
        return self._era

    @property
    def session(self) -> LegacySession | None:
        """The legacy session, once ``initialize`` has been answered."""
        return self._session

    # -- change notifications ---------------------------------------------------------------

    #: Whether 2025-11-25 notifications arrive without :meth:`listen`: no, they come on the
    #: session's GET stream, which :meth:`listen` opens.
    pushes_unasked = False

    def watch_notifications(
        self, callback: Callable[[str, dict[str, JSONValue] | None], None] | None
    ) -> None:
        """Call ``callback(method, params)`` for each notification of the :meth:`listen` stream
        (and of response streams); ``params`` is the server's JSON, a hint, never data."""
        self._on_change = callback

    @property
    def alive(self) -> bool:
        """False once the stream :meth:`listen` opened has ended."""
        return not self._stream_ended

    async def listen(
        self, notifications: Mapping[str, object], *, timeout: float | None
    ) -> dict[str, JSONValue]:
        """Open the stream change notifications come on (see the module docstring).

        Args:
            notifications: The 2026-07-28 ``SubscriptionFilter`` (ignored for 2025-11-25).
            timeout: Seconds to wait for the stream to open (and, modern, be acknowledged).

        Returns:
            The honored filter (2026-07-28), or ``{}`` (2025-11-25).

        Raises:
            JsonRpcError: the server refused the listen request.
            TransportError: the stream could not be opened, or was not acknowledged in time.
        """
        tasks = self.tasks
        if tasks is None or self._streaming:
            raise TransportError(
                f"server {self.label!r}: a stream is open already, or the client is not open",
                kind="protocol",
            )
        opened: dict[str, object] = {}
        ready = anyio.Event()
        self._streaming = True

        async def run() -> None:
            try:
                await self._run_stream(notifications, opened, ready)
            except SkillsError as exc:
                opened.setdefault("error", exc)
            finally:
                self._stream_ended = True
                ready.set()

        tasks.start_soon(run)
        with anyio.move_on_after(timeout):
            await ready.wait()
        error = opened.get("error")
        if isinstance(error, SkillsError):
            raise error
        if not ready.is_set():
            raise TransportError(
                f"server {self.label!r} did not open its notification stream within {timeout} "
                "seconds",
                kind="timeout",
            )
        honored = opened.get("honored")
        return honored if isinstance(honored, dict) else {}

    async def _run_stream(
        self, notifications: Mapping[str, object], opened: dict[str, object], ready: anyio.Event
    ) -> None:
        session = self._session
        listen_id: RequestId | None = None
        with _transport_errors(self.label, "subscriptions/listen"):
            if self._era is Era.MODERN:
                params: dict[str, object] = {
                    "_meta": self._modern_meta(),
                    "notifications": dict(notifications),
                }
                headers = message_headers("subscriptions/listen", params, session=None)
                listen_id, data = self._rpc.send_request("subscriptions/listen", params)
                request = self._client.build_request(
                    "POST", self._url, headers=headers + self._extra, content=data[:-1]
                )
            else:
                if session is None:
                    raise TransportError(f"server {self.label!r}: no session", kind="protocol")
                headers = [("Accept", "text/event-stream"), *session_headers(session)]
                request = self._client.build_request(
                    "GET", self._url, headers=headers + self._extra
                )
            response = await self._client.send(request, stream=True)
            try:
                content_type = response.headers.get("content-type", "")
                if response.status_code != 200 or not content_type.startswith("text/event-stream"):
                    body = await _read_at_most(response, MAX_ERROR_BODY)
                    if listen_id is not None and content_type.startswith("application/json"):
                        raise status_error(
                            response.status_code,
                            body,
                            connection=self._rpc,
                            content_type=content_type,
                            method="subscriptions/listen",
                            label=self.label,
                            reason=response.reason_phrase,
                        )
                    raise TransportError(
                        f"server {self.label!r} offers no notification stream (HTTP "
                        f"{response.status_code})",
                        kind="http-status",
                    )
                if listen_id is None:
                    ready.set()
                await self._read_stream(response, listen_id, opened, ready)
            finally:
                await response.aclose()
                if listen_id is not None and listen_id in self._rpc.pending:
                    self._rpc.send_cancel(listen_id, "the stream ended")

    async def _read_stream(
        self,
        response: httpx2.Response,
        listen_id: RequestId | None,
        opened: dict[str, object],
        ready: anyio.Event,
    ) -> None:
        parser = SseParser(max_event_size=self._rpc.max_message_size)
        async with contextlib.aclosing(response.aiter_raw()) as chunks:
            async for chunk in chunks:
                for event in parser.feed(chunk):
                    if event.event != "message":
                        continue
                    try:
                        message = json.loads(event.data)
                    except ValueError:
                        continue
                    if not isinstance(message, dict):
                        continue
                    method = message.get("method")
                    if not isinstance(method, str):  # the listen result: the stream's end
                        if listen_id is not None and message.get("id") == listen_id:
                            return
                        continue
                    params = message.get("params")
                    params = params if isinstance(params, dict) else None
                    if method == "notifications/subscriptions/acknowledged" and not ready.is_set():
                        honored = params.get("notifications") if params is not None else None
                        opened["honored"] = honored if isinstance(honored, dict) else {}
                        ready.set()
                        continue
                    callback = self._on_change
                    if callback is not None:
                        callback(method, params)

    def _modern_meta(self) -> dict[str, JSONValue]:
        _, params = handshake_request(CLIENT_INFO, Era.MODERN)
        meta = params.get("_meta")
        return dict(meta) if isinstance(meta, dict) else {}

    # -- the requester ----------------------------------------------------------------------

    async def __call__(self, method: str, params: dict[str, JSONValue]) -> dict[str, JSONValue]:
        """Send a request and wait for its result, at most :attr:`timeout` seconds: the pump's
        ``send`` (``pump_async(host, effects, {label: client})``).

        Raises:
            JsonRpcError: as for :meth:`request`.
            TransportError: as for :meth:`request`.
        """
        return await self.request(method, params, timeout=self.timeout)

    async def request(
        self, method: str, params: Mapping[str, object] | None = None, *, timeout: float | None
    ) -> dict[str, JSONValue]:
        """Send a request and wait for its result.

        Raises:
            JsonRpcError: the server answered with an error response (in a 200, or in a 4xx/5xx
                body).
            TransportError: the connection failed, the server broke the transport (kinds
                ``protocol``, ``closed``, ``redirect``, ``http-status``, ``connect-failed``), or it
                did not answer within ``timeout`` seconds (kind ``timeout``; the request was
                cancelled).
        """
        exchange = await self._bounded(method, timeout, self._exchange(method, params))
        if exchange.error is not None:
            raise exchange.error
        assert exchange.result is not None
        return exchange.result

    async def notify(self, method: str, params: Mapping[str, object] | None = None) -> None:
        """Send a notification (any 2xx is an acceptance).

        Raises:
            TransportError: the connection failed or the server refused it.
            JsonRpcError: the server refused it with a JSON-RPC error body.
        """
        data = self._rpc.send_notification(method, params)
        headers = message_headers(method, params, session=self._session) + self._extra
        exchange = await self._post(data[:-1], headers, method=method, request_id=None)
        if exchange.error is not None:
            raise exchange.error

    async def negotiate(
        self,
        *,
        client_info: Implementation = CLIENT_INFO,
        timeout: float | None,
        era: Era | None = None,
    ) -> Negotiated:
        """Settle the era and handshake (docs/requirements.md#http-client rules 6, 7); see the
        module docstring.

        Args:
            client_info: How this client introduces itself.
            timeout: Seconds for each request of the handshake.
            era: Speak only this era; ``None`` probes (or uses the cached verdict for the origin).

        Returns:
            What :meth:`~skills_core.host.Host.connect` needs.

        Raises:
            TransportError: a network failure, a timeout, 401/403/5xx, or the server does not
                speak the pinned era.
            JsonRpcError: the server refused the handshake.
        """
        if era is None and self._cache is not None:
            era = self._cache.get(self._url)
        if era is not Era.LEGACY:
            method, params = handshake_request(client_info, Era.MODERN)
            exchange = await self._bounded(method, timeout, self._exchange(method, params))
            verdict = classify_probe(exchange.status, result=exchange.result, error=exchange.error)
            if verdict is ProbeVerdict.MODERN:
                outcome = outcome_of(Era.MODERN, exchange.result)
                return self._settled(Era.MODERN, outcome.protocol_version, outcome.capabilities)
            if verdict is ProbeVerdict.ERROR or era is Era.MODERN:
                raise exchange.error or TransportError(
                    f"server {self.label!r} speaks none of the modern versions "
                    f"{list(SUPPORTED_MODERN_VERSIONS)}",
                    kind="protocol",
                )
        self._init_params = handshake_request(client_info, Era.LEGACY)[1]
        result = await self._bounded(Method.INITIALIZE, timeout, self._initialize())
        assert self._session is not None
        version = self._session.protocol_version
        return self._settled(Era.LEGACY, version, result.get("capabilities"))

    def _settled(self, era: Era, version: str, capabilities: JSONValue) -> Negotiated:
        self._era = era
        if self._cache is not None:
            self._cache.put(self._url, era)
        return Negotiated(era=era, protocol_version=version, capabilities=capabilities)

    async def aclose(self) -> None:
        """End a legacy session with DELETE (HTTP-37; any answer, 405 included, is accepted), and
        report how many of each thing skipped on response streams there were in all."""
        reports, self._reports = self._reports, ReportCounter(label=self.label)
        for report in reports.summaries():
            self._on_report(report.message)
        session, self._session = self._session, None
        if session is None or session.session_id is None:
            return
        headers = session_headers(session) + self._extra
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(CLOSE_TIMEOUT),
            contextlib.suppress(SkillsError),
            _transport_errors(self.label, "DELETE"),
        ):
            async with self._client.stream("DELETE", self._url, headers=headers):
                pass  # the answer does not matter, and its body is not read

    # -- one message ------------------------------------------------------------------------

    async def _bounded(self, method: str, timeout: float | None, work: Awaitable[_T]) -> _T:
        """Await ``work`` for at most ``timeout`` seconds (HTTP-39); a timeout cancels it."""
        try:
            with anyio.fail_after(timeout):
                return await work
        except TimeoutError:
            raise TransportError(
                f"server {self.label!r} did not answer {method} within {timeout} seconds",
                kind="timeout",
            ) from None

    async def _exchange(self, method: str, params: Mapping[str, object] | None) -> _Exchange:
        """Send a request; retry once after -32022 (HTTP-35) and once after a lost session
        (HTTP-37)."""
        attempt = params
        version_retried = reinitialized = False
        while True:
            exchange = await self._send(method, attempt)
            error = exchange.error
            if (
                isinstance(error, JsonRpcError)
                and error.rpc_code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
                and not version_retried
                and attempt is not None
                and request_era(attempt) is Era.MODERN
            ):
                version = supported_version(error.data)
                if version is not None:
                    attempt = with_protocol_version(attempt, version)
                    version_retried = True
                    continue
            if (
                exchange.status == 404
                and exchange.session_sent
                and not reinitialized
                and self._init_params is not None
            ):
                await self._initialize()
                reinitialized = True
                continue
            return exchange

    async def _initialize(self) -> JSONObject:
        """``initialize`` (a new session), then ``notifications/initialized``."""
        self._session = None
        exchange = await self._send(Method.INITIALIZE, self._init_params)
        if exchange.error is not None:
            raise exchange.error
        result = exchange.result
        assert result is not None
        version = result.get("protocolVersion")
        if version not in SUPPORTED_LEGACY_VERSIONS:
            shown = quote_for_message(version[:68] if isinstance(version, str) else version, 60)
            raise TransportError(
                f"server {self.label!r} answered initialize with protocol version {shown}, "
                "which this client does not speak",
                kind="protocol",
            )
        assert isinstance(version, str)
        session_id = exchange.session_id
        if session_id is not None:
            session_id = check_session_id(session_id, label=self.label)
        self._session = LegacySession(protocol_version=version, session_id=session_id)
        with contextlib.suppress(SkillsError):  # the next request reports a dead connection
            await self.notify(Method.NOTIFICATIONS_INITIALIZED)
        return result

    async def _send(self, method: str, params: Mapping[str, object] | None) -> _Exchange:
        """One request, one POST (and its redirects); abandoned requests are cancelled."""
        session = self._session
        headers = message_headers(method, params, session=session) + self._extra
        request_id, data = self._rpc.send_request(method, params)
        try:
            exchange = await self._post(data[:-1], headers, method=method, request_id=request_id)
        except BaseException as exc:
            cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
            timed_out = isinstance(exc, TransportError) and exc.kind == "timeout"
            await self._forget(request_id, tell=(cancelled or timed_out) and session is not None)
            raise
        await self._forget(request_id, tell=False)
        sent = session is not None and session.session_id is not None
        return (
            replace(exchange, session_sent=True)
            if sent and request_era(params) is Era.LEGACY
            else exchange
        )

    async def _forget(self, request_id: RequestId, *, tell: bool) -> None:
        """Stop waiting for a request; legacy: tell the server (HTTP-38)."""
        if request_id not in self._rpc.pending:
            return
        data = self._rpc.send_cancel(request_id, "the client stopped waiting for it")
        if not tell:
            return
        headers = message_headers(Method.NOTIFICATIONS_CANCELLED, None, session=self._session)
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(CLOSE_TIMEOUT),
            contextlib.suppress(SkillsError),
        ):
            await self._post(
                data[:-1],
                headers + self._extra,
                method=Method.NOTIFICATIONS_CANCELLED,
                request_id=None,
            )

    async def _post(
        self,
        body: bytes,
        headers: list[tuple[str, str]],
        *,
        method: str,
        request_id: RequestId | None,
    ) -> _Exchange:
        """POST one message; follow same-origin 307/308; read the answer within bounds."""
        url = self._url
        hops = 0
        with _transport_errors(self.label, method):
            while True:
                request = self._client.build_request("POST", url, headers=headers, content=body)
                response = await self._client.send(request, stream=True)
                try:
                    status = response.status_code
                    content_type = response.headers.get("content-type")
                    disposition = response_disposition(
                        status, content_type, expects_response=request_id is not None
                    )
                    if disposition is Disposition.REDIRECT:
                        location = response.headers.get("location")
                        url = redirect_target(url, status, location, hops=hops, label=self.label)
                        hops += 1
                        continue
                    return await self._answer(
                        response, disposition, method=method, request_id=request_id
                    )
                finally:
                    await response.aclose()

    async def _answer(
        self,
        response: httpx2.Response,
        disposition: Disposition,
        *,
        method: str,
        request_id: RequestId | None,
    ) -> _Exchange:
        status = response.status_code
        session_id = response.headers.get("mcp-session-id")
        content_type = response.headers.get("content-type")
        if disposition is Disposition.ACCEPTED:
            return _Exchange(status)
        if disposition is Disposition.READ_ERROR:
            body = b"" if _encoded(response) else await _read_at_most(response, MAX_ERROR_BODY)
            error = status_error(
                status,
                body,
                connection=self._rpc,
                content_type=content_type,
                method=method,
                label=self.label,
                reason=response.reason_phrase,
            )
            return _Exchange(status, error=error, session_id=session_id)
        if disposition is Disposition.BAD_ANSWER:
            return _Exchange(
                status, error=bad_answer(status, content_type, method=method, label=self.label)
            )
        assert request_id is not None
        if _encoded(response):
            coding = quote_for_message(response.headers.get("content-encoding", "")[:68], 60)
            return _Exchange(status, error=self._broken(f"sent a {coding}-encoded body"))
        kind = BodyKind.JSON if disposition is Disposition.READ_JSON else BodyKind.SSE
        limit = self._rpc.max_message_size
        declared = response.headers.get("content-length", "")
        if kind is BodyKind.JSON and _over(declared, limit):
            message = f"announced a response of {declared[:30]} bytes (the maximum is {limit})"
            return _Exchange(status, error=self._broken(message))
        reader = ResponseReader(self._rpc, request_id, method=method, kind=kind, label=self.label)
        outcome: _Exchange | None = None
        async with contextlib.aclosing(response.aiter_raw()) as chunks:  # closed when we stop early
            async for chunk in chunks:
                outcome = self._take(reader.feed(chunk), status, session_id)
                if reader.done:
                    break
        if not reader.done:
            outcome = self._take(reader.end(), status, session_id)
        assert outcome is not None
        return outcome

    def _take(
        self, events: list[ReaderEvent], status: int, session_id: str | None
    ) -> _Exchange | None:
        """Deliver notifications and notes; return the answer when it is among ``events``."""
        answer: _Exchange | None = None
        for event in events:
            if isinstance(event, Answered):
                answer = _Exchange(status, result=event.result, session_id=session_id)
            elif isinstance(event, Failed):
                answer = _Exchange(status, error=event.error, session_id=session_id)
            elif isinstance(event, Noted):
                message = f"server {self.label!r}: {event.message}"
                report = self._reports.report(event.kind.value, message)
                if report is not None:
                    self._on_report(report.message)
            else:
                if self._on_notification is not None:
                    self._on_notification(event)
                if self._on_change is not None:
                    self._on_change(event.method, event.params)
        return answer

    def _broken(self, message: str) -> TransportError:
        return TransportError(f"server {self.label!r} {message}", kind="protocol")


def _over(declared: str, limit: int) -> bool:
    """True when a ``Content-Length`` value is a number over ``limit`` (h11 checked its form)."""
    if not (declared.isascii() and declared.isdigit()):
        return False
    return len(declared) > len(str(limit)) or int(declared) > limit


def _encoded(response: httpx2.Response) -> bool:
    """True when the body has a content coding other than identity (we asked for identity)."""
    return response.headers.get("content-encoding", "identity").strip().lower() != "identity"


async def _read_at_most(response: httpx2.Response, limit: int) -> bytes:
    body = bytearray()
    async with contextlib.aclosing(response.aiter_raw()) as chunks:
        async for chunk in chunks:
            body += chunk
            if len(body) >= limit:
                break
    return bytes(body[:limit])


#: What httpcore2 says when a server closes the connection before its answer is complete (any
#: other RemoteProtocolError is a server breaking HTTP: a bad status line, header or chunk).
_DISCONNECTED: Final = ("Server disconnected", "peer closed connection")


@contextlib.contextmanager
def _transport_errors(label: str, method: str) -> Iterator[None]:
    """Map what httpx2, and the parsers under it, raise on a server's answer to TransportError.

    Messages name the label, never the URL; the library's own text, which may quote the server's
    bytes (a status line, a header), is cut. What the server sends is checked by
    :mod:`skills_core.http` before httpx2 sees it (a redirect's target) or after (bodies),
    so the last clause is a net under those checks: any ``ValueError``, ``RecursionError`` or
    ``InvalidURL`` that a server's answer still makes a parser raise is the server's fault too.
    """
    try:
        yield
    except SkillsError:
        raise
    except httpx2.ConnectTimeout:
        raise TransportError(
            f"cannot connect to server {label!r}: no connection within the connect timeout",
            kind="timeout",
        ) from None
    except httpx2.TimeoutException:
        raise TransportError(
            f"server {label!r} went silent while answering {method} (read timeout)",
            kind="timeout",
        ) from None
    except (httpx2.ConnectError, httpx2.ProxyError) as exc:
        raise TransportError(
            f"cannot connect to server {label!r}: {_detail(exc, name=False)}", kind="connect-failed"
        ) from None
    except httpx2.RemoteProtocolError as exc:
        if str(exc).startswith(_DISCONNECTED):
            raise TransportError(
                f"server {label!r} closed the connection while answering {method} ({_detail(exc)})",
                kind="closed",
            ) from None
        raise TransportError(
            f"server {label!r} broke HTTP answering {method} ({_detail(exc)})", kind="protocol"
        ) from None
    except (httpx2.NetworkError, OSError) as exc:
        raise TransportError(
            f"server {label!r} closed the connection while answering {method} ({_detail(exc)})",
            kind="closed",
        ) from None
    except (httpx2.HTTPError, httpx2.InvalidURL, ValueError, RecursionError) as exc:
        raise TransportError(
            f"server {label!r} broke HTTP answering {method} ({_detail(exc)})", kind="protocol"
        ) from None


def _detail(exc: BaseException, *, name: bool = True) -> str:
    """An exception's text, cut (a parser's message may quote a whole status line or header)."""
    text = f"{exc.__class__.__name__}: {exc}" if name else str(exc)
    return text if len(text) <= 200 else text[:197] + "..."


@contextlib.asynccontextmanager
async def open_http_client(
    url: str,
    *,
    label: str,
    headers: Sequence[tuple[str, str]] = (),
    era_cache: EraCache | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    connect_timeout: float = CONNECT_TIMEOUT,
    read_timeout: float = READ_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    on_notification: Callable[[NotificationReceived], None] | None = None,
    on_report: Callable[[str], None] = report_to_stderr,
    timeout: float | None = REQUEST_TIMEOUT,
) -> AsyncIterator[HttpClient]:
    """Yield an :class:`HttpClient` for ``url``; on exit, end its session and close its connections.

    Args:
        url: The server's MCP endpoint, e.g. ``https://skills.example.com/mcp``.
        label: The host-assigned label of this server.
        headers: Extra headers for every request, e.g. ``[("Authorization", "Bearer ...")]``.
        era_cache: Era verdicts per origin, shared with other connections.
        max_message_size: The largest message accepted or sent.
        connect_timeout: Seconds to connect (TCP and TLS).
        read_timeout: Seconds without data before a connection is given up.
        ssl_context: Certificates to trust instead of the system's (verification stays on).
        on_notification: See :class:`HttpClient`.
        on_report: See :class:`HttpClient`.
        timeout: Seconds each request waits when the client is called as the pump's ``send``
            (see :class:`HttpClient`).

    Raises:
        ValueError: ``url`` is not an absolute http(s) URL, or it carries credentials.
        LocalProtocolError: a header is reserved or malformed.
    """
    check_url(url)
    client = httpx2.AsyncClient(
        verify=ssl_context if ssl_context is not None else True,
        follow_redirects=False,
        timeout=httpx2.Timeout(
            connect=connect_timeout, read=read_timeout, write=read_timeout, pool=connect_timeout
        ),
        headers={"Accept-Encoding": "identity", "User-Agent": f"skills-core/{__version__}"},
    )
    async with client:
        connection = HttpClient(
            url,
            label=label,
            client=client,
            headers=headers,
            era_cache=era_cache,
            max_message_size=max_message_size,
            on_notification=on_notification,
            on_report=on_report,
            timeout=timeout,
        )
        try:
            async with anyio.create_task_group() as tasks:
                connection.tasks = tasks  # where listen() reads its stream
                try:
                    yield connection
                finally:
                    tasks.cancel_scope.cancel()
                    await connection.aclose()
        except BaseExceptionGroup as group:
            # The stream task never raises (it records its failure), so the group holds what
            # the caller's block raised: let it through as raised, not wrapped in a group.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
