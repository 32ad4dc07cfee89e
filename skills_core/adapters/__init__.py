"""The I/O edges: every module here moves bytes, spawns processes or waits on a clock.

stdio:

* :mod:`skills_core.adapters.blocking_stdio` -- serves without an event loop (``skills-core serve``).
* :mod:`skills_core.adapters.asyncio_stdio` -- standard library only.
* :mod:`skills_core.adapters.trio_stdio` -- needs trio (``pip install trio``).
* :mod:`skills_core.adapters.stdio` -- what the asyncio and trio adapters do, written once over a
  small backend each.

The asyncio and trio modules offer the same shape: ``serve_stdio(connection)`` serves a
:class:`~skills_core.server.ServerConnection` (any :class:`Responder`) over stdin/stdout, and
``open_stdio_client(argv, label=...)`` spawns a server command and yields a ``StdioClient`` with
``request(method, params, timeout=...)``, which is also a requester of
:func:`skills_core.host.pump.pump_async` (``await client(method, params)``). HTTP:
:mod:`~skills_core.adapters.asgi` (the app), :mod:`~skills_core.adapters.uvicorn_http` and
:mod:`~skills_core.adapters.http_client`; the official ``mcp`` SDK:
:mod:`~skills_core.adapters.mcp_sdk` (host) and :mod:`~skills_core.adapters.mcp_server` (server).
This package imports none of them, so importing it never imports trio or any optional package.

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
