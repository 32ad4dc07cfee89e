"""The stdio transport, written once over a small event-loop backend: the client and the server loop.

Theory of operation
-------------------
What a stdio client and a stdio server do is the same under asyncio and trio; only how they read,
write, spawn and wait differs. This module is the first part, once; a :class:`Backend` is the
second, one small class per event loop (in :mod:`skills_core.adapters.asyncio_stdio` and
:mod:`skills_core.adapters.trio_stdio`, as httpcore writes its connections once over an
``AsyncNetworkBackend`` and its streams). :class:`Stdio` binds the two: those modules export its
``serve_stdio`` and ``open_stdio_client``.

* :meth:`Stdio.serve_stdio` runs :func:`skills_core.server_stream.serve_async` over the backend's
  pipes: answers written as they are made (small ones batched), stdin read in large chunks only
  when no complete request is left, large files read and encoded in a worker thread, so the event
  loop stays free and memory stays bounded however a client pipelines. While it waits for input
  it keeps the change timer the blocking loop keeps (the same
  :class:`~skills_core.server_stream.ChangeTimer`; only the wait is the backend's:
  :meth:`Pipes.receive_within`), and a cancellation ends the client's listen streams with their
  result before it goes on.
* :meth:`Stdio.open_stdio_client` spawns a server command in a process group of its own and yields
  a :class:`StdioClient`: requests with timeouts (a timed-out or cancelled request sends
  ``notifications/cancelled``), the server's stderr read line by line and relayed labelled and
  escaped (or handed to the caller), and a clean shutdown of the whole group: close stdin, wait,
  terminate, wait, kill (docs/protocol.md#stdio; :mod:`skills_core.adapters._io`). No process of
  the group outlives the ``async with`` block, and no pipe is left for the garbage collector. The
  decisions about the bytes are :class:`~skills_core.client_stream.ClientStream`'s.

A :class:`StdioClient` is also a requester of :func:`skills_core.host.pump.pump_async`: awaited as
``client(method, params)``, it waits up to the timeout it was opened with.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Final, Generic, Protocol, TypeVar, final

from ..client_stream import (
    ClientOutcome,
    ClientStream,
    Failed,
    GiveUp,
    Notified,
    Reply,
    Report,
    Resolved,
    StderrLines,
)
from ..errors import SkillsError, TransportError
from ..jsonrpc import RequestId
from ..jsonvalue import JSONValue
from ..server_stream import (
    DEFAULT_DEFER_READS_OVER,
    ChangeTimer,
    Responder,
    ServerStream,
    serve_async,
)
from ._io import (
    GROUP_POLL,
    NEW_SESSION,
    SHUTDOWN_GRACE,
    group_alive,
    report_to_stderr,
    signal_group,
    stderr_relay,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "CLOSE_GRACE",
    "Backend",
    "ServerProcess",
    "Pipes",
    "TaskGroup",
    "Cancellable",
    "Event",
    "ClosedPipeError",
    "Stdio",
    "StdioClient",
]

_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"


def _modern_meta() -> dict[str, JSONValue]:
    from ..host.driver import CLIENT_INFO  # noqa: PLC0415 (the host layer, only when listening)
    from ..spec import (  # noqa: PLC0415
        META_CLIENT_CAPABILITIES,
        META_CLIENT_INFO,
        META_PROTOCOL_VERSION,
        MODERN_PROTOCOL_VERSION,
    )

    return {
        META_PROTOCOL_VERSION: MODERN_PROTOCOL_VERSION,
        META_CLIENT_CAPABILITIES: {},
        META_CLIENT_INFO: CLIENT_INFO.to_json(),
    }


#: Seconds a client waits for an answer when awaited as a requester (``client(method, params)``).
DEFAULT_TIMEOUT: Final = 10.0

#: Seconds a cancelled server gives the write that ends its client's listen streams.
CLOSE_GRACE: Final = 1.0

P = TypeVar("P")
P_co = TypeVar("P_co", covariant=True)


class ClosedPipeError(Exception):
    """Raised by :meth:`ServerProcess.send` when the server's stdin is closed.

    Args:
        cause: The name of what the event loop raised (``BrokenPipeError``, ...), for the message.
    """

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


class Event(Protocol):
    """An event of the backend's loop (``asyncio.Event``, ``trio.Event``)."""

    def set(self) -> None:
        """Wake every task waiting on the event, now and later."""

    def is_set(self) -> bool:
        """True once :meth:`set` was called."""

    async def wait(self) -> object:
        """Wait until the event is set."""


class Cancellable(Protocol):
    """A task started in a :class:`TaskGroup` (an ``asyncio.Task``, a ``trio.CancelScope``)."""

    def cancel(self) -> object:
        """Cancel the task (it stops at its next wait)."""


class TaskGroup(Protocol):
    """Where a client's background tasks run: its readers and its exit watcher."""

    def start(self, fn: Callable[[], Awaitable[None]]) -> Cancellable:
        """Run ``fn()`` as a task; leaving the group cancels what is still running."""


class ServerProcess(Protocol[P_co]):
    """A spawned server as the backend gives it: its pipes, its exit, its signals."""

    @property
    def native(self) -> P_co:
        """The event loop's own process object (``StdioClient.process``)."""

    @property
    def pid(self) -> int:
        """The server's process id (its process group's id too, when it has one of its own)."""

    @property
    def exited(self) -> bool:
        """True once the server process itself has exited (its pipes may still be open)."""

    @property
    def has_stderr(self) -> bool:
        """True when the server's stderr is a pipe to read (:meth:`receive_stderr`)."""

    async def send(self, data: bytes) -> None:
        """Write all of ``data`` to the server's stdin; raise :class:`ClosedPipeError` if it is closed."""

    async def receive(self) -> bytes:
        """Read what the server wrote on its stdout next; ``b""`` once it is closed."""

    async def receive_stderr(self) -> bytes:
        """Read what the server wrote on its stderr next; ``b""`` once it is closed."""

    async def wait(self) -> None:
        """Wait until the server process itself has exited (not for its pipes to close)."""

    async def close_input(self) -> None:
        """Close the server's stdin (its signal to exit); a pipe already broken is no error."""

    def terminate(self) -> None:
        """Send SIGTERM to the server process (raises ProcessLookupError if it is gone)."""

    def kill(self) -> None:
        """Send SIGKILL to the server process (raises ProcessLookupError if it is gone)."""

    def close(self) -> None:
        """Release what the event loop holds for the process (after it has exited)."""


class Pipes(Protocol):
    """A server's stdin and stdout, as the backend reads and writes them."""

    async def receive(self) -> bytes:
        """Read the client's next bytes; ``b""`` once its input has ended."""

    async def send(self, data: bytes) -> bool:
        """Write all of ``data``; False when the client has gone, True otherwise."""

    async def receive_within(self, seconds: float) -> bytes | None:
        """:meth:`receive`, waiting at most ``seconds``: None when they passed first (no byte is
        lost: a read under way is kept, and the next receive takes its bytes)."""


class Backend(Protocol[P_co]):
    """What the stdio transport needs of an event loop; one small class per loop."""

    @property
    def cancelled(self) -> type[BaseException]:
        """What a cancelled task sees (``asyncio.CancelledError``, ``trio.Cancelled``)."""

    async def spawn(
        self, argv: list[str], *, env: dict[str, str] | None, cwd: str | None, stderr: int | None
    ) -> ServerProcess[P_co]:
        """Start ``argv`` with pipes (stderr too when ``stderr`` is None), in a new session where
        :data:`~skills_core.adapters._io.NEW_SESSION`; raise OSError when it cannot start."""

    def event(self) -> Event:
        """A new event."""

    def lock(self) -> AbstractAsyncContextManager[object]:
        """A new lock (``async with`` it)."""

    def task_group(self) -> AbstractAsyncContextManager[TaskGroup]:
        """A group of tasks; leaving it cancels those still running and waits for them."""

    async def within(self, seconds: float | None, wait: Callable[[], Awaitable[object]]) -> bool:
        """Await ``wait()`` for up to ``seconds`` (``None``: no limit); False if time ran out."""

    def shielded(self) -> AbstractContextManager[object]:
        """A block that a cancellation of the task does not interrupt (where the loop has such)."""

    async def sleep(self, seconds: float) -> None:
        """Sleep."""

    def now(self) -> float:
        """The loop's clock, in seconds."""

    def pipes(self, stdin_fd: int, stdout_fd: int) -> AbstractAsyncContextManager[Pipes]:
        """The two descriptors a server reads and writes, for the time of the block."""

    async def run_blocking(self, fn: Callable[[], bytes]) -> bytes:
        """Run ``fn()`` in a worker thread and return what it returned."""


class _Waiter:
    """One pending request: an event and its outcome."""

    __slots__ = ("error", "event", "result")

    def __init__(self, event: Event) -> None:
        self.event = event
        self.result: dict[str, JSONValue] | None = None
        self.error: SkillsError | None = None

    def settle(self, result: dict[str, JSONValue] | None, error: SkillsError | None) -> None:
        if not self.event.is_set():
            self.result = result
            self.error = error
            self.event.set()


@final
class StdioClient(Generic[P]):
    """A JSON-RPC client connection to one server process (see :meth:`Stdio.open_stdio_client`).

    Also a requester of :func:`skills_core.host.pump.pump_async`: ``await client(method, params)``
    is :meth:`request` with the timeout the client was opened with.
    """

    def __init__(
        self,
        backend: Backend[P],
        process: ServerProcess[P],
        tasks: TaskGroup,
        *,
        label: str,
        max_message_size: int | None,
        on_report: Callable[[str], None],
        on_stderr: Callable[[str], None],
        shutdown_grace: float = SHUTDOWN_GRACE,
        own_group: bool = False,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> None:
        """Wrap a started process; use ``open_stdio_client`` instead of calling this."""
        self.label = label
        #: Seconds :meth:`__call__` waits for an answer (``None``: forever).
        self.timeout = timeout
        self._backend = backend
        self._grace = shutdown_grace
        self._process = process
        self._own_group = own_group
        self._stream = ClientStream(label=label, max_message_size=max_message_size)
        self._stderr = StderrLines()
        self._on_report = on_report
        self._on_stderr = on_stderr
        self._waiters: dict[RequestId, _Waiter] = {}
        #: Called with each notification the server sends (``method, params``): set it to hear
        #: of changes (a 2026-07-28 server sends them only on a stream :meth:`listen` opened).
        #: It must not block; it runs on the reader task.
        self.on_notification: Callable[[str, dict[str, JSONValue] | None], None] | None = None
        self._listens: dict[RequestId, _Waiter] = {}
        self._broken: SkillsError | None = None
        self._write_lock = backend.lock()
        self._stdout_done = backend.event()
        self._stderr_done = backend.event()
        tasks.start(self._read_stdout)
        if process.has_stderr:
            tasks.start(self._read_stderr)
        else:
            self._stderr_done.set()
        self._watcher = tasks.start(self._watch)

    @property
    def process(self) -> P:
        """The server process, as the event loop knows it."""
        return self._process.native

    #: Whether 2025-11-25 notifications arrive without :meth:`listen` (yes: on the connection).
    pushes_unasked = True

    def watch_notifications(
        self, callback: Callable[[str, dict[str, JSONValue] | None], None] | None
    ) -> None:
        """Set :attr:`on_notification`: ``callback(method, params)`` for each notification."""
        self.on_notification = callback

    @property
    def alive(self) -> bool:
        """False once the connection broke or the server closed its output."""
        return self._broken is None and not self._stdout_done.is_set()

    @property
    def stderr_tail(self) -> tuple[str, ...]:
        """The last lines the server wrote on its stderr (its text: show it with ``display``)."""
        return self._stderr.tail

    async def __call__(
        self, method: str, params: Mapping[str, object] | None = None
    ) -> dict[str, JSONValue]:
        """:meth:`request` with the client's :attr:`timeout`: the pump's requester protocol."""
        return await self.request(method, params, timeout=self.timeout)

    async def request(
        self, method: str, params: Mapping[str, object] | None = None, *, timeout: float | None
    ) -> dict[str, JSONValue]:
        """Send a request and wait for its result.

        Raises:
            JsonRpcError: the server answered with an error response.
            TransportError: the server died, broke JSON-RPC, or did not answer within ``timeout``
                seconds (kind ``timeout``; ``notifications/cancelled`` was sent).
        """
        if self._broken is not None:
            raise self._broken
        backend = self._backend
        request_id, data = self._stream.request(method, params)
        waiter = _Waiter(backend.event())
        self._waiters[request_id] = waiter
        try:
            await self._write(data)
            if not await backend.within(timeout, waiter.event.wait):
                with backend.shielded():
                    await self._cancel(request_id, f"timed out after {timeout} seconds")
                raise TransportError(
                    f"server {self.label!r} did not answer {method} within {timeout} seconds",
                    kind="timeout",
                )
        except backend.cancelled:
            with backend.shielded():
                await self._cancel(request_id, "cancelled by the client")
            raise
        finally:
            self._waiters.pop(request_id, None)
        if waiter.error is not None:
            raise waiter.error
        assert waiter.result is not None
        return waiter.result

    async def listen(
        self, notifications: Mapping[str, object], *, timeout: float | None
    ) -> dict[str, JSONValue]:
        """Open a 2026-07-28 ``subscriptions/listen`` stream; return the honored filter.

        Waits for the server's ``notifications/subscriptions/acknowledged``; the stream's
        notifications then reach :attr:`on_notification`. The stream ends with the connection.

        Raises:
            JsonRpcError: the server refused the stream.
            TransportError: no acknowledgement within ``timeout`` seconds, or the server died.
        """
        if self._broken is not None:
            raise self._broken
        backend = self._backend
        params = {"_meta": _modern_meta(), "notifications": dict(notifications)}
        request_id, data = self._stream.request("subscriptions/listen", params)
        waiter = _Waiter(backend.event())
        self._listens[request_id] = waiter
        self._waiters[request_id] = waiter  # an error response settles it too
        try:
            await self._write(data)
            if not await backend.within(timeout, waiter.event.wait):
                raise TransportError(
                    f"server {self.label!r} did not acknowledge subscriptions/listen within "
                    f"{timeout} seconds",
                    kind="timeout",
                )
        finally:
            self._waiters.pop(request_id, None)
            self._listens.pop(request_id, None)
        if waiter.error is not None:
            raise waiter.error
        honored = (waiter.result or {}).get("notifications")
        return honored if isinstance(honored, dict) else {}

    async def notify(self, method: str, params: Mapping[str, object] | None = None) -> None:
        """Send a notification."""
        await self._write(self._stream.connection.send_notification(method, params))

    async def _cancel(self, request_id: RequestId, reason: str) -> None:
        data = self._stream.cancel(request_id, reason)
        if data:
            with contextlib.suppress(SkillsError):
                await self._write(data)

    async def _write(self, data: bytes) -> None:
        async with self._write_lock:
            try:
                await self._process.send(data)
            except ClosedPipeError as exc:
                raise TransportError(
                    f"server {self.label!r} closed its input ({exc.cause})", kind="closed"
                ) from None

    async def _read_stdout(self) -> None:
        try:
            while True:
                data = await self._process.receive()
                if self._broken is None:  # after giving up, output is drained unread
                    await self._dispatch(self._stream.feed(data))
                if not data:
                    if self._broken is None:
                        self._broken = TransportError(
                            f"server {self.label!r} closed its output", kind="closed"
                        )
                    self._fail_all(self._broken)
                    return
        finally:
            self._stdout_done.set()

    async def _read_stderr(self) -> None:
        try:
            while True:
                data = await self._process.receive_stderr()
                for line in self._stderr.feed(data):
                    self._on_stderr(line)
                if not data:
                    return
        finally:
            self._stderr_done.set()

    async def _watch(self) -> None:
        """When the server exits by itself, end what it left running (its pipes then close)."""
        await self._process.wait()
        await self._end(patient=False)

    async def _dispatch(self, outcomes: list[ClientOutcome]) -> None:
        for outcome in outcomes:
            if isinstance(outcome, Resolved):
                waiter = self._waiters.get(outcome.request_id)
                if waiter is not None:
                    waiter.settle(outcome.result, None)
            elif isinstance(outcome, Failed):
                waiter = self._waiters.get(outcome.request_id)
                if waiter is not None:
                    waiter.settle(None, outcome.error)
            elif isinstance(outcome, Report):
                self._on_report(outcome.message)
            elif isinstance(outcome, Reply):
                with contextlib.suppress(SkillsError):
                    await self._write(outcome.data)
            elif isinstance(outcome, Notified):
                self._notified(outcome)
            else:
                assert isinstance(outcome, GiveUp)
                self._broken = outcome.error
                self._fail_all(outcome.error)

    def _notified(self, outcome: Notified) -> None:
        params = outcome.params
        if outcome.method == "notifications/subscriptions/acknowledged" and self._listens:
            meta = params.get("_meta") if params is not None else None
            listen_id = meta.get(_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
            waiter = self._listens.get(listen_id) if isinstance(listen_id, str | int) else None
            if waiter is not None:
                waiter.settle(params or {}, None)
                return
        if self.on_notification is not None:
            self.on_notification(outcome.method, params)

    def _fail_all(self, error: SkillsError) -> None:
        for waiter in self._waiters.values():
            waiter.settle(None, error)

    async def _end(self, *, patient: bool) -> None:
        """End the server's group: wait for the server to exit (``patient``), SIGTERM, SIGKILL.

        Once the server itself has exited, what remains of its group gets SIGTERM at once; each
        signal is followed by up to the grace period for the whole group to be gone.
        """
        backend = self._backend
        if patient:
            await backend.within(self._grace, self._process.wait)
        for kill in (False, True):
            if self._gone():
                return
            self._signal(kill=kill)
            deadline = backend.now() + self._grace
            await backend.within(self._grace, self._process.wait)
            while not self._gone() and backend.now() < deadline:
                await backend.sleep(GROUP_POLL)

    def _gone(self) -> bool:
        """True when the server has exited and its group (if it has one) is empty."""
        if not self._process.exited:
            return False
        return not (self._own_group and group_alive(self._process.pid))

    def _signal(self, *, kill: bool) -> None:
        process = self._process
        if self._own_group:
            signal_group(process.pid, kill=kill)
        elif not process.exited:
            with contextlib.suppress(ProcessLookupError):
                if kill:
                    process.kill()
                else:
                    process.terminate()

    async def _readers_done(self) -> None:
        await self._stdout_done.wait()
        await self._stderr_done.wait()

    async def aclose(self) -> None:
        """Shut the server down: close its stdin, wait, terminate, wait, kill (docs/protocol.md#stdio).

        The signals go to the server's whole process group where there is one (see ``_io``);
        the server's pipes are closed and nothing is left for the garbage collector to finish.
        Pending and later requests fail (kind ``closed``).
        """
        self._watcher.cancel()
        with self._backend.shielded():
            await self._process.close_input()
            await self._end(patient=True)
            # Every process holding the pipes is gone: the readers reach the end of both soon.
            # One that does not (a pipe passed to a process outside the group) is cancelled
            # when the client's task group ends.
            await self._backend.within(self._grace, self._readers_done)
            for report in self._stream.summaries():
                self._on_report(report.message)
            if self._broken is None:
                self._broken = TransportError(f"server {self.label!r} was shut down", kind="closed")
            self._fail_all(self._broken)
            self._process.close()


@final
class Stdio(Generic[P]):
    """The stdio transport on one backend: what ``asyncio_stdio`` and ``trio_stdio`` export.

    Args:
        backend: The event loop's primitives.
    """

    __slots__ = ("_backend",)

    def __init__(self, backend: Backend[P]) -> None:
        self._backend = backend

    async def serve_stdio(
        self,
        responder: Responder,
        *,
        stdin_fd: int = 0,
        stdout_fd: int = 1,
        max_message_size: int | None = None,
        results_have_string_keys: bool = False,
        defer_reads_over: int | None = DEFAULT_DEFER_READS_OVER,
        watch: bool = True,
    ) -> None:
        """Serve ``responder`` over newline-delimited JSON-RPC on two descriptors until end of input.

        Answers are written as they are made, input is read only when no complete request is left
        (:func:`~skills_core.server_stream.serve_async`), and files larger than
        ``defer_reads_over`` are read and encoded in a worker thread, so the event loop stays free.
        Works for pipes, ttys and regular files alike. Returns when the client leaves.

        **Changes pushed**, as by the blocking loop (:mod:`skills_core.adapters.blocking_stdio`):
        while it waits for input the loop keeps the change timer
        (:class:`~skills_core.server_stream.ChangeTimer`), looking every ``ttlMs`` (at least
        0.1 s) and writing the notifications a change means for this client (2025-11-25:
        ``list_changed`` and ``updated``; 2026-07-28: on its ``subscriptions/listen`` streams).
        Cancelling the task that serves is the server's shutdown: the responses that end the
        client's listen streams (PUSH-08) are written first, within
        :data:`CLOSE_GRACE` seconds, then the cancellation goes on.

        Args:
            responder: The request path: a :class:`~skills_core.server.ServerConnection`.
            stdin_fd: Descriptor to read requests from.
            stdout_fd: Descriptor to write responses to (nothing else is ever written to it).
            max_message_size: The endpoint's message cap; ``None`` keeps the default.
            results_have_string_keys: See :class:`~skills_core.server_stream.ServerStream`.
            defer_reads_over: Files listed as larger than this are read in a worker thread;
                ``None`` reads every file on the event loop.
            watch: Look for catalog changes while idle and notify the client (a
                :class:`~skills_core.server.ServerConnection` responder, or a loading server's
                connection once its catalog is loaded).
        """
        backend = self._backend
        stream = ServerStream(
            responder,
            max_message_size=max_message_size,
            results_have_string_keys=results_have_string_keys,
            defer_reads_over=defer_reads_over,
        )
        timer = ChangeTimer(stream) if watch else None
        async with backend.pipes(stdin_fd, stdout_fd) as pipes:
            try:
                await serve_async(
                    stream,
                    receive=pipes.receive,
                    send=pipes.send,
                    run_blocking=backend.run_blocking,
                    timer=timer,
                    receive_within=pipes.receive_within,
                    clock=backend.now,
                )
            except backend.cancelled:
                ends = stream.close()  # the server shuts down: end the listen streams (PUSH-08)
                if ends:
                    with backend.shielded():
                        await backend.within(CLOSE_GRACE, lambda: pipes.send(ends))
                raise

    @contextlib.asynccontextmanager
    async def open_stdio_client(
        self,
        argv: Sequence[str],
        *,
        label: str,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | None = None,
        max_message_size: int | None = None,
        on_report: Callable[[str], None] = report_to_stderr,
        on_stderr: Callable[[str], None] | None = None,
        shutdown_grace: float = SHUTDOWN_GRACE,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> AsyncIterator[StdioClient[P]]:
        """Spawn ``argv`` as a stdio MCP server and yield a client connected to it.

        The server starts in a session of its own where the platform has process groups, and
        leaving the block ends its whole group (see :mod:`skills_core.adapters._io`). When the
        server exits by itself, what it left running is ended too, so its pipes close and pending
        requests fail.

        Args:
            argv: The command and its arguments (no shell).
            label: The host-assigned label of this server, used in every message.
            env: The child's environment (default: inherited).
            cwd: The child's working directory.
            stderr: ``None`` (the default) reads the server's stderr line by line and hands each
                line to ``on_stderr``; a descriptor (or ``subprocess.DEVNULL``) sends it there raw.
            max_message_size: The endpoint's message cap; ``None`` keeps the default.
            on_report: Called with one line for each non-fatal oddity (a non-JSON line, ...); of
                each kind, the first few, then a count when the connection ends.
            on_stderr: Called with each line of the server's stderr (the server's text, at most
                4 KiB of it: pass it through ``display`` before showing it); the default writes
                the first 200 lines to our stderr, labelled and escaped
                (:func:`~skills_core.adapters._io.stderr_relay`). The last lines are kept in
                :attr:`StdioClient.stderr_tail` either way.
            shutdown_grace: Seconds to wait for exit after closing stdin, and again after SIGTERM.
            timeout: Seconds the client waits for an answer when awaited as a requester
                (``client(method, params)``); ``None`` waits forever. :meth:`StdioClient.request`
                takes its own.

        Raises:
            TransportError: kind ``spawn-failed`` when the command cannot be started.
        """
        if not argv:
            raise TransportError(f"server {label!r}: empty command", kind="spawn-failed")
        backend = self._backend
        try:
            process = await backend.spawn(
                list(argv), env=dict(env) if env is not None else None, cwd=cwd, stderr=stderr
            )
        except OSError as exc:
            raise TransportError(
                f"server {label!r}: cannot start {argv[0]!r}: {exc.strerror or exc}",
                kind="spawn-failed",
            ) from None
        async with backend.task_group() as tasks:
            client = StdioClient(
                backend,
                process,
                tasks,
                label=label,
                max_message_size=max_message_size,
                on_report=on_report,
                on_stderr=on_stderr if on_stderr is not None else stderr_relay(label),
                shutdown_grace=shutdown_grace,
                own_group=NEW_SESSION,
                timeout=timeout,
            )
            try:
                yield client
            finally:
                await client.aclose()
