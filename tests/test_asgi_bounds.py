"""What a client can hold of the ASGI app and of uvicorn with its protocol, in-process.

The app (asyncio and trio): answers over 64 KiB go out in pieces with ``more_body``; large
answers take turns (``max_large_answers`` at once, ``large_answer_queue`` waiting, 503 with
``Retry-After`` past them); a response whose client takes nothing for ``send_timeout`` is ended
and its turn freed. uvicorn with :mod:`skills_core.adapters.uvicorn_http`, run in a thread on a
real socket: heads due within ``head_timeout``, idle connections closed, stalled writes aborted,
pipelined requests answered. (The same with real processes and hostile numbers of clients:
``test_http_bounds.py``.)
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any, Final

import pytest
import uvicorn
from asgi_harness import modern_request, scope
from http_helpers import free_port

from skills_core import spec_examples as ex
from skills_core.adapters._asgi_app import _Turns
from skills_core.adapters.asgi import AppConfig, HttpOptions, SkillsApp
from skills_core.adapters.uvicorn_http import (
    BoundedH11Protocol,
    BoundedHttpToolsProtocol,
    BoundedProtocol,
    abort,
)
from skills_core.server.handler import SkillsServer

#: Read in a worker thread (over 256 KiB), answered in pieces; large enough that a client that
#: takes nothing stalls the writes (more than the kernel's socket buffers hold).
BIG: Final = b"\xff" * (8 << 20)
#: Read on the loop, but its answer (136 KB of base64) is over 64 KiB: sent in pieces too.
MID: Final = b"\xfe" * (100 << 10)
FILES: Final = {
    **{f"pdf-processing/{path}": data for path, data in ex.FILES.items()},
    "pdf-processing/big.bin": BIG,
    "pdf-processing/mid.bin": MID,
}
BIG_URI: Final = "skill://pdf-processing/big.bin"
MID_URI: Final = "skill://pdf-processing/mid.bin"
PIECE: Final = 64 << 10


def make_app(**options: Any) -> SkillsApp:
    server = SkillsServer.from_files(FILES, cursor_key=b"c" * 32)
    return SkillsApp(server, session_key=b"s" * 32, options=HttpOptions(**options))


Message = MutableMapping[str, Any]


def body_receive(body: bytes, after: Callable[[], Awaitable[Message]]) -> Any:
    """A receive that gives ``body`` whole, then whatever ``after`` gives."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await after()

    return receive


async def _forever() -> Message:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def _disconnect() -> Message:
    return {"type": "http.disconnect"}


def read(uri: str, request_id: int = 1) -> tuple[list[tuple[str, str]], bytes]:
    return modern_request("resources/read", {"uri": uri}, request_id=request_id)


def check_pieces(messages: list[Message], data: bytes) -> None:
    """One start with the length, then pieces of at most 64 KiB that make the whole answer."""
    start, *pieces = messages
    assert start["type"] == "http.response.start"
    assert start["status"] == 200
    length = dict(start["headers"])[b"content-length"]
    assert [m["more_body"] for m in pieces] == [True] * (len(pieces) - 1) + [False]
    assert all(len(m["body"]) <= PIECE for m in pieces)
    body = b"".join(m["body"] for m in pieces)
    assert int(length) == len(body)
    [item] = json.loads(body)["result"]["contents"]
    assert base64.b64decode(item["blob"]) == data


@pytest.mark.parametrize(("uri", "data"), [(BIG_URI, BIG), (MID_URI, MID)])
def test_large_answers_go_out_in_pieces(uri: str, data: bytes) -> None:
    app = make_app()
    headers, body = read(uri)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(app(scope("POST", "/mcp", headers), body_receive(body, _forever), send))
    assert len(sent) > 2
    check_pieces(sent, data)


def test_small_answers_stay_one_message() -> None:
    app = make_app()
    headers, body = read("skill://pdf-processing/SKILL.md")
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(app(scope("POST", "/mcp", headers), body_receive(body, _forever), send))
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert "more_body" not in sent[1]


class Client:
    """One exchange with the app, whose ``send`` blocks on the first piece until released."""

    def __init__(self, app: SkillsApp, uri: str, request_id: int, *, hold: bool = True) -> None:
        self.app = app
        self.headers, self.body = read(uri, request_id)
        self.sent: list[Message] = []
        self.holding = asyncio.Event()
        self.release = asyncio.Event()
        if not hold:
            self.release.set()

    async def send(self, message: Message) -> None:
        if message.get("more_body"):
            self.holding.set()
            await self.release.wait()
        self.sent.append(message)

    async def run(self) -> None:
        receive = body_receive(self.body, _disconnect)
        await self.app(scope("POST", "/mcp", self.headers), receive, self.send)

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])


def test_large_answers_take_turns_and_past_the_queue_get_503() -> None:
    """One turn and one waiting place: the first holds the turn, the second waits for it, the
    third is told to retry; when the first is taken, the second gets its turn."""
    app = make_app(max_large_answers=1, large_answer_queue=1)

    async def main() -> None:
        first, second = Client(app, BIG_URI, 1), Client(app, MID_URI, 2, hold=False)
        third = Client(app, BIG_URI, 3, hold=False)
        one = asyncio.create_task(first.run())
        await first.holding.wait()
        two = asyncio.create_task(second.run())
        for _ in range(5):
            await asyncio.sleep(0)
        assert not second.sent  # waiting for the turn
        await third.run()
        assert third.status == 503
        assert (b"retry-after", b"1") in third.sent[0]["headers"]
        fourth = Client(app, MID_URI, 5, hold=False)  # an answer made on the loop: the same
        await fourth.run()
        assert fourth.status == 503
        small = Client(app, "skill://pdf-processing/SKILL.md", 4, hold=False)
        await small.run()
        assert small.status == 200  # small answers need no turn
        first.release.set()
        await one
        await two
        check_pieces(first.sent, BIG)
        check_pieces(second.sent, MID)

    asyncio.run(main())


def test_a_client_that_takes_nothing_loses_its_turn() -> None:
    """The send deadline (0.2 s) ends the response; the turn goes to the next request."""
    app = make_app(max_large_answers=1, send_timeout=0.2)

    async def main() -> None:
        stalled, patient = Client(app, BIG_URI, 1), Client(app, BIG_URI, 2, hold=False)
        one = asyncio.create_task(stalled.run())
        await stalled.holding.wait()
        await patient.run()  # waits for the turn, which comes back after the deadline
        await one
        check_pieces(patient.sent, BIG)
        assert stalled.status == 200
        assert len(stalled.sent) == 1  # the start only: no piece was taken

    asyncio.run(main())


def test_after_the_deadline_the_app_waits_briefly_for_the_server_to_close() -> None:
    """A server that never says the client left: the app returns after its grace (2 s)."""
    app = make_app(send_timeout=0.1)
    headers, body = read(MID_URI)

    async def send(message: Message) -> None:
        if message.get("more_body"):
            await asyncio.Event().wait()

    async def main() -> float:
        started = asyncio.get_running_loop().time()
        await app(scope("POST", "/mcp", headers), body_receive(body, _forever), send)
        return asyncio.get_running_loop().time() - started

    assert 1.5 < asyncio.run(main()) < 30

    async def chatty() -> Message:  # a server may say other things first
        await asyncio.sleep(0.01)
        return {"type": "http.request", "body": b"", "more_body": False}

    async def quick() -> float:
        started = asyncio.get_running_loop().time()
        await app(scope("POST", "/mcp", headers), body_receive(body, chatty), send)
        return asyncio.get_running_loop().time() - started

    assert 1.5 < asyncio.run(quick()) < 30


def test_turns_a_cancelled_waiter_gives_back() -> None:
    """A waiter cancelled in the queue leaves it; one cancelled just as the turn came gives it
    back; and the app's waiting request, cancelled by the ASGI server, leaves the queue."""
    turns = _Turns(1, 4)

    async def main() -> None:
        assert await turns.take()
        queued = asyncio.create_task(turns.take())
        handed = asyncio.create_task(turns.take())
        await asyncio.sleep(0)
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        turns.give_back()  # to `handed`, which is cancelled before it runs
        handed.cancel()
        with pytest.raises(asyncio.CancelledError):
            await handed
        assert await turns.take()  # the turn came back
        gone = asyncio.create_task(turns.take())
        await asyncio.sleep(0)
        gone.cancel()  # cancelled, and handed the turn before it runs: it gives it back
        turns.give_back()
        with pytest.raises(asyncio.CancelledError):
            await gone
        assert await turns.take()
        turns.give_back()

        app = make_app(max_large_answers=1)
        holder = Client(app, BIG_URI, 1)
        one = asyncio.create_task(holder.run())
        await holder.holding.wait()
        waiter = asyncio.create_task(Client(app, BIG_URI, 2, hold=False).run())
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        holder.release.set()
        await one
        late = Client(app, MID_URI, 3, hold=False)
        await late.run()
        check_pieces(late.sent, MID)

    asyncio.run(main())


def test_turns_pieces_and_the_send_deadline_under_trio() -> None:
    """hypercorn's trio worker: the same turns and pieces, the deadline as a cancel scope."""
    import trio

    app = make_app(max_large_answers=1, send_timeout=0.2)

    async def exchange(uri: str, request_id: int, stall: bool, out: list[Message]) -> None:
        headers, body = read(uri, request_id)
        given = 0

        async def receive() -> Message:
            nonlocal given
            if given > 1:
                return {"type": "http.disconnect"}
            given += 1
            return {"type": "http.request", "body": body if given == 1 else b"", "more_body": False}

        async def send(message: Message) -> None:
            if stall and message.get("more_body"):
                await trio.sleep_forever()
            out.append(message)

        await app(scope("POST", "/mcp", headers), receive, send)

    async def main() -> None:
        stalled: list[Message] = []
        patient: list[Message] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(exchange, BIG_URI, 1, True, stalled)
            await trio.sleep(0.05)
            nursery.start_soon(exchange, MID_URI, 2, False, patient)
        assert len(stalled) == 1
        check_pieces(patient, MID)
        alone: list[Message] = []
        await exchange(MID_URI, 3, True, alone)  # cut off, then told the client left
        assert len(alone) == 1

    trio.run(main)


def test_a_waiter_under_trio_gets_the_turn() -> None:
    import trio

    turns = _Turns(1, 1)

    async def main() -> None:
        assert await turns.take()
        got: list[bool] = []

        async def wait() -> None:
            got.append(await turns.take())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait)
            await trio.sleep(0.01)
            assert await turns.take() is False  # the one waiting place is taken
            turns.give_back()
        assert got == [True]

    trio.run(main)


def test_the_new_options_are_checked_and_reach_the_workers(tmp_path: Any) -> None:
    for bad in (
        {"send_timeout": 0},
        {"head_timeout": -1},
        {"idle_timeout": float("inf")},
        {"send_timeout": float("nan")},
        {"max_large_answers": 0},
        {"large_answer_queue": -1},
    ):
        with pytest.raises(ValueError, match=r"."):
            HttpOptions(**bad)
    config = AppConfig(
        roots=(str(tmp_path),),
        secret=b"k" * 40,
        send_timeout=2.5,
        head_timeout=3,
        idle_timeout=0.5,
        max_large_answers=7,
        large_answer_queue=0,
    )
    environ = config.to_environ()
    assert AppConfig.from_environ(environ) == config
    with pytest.raises(ValueError, match="SKILLS_CORE_HEAD_TIMEOUT must be a number"):
        AppConfig.from_environ({**environ, "SKILLS_CORE_HEAD_TIMEOUT": "soon"})
    with pytest.raises(ValueError, match="SKILLS_CORE_MAX_LARGE_ANSWERS must be a whole"):
        AppConfig.from_environ({**environ, "SKILLS_CORE_MAX_LARGE_ANSWERS": "2.5"})
    defaults = AppConfig.from_environ({**environ, "SKILLS_CORE_SEND_TIMEOUT": ""})
    assert defaults.send_timeout == HttpOptions().send_timeout


# --- uvicorn with the bounded protocols, in a thread ---------------------------------------------


class Wrapper:
    """A middleware around the app (the protocol finds the app through ``.app``)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


@contextlib.contextmanager
def uvicorn_in_thread(app: Any, protocol: type[asyncio.Protocol]) -> Iterator[int]:
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        http=protocol,
        loop="asyncio",
        lifespan="off",
        log_level="critical",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        yield port
    finally:
        server.should_exit = True
        thread.join(20)


def request_bytes(uri: str, request_id: int) -> bytes:
    headers, body = read(uri, request_id)
    lines = ["POST /mcp HTTP/1.1", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in headers if k != "host"] + ["Host: 127.0.0.1:8000"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def closed_after(sock: socket.socket, limit: float) -> tuple[float, bytes]:
    """(seconds until the server closed ``sock``, what it sent meanwhile)."""
    started = time.monotonic()
    sock.settimeout(limit)
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(1 << 20):
            received += chunk
    return time.monotonic() - started, received


PROTOCOLS: Final = [BoundedH11Protocol, BoundedHttpToolsProtocol]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_heads_idle_connections_and_pipelining(protocol: type[asyncio.Protocol]) -> None:
    app = Wrapper(make_app(head_timeout=0.5, idle_timeout=1, send_timeout=0.5))
    with uvicorn_in_thread(app, protocol) as port:
        nothing = socket.create_connection(("127.0.0.1", port))
        partial = socket.create_connection(("127.0.0.1", port))
        partial.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        pipelined = socket.create_connection(("127.0.0.1", port))
        skill_md = "skill://pdf-processing/SKILL.md"
        pipelined.sendall(request_bytes(skill_md, 1) + request_bytes(skill_md, 2))
        with nothing, partial, pipelined:
            for sock in (nothing, partial):
                waited, received = closed_after(sock, 10)
                assert waited < 5
                assert received == b""
            waited, received = closed_after(pipelined, 10)  # both answers, then idle: closed
            assert received.count(b"HTTP/1.1 200 OK") == 2
            assert waited < 6


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_kept_alive_heads_and_bodies(protocol: type[asyncio.Protocol]) -> None:
    """On a kept-alive connection the next head is due from its first byte; a head that came in
    time is not cut off while its body arrives (the body has its own deadline)."""
    app = make_app(head_timeout=0.5, idle_timeout=5, body_timeout=10)
    skill_md = "skill://pdf-processing/SKILL.md"
    with uvicorn_in_thread(app, protocol) as port:
        kept = socket.create_connection(("127.0.0.1", port))
        with kept:
            for request_id in (1, 2):  # a second request after the first answer
                kept.sendall(request_bytes(skill_md, request_id))
                assert read_response(kept).startswith(b"HTTP/1.1 200")
                time.sleep(0.8)  # idle for longer than a head may take: still open
            kept.sendall(b"POST /mcp HTTP/1.1\r\n")  # then half a head
            waited, received = closed_after(kept, 10)
            assert received == b""
            assert waited < 5
        slow_body = socket.create_connection(("127.0.0.1", port))
        with slow_body:
            whole = request_bytes(skill_md, 3)
            slow_body.sendall(whole[:-5])
            time.sleep(1.5)  # past the head deadline, with the head complete
            slow_body.sendall(whole[-5:])
            assert read_response(slow_body).startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_slow_reader_gets_the_whole_answer(protocol: type[asyncio.Protocol]) -> None:
    """Writes that stall and then go on are not cut off: the deadline counts from the stall."""
    with uvicorn_in_thread(make_app(send_timeout=3), protocol) as port:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        with sock:
            sock.sendall(request_bytes(BIG_URI, 1))
            time.sleep(1)  # stalled, for less than the deadline
            sock.settimeout(10)
            received = b""
            while b"\r\n\r\n" not in received or len(received) < _length(received):
                chunk = sock.recv(1 << 20)
                assert chunk, "closed before the whole answer"
                received += chunk
                time.sleep(0.001)
            [item] = json.loads(received.partition(b"\r\n\r\n")[2])["result"]["contents"]
            assert base64.b64decode(item["blob"]) == BIG


def read_response(sock: socket.socket) -> bytes:
    """One whole response (head and body, by its Content-Length)."""
    sock.settimeout(10)
    received = b""
    while b"\r\n\r\n" not in received or len(received) < _length(received):
        chunk = sock.recv(1 << 20)
        assert chunk, "closed before the whole answer"
        received += chunk
    return received


def _length(response: bytes) -> int:
    head, _, _ = response.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            return len(head) + 4 + int(value)
    raise AssertionError("no content-length")


def test_abort_without_a_socket() -> None:
    """A transport that has no socket to reset (not uvicorn's) is aborted all the same."""

    class Transport:
        aborted = False

        def get_extra_info(self, name: str) -> None:
            return None

        def abort(self) -> None:
            self.aborted = True

    transport = Transport()
    abort(transport)  # type: ignore[arg-type]
    assert transport.aborted


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_stalled_write_is_aborted(protocol: type[asyncio.Protocol]) -> None:
    with uvicorn_in_thread(make_app(send_timeout=0.3), protocol) as port:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        with sock:
            sock.sendall(request_bytes(BIG_URI, 1))
            time.sleep(3)  # the answer is made, its writes stall, the deadline passes
            _, received = closed_after(sock, 10)
            assert 0 < len(received) < len(BIG)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_server_that_stops_does_not_wait_for_a_client_that_takes_nothing(
    protocol: type[asyncio.Protocol],
) -> None:
    with uvicorn_in_thread(make_app(send_timeout=60), protocol) as port:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.sendall(request_bytes(BIG_URI, 1))
        idle = socket.create_connection(("127.0.0.1", port))  # and one idle after an answer
        idle.sendall(request_bytes("skill://pdf-processing/SKILL.md", 2))
        assert read_response(idle).startswith(b"HTTP/1.1 200")
        time.sleep(2)  # stalled
    started = time.monotonic()
    with sock, idle:
        _, received = closed_after(sock, 10)
        assert closed_after(idle, 10)[1] == b""
    assert len(received) < len(BIG)
    assert time.monotonic() - started < 10


def test_without_a_skills_app_the_defaults_apply() -> None:
    async def other(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    with uvicorn_in_thread(other, BoundedProtocol) as port:
        sock = socket.create_connection(("127.0.0.1", port))
        with sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            sock.settimeout(10)
            assert sock.recv(1024).startswith(b"HTTP/1.1 204")
