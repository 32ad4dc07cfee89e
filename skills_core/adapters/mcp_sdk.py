"""Run a :class:`~skills_core.host.Host` over the official ``mcp`` Python SDK's ``ClientSession``.

For a host that already talks to its servers through ``mcp`` (2.3.x): this module needs it
(``pip install 'mcp>=2.3,<2.4'``, or the ``mcp`` extra of an installed skills-core), and
:mod:`skills_core` never imports it.

Theory of operation
-------------------
The host is sans-IO and :func:`skills_core.host.pump.pump_async` carries out its requests over
any ``send(method, params)``. :class:`SessionRequester` is that ``send`` for one ``ClientSession``:

* a request goes out through ``session.send_request`` as a custom ``mcp_types.Request`` (the
  skills methods are not in the SDK's vocabulary) with a raw-dict result model, so the result
  comes back as the server's JSON. In the modern era the session stamps the request ``_meta``
  itself (protocol version, its ``clientInfo``, its capabilities; docs/protocol.md#request-meta, CAP-10)
  over the one the host built; in the legacy era the host sends none. Build the session with
  ``extensions=client_extensions()`` so that those capabilities declare the Skills extension;
* the SDK raises one exception type, ``MCPError``, for three different things, and the requester
  tells them apart: the SDK's own read timeout (code ``-32001``, message ``Request '<method>'
  timed out``) becomes ``TransportError(kind="timeout")``; the SDK's own "connection closed"
  (code ``-32000``, message ``Connection closed``, no data: the server died, closed its output,
  or the session was closed) becomes ``TransportError(kind="closed")``; every other ``MCPError``
  is the server's JSON-RPC error answer and becomes :class:`~skills_core.errors.JsonRpcError` with
  its code, message and data. A server can send those two codes itself (``-32000`` is the
  generic "server error" of many implementations): only the SDK's exact shape counts as a
  transport failure. A result the SDK refuses (it validates results of methods it knows, such as
  ``resources/read``, against the negotiated revision) is ``TransportError(kind="protocol")``;
  the transport's own errors (a failed write, an OS error) are ``TransportError(kind="closed")``.

:func:`connect` negotiates the era the way docs/protocol.md#discover recommends when the session has
not yet done so (``server/discover`` first, ``initialize`` on an error answer, a timeout or no
common modern version) or takes the one the session already negotiated (``session.discover()``,
``session.initialize()``, or ``mcp.Client(mode=...)``), and connects the host's origin with the
capabilities and era the session holds.

Changes pushed
--------------
A server's change notifications reach the session's ``message_handler`` (the SDK's typed
``ResourceListChangedNotification`` and ``ResourceUpdatedNotification``): on a 2025-11-25
connection unasked, on 2026-07-28 from a ``subscriptions/listen`` stream (the SDK's client
``listen`` driver consumes the acknowledgement and tees each stream notification to the handler).
:class:`SessionWatch` turns them into re-lists, as the stdio and HTTP clients of ``skills-core host
watch`` do: :meth:`SessionWatch.message_handler` is the handler to build each ``ClientSession``
with (it records the hint in a :class:`~skills_core.host.watch.ChangeWatch`, a dictionary write,
and passes every message on to the embedder's own handler), and :meth:`SessionWatch.changes` is
an async iterator that opens the listen streams its modern sessions need, re-lists a notified
server at most once per interval through :class:`SessionRequester` (PUSH-11), verifies the
listing as any other, confirms with ``skills/get`` what it no longer lists, and yields a
:class:`~skills_core.host.watch.SkillsChanged` for each re-list that found skills added, removed
or changed (PUSH-09). The approval rules are the host's (PUSH-10): a held skill whose entry
changed is suspended until approved again (the prompt goes to ``on_effect``), a removed skill is
unloaded, a new skill is recorded and not loaded.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack
from typing import Any, Final, final

try:
    import anyio
    import mcp_types
    from mcp import ClientSession
    from mcp.client.session import IncomingMessage, MessageHandlerFnT
    from mcp.client.subscriptions import listen
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    from pydantic import RootModel, ValidationError
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without site-packages
    raise ImportError(
        "skills_core.adapters.mcp_sdk needs the official MCP Python SDK: "
        "pip install 'mcp>=2.3,<2.4' (or, where skills-core itself is installed, "
        "pip install 'skills-core[mcp]')"
    ) from exc

from ..errors import JsonRpcError, LocalProtocolError, TransportError
from ..host.effects import Effect
from ..host.pump import AsyncOnEffect, Pumped, TransportFailure, pump_async
from ..host.router import Host
from ..host.watch import DEFAULT_RELIST_INTERVAL, ChangeWatch, SkillsChanged
from ..jsonvalue import JSONValue
from ..messages import Era
from ..spec import EXTENSION_ID, SUPPORTED_MODERN_VERSIONS

__all__ = ["SessionRequester", "SessionWatch", "client_extensions", "connect"]

#: What the SDK's dispatcher raises when the connection is gone (mcp 2.3.0,
#: ``mcp/shared/jsonrpc_dispatcher.py``: ``_CLOSED_OUTCOME`` and the closed-send paths).
_SDK_CLOSED_MESSAGE: Final = "Connection closed"
#: Errors of the transport under the session: the stream is gone.
_STREAM_ERRORS: Final = (
    OSError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)


class _RawResult(RootModel[dict[str, Any]]):
    """Any result object, as the server sent it (the SDK validates nothing more)."""


def client_extensions() -> dict[str, dict[str, Any]]:
    """Return the ``extensions`` argument for ``ClientSession`` that declares the Skills extension.

    The session puts it in its capabilities: in ``initialize`` (legacy) and in every modern
    request's ``_meta`` (docs/design.md#d2; no server may require it, SIL-28).
    """
    return {EXTENSION_ID: {}}


def _sdk_timeout(exc: MCPError, method: str) -> bool:
    return (
        exc.code == REQUEST_TIMEOUT
        and exc.message == f"Request {method!r} timed out"
        and exc.data is None
    )


def _sdk_closed(exc: MCPError) -> bool:
    return exc.code == CONNECTION_CLOSED and exc.message == _SDK_CLOSED_MESSAGE and exc.data is None


def _translate(exc: Exception, origin: str, method: str) -> JsonRpcError | TransportError:
    """The skills_core error for what ``session.send_request`` or a handshake raised."""
    if isinstance(exc, MCPError):
        if _sdk_timeout(exc, method):
            return TransportError(
                f"server {origin!r} did not answer {method} in time", kind="timeout"
            )
        if _sdk_closed(exc):
            return TransportError(
                f"server {origin!r}: the connection is closed ({method} got no answer)",
                kind="closed",
            )
        return JsonRpcError(
            f"server {origin!r} answered {method} with error {exc.code}: {exc.message}",
            rpc_code=exc.code,
            method=method,
            data=exc.data,
        )
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]  # a ValidationError has at least one
        where = "/".join(str(part) for part in first["loc"]) or "(the result)"
        return TransportError(
            f"server {origin!r} sent a {method} result the mcp SDK refused "
            f"({exc.error_count()} problem(s), first at {where}: {first['type']})",
            kind="protocol",
        )
    if isinstance(exc, RuntimeError):  # a handshake: no common revision (or a session not entered)
        return TransportError(f"server {origin!r}: {method} failed: {exc}", kind="protocol")
    if isinstance(exc, TimeoutError):  # the transport's own bounded write (before the request)
        return TransportError(
            f"server {origin!r}: {method} could not be sent in time", kind="timeout"
        )
    return TransportError(
        f"server {origin!r}: the connection failed ({type(exc).__name__}; {method} got no answer)",
        kind="closed",
    )


#: What a requester translates; anything else propagates (a bug, a cancellation).
_TRANSLATED: Final = (MCPError, ValidationError, *_STREAM_ERRORS)
#: What the handshake translates: the SDK raises RuntimeError when the server names no revision
#: it speaks.
_HANDSHAKE_ERRORS: Final = (*_TRANSLATED, RuntimeError)


@final
class SessionRequester:
    """The pump's ``send(method, params)`` over one ``mcp`` ``ClientSession``.

    Use one per origin: ``pump_async(host, effects, {label: SessionRequester(session,
    origin=label)})``. The session must be entered (``async with``) and negotiated (see
    :func:`connect`).

    Attributes:
        session: The SDK session requests go through.
        origin: The host's label for the server (used in error messages).
        timeout: Seconds to wait for each answer; ``None`` uses the session's
            ``read_timeout_seconds`` (which may be ``None``: wait forever).
    """

    __slots__ = ("origin", "session", "timeout")

    def __init__(
        self, session: ClientSession, *, origin: str, timeout: float | None = None
    ) -> None:
        """Send through ``session`` for the origin labelled ``origin``."""
        self.session = session
        self.origin = origin
        self.timeout = timeout

    async def __call__(self, method: str, params: dict[str, JSONValue]) -> dict[str, JSONValue]:
        """Send one request; return its result.

        Raises:
            JsonRpcError: the server answered with a JSON-RPC error.
            TransportError: no usable answer: timeout (kind ``timeout``), the connection is gone
                (``closed``), or the SDK refused the result (``protocol``).
        """
        request = mcp_types.Request[dict[str, Any], str](method=method, params=params)
        try:
            result = await self.session.send_request(
                request, _RawResult, request_read_timeout_seconds=self.timeout
            )
        except _TRANSLATED as exc:
            raise _translate(exc, self.origin, method) from None
        raw: dict[str, JSONValue] = result.root
        return raw


async def connect(
    host: Host, origin: str, session: ClientSession, *, era: Era | None = None
) -> list[Effect]:
    """Connect ``host``'s origin ``origin`` to the server behind ``session``.

    If the session has not negotiated yet, this does: ``era=Era.MODERN`` sends ``server/discover``,
    ``era=Era.LEGACY`` sends ``initialize`` (then ``notifications/initialized``), and ``None``
    (the default) tries ``server/discover`` and falls back to ``initialize`` on an error answer, a
    timeout, an unusable result or no common modern version (docs/protocol.md#discover). Nothing else
    is sent (VER-12). Then the host records the server's capabilities in the session's era.

    Args:
        host: The host.
        origin: The host-assigned label for this server.
        session: An entered ``ClientSession`` (build it with ``extensions=client_extensions()``).
        era: The era to negotiate, or None for the probe with fallback.

    Returns:
        What ``Host.connect`` returned (``Connected``, and notices about the capabilities).

    Raises:
        TransportError: the connection failed during the handshake.
        JsonRpcError: the server refused the handshake.
        LocalProtocolError: the session already negotiated another era than ``era``, or a modern
            revision skills_core does not speak.
    """
    if session.protocol_version is None:
        await _negotiate(session, origin, era)
    version = session.protocol_version
    capabilities = session.server_capabilities
    assert version is not None  # both are set by a successful handshake
    assert capabilities is not None
    negotiated = Era.MODERN if version in MODERN_PROTOCOL_VERSIONS else Era.LEGACY
    if era is not None and era is not negotiated:
        raise LocalProtocolError(
            f"the session for {origin!r} already speaks {version} ({negotiated.value}), "
            f"not the {era.value} era asked for",
            kind="era-mismatch",
        )
    if negotiated is Era.MODERN and version not in SUPPORTED_MODERN_VERSIONS:
        raise LocalProtocolError(
            f"the session for {origin!r} negotiated {version}, which skills_core does not speak "
            f"(it speaks {', '.join(SUPPORTED_MODERN_VERSIONS)})",
            kind="unsupported-version",
        )
    declared = capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)
    if negotiated is Era.LEGACY:
        return host.connect(origin, declared, era=Era.LEGACY)
    return host.connect(origin, declared, era=Era.MODERN, protocol_version=version)


async def _negotiate(session: ClientSession, origin: str, era: Era | None) -> None:
    if era is not Era.LEGACY:
        try:
            await session.discover()
        except _HANDSHAKE_ERRORS as exc:
            error = _translate(exc, origin, "server/discover")
            if era is Era.MODERN or error.kind == "closed":
                raise error from None
        else:
            return
    try:
        await session.initialize()
    except _HANDSHAKE_ERRORS as exc:
        raise _translate(exc, origin, "initialize") from None


@final
class SessionWatch:
    """Re-lists the servers behind ``mcp`` ``ClientSession`` s when they say their skills changed.

    Usage, for each server: build its session with ``message_handler=watch.message_handler(label)``,
    enter it, :func:`connect` the host, list once, then :meth:`add` it; then ``async for change in
    watch.changes(): ...`` (see the module docstring).

    Args:
        host: The host whose registry is re-listed.
        interval: Seconds between two re-lists of one server at least (PUSH-11).
        on_effect: Called with each output of a re-list (approval prompts of a changed held
            skill, :class:`~skills_core.host.effects.SkillChanged`, notices), as for
            :func:`~skills_core.host.pump.pump_async`; it may return effects to carry out (such as
            ``host.approve(prompt.prompt_id)``). Without it a prompt stays unanswered and the
            changed skill stays suspended.

    Attributes:
        watch: The :class:`~skills_core.host.watch.ChangeWatch` (``watch.notifications`` counts
            the change notifications received).
    """

    __slots__ = ("_on_effect", "_requesters", "_wake", "host", "watch")

    def __init__(
        self,
        host: Host,
        *,
        interval: float = DEFAULT_RELIST_INTERVAL,
        on_effect: AsyncOnEffect | None = None,
    ) -> None:
        self.host = host
        self.watch = ChangeWatch(host, interval=interval)
        self._on_effect = on_effect
        self._requesters: dict[str, SessionRequester] = {}
        self._wake: anyio.Event | None = None

    def message_handler(
        self, origin: str, *, then: MessageHandlerFnT | None = None
    ) -> MessageHandlerFnT:
        """The ``message_handler`` for the session of ``origin``.

        A change notification (either era) is recorded as a hint to re-list ``origin``; every
        message, that one included, then goes to ``then`` when given.
        """

        async def handle(message: IncomingMessage) -> None:
            method = getattr(message, "method", None)
            if isinstance(method, str) and self.watch.notified(origin, method):
                wake = self._wake
                if wake is not None:
                    wake.set()
            if then is not None:
                await then(message)

        return handle

    def add(self, origin: str, session: ClientSession, *, timeout: float | None = None) -> None:
        """Re-list ``origin`` through ``session`` (entered, connected with :func:`connect`, its
        ``message_handler`` from :meth:`message_handler`); ``timeout`` as for
        :class:`SessionRequester`."""
        self._requesters[origin] = SessionRequester(session, origin=origin, timeout=timeout)

    async def changes(self) -> AsyncGenerator[SkillsChanged, None]:
        """Yield what each re-list found, until the iterator is closed.

        First opens a ``subscriptions/listen`` stream asking ``resourcesListChanged`` on each
        2026-07-28 session (a 2025-11-25 server sends unasked); the streams are closed with the
        iterator. A notified server is re-listed at most once per interval, whatever the number
        of notifications.

        Raises:
            TransportError: a re-list found the connection gone (``kind="closed"``), or a listen
                stream could not be opened.
            JsonRpcError: a server refused ``subscriptions/listen``.
        """
        self._wake = anyio.Event()
        async with AsyncExitStack() as streams:
            for origin, requester in self._requesters.items():
                session = requester.session
                if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
                    try:
                        await streams.enter_async_context(
                            listen(session, resources_list_changed=True)
                        )
                    except _TRANSLATED as exc:
                        raise _translate(exc, origin, "subscriptions/listen") from None
            while True:
                for origin in self.watch.due(anyio.current_time()):
                    change = await self._relist(origin)
                    if change is not None:
                        yield change
                due = self.watch.next_wakeup()
                wake = self._wake = anyio.Event()
                if due is not None and due <= anyio.current_time():
                    continue
                wait = None if due is None else due - anyio.current_time()
                with anyio.move_on_after(wait if wait is not None else float("inf")):
                    await wake.wait()

    async def _relist(self, origin: str) -> SkillsChanged | None:
        senders = {origin: self._requesters[origin]}
        watch = self.watch
        pumped = await pump_async(
            self.host, watch.begin(origin, anyio.current_time()), senders, on_effect=self._on_effect
        )
        confirmations = watch.listed(origin, pumped)
        if confirmations:
            pumped += await pump_async(self.host, confirmations, senders, on_effect=self._on_effect)
        change = watch.end(origin)
        _raise_if_closed(pumped)
        return change


def _raise_if_closed(pumped: list[Pumped]) -> None:
    for item in pumped:
        if isinstance(item, TransportFailure) and item.error.kind == "closed":
            raise item.error
