"""Serve folders of skills over stdio with one of the adapters (for adapter-level tests).

Usage: python serve_adapter.py asyncio|trio ROOT...

What ``skills-core serve`` does with the blocking adapter, with an event loop instead.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from skills_core.server import server_from_roots


def main() -> None:
    flavour, *roots = sys.argv[1:]
    connection = server_from_roots(roots, cursor_key=os.urandom(32)).connection()
    if flavour == "asyncio":
        import asyncio

        from skills_core.adapters import asyncio_stdio

        asyncio.run(asyncio_stdio.serve_stdio(connection, results_have_string_keys=True))
    else:
        import trio

        from skills_core.adapters import trio_stdio

        trio.run(lambda: trio_stdio.serve_stdio(connection, results_have_string_keys=True))


if __name__ == "__main__":
    main()
