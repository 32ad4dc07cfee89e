"""Answer ``initialize`` and ``server/discover`` at once while the catalog loads on a thread.

Theory of operation
-------------------
A :class:`~skills_core.server.SkillsServer` scans its source when it is made, and a large
catalog takes a while to scan (a minute for 100,000 skills from cold, seconds from a digest
index). A client should not wait that long for the handshake, and must never see a partial
catalog. :class:`LoadingServer` does both: it makes the real server on a thread of its own (the
core is sans-IO, so the thread lives here, at the edge) and, until that server exists, answers the
methods whose answers depend only on the server's options (``initialize``, ``server/discover``,
``ping``) from a *front* server of the same options over an empty source, whose answers to them
are the real server's. Any other request gets a
:class:`~skills_core.server_stream.Deferred` answer (a stream writes the answers made before it,
then runs it, in a worker thread if it has one), which waits for the load to finish and is then
made by the real server; a connection carries the version an
``initialize`` agreed on over to the real server's connection, so a legacy session goes on as if
the real server had answered from the start. Once loaded, everything goes to the real server.

:attr:`LoadingServer.loaded` is the "catalog loaded" signal (for a readiness probe: not ready
until it is True). A load that fails keeps its exception: :meth:`LoadingServer.wait` (and so
the next request that needs the catalog) raises it, and :attr:`LoadingServer.error` holds it.

While it loads, the thread pauses the garbage collector (a load makes millions of objects that
all live on: each collection would walk them again for nothing) and afterwards moves what it
made to the collector's permanent generation (``gc.freeze``), so later collections, between
requests, do not walk the catalog either. Then it hands the memory the load used only for a
while (the index read, the walk's snapshot) back to the system: with the GNU C library,
``malloc_trim(0)`` returns the free pages of the C heap (tens of megabytes at 100,000 skills);
elsewhere nothing is done.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Final, final

from ..jsonrpc import Answer, JSONObject
from ..server.handler import PendingRead, ServerConnection, SkillsServer
from ..server.options import ServerOptions
from ..server.source import MemorySource
from ..server_stream import Deferred
from ..spec import Method

__all__ = ["LoadingServer"]

#: What a server answers from its options alone, never from its catalog.
_FRONT_METHODS: Final = frozenset(
    {Method.INITIALIZE.value, Method.SERVER_DISCOVER.value, Method.PING.value}
)


@final
class LoadingServer:
    """A server whose catalog loads on a thread; the handshake is answered meanwhile.

    Example:
        >>> make = lambda: SkillsServer(source, cursor_key=key, options=options)  # doctest: +SKIP
        >>> loading = LoadingServer(make, options=options)  # doctest: +SKIP
        >>> loading.start()  # doctest: +SKIP
        >>> serve_stdio(loading.connection())  # doctest: +SKIP
    """

    __slots__ = ("_done", "_error", "_front", "_load", "_server", "_then", "_thread")

    def __init__(
        self,
        load: Callable[[], SkillsServer],
        *,
        options: ServerOptions,
        then: Callable[[SkillsServer], object] | None = None,
    ) -> None:
        """Make the real server with ``load()`` once :meth:`start` is called.

        Args:
            load: Makes the real server (opens the source, scans it); called on the thread.
            options: The real server's options (its answers to the handshake come from them).
            then: Called on the thread with the real server once it is served (reports to the
                operator that need not delay the first listing); :meth:`join` waits for it.
        """
        self._load = load
        self._then = then
        self._front = SkillsServer(MemorySource({}), cursor_key=os.urandom(32), options=options)
        self._server: SkillsServer | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start loading, on a daemon thread (a process that exits does not wait for it)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="catalog-load", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            with collector_paused_for_load():
                self._server = self._load()
        except BaseException as exc:  # noqa: BLE001 - kept for whoever waits, raised there
            self._error = exc
        finally:
            self._done.set()
        if self._server is not None and self._then is not None:
            self._then(self._server)

    def join(self) -> None:
        """Wait for the thread to end: the load, and ``then`` after it (if started)."""
        if self._thread is not None:
            self._thread.join()

    @property
    def loaded(self) -> bool:
        """Whether the catalog is loaded and served (the readiness signal)."""
        return self._server is not None and self._done.is_set()

    @property
    def error(self) -> BaseException | None:
        """What the load raised, if it failed; else None."""
        return self._error

    def wait(self, timeout: float | None = None) -> SkillsServer | None:
        """The real server, once loaded (None if ``timeout`` seconds pass first).

        Raises:
            BaseException: what the load raised.
        """
        self.start()
        if not self._done.wait(timeout):
            return None
        if self._error is not None:
            raise self._error
        return self._server

    def connection(self) -> LoadingConnection:
        """A new connection, in the state of a new :meth:`SkillsServer.connection`."""
        return LoadingConnection(self)

    def _front_connection(self) -> ServerConnection:
        return self._front.connection()


@final
class LoadingConnection:
    """One client's connection to a :class:`LoadingServer` (a stream's responder)."""

    __slots__ = ("_connection", "_loading", "_real")

    def __init__(self, loading: LoadingServer) -> None:
        """Start a connection; see :meth:`LoadingServer.connection`."""
        self._loading = loading
        self._connection = loading._front_connection()
        self._real = False

    def received(self) -> None:
        """See :meth:`ServerConnection.received`."""
        self._connection.received()

    def answer(
        self, method: str, params: JSONObject | None, *, defer_reads_over: int | None = None
    ) -> Answer | PendingRead | Deferred:
        """Answer as :meth:`ServerConnection.answer`, or, while the catalog loads, a
        :class:`~skills_core.server_stream.Deferred` answer for any method the options alone do
        not answer (made once the load ends).

        Raises:
            BaseException: what the load raised (the catalog cannot be served), from the
                deferred answer's ``complete()``.
        """
        if not self._real:
            if self._loading.loaded:
                self._switch()
            elif method not in _FRONT_METHODS:
                # Answered once loaded, after the answers made before it have gone out.
                return Deferred(lambda: self._after_load(method, params, defer_reads_over))
        return self._connection.answer(method, params, defer_reads_over=defer_reads_over)

    def served(self, *, wait: bool = False) -> ServerConnection | None:
        """The connection to the loaded server (switching to it if the load has ended), or None
        while the catalog loads (with ``wait``, once it has loaded; None if the load failed):
        what a stream pushes changes through and opens listen streams on."""
        if not self._real:
            if wait:
                self._loading.join()
            if self._loading.loaded and self._loading.error is None:
                self._switch()
        return self._connection if self._real else None

    def _after_load(
        self, method: str, params: JSONObject | None, defer_reads_over: int | None
    ) -> Answer | PendingRead:
        if not self._real:
            self._switch()
        return self._connection.answer(method, params, defer_reads_over=defer_reads_over)

    def _switch(self) -> None:
        """Go on with the real server, in the state this connection negotiated."""
        server = self._loading.wait()
        assert server is not None
        self._connection = server.connection(legacy_version=self._connection.legacy_version)
        self._real = True


@contextlib.contextmanager
def collector_paused_for_load() -> Iterator[None]:
    """Around a catalog's load (on its thread): the garbage collector paused meanwhile, what the
    load made then moved to its permanent generation (``gc.freeze``), and the C heap's free pages
    returned to the system (see the module docstring). A pause the caller made is left to it."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.freeze()
            gc.enable()
        _trim_heap()


def _trim_heap() -> None:
    """Return the free pages of the C heap to the system (GNU C library only; else nothing)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return
    trim(0)
