"""An ASGI test harness: drive an ASGI 3 app in-process with a scope and receive/send callables.

:func:`call` builds the ``http`` scope an ASGI server would (lowercase header names as bytes,
``root_path``), feeds the body in the chunks given (``more_body`` on all but the last), and
collects what the app sends into a :class:`Response`. ``hold=True`` makes ``receive`` wait forever
after the chunks (a slow client); ``disconnect=True`` makes it report ``http.disconnect`` instead.
It also checks the app keeps the ASGI contract: one ``http.response.start``, then body messages,
nothing after the last.

The request builders write what a 2026-07-28 client sends (docs/requirements.md#http-31,
docs/requirements.md#http-client rule 2).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from skills_core.adapters.asgi import Receive, Scope, SkillsApp
from skills_core.http.headers import encode_header_value

MODERN: Final = "2026-07-28"
LEGACY: Final = "2025-11-25"
META: Final[dict[str, Any]] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "harness", "version": "0"},
}
ACCEPT: Final = "application/json, text/event-stream"


@dataclass
class Response:
    """What the app sent."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    #: Messages sent after the response was complete (must stay empty).
    extra: list[dict[str, Any]] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        found = [v.decode("latin-1") for k, v in self.headers if k == name.encode()]
        assert len(found) <= 1, f"header {name} sent {len(found)} times"
        return found[0] if found else None

    def json(self) -> Any:
        assert self.header("content-type") == "application/json", self.header("content-type")
        return json.loads(self.body)

    @property
    def error_code(self) -> int | None:
        error = self.json().get("error")
        return None if error is None else int(error["code"])


def scope(
    method: str = "POST",
    path: str = "/mcp",
    headers: Sequence[tuple[str, str]] = (),
    root_path: str = "",
) -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": root_path,
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


async def acall(
    app: SkillsApp,
    method: str = "POST",
    path: str = "/mcp",
    headers: Sequence[tuple[str, str]] = (),
    chunks: Sequence[bytes] = (b"",),
    *,
    root_path: str = "",
    hold: bool = False,
    disconnect: bool = False,
    extra_scope: dict[str, Any] | None = None,
    receive: Receive | None = None,
) -> Response | None:
    """Run one exchange; None when the app sent nothing at all.

    ``receive``, when given, replaces the one made of ``chunks`` (a body that comes on cue). With
    neither ``hold`` nor ``disconnect`` nothing here is asyncio's, so trio can run it too.
    """
    pending = list(chunks)
    sent: list[dict[str, Any]] = []

    async def from_chunks() -> MutableMapping[str, Any]:
        if pending:
            chunk = pending.pop(0)
            return {
                "type": "http.request",
                "body": chunk,
                "more_body": bool(pending) or hold or disconnect,
            }
        if disconnect:
            return {"type": "http.disconnect"}
        await asyncio.Event().wait()  # a client that never sends the rest
        raise AssertionError("unreachable")

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    await app(
        {**scope(method, path, headers, root_path), **(extra_scope or {})},
        from_chunks if receive is None else receive,
        send,
    )
    if not sent:
        return None
    start, *rest = sent
    assert start["type"] == "http.response.start"
    body = b""
    extra: list[dict[str, Any]] = []
    finished = False
    for message in rest:
        if finished:
            extra.append(message)
            continue
        assert message["type"] == "http.response.body"
        body += message.get("body", b"")
        finished = not message.get("more_body", False)
    assert finished, "the response body never ended"
    length = [v for k, v in start["headers"] if k == b"content-length"]
    assert length == [str(len(body)).encode()], "content-length must match the body"
    return Response(start["status"], list(start["headers"]), body, extra)


def call(app: SkillsApp, *args: Any, **kwargs: Any) -> Response:
    response = asyncio.run(acall(app, *args, **kwargs))
    assert response is not None, "the app sent no response"
    return response


def base_headers(host: str = "127.0.0.1:8000") -> list[tuple[str, str]]:
    return [("host", host), ("content-type", "application/json"), ("accept", ACCEPT)]


def modern_request(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    request_id: int | str = 1,
    meta: dict[str, Any] | None = None,
) -> tuple[list[tuple[str, str]], bytes]:
    """Headers and body of a well-formed modern request (the name header when the method has one)."""
    full: dict[str, Any] = dict(params or {})
    full["_meta"] = META if meta is None else meta
    headers = base_headers()
    headers.append(("mcp-protocol-version", MODERN))
    headers.append(("mcp-method", encode_header_value(method)))
    if method == "resources/read":
        headers.append(("mcp-name", encode_header_value(full["uri"])))
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": full})
    return headers, body.encode()


def legacy_body(
    method: str, params: dict[str, Any] | None = None, request_id: int | None = 1
) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


INITIALIZE: Final = legacy_body(
    "initialize",
    {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
)


def replace_header(
    headers: Sequence[tuple[str, str]], name: str, value: str | None
) -> list[tuple[str, str]]:
    """``headers`` with ``name`` set to ``value`` (removed when None)."""
    out = [(k, v) for k, v in headers if k != name]
    if value is not None:
        out.append((name, value))
    return out
