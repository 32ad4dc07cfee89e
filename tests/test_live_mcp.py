"""Changes pushed to the ``mcp`` 2.3 Python client: its ``message_handler`` against ``serve``,
and our Host following them through ``skills_core.adapters.mcp_sdk.SessionWatch``.

On 2025-11-25 (``initialize``) the client gets ``notifications/resources/list_changed`` unasked,
and ``notifications/resources/updated`` for the URI it subscribed to
(``session.subscribe_resource``), as the SDK's own typed notifications. Our Host, over a
``ClientSession`` whose ``message_handler`` is ``SessionWatch.message_handler``, re-lists on them
(on 2026-07-28 from the ``subscriptions/listen`` stream ``SessionWatch.changes`` opens) against
``skills-core serve`` and against an SDK server given the catalog with ``add_skills``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_server_helpers
import mcp_types as types
import pytest
from http_helpers import serving
from interop_helpers import REPO_ROOT
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning

from skills_core.adapters.mcp_sdk import (
    SessionRequester,
    SessionWatch,
    client_extensions,
    connect,
)
from skills_core.host import Host, SkillsChanged
from skills_core.host.effects import (
    DeliverToModel,
    Effect,
    Refused,
    RequestApproval,
    SkillChanged,
)
from skills_core.host.pump import pump_async
from skills_core.host.states import LoadState
from skills_core.messages import Era


def write_skill(root: Path, name: str, body: str = "body\n") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}"
    )


def test_mcp_client_notification_handler_gets_list_changed_and_updated_push_03_push_04(
    tmp_path: Path,
) -> None:
    """PUSH-03, PUSH-04 with the mcp SDK client over stdio (legacy)."""
    write_skill(tmp_path, "alpha")
    seen: list[Any] = []
    arrived: anyio.Event | None = None  # made inside the event loop below

    async def main() -> None:
        nonlocal arrived
        arrived = anyio.Event()
        got = arrived

        async def handler(message: Any) -> None:
            if isinstance(message, Exception):
                return
            seen.append(message)
            if isinstance(message, types.ResourceUpdatedNotification):
                got.set()

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "skills_core", "serve", "--ttl-ms", "300", str(tmp_path)],
            env={"PYTHONPATH": str(REPO_ROOT)},
        )
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, message_handler=handler) as session,
            ):
                result = await session.initialize()
                assert result.capabilities.resources is not None
                assert result.capabilities.resources.list_changed is True  # PUSH-01
                assert result.capabilities.resources.subscribe is True
                with warnings.catch_warnings():  # deprecated as of 2026-07-28, not on 2025-11-25
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await session.subscribe_resource("skill://alpha/SKILL.md")
                write_skill(tmp_path, "alpha", "edited\n")
                with anyio.fail_after(10):
                    await got.wait()

    anyio.run(main)
    kinds = [type(message).__name__ for message in seen]
    assert "ResourceListChangedNotification" in kinds
    updated = [m for m in seen if isinstance(m, types.ResourceUpdatedNotification)]
    assert updated[0].params.uri == "skill://alpha/SKILL.md"


# -- our Host through skills_core.adapters.mcp_sdk.SessionWatch ---------------------------------

ALPHA = "skill://alpha/SKILL.md"
BETA = "skill://beta/SKILL.md"
TTL_MS = 300
#: ttlMs + the window (0.2 s) + a re-list; generous slack for a loaded machine.
DEADLINE = TTL_MS / 1000 + 0.2 + 5.0
SDK_PEER = Path(__file__).resolve().parent / "peers" / "mcp_lowlevel_server.py"


def write_whole(root: Path, name: str, body: str = "body\n") -> None:
    """Write a skill's SKILL.md whole (renamed over the old one: a scan never sees half a file)."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    temporary = root / f".{name}.tmp"
    temporary.write_text(f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}")
    os.replace(temporary, folder / "SKILL.md")


class Approver:
    """The ``on_effect`` of the test: approves prompts while ``approve`` is set, records them."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.approve = True
        self.prompts: list[RequestApproval] = []
        self.seen: list[object] = []

    def __call__(self, effect: object) -> list[Effect] | None:
        self.seen.append(effect)
        if isinstance(effect, RequestApproval):
            self.prompts.append(effect)
            if self.approve:
                return self.host.approve(effect.prompt_id)
        return None


def server_argv(kind: str, root: Path) -> list[str]:
    if kind == "serve":
        return ["-m", "skills_core", "serve", "--ttl-ms", str(TTL_MS), str(root)]
    return [str(SDK_PEER), str(root), "--ttl-ms", str(TTL_MS)]


@contextlib.contextmanager
def http_server(kind: str, root: Path) -> Iterator[str]:
    """``serve --http`` or the SDK server under uvicorn, for the block; yields its URL."""
    if kind == "serve":
        with serving(root, "--ttl-ms", str(TTL_MS)) as served:
            yield served.url
    else:
        with mcp_server_helpers.http_peer(root, ttl_ms=TTL_MS) as url:
            yield url


@contextlib.asynccontextmanager
async def client_streams(
    kind: str, transport: str, root: Path, url: str | None
) -> AsyncIterator[tuple[Any, Any]]:
    """The mcp client transport to the server: stdio (spawned) or Streamable HTTP (at ``url``)."""
    if transport == "http":
        assert url is not None
        async with streamable_http_client(url) as (read, write, *_):
            yield read, write
        return
    params = StdioServerParameters(
        command=sys.executable, args=server_argv(kind, root), env={"PYTHONPATH": str(REPO_ROOT)}
    )
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            yield read, write


@pytest.mark.parametrize("era", [Era.LEGACY, Era.MODERN], ids=["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("kind", ["serve", "sdk-add-skills"])
def test_host_session_watch_reports_changes_and_never_widens_approval_push_09_10(
    tmp_path: Path, kind: str, transport: str, era: Era
) -> None:
    """PUSH-09, PUSH-10 through the mcp SDK client: our Host over ``ClientSession`` (stdio and
    Streamable HTTP) against ``skills-core serve`` and against an SDK server given the catalog
    with ``add_skills``. Adding, editing and removing a skill while connected is reported as
    added, changed, removed; the edited skill, loaded and approved before, is refused until
    approved again."""
    write_whole(tmp_path, "alpha")

    async def main(url: str | None) -> None:
        host = Host()
        approver = Approver(host)
        watcher = SessionWatch(host, interval=0.2, on_effect=approver)
        heard: list[str] = []

        async def mine(message: Any) -> None:
            heard.append(getattr(message, "method", type(message).__name__))

        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(
                client_streams(kind, transport, tmp_path, url)
            )
            async with ClientSession(
                read,
                write,
                read_timeout_seconds=20,
                extensions=client_extensions(),
                message_handler=watcher.message_handler("s", then=mine),
            ) as session:
                await connect(host, "s", session, era=era)
                senders = {"s": SessionRequester(session, origin="s")}
                await pump_async(host, host.list_skills("s"), senders)
                out = await pump_async(host, host.load("s", ALPHA), senders, on_effect=approver)
                assert any(isinstance(e, DeliverToModel) for e in out)
                assert host.state("s", ALPHA) is LoadState.ACTING
                watcher.add("s", session)
                changes = watcher.changes()

                write_whole(tmp_path, "beta")
                with anyio.fail_after(DEADLINE):
                    change = await anext(changes)
                assert change == SkillsChanged(origin="s", added=(BETA,))
                assert host.state("s", BETA) is not LoadState.ACTING  # recorded, not loaded

                approver.approve = False
                approver.prompts.clear()
                write_whole(tmp_path, "alpha", "new instructions\n")
                with anyio.fail_after(DEADLINE):
                    change = await anext(changes)
                assert change.changed == (ALPHA,)
                assert not change.added
                assert not change.removed
                reapproval = [
                    e for e in approver.seen if isinstance(e, SkillChanged) and e.uri == ALPHA
                ]
                assert reapproval
                assert reapproval[-1].requires_reapproval
                assert approver.prompts  # asked again, and not approved
                refused = await pump_async(host, host.read("s", ALPHA, "SKILL.md"), senders)
                assert any(isinstance(e, Refused) for e in refused)
                assert not any(isinstance(e, DeliverToModel) for e in refused)
                # approved again, then loaded again (the copy in context is stale, HELD-07):
                # the new bytes may now reach the model, with no further prompt
                await pump_async(host, host.approve(approver.prompts[-1].prompt_id), senders)
                asked = len(approver.prompts)
                out = await pump_async(host, host.load("s", ALPHA), senders, on_effect=approver)
                delivered = [e for e in out if isinstance(e, DeliverToModel)]
                assert delivered, out
                assert b"new instructions" in delivered[0].content
                assert len(approver.prompts) == asked
                assert host.state("s", ALPHA) is LoadState.ACTING

                shutil.rmtree(tmp_path / "beta")
                with anyio.fail_after(DEADLINE):
                    change = await anext(changes)
                assert change == SkillsChanged(origin="s", removed=(BETA,))
                assert host.registry.get("s", BETA) is None
                await changes.aclose()
        assert watcher.watch.notifications >= 3
        assert "notifications/resources/list_changed" in heard  # passed on to the embedder's

    if transport == "http":
        with http_server(kind, tmp_path) as url:
            anyio.run(main, url)
    else:
        anyio.run(main, None)
