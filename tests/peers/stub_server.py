"""The cost of Python stdio itself: a server that answers every request with prepared bytes.

Usage: python stub_server.py RESPONSE_FILE

RESPONSE_FILE holds one JSON-RPC response line (a ``resources/read`` answer, say) whose id is the
placeholder ``"@@ID@@"``. For every request line read from stdin, the stub cuts the id out of the
line with plain byte searches (no JSON parsing) and writes the prepared line with that id
substituted. Reads and writes use ``os.read``/``os.write`` on large chunks, through pipes widened to 1 MiB as
our server's are, so this is about the cheapest thing a Python process can do per request: the
ceiling for any Python stdio server.
Notifications (lines without an id) get no answer. It exits at end of input.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys

PLACEHOLDER = b'"@@ID@@"'
ID_KEY = b'"id":'
CHUNK = 1 << 16


def widen(fd: int) -> None:
    """The same pipe sizes as skills_core.adapters.blocking_stdio asks for, so the ceiling is fair."""
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)


def main() -> None:
    widen(0)
    widen(1)
    with open(sys.argv[1], "rb") as handle:
        template = handle.read().strip()
    head, _, tail = template.partition(PLACEHOLDER)
    tail += b"\n"
    buffer = b""
    while True:
        data = os.read(0, CHUNK)
        if not data:
            return
        buffer += data
        lines = buffer.split(b"\n")
        buffer = lines.pop()
        out = []
        for line in lines:
            start = line.find(ID_KEY)
            if start < 0:
                continue
            start += len(ID_KEY)
            end = line.find(b",", start)
            if end < 0:  # the id was the last member
                end = line.rfind(b"}")
            out.append(head + line[start:end].strip() + tail)
        if out:
            view = memoryview(b"".join(out))
            while view:
                view = view[os.write(1, view) :]


if __name__ == "__main__":
    main()
