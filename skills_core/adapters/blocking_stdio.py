"""Blocking stdio server loop: the fastest way to serve one client, and what ``skills-core serve`` uses.

Theory of operation: a server answers each request synchronously, so a stdio server needs no event
loop at all. :func:`serve_stdio` drives a :class:`~skills_core.adapters.ServerStream`: it writes
each batch of answers with ``os.write`` as soon as the stream makes it, and reads stdin (in large
chunks, with ``os.read``) only when no complete request is left. A write blocks while the client
is not reading, and nothing is read or answered meanwhile: that is the back-pressure that keeps
memory bounded whatever a client pipelines. Without asyncio there is nothing to import at start-up
and no thread hop per read. Use the asyncio or trio adapter instead when the server shares a
process with other asynchronous work.

**Changes pushed.** While it waits for input the loop also keeps the server's change timer
(:class:`~skills_core.server_stream.ChangeTimer`, shared with the asyncio and trio loops;
``select`` with a timeout): every ``ttlMs``
(at least 0.1 s) it asks the server whether its catalog moved, holds a change for the pacer's
window, and writes the notifications it means for this client
(:meth:`~skills_core.adapters.ServerStream.push`). With ``shutdown_signals``, such a signal ends
the loop after writing the responses that end the client's ``subscriptions/listen`` streams.

``on_hangup`` (what ``skills-core serve`` passes: a reload, see :mod:`skills_core.adapters._reload`)
is called for each ``SIGHUP`` while the loop runs: from the signal handler itself when the loop is
waiting for input (nothing of the server is under way then), otherwise just before the next
request is taken, never in the middle of one. The previous handler is restored at the end.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import Final

from ..jsonrpc import NEED_DATA
from ..server_stream import FINISHED, ChangeTimer, PendingOutput, Responder, ServerStream
from ._io import READ_CHUNK, write_all

__all__ = ["serve_stdio", "READ_CHUNK"]


def serve_stdio(
    responder: Responder,
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    max_message_size: int | None = None,
    results_have_string_keys: bool = False,
    on_hangup: Callable[[], None] | None = None,
    watch: bool = True,
    shutdown_signals: Sequence[int] = (),
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Serve ``responder`` over newline-delimited JSON-RPC until end of input (or the client leaves).

    Args:
        responder: The request path: a :class:`~skills_core.server.ServerConnection`.
        stdin_fd: Descriptor to read requests from.
        stdout_fd: Descriptor to write responses to (nothing else is ever written to it).
        max_message_size: The endpoint's message cap; ``None`` keeps the default.
        results_have_string_keys: See :class:`~skills_core.adapters.ServerStream`.
        on_hangup: Called for each ``SIGHUP`` between requests (see the module docstring);
            installed only from the main thread.
        watch: Look for catalog changes while idle and notify the client (a
            :class:`~skills_core.server.ServerConnection` responder, or a loading server's
            connection once its catalog is loaded).
        shutdown_signals: Signals (``SIGTERM``, ``SIGINT``) that end the loop gracefully; their
            handlers are installed for the loop's duration (main thread only).
        clock: Monotonic seconds, for the change timer.
    """
    stream = ServerStream(
        responder,
        max_message_size=max_message_size,
        results_have_string_keys=results_have_string_keys,
    )
    _widen_pipe(stdin_fd)
    _widen_pipe(stdout_fd)
    timer = ChangeTimer(stream) if watch else None
    with _hangups(on_hangup) as hangup, _stopping(shutdown_signals):
        try:
            _loop(stream, stdin_fd, stdout_fd, hangup, timer=timer, clock=clock)
        except _StopSignalError:
            with contextlib.suppress(OSError):
                write_all(stdout_fd, stream.close())


def _loop(
    stream: ServerStream,
    stdin_fd: int,
    stdout_fd: int,
    hangup: _Hangup,
    *,
    timer: ChangeTimer | None,
    clock: Callable[[], float],
) -> None:
    while True:
        if hangup.due:
            hangup.run()
        out = stream.next_output()
        if out is NEED_DATA:
            if timer is not None and timer.watching:
                pushed = _wait(timer, stdin_fd, hangup, clock)
                if pushed is None:
                    continue
                if pushed:
                    try:
                        write_all(stdout_fd, pushed)
                    except BrokenPipeError:
                        return
                    continue
            hangup.waiting = True
            try:
                data = os.read(stdin_fd, READ_CHUNK)
            finally:
                hangup.waiting = False
            stream.receive_data(data)
        elif out is FINISHED:
            return
        else:
            if isinstance(out, PendingOutput):  # only a Deferred answer: reads are not deferred
                out = out.run()
            try:
                write_all(stdout_fd, out)
            except BrokenPipeError:  # the client has gone; nobody is left to answer
                return


def _wait(
    timer: ChangeTimer, stdin_fd: int, hangup: _Hangup, clock: Callable[[], float]
) -> bytes | None:
    """Wait for input up to the timer's next look: b"" when input is ready, the bytes of the
    notifications to write, or None when there is nothing to read or say yet."""
    pushed = timer.look(clock())
    if pushed:
        return pushed
    timeout = timer.timeout(clock())
    hangup.waiting = True  # a SIGHUP now reloads at once: no request is under way
    try:
        ready, _, _ = select.select([stdin_fd], [], [], timeout)
    except (OSError, ValueError):  # not selectable: just read
        return b""
    finally:
        hangup.waiting = False
    return b"" if ready else None


class _StopSignalError(Exception):
    """A shutdown signal arrived."""


@contextlib.contextmanager
def _stopping(signals: Sequence[int]) -> Iterator[None]:
    def stop(number: int, frame: FrameType | None) -> None:
        raise _StopSignalError

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, stop) for number in signals}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


class _Hangup:
    """Whether a ``SIGHUP`` waits to be acted on, and whether the loop is waiting for input."""

    __slots__ = ("action", "due", "waiting")

    def __init__(self, action: Callable[[], None] | None) -> None:
        self.action = action
        self.due = False
        self.waiting = False

    def run(self) -> None:
        self.due = False
        if self.action is not None:
            self.action()

    def signalled(self, signum: int, frame: object) -> None:
        if self.waiting:  # in os.read: no request is under way
            self.run()
        else:
            self.due = True


@contextlib.contextmanager
def _hangups(action: Callable[[], None] | None) -> Iterator[_Hangup]:
    """Route ``SIGHUP`` to ``action`` for the block (when given, on the main thread)."""
    hangup = _Hangup(action)
    number = getattr(signal, "SIGHUP", None)
    if (
        action is None
        or number is None
        or threading.current_thread() is not threading.main_thread()
    ):
        yield hangup
        return
    previous = signal.signal(number, hangup.signalled)
    try:
        yield hangup
    finally:
        signal.signal(number, previous)


#: Pipe buffer asked for on Linux (the default is 64 KiB, 50 answers of a 1 KB file); a larger one
#: lets a burst of answers go out in one write while the client is still reading the last burst,
#: and a burst of pipelined requests come in with one read. Fewer, larger reads and writes mean
#: fewer context switches between the client and the server.
_PIPE_SIZE: Final = 1 << 20


def _widen_pipe(fd: int) -> None:
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:  # pragma: no cover - not Linux
        return
    # Not a pipe, or above /proc/sys/fs/pipe-max-size: keep the default.
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, set_size, _PIPE_SIZE)
