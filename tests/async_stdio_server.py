"""A skills server served by the asyncio or the trio ``serve_stdio`` (tests/test_live_async.py).

Usage: ``python async_stdio_server.py asyncio|trio plain|loading TTL_MS ROOT``

``loading`` serves a :class:`~skills_core.adapters.loading.LoadingConnection` whose catalog takes
a second to load (the handshake is answered meanwhile). SIGTERM cancels the task that serves: the
server's shutdown, which ends the client's listen streams with their result (PUSH-08).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time

from skills_core.adapters.loading import LoadingServer
from skills_core.server import ServerOptions, SkillsServer, server_from_roots
from skills_core.server_stream import Responder

LOAD_DELAY = 1.0


def responder(mode: str, ttl_ms: int, root: str) -> Responder:
    options = ServerOptions(ttl_ms=ttl_ms)

    def make() -> SkillsServer:
        if mode == "loading":
            time.sleep(LOAD_DELAY)
        return server_from_roots([root], cursor_key=b"k" * 32, options=options)

    if mode == "loading":
        loading = LoadingServer(make, options=options)
        loading.start()
        return loading.connection()
    return make().connection()


def run_asyncio(served: Responder) -> None:
    from skills_core.adapters.asyncio_stdio import serve_stdio

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            await serve_stdio(served)
        except asyncio.CancelledError:
            return

    asyncio.run(main())


def run_trio(served: Responder) -> None:
    import trio

    from skills_core.adapters.trio_stdio import serve_stdio

    async def main() -> None:
        async with trio.open_nursery() as nursery:

            async def stop_on_sigterm() -> None:
                with trio.open_signal_receiver(signal.SIGTERM) as signals:
                    async for _ in signals:
                        nursery.cancel_scope.cancel()
                        return

            nursery.start_soon(stop_on_sigterm)
            await serve_stdio(served)
            nursery.cancel_scope.cancel()

    trio.run(main)


if __name__ == "__main__":
    backend, mode, ttl, root = sys.argv[1:5]
    served = responder(mode, int(ttl), root)
    (run_asyncio if backend == "asyncio" else run_trio)(served)
