"""Our host drives our server, as real processes, through the asyncio and the trio adapter.

``python -m skills_core serve`` runs on a temporary folder holding the spec's pdf-processing
skill (exact bytes). The host walks the spec's "Example Message Flow" as ``skills_core.demo``
does: list, approve, load and verify, a directory read after ``credit-note.md`` appears on disk
(shown by the server, hidden by the host), the unlisted read refused with no request for it, the
refresh and revocation, re-approval, and the verified read. Every test runs on both adapters.

Legacy variants: our host cannot be made to skip ``server/discover`` against our server (which
answers it), so (1) the test sends ``initialize`` itself and connects the host in the legacy era,
and (2) ``handshake`` is checked to fall back to ``initialize`` against
``tests/peers/hostile_server.py legacy``, which refuses ``server/discover``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Final, Protocol

import pytest
import trio
from interop_helpers import (
    HOSTILE_SERVER,
    Recorder,
    child_env,
    new_host,
    none_of,
    only,
    pump,
    serve_argv,
    sha256_digest,
    write_spec_skill,
)

from skills_core import spec_examples as ex
from skills_core.adapters import asyncio_stdio, trio_stdio
from skills_core.errors import VerificationKind
from skills_core.host.driver import CLIENT_INFO, handshake
from skills_core.host.effects import (
    ApprovalRevoked,
    Connected,
    DeliverToModel,
    DeliveryKind,
    DirectoryListing,
    Effect,
    FailureSource,
    HeldEntryReplaced,
    RequestApproval,
    SkillChanged,
    SkillLoaded,
    VerificationFailed,
)
from skills_core.host.router import Host
from skills_core.jsonvalue import JSONValue
from skills_core.messages import Era, client_capabilities
from skills_core.spec import LEGACY_PROTOCOL_VERSION

LABEL: Final = ex.ORIGIN_LABEL
SKILL: Final = ex.SKILL_MD_URI
TIMEOUT: Final = 20.0
FLAVOURS: Final = ["asyncio", "trio"]
META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"


class _Client(Protocol):
    """What both adapters' ``StdioClient`` offer (and the process, to check its exit)."""

    async def request(
        self, method: str, params: Mapping[str, object] | None = None, *, timeout: float | None
    ) -> dict[str, JSONValue]: ...

    async def notify(self, method: str, params: Mapping[str, object] | None = None) -> None: ...

    @property
    def process(self) -> Any: ...


Opener = Callable[..., AbstractAsyncContextManager[_Client]]


def run(flavour: str, body: Callable[[Opener], Awaitable[None]]) -> None:
    """Run ``body(open_stdio_client)`` on the event loop of ``flavour``."""
    if flavour == "asyncio":
        opener: Opener = asyncio_stdio.open_stdio_client

        async def main() -> None:
            await body(opener)

        asyncio.run(main())
    else:
        trio_opener: Opener = trio_stdio.open_stdio_client

        async def trio_main() -> None:
            await body(trio_opener)

        trio.run(trio_main)


class Driver:
    """A host, one recorded connection, and the effect pump."""

    def __init__(self, client: _Client) -> None:
        self.host: Host = new_host()
        self.connection = Recorder(client)

    async def pump(self, effects: list[Effect]) -> tuple[list[Effect], list[str]]:
        """Carry out ``effects``; return what came back and the methods sent meanwhile."""
        before = len(self.connection.sent)
        done = await pump(self.host, effects, {LABEL: self.connection}, timeout=TIMEOUT)
        return done, self.connection.sent[before:]

    async def load(self) -> DeliverToModel:
        effects, sent = await self.pump(self.host.load(LABEL, SKILL))
        assert sent == []  # listed entries are complete (LIST-12); nothing before approval
        prompt = only(effects, RequestApproval)
        effects, sent = await self.pump(self.host.approve(prompt.prompt_id))
        assert sent == ["resources/read"]
        only(effects, SkillLoaded)
        delivery = only(effects, DeliverToModel)
        assert delivery.kind is DeliveryKind.SKILL
        assert delivery.verified
        assert delivery.content == ex.SKILL_MD
        return delivery

    async def read(self, ref: str, data: bytes) -> DeliverToModel:
        effects, sent = await self.pump(self.host.read(LABEL, SKILL, ref))
        assert sent == ["resources/read"]
        none_of(effects, VerificationFailed)
        delivery = only(effects, DeliverToModel)
        assert delivery.verified
        assert delivery.origin == LABEL
        assert delivery.content == data
        return delivery


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_spec_skill(root)
    return root


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_spec_example_flow(flavour: str, skills_root: Path) -> None:
    """The spec's example, end to end (CAP-01/05/10, LIST-13, VER-04/06/09/12, DIR-13..16,
    HELD-03/04/05, APR-01/02)."""
    folder = skills_root / "pdf-processing"

    async def body(open_client: Opener) -> None:
        argv = serve_argv(str(skills_root))
        async with open_client(argv, label=LABEL, env=child_env(), stderr=None) as client:
            driver = Driver(client)
            host = driver.host
            effects = await handshake(host, LABEL, driver.connection, timeout=TIMEOUT)
            assert driver.connection.sent == ["server/discover"]
            features = only(effects, Connected).features
            assert features.skills
            assert features.directory_read

            effects, sent = await driver.pump(host.list_skills(LABEL))
            assert sent == ["skills/list"]  # nothing else is fetched (VER-12, LIST-13)
            entry = host.registry.get(LABEL, SKILL)
            assert entry is not None
            assert entry.to_json() == ex.entry_json()

            await driver.load()

            (folder / "templates" / "credit-note.md").write_bytes(ex.CREDIT_NOTE)
            effects, sent = await driver.pump(host.list_dir(LABEL, SKILL, "templates"))
            assert sent == ["resources/directory/read"]
            listing = only(effects, DirectoryListing)
            assert not listing.from_manifest
            assert [c.name for c in listing.children] == ["invoice.md", "purchase-order.md"]
            assert any("credit-note.md" in hidden for hidden in listing.hidden)
            assert listing.looks_changed
            assert "credit-note" not in "".join(c.uri for c in listing.children)

            await driver.read("templates/invoice.md", ex.INVOICE)

            effects, sent = await driver.pump(host.read(LABEL, SKILL, "templates/credit-note.md"))
            assert sent == ["skills/get"]  # the refresh only: the unlisted file is not requested
            failed = only(effects, VerificationFailed)
            assert failed.error.kind is VerificationKind.UNLISTED
            assert failed.source is FailureSource.MANIFEST
            assert failed.refreshing
            none_of(effects, DeliverToModel)
            changed = only(effects, SkillChanged)
            assert changed.requires_reapproval
            assert not changed.skill_md_changed
            only(effects, ApprovalRevoked)
            prompt = only(effects, RequestApproval)

            effects, sent = await driver.pump(host.approve(prompt.prompt_id))
            assert sent == []  # SKILL.md is unchanged and still in context
            only(effects, HeldEntryReplaced)
            note = await driver.read("templates/credit-note.md", ex.CREDIT_NOTE)
            size, digest = ex.EXPECTED["templates/credit-note.md"]
            assert len(note.content) == size
            assert sha256_digest(note.content) == digest

            # CAP-10: every request carried the modern envelope.
            for method, params in zip(
                driver.connection.sent, driver.connection.params, strict=True
            ):
                assert params is not None, method
                meta = params["_meta"]
                assert isinstance(meta, dict)
                assert meta[META_VERSION] == "2026-07-28", method
        assert client.process.returncode == 0  # exited on end of input (docs/protocol.md#stdio)

    run(flavour, body)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_legacy_era_against_our_server(flavour: str, skills_root: Path) -> None:
    """Our server after ``initialize``; the host in the legacy era sends no ``_meta`` (CAP-10)."""

    async def body(open_client: Opener) -> None:
        argv = serve_argv(str(skills_root))
        async with open_client(argv, label=LABEL, env=child_env(), stderr=None) as client:
            driver = Driver(client)
            host = driver.host
            result = await client.request(
                "initialize",
                {
                    "protocolVersion": LEGACY_PROTOCOL_VERSION,
                    "capabilities": client_capabilities(),
                    "clientInfo": CLIENT_INFO.to_json(),
                },
                timeout=TIMEOUT,
            )
            assert result["protocolVersion"] == LEGACY_PROTOCOL_VERSION
            assert "resultType" not in result
            await client.notify("notifications/initialized")
            effects = host.connect(LABEL, result["capabilities"], era=Era.LEGACY)
            assert only(effects, Connected).features.directory_read

            await driver.pump(host.list_skills(LABEL))
            entry = host.registry.get(LABEL, SKILL)
            assert entry is not None
            assert entry.to_json() == ex.entry_json()
            await driver.load()
            await driver.read("templates/invoice.md", ex.INVOICE)
            await driver.read("templates/purchase-order.md", ex.PURCHASE_ORDER)
            effects, sent = await driver.pump(host.list_dir(LABEL, SKILL, "templates"))
            assert sent == ["resources/directory/read"]
            listing = only(effects, DirectoryListing)
            assert [c.name for c in listing.children] == ["invoice.md", "purchase-order.md"]
            assert not listing.looks_changed
            for method, params in zip(
                driver.connection.sent, driver.connection.params, strict=True
            ):
                assert params is not None, method
                assert "_meta" not in params, method
        assert client.process.returncode == 0

    run(flavour, body)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_handshake_falls_back_to_initialize(flavour: str) -> None:
    """A server that refuses ``server/discover`` is spoken to in the 2025-11-25 era."""

    async def body(open_client: Opener) -> None:
        argv = [sys.executable, str(HOSTILE_SERVER), "legacy"]
        async with open_client(argv, label=LABEL, env=child_env(), stderr=None) as client:
            driver = Driver(client)
            host = driver.host
            effects = await handshake(host, LABEL, driver.connection, timeout=TIMEOUT)
            assert driver.connection.sent == [
                "server/discover",
                "initialize",
                "notifications/initialized",
            ]
            assert only(effects, Connected).features.skills
            await driver.pump(host.list_skills(LABEL))
            await driver.load()
            await driver.read("templates/invoice.md", ex.INVOICE)
            effects, _ = await driver.pump(host.list_dir(LABEL, SKILL, "templates"))
            listing = only(effects, DirectoryListing)
            assert [c.name for c in listing.children] == ["invoice.md", "purchase-order.md"]
            assert listing.hidden  # the peer lists credit-note.md, which the manifest lacks
            sent = list(zip(driver.connection.sent, driver.connection.params, strict=True))
            sent_after_handshake = sent[3:]
            assert sent_after_handshake
            for method, params in sent_after_handshake:
                assert params is not None, method
                assert "_meta" not in params, method

    run(flavour, body)
