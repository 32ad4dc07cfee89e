"""The ASGI callable: a request's I/O around the checks and the server's one request path.

Theory of operation: :class:`SkillsApp` is everything of Streamable HTTP that waits or touches the
outside world; the rules are :mod:`skills_core.adapters._http_checks`'. Per ``http`` scope it
asks the checks about the request line and headers (rungs 1-7), reads the body within its size
and time bounds, asks the checks about the body (rung 8, the era, the routing headers, the
session), asks the server, and sends one complete answer: ``http.response.start`` with a
``Content-Length``, then one ``http.response.body``. The server is asked directly
(:meth:`~skills_core.server.SkillsServer.answer`, in the legacy version the session carries): an
HTTP request needs no per-client connection object. A read of a large file comes back unread and
is read and encoded in a worker thread, so the event loop keeps serving other requests meanwhile.

**Reads that arrive together share a look.** A ``resources/read`` whose body is in takes a receipt
from the server (:meth:`~skills_core.server.SkillsServer.receipt`) and then lets the event loop
run once before it is answered (``asyncio.sleep(0)``; a checkpoint under trio). The requests whose
bodies came in meanwhile take their receipts too; the first of them to be answered looks at the
file, and the others are answered from that look, which was made after each of them arrived (the
rule a stream follows for the requests of one chunk: see :mod:`skills_core.server.handler`). So an
edit shows in the answer to every request that arrived after it, and a busy server looks at a
file about once per turn of its event loop instead of once per request (a look is two system
calls and the bookkeeping around them: a quarter of the cost of a small read under uvicorn
here). The receipt is taken only once the body is in, never when the headers are: a request whose
body was still on its way when another request looked is answered from a later look. A request
alone pays one pass of the event loop for this (1.2 µs under uvloop here, 2.5 µs under asyncio's
own loop).

The body deadline costs no timer per request under asyncio (see :class:`_Deadlines`); under trio
(hypercorn's trio worker) it is a cancel scope.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final, TypeAlias, TypeVar, final

from ..jsonrpc import Answer
from ..server.handler import PendingRead, SkillsServer
from ..spec import Method
from ._core import DEFAULT_DEFER_READS_OVER
from ._http_checks import (
    Call,
    Head,
    HttpChecks,
    Reply,
    encode_answer,
    text_reply,
)
from ._http_options import HttpOptions, Scope
from ._http_session import SessionCodec

__all__ = ["Message", "Receive", "Send", "SkillsApp"]

#: An ASGI event (a ``dict``).
Message: TypeAlias = MutableMapping[str, Any]
#: The ASGI ``receive`` and ``send`` callables.
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]

_RESOURCES_READ: Final = Method.RESOURCES_READ.value
_TOO_SLOW: Final = "Request Timeout: the body did not arrive in time"
_TOO_LARGE: Final = "Content Too Large: the body is over the limit"
_T = TypeVar("_T")


@final
class SkillsApp:
    """An ASGI 3 application serving a :class:`~skills_core.server.SkillsServer` over HTTP.

    Example:
        >>> import os
        >>> from skills_core.adapters.asgi import derive_key
        >>> from skills_core.server import server_from_roots
        >>> secret = os.urandom(32)
        >>> server = server_from_roots(["."], cursor_key=derive_key(secret, "cursor"))  # doctest: +SKIP
        >>> app = SkillsApp(server, session_key=derive_key(secret, "session"))  # doctest: +SKIP
    """

    __slots__ = ("_cap", "_checks", "_deadlines", "_server", "_timeout")

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
        options = options if options is not None else HttpOptions()
        self._server = server
        self._checks = HttpChecks(options, SessionCodec(session_key), _seconds)
        self._cap = options.max_body_bytes
        self._timeout = options.body_timeout
        self._deadlines = _Deadlines(options.body_timeout)

    @property
    def server(self) -> SkillsServer:
        """The skills server."""
        return self._server

    @property
    def options(self) -> HttpOptions:
        """The HTTP settings."""
        return self._checks.options

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point: ``http`` and ``lifespan`` scopes (a WebSocket is refused)."""
        if scope["type"] != "http":
            await _other(scope, receive, send)
            return
        checks = self._checks
        reply = checks.head(scope)
        if type(reply) is Head:
            head = reply
            loop: asyncio.AbstractEventLoop | None
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not asyncio: trio (hypercorn's trio worker)
                loop = None
                body = await _read_body_under_trio(receive, self._cap, self._timeout)
            else:
                body = await self._deadlines.read(loop, receive, self._cap)
            if isinstance(body, Reply):  # too large, or too slow
                body.cors = head.cors
                reply = body
            elif body is None:  # the client left, and nobody is there to answer
                return
            else:
                verdict = checks.body(head, body, scope)
                if type(verdict) is Call:
                    call = verdict
                    server = self._server
                    received = None
                    if call.method == _RESOURCES_READ:  # share a look: see the module docstring
                        received = server.receipt()
                        if loop is not None:
                            await asyncio.sleep(0)
                        else:
                            await _trio_checkpoint()
                    answer = server.answer(
                        call.method,
                        call.params,
                        legacy_version=call.legacy_version,
                        defer_reads_over=DEFAULT_DEFER_READS_OVER,
                        received=received,
                    )
                    if type(answer) is PendingRead:  # a large file: read and encode off the loop
                        read = answer
                        encoded = await _in_worker_thread(
                            lambda: encode_answer(call.id, read.complete())
                        )
                    else:
                        encoded = encode_answer(call.id, answer)
                    verdict = self._answered(call, answer, *encoded)
                reply = verdict
        assert type(reply) is Reply
        content = reply.body
        headers = [(b"content-type", reply.content_type), (b"content-length", b"%d" % len(content))]
        if reply.headers:
            headers += reply.headers
        if reply.cors is not None:
            headers += [
                (b"access-control-allow-origin", reply.cors),
                (b"access-control-expose-headers", b"mcp-session-id"),
                (b"vary", b"origin"),
            ]
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    def _answered(
        self, call: Call, answer: Answer | PendingRead, data: bytes, code: int | None
    ) -> Reply:
        """The reply carrying the server's ``answer`` to ``call``, encoded to ``data``."""
        if not call.initialize:
            return self._checks.answered(call, data, code)
        negotiated = answer.get("protocolVersion") if type(answer) is dict else None
        return self._checks.answered(
            call,
            data,
            code,
            negotiated=negotiated if isinstance(negotiated, str) else None,
            nonce=os.urandom(16),
        )


def _seconds() -> int:
    return int(time.time())


async def _in_worker_thread(work: Callable[[], _T]) -> _T:
    """Run ``work`` in a worker thread of the running event loop (asyncio, or trio)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not asyncio: trio (hypercorn's trio worker)
        import trio  # noqa: PLC0415 - only under trio, which is then installed

        return await trio.to_thread.run_sync(work)
    return await asyncio.to_thread(work)


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
    ) -> bytes | Reply | None:
        """The whole body; a 413/408 reply when it is over ``cap`` or slow; None if the client left."""
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
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                body: bytes = message.get("body", b"")  # the whole body at once: the usual case
                return body if len(body) <= cap else text_reply(413, _TOO_LARGE)
            return await _receive_rest(receive, cap, message)
        except asyncio.CancelledError:
            if task not in self._expired:
                raise  # the ASGI server's cancellation, not ours
            task.uncancel()
            return text_reply(408, _TOO_SLOW)
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


async def _trio_checkpoint() -> None:
    import trio  # noqa: PLC0415 - only under trio, which is then installed

    await trio.lowlevel.checkpoint()


async def _read_body_under_trio(receive: Receive, cap: int, timeout: float) -> bytes | Reply | None:
    import trio  # noqa: PLC0415 - only under trio, which is then installed

    with trio.move_on_after(timeout):
        return await _receive_rest(receive, cap, await receive())
    return text_reply(408, _TOO_SLOW)


async def _receive_rest(receive: Receive, cap: int, message: Message) -> bytes | Reply | None:
    """The body that starts with ``message``: its chunks joined, 413 past ``cap``, None if the
    client left (``http.disconnect``: nobody is there to answer)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        if message["type"] != "http.request":
            return None
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            return text_reply(413, _TOO_LARGE)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)
        message = await receive()


async def _other(scope: Scope, receive: Receive, send: Send) -> None:
    """Scopes other than ``http``: lifespan is acknowledged, a WebSocket refused."""
    kind = scope["type"]
    if kind == "lifespan":
        # Nothing to start or stop: the server is built before the app, and holds no resources
        # to release. Acknowledging both lets an ASGI server that insists on lifespan run it.
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    elif kind == "websocket":
        await receive()  # websocket.connect
        await send({"type": "websocket.close", "code": 1003})
