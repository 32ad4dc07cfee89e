"""What the stdio adapters share that touches descriptors, processes and our stderr.

Theory of operation: the blocking, asyncio and trio adapters read and write the same way and shut
servers down on the same schedule; the numbers and the small helpers live here once.

**Process groups.** On POSIX a client starts each server in a session of its own
(:data:`NEW_SESSION`), so the server and everything it forks share one process group whose id is
the server's pid. Shutting down ends the whole group: close the server's stdin and wait
:data:`SHUTDOWN_GRACE` seconds, then SIGTERM to the group and wait again, then SIGKILL to the
group. A process the server moved to a group or session of its own (``setsid``, a daemon) has
left on purpose and is out of reach. On platforms without process groups (Windows) only the
server process itself is ended (``terminate``, then ``kill``); whatever it started may outlive it.

**What a server writes on stderr** is untrusted text. The default relay (:func:`stderr_relay`)
writes each line to our stderr after the server's label, through
:func:`skills_core.display.display_line`, cut after :data:`STDERR_LINE_SHOWN` characters, at
most :data:`STDERR_LINES_SHOWN` lines per server; it then says that the rest is not shown.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Final

from ..display import display, display_line

__all__ = [
    "READ_CHUNK",
    "SHUTDOWN_GRACE",
    "GROUP_POLL",
    "NEW_SESSION",
    "STDERR_LINE_SHOWN",
    "STDERR_LINES_SHOWN",
    "write_all",
    "report_to_stderr",
    "stderr_relay",
    "signal_group",
    "group_alive",
]

#: Bytes asked for per read: large enough that a burst of pipelined requests is one read.
READ_CHUNK: Final = 1 << 16
#: Default seconds to wait for a server to exit after its stdin is closed, and again after SIGTERM.
SHUTDOWN_GRACE: Final = 2.0
#: Seconds between two checks that a process group is empty (no event says so).
GROUP_POLL: Final = 0.02
#: Servers start in a new session (their own process group) where the platform has them.
NEW_SESSION: Final = os.name == "posix" and hasattr(os, "killpg")
#: Characters of one stderr line shown by the default relay (its full length is stated).
STDERR_LINE_SHOWN: Final = 500
#: Lines of one server's stderr shown by the default relay; the rest are not shown.
STDERR_LINES_SHOWN: Final = 200


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` with ``os.write``, however many calls it takes."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def report_to_stderr(message: str) -> None:
    """The default ``on_report`` of the client adapters: one line on stderr, made visible."""
    sys.stderr.write(f"skills-core: {display(message)}\n")
    sys.stderr.flush()


def stderr_relay(label: str) -> Callable[[str], None]:
    """The default ``on_stderr`` of the client adapters: ``skills-core: [LABEL] line`` on stderr.

    Each line is the server's text, shown through :func:`~skills_core.display.display_line`
    (controls and invisible characters escaped, cut after :data:`STDERR_LINE_SHOWN` characters),
    at most :data:`STDERR_LINES_SHOWN` of them; one more line then says the rest is not shown.
    """
    prefix = f"skills-core: [{display(label)}] "
    shown = 0

    def relay(line: str) -> None:
        nonlocal shown
        shown += 1
        if shown <= STDERR_LINES_SHOWN:
            sys.stderr.write(prefix + display_line(line, STDERR_LINE_SHOWN) + "\n")
        elif shown == STDERR_LINES_SHOWN + 1:
            sys.stderr.write(f"{prefix}... ({STDERR_LINES_SHOWN} lines shown; the rest is not)\n")
        else:
            return
        sys.stderr.flush()

    return relay


def signal_group(pgid: int, *, kill: bool) -> None:
    """Send SIGTERM (or SIGKILL with ``kill``) to every process of the group ``pgid`` (POSIX).

    A group that is already gone is not an error.
    """
    sig = signal.SIGKILL if kill else signal.SIGTERM
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    """True while some process of the group ``pgid`` exists (POSIX)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
