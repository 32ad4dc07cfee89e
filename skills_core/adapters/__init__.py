"""stdio adapters: thin asyncio and trio loops around the sans-IO cores.

* :mod:`skills_core.adapters.asyncio_stdio` -- standard library only.
* :mod:`skills_core.adapters.trio_stdio` -- needs the optional ``trio`` extra.

Both offer the same shape: ``serve_stdio(handle)`` serves a request handler (or, faster, a
:class:`Responder` such as a :class:`~skills_core.server.ServerConnection`) over stdin/stdout, and
``open_stdio_client(argv, label=...)`` spawns a server command and yields a ``StdioClient`` with
``request(method, params, timeout=...)``. This package imports neither submodule, so importing it
never imports trio. :mod:`skills_core.adapters.blocking_stdio` serves without an event loop.

For a transport of your own (a socket, a pipe pair, an HTTP body), :class:`ServerLoop` is the whole
server side without I/O: bytes received in, bytes to send out (see ``examples/tcp_server.py``).
"""

from __future__ import annotations

from skills_core.adapters._core import Handler, Responder, ServerLoop

__all__ = ["Handler", "Responder", "ServerLoop"]
