"""Real third-party Streamable HTTP servers for the HTTP client's interop tests, under uvicorn.

Usage: python http_server.py fastmcp ROOT PORT [--json]
       python http_server.py sdk PORT [--json] [--stateless]

``fastmcp``: FastMCP 4.1.6's HTTP app serving the skills under ROOT (``SkillsDirectoryProvider`` +
``SkillsExtension``, as ``fastmcp_server.py`` does over stdio). ``sdk``: the ``mcp`` 2.3.0 SDK's own
``MCPServer`` with one text resource (it knows no skills), through its ``streamable_http_app``:
SSE answers unless ``--json``, sessions unless ``--stateless``. Both apps run on the SDK's
streamable HTTP transport (legacy sessions, and its modern 2026-07-28 handler, which checks the
``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers against the body).

Run with ``FASTMCP_LOG_LEVEL=WARNING FASTMCP_CHECK_FOR_UPDATES=off`` (see ``fastmcp_server.py``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import uvicorn
from starlette.applications import Starlette

RESOURCE_URI = "note://greeting"
RESOURCE_TEXT = "hello from the mcp SDK"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("kind", choices=("fastmcp", "sdk"))
    parser.add_argument("args", nargs="+")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args()
    app: Starlette
    if args.kind == "fastmcp":
        from fastmcp_server import build

        root, port = Path(args.args[0]), int(args.args[1])
        app = build(root).http_app(path="/mcp", json_response=args.json)
    else:
        from mcp.server.mcpserver import MCPServer

        port = int(args.args[0])
        server = MCPServer("sdk-peer")

        @server.resource(RESOURCE_URI)
        def greeting() -> str:
            return RESOURCE_TEXT

        app = server.streamable_http_app(json_response=args.json, stateless_http=args.stateless)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
