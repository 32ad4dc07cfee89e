"""The ASGI callable: a request's I/O around the checks and the server's one request path.

Theory of operation: :class:`SkillsApp` is everything of Streamable HTTP that waits or touches the
outside world; the rules are :mod:`skills_core.http.server`'s. Per ``http`` scope it
asks the checks about the request line and headers (rungs 1-7), reads the body within its size
and time bounds, asks the checks about the body (rung 8, the era, the routing headers, the
session), asks the server, and sends the answer: ``http.response.start`` with a
``Content-Length``, then the body. The server is asked directly
(:meth:`~skills_core.server.SkillsServer.answer`, in the legacy version the session carries): an
HTTP request needs no per-client connection object. A read of a large file comes back unread and
is read and encoded in a worker thread, so the event loop keeps serving other requests meanwhile.

**Back-pressure** (the rule the stdio loop follows, see :mod:`skills_core.server_stream`): an
answer of at most :data:`~skills_core.http.options.LARGE_ANSWER_BYTES` goes out in one
body message. A larger one is *large*: it is sent in pieces of that size with ``more_body``, so the
ASGI server's flow control holds this coroutine while the client does not take them, and the ASGI
server keeps at most a piece or two of it. Large answers take turns (:class:`_Turns`): at most
``max_large_answers`` are made and sent at once (one made at a time), a read of a file read in a
worker thread takes its turn before the file is read, and up to ``large_answer_queue`` requests
wait for one (each holding its request, or for a smaller answer made on the loop, that answer);
past them a request gets 503 with ``Retry-After``. A turn is held until the answer is sent, so a
client that takes nothing must not keep it: each piece has ``send_timeout`` to be taken, else the
response is ended, its turn freed, and the app waits briefly for the ASGI server to close the
connection (uvicorn with :mod:`skills_core.adapters.uvicorn_http` aborts a connection whose writes
stall that long; another ASGI server closes it when the app returns with the response unfinished).
So a worker holds at most ``max_large_answers`` large answers whatever clients do.

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

**What an operator sees.** Beside the endpoint the app answers the probes ``/healthz``,
``/readyz`` and, when enabled, ``/metrics`` (:mod:`skills_core.http.probes`). Each request is
handed to the app's :class:`~skills_core.adapters._asgi_observe.Observer` when it arrives and
when it is over, which counts it and logs its line; the drain on SIGTERM is the ASGI server's
(:mod:`skills_core.adapters.uvicorn_http`), and a request it cancels past the graceful timeout
ends here quietly, never with a traceback. An app made with :meth:`SkillsApp.loading` answers at
once and scans its skills in a thread: ``/readyz`` is 503 until they are loaded, the handshake
(``initialize``, ``server/discover``, ``ping``) is answered at once, and other requests to the
endpoint wait for them.

The body deadline costs no timer per request under asyncio (see :class:`_Deadlines`); under trio
(hypercorn's trio worker) it is a cancel scope. Only large answers pay for a send deadline.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final, TypeAlias, TypeVar, final

from ..http.logs import ERROR, INFO
from ..http.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from ..http.options import LARGE_ANSWER_BYTES, HttpOptions, Scope
from ..http.probes import Probe
from ..http.server import (
    Call,
    Head,
    HttpChecks,
    Reply,
    StreamCall,
    encode_answer,
    text_reply,
)
from ..http.session import SessionCodec
from ..jsonrpc import Answer, ErrorObject
from ..server.catalog import Catalog
from ..server.handler import PendingRead, SkillsServer
from ..server.model import OmittedSkill, PublishedSkill
from ..server.options import ServerOptions
from ..server.source import MemorySource
from ..server_stream import DEFAULT_DEFER_READS_OVER
from ..spec import ErrorCode, Method
from ._asgi_observe import Exchange, Observer
from ._asgi_push import PushHub
from .loading import collector_paused_for_load

__all__ = ["Message", "Receive", "Send", "SkillsApp"]

#: An ASGI event (a ``dict``).
Message: TypeAlias = MutableMapping[str, Any]
#: The ASGI ``receive`` and ``send`` callables.
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]

_RESOURCES_READ: Final = Method.RESOURCES_READ.value
_LISTEN: Final = "subscriptions/listen"
#: Methods the push hub answers (streams, and a legacy session's subscriptions).
_PUSHED: Final = frozenset({_LISTEN, "resources/subscribe", "resources/unsubscribe"})
#: What a server answers from its options alone (see :meth:`SkillsApp.loading`).
_FRONT_METHODS: Final = frozenset(
    {Method.INITIALIZE.value, Method.SERVER_DISCOVER.value, Method.PING.value}
)
_TOO_SLOW: Final = "Request Timeout: the body did not arrive in time"
_TOO_LARGE: Final = "Content Too Large: the body is over the limit"
_STOPPING: Final = "Service Unavailable: the server is stopping; retry"
_LOADING: Final = "Service Unavailable: the skills are still loading; retry shortly"
_FAILED: Final = "Service Unavailable: the skills failed to load"
_BUSY: Final = "Service Unavailable: too many large answers are being sent; retry shortly"
#: ``Retry-After`` of that 503, in seconds: large answers take tens of milliseconds to make.
_RETRY_AFTER: Final = (b"retry-after", b"1")
#: Seconds the app waits, after ending a response whose client took nothing, for the ASGI server
#: to close the connection (uvicorn_http's protocol aborts it within a second of the same
#: deadline), so the response is not reported as left unfinished.
_CLOSE_GRACE: Final = 2.0
_INVALID_PARAMS: Final = ErrorCode.INVALID_PARAMS
_TEXT: Final = b"text/plain; charset=utf-8"
_NO_STORE: Final = ((b"cache-control", b"no-store"),)
#: Seconds a request to the endpoint waits for the skills of an app still loading them
#: (:meth:`SkillsApp.loading`) before it gets 503; and how often it looks.
LOAD_WAIT: Final = 30.0
_LOAD_POLL: Final = 0.05
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

    __slots__ = (
        "_cap",
        "_checks",
        "_deadlines",
        "_failure",
        "_load",
        "_load_started",
        "_loaded_guard",
        "_making",
        "_observer",
        "_push",
        "_send_timeout",
        "_server",
        "_then",
        "_timeout",
        "_turns",
        "_when_loaded",
    )

    def __init__(
        self,
        server: SkillsServer,
        *,
        session_key: bytes,
        options: HttpOptions | None = None,
        state_dir: str | None = None,
    ) -> None:
        """Serve ``server``.

        Args:
            server: The skills server; its ``cursor_key`` must be the same in every worker.
            session_key: Signs legacy session ids; the same in every worker (at least 16 bytes).
            options: HTTP settings; the defaults are the safe ones.
            state_dir: A private folder the workers of one server share, where each reports its
                counters for ``/metrics`` and the outcome of its drain (see
                :mod:`~skills_core.adapters._asgi_observe`); None for a single worker.

        Raises:
            ValueError: ``session_key`` is too short.
        """
        options = options if options is not None else HttpOptions()
        self._server = server
        self._observer = Observer(server, options, state_dir)
        self._checks = HttpChecks(options, SessionCodec(session_key), _seconds)
        self._cap = options.max_body_bytes
        self._timeout = options.body_timeout
        self._deadlines = _Deadlines(options.body_timeout)
        self._send_timeout = options.send_timeout
        self._turns = _Turns(options.max_large_answers, options.large_answer_queue)
        # Making the answer to a read of a 16 MiB file takes about 62 MB at its peak (the file,
        # its base64, the response around it), sending it 22.4 MB; the making is mostly work of
        # this process's interpreter, so making two at once gains little and costs a peak each.
        self._making = _Turns(1, options.max_large_answers)
        # Change notifications: event streams and their timer (see _asgi_push); the server is
        # asked for each time (loading() swaps it in once made).
        self._push = PushHub(lambda: self._server)
        #: Makes the server in a worker thread (:meth:`loading`), until it has; else None.
        self._load: Callable[[], SkillsServer] | None = None
        self._load_started = False
        #: What to do to the server once made, before it serves (:meth:`when_loaded`).
        self._when_loaded: list[Callable[[SkillsServer], None]] = []
        #: What to do once the server made in the loading thread serves (:meth:`loading`).
        self._then: Callable[[SkillsServer], None] | None = None
        self._loaded_guard = threading.Lock()
        #: Why making the server failed, or None.
        self._failure: str | None = None

    @classmethod
    def loading(
        cls,
        load: Callable[[], SkillsServer],
        *,
        session_key: bytes,
        options: HttpOptions | None = None,
        state_dir: str | None = None,
        then: Callable[[SkillsServer], None] | None = None,
        server_options: ServerOptions | None = None,
    ) -> SkillsApp:
        """An app that answers at once and makes its server (scans its skills) in a thread.

        The thread starts with the ASGI lifespan (or the first request, for a server that runs
        no lifespan). Until the server is made, ``/healthz`` answers 200 and ``/readyz`` 503;
        ``initialize``, ``server/discover`` and ``ping``, whose answers depend only on the
        server's options, are answered at once (by a server of ``server_options`` over no
        skills: the same answers); any other request to the MCP endpoint waits for the server
        (as it would in the listen queue of a worker that scans before it accepts), up to
        :data:`LOAD_WAIT` seconds; past them it gets 503 with ``Retry-After``, never an empty
        or partial listing. When ``load`` fails, its error is
        logged (never a traceback), and the probes and the endpoint answer 503 naming it at once,
        so an orchestrator restarts the process.

        Args:
            load: Makes the server (what :class:`SkillsApp` would be given); it runs once, in a
                thread of its own. Its ``cursor_key`` must be the same in every worker.
            session_key, options, state_dir: As for :class:`SkillsApp`.
            then: Called with the server in the loading thread once it serves (what the
                operator should hear of the catalog: what was left out, what a host reads of
                it); its failure is logged, never raised.
            server_options: The options ``load`` makes its server with (those the handshake is
                answered from meanwhile); the defaults when None.

        Raises:
            ValueError: ``session_key`` is too short.
        """
        waiting = SkillsServer(
            _NotLoaded(), cursor_key=session_key, options=server_options or ServerOptions()
        )
        app = cls(waiting, session_key=session_key, options=options, state_dir=state_dir)
        app._load = load
        app._then = then
        return app

    async def _ready(self) -> bool:
        """Wait (up to :data:`LOAD_WAIT` seconds) for the server being made; whether it is."""
        waited = 0.0
        while self._load is not None and self._failure is None and waited < LOAD_WAIT:
            if self._observer.stopping:
                return False
            await _pause(_LOAD_POLL)
            waited += _LOAD_POLL
        return self._load is None

    def _start_loading(self) -> None:
        """Start making the server in a thread (once)."""
        load = self._load
        if load is None or self._load_started:
            return
        self._load_started = True
        threading.Thread(
            target=self._make, args=(load,), name="skills-core-load", daemon=True
        ).start()

    def _make(self, load: Callable[[], SkillsServer]) -> None:
        """Make the server (in its thread), then serve it; or note and log why it failed."""
        began = time.perf_counter()
        try:
            with collector_paused_for_load():  # as LoadingServer's load (see its module)
                server = load()
        except Exception as exc:  # noqa: BLE001 - said in the log and by the probes, not raised
            text = str(exc) or type(exc).__name__
            self._failure = f"the catalog failed to load: {text}"
            self._observer.event(ERROR, "load", self._failure)
            return
        while True:  # publish the server once nothing is left to do to it first
            with self._loaded_guard:
                callbacks, self._when_loaded = self._when_loaded, []
                if not callbacks:
                    self._server = server
                    self._observer.serve(server)
                    self._load = None
                    break
            for callback in callbacks:
                callback(server)
        catalog = server.catalog
        self._observer.event(
            INFO,
            "ready",
            f"ready: {len(catalog.skills)} skill(s) loaded in {time.perf_counter() - began:.1f} s"
            + (f", {len(catalog.omitted)} skill folder(s) left out" if catalog.omitted else ""),
            skills=len(catalog.skills),
            omitted=len(catalog.omitted),
        )
        if self._then is not None:
            try:
                self._then(server)
            except Exception as exc:  # noqa: BLE001 - a report that failed is said, not raised
                self._observer.event(ERROR, "load", f"reporting the catalog failed: {exc!r}")

    def when_loaded(self, callback: Callable[[SkillsServer], None]) -> bool:
        """Have ``callback`` called with the server once it is made, before it serves a request.

        For what must wait for the load (a ``SIGHUP`` re-scan that arrives during it: the load
        may have read the folders before they changed). Called in the loading thread.

        Returns:
            True when it will be; False when the server is made already (nothing is kept: do
            it now, on the event loop).
        """
        with self._loaded_guard:
            if self._load is None:
                return False
            self._when_loaded.append(callback)
            return True

    @property
    def loaded(self) -> bool:
        """Whether the server is made (always, unless the app was made by :meth:`loading` and
        its thread has not finished)."""
        return self._load is None

    @property
    def server(self) -> SkillsServer:
        """The skills server."""
        return self._server

    @property
    def options(self) -> HttpOptions:
        """The HTTP settings."""
        return self._checks.options

    @property
    def observer(self) -> Observer:
        """What follows the requests: in flight, counted, logged (the drain reports to it)."""
        return self._observer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point: ``http`` and ``lifespan`` scopes (a WebSocket is refused)."""
        if scope["type"] != "http":
            await self._other(scope, receive, send)
            return
        if self._load is not None:
            self._start_loading()
        observer = self._observer
        exchange = observer.arrived(scope)
        try:
            await self._exchange(scope, receive, send, exchange)
        except asyncio.CancelledError:
            # Past the graceful timeout the ASGI server cancels what is left: the request ends
            # here, quietly (uvicorn_http's protocol has ended its connection already, else a
            # request not answered yet gets a 503).
            if not observer.stopping:
                raise
            exchange.cut = exchange.cut or "ended: the server stopped"
            if not exchange.sent:
                exchange.reply = reply = text_reply(503, _STOPPING, (b"connection", b"close"))
                exchange.sent = True
                exchange.size = len(reply.body)
                await _send_whole(reply, send)
        finally:
            observer.over(exchange)

    async def _exchange(
        self, scope: Scope, receive: Receive, send: Send, exchange: Exchange
    ) -> None:
        """Answer one request (see the module docstring), noting in ``exchange`` what it was."""
        checks = self._checks
        reply = checks.head(scope)
        if type(reply) is StreamCall:  # a legacy session's GET stream (see _asgi_push)
            await self._push_stream(reply, receive, send)
            return
        if type(reply) is Head and self._failure is not None:
            reply = self._not_ready(reply.cors, close=True)  # the body is not read
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
                body.note = self._body_note(body.status)
                reply = body
            elif body is None:  # the client left, and nobody is there to answer
                return
            else:
                verdict = checks.body(head, body, scope)
                if (
                    type(verdict) is Call
                    and self._load is not None
                    and verdict.method not in _FRONT_METHODS
                    and not await self._ready()
                ):
                    verdict = self._not_ready(verdict.cors, close=False)  # see loading()
                if type(verdict) is Call:
                    call = verdict
                    exchange.call = call
                    server = self._server
                    if call.method in _PUSHED and await self._push_call(call, receive, send):
                        return
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
                    if type(answer) is PendingRead:  # a large file: its turn, then off the loop
                        await self._read_large(call, answer, receive, send, exchange)
                        return
                    verdict = self._answered(call, answer, *encode_answer(call.id, answer))
                reply = verdict
        elif type(reply) is Probe:
            reply = self._probe(reply.name, exchange)
        assert type(reply) is Reply
        exchange.reply = reply
        content = reply.body
        if len(content) > LARGE_ANSWER_BYTES:
            await self._send_large(reply, receive, send, exchange)
            return
        exchange.sent = True
        exchange.size = len(content)
        await send({"type": "http.response.start", "status": reply.status, "headers": _head(reply)})
        await send({"type": "http.response.body", "body": content})

    def _not_ready(self, cors: Any, *, close: bool) -> Reply:
        """503 with ``Retry-After``: the catalog is still loading past :data:`LOAD_WAIT`, or
        failed to load (``close``: the request's body was not read)."""
        reply = text_reply(
            503,
            _FAILED if self._failure is not None else _LOADING,
            _RETRY_AFTER,
            *([(b"connection", b"close")] if close else []),
            note=self._failure or "the catalog is still loading",
        )
        reply.cors = cors
        return reply

    async def _push_stream(self, call: StreamCall, receive: Receive, send: Send) -> None:
        """Serve a session's GET stream (under asyncio and under trio alike)."""
        await self._push.legacy_stream(call, receive, send)

    async def _push_call(self, call: Call, receive: Receive, send: Send) -> bool:
        """``subscriptions/listen`` (a stream) or a legacy ``resources/(un)subscribe``; False
        when the server answers it as any request (a refused listen: the error goes in-band)."""
        if call.method == _LISTEN:
            return await self._push.listen(call, receive, send)
        if call.legacy_version is None:
            return False
        answer = self._push.subscribe(call)
        await _send_whole(self._answered(call, answer, *encode_answer(call.id, answer)), send)
        return True

    async def _read_large(
        self, call: Call, read: PendingRead, receive: Receive, send: Send, exchange: Exchange
    ) -> None:
        """Answer a read of a large file: take a turn, read and encode it in a worker thread, send."""
        turns = self._turns
        if not await turns.take():
            await self._send_busy(call.cors, send, exchange)
            return
        try:
            making = self._making  # one at a time: the making is what costs memory (see __init__)
            await making.take()
            try:
                encoded = await _in_worker_thread(lambda: encode_answer(call.id, read.complete()))
            finally:
                making.give_back()
            reply = self._answered(call, read, *encoded)
            del encoded
            exchange.reply = _without_body(reply)  # the log needs what it was, not its bytes
            taken = await self._send_in_pieces(reply, send, exchange)
            del reply  # the answer is not kept while the connection closes
        finally:
            turns.give_back()
        if not taken:
            await _await_close(receive)

    async def _send_large(
        self, reply: Reply, receive: Receive, send: Send, exchange: Exchange
    ) -> None:
        """Send a large answer made on the loop, in its turn (503 when too many wait)."""
        turns = self._turns
        if not await turns.take():
            await self._send_busy(reply.cors, send, exchange)
            return
        try:
            taken = await self._send_in_pieces(reply, send, exchange)
            del reply
        finally:
            turns.give_back()
        if not taken:
            await _await_close(receive)

    async def _send_in_pieces(self, reply: Reply, send: Send, exchange: Exchange) -> bool:
        """Send ``reply``, its body in pieces; False when the client took nothing for too long."""
        content = reply.body
        size = len(content)
        head: Message = {"type": "http.response.start", "status": reply.status}
        head["headers"] = _head(reply)
        timeout = self._send_timeout
        exchange.sent = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio: trio (hypercorn's trio worker)
            import trio  # noqa: PLC0415 - only under trio, which is then installed

            with trio.move_on_after(timeout) as scope:
                await send(head)
                for start in range(0, size, LARGE_ANSWER_BYTES):
                    scope.deadline = trio.current_time() + timeout
                    end = start + LARGE_ANSWER_BYTES
                    await send(_piece(content[start:end], end < size))
                    exchange.size = min(end, size)
                    if exchange.cut is not None:  # ended by the drain: the client is gone
                        break
            taken = not scope.cancelled_caught
        else:
            try:
                async with asyncio.timeout(timeout) as deadline:
                    await send(head)
                    for start in range(0, size, LARGE_ANSWER_BYTES):
                        deadline.reschedule(loop.time() + timeout)
                        end = start + LARGE_ANSWER_BYTES
                        await send(_piece(content[start:end], end < size))
                        exchange.size = min(end, size)
                        if exchange.cut is not None:  # ended by the drain: the client is gone
                            break
                taken = True
            except TimeoutError:
                taken = False
        if not taken:
            exchange.cut = exchange.cut or (
                f"ended: the client took nothing for {timeout:g} s (the send timeout)"
            )
        return taken

    async def _send_busy(self, cors: bytes | None, send: Send, exchange: Exchange) -> None:
        reply = text_reply(
            503, _BUSY, _RETRY_AFTER, note="too many large answers are being sent or wait"
        )
        reply.cors = cors
        exchange.reply = reply
        exchange.sent = True
        exchange.size = len(reply.body)
        await _send_whole(reply, send)

    def _answered(
        self, call: Call, answer: Answer | PendingRead, data: bytes, code: int | None
    ) -> Reply:
        """The reply carrying the server's ``answer`` to ``call``, encoded to ``data``."""
        if not call.initialize:
            reply = self._checks.answered(call, data, code)
        else:
            negotiated = answer.get("protocolVersion") if type(answer) is dict else None
            reply = self._checks.answered(
                call,
                data,
                code,
                negotiated=negotiated if isinstance(negotiated, str) else None,
                nonce=os.urandom(16),
            )
        if code == _INVALID_PARAMS and type(answer) is ErrorObject:
            reply.note = self._server.refusal_note(answer)  # a cursor: why it was refused
        return reply

    def _body_note(self, status: int) -> str:
        """Why a body was refused (a 408 or 413 of the body's read), for the log."""
        if status == 408:
            return f"the body did not arrive within {self._timeout:g} s"
        return f"the body is over the limit of {self._cap} bytes"

    def _probe(self, name: str, exchange: Exchange) -> Reply:
        """The answer to a probe (see :mod:`skills_core.http.probes`)."""
        exchange.probe = name
        failure = self._failure
        if failure is not None and name != "metrics":
            reply = Reply(503, f"{failure}\n".encode(), _TEXT, _NO_STORE)
            reply.note = failure
            return reply
        if name == "healthz":
            return Reply(200, b"ok\n", _TEXT, _NO_STORE)
        if name == "readyz":
            if self._observer.stopping:  # draining: take no new work here
                return Reply(503, b"not ready: the server is stopping\n", _TEXT, _NO_STORE)
            if self._load is None and self._server.has_catalog:
                return Reply(200, b"ready\n", _TEXT, _NO_STORE)
            return Reply(503, b"not ready: the catalog is loading\n", _TEXT, _NO_STORE)
        return Reply(200, self._observer.metrics(), METRICS_CONTENT_TYPE, _NO_STORE)

    async def _other(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Scopes other than ``http``: lifespan is acknowledged, a WebSocket refused."""
        kind = scope["type"]
        if kind == "lifespan":
            # The server is built before the app and holds no resources to release; the
            # observer notes this worker, and at the end logs (and records) how the drain went.
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    self._observer.started()
                    self._start_loading()
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    self._observer.stopped()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        elif kind == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1003})


def _seconds() -> int:
    return int(time.time())


def _head(reply: Reply) -> list[tuple[bytes, bytes]]:
    """The response headers of ``reply``."""
    headers = [
        (b"content-type", reply.content_type),
        (b"content-length", b"%d" % len(reply.body)),
    ]
    if reply.headers:
        headers += reply.headers
    if reply.cors is not None:
        headers += [
            (b"access-control-allow-origin", reply.cors),
            (b"access-control-expose-headers", b"mcp-session-id"),
            (b"vary", b"origin"),
        ]
    return headers


def _piece(body: bytes, more: bool) -> Message:
    return {"type": "http.response.body", "body": body, "more_body": more}


async def _send_whole(reply: Reply, send: Send) -> None:
    await send({"type": "http.response.start", "status": reply.status, "headers": _head(reply)})
    await send({"type": "http.response.body", "body": reply.body})


async def _await_close(receive: Receive) -> None:
    """Wait, at most :data:`_CLOSE_GRACE` seconds, for the ASGI server to say the client left."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not asyncio: trio (hypercorn's trio worker)
        import trio  # noqa: PLC0415 - only under trio, which is then installed

        with trio.move_on_after(_CLOSE_GRACE):
            while (await receive())["type"] != "http.disconnect":
                pass
        return
    try:
        async with asyncio.timeout(_CLOSE_GRACE):
            while (await receive())["type"] != "http.disconnect":
                pass
    except TimeoutError:
        pass


@final
class _Waiter:
    """One request waiting for a turn: woken by an asyncio future or a trio event."""

    __slots__ = ("_event", "_future", "granted")

    def __init__(self) -> None:
        #: The turn was handed to this waiter (it must give it back if it leaves instead).
        self.granted = False
        self._future: asyncio.Future[None] | None = None
        self._event: Any = None
        try:
            self._future = asyncio.get_running_loop().create_future()
        except RuntimeError:  # not asyncio: trio (hypercorn's trio worker)
            import trio  # noqa: PLC0415 - only under trio, which is then installed

            self._event = trio.Event()

    async def wait(self) -> None:
        if self._future is not None:
            await self._future
        else:
            await self._event.wait()

    def wake(self) -> None:
        self.granted = True
        future = self._future
        if future is None:
            self._event.set()
        elif not future.done():  # a cancelled waiter gives the turn back (see _Turns.take)
            future.set_result(None)


@final
class _Turns:
    """Turns for large answers: ``slots`` at once, up to ``queue`` requests waiting, first come
    first served. A turn given back goes straight to the first waiter."""

    __slots__ = ("_free", "_queue", "_waiting")

    def __init__(self, slots: int, queue: int) -> None:
        self._free = slots
        self._queue = queue
        self._waiting: deque[_Waiter] = deque()

    async def take(self) -> bool:
        """Take a turn, waiting for one if need be; False (at once) when the queue is full."""
        if self._free:
            self._free -= 1
            return True
        if len(self._waiting) >= self._queue:
            return False
        waiter = _Waiter()
        self._waiting.append(waiter)
        try:
            await waiter.wait()
        except BaseException:  # cancelled (the client left, the server stops): leave the queue
            if waiter.granted:
                self.give_back()
            else:
                self._waiting.remove(waiter)
            raise
        return True

    def give_back(self) -> None:
        """Give a turn back: to the first waiter, if any."""
        if self._waiting:
            self._waiting.popleft().wake()
        else:
            self._free += 1


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


@final
class _NotLoaded:
    """The source of the server an app serves until its own is made (:meth:`SkillsApp.loading`):
    no skills, and it says it has no catalog (see ``SkillsServer.has_catalog``)."""

    __slots__ = ("_empty",)
    has_catalog: Final = False

    def __init__(self) -> None:
        self._empty = MemorySource()

    def scan(self) -> Catalog:
        """No skills."""
        return self._empty.scan()

    def poll(self, max_age_ms: int) -> Catalog | None:
        """Never a new catalog."""
        return None

    def recheck(self, uri: str) -> PublishedSkill | OmittedSkill | None:
        """No skill."""
        return None

    def read(self, skill: PublishedSkill, file_path: str) -> bytes | None:
        """No file."""
        return None

    def list_directory(
        self, skill: PublishedSkill, dir_path: str
    ) -> Sequence[tuple[str, bool]] | None:
        """No folder."""
        return None


def _without_body(reply: Reply) -> Reply:
    """``reply`` as a log sees it (status, code, method, note), without its body."""
    light = Reply(reply.status, b"", reply.content_type)
    light.code, light.method, light.note = reply.code, reply.method, reply.note
    return light


async def _pause(seconds: float) -> None:
    """Sleep under asyncio, or under trio (hypercorn's trio worker)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        import trio  # noqa: PLC0415 - only under trio

        await trio.sleep(seconds)
    else:
        await asyncio.sleep(seconds)
