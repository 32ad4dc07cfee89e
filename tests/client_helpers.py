"""Helpers of the stdio client and ``host`` command tests: the hostile peer, running the command
in-process, and whether a process still lives."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skills_core.cli import main

PEERS = Path(__file__).resolve().parent / "peers"
HOSTILE = str(PEERS / "hostile_server.py")


def hostile(mode: str, *extra: str) -> str:
    """The command line of ``tests/peers/hostile_server.py MODE [EXTRA...]``."""
    return f"{sys.executable} {HOSTILE} {mode} {' '.join(extra)}"


def run(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``skills-core ARGV`` in this process: ``(exit code, stdout, stderr)``, no traceback."""
    code = main(argv)
    out, err = capfd.readouterr()
    assert "Traceback" not in err
    return code, out, err


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie waiting to be reaped (Linux ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False
