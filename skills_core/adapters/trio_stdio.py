"""trio stdio adapter: the same shape as :mod:`skills_core.adapters.asyncio_stdio`, on trio.

Theory of operation: identical to the asyncio adapter, with trio's primitives: a nursery owns the
reader task, ``trio.fail_after`` implements timeouts, and ``trio.lowlevel.FdStream`` serves stdio.
trio is an optional dependency (``pip install skills-core[trio]``); importing :mod:`skills_core`
never imports this module or trio.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import final

try:
    import trio
except ImportError as exc:  # pragma: no cover - exercised only without the extra installed
    raise ImportError(
        "skills_core.adapters.trio_stdio needs trio: pip install 'skills-core[trio]'"
    ) from exc

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
from skills_core.adapters._io import READ_CHUNK, SHUTDOWN_GRACE, report_to_stderr
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

    Same arguments and behaviour as :func:`skills_core.adapters.asyncio_stdio.serve_stdio`: answers
    are written as they are made, input is read only when no complete request is left, and files
    larger than ``defer_reads_over`` are read and encoded in a worker thread
    (``trio.to_thread.run_sync``). The descriptors are duplicated, so closing the streams leaves the
    originals open.
    """
    stream = ServerStream(
        responder,
        max_message_size=max_message_size,
        results_have_string_keys=results_have_string_keys,
        defer_reads_over=defer_reads_over,
    )
    async with (
        trio.lowlevel.FdStream(os.dup(stdin_fd)) as stdin,
        trio.lowlevel.FdStream(os.dup(stdout_fd)) as stdout,
    ):
        while True:
            out = stream.next_output()
            if out is NEED_DATA:
                stream.receive_data(bytes(await stdin.receive_some(READ_CHUNK)))
                continue
            if out is FINISHED:
                return
            if isinstance(out, PendingOutput):
                out = await trio.to_thread.run_sync(out.run)
            assert isinstance(out, bytes)
            try:
                await stdout.send_all(out)
            except trio.BrokenResourceError:  # the client has gone; nobody is left to answer
                return


class _Waiter:
    """One pending request: an event and its outcome."""

    __slots__ = ("error", "event", "result")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.result: dict[str, JSONValue] | None = None
        self.error: SkillsError | None = None


@final
class StdioClient:
    """A JSON-RPC client connection to one server process (see :func:`open_stdio_client`)."""

    def __init__(
        self,
        process: trio.Process,
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
        self._waiters: dict[RequestId, _Waiter] = {}
        self._broken: SkillsError | None = None
        self._write_lock = trio.Lock()

    @property
    def process(self) -> trio.Process:
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
        waiter = _Waiter()
        self._waiters[request_id] = waiter
        try:
            await self._write(data)
            with trio.move_on_after(timeout if timeout is not None else float("inf")) as scope:
                await waiter.event.wait()
            if scope.cancelled_caught:
                with trio.CancelScope(shield=True):
                    await self._cancel(request_id, f"timed out after {timeout} seconds")
                raise TransportError(
                    f"server {self.label!r} did not answer {method} within {timeout} seconds",
                    kind="timeout",
                )
        except trio.Cancelled:
            with trio.CancelScope(shield=True):
                await self._cancel(request_id, "cancelled by the client")
            raise
        finally:
            self._waiters.pop(request_id, None)
        if waiter.error is not None:
            raise waiter.error
        assert waiter.result is not None
        return waiter.result

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
                await stdin.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise TransportError(
                    f"server {self.label!r} closed its input ({exc.__class__.__name__})",
                    kind="closed",
                ) from None

    async def read_forever(self) -> None:
        """Read the server's output until it ends (run by :func:`open_stdio_client`)."""
        stdout = self._process.stdout
        assert stdout is not None
        while True:
            try:
                data = bytes(await stdout.receive_some(READ_CHUNK))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
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
                if waiter is not None and not waiter.event.is_set():
                    waiter.result = outcome.result
                    waiter.event.set()
            elif isinstance(outcome, Failed):
                waiter = self._waiters.get(outcome.request_id)
                if waiter is not None and not waiter.event.is_set():
                    waiter.error = outcome.error
                    waiter.event.set()
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
            if not waiter.event.is_set():
                waiter.error = error
                waiter.event.set()

    async def aclose(self) -> None:
        """Shut the server down: close its stdin, wait, terminate, wait, kill (§1.7)."""
        process = self._process
        with trio.CancelScope(shield=True):
            if process.stdin is not None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await process.stdin.aclose()
            for step in (None, process.terminate, process.kill):
                if step is not None and process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        step()
                with trio.move_on_after(self._grace):
                    await process.wait()
                    break
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

    Same arguments and behaviour as :func:`skills_core.adapters.asyncio_stdio.open_stdio_client`.

    Raises:
        TransportError: kind ``spawn-failed`` when the command cannot be started.
    """
    if not argv:
        raise TransportError(f"server {label!r}: empty command", kind="spawn-failed")
    try:
        process = await trio.lowlevel.open_process(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
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
    async with trio.open_nursery() as nursery:
        nursery.start_soon(client.read_forever)
        try:
            yield client
        finally:
            await client.aclose()
            nursery.cancel_scope.cancel()
