"""FastMCP 4.1.6's Streamable HTTP app (stateless, JSON responses) over a folder of skills.

For ``uvicorn --factory fastmcp_http_app:app --app-dir tests/peers`` with ``BENCH_ROOT`` naming
the folder: the same server as ``fastmcp_server.py`` (skills provider and extension), as the ASGI
app FastMCP builds for HTTP, configured the way a scaled-out deployment would run it (no session
state, one JSON answer per POST). The HTTP benchmark's FastMCP row.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fastmcp_server import build


def app() -> Any:
    """The ASGI app (a factory: uvicorn calls it once per worker)."""
    server = build(Path(os.environ["BENCH_ROOT"]))
    return server.http_app(path="/mcp", stateless_http=True, json_response=True)
