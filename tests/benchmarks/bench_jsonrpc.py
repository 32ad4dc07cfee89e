"""Throughput of the JSON-RPC endpoint. Run: ``.venv/bin/python tests/benchmarks/bench_jsonrpc.py``.

Measures, best of several rounds (not a test; pytest ignores tests/benchmarks):

* parsing small requests (a typical ``skills/get``), fed in 64 KiB chunks: messages/s and MB/s;
* building small requests with ``send_request``: messages/s;
* parsing one 16 MiB file as base64 in a ``resources/read`` result (about 22.4 MB on one line),
  fed in 64 KiB chunks: MB/s;
* dropping a 100 MB oversized line in 64 KiB chunks: MB/s;
* the same 22.4 MB line fed in 1 KiB chunks (22,000 chunks), to show the scan is linear;
* a ``text`` result of non-ASCII text with escapes (the lone-surrogate check walks it).

Beside the small requests, the row "plain constructor vs trusted constructor": the endpoint makes
each ``RequestReceived`` event with a trusted constructor (``skills_core._fast``); the row says
what its plain constructor would add to each parsed request.
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time
from collections.abc import Callable

from _bench_common import Construction, constructor_rows

from skills_core._jsonrpc_events import new_request
from skills_core.jsonrpc import (
    NEED_DATA,
    InvalidMessage,
    JsonRpcConnection,
    RequestReceived,
    ResponseReceived,
)
from skills_core.spec import MAX_TOTAL_BYTES

CHUNK = 64 * 1024
MB = 1_000_000


def best_of(rounds: int, action: Callable[[], None]) -> float:
    """The fastest of ``rounds`` runs of ``action``, in seconds."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def feed(conn: JsonRpcConnection, wire: bytes, chunk: int) -> int:
    """Feed ``wire`` in ``chunk``-byte pieces, draining after each; return the number of events."""
    count = 0
    view = memoryview(wire)
    for start in range(0, len(wire), chunk):
        conn.receive_data(bytes(view[start : start + chunk]))
        while conn.next_event() is not NEED_DATA:
            count += 1
    return count


def small_requests(n: int) -> bytes:
    client = JsonRpcConnection()
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/skills": {}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1.0.0"},
    }
    params = {"_meta": meta, "uri": "skill://acme/billing/refunds/SKILL.md"}
    return b"".join(client.send_request("skills/get", params)[1] for _ in range(n))


def main() -> None:
    print(f"machine: {platform.platform()}; {platform.processor() or platform.machine()};")
    print(f"         {os.cpu_count()} CPUs; Python {sys.version.split()[0]}")

    n = 100_000
    wire = small_requests(n)

    def parse_small() -> None:
        assert feed(JsonRpcConnection(), wire, CHUNK) == n

    seconds = best_of(5, parse_small)
    print(
        f"parse small requests ({len(wire) // n} bytes each): {n / seconds:,.0f} messages/s, "
        f"{len(wire) / seconds / MB:,.1f} MB/s"
    )
    check = JsonRpcConnection()
    check.receive_data(wire[: wire.index(b"\n") + 1])
    event = check.next_event()
    assert isinstance(event, RequestReceived)
    request_id, method, params = event.id, event.method, event.params
    construction = Construction(
        "RequestReceived",
        lambda: RequestReceived(id=request_id, method=method, params=params),
        lambda: new_request(request_id, method, params),
    )
    for row in constructor_rows([construction], seconds / n, "request", "parsing it"):
        print(f"  {row}")

    def send_many() -> None:
        client = JsonRpcConnection()
        params = {"uri": "skill://acme/billing/refunds/SKILL.md", "_meta": {}}
        for _ in range(n):
            client.send_request("skills/get", params)

    seconds = best_of(5, send_many)
    print(f"send_request (small): {n / seconds:,.0f} messages/s")

    blob = "QUJD" * math.ceil(MAX_TOTAL_BYTES / 3)
    result = {
        "resultType": "complete",
        "contents": [
            {"uri": "skill://a/big.bin", "mimeType": "application/octet-stream", "blob": blob}
        ],
        "ttlMs": 0,
        "cacheScope": "private",
    }
    big = JsonRpcConnection().send_response(1, result)

    def parse_big(chunk: int) -> None:
        client = JsonRpcConnection()
        client.send_request("resources/read")
        view = memoryview(big)
        events = []
        for start in range(0, len(big), chunk):
            client.receive_data(bytes(view[start : start + chunk]))
            while (event := client.next_event()) is not NEED_DATA:
                events.append(event)
        assert len(events) == 1
        assert isinstance(events[0], ResponseReceived)

    seconds = best_of(3, lambda: parse_big(CHUNK))
    print(
        f"parse one {len(big) / MB:.1f} MB resources/read line in 64 KiB chunks: "
        f"{seconds * 1000:.0f} ms, {len(big) / seconds / MB:,.0f} MB/s"
    )
    seconds = best_of(3, lambda: parse_big(1024))
    print(
        f"  same line in 1 KiB chunks ({len(big) // 1024:,} chunks): "
        f"{seconds * 1000:.0f} ms, {len(big) / seconds / MB:,.0f} MB/s"
    )

    text = ('Grüße, 世界: a line of SKILL.md text with "quotes"\n' * 300_000)[: 12 * MB]
    result["contents"] = [{"uri": "skill://a/notes.md", "mimeType": "text/markdown", "text": text}]
    big = JsonRpcConnection().send_response(1, result)
    seconds = best_of(3, lambda: parse_big(CHUNK))
    print(
        f"parse one {len(big) / MB:.1f} MB line of escaped non-ASCII text in 64 KiB chunks: "
        f"{seconds * 1000:.0f} ms, {len(big) / seconds / MB:,.0f} MB/s"
    )

    line = b"x" * CHUNK

    def drop_oversized() -> None:
        conn = JsonRpcConnection()
        events = []
        for _ in range(100 * MB // CHUNK):
            conn.receive_data(line)
            while (event := conn.next_event()) is not NEED_DATA:
                events.append(event)
        assert len(events) == 1
        assert isinstance(events[0], InvalidMessage)

    seconds = best_of(3, drop_oversized)
    print(f"drop a 100 MB oversized line in 64 KiB chunks: {100 / seconds:,.0f} MB/s")


if __name__ == "__main__":
    main()
