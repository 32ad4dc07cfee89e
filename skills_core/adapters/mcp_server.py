"""Serve a :class:`~skills_core.server.SkillsServer`'s catalog from an ``mcp`` low-level ``Server``.

For a server that already runs on the official ``mcp`` Python SDK (2.3.x, its low-level
``mcp.server.lowlevel.Server``) and wants to publish skills with this library's semantics: entries
with digests and limits, reads that look at the files as they are now, directory reads, both eras,
``ttlMs``/``cacheScope``, ``-32602`` with ``data.uri``. Needs ``pip install 'mcp>=2.3,<2.4'`` (or
the ``mcp`` extra of an installed skills-core); :mod:`skills_core` never imports this module.

Theory of operation
-------------------
:func:`add_skills` installs one ``Server.middleware`` entry that answers the skills methods from
the sans-IO core: each request, raw params and all, goes to a fresh
:class:`~skills_core.server.ServerConnection` of the :class:`SkillsServer`, told the era the SDK
negotiated (legacy once the SDK recorded ``initialize`` on this connection, in the 2025-11-25
shapes for a ``2024-11-05`` client too; a modern request carries its own envelope), and its result
object is returned as is, or its error raised as ``MCPError`` (code, message, data). A read of a
large file is read and encoded in a worker thread, as the stdio adapters and the ASGI app do, so
the SDK's event loop keeps serving. A middleware, not a request handler, because the SDK does three
things to a handler's request and answer that would make them differ from ours, and a middleware
runs before them and has its answer written unchanged (``mcp/server/runner.py``,
``ServerRunner._on_request``): for a spec method such as ``resources/read`` it validates the params
against its own schema first (its ``-32602`` message, not ours) and re-serialises the result
through its model (the keys come out sorted); and on a legacy connection it refuses any request
before ``initialize`` with its own ``-32602``. The methods:

* ``skills/list``, ``skills/get``, ``resources/directory/read``: ours (the core answers ``-32601``
  to a directory read when the skills server does not implement it, ERR-05);
* ``resources/read``: ours; if the server has a ``resources/read`` handler of its own, ours for
  URIs of the catalog's scheme (``skill://`` by default) and the server's for the others;
* ``resources/list`` and ``resources/templates/list``: ours if the server has none, else its own;
* the extension is declared under ``capabilities.extensions`` (with ``directoryRead`` when the
  skills server implements it). The SDK's ``server/discover`` keeps it; its legacy
  ``initialize`` result does not (it is checked against the 2025-11-25 ``ServerCapabilities``,
  which has no ``extensions`` field, and ``initialize`` cannot be given a handler), so the
  middleware puts the declaration back into the ``initialize`` result.

A ``resources/list`` handler is registered too when the server has none, because the SDK
declares the ``resources`` capability only when one is there (and a host does not use the
extension without it); the middleware answers before it is reached. So are
``resources/subscribe``, ``resources/unsubscribe`` and ``subscriptions/listen`` handlers (see
*Changes pushed* below).

What stays the SDK's, by its design (and differs from ``skills-core serve``): ``server/discover``
and ``initialize`` (its capabilities, cache hints and server info, with our declaration); a
connection keeps the era its first request chose (``initialize`` on a modern connection is
``-32022``, an enveloped request on a legacy one ``-32600``); modern envelope errors (missing
``_meta``, unsupported version) have our codes and data but the SDK's messages; ``ping`` is not
served in the modern era; the wire encoding is the SDK's (equal bytes for our answers, except that
it writes U+2028, U+2029 and U+0085 unescaped inside strings, where ours escapes them).

Changes pushed
--------------
:func:`add_skills` returns a :class:`ChangePublisher`: what tells the SDK server's clients that
the catalog changed (docs/design.md#d13, PUSH-01..08). A change is found once per server
(:meth:`SkillsServer.changes() <skills_core.server.SkillsServer.changes>`, at most one look at the
source per ``ttlMs``) and then costs each client the bytes of its notifications:

* **2025-11-25** (a connection that did ``initialize``): ``notifications/resources/list_changed``
  on every change, and ``notifications/resources/updated`` for each URI the connection subscribed
  to with ``resources/subscribe`` whose bytes changed, appeared or vanished (PUSH-03, PUSH-04).
  The middleware answers ``resources/subscribe`` and ``resources/unsubscribe`` itself (keeping the
  URIs per connection in :class:`~skills_core.server._subscriptions.Subscriptions`; the server's
  own handler, if it has one, keeps the URIs of other schemes), and puts
  ``resources: {listChanged: true, subscribe: true}`` into the ``initialize`` result whatever
  ``NotificationOptions`` the embedder passed. The notifications go on the connection's
  standalone channel (the stdio pipe; over Streamable HTTP the session's ``GET`` stream, dropped
  by the SDK when the client has none open). The SDK has no public way from a request to its
  connection; the publisher reaches it as ``ctx.session._connection`` (mcp 2.3.x, pinned), keeps it
  in a dictionary, and forgets it through the connection's ``exit_stack`` when it closes.
* **2026-07-28**: the SDK carries the ``subscriptions/listen`` streams itself
  (``mcp.server.subscriptions.ListenHandler``: acknowledgement, ``subscriptionId`` stamping,
  per-stream filtering; over stdio and Streamable HTTP alike), fed from a ``SubscriptionBus``. The
  publisher publishes ``ResourcesListChanged`` and one ``ResourceUpdated`` per touched URI on that
  bus. :func:`add_skills` registers a ``ListenHandler`` over a fresh ``InMemorySubscriptionBus``
  when the server serves no ``subscriptions/listen`` yet (the SDK then declares
  ``resources.listChanged`` and ``resources.subscribe`` in ``server/discover``); a server that
  already serves it (``MCPServer`` does) must pass its bus as ``bus=``. What stays the SDK's there:
  it honors every kind asked for (``toolsListChanged`` and ``promptsListChanged`` too, where
  ``serve`` honors only the resource kinds), ends a stream whose client stops reading after 1024
  waiting events, and ends the streams gracefully (PUSH-08) only when told:
  :meth:`ChangePublisher.close` does that for the handler :func:`add_skills` registered.

**The timer.** :func:`add_skills` wraps ``server.lifespan`` (entered by ``Server.run`` for each
stdio connection and once by the Streamable HTTP session manager) so that while it is entered a
task runs :meth:`ChangePublisher.run`: a :class:`~skills_core.server.changes.ChangePacer` shared by
every run of the server (so several lifespans entered at once still make one look per ``ttlMs``),
holding a change for its window and keeping two announcements ``ttlMs`` apart (PUSH-05). The task
is cancelled when the lifespan exits: the timer stops with the server. ``add_skills(...,
watch=False)`` leaves the lifespan alone; the embedder then runs ``await publisher.run()`` in a
task of its own, or calls ``await publisher.notify_changes()`` when it knows the source changed
(each call looks at once and publishes what changed; a look that finds no entry changed sends
nothing). A change goes to all legacy connections at once, each given :data:`SEND_TIMEOUT`
seconds: a client that does not read misses that change and delays no one else's notifications
(only the next look, by that much at most).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final, final

try:
    import anyio
    from mcp.server.connection import Connection
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
    from mcp.server.lowlevel.server import Server
    from mcp.server.subscriptions import (
        InMemorySubscriptionBus,
        ListenHandler,
        ResourcesListChanged,
        ResourceUpdated,
        SubscriptionBus,
    )
    from mcp.shared.exceptions import MCPError
    from mcp_types import SubscriptionsListenRequestParams
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    from pydantic import BaseModel, ConfigDict
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without site-packages
    raise ImportError(
        "skills_core.adapters.mcp_server needs the official MCP Python SDK: "
        "pip install 'mcp>=2.3,<2.4' (or, where skills-core itself is installed, "
        "pip install 'skills-core[mcp]')"
    ) from exc

from ..jsonrpc import EncodedResult, ErrorObject
from ..jsonvalue import JSONValue, loads_strict
from ..server._subscriptions import LISTEN, SUBSCRIBE, UNSUBSCRIBE, Subscriptions
from ..server.changes import ChangePacer, SkillChanges
from ..server.handler import PendingRead, SkillsServer
from ..server.paths import DEFAULT_SCHEME
from ..server_stream import DEFAULT_DEFER_READS_OVER
from ..spec import EXTENSION_ID, LEGACY_PROTOCOL_VERSION, SUPPORTED_LEGACY_VERSIONS, Method

__all__ = ["add_skills", "ChangePublisher", "SEND_TIMEOUT"]

#: Seconds one client is given to take the notifications of one change (a client that does not
#: read its pipe or stream then misses them; the others are sent to meanwhile).
SEND_TIMEOUT: Final = 5.0


class _RawParams(BaseModel):
    """Params the SDK passes through unvalidated: the core checks them (our errors, our codes)."""

    model_config = ConfigDict(extra="allow")


def _legacy_version(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The legacy version to answer ``ctx`` in, or None when the SDK negotiated no handshake.

    Once the SDK has recorded ``initialize`` on the connection it negotiated one of its handshake
    versions. The core's own legacy versions are passed as they are; any other (``2024-11-05``,
    which the SDK accepts and the core does not list) is answered in the 2025-11-25 shapes. That is
    sound: the SDK itself validates and writes every pre-2026 version with its 2025-11-25 schema,
    the skills methods belong to the extension rather than to a base revision, and the legacy
    ``resources/*`` results carry only members 2024-11-05 defines (``uri``, ``name``,
    ``description``, ``mimeType``, ``size``, ``annotations``; ``text`` or ``blob``).
    """
    version = ctx.protocol_version
    if version in MODERN_PROTOCOL_VERSIONS or ctx.session.client_params is None:
        return None
    return version if version in SUPPORTED_LEGACY_VERSIONS else LEGACY_PROTOCOL_VERSION


async def _answer(
    skills: SkillsServer, ctx: ServerRequestContext[Any, Any]
) -> dict[str, JSONValue]:
    """Our core's answer to the request in ``ctx``; an error answer is raised as ``MCPError``.

    A read of a file larger than :data:`~skills_core.adapters.DEFAULT_DEFER_READS_OVER` is read
    and encoded in a worker thread (``anyio.to_thread``), so the SDK's event loop keeps answering
    other requests meanwhile.
    """
    params: dict[str, JSONValue] = dict(ctx.params) if ctx.params else {}
    answer = skills.answer(
        ctx.method,
        params,
        legacy_version=_legacy_version(ctx),
        defer_reads_over=DEFAULT_DEFER_READS_OVER,
    )
    if isinstance(answer, PendingRead):
        answer = await anyio.to_thread.run_sync(answer.complete)
    if isinstance(answer, ErrorObject):
        raise MCPError(answer.code, answer.message, answer.data)
    if isinstance(answer, EncodedResult):  # a read served again: the SDK writes dicts
        result = loads_strict(answer.json)
        assert isinstance(result, dict)
        return result
    return answer


def _connection(ctx: ServerRequestContext[Any, Any]) -> Connection | None:
    """The SDK connection ``ctx`` came in on (mcp 2.3.x keeps it as ``ServerSession._connection``;
    there is no public way), or None when the SDK no longer keeps it there."""
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


@final
class ChangePublisher:
    """Tells the clients of one ``mcp`` server that the skills changed (see the module docstring).

    Made and returned by :func:`add_skills`; not constructed directly.

    Attributes:
        bus: The ``SubscriptionBus`` the 2026-07-28 listen streams are fed from.
        skills: The skills server whose catalog is watched.
    """

    __slots__ = ("_connections", "_listen_handler", "_pacer", "bus", "skills")

    def __init__(
        self, skills: SkillsServer, bus: SubscriptionBus, listen_handler: ListenHandler | None
    ) -> None:
        self.skills = skills
        self.bus = bus
        self._listen_handler = listen_handler
        self._pacer = ChangePacer(interval=skills.options.ttl_ms / 1000)
        # id(connection) -> (connection, what it subscribed to): the legacy connections.
        self._connections: dict[int, tuple[Connection, Subscriptions]] = {}

    @property
    def connections(self) -> int:
        """How many 2025-11-25 connections are told of changes now."""
        return len(self._connections)

    def subscriptions(self, ctx: ServerRequestContext[Any, Any]) -> Subscriptions | None:
        """The legacy connection of ``ctx``, registered for change notifications from now on
        (once: an entry removed when the connection closes); None when its connection is
        unknown."""
        connection = _connection(ctx)
        if connection is None:
            return None
        key = id(connection)
        known = self._connections.get(key)
        if known is not None and known[0] is connection:
            return known[1]
        subscriptions = Subscriptions()
        subscriptions.legacy = True
        self._connections[key] = (connection, subscriptions)

        def forget() -> None:
            if self._connections.get(key, (None,))[0] is connection:
                del self._connections[key]

        connection.exit_stack.callback(forget)
        return subscriptions

    async def publish(self, change: SkillChanges) -> None:
        """Send ``change`` to every client: each 2025-11-25 connection's notifications, sent to
        all at once (at most :data:`SEND_TIMEOUT` seconds each), and the events of the 2026-07-28
        listen streams on :attr:`bus`. An empty change sends nothing."""
        if not change:
            return
        async with anyio.create_task_group() as group:
            for connection, subscriptions in list(self._connections.values()):
                messages = subscriptions.messages(change)
                if messages:
                    group.start_soon(_send, connection, messages)
        await self.bus.publish(ResourcesListChanged())
        for uri in change.resources:
            await self.bus.publish(ResourceUpdated(uri=uri))

    async def notify_changes(self) -> SkillChanges | None:
        """Look at the source now and publish what changed since the last change published.

        Unpaced (the embedder's call: after a deploy, a ``git pull``, a webhook): the look itself
        is still at most once per ``ttlMs`` (:meth:`SkillsServer.changes
        <skills_core.server.SkillsServer.changes>`). Returns the change, or None when no entry
        changed (then nothing is sent).
        """
        change = self.skills.changes()
        if change is not None:
            await self.publish(change)
        return change

    async def run(self) -> None:
        """Look for changes every ``ttlMs`` and publish them, paced, until cancelled.

        What the lifespan task of :func:`add_skills` runs (unless ``watch=False``). Runs of one
        publisher share its pacer: several at once make one look per interval.
        """
        pacer, skills = self._pacer, self.skills
        while True:
            now = anyio.current_time()
            if pacer.look_due(now) and pacer.looked(now, moved=skills.moved()):
                change = skills.changes()
                if change is not None:
                    await self.publish(change)
            await anyio.sleep(max(0.0, pacer.next_wakeup() - anyio.current_time()))

    def close(self) -> None:
        """End the 2026-07-28 listen streams gracefully (PUSH-08): each gets its result once its
        handler has sent what it holds. Only the ``ListenHandler`` :func:`add_skills` registered;
        a server that brought its own bus closes its own handler."""
        if self._listen_handler is not None:
            self._listen_handler.close()


async def _send(connection: Connection, messages: list[dict[str, JSONValue]]) -> None:
    with anyio.move_on_after(SEND_TIMEOUT):
        for message in messages:
            method = message["method"]
            assert isinstance(method, str)
            params = message.get("params")
            await connection.notify(method, params if isinstance(params, dict) else None)


def _with_timer(
    server: Server[Any], publisher: ChangePublisher
) -> Callable[[Server[Any]], AbstractAsyncContextManager[Any]]:
    """``server.lifespan``, running ``publisher.run()`` while it is entered."""
    inner = server.lifespan

    @asynccontextmanager
    async def lifespan(app: Server[Any]) -> AsyncIterator[Any]:
        async with inner(app) as state, anyio.create_task_group() as group:
            group.start_soon(publisher.run)
            try:
                yield state
            finally:
                group.cancel_scope.cancel()

    return lifespan


def add_skills(
    server: Server[Any],
    skills: SkillsServer,
    *,
    bus: SubscriptionBus | None = None,
    watch: bool = True,
) -> ChangePublisher:
    """Serve ``skills``' catalog from ``server`` (see the module docstring for what goes where).

    Call it before ``server.create_initialization_options()`` and before serving. Give ``skills``
    the same ``server_info`` as ``server`` so that every modern result names the same server.

    Args:
        server: An ``mcp`` low-level server (``mcp.server.lowlevel.Server``).
        skills: The skills server whose catalog to publish.
        bus: The bus of the server's own ``subscriptions/listen`` handler, when it has one
            (required then); None registers a ``ListenHandler`` over a new in-memory bus.
        watch: Run the change timer while the server's lifespan is entered (the default); False
            leaves it to the embedder (:meth:`ChangePublisher.run`, :meth:`notify_changes
            <ChangePublisher.notify_changes>`).

    Returns:
        The publisher that tells the server's clients of changes.

    Raises:
        ValueError: ``server`` already serves ``subscriptions/listen`` and ``bus`` is None.
    """
    listen_handler: ListenHandler | None = None
    if server.get_request_handler(LISTEN) is None:
        if bus is None:
            bus = InMemorySubscriptionBus()
        listen_handler = ListenHandler(bus)
        server.add_request_handler(LISTEN, SubscriptionsListenRequestParams, listen_handler)
    elif bus is None:
        raise ValueError(
            "the server already serves subscriptions/listen: pass the SubscriptionBus its "
            "handler listens to as add_skills(server, skills, bus=...), so that skill changes "
            "reach its streams"
        )
    publisher = ChangePublisher(skills, bus, listen_handler)
    if watch:
        server.lifespan = _with_timer(server, publisher)

    # resources/directory/read is ours even when not implemented: the core answers -32601 (ERR-05).
    ours: set[str] = {Method.SKILLS_LIST, Method.SKILLS_GET, Method.RESOURCES_DIRECTORY_READ}
    if server.get_request_handler(Method.RESOURCES_LIST) is None:
        ours |= {Method.RESOURCES_LIST, Method.RESOURCES_TEMPLATES_LIST}

        async def handle(ctx: ServerRequestContext[Any, Any], params: _RawParams) -> HandlerResult:
            return await _answer(skills, ctx)  # pragma: no cover - the middleware answers first

        # The SDK declares the resources capability only when resources/list has a handler
        # (Server.get_capabilities), and a host does not use the extension without it.
        server.add_request_handler(Method.RESOURCES_LIST, _RawParams, handle)
    shared_read = server.get_request_handler(Method.RESOURCES_READ) is not None
    if not shared_read:
        ours.add(Method.RESOURCES_READ)
    shared_subscribe = server.get_request_handler(SUBSCRIBE) is not None
    if not shared_subscribe:

        async def subscribe(
            ctx: ServerRequestContext[Any, Any], params: _RawParams
        ) -> HandlerResult:
            return {}  # pragma: no cover - the middleware answers first

        # Declares resources.subscribe in a legacy initialize built from the server's options.
        server.add_request_handler(SUBSCRIBE, _RawParams, subscribe)
        server.add_request_handler(UNSUBSCRIBE, _RawParams, subscribe)
    # The built-in sources publish "<scheme>://" URIs (TreeSource.scheme); "skill" by default.
    scheme = f"{getattr(skills.source, 'scheme', DEFAULT_SCHEME)}:"

    extension = skills.capabilities()["extensions"]
    assert isinstance(extension, dict)
    settings = extension[EXTENSION_ID]
    assert isinstance(settings, dict)
    server.extensions[EXTENSION_ID] = dict(settings)

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method = ctx.method
        if method in ours:
            return await _answer(skills, ctx)
        if method == Method.RESOURCES_READ and shared_read:
            uri = (ctx.params or {}).get("uri")
            if isinstance(uri, str) and uri.startswith(scheme):
                return await _answer(skills, ctx)
            return await call_next(ctx)  # another scheme: the server's own resource
        if method in (SUBSCRIBE, UNSUBSCRIBE) and _legacy_version(ctx) is not None:
            uri = (ctx.params or {}).get("uri")
            if not shared_subscribe or (isinstance(uri, str) and uri.startswith(scheme)):
                subscriptions = publisher.subscriptions(ctx)
                if subscriptions is None:  # pragma: no cover - an SDK that hides its connection
                    return await call_next(ctx)
                answer = subscriptions.subscribe(method, dict(ctx.params or {}))
                if isinstance(answer, ErrorObject):
                    raise MCPError(answer.code, answer.message, answer.data)
                return answer
        result = await call_next(ctx)
        if _legacy_version(ctx) is not None:  # initialized: told of changes from now on (PUSH-03)
            publisher.subscriptions(ctx)
        if method != Method.INITIALIZE or not isinstance(result, dict):
            return result
        capabilities = result.get("capabilities")
        assert isinstance(capabilities, dict)  # the SDK's InitializeResult always has them
        extensions = dict(capabilities.get("extensions") or {})
        extensions[EXTENSION_ID] = dict(settings)
        resources = dict(capabilities.get("resources") or {})
        resources.update(listChanged=True, subscribe=True)  # PUSH-01
        return {
            **result,
            "capabilities": {**capabilities, "extensions": extensions, "resources": resources},
        }

    server.middleware.append(middleware)
    return publisher
