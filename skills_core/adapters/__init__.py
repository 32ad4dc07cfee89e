"""stdio adapters: thin blocking, asyncio and trio loops around the sans-IO cores.

* :mod:`skills_core.adapters.blocking_stdio` -- serves without an event loop (``skills-core serve``).
* :mod:`skills_core.adapters.asyncio_stdio` -- standard library only.
* :mod:`skills_core.adapters.trio_stdio` -- needs the optional ``trio`` extra.

The asyncio and trio modules offer the same shape: ``serve_stdio(connection)`` serves a
:class:`~skills_core.server.ServerConnection` (any :class:`Responder`) over stdin/stdout, and
``open_stdio_client(argv, label=...)`` spawns a server command and yields a ``StdioClient`` with
``request(method, params, timeout=...)``. This package imports none of them, so importing it never
imports trio.

For a transport of your own (a socket, a pipe pair), :class:`ServerStream` is the whole server
side of a byte stream without I/O: bytes received in, what to write out, with back-pressure (see
``examples/tcp_server.py``). It lives in the core, :mod:`skills_core.server_stream`, and is
re-exported here with its companions.
"""

from __future__ import annotations

from ..server_stream import (
    DEFAULT_DEFER_READS_OVER,
    FINISHED,
    OUTPUT_BATCH,
    Finished,
    PendingOutput,
    Responder,
    ServerStream,
)

__all__ = [
    "Responder",
    "ServerStream",
    "PendingOutput",
    "Finished",
    "FINISHED",
    "OUTPUT_BATCH",
    "DEFAULT_DEFER_READS_OVER",
]
