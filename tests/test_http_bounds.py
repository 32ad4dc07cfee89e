"""What hostile clients can hold of a real HTTP server: memory, turns, descriptors.

Each test starts a real server process and talks to it over real sockets:

* ``serve``: ``skills-core serve --http`` (uvicorn with httptools and uvloop, the protocol of
  ``skills_core.adapters.uvicorn_http``), its bounds given as command-line options;
* ``uvicorn-h11``: ``uvicorn --factory skills_core.adapters.asgi:app_from_env --http
  skills_core.adapters.uvicorn_http:BoundedH11Protocol``, the bounds as ``SKILLS_CORE_*``
  environment variables (uvicorn without httptools, as the plain ``http`` extra installs it);
* ``hypercorn``: ``hypercorn 'skills_core.adapters.asgi:app_from_env()'``, the app's bounds as
  environment variables and hypercorn's own ``--keep-alive`` for heads and idle connections.

Clients that never read ask for a 16 MiB file and the server's peak resident set (VmHWM of the
worker process, from ``/proc``) must stay at a few answers; clients that send nothing, half a
request line or half the headers fill a worker's descriptors (a limit of 64) and a new client must
still be answered soon after the head deadline.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from http_helpers import MODERN_META, free_port, modern_headers, rpc, stop, wait_until_answering
from interop_helpers import child_env

#: The large file: as large as a skill may be (16 MiB with its SKILL.md), bytes that are not
#: UTF-8, so that its answer is base64 (22.4 MB).
BIG_SIZE: Final = (16 << 20) - 4096
BIG_URI: Final = "skill://big/big.bin"
KEY: Final = "k" * 64


@pytest.fixture(scope="module")
def big_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    folder = root / "big"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: big\ndescription: One large file.\n---\nRead it.\n"
    )
    (folder / "big.bin").write_bytes(b"\xff" * BIG_SIZE)
    return root


@dataclass(frozen=True)
class Server:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def worker(self) -> int:
        """The pid serving requests: the process itself, or its one worker (hypercorn)."""
        pid = self.process.pid
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                return int(child)  # not multiprocessing's resource tracker
        return pid

    def peak_rss(self) -> int:
        """VmHWM of the worker, in bytes."""
        for line in Path(f"/proc/{self.worker}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM in /proc")

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.worker}/fd"))


_ENV_NAMES: Final = {
    "head_timeout": "HEAD_TIMEOUT",
    "idle_timeout": "IDLE_TIMEOUT",
    "send_timeout": "SEND_TIMEOUT",
    "max_large_answers": "MAX_LARGE_ANSWERS",
    "large_answer_queue": "LARGE_ANSWER_QUEUE",
}


def _argv(kind: str, root: Path, port: int, bounds: Mapping[str, float]) -> list[str]:
    py = sys.executable
    if kind == "serve":
        options = [f"--{name.replace('_', '-')}={value}" for name, value in bounds.items()]
        return [
            py,
            "-m",
            "skills_core",
            "serve",
            "--http",
            f"127.0.0.1:{port}",
            *options,
            str(root),
        ]
    if kind == "uvicorn-h11":
        protocol = "skills_core.adapters.uvicorn_http:BoundedH11Protocol"
        return [
            *(py, "-m", "uvicorn", "--factory", "skills_core.adapters.asgi:app_from_env"),
            *("--http", protocol, "--port", str(port), "--log-level", "warning"),
        ]
    assert kind == "hypercorn"
    keep_alive = bounds.get("head_timeout", 5)
    return [
        *(py, "-m", "hypercorn", "skills_core.adapters.asgi:app_from_env()"),
        *("--bind", f"127.0.0.1:{port}", "--keep-alive", str(keep_alive)),
    ]


@contextlib.contextmanager
def running(
    kind: str, root: Path, tmp: Path, nofile: int | None = None, **bounds: float
) -> Iterator[Server]:
    """A server of ``kind`` serving ``root`` with ``bounds``; ``nofile`` limits its descriptors."""
    port = free_port()
    env = {"SKILLS_CORE_ROOTS": str(root), "SKILLS_CORE_CURSOR_KEY": KEY}
    if kind != "serve":
        env.update({"SKILLS_CORE_" + _ENV_NAMES[k]: str(v) for k, v in bounds.items()})

    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    log = tmp / f"{kind}-{port}.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            _argv(kind, root, port, bounds),
            env=child_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=limit,  # noqa: PLW1509 - setrlimit only, before exec
        )
    try:
        try:
            wait_until_answering(port)
        except AssertionError:
            raise AssertionError(f"{kind} did not start: {log.read_text()}") from None
        yield Server(port, process)
    finally:
        stop(process)


def request_bytes(method: str, params: dict[str, Any], name: str | None = None) -> bytes:
    body = rpc(method, {**params, "_meta": MODERN_META})
    head = ["POST /mcp HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in modern_headers(method, name).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


READ_BIG: Final = request_bytes("resources/read", {"uri": BIG_URI}, BIG_URI)


def never_reading(port: int) -> socket.socket:
    """A connection that asks for the large file and then reads nothing."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: the window
    sock.connect(("127.0.0.1", port))
    sock.sendall(READ_BIG)
    return sock


@dataclass(frozen=True)
class Posted:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


def post(port: int, method: str, params: dict[str, Any], timeout: float) -> Posted:
    """One request on a fresh connection, read whole."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        name = params.get("uri")
        body = rpc(method, {**params, "_meta": MODERN_META})
        connection.request("POST", "/mcp", body=body, headers=modern_headers(method, name))
        response = connection.getresponse()
        return Posted(response.status, response.headers, response.read())
    finally:
        connection.close()


def read_big_and_check(port: int, timeout: float) -> None:
    """A client that reads: the whole answer, the file's exact bytes."""
    response = post(port, "resources/read", {"uri": BIG_URI}, timeout)
    assert response.status == 200
    answer = json.loads(response.body)
    [item] = answer["result"]["contents"]
    blob = base64.b64decode(item["blob"])
    assert hashlib.sha256(blob).digest() == hashlib.sha256(b"\xff" * BIG_SIZE).digest()


# --- memory per unread answer ------------------------------------------------------------------

#: Clients that never read. Before answers were sent in pieces and took turns, each held a whole
#: answer in the server: 32 of them grew it by about 1.2 GB.
STALLED_READERS: Final = 32
#: What the server may grow by, whatever they do: a few answers (one being made costs about
#: 62 MB at its peak, one being sent 22.4 MB; four are sent at once by default).
GROWTH_BOUND: Final = 480 << 20


@pytest.mark.parametrize("kind", ["serve", "hypercorn"])
def test_clients_that_never_read_hold_a_few_answers(
    kind: str, big_root: Path, tmp_path: Path
) -> None:
    """HTTP memory bound: peak RSS of the real worker stays at a few answers; then, with the
    stalled turns freed after the send deadline (1 s here), a client that reads gets the file."""
    with running(kind, big_root, tmp_path, send_timeout=1) as server:
        assert post(server.port, "skills/list", {}, 10).status == 200
        before = server.peak_rss()
        stalled = [never_reading(server.port) for _ in range(STALLED_READERS)]
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # answers are made and stall meanwhile
                time.sleep(0.5)
                growth = server.peak_rss() - before
                assert growth < GROWTH_BOUND, f"{kind} grew by {growth >> 20} MiB"
            assert post(server.port, "skills/list", {}, 10).status == 200
            read_big_and_check(server.port, timeout=120)
        finally:
            for sock in stalled:
                sock.close()
        growth = server.peak_rss() - before
        assert growth < GROWTH_BOUND, f"{kind} grew by {growth >> 20} MiB"
        print(f"{kind}: peak grew by {growth >> 20} MiB with {STALLED_READERS} stalled readers")


def test_a_stalled_reader_is_cut_off_after_the_send_deadline(
    big_root: Path, tmp_path: Path
) -> None:
    """Its turn is not held for ever: after the deadline (1 s) the connection is reset."""
    with running("serve", big_root, tmp_path, send_timeout=1) as server:
        sock = never_reading(server.port)
        try:
            time.sleep(5)  # the answer is made, its sending stalls, the deadline passes
            sock.settimeout(10)
            received = 0
            with contextlib.suppress(ConnectionResetError):
                while chunk := sock.recv(1 << 20):
                    received += len(chunk)
            assert received < BIG_SIZE  # cut off, far from the 22.4 MB of the answer
        finally:
            sock.close()


def test_past_the_queue_a_large_read_gets_503(big_root: Path, tmp_path: Path) -> None:
    """One turn, one waiting place: a third concurrent large read is told to retry."""
    with running(
        "serve", big_root, tmp_path, max_large_answers=1, large_answer_queue=1, send_timeout=30
    ) as server:
        holder = never_reading(server.port)
        time.sleep(1)  # it has the turn
        waiting = never_reading(server.port)
        time.sleep(1)  # it waits
        try:
            response = post(server.port, "resources/read", {"uri": BIG_URI}, 10)
            assert response.status == 503
            assert response.headers["retry-after"] == "1"
            assert b"retry" in response.body
            assert post(server.port, "skills/list", {}, 10).status == 200  # small ones go on
        finally:
            holder.close()
            waiting.close()
        read_big_and_check(server.port, timeout=60)  # the turn came back


# --- descriptors held by clients that never finish a request -----------------------------------

#: A connection that stalls before its head is complete: nothing, half a request line, half the
#: headers.
PARTIAL_HEADS: Final = (b"", b"POST /mc", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
HEAD_TIMEOUT: Final = 2


def stalled_heads(port: int, count: int) -> list[socket.socket]:
    socks = []
    for n in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
            sock.sendall(PARTIAL_HEADS[n % 3])
        except OSError:  # refused or reset while the server's descriptors are full
            continue
        socks.append(sock)
    return socks


@pytest.mark.parametrize("kind", ["serve", "uvicorn-h11", "hypercorn"])
def test_stalled_heads_do_not_lock_out_a_new_client(
    kind: str, big_root: Path, tmp_path: Path
) -> None:
    """80 connections that never complete a head, against a limit of 64 descriptors: a normal
    ``skills/list`` is still answered within a few seconds of the head deadline (2 s)."""
    with running(
        kind, big_root, tmp_path, nofile=64, head_timeout=HEAD_TIMEOUT, idle_timeout=1
    ) as server:
        socks = stalled_heads(server.port, 80)
        try:
            full = time.monotonic() + HEAD_TIMEOUT - 0.5
            while server.descriptors() <= 55 and time.monotonic() < full:
                time.sleep(0.05)  # the server accepts them
            assert server.descriptors() > 55  # the worker's descriptors are (about) full
            started = time.monotonic()
            deadline = started + HEAD_TIMEOUT + 10
            status = None
            while status is None and time.monotonic() < deadline:
                try:
                    status = post(server.port, "skills/list", {}, 3).status
                except (OSError, http.client.HTTPException):
                    time.sleep(0.2)  # reset or unanswered while the descriptors are full
            assert status == 200, f"{kind}: no answer {deadline - started:.0f} s after the stall"
        finally:
            for sock in socks:
                sock.close()


def _closed_within(sock: socket.socket, seconds: float) -> float:
    """Seconds until the server closed ``sock`` (fails when it did not within ``seconds``)."""
    started = time.monotonic()
    sock.settimeout(seconds)
    with contextlib.suppress(ConnectionResetError):
        while sock.recv(65536):
            pass
    return time.monotonic() - started


@pytest.mark.parametrize("kind", ["serve", "uvicorn-h11", "hypercorn"])
def test_idle_and_unfinished_connections_are_closed(
    kind: str, big_root: Path, tmp_path: Path
) -> None:
    """A kept-alive connection idle after an answer, and each kind of unfinished head, is closed
    by the server soon after its deadline (idle 1 s, head 2 s; hypercorn: 2 s for both)."""
    with running(kind, big_root, tmp_path, head_timeout=HEAD_TIMEOUT, idle_timeout=1) as server:
        idle = socket.create_connection(("127.0.0.1", server.port))
        idle.sendall(request_bytes("skills/list", {}))
        idle.settimeout(10)
        assert idle.recv(65536).startswith(b"HTTP/1.1 200")
        socks = stalled_heads(server.port, 3)
        try:
            for sock in [idle, *socks]:
                waited = _closed_within(sock, HEAD_TIMEOUT + 8)
                assert waited < HEAD_TIMEOUT + 6
        finally:
            for sock in [idle, *socks]:
                sock.close()
