"""An ``mcp`` 2.3.0 low-level server publishing a folder of skills through skills_core.

Usage: python mcp_lowlevel_server.py ROOT [--own-resources] [--ttl-ms N] [--http PORT]

``skills_core.adapters.mcp_server.add_skills`` gives the SDK server the catalog of ``ROOT``, built
by ``tests/mcp_server_helpers.skills_server`` (fixed cursor key, page size and server info, so
that a test computes the same answers in-process). With ``--own-resources`` the SDK server
first serves a resource of its own, ``memo://note`` (``resources/list`` and ``resources/read``),
which must keep working beside the skills. ``--ttl-ms`` sets the catalog's ``ttlMs`` (and so how
often the change timer looks); ``--http PORT`` serves Streamable HTTP on 127.0.0.1 (uvicorn)
instead of stdio.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", ".."), os.path.join(HERE, "..")]

import anyio  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp_server_helpers import build  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("root")
    parser.add_argument("--own-resources", action="store_true")
    parser.add_argument("--ttl-ms", type=int, default=None)
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    args = parser.parse_args()
    server = build(args.root, own_resources=args.own_resources, ttl_ms=args.ttl_ms)
    if args.http is not None:
        import uvicorn

        uvicorn.run(
            server.streamable_http_app(), host="127.0.0.1", port=args.http, log_level="warning"
        )
        return

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
