"""Serve a folder of skills over TCP: a transport of your own around the sans-IO server.

Usage::

    PYTHONPATH=. python3 examples/tcp_server.py ./skills            # port 8765 on 127.0.0.1
    PYTHONPATH=. python3 examples/tcp_server.py ./skills --port 0   # any free port

Each client speaks newline-delimited JSON-RPC (the stdio framing) over its socket. Everything that
is not moving bytes comes from the library: :class:`~skills_core.adapters.ServerStream` frames,
checks and answers messages, and each client gets its own
:class:`~skills_core.server.ServerConnection` (a legacy ``initialize`` is per connection) of one
shared :class:`~skills_core.server.SkillsServer`. The loop writes each answer as it is made and
reads only when the stream asks for data; ``drain()`` waits while the client is not reading, so
a client that pipelines reads of a large file and reads nothing back holds the server to about
one answer of memory. Large files are read and encoded in a worker thread, so one client's read
never stalls the others. The first line printed is ``listening on HOST:PORT``. Uses only the
standard library.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os

from skills_core.adapters import DEFAULT_DEFER_READS_OVER, FINISHED, PendingOutput, ServerStream
from skills_core.jsonrpc import NEED_DATA
from skills_core.server import SkillsServer, server_from_roots


async def serve_client(
    server: SkillsServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Answer one client until it closes its side of the socket."""
    stream = ServerStream(
        server.connection(),
        results_have_string_keys=True,
        defer_reads_over=DEFAULT_DEFER_READS_OVER,
    )
    try:
        while True:
            out = stream.next_output()
            if out is NEED_DATA:
                stream.receive_data(await reader.read(1 << 16))  # b"" at end of input
            elif out is FINISHED:
                break
            else:
                if isinstance(out, PendingOutput):
                    out = await asyncio.to_thread(out.run)
                assert isinstance(out, bytes)
                writer.write(out)
                await writer.drain()  # back-pressure: wait while the client is not reading
    except ConnectionError:
        pass  # the client went away; nobody is left to answer
    finally:
        writer.close()


async def main() -> None:
    """Parse the arguments, scan the folder once, and serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", help="folders of skills")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    # The cursor key signs pagination cursors; a fresh one per process is fine for one server.
    server = server_from_roots(args.roots, cursor_key=os.urandom(32))
    listener = await asyncio.start_server(
        lambda reader, writer: serve_client(server, reader, writer), args.host, args.port
    )
    host, port = listener.sockets[0].getsockname()[:2]
    print(f"listening on {host}:{port}", flush=True)
    async with listener:
        await listener.serve_forever()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
