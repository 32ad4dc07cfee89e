"""Scripted HTTP servers for the HTTP client's tests: well-behaved MCP peers and hostile ones.

:class:`ScriptedServer` is a raw asyncio socket server on 127.0.0.1 running in a thread of its own,
so a test's client (asyncio, trio, or a ``skills-core host`` subprocess) talks to it over a real
TCP connection. Each request is parsed (request line, headers, a ``Content-Length`` body),
recorded in :attr:`ScriptedServer.seen`, and answered by the handler's *actions*: bytes to write,
a number of seconds to sleep, :data:`CLOSE` or :data:`RESET` (an RST: SO_LINGER 0). Anything can
be sent: wrong lengths, chunked bodies that never end, resets in the middle of a body.

:class:`McpPeer` is a handler that serves skills through our own ``SkillsServer`` over both eras,
the way the transport spec describes (modern: by ``MCP-Protocol-Version``; legacy: ``initialize``
makes a session, ``Mcp-Session-Id`` on every request, DELETE ends it), with switches for the
behaviours the tests need (legacy only, SSE answers, -32022 first, sessions forgotten).
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import json
import socket
import struct
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from server_helpers import server

from skills_core.server import ServerConnection, SkillsServer


class Signal(enum.Enum):
    CLOSE = "close"
    RESET = "reset"


CLOSE: Final = Signal.CLOSE
RESET: Final = Signal.RESET

Action = bytes | float | Signal


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def message(self) -> Any:
        return json.loads(self.body) if self.body else None


Handler = Callable[[Seen], Iterable[Action]]


def response(
    status: int = 200,
    body: bytes = b"",
    *,
    content_type: str | None = "application/json",
    headers: Sequence[tuple[str, str]] = (),
    reason: str = "OK",
    length: int | None = None,
) -> bytes:
    """An HTTP/1.1 response with a Content-Length (``length`` may lie)."""
    lines = [f"HTTP/1.1 {status} {reason}"]
    if content_type is not None:
        lines.append(f"Content-Type: {content_type}")
    lines.append(f"Content-Length: {len(body) if length is None else length}")
    lines.extend(f"{name}: {value}" for name, value in headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked_head(
    status: int = 200,
    content_type: str = "application/json",
    headers: Sequence[tuple[str, str]] = (),
) -> bytes:
    lines = [f"HTTP/1.1 {status} OK", f"Content-Type: {content_type}", "Transfer-Encoding: chunked"]
    lines.extend(f"{name}: {value}" for name, value in headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


LAST_CHUNK: Final = b"0\r\n\r\n"


def json_response(
    message: Mapping[str, Any], status: int = 200, headers: Sequence[tuple[str, str]] = ()
) -> bytes:
    return response(status, json.dumps(message).encode(), headers=headers)


def sse_response(
    messages: Sequence[Mapping[str, Any]], headers: Sequence[tuple[str, str]] = ()
) -> bytes:
    """An event stream, chunked, one event per chunk, a comment first (a keep-alive)."""
    out = chunked_head(content_type="text/event-stream", headers=headers) + chunk(b": ping\n\n")
    for message in messages:
        out += chunk(b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n")
    return out + LAST_CHUNK


class ScriptedServer:
    """A raw HTTP/1.1 server on 127.0.0.1 (a thread per connection), answering with actions."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.seen: list[Seen] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.port = self._listener.getsockname()[1]
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._connections: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> ScriptedServer:
        self._acceptor.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._acceptor.join(10)
        self._listener.close()
        with self._lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(10)
        with self._lock:
            for connection in self._connections:
                connection.close()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            with self._lock:
                self._connections.append(connection)
            thread = threading.Thread(target=self._serve, args=(connection,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, connection: socket.socket) -> None:
        buffer = b""
        with contextlib.suppress(OSError, ValueError):
            while not self._stopping.is_set():
                while b"\r\n\r\n" not in buffer:
                    data = connection.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                request_line, *header_lines = head.decode("latin-1").split("\r\n")
                method, path, _ = request_line.split(" ", 2)
                headers: dict[str, str] = {}
                for line in header_lines:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                while len(buffer) < length:
                    data = connection.recv(65536)
                    if not data:
                        return
                    buffer += data
                body, buffer = buffer[:length], buffer[length:]
                seen = Seen(method, path, headers, body)
                with self._lock:
                    self.seen.append(seen)
                for action in self.handler(seen):
                    if self._stopping.is_set():
                        return
                    if isinstance(action, bytes):
                        connection.sendall(action)
                    elif isinstance(action, float):
                        self._stopping.wait(action)
                    elif action is RESET:
                        linger = struct.pack("ii", 1, 0)
                        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                        connection.close()  # with linger 0: an RST, not a FIN
                        return
                    else:
                        connection.shutdown(socket.SHUT_RDWR)
                        return

    def posts(self) -> list[Seen]:
        return [s for s in self.seen if s.method == "POST"]

    def methods(self) -> list[str]:
        return [s.message.get("method", "(response)") for s in self.posts()]


# --- a well-behaved MCP peer over both eras ---------------------------------------------------

MODERN: Final = "2026-07-28"


@dataclass
class McpPeer:
    """Serves a SkillsServer over Streamable HTTP (both eras; see the module docstring)."""

    skills: SkillsServer = field(default_factory=server)
    legacy_only: bool = False
    modern_only: bool = False
    sse: bool = False
    reject_first_version: bool = False
    forget_sessions_after: int | None = None  # answer 404 once this many requests used a session
    sessions: dict[str, ServerConnection] = field(default_factory=dict)
    _ids: Iterator[int] = field(default_factory=itertools.count)
    _session_requests: int = 0

    def __call__(self, seen: Seen) -> Iterator[Action]:
        if seen.method == "DELETE":
            self.sessions.pop(seen.headers.get("mcp-session-id", ""), None)
            yield response(200, content_type=None)
            return
        if seen.method != "POST":
            yield response(
                405, content_type=None, reason="Method Not Allowed", headers=[("Allow", "POST")]
            )
            return
        message = seen.message
        version = seen.headers.get("mcp-protocol-version")
        if version == MODERN or (version is None and "_meta" in (message.get("params") or {})):
            yield from self._modern(seen, message)
        else:
            yield from self._legacy(seen, message)

    def _answer(
        self, connection: ServerConnection, message: Any, headers: Sequence[tuple[str, str]] = ()
    ) -> bytes:
        answer: Any = connection.handle(message)
        if answer is None:
            return response(202, content_type=None, reason="Accepted")
        if self.sse:
            progress = {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progress": 1},
            }
            return sse_response([progress, answer], headers=headers)
        status = 404 if answer.get("error", {}).get("code") == -32601 else 200
        return json_response(answer, status, headers)

    def _modern(self, seen: Seen, message: Any) -> Iterator[Action]:
        if self.legacy_only:
            # A 2025 server that sees no session id: a plain 400, as the python SDK answers.
            yield response(
                400,
                b"Bad Request: No valid session ID provided",
                content_type="text/plain",
                reason="Bad Request",
            )
            return
        if self.reject_first_version:
            self.reject_first_version = False
            error = {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": [MODERN], "requested": MODERN},
            }
            yield json_response({"jsonrpc": "2.0", "id": message.get("id"), "error": error}, 400)
            return
        # Session ids on modern answers must be ignored by the client (the conformance mock sets one).
        yield self._answer(self.skills.connection(), message, [("Mcp-Session-Id", "ignored")])

    def _legacy(self, seen: Seen, message: Any) -> Iterator[Action]:
        if self.modern_only:
            error = {"code": -32601, "message": "Method not found"}
            yield json_response({"jsonrpc": "2.0", "id": message.get("id"), "error": error}, 404)
            return
        if message.get("method") == "initialize":
            session = f"session-{next(self._ids)}"
            new = self.sessions[session] = self.skills.connection()
            yield self._answer(new, message, [("Mcp-Session-Id", session)])
            return
        session = seen.headers.get("mcp-session-id", "")
        connection: ServerConnection | None = self.sessions.get(session)
        if "id" in message and connection is not None:
            self._session_requests += 1
            if (
                self.forget_sessions_after is not None
                and self._session_requests > self.forget_sessions_after
            ):
                self.forget_sessions_after = None
                self.sessions.clear()
                connection = None
        if connection is None:
            yield response(404, b"session not found", content_type="text/plain", reason="Not Found")
            return
        yield self._answer(connection, message)
