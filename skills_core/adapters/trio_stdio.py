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
        on_stderr: Callable[[str], None],
        shutdown_grace: float = SHUTDOWN_GRACE,
        own_group: bool = False,
    ) -> None:
        """Wrap a started process; use :func:`open_stdio_client` instead of calling this."""
        self.label = label
        self._grace = shutdown_grace
        self._process = process
        self._own_group = own_group
        self._loop = ClientStream(label=label, max_message_size=max_message_size)
        self._stderr = StderrLines()
        self._on_report = on_report
        self._on_stderr = on_stderr
        self._waiters: dict[RequestId, _Waiter] = {}
        self._broken: SkillsError | None = None
        self._closing = False
        self._write_lock = trio.Lock()
        self._stdout_done = trio.Event()
        self._stderr_done = trio.Event()
        if process.stderr is None:
            self._stderr_done.set()

    @property
    def process(self) -> trio.Process:
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
        try:
            while True:
                try:
                    data = bytes(await stdout.receive_some(READ_CHUNK))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if self._broken is None:  # after giving up, output is drained unread
                    await self._dispatch(self._loop.feed(data))
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
        stream = self._process.stderr
        assert stream is not None
        try:
            while True:
                try:
                    data = bytes(await stream.receive_some(READ_CHUNK))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                for line in self._stderr.feed(data):
                    self._on_stderr(line)
                if not data:
                    return
        finally:
            self._stderr_done.set()

    async def _watch(self) -> None:
        """When the server exits by itself, end what it left running (its pipes then close)."""
        await self._process.wait()
        if not self._closing:
            await self._end(patient=False)

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

    async def _end(self, *, patient: bool) -> None:
        """End the server's group: wait for the server to exit (``patient``), SIGTERM, SIGKILL.

        Once the server itself has exited, what remains of its group gets SIGTERM at once; each
        signal is followed by up to the grace period for the whole group to be gone.
        """
        if patient:
            with trio.move_on_after(self._grace):
                await self._process.wait()
        for kill in (False, True):
            if self._gone():
                return
            self._signal(kill=kill)
            with trio.move_on_after(self._grace):
                await self._process.wait()
                while not self._gone():
                    await trio.sleep(GROUP_POLL)

    def _gone(self) -> bool:
        """True when the server has exited and its group (if it has one) is empty."""
        if self._process.returncode is None:
            return False
        return not (self._own_group and group_alive(self._process.pid))

    def _signal(self, *, kill: bool) -> None:
        process = self._process
        if self._own_group:
            signal_group(process.pid, kill=kill)
        elif process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                if kill:
                    process.kill()
                else:
                    process.terminate()

    async def aclose(self) -> None:
        """Shut the server down: close its stdin, wait, terminate, wait, kill (§1.7).

        The signals go to the server's whole process group where there is one (see ``_io``).
        """
        self._closing = True
        process = self._process
        with trio.CancelScope(shield=True):
            if process.stdin is not None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await process.stdin.aclose()
            await self._end(patient=True)
            # Every process holding the pipes is gone: the readers reach the end of both soon.
            with trio.move_on_after(self._grace):
                await self._stdout_done.wait()
                await self._stderr_done.wait()
            for report in self._loop.summaries():
                self._on_report(report.message)
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
    on_stderr: Callable[[str], None] | None = None,
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
            stderr=subprocess.PIPE if stderr is None else stderr,
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
        process,
        label=label,
        max_message_size=max_message_size,
        on_report=on_report,
        on_stderr=on_stderr if on_stderr is not None else stderr_relay(label),
        shutdown_grace=shutdown_grace,
        own_group=NEW_SESSION,
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(client.read_forever)
        if process.stderr is not None:
            nursery.start_soon(client._read_stderr)
        nursery.start_soon(client._watch)
        try:
            yield client
        finally:
            await client.aclose()
            nursery.cancel_scope.cancel()
