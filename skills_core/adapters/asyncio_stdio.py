"""asyncio stdio adapter: serve a skills server over stdin/stdout, or talk to a server process.

Theory of operation: the transport is :mod:`skills_core.adapters.stdio`, written once; this module
is its asyncio backend, standard library only. Pipes a server reads and writes go through the
default executor with blocking ``os.read``/``os.write`` (which works for pipes, ttys and regular
files alike and keeps the event loop free); a server process is spawned with
``loop.subprocess_exec`` and a protocol that says when the process itself exits (``Process.wait()``
returns only once every pipe is closed as well, which never happens while a process the server
forked keeps one open).

* :func:`serve_stdio` serves a :class:`~skills_core.server.ServerConnection` (any
  :class:`~skills_core.server_stream.Responder`) over two descriptors, and tells its client of
  catalog changes while idle, as ``skills-core serve`` does;
* :func:`open_stdio_client` spawns a server and yields a :class:`StdioClient`, whose ``process``
  is the ``asyncio.subprocess.Process``.

See :class:`skills_core.adapters.stdio.Stdio` for what they do and take.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final, TypeAlias, final

from . import stdio
from ._io import NEW_SESSION, READ_CHUNK, SHUTDOWN_GRACE, write_all

__all__ = [
    "serve_stdio",
    "open_stdio_client",
    "StdioClient",
    "AsyncioBackend",
    "READ_CHUNK",
    "SHUTDOWN_GRACE",
]

#: A client connection on asyncio: its ``process`` is the ``asyncio.subprocess.Process``.
StdioClient: TypeAlias = stdio.StdioClient[asyncio.subprocess.Process]


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol for a process with streams, that also says when the process exited."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit, loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


@final
class _Process:
    """A spawned server on asyncio (see :class:`~skills_core.adapters.stdio.ServerProcess`)."""

    __slots__ = ("_protocol", "_transport", "native")

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        transport: asyncio.SubprocessTransport,
        protocol: _Protocol,
    ) -> None:
        self.native = process
        self._transport = transport
        self._protocol = protocol

    @property
    def pid(self) -> int:
        return self.native.pid

    @property
    def exited(self) -> bool:
        return self._protocol.exited.is_set()

    @property
    def has_stderr(self) -> bool:
        return self.native.stderr is not None

    async def send(self, data: bytes) -> None:
        stdin = self.native.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            raise stdio.ClosedPipeError(exc.__class__.__name__) from None

    async def receive(self) -> bytes:
        stdout = self.native.stdout
        assert stdout is not None
        return await stdout.read(READ_CHUNK)

    async def receive_stderr(self) -> bytes:
        stderr = self.native.stderr
        assert stderr is not None
        return await stderr.read(READ_CHUNK)

    async def wait(self) -> None:
        await self._protocol.exited.wait()

    async def close_input(self) -> None:
        stdin = self.native.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await stdin.wait_closed()

    def terminate(self) -> None:
        self.native.terminate()

    def kill(self) -> None:
        self.native.kill()

    def close(self) -> None:
        self._transport.close()


@final
class _Tasks:
    """Tasks a client started; cancelled and awaited when its block ends."""

    __slots__ = ("tasks",)

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[None]] = []

    def start(self, fn: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
        async def run() -> None:
            await fn()

        task = asyncio.create_task(run())
        self.tasks.append(task)
        return task


@final
class _Pipes:
    """A server's two descriptors, read and written in the default executor.

    While the loop waits for input with a timeout (its change timer), a descriptor the event loop
    can watch (a pipe, a tty, a socket) is waited for with ``add_reader`` and read once ready, so
    no worker thread is left blocked in a read when the wait ends or the server is cancelled; a
    regular file is read in the executor, the read kept for the next call when time runs out.
    """

    __slots__ = ("_loop", "_pending", "_selectable", "_stdin_fd", "_stdout_fd")

    def __init__(self, stdin_fd: int, stdout_fd: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._stdin_fd = stdin_fd
        self._stdout_fd = stdout_fd
        self._pending: asyncio.Future[bytes] | None = None
        self._selectable = True

    async def receive(self) -> bytes:
        pending, self._pending = self._pending, None
        if pending is not None:
            return await pending
        return await self._loop.run_in_executor(None, os.read, self._stdin_fd, READ_CHUNK)

    async def receive_within(self, seconds: float) -> bytes | None:
        loop = self._loop
        if self._pending is None and self._selectable:
            ready = loop.create_future()

            def readable() -> None:
                if not ready.done():
                    ready.set_result(None)

            try:
                loop.add_reader(self._stdin_fd, readable)
            # a regular file, a loop without a selector, or a descriptor a transport holds
            except (OSError, ValueError, NotImplementedError, RuntimeError):
                self._selectable = False
            else:
                try:
                    await asyncio.wait({ready}, timeout=seconds)
                finally:
                    loop.remove_reader(self._stdin_fd)
                if not ready.done():
                    return None
                return os.read(self._stdin_fd, READ_CHUNK)  # ready: returns at once
        if self._pending is None:
            self._pending = loop.run_in_executor(None, os.read, self._stdin_fd, READ_CHUNK)
        done, _ = await asyncio.wait({self._pending}, timeout=seconds)
        if not done:
            return None
        pending, self._pending = self._pending, None
        return pending.result()

    async def send(self, data: bytes) -> bool:
        try:
            await self._loop.run_in_executor(None, write_all, self._stdout_fd, data)
        except BrokenPipeError:  # the client has gone; nobody is left to answer
            return False
        return True


@final
class AsyncioBackend:
    """The asyncio primitives of :class:`~skills_core.adapters.stdio.Backend`."""

    cancelled: Final = asyncio.CancelledError

    async def spawn(
        self, argv: list[str], *, env: dict[str, str] | None, cwd: str | None, stderr: int | None
    ) -> _Process:
        """See :meth:`skills_core.adapters.stdio.Backend.spawn`."""
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.subprocess_exec(
            lambda: _Protocol(READ_CHUNK, loop),
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if stderr is None else stderr,
            env=env,
            cwd=cwd,
            start_new_session=NEW_SESSION,
        )
        return _Process(asyncio.subprocess.Process(transport, protocol, loop), transport, protocol)

    def event(self) -> asyncio.Event:
        """A new ``asyncio.Event``."""
        return asyncio.Event()

    def lock(self) -> asyncio.Lock:
        """A new ``asyncio.Lock``."""
        return asyncio.Lock()

    @contextlib.asynccontextmanager
    async def task_group(self) -> AsyncIterator[_Tasks]:
        """Tasks cancelled, then awaited (whatever they raised), when the block ends."""
        tasks = _Tasks()
        try:
            yield tasks
        finally:
            for task in tasks.tasks:
                task.cancel()
            await asyncio.gather(*tasks.tasks, return_exceptions=True)

    async def within(self, seconds: float | None, wait: Callable[[], Awaitable[object]]) -> bool:
        """``asyncio.wait_for``; False on its timeout."""
        try:
            await asyncio.wait_for(wait(), seconds)
        except TimeoutError:
            return False
        return True

    def shielded(self) -> contextlib.nullcontext[None]:
        """Nothing to do: a cancelled asyncio task may await again in its handler."""
        return contextlib.nullcontext()

    async def sleep(self, seconds: float) -> None:
        """``asyncio.sleep``."""
        await asyncio.sleep(seconds)

    def now(self) -> float:
        """The running loop's clock."""
        return asyncio.get_running_loop().time()

    @contextlib.asynccontextmanager
    async def pipes(self, stdin_fd: int, stdout_fd: int) -> AsyncIterator[_Pipes]:
        """The descriptors themselves (they are neither duplicated nor closed)."""
        yield _Pipes(stdin_fd, stdout_fd)

    async def run_blocking(self, fn: Callable[[], bytes]) -> bytes:
        """``fn()`` in the default executor."""
        return await asyncio.get_running_loop().run_in_executor(None, fn)


_STDIO: Final = stdio.Stdio(AsyncioBackend())

#: Serve a responder over stdin/stdout; see :meth:`skills_core.adapters.stdio.Stdio.serve_stdio`.
serve_stdio: Final = _STDIO.serve_stdio
#: Spawn a server and yield a :class:`StdioClient`; see
#: :meth:`skills_core.adapters.stdio.Stdio.open_stdio_client`.
open_stdio_client: Final = _STDIO.open_stdio_client
