"""asyncio stdio adapter: serve a skills server over stdin/stdout, or talk to a server process.

Theory of operation: each function here is a thin loop around the I/O-free cores of
:mod:`skills_core.server_stream`. Only this module (and its trio twin) reads pipes, spawns
processes and waits on clocks; policy that is not I/O lives in the cores.

* :func:`serve_stdio` drives a :class:`~skills_core.adapters.ServerStream`: it writes answers as
  they are made (small ones batched), reads stdin in large chunks only when no complete request is
  left, and reads and encodes large files in a worker thread, so the event loop stays free and
  memory stays bounded however a client pipelines.
* :func:`open_stdio_client` spawns a server command in a process group of its own and yields a
  :class:`StdioClient`: requests with timeouts (a timed-out or cancelled request sends
  ``notifications/cancelled``), the server's stderr read line by line and relayed labelled and
  escaped (or handed to the caller), and a clean shutdown of the whole group: close stdin, wait,
  terminate, wait, kill (base-protocol.md §1.7; :mod:`skills_core.adapters._io`). No process of
  the group outlives the ``async with`` block, and no pipe is left for the garbage collector.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import final

from ..client_stream import (
    ClientOutcome,
    ClientStream,
    Failed,
    GiveUp,
    Reply,
    Report,
    Resolved,
    StderrLines,
)
from ..errors import SkillsError, TransportError
from ..jsonrpc import NEED_DATA, RequestId
from ..jsonvalue import JSONValue
from ..server_stream import (
    DEFAULT_DEFER_READS_OVER,
    FINISHED,
    PendingOutput,
    Responder,
    ServerStream,
)
from ._io import (
    GROUP_POLL,
    NEW_SESSION,
    READ_CHUNK,
    SHUTDOWN_GRACE,
    group_alive,
    report_to_stderr,
    signal_group,
    stderr_relay,
    write_all,
)

__all__ = ["serve_stdio", "open_stdio_client", "StdioClient", "READ_CHUNK", "SHUTDOWN_GRACE"]


async def serve_stdio(
    responder: Responder,
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    max_message_size: int | None = None,
    results_have_string_keys: bool = False,
    defer_reads_over: int | None = DEFAULT_DEFER_READS_OVER,
) -> None:
    """Serve ``responder`` over newline-delimited JSON-RPC on two file descriptors until end of input.

    Reads and writes run in the default executor with blocking ``os.read``/``os.write``, which works
    for pipes, ttys and regular files alike and keeps the event loop free; so do the reads and
    encoding of files larger than ``defer_reads_over``. Returns when the client leaves.

    Args:
        responder: The request path: a :class:`~skills_core.server.ServerConnection`.
        stdin_fd: Descriptor to read requests from.
        stdout_fd: Descriptor to write responses to (nothing else is ever written to it).
        max_message_size: The endpoint's message cap; ``None`` keeps the default.
        results_have_string_keys: See :class:`~skills_core.adapters.ServerStream`.
        defer_reads_over: Files listed as larger than this are read in a worker thread; ``None``
            reads every file on the event loop.
    """
    loop = asyncio.get_running_loop()
    stream = ServerStream(
        responder,
        max_message_size=max_message_size,
        results_have_string_keys=results_have_string_keys,
        defer_reads_over=defer_reads_over,
    )
    while True:
        out = stream.next_output()
        if out is NEED_DATA:
            stream.receive_data(await loop.run_in_executor(None, os.read, stdin_fd, READ_CHUNK))
            continue
        if out is FINISHED:
            return
        if isinstance(out, PendingOutput):
            out = await loop.run_in_executor(None, out.run)
        assert isinstance(out, bytes)
        try:
            await loop.run_in_executor(None, write_all, stdout_fd, out)
        except BrokenPipeError:  # the client has gone; nobody is left to answer
            return


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol for a process with streams, that also says when the process exited.

    ``Process.wait()`` returns only once every pipe is closed as well, which never happens while
    a process the server forked keeps one open; :attr:`exited` is set as soon as the server
    itself has exited.
    """

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit, loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


@final
class StdioClient:
    """A JSON-RPC client connection to one server process (see :func:`open_stdio_client`)."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        transport: asyncio.SubprocessTransport,
        protocol: _Protocol,
        *,
        label: str,
        max_message_size: int | None,
        on_report: Callable[[str], None],
        on_stderr: Callable[[str], None],
        shutdown_grace: float = SHUTDOWN_GRACE,
        own_group: bool = False,
    ) -> None:
        """Wrap a started process; use :func:`open_stdio_client` instead of calling this."""
        self.label = label
        self._grace = shutdown_grace
        self._process = process
        self._transport = transport
        self._protocol = protocol
        self._own_group = own_group
        self._loop = ClientStream(label=label, max_message_size=max_message_size)
        self._stderr = StderrLines()
        self._on_report = on_report
        self._on_stderr = on_stderr
        self._waiters: dict[RequestId, asyncio.Future[dict[str, JSONValue]]] = {}
        self._broken: SkillsError | None = None
        self._write_lock = asyncio.Lock()
        self._readers = [asyncio.create_task(self._read_forever())]
        if process.stderr is not None:
            self._readers.append(asyncio.create_task(self._read_stderr()))
        self._watcher = asyncio.create_task(self._watch())

    @property
    def process(self) -> asyncio.subprocess.Process:
        """The server process."""
        return self._process

    @property
    def stderr_tail(self) -> tuple[str, ...]:
        """The last lines the server wrote on its stderr (its text: show it with ``display``)."""
        return self._stderr.tail

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
        request_id, data = self._loop.request(method, params)
        future: asyncio.Future[dict[str, JSONValue]] = asyncio.get_running_loop().create_future()
        self._waiters[request_id] = future
        try:
            await self._write(data)
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            await self._cancel(request_id, f"timed out after {timeout} seconds")
            raise TransportError(
                f"server {self.label!r} did not answer {method} within {timeout} seconds",
                kind="timeout",
            ) from None
        except asyncio.CancelledError:
            await self._cancel(request_id, "cancelled by the client")
            raise
        finally:
            self._waiters.pop(request_id, None)

    async def notify(self, method: str, params: Mapping[str, object] | None = None) -> None:
        """Send a notification."""
        await self._write(self._loop.connection.send_notification(method, params))

    async def _cancel(self, request_id: RequestId, reason: str) -> None:
        data = self._loop.cancel(request_id, reason)
        if data:
            with contextlib.suppress(SkillsError):
                await self._write(data)

    async def _write(self, data: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        async with self._write_lock:
            try:
                stdin.write(data)
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
                raise TransportError(
                    f"server {self.label!r} closed its input ({exc.__class__.__name__})",
                    kind="closed",
                ) from None

    async def _read_forever(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        while True:
            data = await stdout.read(READ_CHUNK)
            if self._broken is None:  # after giving up, output is drained unread
                await self._dispatch(self._loop.feed(data))
            if not data:
                if self._broken is None:
                    self._broken = TransportError(
                        f"server {self.label!r} closed its output", kind="closed"
                    )
                self._fail_all(self._broken)
                return

    async def _read_stderr(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        while True:
            data = await stream.read(READ_CHUNK)
            for line in self._stderr.feed(data):
                self._on_stderr(line)
            if not data:
                return

    async def _watch(self) -> None:
        """When the server exits by itself, end what it left running (its pipes then close)."""
        await self._protocol.exited.wait()
        await self._end(patient=False)

    async def _dispatch(self, outcomes: list[ClientOutcome]) -> None:
        for outcome in outcomes:
            if isinstance(outcome, Resolved):
                waiter = self._waiters.get(outcome.request_id)
                if waiter is not None and not waiter.done():
                    waiter.set_result(outcome.result)
            elif isinstance(outcome, Failed):
                waiter = self._waiters.get(outcome.request_id)
                if waiter is not None and not waiter.done():
                    waiter.set_exception(outcome.error)
            elif isinstance(outcome, Report):
                self._on_report(outcome.message)
            elif isinstance(outcome, Reply):
                with contextlib.suppress(SkillsError):
                    await self._write(outcome.data)
            else:
                assert isinstance(outcome, GiveUp)
                self._broken = outcome.error
                self._fail_all(outcome.error)

    def _fail_all(self, error: SkillsError) -> None:
        for waiter in self._waiters.values():
            if not waiter.done():
                waiter.set_exception(error)

    async def _end(self, *, patient: bool) -> None:
        """End the server's group: wait for the server to exit (``patient``), SIGTERM, SIGKILL.

        Once the server itself has exited, what remains of its group gets SIGTERM at once; each
        signal is followed by up to the grace period for the whole group to be gone.
        """
        if patient:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._protocol.exited.wait(), self._grace)
        clock = asyncio.get_running_loop()
        for kill in (False, True):
            if self._gone():
                return
            self._signal(kill=kill)
            deadline = clock.time() + self._grace
            while not self._gone() and clock.time() < deadline:
                await asyncio.sleep(GROUP_POLL)

    def _gone(self) -> bool:
        """True when the server has exited and its group (if it has one) is empty."""
        if not self._protocol.exited.is_set():
            return False
        return not (self._own_group and group_alive(self._process.pid))

    def _signal(self, *, kill: bool) -> None:
        process = self._process
        if self._own_group:
            signal_group(process.pid, kill=kill)
        elif not self._protocol.exited.is_set():
            with contextlib.suppress(ProcessLookupError):
                if kill:
                    process.kill()
                else:
                    process.terminate()

    async def aclose(self) -> None:
        """Shut the server down: close its stdin, wait, terminate, wait, kill (§1.7).

        The signals go to the server's whole process group where there is one (see ``_io``);
        the server's pipes are closed and nothing is left for the garbage collector to finish.
        """
        self._watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._watcher
        stdin = self._process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await stdin.wait_closed()
        await self._end(patient=True)
        # Every process holding the pipes is gone: the readers reach the end of both soon. One
        # that does not (a pipe passed to a process outside the group) is cancelled.
        _, late = await asyncio.wait(self._readers, timeout=self._grace)
        for task in late:
            task.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)
        for report in self._loop.summaries():
            self._on_report(report.message)
        if self._broken is None:
            self._broken = TransportError(f"server {self.label!r} was shut down", kind="closed")
        self._fail_all(self._broken)
        self._transport.close()


@contextlib.asynccontextmanager
async def open_stdio_client(
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
) -> AsyncIterator[StdioClient]:
    """Spawn ``argv`` as a stdio MCP server and yield a client connected to it.

    The server starts in a session of its own where the platform has process groups, and leaving
    the block ends its whole group (see :mod:`skills_core.adapters._io`). When the server exits by
    itself, what it left running is ended too, so its pipes close and pending requests fail.

    Args:
        argv: The command and its arguments (no shell).
        label: The host-assigned label of this server, used in every message.
        env: The child's environment (default: inherited).
        cwd: The child's working directory.
        stderr: ``None`` (the default) reads the server's stderr line by line and hands each
            line to ``on_stderr``; a descriptor (or ``subprocess.DEVNULL``) sends it there raw.
        max_message_size: The endpoint's message cap; ``None`` keeps the default.
        on_report: Called with one line for each non-fatal oddity (a non-JSON line, ...); of each
            kind, the first few, then a count when the connection ends.
        on_stderr: Called with each line of the server's stderr (the server's text, at most 4 KiB
            of it: pass it through ``display`` before showing it); the default writes the first
            200 lines to our stderr, labelled and escaped (:func:`~skills_core.adapters._io.stderr_relay`).
            The last lines are kept in :attr:`StdioClient.stderr_tail` either way.
        shutdown_grace: Seconds to wait for exit after closing stdin, and again after SIGTERM.

    Raises:
        TransportError: kind ``spawn-failed`` when the command cannot be started.
    """
    if not argv:
        raise TransportError(f"server {label!r}: empty command", kind="spawn-failed")
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.subprocess_exec(
            lambda: _Protocol(READ_CHUNK, loop),
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if stderr is None else stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=NEW_SESSION,
        )
    except OSError as exc:
        raise TransportError(
            f"server {label!r}: cannot start {argv[0]!r}: {exc.strerror or exc}",
            kind="spawn-failed",
        ) from None
    client = StdioClient(
        asyncio.subprocess.Process(transport, protocol, loop),
        transport,
        protocol,
        label=label,
        max_message_size=max_message_size,
        on_report=on_report,
        on_stderr=on_stderr if on_stderr is not None else stderr_relay(label),
        shutdown_grace=shutdown_grace,
        own_group=NEW_SESSION,
    )
    try:
        yield client
    finally:
        await client.aclose()
