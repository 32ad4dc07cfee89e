"""What the stdio adapters share that touches file descriptors: chunk size, shutdown grace, writes.

Theory of operation: the blocking, asyncio and trio adapters read and write the same way and shut
servers down on the same schedule; the numbers and the two small helpers live here once.
"""

from __future__ import annotations

import os
import sys
from typing import Final

__all__ = ["READ_CHUNK", "SHUTDOWN_GRACE", "write_all", "report_to_stderr"]

#: Bytes asked for per read: large enough that a burst of pipelined requests is one read.
READ_CHUNK: Final = 1 << 16
#: Default seconds to wait for a server to exit after its stdin is closed, and again after SIGTERM.
SHUTDOWN_GRACE: Final = 2.0


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` with ``os.write``, however many calls it takes."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def report_to_stderr(message: str) -> None:
    """The default ``on_report`` of the client adapters: one line on stderr."""
    sys.stderr.write(f"skills-core: {message}\n")
    sys.stderr.flush()
