"""Helpers the benchmark scripts share: paths, the machine line, a modern request ``_meta``, and the
environment of child processes."""

from __future__ import annotations

import compileall
import os
import platform
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / "tests" / "peers"


def modern_meta(client_name: str) -> dict[str, object]:
    """The ``_meta`` of a 2026-07-28 request from a client that declares the skills extension."""
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": client_name, "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/skills": {}}
        },
    }


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, or what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def child_env() -> dict[str, str]:
    """Environment for spawned servers: the repo importable, bytecode allowed, FastMCP quiet."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.update(
        FASTMCP_LOG_LEVEL="WARNING",
        FASTMCP_CHECK_FOR_UPDATES="off",
        FASTMCP_SHOW_SERVER_BANNER="false",
    )
    return env


def compile_bytecode() -> None:
    """Make sure every module the children import has bytecode (this machine disables writing)."""
    compileall.compile_dir(REPO / "skills_core", quiet=1, workers=0)
    compileall.compile_dir(sysconfig.get_paths()["purelib"], quiet=1, workers=0)
