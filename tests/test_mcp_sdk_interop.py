"""Real peers: our host over an mcp 2.3.0 ``ClientSession`` (``stdio_client``) through the pump.

* ``skills-core serve`` in both eras (``connect(era=...)``), on asyncio and on trio: list, load
  with approval through ``on_effect``, read a listed file, list a directory (our server declares
  ``directoryRead``, so a request goes out), every delivery verified and equal to the spec's bytes;
* the hostile peer's ``slow`` mode (``resources/read`` never answered) and ``die`` mode (the
  process exits when SKILL.md is read): a ``TransportFailure`` of kind ``timeout`` / ``closed`` and
  a failed load, never a verified delivery;
* FastMCP 4.1.6 (modern only; its entries come from another implementation): list and load.

``stdio_client`` passes only a few variables of the environment to the child, so it gets
``PYTHONPATH`` (and FastMCP's quiet settings) explicitly; the child's stderr goes to /dev/null.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import pytest
from interop_helpers import (
    EXTRA_FILES,
    FASTMCP_ENV,
    FASTMCP_SERVER,
    HOSTILE_SERVER,
    REPO_ROOT,
    write_files,
    write_spec_skill,
)
from mcp import ClientSession, StdioServerParameters, stdio_client

from skills_core import spec_examples as ex
from skills_core.adapters.mcp_sdk import SessionRequester, client_extensions, connect
from skills_core.host import (
    DeliverToModel,
    DirectoryListing,
    Effect,
    Host,
    LoadFailed,
    RequestApproval,
    SkillLoaded,
)
from skills_core.host.pump import Pumped, TransportFailure, pump_async
from skills_core.messages import Era

LABEL: Final = "docs"
SKILL: Final = ex.SKILL_MD_URI
REFUNDS: Final = "skill://acme/billing/refunds/SKILL.md"
NOTES: Final = "skill://meeting-notes/SKILL.md"


@pytest.fixture(scope="module")
def skills_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-sdk-host") / "skills"
    write_spec_skill(root)
    write_files(root, EXTRA_FILES)
    return root


@asynccontextmanager
async def session_for(argv: list[str], *, timeout: float = 20.0) -> AsyncIterator[ClientSession]:
    """An entered ClientSession over the SDK's stdio client to ``argv`` (not negotiated)."""
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], env={"PYTHONPATH": str(REPO_ROOT), **FASTMCP_ENV}
    )
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(
                read, write, read_timeout_seconds=timeout, extensions=client_extensions()
            ) as session,
        ):
            yield session


class Driver:
    """A fresh host on one session, with the pump approving every prompt."""

    def __init__(self, session: ClientSession, *, timeout: float | None = None) -> None:
        self.host = Host()
        self.senders = {LABEL: SessionRequester(session, origin=LABEL, timeout=timeout)}

    def react(self, item: Pumped) -> list[Effect] | None:
        return self.host.approve(item.prompt_id) if isinstance(item, RequestApproval) else None

    async def pump(self, effects: list[Effect]) -> list[Pumped]:
        return await pump_async(self.host, effects, self.senders, on_effect=self.react)


def deliveries(out: list[Pumped]) -> list[DeliverToModel]:
    return [i for i in out if isinstance(i, DeliverToModel)]


def no_transport_failure(out: list[Pumped]) -> list[Pumped]:
    assert not [i for i in out if isinstance(i, TransportFailure)], out
    return out


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("era", [Era.MODERN, Era.LEGACY])
def test_our_server_in_both_eras(skills_root: Path, era: Era, backend: str) -> None:
    argv = [sys.executable, "-m", "skills_core", "serve", str(skills_root)]

    async def body() -> None:
        async with session_for(argv) as session:
            driver = Driver(session)
            await connect(driver.host, LABEL, session, era=era)
            assert session.protocol_version == ("2026-07-28" if era is Era.MODERN else "2025-11-25")
            no_transport_failure(await driver.pump(driver.host.list_skills(LABEL)))
            assert {item.uri for item in driver.host.catalog(LABEL)} == {SKILL, REFUNDS, NOTES}

            out = no_transport_failure(await driver.pump(driver.host.load(LABEL, SKILL)))
            assert [d.content for d in deliveries(out)] == [ex.FILES["SKILL.md"]]
            assert all(d.verified for d in deliveries(out))
            assert [i for i in out if isinstance(i, SkillLoaded)]

            read = "templates/invoice.md"
            out = no_transport_failure(await driver.pump(driver.host.read(LABEL, SKILL, read)))
            assert [d.content for d in deliveries(out)] == [ex.FILES[read]]

            out = no_transport_failure(
                await driver.pump(driver.host.list_dir(LABEL, SKILL, "templates"))
            )
            listing = next(i for i in out if isinstance(i, DirectoryListing))
            assert not listing.from_manifest  # directoryRead is declared: the server was asked
            assert [c.name for c in listing.children] == ["invoice.md", "purchase-order.md"]

    anyio.run(body, backend=backend)


@pytest.mark.parametrize(("mode", "kind"), [("slow", "timeout"), ("die", "closed")])
def test_a_hostile_server_that_times_out_or_dies(mode: str, kind: str) -> None:
    argv = [sys.executable, str(HOSTILE_SERVER), mode]

    async def body() -> None:
        async with session_for(argv) as session:
            driver = Driver(session, timeout=1.0)
            await connect(driver.host, LABEL, session)
            await driver.pump(driver.host.list_skills(LABEL))
            out = await driver.pump(driver.host.load(LABEL, SKILL))
        failures = [i for i in out if isinstance(i, TransportFailure)]
        assert [(f.method, f.error.kind) for f in failures] == [("resources/read", kind)]
        assert [i for i in out if isinstance(i, LoadFailed)]
        assert not deliveries(out)
        assert driver.host.pending_requests == 0

    anyio.run(body, backend="asyncio")


def test_a_fastmcp_server(skills_root: Path) -> None:
    argv = [sys.executable, str(FASTMCP_SERVER), str(skills_root)]

    async def body() -> None:
        async with session_for(argv, timeout=60.0) as session:
            driver = Driver(session)
            await connect(driver.host, LABEL, session)
            assert session.protocol_version == "2026-07-28"
            no_transport_failure(await driver.pump(driver.host.list_skills(LABEL)))
            entry: Any = driver.host.registry.get(LABEL, SKILL)
            assert entry is not None
            assert entry.to_json() == ex.entry_json()  # another implementation's digests agree
            out = no_transport_failure(await driver.pump(driver.host.load(LABEL, REFUNDS)))
            assert [d.content for d in deliveries(out)] == [
                EXTRA_FILES["acme/billing/refunds/SKILL.md"]
            ]
            assert all(d.verified for d in deliveries(out))

    anyio.run(body, backend="asyncio")
