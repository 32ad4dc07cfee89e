"""Hostile Streamable HTTP servers against our host: typed errors and bounded output, never a traceback.

Two classes of a server's misbehaviour, each tested through the real client over real sockets:

* **Malformed answers.** Every answer a server controls (status line, headers, ``Location``,
  ``Content-Type``, ``Content-Length``, session ids, chunked framing, event-stream fields, JSON
  bodies, an early close) ends in a :class:`~skills_core.errors.TransportError` of a stated kind,
  with a bounded message naming the server; through ``skills-core host`` that is exit 2. The
  answers come from a raw socket server (``tests/http_peers.py``), which can send what no
  well-behaved HTTP server would.
* **Noise.** What the host skips on response streams (events of other types, requests from the
  server, responses to other ids) is reported a few lines per kind and then counted, as over
  stdio: ``host`` against a flooding server process (``tests/peers/hostile_http_server.py``)
  writes a few hundred bytes on stderr, not one line per skipped event.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Final

import anyio
import pytest
from client_helpers import run as run_cli
from http_peers import (
    CLOSE,
    LAST_CHUNK,
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
from interop_helpers import PEERS, REPO_ROOT, child_env, new_host, pump

from skills_core.adapters.http_client import _transport_errors, open_http_client
from skills_core.client_stream import REPORTS_SHOWN, ReportCounter
from skills_core.errors import TransportError
from skills_core.host.driver import handshake
from skills_core.http.client import NoteKind

HOSTILE_HTTP_SERVER: Final = PEERS / "hostile_http_server.py"
HOST: Final = (sys.executable, "-m", "skills_core", "host")
#: Longest message a hostile answer may produce: a line a person reads, whatever the server sent.
MESSAGE_LIMIT: Final = 400
#: What ``host`` may write on stderr, whatever a server sends (the issue's bound).
STDERR_LIMIT: Final = 100_000

# --- malformed answers, table-driven ------------------------------------------------------------


def raw(data: bytes) -> bytes:
    """A whole answer, as bytes, exactly as sent."""
    return data


def head(status: str, *headers: bytes, body: bytes = b"") -> bytes:
    """An HTTP/1.1 answer with a true Content-Length."""
    lines = b"".join(h + b"\r\n" for h in headers)
    length = b"Content-Length: %d\r\n" % len(body)
    return b"HTTP/1.1 " + status.encode() + b"\r\n" + lines + length + b"\r\n" + body


def redirect(location: bytes) -> bytes:
    return head("307 Temporary Redirect", b"Location: " + location)


def sse(*fields: bytes) -> bytes:
    """An event stream, chunked, then the end of the body (no response in it)."""
    return (
        chunked_head(content_type="text/event-stream")
        + b"".join(chunk(f) for f in fields)
        + LAST_CHUNK
    )


JSON: Final = b"Content-Type: application/json"
DEEP: Final = b"[" * 100_000 + b"\n" + b"]" * 100_000  # a line break: checked before the endpoint

#: (id, what the server sends to every POST, the error's kind, a fragment of its message).
#: Each answer is followed by closing the connection, so nothing waits for a timeout.
CASES: Final[Sequence[tuple[str, bytes, str, str]]] = [
    # Location
    ("location-del", redirect(b"/mcp\x7f"), "redirect", "Location is not a URL"),
    ("location-ipv6", redirect(b"http://[::1:P/mcp"), "redirect", "Location is not a URL"),
    ("location-port", redirect(b"http://127.0.0.1:99999/mcp"), "redirect", "not a URL"),
    ("location-port-text", redirect(b"http://127.0.0.1:PORT\\x/mcp"), "redirect", "not a URL"),
    ("location-long", redirect(b"/" + b"a" * 70_000), "redirect", "Location is not a URL"),
    (
        "location-credentials",
        redirect(b"http://evil\\@127.0.0.1:PORT/mcp"),
        "redirect",
        "with credentials in it",
    ),
    ("location-port-0", redirect(b"http://127.0.0.1:0/mcp"), "redirect", "('http://127.0.0.1:0')"),
    ("location-other-scheme", redirect(b"javascript:alert(1)"), "redirect", "not http(s)"),
    # status lines and headers
    ("status-garbage", raw(b"\x00\x01garbage\r\n\r\n"), "protocol", "broke HTTP"),
    ("status-not-a-number", raw(b"HTTP/1.1 2x0 OK\r\n\r\n"), "protocol", "broke HTTP"),
    ("status-http2", raw(b"HTTP/2 200 OK\r\n\r\n"), "protocol", "broke HTTP"),
    (
        "status-101",
        raw(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n"),
        "protocol",
        "broke HTTP",
    ),
    ("status-999", head("999 Whatever", JSON, body=b"{}"), "http-status", "HTTP 999 Whatever"),
    ("reason-long", head("400 " + "R" * 90_000), "http-status", "HTTP 400 RRR"),
    ("header-no-colon", raw(b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"), "protocol", "broke HTTP"),
    ("header-nul", head("200 OK", JSON, b"X-A: \x00", body=b"{}"), "protocol", "broke HTTP"),
    ("head-too-large", head("200 OK", b"X-A: " + b"a" * 200_000), "protocol", "broke HTTP"),
    (
        "content-type-params",
        head("200 OK", b'Content-Type: application/json; charset="\x7f', body=b"{}"),
        "protocol",
        "broke JSON-RPC",
    ),
    (
        "content-type-other",
        head("200 OK", b"Content-Type: " + b"x" * 90_000, body=b"{}"),
        "protocol",
        "Content-Type 'xxx",
    ),
    (
        "content-encoding",
        head("200 OK", JSON, b"Content-Encoding: " + b"\xff" * 90_000, body=b"{}"),
        "protocol",
        "-encoded body",
    ),
    (
        "set-cookie-garbage",
        head(
            "200 OK",
            b"Set-Cookie: a=b; max-age=" + b"9" * 5000 + b"; expires=never; domain=..",
            b"Set-Cookie: ;;;=",
            JSON,
            body=b"{}",
        ),
        "protocol",
        "broke JSON-RPC",
    ),
    # Content-Length
    (
        "content-length-digits",
        raw(b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n{}"),
        "protocol",
        "bad Content-Length",
    ),
    (
        "content-length-conflict",
        raw(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"),
        "protocol",
        "conflicting Content-Length",
    ),
    (
        "content-length-negative",
        raw(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}"),
        "protocol",
        "bad Content-Length",
    ),
    (
        "content-length-over-cap",
        raw(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1"
            + b"0" * 12
            + b"\r\n\r\n{"
        ),
        "protocol",
        "announced a response of 1000000000000 bytes",
    ),
    (
        "content-length-short",
        head("200 OK", JSON, body=b"{")[:-1],
        "closed",
        "closed the connection",
    ),
    # chunked framing
    (
        "chunk-size",
        chunked_head() + b"zz\r\n{}\r\n" + LAST_CHUNK,
        "protocol",
        "illegal chunk header",
    ),
    (
        "chunk-size-huge",
        chunked_head() + b"f" * 5000 + b"\r\n{}\r\n" + LAST_CHUNK,
        "protocol",
        "illegal chunk header",
    ),
    (
        "chunk-trailer",
        chunked_head() + chunk(b"{}") + b"0\r\nno colon\r\n\r\n",
        "protocol",
        "broke HTTP",
    ),
    ("chunk-cut", chunked_head() + b"10\r\n{}", "closed", "closed the connection"),
    (
        "transfer-encoding",
        raw(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n"
        ),
        "protocol",
        "Transfer-Encoding",
    ),
    # event streams
    ("sse-retry-digits", sse(b"retry: " + b"1" * 5000 + b"\n\n"), "closed", "before sending its"),
    ("sse-retry-64-bits", sse(b"retry: 18446744073709551616\n\n"), "closed", "before sending its"),
    (
        "sse-deep-json",
        sse(b"data: " + b"[" * 100_000 + b"\ndata: " + b"]" * 100_000 + b"\n\n"),
        "protocol",
        "nested too deeply",
    ),
    ("sse-event-not-utf8", sse(b"event: \xff\ndata: {}\n\n"), "protocol", "not UTF-8"),
    ("sse-id-not-utf8", sse(b"id: \xfe\ndata: {}\n\n"), "protocol", "not UTF-8"),
    # JSON bodies
    ("json-deep", head("200 OK", JSON, body=DEEP), "protocol", "nested too deeply"),
    (
        "json-deep-error",
        head("400 Bad Request", JSON, body=b"[" * 30_000 + b"\n" + b"]" * 30_000),
        "http-status",
        "HTTP 400",
    ),
    (
        "json-big-integer",
        head("200 OK", JSON, body=b"[\n" + b"1" * 5000 + b"]"),
        "protocol",
        "not JSON",
    ),
    ("json-not-utf8", head("200 OK", JSON, body=b'{"a": "\xff"}'), "protocol", "not valid UTF-8"),
    (
        "json-close-delimited",
        raw(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"),
        "protocol",
        "not valid JSON",
    ),
    # early close
    ("close-before-answer", b"", "closed", "closed the connection"),
    ("close-in-head", raw(b"HTTP/1.1 200 OK\r\nContent-Ty"), "closed", "closed the connection"),
]


def answer_with(data: bytes) -> Callable[[Seen], Iterator[Action]]:
    """A handler that answers every request with ``data``, then closes the connection."""

    def handler(seen: Seen) -> Iterator[Action]:
        if data:
            yield data
        yield CLOSE

    return handler


def hostile_server(data: bytes) -> ScriptedServer:
    """A socket server answering every request with ``data`` (its ``PORT`` made the real one)."""
    server = ScriptedServer(answer_with(b""))
    server.handler = answer_with(data.replace(b"PORT", str(server.port).encode()))
    return server


@pytest.mark.parametrize(
    ("data", "kind", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_malformed_answer_is_a_typed_transport_error(data: bytes, kind: str, text: str) -> None:
    """The real client, a real socket: each answer ends in a TransportError of its kind, with a
    bounded message naming the server (never a ValueError, InvalidURL or RecursionError)."""

    async def main() -> None:
        async with open_http_client(server.url, label="evil") as client:
            await handshake(new_host(), "evil", client, timeout=20)

    with hostile_server(data) as server, pytest.raises(TransportError) as info:
        anyio.run(main)
    error = info.value
    assert (error.kind, text in error.message) == (kind, True), error.message
    assert "'evil'" in error.message
    assert len(error.message) < MESSAGE_LIMIT, error.message


#: The cases of the issue, and one of each family, through the command line.
CLI_CASES: Final = [
    "location-del",
    "location-ipv6",
    "location-credentials",
    "location-long",
    "status-garbage",
    "reason-long",
    "content-encoding",
    "chunk-size",
    "sse-retry-digits",
    "sse-deep-json",
    "json-deep",
    "json-deep-error",
    "close-before-answer",
]


@pytest.mark.parametrize("case", CLI_CASES)
def test_host_exits_2_on_a_malformed_answer(case: str, capfd: pytest.CaptureFixture[str]) -> None:
    """Through ``skills-core host``: exit 2 with a clear message, not 70 ("internal error")."""
    [data] = [c[1] for c in CASES if c[0] == case]
    with hostile_server(data) as server:
        code, out, err = run_cli(
            ["host", "--server", f"evil={server.url}", "--timeout", "20", "list"], capfd
        )
    assert code == 2, err
    assert "internal error" not in err
    assert err.startswith("skills-core: server 'evil' ")
    assert len(err) < 2 * MESSAGE_LIMIT, err
    assert out == ""


def test_a_legacy_session_id_that_is_not_one_is_a_protocol_error() -> None:
    """Session ids (HTTP-23): one with a space is refused, not echoed on every request."""
    peer = McpPeer(legacy_only=True)

    def handler(seen: Seen) -> Iterator[Action]:
        for action in peer(seen):
            if isinstance(action, bytes):
                yield action.replace(b"Mcp-Session-Id: session-0", b"Mcp-Session-Id: a b")
            else:
                yield action

    async def main() -> None:
        async with open_http_client(server.url, label="evil") as client:
            await handshake(new_host(), "evil", client, timeout=20)

    with ScriptedServer(handler) as server, pytest.raises(TransportError) as info:
        anyio.run(main)
    assert info.value.kind == "protocol"
    assert "session id that is not 1 to 1024 visible ASCII characters ('a b')" in info.value.message


def test_a_reset_while_closing_a_legacy_session_is_not_an_error() -> None:
    """The DELETE that ends a session is a courtesy: whatever answers it, closing succeeds."""
    peer = McpPeer(legacy_only=True)

    def handler(seen: Seen) -> Iterator[Action]:
        if seen.method == "DELETE":
            yield b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n"
            yield RESET
            return
        yield from peer(seen)

    async def main() -> None:
        async with open_http_client(server.url, label="s") as client:
            await handshake(new_host(), "s", client, timeout=20)

    with ScriptedServer(handler) as server:
        anyio.run(main)
        assert [s.method for s in server.seen][-1] == "DELETE"


LONG: Final = "no: " + "x" * 1_000_000


def long_error_at(*methods: str) -> Callable[[Seen], Iterator[Action]]:
    """McpPeer (both eras), but ``methods`` are answered with a million-character error."""
    peer = McpPeer()

    def handler(seen: Seen) -> Iterator[Action]:
        message = seen.message or {}
        if message.get("method") in methods:
            error = {"code": -32603, "message": LONG, "data": LONG}
            yield json_response({"jsonrpc": "2.0", "id": message["id"], "error": error})
        else:
            yield from peer(seen)

    return handler


def long_version(seen: Seen) -> Iterator[Action]:
    """A legacy server whose initialize names a million-character protocol version."""
    message = seen.message or {}
    if message.get("method") == "initialize":
        result = {"protocolVersion": LONG, "capabilities": {}, "serverInfo": {"name": "x"}}
        yield json_response({"jsonrpc": "2.0", "id": message["id"], "result": result})
    else:
        yield response(404, b"no", content_type="text/plain")


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (
            long_error_at("server/discover", "initialize"),
            "answered initialize with error -32603: no: xxx",
        ),
        (long_error_at("skills/list"), "answered skills/list with error -32603: no: xxx"),
        (long_version, "answered initialize with protocol version 'no: xxx"),
    ],
    ids=["handshake", "skills-list", "legacy-version"],
)
def test_a_server_s_long_text_is_cut_and_said_once(
    handler: Callable[[Seen], Iterator[Action]], expected: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """A million characters of error message (or protocol version) cost `host` one short line;
    the server's prefix is not repeated (the error's rpc_message is the server's text alone)."""
    with ScriptedServer(handler) as server:
        code, _, err = run_cli(
            ["host", "--server", f"evil={server.url}", "--timeout", "20", "list"], capfd
        )
    assert code == 2, err
    assert expected in err
    assert err.count("answered") == 1, err
    assert len(err) < 1000, f"{len(err):,} characters of stderr"


@pytest.mark.parametrize(
    "exc",
    [ValueError("x" * 10_000), RecursionError("deep"), UnicodeDecodeError("utf-8", b"", 0, 1, "r")],
    ids=["ValueError", "RecursionError", "UnicodeDecodeError"],
)
def test_what_a_parser_under_httpx2_may_still_raise_is_the_server_s_fault(exc: Exception) -> None:
    """The net under the checks: an exception none of the cases above reaches (h11 and urllib
    are checked first), mapped all the same, its text cut."""
    with pytest.raises(TransportError) as info, _transport_errors("s", "skills/list"):
        raise exc
    assert info.value.kind == "protocol"
    assert info.value.message.startswith("server 's' broke HTTP answering skills/list (")
    assert len(info.value.message) < MESSAGE_LIMIT


# --- noise: what is skipped is counted, not repeated --------------------------------------------


def test_a_report_counter_shows_the_first_few_of_each_kind_then_counts() -> None:
    counter = ReportCounter(label="s")
    shown = [counter.report(kind, f"{kind} {i}") for i in range(10) for kind in ("a", "b")]
    assert [r.message for r in shown if r is not None] == [
        "a 0",
        "b 0",
        "a 1",
        "b 1",
        "a 2; more like this are counted, not reported",
        "b 2; more like this are counted, not reported",
    ]
    assert [r.message for r in counter.summaries()] == [
        f"server 's' sent 10 a in all; the first {REPORTS_SHOWN} were reported",
        f"server 's' sent 10 b in all; the first {REPORTS_SHOWN} were reported",
    ]


def flood_stream(count: int) -> Callable[[Seen], Iterator[Action]]:
    """Every request gets ``count`` of each skipped thing, then its answer (an event stream)."""
    peer = McpPeer()

    def handler(seen: Seen) -> Iterator[Action]:
        for action in peer(seen):
            if not (isinstance(action, bytes) and action.startswith(b"HTTP/1.1 200")):
                yield action
                continue
            answer = action.partition(b"\r\n\r\n")[2]
            events = b"".join(
                b"event: kind-%d\ndata: {}\n\n" % i
                + b'data: {"jsonrpc":"2.0","id":"x%d","method":"ping"}\n\n' % i
                + b'data: {"jsonrpc":"2.0","id":%d,"result":{}}\n\n' % (10_000 + i)
                for i in range(count)
            )
            yield chunked_head(content_type="text/event-stream") + chunk(events)
            yield chunk(b"data: " + answer + b"\n\n") + LAST_CHUNK

    return handler


def test_the_client_reports_the_first_few_skipped_of_each_kind_then_a_count() -> None:
    """Over HTTP as over stdio: REPORTS_SHOWN lines per kind, then one count per kind at close."""
    reports: list[str] = []

    async def main() -> None:
        async with open_http_client(server.url, label="s", on_report=reports.append) as client:
            host, connections = new_host(), {"s": client}
            await pump(
                host, await handshake(host, "s", client, timeout=20), connections, timeout=20
            )
            await pump(host, host.list_skills("s"), connections, timeout=20)

    with ScriptedServer(flood_stream(500)) as server:
        anyio.run(main)
    for kind in NoteKind:
        assert f"server 's' sent 1,000 {kind.value} in all; the first 3 were reported" in reports
    assert len(reports) == 4 * len(NoteKind)
    assert sum("more like this are counted" in r for r in reports) == len(NoteKind)


def test_a_flooding_server_process_costs_the_host_a_few_lines_of_stderr() -> None:
    """The issue's case: a server process whose every answer carries 10,000 each of skipped
    events, server requests and responses to other ids (one type and one id a megabyte long),
    against ``skills-core host`` loading and reading a skill: a few hundred bytes of stderr, and
    the skill is read."""
    server = subprocess.Popen(
        [sys.executable, str(HOSTILE_HTTP_SERVER), "flood", "10000"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        done = subprocess.run(
            [
                *HOST,
                "--server",
                f"s={url}",
                "--yes",
                "read",
                "s:pdf-processing",
                "templates/invoice.md",
            ],
            capture_output=True,
            env=child_env(),
            cwd=REPO_ROOT,
            timeout=300,
            check=False,
        )
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(30)
        assert server.stdout is not None
        server.stdout.close()
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr[:2000]
    assert b"Customer" in done.stdout  # the template was read through the noise
    assert len(done.stderr) < STDERR_LIMIT, f"{len(done.stderr):,} bytes of stderr"
    lines = stderr.splitlines()
    assert len(lines) <= len(NoteKind) * (REPORTS_SHOWN + 1), stderr
    for kind in NoteKind:
        [summary] = [line for line in lines if kind.value in line]
        assert summary.startswith("skills-core: server 's' sent 40,")
    assert all(len(line) < 200 for line in lines), stderr


@pytest.mark.parametrize("url", ["http://256.1.1.1/mcp", "http://[::1]:99999/mcp"])
def test_a_url_the_http_library_cannot_send_to_is_a_usage_error(url: str) -> None:
    """urllib parses it, httpx2 cannot send to it: exit 1 naming the server, not 70."""
    done = subprocess.run(
        [*HOST, "--server", f"s={url}", "list"],
        capture_output=True,
        env=child_env(),
        cwd=REPO_ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.decode().startswith("skills-core: --server s: "), done.stderr
    assert b"Traceback" not in done.stderr
