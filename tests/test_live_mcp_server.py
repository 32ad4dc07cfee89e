"""Changes pushed by an ``mcp`` SDK low-level server given a catalog with ``add_skills``.

Real peers: ``tests/peers/mcp_lowlevel_server.py`` (the SDK server, ``--ttl-ms 300``) over stdio
and over Streamable HTTP (uvicorn), and the ``mcp`` 2.3 client (``ClientSession``, its
``message_handler`` and its ``subscriptions/listen`` driver). A skill is added, edited and removed
while connected; each change must arrive within ``ttlMs`` plus the pacer's window (plus
scheduling slack). A re-scan that changes no entry sends nothing, and a burst of edits makes at
most one notification per ``ttlMs``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_server_helpers as helpers
import mcp_types as types
import pytest
from interop_helpers import child_env
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated, listen
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.message import SessionMessage
from pydantic import RootModel

from skills_core.adapters.mcp_server import add_skills
from skills_core.server.changes import SkillChanges

HERE = Path(__file__).resolve().parent
PEER = HERE / "peers" / "mcp_lowlevel_server.py"
TTL_MS = 300
#: ttlMs + the window (0.2 s); generous slack for a loaded machine.
DEADLINE = TTL_MS / 1000 + 0.2 + 4.0
ALPHA = "skill://alpha/SKILL.md"
BETA = "skill://beta/SKILL.md"


def write_skill(root: Path, name: str, body: str = "body\n") -> None:
    """Write a skill's SKILL.md whole (a temporary file renamed over it: a scan running meanwhile
    sees the old bytes or the new, never a file cut short)."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    temporary = root / f".{name}.tmp"
    temporary.write_text(f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}")
    os.replace(temporary, folder / "SKILL.md")


class Heard:
    """What a ``message_handler`` received: the change notifications, with their arrival time."""

    def __init__(self) -> None:
        self.items: list[tuple[float, Any]] = []
        self.changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, Exception):
            return
        self.items.append((time.monotonic(), message))
        self.changed.set()

    def of(self, kind: type[Any]) -> list[Any]:
        return [m for _, m in self.items if isinstance(m, kind)]

    async def wait_for(self, test: Callable[[Any], bool], within: float = DEADLINE) -> Any:
        with anyio.fail_after(within):
            while True:
                for _, message in self.items:
                    if test(message):
                        return message
                self.changed = anyio.Event()
                await self.changed.wait()

    def clear(self) -> None:
        self.items.clear()


def list_changed(message: Any) -> bool:
    return isinstance(message, types.ResourceListChangedNotification)


def updated(uri: str) -> Callable[[Any], bool]:
    def test(message: Any) -> bool:
        return isinstance(message, types.ResourceUpdatedNotification) and (
            message.params.uri == uri
        )

    return test


@contextlib.asynccontextmanager
async def sdk_session(
    root: Path, transport: str, handler: Heard, url: str | None = None
) -> AsyncIterator[ClientSession]:
    """An entered ``ClientSession`` to the SDK server (not negotiated yet)."""
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable,
            args=[str(PEER), str(root), "--ttl-ms", str(TTL_MS)],
            env=child_env({}),
        )
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, message_handler=handler) as session,
            ):
                yield session
        return
    assert url is not None
    async with (
        streamable_http_client(url) as (read, write, *_),
        ClientSession(read, write, message_handler=handler) as session,
    ):
        yield session


@contextlib.contextmanager
def peer_url(root: Path, transport: str) -> Iterator[str | None]:
    if transport == "http":
        with helpers.http_peer(root, ttl_ms=TTL_MS) as url:
            yield url
    else:
        yield None


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sdk_client_gets_list_changed_and_updated_from_add_skills_push_01_03_04(
    tmp_path: Path, transport: str
) -> None:
    """PUSH-01, PUSH-03, PUSH-04 (2025-11-25): add, edit, remove while connected; the SDK
    client's handler gets ``list_changed`` for each, and ``updated`` for the subscribed URI."""
    write_skill(tmp_path, "alpha")

    async def main(url: str | None) -> None:
        heard = Heard()
        async with sdk_session(tmp_path, transport, heard, url) as session:
            result = await session.initialize()
            resources = result.capabilities.resources
            assert resources is not None
            assert resources.list_changed is True  # PUSH-01
            assert resources.subscribe is True
            with warnings.catch_warnings():  # deprecated as of 2026-07-28, not on 2025-11-25
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await session.subscribe_resource(ALPHA)
            await anyio.sleep(0.5)  # the HTTP client opens its GET stream after initialized
            assert heard.of(types.ResourceListChangedNotification) == []

            write_skill(tmp_path, "beta")
            await heard.wait_for(list_changed)
            assert heard.of(types.ResourceUpdatedNotification) == []  # alpha did not change
            heard.clear()

            write_skill(tmp_path, "alpha", "edited\n")
            await heard.wait_for(updated(ALPHA))
            assert heard.of(types.ResourceListChangedNotification)  # with its list_changed
            heard.clear()

            shutil.rmtree(tmp_path / "beta")
            await heard.wait_for(list_changed)
            assert not list(heard.of(types.ResourceUpdatedNotification))  # beta unsubscribed
            listing = await session.send_request(
                types.Request[dict[str, Any], str](method="skills/list", params={}),
                ListResult,
            )
            assert [s["uri"] for s in listing.root["skills"]] == [ALPHA]

    with peer_url(tmp_path, transport) as url:
        anyio.run(main, url)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sdk_client_listen_stream_from_add_skills_push_01_06_07(
    tmp_path: Path, transport: str
) -> None:
    """PUSH-01, PUSH-06, PUSH-07 (2026-07-28): the SDK's ``subscriptions/listen`` driver against
    the SDK server; the stream delivers ``list_changed`` for an added skill and ``updated`` for the
    URI it asked for, each tagged with the listen id (the driver admits only those)."""
    write_skill(tmp_path, "alpha")

    async def main(url: str | None) -> None:
        heard = Heard()
        async with sdk_session(tmp_path, transport, heard, url) as session:
            result = await session.discover()
            resources = result.capabilities.resources
            assert resources is not None
            assert resources.list_changed is True  # PUSH-01 (the modern derivation)
            assert resources.subscribe is True
            async with listen(
                session, resources_list_changed=True, resource_subscriptions=[ALPHA]
            ) as stream:
                assert stream.honored.resources_list_changed is True
                assert stream.honored.resource_subscriptions == [ALPHA]
                events = aiter(stream)
                write_skill(tmp_path, "beta")
                with anyio.fail_after(DEADLINE):
                    event = await anext(events)
                assert event == ResourcesListChanged()
                write_skill(tmp_path, "alpha", "edited\n")
                seen: set[Any] = set()
                with anyio.fail_after(DEADLINE):
                    while ResourceUpdated(uri=ALPHA) not in seen:
                        seen.add(await anext(events))
                assert seen <= {ResourcesListChanged(), ResourceUpdated(uri=ALPHA)}
            # the tee reached message_handler too, stamped with the listen id
            stamped = heard.of(types.ResourceListChangedNotification)
            assert stamped
            meta = stamped[0].params.meta if stamped[0].params else None
            assert meta is not None
            assert meta["io.modelcontextprotocol/subscriptionId"] == stream.subscription_id

    with peer_url(tmp_path, transport) as url:
        anyio.run(main, url)


def test_rescan_without_change_sends_nothing_and_a_burst_is_paced_push_02_05(
    tmp_path: Path,
) -> None:
    """PUSH-02: a re-scan that finds equal entries (the SKILL.md rewritten with the same bytes, a
    new mtime) sends nothing; PUSH-05: a burst of 20 edits over 2 s makes at most one
    ``list_changed`` per ``ttlMs`` (plus the first), not one per edit."""
    write_skill(tmp_path, "alpha")

    async def main() -> None:
        heard = Heard()
        async with sdk_session(tmp_path, "stdio", heard) as session:
            await session.initialize()
            for _ in range(5):  # same bytes, new mtimes: the folders are re-scanned
                write_skill(tmp_path, "alpha")
                await anyio.sleep(TTL_MS / 1000)
            await anyio.sleep(DEADLINE / 2)
            assert heard.of(types.ResourceListChangedNotification) == []

            started = time.monotonic()
            for i in range(20):
                write_skill(tmp_path, "alpha", f"edit {i}\n")
                await anyio.sleep(0.1)
            burst = time.monotonic() - started
            await heard.wait_for(list_changed)
            await anyio.sleep(DEADLINE / 2)  # the last edit's notification too
            sent = len(heard.of(types.ResourceListChangedNotification))
            # Announcements are at least ttlMs apart (server time) and the last comes at most a
            # look and a window after the last edit; one per edit would be 20.
            interval = TTL_MS / 1000
            assert 1 <= sent <= (burst + interval + 0.2) / interval + 1, (sent, burst)

    anyio.run(main)


class ListResult(RootModel[dict[str, Any]]):
    """Any result object, as sent."""


# -- in-process: the embedder's own calls, the connections kept, the timer's end ---------------


@contextlib.asynccontextmanager
async def in_process(server: Server[Any], heard: Heard) -> AsyncIterator[ClientSession]:
    """A ``ClientSession`` to ``server.run`` over memory streams; on exit the client's stream is
    closed and ``server.run`` must return (within 10 s)."""
    c2s_send, c2s_recv = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    s2c_send, s2c_recv = anyio.create_memory_object_stream[SessionMessage](16)
    ran = anyio.Event()

    async def run() -> None:
        await server.run(c2s_recv, s2c_send, server.create_initialization_options())
        ran.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        async with ClientSession(s2c_recv, c2s_send, message_handler=heard) as session:
            yield session
        c2s_send.close()
        with anyio.fail_after(10):  # the server's lifespan, and its change timer, end
            await ran.wait()
        s2c_recv.close()


def test_embedder_notify_changes_and_connections_kept_push_02_03_04(tmp_path: Path) -> None:
    """PUSH-02, PUSH-03, PUSH-04 through the embedder's own call (``watch=False``, no timer):
    ``notify_changes()`` returns the change and sends it (``list_changed``, ``updated`` for the
    subscribed URI), returns None and sends nothing when no entry changed; the connection is
    kept while open and forgotten when it closes."""
    write_skill(tmp_path, "alpha")
    server: Server[Any] = Server(helpers.NAME, version=helpers.VERSION)
    default_lifespan = server.lifespan
    publisher = add_skills(server, helpers.skills_server(str(tmp_path), ttl_ms=0), watch=False)
    assert server.lifespan is default_lifespan  # no timer asked for

    async def main() -> None:
        heard = Heard()
        async with in_process(server, heard) as session:
            await session.initialize()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await session.subscribe_resource(ALPHA)
            assert publisher.connections == 1
            assert await publisher.notify_changes() is None
            write_skill(tmp_path, "alpha", "edited\n")
            write_skill(tmp_path, "beta")
            change = await publisher.notify_changes()
            assert change is not None
            assert change.changed == (ALPHA,)
            assert change.added == (BETA,)
            await heard.wait_for(updated(ALPHA), within=5)
            assert len(heard.of(types.ResourceListChangedNotification)) == 1
            assert [m.params.uri for m in heard.of(types.ResourceUpdatedNotification)] == [ALPHA]
            assert await publisher.notify_changes() is None  # nothing new: nothing sent
            await session.send_ping()
            assert len(heard.items) == 2
        assert publisher.connections == 0  # forgotten with its connection

    anyio.run(main)


def test_the_change_timer_ends_with_the_server_push_05(tmp_path: Path) -> None:
    """PUSH-05: the timer ``add_skills`` runs in the server's lifespan pushes a change unasked,
    and ends when the server stops (``server.run`` returns once the client has gone: a timer left
    running would hold the lifespan's task group open)."""
    write_skill(tmp_path, "alpha")
    server: Server[Any] = Server(helpers.NAME, version=helpers.VERSION)
    add_skills(server, helpers.skills_server(str(tmp_path), ttl_ms=100))

    async def main() -> None:
        heard = Heard()
        async with in_process(server, heard) as session:
            await session.initialize()
            await session.send_ping()  # initialized is handled: the connection is known
            write_skill(tmp_path, "beta")
            await heard.wait_for(list_changed)

    anyio.run(main)


def test_a_server_serving_listen_already_needs_its_bus_push_06() -> None:
    """PUSH-06: a server with its own ``subscriptions/listen`` handler (as ``MCPServer`` has) is
    given the changes on that handler's bus, or refused with the reason; never silently mute."""
    bus = InMemorySubscriptionBus()
    server: Server[Any] = Server(helpers.NAME, on_subscriptions_listen=ListenHandler(bus))
    skills = helpers.skills_server(str(HERE))
    with pytest.raises(ValueError, match="bus="):
        add_skills(server, skills)
    publisher = add_skills(server, skills, bus=bus)
    assert publisher.bus is bus

    async def main() -> list[Any]:
        events: list[Any] = []
        bus.subscribe(events.append)
        await publisher.publish(SkillChanges(added=(BETA,), resources=(BETA,)))
        await publisher.publish(SkillChanges())  # no change: nothing
        return events

    assert anyio.run(main) == [ResourcesListChanged(), ResourceUpdated(uri=BETA)]


def test_close_ends_the_listen_streams_gracefully_push_08(tmp_path: Path) -> None:
    """PUSH-08: ``ChangePublisher.close()`` ends each open ``subscriptions/listen`` stream with the
    listen request's result: the SDK client's iteration simply ends (``SubscriptionLost`` would
    mean an abrupt end), after the change published before it."""
    write_skill(tmp_path, "alpha")
    server: Server[Any] = Server(helpers.NAME, version=helpers.VERSION)
    publisher = add_skills(server, helpers.skills_server(str(tmp_path), ttl_ms=0), watch=False)

    async def main() -> list[Any]:
        async with in_process(server, Heard()) as session:
            await session.discover()
            async with listen(session, resources_list_changed=True) as stream:
                write_skill(tmp_path, "beta")
                assert await publisher.notify_changes() is not None
                publisher.close()
                with anyio.fail_after(10):
                    return [event async for event in stream]
        raise AssertionError("unreachable")

    assert anyio.run(main) == [ResourcesListChanged()]


def test_subscriptions_of_other_schemes_stay_the_servers_push_04(tmp_path: Path) -> None:
    """PUSH-04 beside a server's own ``resources/subscribe``: its handler keeps the URIs of its
    scheme (``memo://``), the skill URIs are ours, and a change of a subscribed skill file is
    sent as ``updated``."""
    write_skill(tmp_path, "alpha")
    theirs: list[str] = []

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        theirs.append(str(params.uri))
        return types.EmptyResult()

    server: Server[Any] = Server(
        helpers.NAME,
        version=helpers.VERSION,
        on_list_resources=helpers.list_memo,
        on_subscribe_resource=subscribe,
    )
    publisher = add_skills(server, helpers.skills_server(str(tmp_path), ttl_ms=0), watch=False)

    async def main() -> None:
        heard = Heard()
        async with in_process(server, heard) as session:
            result = await session.initialize()
            assert result.capabilities.resources is not None
            assert result.capabilities.resources.list_changed is True  # PUSH-01
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await session.subscribe_resource(helpers.MEMO_URI)
                await session.subscribe_resource(ALPHA)
            assert theirs == [helpers.MEMO_URI]
            write_skill(tmp_path, "alpha", "edited\n")
            assert await publisher.notify_changes() is not None
            await heard.wait_for(updated(ALPHA), within=5)

    anyio.run(main)
