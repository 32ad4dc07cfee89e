"""Change notifications over Streamable HTTP: one worker's event streams and its change timer.

Theory of operation
-------------------
The sans-IO parts are the server's (:meth:`SkillsServer.changes
<skills_core.server.SkillsServer.changes>`, :class:`~skills_core.server.changes.ChangePacer`) and
each client's :class:`~skills_core.server._subscriptions.Subscriptions`; this module is their I/O
in an ASGI worker (asyncio only: under trio the app answers a stream request 405/-32601 as
before).

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
pacer, so a worker with no stream does no extra work. A change is computed once per worker, and
each stream then costs the bytes of its notifications. A stream whose client does not take its
events stops growing at :data:`MAX_QUEUED` events: it is ended, and the client re-lists when it
reconnects.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final, final

from ..http.server import Call, StreamCall, encode_answer
from ..jsonrpc import ErrorObject, JSONObject
from ..server._subscriptions import Subscriptions
from ..server.changes import ChangePacer
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


@final
class _Stream:
    __slots__ = ("queue", "subscriptions")

    def __init__(self, subscriptions: Subscriptions) -> None:
        self.subscriptions = subscriptions
        self.queue: asyncio.Queue[bytes | object] = asyncio.Queue()


@final
class PushHub:
    """One worker's event streams and change timer; see the module docstring."""

    __slots__ = ("__weakref__", "_closing", "_server", "_sessions", "_streams", "_timer")

    def __init__(self, server: Callable[[], SkillsServer]) -> None:
        """Serve the streams of the server ``server()`` returns (asked each time: an app that
        loads its server in a thread swaps it in once made)."""
        self._server = server
        self._streams: set[_Stream] = set()
        self._sessions: OrderedDict[str, Subscriptions] = OrderedDict()
        self._timer: asyncio.Task[None] | None = None
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
        info = self._server().options.server_info.to_json()
        for stream in list(self._streams):
            for listen_id, result in stream.subscriptions.close(info):
                body, _ = encode_answer(listen_id, result)
                stream.queue.put_nowait(b"event: message\ndata: " + body.rstrip(b"\n") + b"\n\n")
            stream.queue.put_nowait(_END)

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
        if self._closing:
            self._streams.add(stream := _Stream(subscriptions))
            self.close()
        else:
            stream = _Stream(subscriptions)
            self._streams.add(stream)
            self._start_timer()
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            while True:
                getting = asyncio.ensure_future(stream.queue.get())
                done, _ = await asyncio.wait(
                    {getting, gone}, timeout=KEEPALIVE, return_when=asyncio.FIRST_COMPLETED
                )
                if gone in done:
                    getting.cancel()
                    return
                if getting not in done:
                    getting.cancel()
                    await send(
                        {
                            "type": "http.response.body",
                            "body": b": keepalive\n\n",
                            "more_body": True,
                        }
                    )
                    continue
                item = getting.result()
                if item is _END:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
                assert isinstance(item, bytes)
                await send({"type": "http.response.body", "body": item, "more_body": True})
        finally:
            gone.cancel()
            self._streams.discard(stream)

    def _start_timer(self) -> None:
        if self._timer is None or self._timer.done():
            self._timer = asyncio.ensure_future(self._run_timer())

    async def _run_timer(self) -> None:
        server = self._server()
        pacer = ChangePacer(interval=server.options.ttl_ms / 1000)
        loop = asyncio.get_running_loop()
        while self._streams and not self._closing:
            now = loop.time()
            if pacer.look_due(now) and pacer.looked(now, moved=server.moved()):
                change = server.changes()
                if change is not None:
                    for stream in list(self._streams):
                        messages = stream.subscriptions.messages(change)
                        if stream.queue.qsize() + len(messages) > MAX_QUEUED:
                            stream.queue.put_nowait(_END)  # a client that takes nothing
                            continue
                        for message in messages:
                            stream.queue.put_nowait(_event(message))
            await asyncio.sleep(max(0.0, pacer.next_wakeup() - loop.time()))


async def _disconnected(receive: _Receive) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return
