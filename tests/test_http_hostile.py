"""Hostile Streamable HTTP servers against our host: bounded output, never a flood.

What the host skips on response streams (events of other types, requests from the server,
responses to other ids) is reported a few lines per kind and then counted, as over stdio: ``host``
against a flooding server process (``tests/peers/hostile_http_server.py``) writes a few hundred
bytes on stderr, not one line per skipped event.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Final

import anyio
from http_peers import (
    LAST_CHUNK,
    Action,
    McpPeer,
    ScriptedServer,
    Seen,
    chunk,
    chunked_head,
)
from interop_helpers import PEERS, REPO_ROOT, child_env, new_host, pump

from skills_core.adapters._client import REPORTS_SHOWN, ReportCounter
from skills_core.adapters.host_driver import handshake
from skills_core.adapters.http_client import open_http_client
from skills_core.http_wire import NoteKind

HOSTILE_HTTP_SERVER: Final = PEERS / "hostile_http_server.py"
HOST: Final = (sys.executable, "-m", "skills_core", "host")
#: What ``host`` may write on stderr, whatever a server sends (the issue's bound).
STDERR_LIMIT: Final = 100_000

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
