"""Shared pieces of the real-peer tests and benchmarks: folders, commands, environments.

The peers are child processes: ``python -m skills_core serve`` (ours), the FastMCP 4.1.6 server in
``tests/peers/fastmcp_server.py`` and the stub in ``tests/peers/stub_server.py``. A child gets the
current environment plus ``PYTHONPATH`` naming the repository root (so it imports this checkout's
``skills_core``) and FastMCP's quiet settings (no banner, no update check, no INFO logs).
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, TypeVar

from skills_core import spec_examples as ex
from skills_core.host.approvals import ApprovalStore
from skills_core.host.driver import CLIENT_INFO, Requester, TransportFailure, carry_out
from skills_core.host.effects import Effect
from skills_core.host.policy import HostPolicy
from skills_core.host.router import Host
from skills_core.jsonvalue import JSONValue

_T = TypeVar("_T")

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
PEERS: Final = REPO_ROOT / "tests" / "peers"
FASTMCP_SERVER: Final = PEERS / "fastmcp_server.py"
STUB_SERVER: Final = PEERS / "stub_server.py"
HOSTILE_SERVER: Final = PEERS / "hostile_server.py"

#: Quiet FastMCP: no INFO log lines, no PyPI update check (network, $HOME writes).
FASTMCP_ENV: Final = {
    "FASTMCP_LOG_LEVEL": "WARNING",
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_SHOW_SERVER_BANNER": "false",
}

MODERN_VERSION: Final = "2026-07-28"
SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
#: The modern request envelope for hand-written requests (docs/protocol.md#request-meta).
MODERN_META: Final[dict[str, JSONValue]] = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "skills-core-tests", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {SKILLS_EXTENSION: {}}},
}

#: A nested skill (its folder is ``acme/billing/refunds``) and a second top-level skill, so
#: that listings paginate and nested URIs are exercised.
REFUNDS_SKILL_MD: Final = (
    b"---\nname: refunds\ndescription: Issue refunds for billing disputes\n---\n\n"
    b"# Refunds\n\nSee [the guide](references/GUIDE.md).\n"
)
REFUNDS_GUIDE: Final = b"# Refund guide\n\nCheck the invoice first.\n"
NOTES_SKILL_MD: Final = (
    b"---\nname: meeting-notes\ndescription: Summarise meeting transcripts\n---\n\n# Notes\n"
)
EXTRA_FILES: Final = {
    "acme/billing/refunds/SKILL.md": REFUNDS_SKILL_MD,
    "acme/billing/refunds/references/GUIDE.md": REFUNDS_GUIDE,
    "meeting-notes/SKILL.md": NOTES_SKILL_MD,
}


def sha256_digest(data: bytes) -> str:
    """``sha256:<hex>`` of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def write_files(root: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` (relative path -> bytes) under ``root``."""
    for relative, data in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def write_spec_skill(root: Path) -> Path:
    """Write the spec's pdf-processing skill under ``root``; return the skill folder."""
    folder = root / "pdf-processing"
    write_files(folder, ex.FILES)
    return folder


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child peer: ours, plus PYTHONPATH, plus FastMCP's quiet settings."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.update(FASTMCP_ENV)
    if extra:
        env.update(extra)
    return env


def serve_argv(*args: str) -> list[str]:
    """``python -m skills_core serve ARGS...`` with this interpreter."""
    return [sys.executable, "-m", "skills_core", "serve", *args]


def fastmcp_argv(root: Path, *args: str) -> list[str]:
    """The FastMCP peer serving ``root``."""
    return [sys.executable, str(FASTMCP_SERVER), str(root), *args]


# --- driving our host over live connections -----------------------------------------------------


class Recorder:
    """A connection wrapper that records the method of every request it carries.

    It has the shape ``carry_out`` and ``handshake`` expect (``request`` and ``notify``), so a
    test can assert what went on the wire, e.g. that a directory listing sent nothing (DIR-12).
    """

    def __init__(self, client: Requester) -> None:
        self._client = client
        #: The method of every request and notification sent, in order.
        self.sent: list[str] = []
        #: The params of each, in the same order.
        self.params: list[Mapping[str, object] | None] = []

    async def request(
        self, method: str, params: Mapping[str, object] | None = None, *, timeout: float | None
    ) -> dict[str, JSONValue]:
        self.sent.append(method)
        self.params.append(params)
        return await self._client.request(method, params, timeout=timeout)

    async def notify(self, method: str, params: Mapping[str, object] | None = None) -> None:
        self.sent.append(method)
        self.params.append(params)
        await self._client.notify(method, params)


def new_host() -> Host:
    """A host with default policy, an in-memory approval store and no cache."""
    return Host(policy=HostPolicy(), client_info=CLIENT_INFO, approvals=ApprovalStore(), cache=None)


async def pump(
    host: Host, effects: list[Effect], connections: Mapping[str, Requester], *, timeout: float
) -> list[Effect]:
    """Carry out ``effects``; fail the test on any transport failure; return the rest."""
    done = await carry_out(host, effects, connections, timeout=timeout)
    failures = [e for e in done if isinstance(e, TransportFailure)]
    assert not failures, failures
    return [e for e in done if not isinstance(e, TransportFailure)]


def only(effects: Sequence[object], kind: type[_T]) -> _T:
    """The one effect of type ``kind`` among ``effects``."""
    found = [e for e in effects if isinstance(e, kind)]
    assert len(found) == 1, (kind.__name__, [type(e).__name__ for e in effects])
    return found[0]


def none_of(effects: Sequence[object], kind: type[object]) -> None:
    """Assert that no effect of type ``kind`` is among ``effects``."""
    assert not [e for e in effects if isinstance(e, kind)], [type(e).__name__ for e in effects]
