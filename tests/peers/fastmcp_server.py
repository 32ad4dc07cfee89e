"""A FastMCP 4.1.6 stdio server publishing a folder of skills (the real third-party peer).

Usage: python fastmcp_server.py ROOT [--reload]

It serves every skill under ROOT through ``SkillsDirectoryProvider(..., experimental_skills=True)``
(strict manifests with sha256 digests and sizes, nested skills, byte-preserving reads) and
registers ``SkillsExtension`` so that ``skills/list`` and ``skills/get`` exist and the
``io.modelcontextprotocol/skills`` extension is declared. FastMCP declares no ``directoryRead``
and serves skills in the modern (2026-07-28) era only.

Run it with ``FASTMCP_LOG_LEVEL=WARNING FASTMCP_CHECK_FOR_UPDATES=off`` in the environment: the
banner is off here, and with the update check off nothing touches the network or ``$HOME``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension


def build(root: Path, *, reload: bool = False) -> FastMCP:
    """Return a FastMCP server publishing the skills under ``root``."""
    server = FastMCP("fastmcp-skills-peer")
    provider = SkillsDirectoryProvider(roots=root, reload=reload, experimental_skills=True)
    server.add_provider(provider)  # skill:// resources
    server.add_extension(SkillsExtension(providers=[provider]))  # skills/list, skills/get
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--reload", action="store_true")
    args = parser.parse_args()
    build(args.root, reload=args.reload).run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
