"""``skills-core serve``: the skills under some folders, as a stdio MCP server.

Theory of operation: the folders become a :class:`~skills_core.server.filesystem.FilesystemSource`,
wrapped in a :class:`~skills_core.server.handler.SkillsServer` and served by the blocking stdio
loop (:mod:`skills_core.adapters.blocking_stdio`) until the client closes stdin. Stdout belongs to
the protocol; what the operator should know goes to stderr.
"""

from __future__ import annotations

import argparse
import os

from skills_core.cli._common import EXIT_OK, error, open_source

__all__ = ["run_serve"]


def run_serve(args: argparse.Namespace) -> int:
    """Run ``skills-core serve``: a stdio MCP server until the client closes stdin."""
    from skills_core.adapters.blocking_stdio import serve_stdio  # noqa: PLC0415
    from skills_core.server.handler import SkillsServer  # noqa: PLC0415
    from skills_core.server.options import ServerOptions  # noqa: PLC0415

    source = open_source(args.roots)
    options = ServerOptions(
        directory_read=not args.no_directory_read, page_size=args.page_size, ttl_ms=args.ttl_ms
    )
    server = SkillsServer(source, cursor_key=os.urandom(32), options=options)
    omitted = len(server.catalog.omitted)
    if omitted:  # stdout belongs to the protocol; stderr is for the operator (§1.7)
        error(f"serve: {omitted} skill folder(s) left out; `skills-core manifest` says why")
    # A SkillsServer's results have string keys by construction: skip the endpoint's key walk.
    serve_stdio(server.connection(), results_have_string_keys=True)
    return EXIT_OK
