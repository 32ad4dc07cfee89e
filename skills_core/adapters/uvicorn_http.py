"""uvicorn's HTTP/1.1 protocols with deadlines for a request's head and for writes that stall.

Theory of operation
-------------------
uvicorn closes a kept-alive connection that stays idle after an answer (``timeout_keep_alive``),
and nothing else: a connection that sends nothing, or part of a request line or of its headers,
is held for ever, and so is one whose client takes nothing of an answer (uvicorn closes it
gracefully, which waits for the unsent bytes to go). Enough of them exhaust the worker's file
descriptors, and no new client is answered. The classes here are uvicorn's own two protocols
(httptools, and h11 for an install without httptools) with three deadlines, all taken from the
:class:`~skills_core.adapters.asgi.HttpOptions` of the :class:`~skills_core.adapters.asgi.SkillsApp`
they serve (found through the ``app`` attribute of any middleware around it; the defaults without
one):

* ``head_timeout``: a request's head (request line and headers) must be complete within this many
  seconds of the connection opening, or, on a kept-alive connection, of the head's first byte;
  else the connection is closed;
* ``idle_timeout``: uvicorn's keep-alive timeout (whole seconds, rounded up): a kept-alive
  connection that sends no byte of a new request this long after an answer is closed (so is one
  that sent part of a head during the answer and nothing since);
* ``send_timeout``: a connection whose writes stay blocked this long (uvicorn's write buffer above
  its high-water mark: the client takes nothing) is aborted, its unsent bytes dropped. The app
  ends such a response on the same deadline (see :mod:`skills_core.adapters._asgi_app`).

No timer of its own per request: each connection notes when its head is due and when its
writes stalled (a few attribute writes per request), and one sweep per event loop, every quarter
of the shortest deadline (at most a second), closes what is late. So a connection is closed at
most a second or so after its deadline.

**The drain.** When uvicorn stops (SIGTERM, SIGINT) it stops accepting, closes idle
connections and asks each connection to shut down; the first such call on an event loop begins
its drain: the app's observer logs what is in flight, and the requests in flight go on. At the
graceful timeout (``HttpOptions.graceful_timeout``, or uvicorn's ``timeout_graceful_shutdown``
when that is shorter) what is left is ended without a traceback: a request not answered yet gets
``503`` with ``Connection: close`` (a read of its body waiting ends), a connection whose answer is
being sent, or that holds an answer its client has not taken, is reset; each is named to the
observer, which logs it and counts it for the exit status of ``serve --http``. uvicorn's own
deadline, set later by ``serve --http``, then only cancels what still runs (a file read in a worker
thread), which the app ends quietly.

``skills-core serve --http`` runs uvicorn with :data:`BoundedProtocol`; with uvicorn of your own,
pass ``--http skills_core.adapters.uvicorn_http:BoundedProtocol`` (or ``http=BoundedProtocol`` to
``uvicorn.run``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import math
import socket
import struct
from typing import Any, Final, cast, final

try:
    from uvicorn.config import Config
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.server import ServerState
except ImportError as exc:  # pragma: no cover - exercised only without the extra installed
    raise ImportError(
        "skills_core.adapters.uvicorn_http needs uvicorn: pip install uvicorn "
        "(or, for an installed skills-core, pip install 'skills-core[http]')"
    ) from exc

from ..http.options import HttpOptions
from ._asgi_app import SkillsApp
from ._asgi_push import end_all_streams

__all__ = ["BoundedH11Protocol", "BoundedProtocol", "abort"]

#: The longest pause between two sweeps, in seconds.
_SWEEP_AT_MOST: Final = 1.0
#: How many ``app`` attributes (middleware) to look through for the SkillsApp.
_MIDDLEWARE_DEPTH: Final = 16


def _app_of(config: Config) -> SkillsApp | None:
    """The SkillsApp that ``config`` serves, through any middleware around it, or None."""
    app: object = config.loaded_app
    for _ in range(_MIDDLEWARE_DEPTH):
        if isinstance(app, SkillsApp):
            return app
        app = getattr(app, "app", None)
    return None


def _options_of(config: Config) -> HttpOptions:
    """The HttpOptions of the SkillsApp that ``config`` serves (the defaults without one)."""
    app = _app_of(config)
    return app.options if app is not None else HttpOptions()


#: What a request not answered yet gets at the graceful timeout.
_STOPPING_BODY: Final = b"Service Unavailable: the server is stopping; retry\n"
_STOPPING: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nretry-after: 1\r\nconnection: close\r\n\r\n%s"
    % (len(_STOPPING_BODY), _STOPPING_BODY)
)


@final
class _Drain:
    """The end of one event loop's service: begun by the first connection uvicorn asks to shut
    down, it tells the app what is in flight and, at the graceful timeout, ends what is left."""

    __slots__ = ("_app", "_connections", "_loop", "_uvicorn_timeout", "begun")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        connections: set[Any],
        app: SkillsApp | None,
        uvicorn_timeout: float | None,
    ) -> None:
        self._loop = loop
        self._connections = connections
        self._app = app
        self._uvicorn_timeout = uvicorn_timeout
        self.begun = False

    def begin(self) -> None:
        """uvicorn stops (the first of its calls to each connection's ``shutdown``)."""
        if self.begun:
            return
        self.begun = True
        app = self._app
        timeout = (
            app.options.graceful_timeout if app is not None else HttpOptions().graceful_timeout
        )
        if self._uvicorn_timeout is not None:  # uvicorn cancels what runs at its own deadline
            timeout = min(timeout, self._uvicorn_timeout)
        if app is not None:
            app.observer.draining(timeout)
        self._loop.call_later(timeout, self._end_what_is_left)

    def _end_what_is_left(self) -> None:
        """The graceful timeout: a request not answered yet gets a 503, an answer being sent is
        cut off (its connection reset); the app's coroutine then finds its client gone."""
        observer = self._app.observer if self._app is not None else None
        for protocol in list(self._connections):
            cycle = protocol.cycle
            transport: asyncio.Transport = protocol.transport
            if cycle is None or cycle.response_complete or cycle.disconnected:
                abort(transport)  # an answer the client has not taken, or a request's head
                continue
            answered = bool(cycle.response_started)
            if observer is not None:
                observer.cut(cycle.scope, answered)
            if answered:
                abort(transport)
            else:
                cycle.response_started = True
                cycle.disconnected = True  # what the app sends from now on goes nowhere
                transport.write(_STOPPING)
                transport.close()
                cycle.message_event.set()  # a read waiting for the body ends


#: The drain of each event loop.
_drains: dict[asyncio.AbstractEventLoop, _Drain] = {}


def _drain_of(protocol: Any) -> _Drain:
    loop = protocol.loop
    drain = _drains.get(loop)
    if drain is None:
        for old in [known for known in _drains if known.is_closed()]:
            del _drains[old]
        config = protocol.config
        drain = _drains[loop] = _Drain(
            loop, protocol.connections, _app_of(config), config.timeout_graceful_shutdown
        )
    return drain


@final
class _Guard:
    """What the sweep knows of one connection: when its head is due, since when writes stall."""

    __slots__ = (
        "_protocol",
        "armed",
        "head_cycle",
        "head_due",
        "head_timeout",
        "send_timeout",
        "stalled",
    )

    def __init__(self, protocol: Any, options: HttpOptions) -> None:
        self._protocol = protocol
        self.head_timeout = options.head_timeout
        self.send_timeout = options.send_timeout
        #: Loop time by which a new request's head must be complete, or None.
        self.head_due: float | None = None
        #: The protocol's request cycle when the head deadline was set (a new one: a head came).
        self.head_cycle: object = None
        #: An answer was sent: the next byte starts the next head's deadline.
        self.armed = False
        #: Loop time since which writes are paused, or None.
        self.stalled: float | None = None

    def opened(self, now: float) -> None:
        """A new connection: its first head is due from now."""
        self.head_due = now + self.head_timeout
        self.head_cycle = None

    def answered(self) -> None:
        """An answer was sent: the next head is due from its first byte (until then the
        connection is idle, uvicorn's keep-alive timeout), unless a pipelined one is served."""
        cycle = self._protocol.cycle
        self.head_due = None
        self.head_cycle = cycle
        self.armed = cycle is None or cycle.response_complete

    def first_byte(self, now: float) -> None:
        """Bytes after an answer: the next head is due from now."""
        self.armed = False
        self.head_due = now + self.head_timeout

    def check(self, now: float) -> None:
        """Close the connection when its head is late, abort it when its writes stalled."""
        protocol = self._protocol
        transport: asyncio.Transport = protocol.transport
        due = self.head_due
        if due is not None and now >= due:
            self.head_due = None
            if protocol.cycle is self.head_cycle and not transport.is_closing():
                transport.close()  # no request came in time (any answer before it is sent)
        stalled = self.stalled
        if stalled is not None and now - stalled >= self.send_timeout:
            self.stalled = None
            abort(transport)


def abort(transport: asyncio.Transport) -> None:
    """Close the connection at once with a reset, dropping what the client did not take.

    A plain close would leave the unsent bytes to the kernel, which keeps trying to deliver them
    to a client that takes nothing for minutes; ``SO_LINGER`` of zero frees them too.
    """
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


@final
class _Sweep:
    """One per event loop: every ``every`` seconds, each watched connection is checked."""

    __slots__ = ("every", "loop", "running", "watched")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.every = _SWEEP_AT_MOST
        self.watched: set[_Guard] = set()
        self.running = False

    def watch(self, guard: _Guard) -> None:
        self.every = min(self.every, guard.head_timeout / 4, guard.send_timeout / 4)
        self.watched.add(guard)
        if not self.running:
            self.running = True
            self.loop.call_later(self.every, self._tick)

    def _tick(self) -> None:
        if _sweeps.get(self.loop) is not self:  # pragma: no cover - a loop that was replaced
            self.running = False
            return
        now = self.loop.time()
        for guard in list(self.watched):
            guard.check(now)
        if self.watched:
            self.loop.call_later(self.every, self._tick)
        else:
            self.running = False


#: The sweep of each event loop (a worker has one loop; tests may run several in turn).
_sweeps: dict[asyncio.AbstractEventLoop, _Sweep] = {}


def _sweep_of(loop: asyncio.AbstractEventLoop) -> _Sweep:
    sweep = _sweeps.get(loop)
    if sweep is None:
        for old in [known for known in _sweeps if known.is_closed()]:
            del _sweeps[old]
        sweep = _sweeps[loop] = _Sweep(loop)
    return sweep


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines of the module docstring."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """Made by uvicorn for each connection (the arguments are uvicorn's)."""
        super().__init__(config, server_state, app_state, _loop)
        options = _options_of(config)
        self.timeout_keep_alive = math.ceil(options.idle_timeout)
        self._guard = _Guard(self, options)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Start the head deadline and watch the connection."""
        super().connection_made(cast(asyncio.Transport, transport))
        self._guard.opened(self.loop.time())
        _sweep_of(self.loop).watch(self._guard)

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop watching the connection."""
        _sweep_of(self.loop).watched.discard(self._guard)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Bytes from the client: after an answer, the first starts the next head's deadline."""
        guard = self._guard
        if guard.armed:
            guard.first_byte(self.loop.time())
        super().data_received(data)

    def on_response_complete(self) -> None:
        """An answer is sent: the next head is due from its first byte."""
        super().on_response_complete()
        self._guard.answered()

    def pause_writing(self) -> None:
        """The client stopped taking data: note since when."""
        super().pause_writing()
        self._guard.stalled = self.loop.time()

    def resume_writing(self) -> None:
        """The client took data again."""
        super().resume_writing()
        self._guard.stalled = None

    def shutdown(self) -> None:
        """The server stops: the drain begins (see the module docstring); event streams end (a
        listen stream with its result: PUSH-08)."""
        end_all_streams()
        _drain_of(self).begin()
        super().shutdown()


#: The protocol ``serve --http`` runs: httptools' when it is installed (uvicorn's own choice too),
#: else h11's.
BoundedProtocol: type[asyncio.Protocol] = BoundedH11Protocol

# (no branch: the test extra installs httptools; without it BoundedProtocol stays h11's)
if importlib.util.find_spec("httptools") is not None:  # pragma: no branch
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        """uvicorn's httptools protocol with the deadlines of the module docstring."""

        def __init__(
            self,
            config: Config,
            server_state: ServerState,
            app_state: dict[str, Any],
            _loop: asyncio.AbstractEventLoop | None = None,
        ) -> None:
            """Made by uvicorn for each connection (the arguments are uvicorn's)."""
            super().__init__(config, server_state, app_state, _loop)
            options = _options_of(config)
            self.timeout_keep_alive = math.ceil(options.idle_timeout)
            self._guard = _Guard(self, options)

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            """Start the head deadline and watch the connection."""
            super().connection_made(cast(asyncio.Transport, transport))
            self._guard.opened(self.loop.time())
            _sweep_of(self.loop).watch(self._guard)

        def connection_lost(self, exc: Exception | None) -> None:
            """Stop watching the connection."""
            _sweep_of(self.loop).watched.discard(self._guard)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            """Bytes from the client: after an answer, the first starts the next head's deadline."""
            guard = self._guard
            if guard.armed:
                guard.first_byte(self.loop.time())
            super().data_received(data)

        def on_response_complete(self) -> None:
            """An answer is sent: the next head is due from its first byte."""
            super().on_response_complete()
            self._guard.answered()

        def pause_writing(self) -> None:
            """The client stopped taking data: note since when."""
            super().pause_writing()
            self._guard.stalled = self.loop.time()

        def resume_writing(self) -> None:
            """The client took data again."""
            super().resume_writing()
            self._guard.stalled = None

        def shutdown(self) -> None:
            """The server stops: the drain begins (see the module docstring); event streams end
            (a listen stream with its result: PUSH-08)."""
            end_all_streams()
            _drain_of(self).begin()
            super().shutdown()

    BoundedProtocol = BoundedHttpToolsProtocol
    __all__ += ["BoundedHttpToolsProtocol"]
