"""The host over the mcp 2.3.0 ``ClientSession`` (``skills_core.adapters.mcp_sdk``): error mapping.

A real ``ClientSession`` talks over anyio memory streams to a scripted peer (``Peer``): an honest
skills server (``host_helpers.FakeServer``) whose answers a test replaces per method with a
JSON-RPC error, silence (the session's read timeout fires), or death (the peer closes its
output). What is checked, on asyncio and on trio:

* the SDK's own timeout is ``TransportError(kind="timeout")`` (and the session sent the courtesy
  ``notifications/cancelled``); the SDK's own "connection closed" (the peer died mid-request, or
  the session is closed) is ``TransportError(kind="closed")``; a result the SDK refuses is
  ``TransportError(kind="protocol")``: through the pump, each is a ``TransportFailure`` and the
  host's own failure, never "the server said no";
* every error the server sends is ``JsonRpcError`` with its code, message and data, including
  ``-32000`` and ``-32001`` that are not the SDK's exact shape (``-32602`` to ``skills/get`` is
  ``NotASkill``: ERR-07);
* ``connect`` negotiates the era (modern by ``server/discover``; legacy by ``initialize`` when
  discover is refused or times out, docs/protocol.md#discover) or takes the session's, and connects
  the host with the capabilities the server declared; requests carry the session's ``_meta``
  with the extension declared in the modern era and no ``_meta`` in the legacy one (CAP-10).

Real processes (our server in both eras, the hostile peer's ``slow`` and ``die`` modes, FastMCP)
are in ``test_mcp_sdk_interop.py``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
import mcp.client.session
import mcp_types as types
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from host_helpers import FakeServer, skill_md, strip_meta
from mcp import ClientSession
from mcp.shared.message import SessionMessage

from skills_core.adapters.mcp_sdk import SessionRequester, client_extensions, connect
from skills_core.errors import JsonRpcError, LocalProtocolError, TransportError
from skills_core.host import (
    Connected,
    DeliverToModel,
    Host,
    LoadFailed,
    NotASkill,
    RequestApproval,
    SkillLoaded,
)
from skills_core.host.pump import Pumped, TransportFailure, pump_async
from skills_core.messages import Era
from skills_core.spec import (
    EXTENSION_ID,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
)

ROOT: Final = Path(__file__).resolve().parents[1]
BACKENDS: Final = ["asyncio", "trio"]
LABEL: Final = "peer"
SKILL: Final = "skill://demo/SKILL.md"
#: Short, so that silence turns into the SDK's timeout quickly; nothing asserts on durations.
TIMEOUT: Final = 0.3


class Silence:
    """Never answer the request."""


class Die:
    """Close the peer's output (the server died) instead of answering."""


@dataclass(frozen=True)
class Error:
    """Answer with this JSON-RPC error."""

    code: int
    message: str
    data: Any = None


Outcome = dict[str, Any] | Error | Silence | Die
SILENT: Final = Silence()
DIE: Final = Die()


@dataclass
class Peer:
    """A scripted MCP server speaking to the session over memory streams."""

    server: FakeServer = field(default_factory=FakeServer)
    legacy_only: bool = False
    overrides: dict[str, Outcome] = field(default_factory=dict)
    #: (method, params) of every request and notification received.
    received: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def answer(self, method: str, params: dict[str, Any]) -> Outcome:
        if method in self.overrides:
            return self.overrides[method]
        capabilities = self.server.capabilities()
        if method == "server/discover":
            if self.legacy_only:
                return Error(-32601, "Method not found")
            return {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": capabilities,
                "ttlMs": 0,
                "cacheScope": "private",
            }
        if method == "initialize":
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "serverInfo": {"name": "peer", "version": "1"},
            }
        kind, payload = self.server.handle(method, strip_meta(params))
        if kind == "error":
            return Error(payload["code"], payload["message"], payload.get("data"))
        result: dict[str, Any] = payload
        return result

    async def serve(
        self,
        incoming: MemoryObjectReceiveStream[SessionMessage],
        outgoing: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        async with outgoing:
            async for item in incoming:
                message = item.message
                params = dict(getattr(message, "params", None) or {})
                self.received.append((message.method, params))  # type: ignore[union-attr]
                if not isinstance(message, types.JSONRPCRequest):
                    continue
                outcome = self.answer(message.method, params)
                if isinstance(outcome, Die):
                    return
                if isinstance(outcome, Silence):
                    continue
                reply: types.JSONRPCResponse | types.JSONRPCError
                if isinstance(outcome, Error):
                    error = types.ErrorData(
                        code=outcome.code, message=outcome.message, data=outcome.data
                    )
                    reply = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
                else:
                    reply = types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=outcome)
                await outgoing.send(SessionMessage(message=reply))

    def methods(self) -> list[str]:
        return [method for method, _ in self.received]


@asynccontextmanager
async def session_with(peer: Peer) -> AsyncIterator[ClientSession]:
    """An entered ClientSession whose server is ``peer`` (not yet negotiated)."""
    c2s_send, c2s_recv = anyio.create_memory_object_stream[SessionMessage](32)
    s2c_send, s2c_recv = anyio.create_memory_object_stream[SessionMessage | Exception](32)
    with c2s_send, c2s_recv, s2c_send, s2c_recv:
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.serve, c2s_recv, s2c_send)
            async with ClientSession(
                s2c_recv, c2s_send, read_timeout_seconds=TIMEOUT, extensions=client_extensions()
            ) as session:
                yield session
            tg.cancel_scope.cancel()


def run(backend: str, body: Callable[[], Awaitable[None]]) -> None:
    anyio.run(body, backend=backend)


def demo_server() -> FakeServer:
    server = FakeServer()
    server.add("demo", {"SKILL.md": skill_md("demo"), "notes.md": b"notes\n"})
    return server


async def connected(peer: Peer, session: ClientSession, era: Era | None = None) -> Host:
    host = Host()
    await connect(host, LABEL, session, era=era)
    return host


async def send(session: ClientSession, method: str, params: dict[str, Any] | None = None) -> Any:
    return await SessionRequester(session, origin=LABEL)(method, params or {})


# --- the requester's error mapping --------------------------------------------------------------


def raised_by(
    backend: str,
    peer: Peer,
    *calls: tuple[str, dict[str, Any]],
    era: Era | None = None,
    after_close: bool = False,
) -> list[JsonRpcError | TransportError]:
    """What each request raises through a connected session (or after the session closed)."""
    raised: list[JsonRpcError | TransportError] = []

    async def attempt(session: ClientSession) -> None:
        for method, params in calls:
            with pytest.raises((JsonRpcError, TransportError)) as caught:
                await send(session, method, params)
            exc = caught.value
            assert isinstance(exc, JsonRpcError | TransportError)
            raised.append(exc)

    async def body() -> None:
        async with session_with(peer) as session:
            await connected(peer, session, era)
            if not after_close:
                await attempt(session)
                await anyio.wait_all_tasks_blocked()  # let the peer see any cancellation
        if after_close:
            await attempt(session)

    run(backend, body)
    return raised


@pytest.mark.parametrize("backend", BACKENDS)
def test_silence_is_a_timeout_and_the_request_is_cancelled(backend: str) -> None:
    peer = Peer(server=demo_server(), overrides={"skills/list": SILENT})
    [exc] = raised_by(backend, peer, ("skills/list", {}))
    assert isinstance(exc, TransportError)
    assert exc.kind == "timeout"
    assert "did not answer skills/list in time" in str(exc)
    assert "notifications/cancelled" in peer.methods()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_peer_that_dies_mid_request_is_a_closed_connection(backend: str) -> None:
    """The request in flight fails as closed, and so does every request after it."""
    peer = Peer(server=demo_server(), overrides={"skills/list": DIE})
    raised = raised_by(backend, peer, ("skills/list", {}), ("skills/get", {"uri": SKILL}))
    assert [(type(e), e.kind) for e in raised] == [(TransportError, "closed")] * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_closed_session_is_a_closed_connection(backend: str) -> None:
    peer = Peer(server=demo_server())
    [exc] = raised_by(backend, peer, ("skills/list", {}), after_close=True)
    assert (type(exc), exc.kind) == (TransportError, "closed")


@pytest.mark.parametrize(
    ("error", "shape"),
    [
        (Error(-32602, "No skill is served at x", {"uri": "skill://x/SKILL.md"}), "error"),
        (Error(-32601, "Method not found"), "error"),
        # Codes the SDK also uses for itself, sent by the server: still its answer.
        (Error(-32000, "Internal error"), "error"),
        (Error(-32000, "Connection closed", {"why": "upstream"}), "error"),
        (Error(-32001, "upstream timed out"), "error"),
        # The SDK's exact shapes cannot be told from its own: taken as transport failures.
        (Error(-32000, "Connection closed"), "closed"),
        (Error(-32001, "Request 'skills/list' timed out"), "timeout"),
    ],
)
def test_a_server_error_is_a_json_rpc_error_unless_it_is_the_sdk_s_own_shape(
    error: Error, shape: str
) -> None:
    peer = Peer(server=demo_server(), overrides={"skills/list": error})
    [exc] = raised_by("asyncio", peer, ("skills/list", {}))
    if shape == "error":
        assert isinstance(exc, JsonRpcError)
        assert (exc.rpc_code, exc.method, exc.data) == (error.code, "skills/list", error.data)
        assert error.message in str(exc)
    else:
        assert isinstance(exc, TransportError)
        assert exc.kind == shape


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_result_the_sdk_refuses_is_a_protocol_failure(backend: str) -> None:
    """The SDK validates resources/read results against the negotiated revision (strictly in
    2025-11-25: ``contents`` must be a list)."""
    peer = Peer(server=demo_server(), overrides={"resources/read": {"contents": 7}})
    [exc] = raised_by(backend, peer, ("resources/read", {"uri": SKILL}), era=Era.LEGACY)
    assert (type(exc), exc.kind) == (TransportError, "protocol")
    assert "resources/read result the mcp SDK refused" in str(exc)


# --- through the pump ---------------------------------------------------------------------------


async def load_through_pump(peer: Peer) -> list[Pumped]:
    async with session_with(peer) as session:
        host = await connected(peer, session)
        senders = {LABEL: SessionRequester(session, origin=LABEL)}
        await pump_async(host, host.list_skills(LABEL), senders)

        def approve(item: Pumped) -> Any:
            return host.approve(item.prompt_id) if isinstance(item, RequestApproval) else None

        out = await pump_async(host, host.load(LABEL, SKILL), senders, on_effect=approve)
        assert host.pending_requests == 0
        return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_pump_loads_and_verifies_over_the_session(backend: str) -> None:
    peer = Peer(server=demo_server())

    async def body() -> None:
        out = await load_through_pump(peer)
        delivered = [i for i in out if isinstance(i, DeliverToModel)]
        assert [d.content for d in delivered] == [skill_md("demo")]
        assert delivered[0].verified
        assert [i for i in out if isinstance(i, SkillLoaded)]

    run(backend, body)


@pytest.mark.parametrize(("outcome", "kind"), [(SILENT, "timeout"), (DIE, "closed")])
def test_through_the_pump_a_transport_failure_is_not_the_server_saying_no(
    outcome: Outcome, kind: str
) -> None:
    peer = Peer(server=demo_server(), overrides={"resources/read": outcome})

    async def body() -> None:
        out = await load_through_pump(peer)
        failures = [i for i in out if isinstance(i, TransportFailure)]
        assert [(f.method, f.error.kind) for f in failures] == [("resources/read", kind)]
        assert [i for i in out if isinstance(i, LoadFailed)]
        assert not [i for i in out if isinstance(i, DeliverToModel)]

    run("trio", body)


def test_not_a_skill_is_the_server_s_answer_err_07() -> None:
    peer = Peer(server=demo_server())

    async def body() -> None:
        async with session_with(peer) as session:
            host = await connected(peer, session)
            senders = {LABEL: SessionRequester(session, origin=LABEL)}
            out = await pump_async(host, host.get_skill(LABEL, "skill://nope/SKILL.md"), senders)
        assert [type(i) for i in out] == [NotASkill]  # no TransportFailure

    run("asyncio", body)


# --- the handshake ------------------------------------------------------------------------------


def meta_of(peer: Peer, method: str) -> Any:
    return next(params for m, params in peer.received if m == method).get("_meta")


@pytest.mark.parametrize("backend", BACKENDS)
def test_auto_connect_is_modern_when_discover_answers(backend: str) -> None:
    peer = Peer(server=demo_server())

    async def body() -> None:
        async with session_with(peer) as session:
            host = Host()
            effects = await connect(host, LABEL, session)
            assert isinstance(effects[0], Connected)
            features = host.features(LABEL)
            assert features is not None
            assert features.directory_read
            await send(session, "skills/list")
        assert peer.methods() == ["server/discover", "skills/list"]  # nothing else (VER-12)
        meta = meta_of(peer, "skills/list")  # CAP-10: the session's envelope, extension declared
        assert meta[META_PROTOCOL_VERSION] == "2026-07-28"
        assert meta[META_CLIENT_CAPABILITIES]["extensions"] == {EXTENSION_ID: {}}

    run(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_auto_connect_falls_back_to_initialize_when_discover_is_refused(backend: str) -> None:
    peer = Peer(server=demo_server(), legacy_only=True)

    async def body() -> None:
        async with session_with(peer) as session:
            await connected(peer, session)
            assert session.protocol_version == "2025-11-25"
            await send(session, "skills/list")
        assert peer.methods() == [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "skills/list",
        ]
        assert meta_of(peer, "skills/list") is None  # legacy requests carry no envelope
        init = next(p for m, p in peer.received if m == "initialize")
        assert init["capabilities"]["extensions"] == {EXTENSION_ID: {}}

    run(backend, body)


def test_connect_legacy_sends_no_discover() -> None:
    peer = Peer(server=demo_server())

    async def body() -> None:
        async with session_with(peer) as session:
            await connected(peer, session, Era.LEGACY)
        assert peer.methods()[:2] == ["initialize", "notifications/initialized"]

    run("asyncio", body)


FUTURE_DISCOVER: Final = {
    "resultType": "complete",
    "supportedVersions": ["2099-01-01"],
    "capabilities": {},
    "ttlMs": 0,
    "cacheScope": "private",
}


@pytest.mark.parametrize(
    "discover",
    [SILENT, FUTURE_DISCOVER],
    ids=["discover times out", "discover names no common revision"],
)
def test_auto_connect_falls_back_to_initialize(
    monkeypatch: pytest.MonkeyPatch, discover: Outcome
) -> None:
    """docs/protocol.md#discover: a timeout or an unusable discover result means legacy."""
    monkeypatch.setattr(mcp.client.session, "DISCOVER_TIMEOUT_SECONDS", TIMEOUT)
    peer = Peer(server=demo_server(), overrides={"server/discover": discover})

    async def body() -> None:
        async with session_with(peer) as session:
            await connected(peer, session)
            assert session.protocol_version == "2025-11-25"

    run("asyncio", body)


@pytest.mark.parametrize(
    ("raised", "kind"),
    [
        (OSError("broken pipe"), "closed"),
        (anyio.BrokenResourceError(), "closed"),
        (anyio.EndOfStream(), "closed"),
        (TimeoutError(), "timeout"),
    ],
)
def test_the_transport_s_own_errors_are_transport_errors(raised: Exception, kind: str) -> None:
    """What the stream under the session raises (not through MCPError) is a TransportError."""

    class Broken:
        async def send_request(self, *args: Any, **kwargs: Any) -> Any:
            raise raised

    async def body() -> None:
        requester = SessionRequester(Broken(), origin=LABEL)  # type: ignore[arg-type]
        with pytest.raises(TransportError) as caught:
            await requester("skills/list", {})
        assert caught.value.kind == kind

    run("asyncio", body)


def test_a_bug_under_the_session_is_not_translated() -> None:
    class Buggy:
        async def send_request(self, *args: Any, **kwargs: Any) -> Any:
            raise KeyError("bug")

    async def body() -> None:
        with pytest.raises(KeyError):
            await SessionRequester(Buggy(), origin=LABEL)("skills/list", {})  # type: ignore[arg-type]

    run("asyncio", body)


@pytest.mark.parametrize(
    ("peer", "era", "error", "kind"),
    [
        (Peer(server=demo_server(), legacy_only=True), Era.MODERN, JsonRpcError, "error-response"),
        (Peer(overrides={"server/discover": DIE}), None, TransportError, "closed"),
        (
            Peer(overrides={"initialize": Error(-32603, "no")}),
            Era.LEGACY,
            JsonRpcError,
            "error-response",
        ),
        (
            Peer(overrides={"server/discover": Error(-32601, "no"), "initialize": SILENT}),
            None,
            TransportError,
            "timeout",
        ),
        # A discover result naming no modern revision the SDK speaks: the SDK raises
        # RuntimeError; asked for the modern era, that is the server breaking the protocol.
        (
            Peer(overrides={"server/discover": FUTURE_DISCOVER}),
            Era.MODERN,
            TransportError,
            "protocol",
        ),
    ],
)
def test_connect_failures_are_typed(
    peer: Peer, era: Era | None, error: type[Exception], kind: str
) -> None:
    async def body() -> None:
        async with session_with(peer) as session:
            with pytest.raises(error) as caught:
                await connect(Host(), LABEL, session, era=era)
        assert getattr(caught.value, "kind", None) == kind

    run("asyncio", body)


def test_connect_takes_the_session_s_era_and_refuses_another() -> None:
    peer = Peer(server=demo_server())

    async def body() -> None:
        async with session_with(peer) as session:
            await session.initialize()
            host = Host()
            await connect(host, LABEL, session)  # the session's era: legacy
            with pytest.raises(LocalProtocolError, match="already speaks 2025-11-25"):
                await connect(host, LABEL, session, era=Era.MODERN)
        assert peer.methods().count("initialize") == 1
        assert "server/discover" not in peer.methods()

    run("asyncio", body)


def test_connect_refuses_a_modern_revision_skills_core_does_not_speak() -> None:
    class Future:
        protocol_version = "2099-01-01"
        server_capabilities = types.ServerCapabilities()

    async def body() -> None:
        with pytest.raises(LocalProtocolError, match="does not speak"):
            await connect(Host(), LABEL, Future(), era=None)  # type: ignore[arg-type]

    monkey = pytest.MonkeyPatch()
    monkey.setattr("skills_core.adapters.mcp_sdk.MODERN_PROTOCOL_VERSIONS", ("2099-01-01",))
    try:
        run("asyncio", body)
    finally:
        monkey.undo()


@pytest.mark.parametrize("hidden", ["-S", "sys.modules"])
@pytest.mark.parametrize("module", ["mcp_sdk", "mcp_server"])
def test_the_module_names_the_extra_when_mcp_is_missing(module: str, hidden: str) -> None:
    """Without site-packages, or with ``mcp`` hidden, the SDK is absent: the ImportError names the
    package to install (a vendored copy has no extra to install), then the extra."""
    code = f"import skills_core.adapters.{module}"
    if hidden == "-S":
        argv = [sys.executable, "-S", "-c", code]
    else:
        argv = [sys.executable, "-c", f"import sys; sys.modules['mcp'] = None; {code}"]
    result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "ImportError" in result.stderr
    assert "pip install 'mcp>=2.3,<2.4' (or, where skills-core itself is installed, " in (
        result.stderr
    )
    assert "pip install 'skills-core[mcp]')" in result.stderr
