"""The ladder's remembered verdicts, and reads over HTTP through files held open.

``HttpChecks`` remembers what each rung concluded from a header's bytes (Host, Origin,
Content-Type, Accept, the routing headers' text): an app that has seen many requests must answer
any request exactly as a fresh app does (HTTP-01..HTTP-14 and the legacy rows keep their verdicts).
Over HTTP every request looks at the file it reads: an edit between two requests shows at once.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from asgi_harness import META, MODERN, Response, base_headers, call, modern_request
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_core import spec_examples as ex
from skills_core.adapters.asgi import HttpOptions, SkillsApp
from skills_core.http import server as http_server
from skills_core.http.server import Head, HttpChecks, Reply
from skills_core.http.session import SessionCodec
from skills_core.server import server_from_roots
from skills_core.server.handler import SkillsServer

SESSION_KEY = b"s" * 32
FILES = {f"pdf-processing/{path}": data for path, data in ex.FILES.items()}
INVOICE = "skill://pdf-processing/templates/invoice.md"
OPTIONS = HttpOptions(allowed_origins=("http://localhost:*", "https://ok.example"), cors=True)


def make_app() -> SkillsApp:
    server = SkillsServer.from_files(FILES, cursor_key=b"c" * 32)
    return SkillsApp(server, session_key=SESSION_KEY, options=OPTIONS)


def same(a: Response, b: Response) -> bool:
    return (a.status, a.headers, a.body) == (b.status, b.headers, b.body)


_VALUES: dict[str, list[str]] = {
    "host": ["127.0.0.1:8000", "localhost", "LOCALHOST:1", "evil.example", "[::1]:9", "", "x:y:z"],
    "origin": [
        "http://localhost:3000",
        "https://ok.example",
        "null",
        "http://evil",
        "HTTPS://OK.EXAMPLE",
    ],
    "content-type": ["application/json", "Application/JSON; charset=utf-8", "text/plain", ""],
    "accept": [
        "application/json, text/event-stream",
        "*/*",
        "application/json",
        "text/*, application/*",
    ],
    "mcp-protocol-version": [
        MODERN,
        "2025-11-25",
        "=?base64?MjAyNi0wNy0yOA==?=",
        " 2026-07-28 ",
        "v9",
    ],
    "mcp-method": ["resources/read", "skills/list", "=?base64?cmVzb3VyY2VzL3JlYWQ=?=", "bad\x7f"],
    "mcp-name": [INVOICE, "skill://other", "=?base64?not base64?="],
}
_HEADERS = st.lists(
    st.sampled_from(sorted(_VALUES)).flatmap(
        lambda name: st.tuples(st.just(name), st.sampled_from(_VALUES[name]))
    ),
    max_size=9,
)
_BODIES = st.sampled_from(
    [
        modern_request("resources/read", {"uri": INVOICE})[1],
        modern_request("skills/list")[1],
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        b"not json",
    ]
)


@settings(max_examples=300)
@given(
    warm_up=st.lists(st.tuples(_HEADERS, _BODIES, st.sampled_from(["POST", "GET", "OPTIONS"]))),
    headers=_HEADERS,
    body=_BODIES,
    method=st.sampled_from(["POST", "GET", "OPTIONS", "DELETE"]),
)
def test_remembered_verdicts_answer_as_a_fresh_app_does(
    warm_up: list[tuple[list[tuple[str, str]], bytes, str]],
    headers: list[tuple[str, str]],
    body: bytes,
    method: str,
) -> None:
    """HTTP-01..HTTP-14: whatever an app has seen before, its answer is a fresh app's."""
    warm = make_app()
    for seen_headers, seen_body, seen_method in warm_up:
        call(warm, seen_method, "/mcp", seen_headers, [seen_body])
    fresh = make_app()
    args: tuple[Any, ...] = (method, "/mcp", headers, [body])
    assert same(call(warm, *args), call(fresh, *args))
    assert same(call(warm, *args), call(fresh, *args))  # and again, now remembered by both


def test_the_tables_are_bounded_and_start_over() -> None:
    app = SkillsApp(
        SkillsServer.from_files(FILES, cursor_key=b"c" * 32),
        session_key=SESSION_KEY,
        options=HttpOptions(allowed_hosts=("localhost",)),
    )
    headers, body = modern_request("skills/list")
    for port in range(http_server.MEMO_LIMIT + 10):
        varied = [(k, f"localhost:{port}" if k == "host" else v) for k, v in headers]
        assert call(app, "POST", "/mcp", varied, [body]).status == 200
    assert 0 < len(app._checks._hosts) <= http_server.MEMO_LIMIT
    evil = [(k, "evil.example" if k == "host" else v) for k, v in headers]
    assert call(app, "POST", "/mcp", evil, [body]).status == 421


def test_the_checks_are_usable_without_an_event_loop() -> None:
    """The ladder is sans-IO: a scope and a body in, a reply or a call out."""
    checks = HttpChecks(HttpOptions(), SessionCodec(SESSION_KEY), lambda: 0)
    headers, body = modern_request("resources/read", {"uri": INVOICE})
    scope: dict[str, Any] = {
        "path": "/mcp",
        "method": "POST",
        "headers": [(k.encode(), v.encode()) for k, v in headers],
    }
    head = checks.head(scope)
    assert isinstance(head, Head)
    verdict = checks.body(head, body, scope)
    assert not isinstance(verdict, Reply)
    assert (verdict.method, verdict.params) == ("resources/read", {"uri": INVOICE, "_meta": META})
    refused = checks.head({**scope, "path": "/elsewhere"})
    assert isinstance(refused, Reply)
    assert refused.status == 404


# --- reads over HTTP look at the file every time ---------------------------------------------------


def test_an_edit_between_two_http_reads_shows_at_once(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for path, data in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    server = server_from_roots([root], cursor_key=b"c" * 32)
    app = SkillsApp(server, session_key=SESSION_KEY)
    headers, body = modern_request("resources/read", {"uri": INVOICE})

    def text() -> str:
        response = call(app, "POST", "/mcp", headers, [body])
        value: str = response.json()["result"]["contents"][0]["text"]
        return value

    assert text() == ex.INVOICE.decode()
    assert text() == ex.INVOICE.decode()  # held open now
    with open(root / "pdf-processing/templates/invoice.md", "r+b") as file:
        file.write(b"EDITED")
    assert text().startswith("EDITED")
    os.rename(root / "pdf-processing/templates", root / "pdf-processing/moved")
    response = call(app, "POST", "/mcp", headers, [body])
    assert response.json()["error"]["code"] == -32602


def test_concurrent_requests_are_each_answered(tmp_path: Path) -> None:
    server = SkillsServer.from_files(FILES, cursor_key=b"c" * 32)
    app = SkillsApp(server, session_key=SESSION_KEY)
    from asgi_harness import acall

    async def run() -> list[int]:
        requests = [
            modern_request("resources/read", {"uri": INVOICE}, request_id=i) for i in range(20)
        ]
        answers = await asyncio.gather(
            *(acall(app, "POST", "/mcp", headers, [body]) for headers, body in requests)
        )
        return [a.json()["id"] for a in answers if a is not None]

    assert asyncio.run(run()) == list(range(20))
    assert base_headers()  # the harness's headers are what the app accepts


# --- large files: read and encoded in a worker thread ---------------------------------------------


def _big_app() -> tuple[SkillsApp, bytes]:
    big = b"".join(b"line %06d of a large file\n" % i for i in range(20_000))  # ~540 KB
    assert len(big) > 256 << 10  # over DEFAULT_DEFER_READS_OVER
    server = SkillsServer.from_files({**FILES, "pdf-processing/big.md": big}, cursor_key=b"c" * 32)
    return SkillsApp(server, session_key=SESSION_KEY), big


def test_a_large_read_is_answered_from_a_worker_thread_under_asyncio() -> None:
    app, big = _big_app()
    headers, body = modern_request("resources/read", {"uri": "skill://pdf-processing/big.md"})
    response = call(app, "POST", "/mcp", headers, [body])
    assert response.status == 200
    assert response.json()["result"]["contents"][0]["text"].encode() == big


def test_a_large_read_is_answered_from_a_worker_thread_under_trio() -> None:
    import trio
    from asgi_harness import scope as make_scope

    app, big = _big_app()
    headers, body = modern_request("resources/read", {"uri": "skill://pdf-processing/big.md"})
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    async def exchange() -> None:
        await app(make_scope("POST", "/mcp", headers), receive, send)

    trio.run(exchange)
    assert sent[0]["status"] == 200
    answer = b"".join(message["body"] for message in sent[1:])  # in pieces: it is over 64 KiB
    text = __import__("json").loads(answer)["result"]["contents"][0]["text"]
    assert text.encode() == big


def test_headers_given_as_any_iterable_are_read() -> None:
    """ASGI allows any iterable of pairs for ``headers``."""
    checks = HttpChecks(HttpOptions(), SessionCodec(SESSION_KEY), lambda: 0)
    headers, _ = modern_request("skills/list")
    pairs = [(k.encode(), v.encode()) for k, v in headers]
    head = checks.head({"path": "/mcp", "method": "POST", "headers": iter(pairs)})
    assert isinstance(head, Head)
    assert head.values[b"mcp-method"] == b"skills/list"


def test_lifespan_ignores_messages_it_does_not_know() -> None:
    app = make_app()
    incoming = [
        {"type": "lifespan.startup"},
        {"type": "lifespan.other"},
        {"type": "lifespan.shutdown"},
    ]
    sent: list[str] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0)

    async def send(message: Any) -> None:
        sent.append(message["type"])

    asyncio.run(app({"type": "lifespan"}, receive, send))
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


def test_a_sweep_left_from_another_event_loop_cancels_nothing() -> None:
    """The deadlines belong to the loop that last read a body; a sweep scheduled by an earlier
    loop (an app moved between loops) must not cancel the tasks of the current one."""
    app = make_app()
    deadlines = app._deadlines

    async def register() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        deadlines._loop = loop
        deadlines._waiting[task] = 0.0  # long past its deadline
        other = asyncio.new_event_loop()
        try:
            deadlines._sweep(other)
        finally:
            other.close()
        assert not task.cancelling()
        del deadlines._waiting[task]

    asyncio.run(register())
