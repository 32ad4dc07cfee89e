"""Change notifications over Streamable HTTP: one worker's event streams and its change timer.

Theory of operation
-------------------
The sans-IO parts are the server's (:meth:`SkillsServer.changes
<skills_core.server.SkillsServer.changes>`, :class:`~skills_core.server.changes.ChangePacer`) and
each client's :class:`~skills_core.server._subscriptions.Subscriptions`; this module is their I/O
in an ASGI worker, under asyncio (uvicorn, hypercorn's asyncio worker) and under trio
(hypercorn's trio worker) alike: only the waiting differs, and trio is imported only when it is
the running loop.

**Two kinds of stream.** A 2025-11-25 session's ``GET`` (with its ``Mcp-Session-Id``) opens the
session's stream: ``notifications/resources/list_changed`` on every change (PUSH-03), and
``notifications/resources/updated`` for the URIs the session subscribed to (PUSH-04). A
2026-07-28 ``POST`` of ``subscriptions/listen`` is answered with a stream: the acknowledgement,
then the notifications its filter asked for, tagged with its id (PUSH-06, PUSH-07), and, when the
server shuts down, the listen request's result (PUSH-08). Both are ``text/event-stream``; each
event is one JSON-RPC message (``event: message``), with a comment every
:data:`KEEPALIVE` seconds so that proxies keep the connection.

**Sessions are signed, streams live on a worker** (the choice the stateless sessions leave): a
legacy session's stream is held by the worker that received its ``GET``, and so are its
``resources/subscribe`` URIs, kept per session id by the worker that received the ``subscribe``
(at most :data:`MAX_SESSIONS` sessions, oldest out). With one worker (the default of
``serve --http``) that is the whole server; behind several workers or replicas, a client must
reach one worker for both (sticky routing), or it gets ``list_changed`` only. Nothing is shared
between workers: each looks at the source for itself, as it does for listings.

**The timer** runs while any stream is open, looking every ``ttlMs`` (at least 0.1 s) through the
pacer, so a worker with no stream does no extra work: an asyncio task, or under trio a system
task (``trio.lowlevel.spawn_system_task``: it belongs to no request, as the asyncio task does
not). A change is computed once per worker, and each stream then costs the bytes of its
notifications. A stream whose client does not take its events stops growing at
:data:`MAX_QUEUED` events: it is ended, and the client re-lists when it reconnects. A source
that fails ends the timer and every stream (their clients reconnect); the next stream starts it
again.

**Streams end at shutdown.** :func:`end_all_streams` ends every stream as the drain begins
(:mod:`skills_core.adapters.uvicorn_http` calls it): a listen stream gets its result first
(PUSH-08). An ASGI server that tells the app nothing when its drain begins (hypercorn, either
worker) cancels the stream's request at its graceful timeout instead; the stream then sends what
is queued, its listen results and the end of its body, within :data:`CLOSE_GRACE` seconds, and
lets the cancellation go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import weakref
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final, Protocol, final

from ..http.server import Call, StreamCall, encode_answer
from ..jsonrpc import ErrorObject, JSONObject
from ..server._subscriptions import Subscriptions
from ..server.changes import ChangePacer, SkillChanges
from ..server.handler import SkillsServer

__all__ = ["PushHub", "end_all_streams", "KEEPALIVE", "MAX_QUEUED", "MAX_SESSIONS"]

_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]

#: Seconds between two keep-alive comments on an idle stream.
KEEPALIVE: Final = 25.0
#: Events a stream may have waiting for a slow client before it is ended.
MAX_QUEUED: Final = 64
#: Legacy sessions whose subscribed URIs a worker keeps.
MAX_SESSIONS: Final = 10_000
#: Seconds a stream the ASGI server cancels is given to send its listen results and its end.
CLOSE_GRACE: Final = 1.0

_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
_END: Final = object()

#: Every hub of this process, for :func:`end_all_streams` (the ASGI server's shutdown).
_HUBS: weakref.WeakSet[PushHub] = weakref.WeakSet()


def end_all_streams() -> None:
    """End every open stream of this process gracefully (the ASGI server is shutting down)."""
    for hub in list(_HUBS):
        hub.close()


def _event(message: JSONObject) -> bytes:
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return b"event: message\ndata: " + data.encode("utf-8") + b"\n\n"


def _under_trio() -> bool:
    """Whether the running event loop is trio's (hypercorn's trio worker), not asyncio's."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


class _Wakeup(Protocol):
    """``asyncio.Event`` or ``trio.Event``: what a stream waits on for its next event."""

    def set(self) -> None: ...

    async def wait(self) -> object: ...


@final
class _Stream:
    """One open stream: its client's subscriptions and the events waiting to be sent."""

    __slots__ = ("_new_wakeup", "_wakeup", "ended", "items", "subscriptions")

    def __init__(self, subscriptions: Subscriptions, new_wakeup: Callable[[], _Wakeup]) -> None:
        self.subscriptions = subscriptions
        self.items: deque[bytes | object] = deque()
        #: True once :data:`_END` is queued: nothing more is.
        self.ended = False
        self._new_wakeup = new_wakeup
        self._wakeup: _Wakeup | None = None

    def put(self, item: bytes | object) -> None:
        if self.ended:
            return
        self.ended = item is _END
        self.items.append(item)
        if self._wakeup is not None:
            self._wakeup.set()

    async def ready(self) -> None:
        """Wait until an item is queued."""
        while not self.items:
            self._wakeup = self._new_wakeup()  # a trio.Event is never cleared: a new one each time
            await self._wakeup.wait()
        self._wakeup = None


@final
class PushHub:
    """One worker's event streams and change timer; see the module docstring."""

    __slots__ = ("__weakref__", "_closing", "_server", "_sessions", "_streams", "_timer", "_timing")

    def __init__(self, server: Callable[[], SkillsServer]) -> None:
        """Serve the streams of the server ``server()`` returns (asked each time: an app that
        loads its server in a thread swaps it in once made)."""
        self._server = server
        self._streams: set[_Stream] = set()
        self._sessions: OrderedDict[str, Subscriptions] = OrderedDict()
        self._timer: asyncio.Task[None] | None = None  # held: asyncio keeps only weak references
        self._timing = False
        self._closing = False
        _HUBS.add(self)

    def subscribe(self, call: Call) -> JSONObject | ErrorObject:
        """Answer a legacy ``resources/(un)subscribe``: the session's URIs, on this worker."""
        subscriptions = self._session(call.session)
        return subscriptions.subscribe(call.method, call.params or {})

    def _session(self, session: str) -> Subscriptions:
        sessions = self._sessions
        subscriptions = sessions.get(session)
        if subscriptions is None:
            subscriptions = Subscriptions()
            subscriptions.legacy = True
            sessions[session] = subscriptions
            if len(sessions) > MAX_SESSIONS:
                sessions.popitem(last=False)
        else:
            sessions.move_to_end(session)
        return subscriptions

    async def legacy_stream(self, call: StreamCall, receive: _Receive, send: _Send) -> None:
        """Serve a 2025-11-25 session's ``GET`` stream until the client leaves."""
        await self._stream(self._session(call.session), None, call.cors, receive, send)

    async def listen(self, call: Call, receive: _Receive, send: _Send) -> bool:
        """Serve a 2026-07-28 ``subscriptions/listen``; False when refused (answer it as usual)."""
        connection = self._server().connection()
        ack = connection.listen(call.id, call.params)
        if isinstance(ack, ErrorObject):
            return False
        await self._stream(connection.subscriptions, _event(ack), call.cors, receive, send)
        return True

    def close(self) -> None:
        """End every stream: listen streams get their result first (PUSH-08)."""
        self._closing = True
        for stream in list(self._streams):
            self._end(stream)

    def _end(self, stream: _Stream) -> None:
        """Queue the end of ``stream``: its listen results (PUSH-08), then the end of the body."""
        if stream.ended:
            return
        info = self._server().options.server_info.to_json()
        for listen_id, result in stream.subscriptions.close(info):
            body, _ = encode_answer(listen_id, result)
            stream.put(b"event: message\ndata: " + body.rstrip(b"\n") + b"\n\n")
        stream.put(_END)

    async def _stream(
        self,
        subscriptions: Subscriptions,
        first: bytes | None,
        cors: bytes | None,
        receive: _Receive,
        send: _Send,
    ) -> None:
        headers = list(_SSE_HEADERS)
        if cors is not None:
            headers += [(b"access-control-allow-origin", cors), (b"vary", b"Origin")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if first is not None:
            await send({"type": "http.response.body", "body": first, "more_body": True})
        trio_loop = _under_trio()
        stream = _Stream(subscriptions, _trio_event if trio_loop else asyncio.Event)
        self._streams.add(stream)
        if self._closing:
            self._end(stream)
        else:
            self._start_timer(trio_loop)
        try:
            if trio_loop:
                await self._serve_under_trio(stream, receive, send)
            else:
                await self._serve_under_asyncio(stream, receive, send)
        finally:
            self._streams.discard(stream)

    async def _serve_under_asyncio(self, stream: _Stream, receive: _Receive, send: _Send) -> None:
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            while True:
                getting = asyncio.ensure_future(stream.ready())
                try:
                    done, _ = await asyncio.wait(
                        {getting, gone}, timeout=KEEPALIVE, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    getting.cancel()
                if gone in done:
                    return
                if not await _send_next(stream, send, getting in done):
                    return
        except asyncio.CancelledError:
            # The ASGI server cancels the request (hypercorn at its graceful timeout): what is
            # queued, the listen results (PUSH-08) and the end of the body go first if they can.
            self._end(stream)
            with contextlib.suppress(TimeoutError, OSError):
                async with asyncio.timeout(CLOSE_GRACE):
                    while await _send_next(stream, send, True):
                        pass
            raise
        finally:
            gone.cancel()

    async def _serve_under_trio(self, stream: _Stream, receive: _Receive, send: _Send) -> None:
        import trio  # noqa: PLC0415 - only under trio, which is then installed

        left = False
        async with trio.open_nursery() as nursery:

            async def watch_disconnect() -> None:
                nonlocal left
                await _disconnected(receive)
                left = True
                nursery.cancel_scope.cancel()  # the client left: the stream ends

            nursery.start_soon(watch_disconnect)
            try:
                while True:
                    with trio.move_on_after(KEEPALIVE):
                        await stream.ready()
                    if not await _send_next(stream, send, bool(stream.items)):
                        break
            except trio.Cancelled:
                if not left:
                    # As under asyncio: hypercorn's trio worker cancels the request at its
                    # graceful timeout; the listen results (PUSH-08) go first if they can.
                    self._end(stream)
                    with (
                        trio.CancelScope(shield=True, deadline=trio.current_time() + CLOSE_GRACE),
                        contextlib.suppress(OSError, trio.BrokenResourceError),
                    ):
                        while await _send_next(stream, send, True):
                            pass
                raise
            nursery.cancel_scope.cancel()

    def _start_timer(self, trio_loop: bool) -> None:
        """Start this worker's change timer, unless it runs: an asyncio task, or under trio a
        system task (no request's nursery owns it; trio cancels it when the worker ends)."""
        if self._timing:
            return
        self._timing = True
        if trio_loop:
            import trio  # noqa: PLC0415 - only under trio, which is then installed

            trio.lowlevel.spawn_system_task(self._run_timer, trio.current_time, trio.sleep)
        else:
            loop = asyncio.get_running_loop()
            self._timer = asyncio.ensure_future(self._run_timer(loop.time, asyncio.sleep))

    async def _run_timer(
        self, clock: Callable[[], float], sleep: Callable[[float], Awaitable[None]]
    ) -> None:
        try:
            server = self._server()
            pacer = ChangePacer(interval=server.options.ttl_ms / 1000)
            while self._streams and not self._closing:
                now = clock()
                if pacer.look_due(now) and pacer.looked(now, moved=server.moved()):
                    change = server.changes()
                    if change is not None:
                        self._publish(change)
                await sleep(max(0.0, pacer.next_wakeup() - clock()))
        except Exception:  # noqa: BLE001 - a source that fails ends the timer, not the worker
            for stream in list(self._streams):
                self._end(stream)  # their clients reconnect, and re-list
        finally:
            self._timing = False

    def _publish(self, change: SkillChanges) -> None:
        for stream in list(self._streams):
            messages = stream.subscriptions.messages(change)
            if len(stream.items) + len(messages) > MAX_QUEUED:
                stream.put(_END)  # a client that takes nothing
                continue
            for message in messages:
                stream.put(_event(message))


def _trio_event() -> _Wakeup:
    import trio  # noqa: PLC0415 - only under trio, which is then installed

    return trio.Event()


async def _send_next(stream: _Stream, send: _Send, ready: bool) -> bool:
    """Send the stream's next event (a keep-alive comment when none is ready); False once the
    stream's end is sent or nothing is queued."""
    if not ready:
        await send({"type": "http.response.body", "body": b": keepalive\n\n", "more_body": True})
        return True
    if not stream.items:
        return False
    item = stream.items.popleft()
    if item is _END:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return False
    assert isinstance(item, bytes)
    await send({"type": "http.response.body", "body": item, "more_body": True})
    return True


async def _disconnected(receive: _Receive) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return
