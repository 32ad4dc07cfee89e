"""asyncio stdio adapter: serve a skills server over stdin/stdout, or talk to a server process.

Theory of operation: each function here is a thin loop around the I/O-free cores of
:mod:`skills_core.adapters._core`. Only this module (and its trio twin) reads pipes, spawns
processes and waits on clocks; policy that is not I/O lives in the cores.

* :func:`serve_stdio` drives a :class:`~skills_core.adapters.ServerStream`: it writes answers as
  they are made (small ones batched), reads stdin in large chunks only when no complete request is
  left, and reads and encodes large files in a worker thread, so the event loop stays free and
  memory stays bounded however a client pipelines.
* :func:`open_stdio_client` spawns a server command and yields a :class:`StdioClient`: requests with
  timeouts (a timed-out or cancelled request sends ``notifications/cancelled``), the server's stderr
  passed through, and a clean shutdown: close stdin, wait, terminate, wait, kill (base-protocol.md
  §1.7). No server process outlives the ``async with`` block.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import final

from skills_core.adapters._client import (
    ClientLoop,
    ClientOutcome,
    Failed,
    GiveUp,
    Reply,
    Report,
    Resolved,
)
from skills_core.adapters._core import (
    DEFAULT_DEFER_READS_OVER,
    FINISHED,
    PendingOutput,
    Responder,
    ServerStream,
)
from skills_core.adapters._io import READ_CHUNK, SHUTDOWN_GRACE, report_to_stderr, write_all
from skills_core.errors import SkillsError, TransportError
from skills_core.jsonrpc import NEED_DATA, RequestId
from skills_core.jsonvalue import JSONValue

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


@final
class StdioClient:
    """A JSON-RPC client connection to one server process (see :func:`open_stdio_client`)."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        *,
        label: str,
        max_message_size: int | None,
        on_report: Callable[[str], None],
        shutdown_grace: float = SHUTDOWN_GRACE,
    ) -> None:
        """Wrap a started process; use :func:`open_stdio_client` instead of calling this."""
        self.label = label
        self._grace = shutdown_grace
        self._process = process
        self._loop = ClientLoop(label=label, max_message_size=max_message_size)
        self._on_report = on_report
        self._waiters: dict[RequestId, asyncio.Future[dict[str, JSONValue]]] = {}
        self._broken: SkillsError | None = None
        self._write_lock = asyncio.Lock()
        self._reader = asyncio.create_task(self._read_forever())

    @property
    def process(self) -> asyncio.subprocess.Process:
        """The server process."""
        return self._process

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
            await self._dispatch(self._loop.feed(data))
            if not data or self._broken is not None:
                if self._broken is None:
                    self._broken = TransportError(
                        f"server {self.label!r} closed its output", kind="closed"
                    )
                self._fail_all(self._broken)
                return

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

    async def aclose(self) -> None:
        """Shut the server down: close its stdin, wait, terminate, wait, kill (§1.7)."""
        process = self._process
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await process.stdin.wait_closed()
        for step in (None, process.terminate, process.kill):
            if step is not None and process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    step()
            try:
                await asyncio.wait_for(process.wait(), self._grace)
                break
            except TimeoutError:
                continue
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, SkillsError):
            await self._reader
        if self._broken is None:
            self._broken = TransportError(f"server {self.label!r} was shut down", kind="closed")
        self._fail_all(self._broken)


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
    shutdown_grace: float = SHUTDOWN_GRACE,
) -> AsyncIterator[StdioClient]:
    """Spawn ``argv`` as a stdio MCP server and yield a client connected to it.

    Args:
        argv: The command and its arguments (no shell).
        label: The host-assigned label of this server, used in every message.
        env: The child's environment (default: inherited).
        cwd: The child's working directory.
        stderr: Where the child's stderr goes; ``None`` passes it through to ours.
        max_message_size: The endpoint's message cap; ``None`` keeps the default.
        on_report: Called with one line for each non-fatal oddity (a non-JSON line, ...).
        shutdown_grace: Seconds to wait for exit after closing stdin, and again after SIGTERM.

    Raises:
        TransportError: kind ``spawn-failed`` when the command cannot be started.
    """
    if not argv:
        raise TransportError(f"server {label!r}: empty command", kind="spawn-failed")
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            limit=READ_CHUNK,
        )
    except OSError as exc:
        raise TransportError(
            f"server {label!r}: cannot start {argv[0]!r}: {exc.strerror or exc}",
            kind="spawn-failed",
        ) from None
    client = StdioClient(
        process,
        label=label,
        max_message_size=max_message_size,
        on_report=on_report,
        shutdown_grace=shutdown_grace,
    )
    try:
        yield client
    finally:
        await client.aclose()
