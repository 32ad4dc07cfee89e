"""Adapters: the modules that do I/O around the sans-IO core (stdio, HTTP, the mcp SDK).

The protocol lives in the core (:mod:`skills_core.server`, :mod:`skills_core.host`,
:mod:`skills_core.jsonrpc`, :mod:`skills_core.server_stream`, :mod:`skills_core.client_stream`,
:mod:`skills_core.http`); a module here waits, reads, writes, spawns or keeps time, and decides
nothing the core could decide without doing so. What each does:

* :mod:`~skills_core.adapters.blocking_stdio` -- serves over stdin/stdout without an event loop
  (``skills-core serve``): reads and writes the descriptors.
* :mod:`~skills_core.adapters.stdio` -- the stdio transport written once: serve over
  stdin/stdout, or spawn a server command and talk to it over its pipes, with timeouts, over a
  small backend; :mod:`~skills_core.adapters.asyncio_stdio` and
  :mod:`~skills_core.adapters.trio_stdio` are those backends, and the public faces (trio needs
  ``pip install trio``).
* ``_io`` -- what the stdio adapters share that touches descriptors, process groups, signals and
  our stderr.
* :mod:`~skills_core.adapters.asgi` -- the face of the HTTP server (re-exports only); its work
  is ``_asgi_app`` (the ASGI callable: awaits the ASGI server's ``receive`` and ``send``, keeps
  the body and send deadlines by the clock, reads large files in worker threads, draws the random
  nonce of each session id) and ``_asgi_config`` (the shared secret, from the environment and a
  key file).
* :mod:`~skills_core.adapters.uvicorn_http` -- uvicorn's HTTP/1.1 protocols with deadlines on
  their sockets (needs uvicorn).
* :mod:`~skills_core.adapters.http_client` -- the host's Streamable HTTP connection: sockets
  through httpx2, time through anyio (needs ``httpx2`` and ``anyio``).
* :mod:`~skills_core.adapters.mcp_sdk`, :mod:`~skills_core.adapters.mcp_server` -- a host over
  the ``mcp`` SDK's ``ClientSession``, a server inside its low-level ``Server`` (its streams,
  worker threads for large reads; needs ``mcp``).

The asyncio and trio modules offer the same shape: ``serve_stdio(connection)`` serves a
:class:`~skills_core.server.ServerConnection` (any :class:`Responder`) over stdin/stdout, and
``open_stdio_client(argv, label=...)`` spawns a server command and yields a ``StdioClient`` with
``request(method, params, timeout=...)``, which is also a requester of
:func:`skills_core.host.pump.pump_async` (``await client(method, params)``). This package imports
none of them, so importing it never imports trio, uvicorn, httpx2 or mcp.

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
