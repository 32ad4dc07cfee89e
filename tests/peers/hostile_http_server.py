"""A hostile Streamable HTTP skills server, in a process of its own, for the ``host`` command's tests.

Usage: python hostile_http_server.py MODE [COUNT]

It serves the spec's pdf-processing skill through our own ``SkillsServer`` over both eras
(``tests/http_peers.py``'s ``McpPeer`` on a raw socket server on 127.0.0.1, a free port), prints
its URL on stdout once it accepts connections, and serves until its stdin closes.

Modes:

* ``flood``: every answer to a request is an event stream that first carries COUNT (default
  10,000) of each thing a host skips: events of another type (each type a new name, one of them
  a megabyte long), requests from the server, responses to other request ids (one of them with a
  megabyte-long id), and notifications; then the answer. Each stream stays well under the host's
  limits (one message, and twice that for a whole stream), so nothing but the skipping is tested.
* ``honest``: the same answers without the flood.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

from http_peers import (  # noqa: E402
    LAST_CHUNK,
    Action,
    McpPeer,
    ScriptedServer,
    Seen,
    chunk,
    chunked_head,
)

#: A megabyte: the length of the one long event type and the one long id of each stream.
LONG: int = 1 << 20


def flood(count: int) -> bytes:
    """The skipped part of one stream: COUNT of each kind, in one chunk."""
    parts: list[bytes] = [b"event: " + b"t" * LONG + b"\ndata: {}\n\n"]
    long_id = json.dumps({"jsonrpc": "2.0", "id": "i" * LONG, "result": {}})
    parts.append(b"data: " + long_id.encode() + b"\n\n")
    for i in range(count):
        request = {"jsonrpc": "2.0", "id": f"srv-{i}", "method": "sampling/createMessage"}
        other = {"jsonrpc": "2.0", "id": 1_000_000 + i, "result": {}}
        note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": i}}
        parts.append(b"event: other-%d\ndata: {}\n\n" % i)
        parts.append(b"data: " + json.dumps(request).encode() + b"\n\n")
        parts.append(b"data: " + json.dumps(other).encode() + b"\n\n")
        parts.append(b"data: " + json.dumps(note).encode() + b"\n\n")
    return b"".join(parts)


class Flooding:
    """McpPeer's answers, each turned into an event stream with the flood before the answer."""

    def __init__(self, count: int) -> None:
        self.peer = McpPeer()
        self.noise = chunk(flood(count)) if count else b""

    def __call__(self, seen: Seen) -> Iterator[Action]:
        for action in self.peer(seen):
            answer = _json_body(action)
            if answer is None or not self.noise:
                yield action
                continue
            yield chunked_head(content_type="text/event-stream")
            yield self.noise
            yield chunk(b"event: message\ndata: " + answer + b"\n\n") + LAST_CHUNK


def _json_body(action: Action) -> bytes | None:
    """The body of a 200 JSON answer (the ones that carry a response), else None."""
    if not isinstance(action, bytes) or not action.startswith(b"HTTP/1.1 200"):
        return None
    head, _, body = action.partition(b"\r\n\r\n")
    return body if b"application/json" in head and body else None


def main() -> None:
    mode = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    handler = Flooding(count if mode == "flood" else 0)
    with ScriptedServer(handler) as server:
        sys.stdout.write(server.url + "\n")
        sys.stdout.flush()
        sys.stdin.read()  # serve until the test closes our stdin


if __name__ == "__main__":
    main()
