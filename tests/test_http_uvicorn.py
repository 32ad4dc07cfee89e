"""Hostile HTTP through a real uvicorn: the app as ``uvicorn --factory ...asgi:app_from_env`` runs it.

This is the documented way to run the app under an ASGI server of your own choosing (the same
environment variables as ``serve --http`` hands its workers), with a 10,000-byte body cap and a
one-second body deadline so that the limits can be hit quickly. Raw sockets send what
``http.client`` will not: chunked bodies, bodies that stop, connections that drop.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from http_helpers import (
    JSON_HEADERS,
    MODERN_META,
    exchange,
    free_port,
    modern_headers,
    rpc,
    stop,
    wait_until_answering,
)
from interop_helpers import child_env, write_spec_skill

CAP: Final = 10_000
DISCOVER: Final = rpc("server/discover", {"_meta": MODERN_META}, 5)


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    root = tmp_path_factory.mktemp("uvicorn")
    write_spec_skill(root)
    chosen = free_port()
    env = child_env(
        {
            "SKILLS_CORE_ROOTS": str(root),
            "SKILLS_CORE_CURSOR_KEY": "k" * 64,
            "SKILLS_CORE_MAX_BODY_BYTES": str(CAP),
            "SKILLS_CORE_BODY_TIMEOUT": "1",
        }
    )
    argv = [sys.executable, "-m", "uvicorn", "--factory", "skills_core.adapters.asgi:app_from_env"]
    process = subprocess.Popen(
        [*argv, "--port", str(chosen), "--log-level", "warning", "--no-access-log"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until_answering(chosen)
        yield chosen
    finally:
        stop(process)


def raw(port: int, data: bytes, *, then_wait: float = 0.0, read: bool = True) -> bytes:
    """Send ``data`` on a fresh connection; return everything read until the server closes or 5 s."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        if then_wait:
            time.sleep(then_wait)
        if not read:
            return b""
        received = b""
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            while chunk := sock.recv(65536):
                received += chunk
                if b"\r\n\r\n" in received and _complete(received):
                    break
        return received


def _complete(response: bytes) -> bool:
    head, _, body = response.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def request_head(
    headers: dict[str, str], *, length: int | None = None, chunked: bool = False
) -> bytes:
    lines = ["POST /mcp HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


HEADERS: Final = modern_headers("server/discover")


def test_a_good_request(port: int) -> None:
    answer = exchange(port, "POST", "/mcp", HEADERS, DISCOVER)
    assert answer.status == 200
    assert answer.json()["result"]["supportedVersions"] == ["2026-07-28"]


def test_declared_oversized_body_is_413_before_it_is_sent(port: int) -> None:
    """HTTP-05: refused on the declared length; the 100 MB never have to arrive."""
    response = raw(port, request_head(HEADERS, length=100_000_000))
    assert status_of(response) == 413


def test_chunked_oversized_body_is_413(port: int) -> None:
    chunk = b"x" * 4000
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(4)) + b"0\r\n\r\n"
    response = raw(port, request_head(HEADERS, chunked=True) + body)
    assert status_of(response) == 413


def test_chunked_body_within_the_cap_is_served(port: int) -> None:
    body = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (DISCOVER[:9], DISCOVER[9:]))
    response = raw(port, request_head(HEADERS, chunked=True) + body + b"0\r\n\r\n")
    assert status_of(response) == 200
    assert b'"supportedVersions"' in response


def test_slow_body_is_cut_off(port: int) -> None:
    """A body that stops arriving gets 408 after the deadline (1 s here), not a hung worker."""
    started = time.monotonic()
    response = raw(port, request_head(HEADERS, length=len(DISCOVER)) + DISCOVER[:10])
    assert status_of(response) == 408
    assert time.monotonic() - started < 4.5


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"Content-Type": "text/plain"}, 415, None),
        ({"Accept": "text/html"}, 406, None),
        ({"Mcp-Method": "skills/list"}, 400, -32020),
        ({"MCP-Protocol-Version": "2025-99-99"}, 400, -32020),
        ({"Host": "evil.example.com"}, 421, None),
        ({"Origin": "http://evil.example.com"}, 403, None),
    ],
)
def test_refusals(port: int, change: dict[str, str], status: int, code: int | None) -> None:
    headers = {**HEADERS, **change}
    answer = exchange(port, "POST", "/mcp", headers, DISCOVER)
    assert answer.status == status
    if code is not None:
        assert answer.json()["error"]["code"] == code
        assert answer.json()["id"] == 5


def test_repeated_routing_header_is_refused(port: int) -> None:
    head = request_head(HEADERS, length=len(DISCOVER)).replace(
        b"\r\n\r\n", b"\r\nMcp-Method: server/discover\r\n\r\n"
    )
    response = raw(port, head + DISCOVER)
    assert status_of(response) == 400
    assert b"-32020" in response


def test_unknown_session_is_404(port: int) -> None:
    headers = {**JSON_HEADERS, "Mcp-Session-Id": "AAAA", "MCP-Protocol-Version": "2025-11-25"}
    assert exchange(port, "POST", "/mcp", headers, rpc("ping")).status == 404


def test_cors_preflight_gets_no_cors(port: int) -> None:
    headers = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}
    answer = exchange(port, "OPTIONS", "/mcp", headers)
    assert answer.status == 405
    assert answer.headers.get("access-control-allow-origin") is None


def test_client_that_drops_mid_request_leaves_the_server_serving(port: int) -> None:
    """HTTP-19: the dropped request is abandoned; the next one is answered as usual."""
    for _ in range(5):
        raw(port, request_head(HEADERS, length=len(DISCOVER)) + DISCOVER[:10], read=False)
    answer = exchange(port, "POST", "/mcp", HEADERS, DISCOVER)
    assert answer.status == 200
    assert json.loads(answer.body)["id"] == 5


def test_the_factory_fails_clearly_without_configuration(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from skills_core.adapters.asgi import app_from_env; app_from_env()",
        ],
        env={k: v for k, v in child_env().items() if not k.startswith("SKILLS_CORE_")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "SKILLS_CORE_ROOTS" in result.stderr
