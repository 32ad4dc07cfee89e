"""trio stdio adapter: the same shape as :mod:`skills_core.adapters.asyncio_stdio`, on trio.

Theory of operation: the transport is :mod:`skills_core.adapters.stdio`, written once; this module
is its trio backend: a nursery owns the client's tasks, ``trio.move_on_after`` bounds each wait,
cancel scopes shield what must finish (telling a server a request was cancelled, shutting it
down), ``trio.lowlevel.open_process`` spawns servers and ``trio.lowlevel.FdStream`` serves stdio
(on duplicated descriptors, so closing the streams leaves the originals open).

* :func:`serve_stdio` serves a :class:`~skills_core.server.ServerConnection` (any
  :class:`~skills_core.server_stream.Responder`) over two descriptors, and tells its client of
  catalog changes while idle, as ``skills-core serve`` does;
* :func:`open_stdio_client` spawns a server and yields a :class:`StdioClient`, whose ``process``
  is the ``trio.Process``.

See :class:`skills_core.adapters.stdio.Stdio` for what they do and take. trio is an optional
dependency, imported by this module only; importing :mod:`skills_core` never imports it.
"""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final, TypeAlias, final

try:
    import trio
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without trio
    raise ImportError(
        "skills_core.adapters.trio_stdio needs trio: pip install trio "
        "(or, where skills-core itself is installed, pip install 'skills-core[trio]')"
    ) from exc

from . import stdio
from ._io import NEW_SESSION, READ_CHUNK, SHUTDOWN_GRACE

__all__ = [
    "serve_stdio",
    "open_stdio_client",
    "StdioClient",
    "TrioBackend",
    "READ_CHUNK",
    "SHUTDOWN_GRACE",
]

#: A client connection on trio: its ``process`` is the ``trio.Process``.
StdioClient: TypeAlias = stdio.StdioClient[trio.Process]

#: What a closed or broken trio stream raises.
_GONE: Final = (trio.BrokenResourceError, trio.ClosedResourceError)


async def _receive_some(stream: trio.abc.ReceiveStream | None) -> bytes:
    """The next bytes of ``stream``; ``b""`` once it is closed or broken."""
    assert stream is not None
    try:
        return bytes(await stream.receive_some(READ_CHUNK))
    except _GONE:
        return b""


@final
class _Process:
    """A spawned server on trio (see :class:`~skills_core.adapters.stdio.ServerProcess`)."""

    __slots__ = ("native",)

    def __init__(self, process: trio.Process) -> None:
        self.native = process

    @property
    def pid(self) -> int:
        return self.native.pid

    @property
    def exited(self) -> bool:
        return self.native.returncode is not None

    @property
    def has_stderr(self) -> bool:
        return self.native.stderr is not None

    async def send(self, data: bytes) -> None:
        stdin = self.native.stdin
        assert stdin is not None
        try:
            await stdin.send_all(data)
        except _GONE as exc:
            raise stdio.ClosedPipeError(exc.__class__.__name__) from None

    async def receive(self) -> bytes:
        return await _receive_some(self.native.stdout)

    async def receive_stderr(self) -> bytes:
        return await _receive_some(self.native.stderr)

    async def wait(self) -> None:
        await self.native.wait()

    async def close_input(self) -> None:
        stdin = self.native.stdin
        if stdin is not None:
            with contextlib.suppress(*_GONE):
                await stdin.aclose()

    def terminate(self) -> None:
        self.native.terminate()

    def kill(self) -> None:
        self.native.kill()

    def close(self) -> None:
        """Nothing to do: trio's pipe streams close their descriptors when collected."""


@final
class _Tasks:
    """A nursery, each task in a cancel scope of its own."""

    __slots__ = ("_nursery",)

    def __init__(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery

    def start(self, fn: Callable[[], Awaitable[None]]) -> trio.CancelScope:
        scope = trio.CancelScope()

        async def run() -> None:
            with scope:
                await fn()

        self._nursery.start_soon(run)
        return scope


@final
class _Pipes:
    """A server's two descriptors, duplicated, as trio streams."""

    __slots__ = ("_stdin", "_stdout")

    def __init__(self, stdin: trio.lowlevel.FdStream, stdout: trio.lowlevel.FdStream) -> None:
        self._stdin = stdin
        self._stdout = stdout

    async def receive(self) -> bytes:
        return bytes(await self._stdin.receive_some(READ_CHUNK))

    async def receive_within(self, seconds: float) -> bytes | None:
        # trio waits for the descriptor to be readable, then reads: a cancelled wait loses nothing
        with trio.move_on_after(seconds):
            return bytes(await self._stdin.receive_some(READ_CHUNK))
        return None

    async def send(self, data: bytes) -> bool:
        try:
            await self._stdout.send_all(data)
        except trio.BrokenResourceError:  # the client has gone; nobody is left to answer
            return False
        return True


@final
class TrioBackend:
    """The trio primitives of :class:`~skills_core.adapters.stdio.Backend`."""

    cancelled: Final = trio.Cancelled

    async def spawn(
        self, argv: list[str], *, env: dict[str, str] | None, cwd: str | None, stderr: int | None
    ) -> _Process:
        """See :meth:`skills_core.adapters.stdio.Backend.spawn`."""
        process = await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if stderr is None else stderr,
            env=env,
            cwd=cwd,
            start_new_session=NEW_SESSION,
        )
        return _Process(process)

    def event(self) -> trio.Event:
        """A new ``trio.Event``."""
        return trio.Event()

    def lock(self) -> trio.Lock:
        """A new ``trio.Lock``."""
        return trio.Lock()

    @contextlib.asynccontextmanager
    async def task_group(self) -> AsyncIterator[_Tasks]:
        """A nursery whose tasks are cancelled when the block ends."""
        async with trio.open_nursery() as nursery:
            try:
                yield _Tasks(nursery)
            finally:
                nursery.cancel_scope.cancel()

    async def within(self, seconds: float | None, wait: Callable[[], Awaitable[object]]) -> bool:
        """``trio.move_on_after``; False when it moved on."""
        with trio.move_on_after(math.inf if seconds is None else seconds) as scope:
            await wait()
        return not scope.cancelled_caught

    def shielded(self) -> trio.CancelScope:
        """A shielded cancel scope."""
        return trio.CancelScope(shield=True)

    async def sleep(self, seconds: float) -> None:
        """``trio.sleep``."""
        await trio.sleep(seconds)

    def now(self) -> float:
        """``trio.current_time()``."""
        return trio.current_time()

    @contextlib.asynccontextmanager
    async def pipes(self, stdin_fd: int, stdout_fd: int) -> AsyncIterator[_Pipes]:
        """Streams on duplicates of the descriptors, closed when the block ends."""
        async with (
            trio.lowlevel.FdStream(os.dup(stdin_fd)) as stdin,
            trio.lowlevel.FdStream(os.dup(stdout_fd)) as stdout,
        ):
            yield _Pipes(stdin, stdout)

    async def run_blocking(self, fn: Callable[[], bytes]) -> bytes:
        """``fn()`` in a worker thread (``trio.to_thread.run_sync``)."""
        return await trio.to_thread.run_sync(fn)


_STDIO: Final = stdio.Stdio(TrioBackend())

#: Serve a responder over stdin/stdout; see :meth:`skills_core.adapters.stdio.Stdio.serve_stdio`.
serve_stdio: Final = _STDIO.serve_stdio
#: Spawn a server and yield a :class:`StdioClient`; see
#: :meth:`skills_core.adapters.stdio.Stdio.open_stdio_client`.
open_stdio_client: Final = _STDIO.open_stdio_client
