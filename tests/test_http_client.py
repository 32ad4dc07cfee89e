"""skills_core.adapters.http_client: our host over Streamable HTTP, against scripted servers.

The servers (``tests/http_peers.py``) are real sockets in a thread: a well-behaved dual-era MCP
peer around our own ``SkillsServer``, and hostile ones that send whatever a test needs. The client
runs under asyncio and under trio (httpx2 runs on both through anyio). Through the command line,
every hostile answer must end in the exit code a hostile stdio server gets (README's table).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import anyio
import pytest
from http_peers import (
    CLOSE,
    RESET,
    Action,
    McpPeer,
    ScriptedServer,
    Seen,
    chunk,
    chunked_head,
    json_response,
    response,
)
from interop_helpers import REPO_ROOT, child_env, new_host, pump

import skills_core as sc
from skills_core import spec_examples as ex
from skills_core.adapters.http_client import REQUEST_TIMEOUT, HttpClient, open_http_client
from skills_core.errors import JsonRpcError, LocalProtocolError, TransportError
from skills_core.host.driver import handshake
from skills_core.host.effects import DeliverToModel, RequestApproval
from skills_core.host.pump import Pumped
from skills_core.http.eras import EraCache
from skills_core.jsonrpc import NotificationReceived
from skills_core.messages import Era

_T = TypeVar("_T")
#: httpx2 2.16.2's AsyncResponseStream iterates httpcore2's stream generator without closing it, so a
#: body abandoned early (an event stream, once its response is in) leaves that generator to the
#: garbage collector. Under asyncio the loop's finalizer closes it silently; trio warns. The
#: connection itself is closed by ``Response.aclose()`` either way; only this warning is ignored.
HTTPX2_ABANDONED_STREAM = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object PoolByteStream.__aiter__"
    ":pytest.PytestUnraisableExceptionWarning"
)
BACKENDS = ["asyncio", pytest.param("trio", marks=HTTPX2_ABANDONED_STREAM)]
SKILL = "skill://pdf-processing/SKILL.md"
RESULT = {"jsonrpc": "2.0", "id": 1, "result": {"skills": []}}


def run(backend: str, main: Callable[[], Awaitable[_T]]) -> _T:
    return anyio.run(main, backend=backend)


async def load_and_read(client: HttpClient, *, era: Era | None = None) -> list[DeliverToModel]:
    """handshake, list, load pdf-processing (approved), read a template: what the model got."""
    host = new_host()
    connections = {"s": client}
    await pump(host, await handshake(host, "s", client, timeout=5, era=era), connections, timeout=5)
    await pump(host, host.list_skills("s"), connections, timeout=5)
    effects = await pump(host, host.load("s", SKILL), connections, timeout=5)
    prompts = [e for e in effects if isinstance(e, RequestApproval)]
    assert len(prompts) == 1, effects
    delivered = await pump(host, host.approve(prompts[0].prompt_id), connections, timeout=5)
    delivered += await pump(
        host, host.read("s", SKILL, "templates/invoice.md"), connections, timeout=5
    )
    return [e for e in delivered if isinstance(e, DeliverToModel)]


def assert_spec_skill(delivered: list[DeliverToModel]) -> None:
    assert [d.uri for d in delivered] == [SKILL, "skill://pdf-processing/templates/invoice.md"]
    assert all(d.verified for d in delivered)
    assert delivered[0].content == ex.FILES["SKILL.md"]
    assert delivered[1].content == ex.FILES["templates/invoice.md"]


# --- both eras, both answer types, both event loops -----------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
def test_modern_server(backend: str, sse: bool) -> None:
    """HTTP-30, HTTP-31, HTTP-33: modern headers on every POST; JSON and SSE answers."""
    peer = McpPeer(sse=sse)
    notes: list[NotificationReceived] = []

    async def main() -> tuple[list[DeliverToModel], Era | None]:
        async with open_http_client(
            server.url,
            label="s",
            headers=[("Authorization", "Bearer t0k")],
            on_notification=notes.append,
        ) as client:
            return await load_and_read(client), client.era

    with ScriptedServer(peer) as server:
        delivered, era = run(backend, main)
    assert_spec_skill(delivered)
    assert era is Era.MODERN
    posts = server.posts()
    assert [p.message["method"] for p in posts] == [
        "server/discover",
        "skills/list",
        "resources/read",
        "resources/read",
    ]
    for post in posts:
        message = post.message
        assert post.path == "/mcp"
        assert post.headers["accept"] == "application/json, text/event-stream"
        assert post.headers["content-type"] == "application/json"
        assert post.headers["accept-encoding"] == "identity"
        assert post.headers["authorization"] == "Bearer t0k"  # HTTP-40: on every request
        assert (
            post.headers["mcp-protocol-version"]
            == message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        )
        assert post.headers["mcp-method"] == message["method"]
        assert "mcp-session-id" not in post.headers  # the "ignored" id of modern answers is ignored
        if message["method"] == "resources/read":
            assert post.headers["mcp-name"] == message["params"]["uri"]
        else:
            assert "mcp-name" not in post.headers
    assert not [s for s in server.seen if s.method == "DELETE"]  # nothing to end in modern
    assert len(notes) == (4 if sse else 0)  # a progress notification on every stream, delivered


@pytest.mark.parametrize("backend", BACKENDS)
def test_legacy_server_by_fallback(backend: str) -> None:
    """HTTP-36, HTTP-37: a 400 without JSON-RPC to the probe -> initialize; the session id and
    negotiated version on every later request; DELETE on close."""
    peer = McpPeer(legacy_only=True)

    async def main() -> list[DeliverToModel]:
        async with open_http_client(server.url, label="s") as client:
            delivered = await load_and_read(client)
            assert client.era is Era.LEGACY
            assert client.session is not None
            assert client.session.session_id == "session-0"
            return delivered

    with ScriptedServer(peer) as server:
        assert_spec_skill(run(backend, main))
    posts = server.posts()
    assert server.methods() == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "skills/list",
        "resources/read",
        "resources/read",
    ]
    assert "mcp-session-id" not in posts[1].headers  # initialize carries none
    for post in posts[2:]:
        assert post.headers["mcp-session-id"] == "session-0"
        assert post.headers["mcp-protocol-version"] == "2025-11-25"
        assert "mcp-method" not in post.headers
        assert "_meta" not in (post.message.get("params") or {})
    [delete] = [s for s in server.seen if s.method == "DELETE"]
    assert delete.headers["mcp-session-id"] == "session-0"
    assert delete.headers["mcp-protocol-version"] == "2025-11-25"
    assert peer.sessions == {}


def test_pinned_eras_send_nothing_of_the_other() -> None:
    """--protocol-era: legacy never probes; modern never initializes."""
    with ScriptedServer(McpPeer()) as server:

        async def main() -> None:
            async with open_http_client(server.url, label="s") as client:
                assert_spec_skill(await load_and_read(client, era=Era.LEGACY))

        run("asyncio", main)
        assert server.methods()[:2] == ["initialize", "notifications/initialized"]
    with ScriptedServer(McpPeer(legacy_only=True)) as server:

        async def modern() -> None:
            async with open_http_client(server.url, label="s") as client:
                await load_and_read(client, era=Era.MODERN)

        with pytest.raises(TransportError) as info:
            run("asyncio", modern)
        assert info.value.kind == "http-status"
        assert server.methods() == ["server/discover"]


def test_era_verdict_is_cached_per_origin() -> None:
    """HTTP-36: a second connection to the same origin skips the probe."""
    cache = EraCache()
    with ScriptedServer(McpPeer(legacy_only=True)) as server:

        async def main() -> None:
            for _ in range(2):
                async with open_http_client(server.url, label="s", era_cache=cache) as client:
                    host = new_host()
                    await handshake(host, "s", client, timeout=5)
                    assert client.era is Era.LEGACY

        run("asyncio", main)
        assert server.methods().count("server/discover") == 1
        assert server.methods().count("initialize") == 2
    assert cache.get(server.url) is Era.LEGACY


def test_unsupported_version_is_retried_once_with_a_supported_one() -> None:
    """HTTP-35."""
    with ScriptedServer(McpPeer(reject_first_version=True)) as server:

        async def main() -> None:
            async with open_http_client(server.url, label="s") as client:
                assert_spec_skill(await load_and_read(client))
                assert client.era is Era.MODERN

        run("asyncio", main)
        assert server.methods()[:3] == ["server/discover", "server/discover", "skills/list"]


def test_a_second_unsupported_version_is_an_error_not_a_loop() -> None:
    """HTTP-35: a loop guard: the retry is done once."""
    error = {
        "code": -32022,
        "message": "no",
        "data": {"supported": ["2026-07-28"], "requested": "x"},
    }

    def handler(seen: Seen) -> Iterator[Action]:
        yield json_response({"jsonrpc": "2.0", "id": seen.message["id"], "error": error}, 400)

    with ScriptedServer(handler) as server:

        async def main() -> None:
            async with open_http_client(server.url, label="s") as client:
                await handshake(new_host(), "s", client, timeout=5)

        with pytest.raises(JsonRpcError) as info:
            run("asyncio", main)
        assert info.value.rpc_code == -32022
        assert server.methods() == ["server/discover", "server/discover"]


def test_a_lost_legacy_session_is_initialized_again() -> None:
    """HTTP-37: 404 to a request carrying the session id -> initialize again, retry once."""
    peer = McpPeer(legacy_only=True, forget_sessions_after=2)
    with ScriptedServer(peer) as server:

        async def main() -> None:
            async with open_http_client(server.url, label="s") as client:
                assert_spec_skill(await load_and_read(client))
                assert client.session is not None
                assert client.session.session_id == "session-1"

        run("asyncio", main)
        methods = server.methods()
        assert methods.count("initialize") == 2
        assert methods[-4:] == [
            "resources/read",
            "initialize",
            "notifications/initialized",
            "resources/read",
        ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_client_is_the_pumps_send(backend: str) -> None:
    """``pump_async(host, effects, {label: client})``: the client answers the pump itself, each
    request bounded by the timeout it was opened with (a request past it is a transport failure
    of kind timeout, and the host is told it failed)."""
    peer = McpPeer()

    def handler(seen: Seen) -> Iterator[Action]:
        uri = (seen.message.get("params") or {}).get("uri", "") if seen.message else ""
        if uri.endswith("invoice.md"):
            yield 30.0  # never answers in time
        yield from peer(seen)

    async def main() -> tuple[list[Pumped], list[Pumped]]:
        host = new_host()
        async with open_http_client(server.url, label="s", timeout=0.5) as client:
            assert client.timeout == 0.5
            await handshake(host, "s", client, timeout=5)
            await sc.pump_async(host, host.list_skills("s"), {"s": client})
            loaded = await sc.pump_async(
                host,
                host.load("s", SKILL),
                {"s": client},
                on_effect=lambda e: (
                    host.approve(e.prompt_id) if isinstance(e, RequestApproval) else None
                ),
            )
            late = await sc.pump_async(
                host, host.read("s", SKILL, "templates/invoice.md"), {"s": client}
            )
            return loaded, late

    with ScriptedServer(handler) as server:
        loaded, late = run(backend, main)
    delivered = [e for e in loaded if isinstance(e, DeliverToModel)]
    assert [d.uri for d in delivered] == [SKILL]
    assert delivered[0].verified
    assert delivered[0].content == ex.FILES["SKILL.md"]
    failures = [e for e in late if isinstance(e, sc.TransportFailure)]
    assert len(failures) == 1, late
    assert failures[0].error.kind == "timeout"
    assert "within 0.5 seconds" in failures[0].error.message


def test_the_default_request_timeout_is_set_at_construction() -> None:
    async def main() -> tuple[float | None, float | None]:
        url = "http://127.0.0.1:9/mcp"  # nothing is sent
        async with (
            open_http_client(url, label="s") as default,
            open_http_client(url, label="s", timeout=None) as none,
        ):
            return default.timeout, none.timeout

    assert run("asyncio", main) == (REQUEST_TIMEOUT, None)
    assert REQUEST_TIMEOUT == 10.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_timed_out_legacy_request_is_cancelled(backend: str) -> None:
    """HTTP-38, HTTP-39: the request is bounded by its timeout; legacy: notifications/cancelled."""
    peer = McpPeer(legacy_only=True)

    def handler(seen: Seen) -> Iterator[Action]:
        if seen.message and seen.message.get("method") == "skills/list":
            yield 30.0  # never answers in time
        yield from peer(seen)

    with ScriptedServer(handler) as server:

        async def main() -> None:
            async with open_http_client(server.url, label="s") as client:
                await handshake(new_host(), "s", client, timeout=5)
                await client.request("skills/list", {}, timeout=0.5)

        with pytest.raises(TransportError) as info:
            run(backend, main)
        assert info.value.kind == "timeout"
        assert "within 0.5 seconds" in info.value.message
        cancelled = [
            p for p in server.posts() if p.message.get("method") == "notifications/cancelled"
        ]
        assert len(cancelled) == 1
        listed = [p for p in server.posts() if p.message.get("method") == "skills/list"]
        assert cancelled[0].message["params"]["requestId"] == listed[0].message["id"]
        assert cancelled[0].headers["mcp-session-id"] == "session-0"


def test_same_origin_307_is_followed_with_the_same_body_and_headers() -> None:
    """HTTP-41: 307/308 within the origin keep the method, the body and Authorization."""
    peer = McpPeer()

    def handler(seen: Seen) -> Iterator[Action]:
        if seen.path == "/mcp":
            yield response(
                307,
                content_type=None,
                headers=[("Location", "/v2/mcp")],
                reason="Temporary Redirect",
            )
        else:
            yield from peer(seen)

    with ScriptedServer(handler) as server:

        async def main() -> None:
            async with open_http_client(
                server.url, label="s", headers=[("Authorization", "x")]
            ) as client:
                assert_spec_skill(await load_and_read(client))

        run("asyncio", main)
        first, second = server.posts()[:2]
        assert (first.path, second.path) == ("/mcp", "/v2/mcp")
        assert first.body == second.body
        assert second.headers["authorization"] == "x"


def test_a_redirect_to_another_origin_reaches_nobody() -> None:
    """HTTP-41: never followed, so the other origin never sees the Authorization header."""
    with ScriptedServer(McpPeer()) as elsewhere:

        def handler(seen: Seen) -> Iterator[Action]:
            yield response(307, content_type=None, headers=[("Location", elsewhere.url)])

        with ScriptedServer(handler) as server:

            async def main() -> None:
                async with open_http_client(
                    server.url, label="s", headers=[("Authorization", "secret")]
                ) as client:
                    await client.request("skills/list", {}, timeout=5)

            with pytest.raises(TransportError) as info:
                run("asyncio", main)
        assert info.value.kind == "redirect"
        assert "another origin" in info.value.message
        assert elsewhere.seen == []


def test_bad_configuration_is_refused_before_anything_is_sent() -> None:
    """HTTP-40: no credentials in the URL; reserved headers cannot be overridden."""

    async def open_with(url: str, headers: list[tuple[str, str]]) -> None:
        async with open_http_client(url, label="s", headers=headers):
            pass

    with pytest.raises(ValueError, match="credentials"):
        run("asyncio", lambda: open_with("http://u:pw@127.0.0.1:1/mcp", []))
    with pytest.raises(LocalProtocolError, match="set by the transport"):
        run("asyncio", lambda: open_with("http://127.0.0.1:1/mcp", [("Mcp-Session-Id", "x")]))
    # URLs that urllib parses but httpx2 cannot send to: refused here, not at the first request
    for url in ("http://256.1.1.1/mcp", "http://[::1]x/mcp", "http://127.0.0.1:1/a\tb"):
        with pytest.raises(ValueError, match=r"control character|not a URL this client can send"):
            run("asyncio", functools.partial(open_with, url, []))


# --- hostile servers -----------------------------------------------------------------------------

BIG = 40 * 1024 * 1024  # over the 32 MiB message cap


def oversized_declared(seen: Seen) -> Iterator[Action]:
    yield response(200, b"{", length=BIG)
    yield 30.0


def oversized_chunked_json(seen: Seen) -> Iterator[Action]:
    yield chunked_head()
    piece = chunk(b"x" * (1 << 20))
    for _ in range(40):
        yield piece


def oversized_sse(seen: Seen) -> Iterator[Action]:
    yield chunked_head(content_type="text/event-stream")
    yield chunk(b"data: ")
    piece = chunk(b"x" * (1 << 20))
    for _ in range(40):
        yield piece


def endless_sse(seen: Seen) -> Iterator[Action]:
    yield chunked_head(content_type="text/event-stream")
    for _ in range(600):
        yield chunk(b": keep-alive\n\n")
        yield 0.05


def slow_body(seen: Seen) -> Iterator[Action]:
    body = json.dumps(RESULT).encode()
    yield response(200, length=len(body))
    for byte in body:
        yield bytes([byte])
        yield 0.2


def wrong_type(seen: Seen) -> Iterator[Action]:
    yield response(200, b"<html>hello</html>", content_type="text/html")


def accepted(seen: Seen) -> Iterator[Action]:
    yield response(202, content_type=None, reason="Accepted")


def reset(seen: Seen) -> Iterator[Action]:
    yield RESET


def reset_mid_body(seen: Seen) -> Iterator[Action]:
    yield response(200, b'{"jsonrpc":"2.0",', length=500)
    yield RESET


def closes(seen: Seen) -> Iterator[Action]:
    yield CLOSE


def error_body(seen: Seen) -> Iterator[Action]:
    error = {"code": -32603, "message": "backend is down"}
    yield json_response({"jsonrpc": "2.0", "id": None, "error": error}, 503)


def unauthorized(seen: Seen) -> Iterator[Action]:
    yield response(401, b"token expired", content_type="text/plain", reason="Unauthorized")


def moved(seen: Seen) -> Iterator[Action]:
    yield response(
        301, content_type=None, headers=[("Location", "/other")], reason="Moved Permanently"
    )


def gzip_body(seen: Seen) -> Iterator[Action]:
    yield response(200, b"\x1f\x8b\x08\x00", headers=[("Content-Encoding", "gzip")])


HOSTILE = [
    (oversized_declared, "protocol", "announced a response of 41943040 bytes"),
    (oversized_chunked_json, "protocol", "larger than 33554432 bytes"),
    (oversized_sse, "protocol", "longer than 33554432 bytes"),
    (endless_sse, "timeout", "did not answer server/discover within 2.0 seconds"),
    (slow_body, "timeout", "did not answer server/discover within 2.0 seconds"),
    (wrong_type, "protocol", "Content-Type 'text/html'"),
    (accepted, "protocol", "HTTP 202 and no response"),
    (reset, "closed", "closed the connection"),
    (reset_mid_body, "closed", "closed the connection"),
    (closes, "closed", "closed the connection"),
    (unauthorized, "http-status", "HTTP 401 Unauthorized: 'token expired'"),
    (moved, "redirect", "301 redirect, which would turn the POST into a GET"),
    (gzip_body, "protocol", "'gzip'-encoded body"),
]


@pytest.mark.parametrize(("handler", "kind", "text"), HOSTILE, ids=[h[0].__name__ for h in HOSTILE])
def test_hostile_server_gives_a_typed_error(
    handler: Callable[[Seen], Iterator[Action]], kind: str, text: str
) -> None:
    """Each hostile answer to the handshake ends in a TransportError of the right kind, in bounded
    time and memory (a 40 MiB body is never buffered: the cap stops it)."""

    async def main() -> None:
        async with open_http_client(server.url, label="evil") as client:
            await handshake(new_host(), "evil", client, timeout=2.0)

    with ScriptedServer(handler) as server, pytest.raises(TransportError) as info:
        run("asyncio", main)
    assert info.value.kind == kind, info.value.message
    assert text in info.value.message
    assert "evil" in info.value.message


def test_an_error_body_on_5xx_is_surfaced_not_taken_for_an_era() -> None:
    """HTTP-34, HTTP-36: a 503 with a JSON-RPC error is that error, and no initialize follows."""

    async def main() -> None:
        async with open_http_client(server.url, label="s") as client:
            await handshake(new_host(), "s", client, timeout=2.0)

    with ScriptedServer(error_body) as server, pytest.raises(JsonRpcError) as info:
        run("asyncio", main)
    assert "HTTP 503 and error -32603: backend is down" in info.value.message
    assert server.methods() == ["server/discover"]


def test_connection_refused() -> None:
    with ScriptedServer(closes) as server:
        url = server.url  # the port is free once the server stops

    async def main() -> None:
        async with open_http_client(url, label="gone") as client:
            await handshake(new_host(), "gone", client, timeout=2.0)

    with pytest.raises(TransportError) as info:
        run("asyncio", main)
    assert info.value.kind == "connect-failed"
    assert "cannot connect to server 'gone'" in info.value.message


# --- through the command line: exit codes as for stdio, secrets never printed ----------------


def host_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skills_core", "host", *args],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=REPO_ROOT,
        timeout=timeout,
        check=False,
    )


def test_cli_loads_and_reads_over_http_in_both_eras(tmp_path: Path) -> None:
    """host --server LABEL=URL: list, load, read; the era negotiated per server."""
    with ScriptedServer(McpPeer()) as modern, ScriptedServer(McpPeer(legacy_only=True)) as legacy:
        servers = ["--server", f"m={modern.url}", "--server", f"l={legacy.url}"]
        listed = host_cli(*servers, "--json", "list")
        assert listed.returncode == 0, listed.stderr
        names = sorted(s["qualified"] for s in json.loads(listed.stdout)["skills"])
        assert names == ["l:pdf-processing", "m:pdf-processing"]
        read = host_cli(*servers, "--yes", "read", "l:pdf-processing", "templates/invoice.md")
        assert read.returncode == 0, read.stderr
        assert ex.FILES["templates/invoice.md"].decode() in read.stdout
        assert "initialize" in legacy.methods()
        assert "initialize" not in modern.methods()


CLI_HOSTILE = [
    (oversized_chunked_json, 2),
    (oversized_sse, 2),
    (endless_sse, 2),
    (slow_body, 2),
    (wrong_type, 2),
    (accepted, 2),
    (reset, 2),
    (unauthorized, 2),
    (moved, 2),
    (error_body, 2),
]


@pytest.mark.parametrize(("handler", "code"), CLI_HOSTILE, ids=[h[0].__name__ for h in CLI_HOSTILE])
def test_cli_exit_codes_for_hostile_servers(
    handler: Callable[[Seen], Iterator[Action]], code: int
) -> None:
    """The README's table: a connection or protocol error is exit 2, as for a stdio server; the
    header value never appears (HTTP-40), nor a traceback."""
    secret = "Bearer s3cr3t-t0k3n"
    with ScriptedServer(handler) as server:
        done = host_cli(
            "--server",
            f"evil={server.url}",
            "--header",
            f"evil=Authorization:{secret}",
            "--timeout",
            "2",
            "list",
        )
        assert server.posts()[0].headers["authorization"] == secret
    assert done.returncode == code, done.stderr
    assert "s3cr3t" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("skills-core: ")


def test_cli_hostile_content_is_a_verification_failure() -> None:
    """A server that serves tampered SKILL.md over HTTP gets exit 3, as over stdio."""
    peer = McpPeer()

    def handler(seen: Seen) -> Iterator[Action]:
        for action in peer(seen):
            if isinstance(action, bytes):  # the same length: only the digest can tell
                yield action.replace(b"# PDF processing", b"# PDF PROCESSING")
            else:
                yield action

    with ScriptedServer(handler) as server:
        done = host_cli("--server", f"s={server.url}", "--yes", "load", "s:pdf-processing")
    assert done.returncode == 3, done.stderr
    assert "verification failed" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--server", "s=http://u:pw@127.0.0.1:1/mcp"], "credentials in the URL are refused"),
        (["--server", "s=http://127.0.0.1:99999/mcp"], "--server s:"),
        (["--server", "s=http://127.0.0.1:1/mcp", "--header", "t=X:y"], "no --server t=URL"),
        (
            ["--server", "s=http://127.0.0.1:1/mcp", "--header", "s=Mcp-Session-Id:pw"],
            "set by the transport",
        ),
        (
            ["--server", "s=http://127.0.0.1:1/mcp", "--header", "s=novalue"],
            "expected LABEL=NAME:VALUE",
        ),
        (["--server", "s=echo hi", "--header", "s=X:pw"], "headers go to HTTP servers"),
        (["--server", "s=http://127.0.0.1:1/a\tpw"], "the URL holds a control character"),
    ],
)
def test_cli_usage_errors(args: list[str], message: str) -> None:
    done = host_cli(*args, "list")
    assert done.returncode == 1, done.stderr
    assert message in done.stderr
    assert "pw" not in done.stderr


def test_without_the_extra_the_error_names_it(tmp_path: Path) -> None:
    """Importing the adapter without httpx2 fails with an ImportError naming the extra."""
    blocker = tmp_path / "httpx2.py"
    blocker.write_text("raise ImportError('no httpx2 here')\n")
    code = "import skills_core.adapters.http_client"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=child_env({"PYTHONPATH": f"{tmp_path}:{REPO_ROOT}"}),
        check=False,
    )
    assert done.returncode == 1
    assert "pip install 'skills-core[http-client]'" in done.stderr
    assert "pip install httpx2 anyio" in done.stderr


@pytest.mark.parametrize("hidden", ["httpx2", "anyio"])
def test_without_httpx2_or_anyio_the_error_names_the_packages_to_install(hidden: str) -> None:
    """A vendored copy has no extra to install: the message names the packages themselves (the
    extra comes second, for an installed skills-core), through the adapter and the command line."""
    hide = f"import sys; sys.modules[{hidden!r}] = None; "
    imported = subprocess.run(
        [sys.executable, "-c", hide + "import skills_core.adapters.http_client"],
        capture_output=True,
        text=True,
        env=child_env(),
        check=False,
    )
    assert imported.returncode == 1
    last = imported.stderr.strip().splitlines()[-1]
    assert last == (
        "ImportError: the HTTP client transport needs httpx2 and anyio: pip install httpx2 anyio "
        "(or, for an installed skills-core, pip install 'skills-core[http-client]')"
    )
    argv = ["host", "--server", "s=http://127.0.0.1:9/mcp", "list"]
    cli = subprocess.run(
        [
            sys.executable,
            "-c",
            hide + f"from skills_core.cli import main; sys.exit(main({argv!r}))",
        ],
        capture_output=True,
        text=True,
        env=child_env(),
        check=False,
    )
    assert cli.returncode == 1, cli.stderr
    assert "pip install httpx2 anyio" in cli.stderr
    assert "Traceback" not in cli.stderr


def test_importing_skills_core_and_its_http_package_needs_no_extra() -> None:
    code = (
        "import sys, skills_core, skills_core.host.driver, skills_core.http as h;"
        "[getattr(h, name) for name in h.__all__];"
        "print(sorted(m for m in ('httpx2', 'anyio', 'httpcore2') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
