"""Scale-out without sticky sessions: any worker, any process sharing the key, answers any request.

A 1,000-skill tree (20 pages of 50) is walked page by page, each page asked of another worker or
process than the one before, and a legacy (2025-11-25) session is opened on one and used on the
other. Every skill must come back exactly once and no cursor or session be refused.

* ``serve --http --workers 2``: both workers share one listening socket, so which worker gets a
  connection is the kernel's choice. The test opens keep-alive connections until it holds one
  accepted by each worker, found by matching the connection's server-side socket (``/proc/net/tcp``)
  to a worker's open descriptors (``/proc/PID/fd``), then alternates between the two.
* two independent ``serve --http`` processes on two ports, sharing ``--cursor-key-file`` (the first
  creates it, the second reads it), alternated explicitly.
* the control: two processes with different keys refuse each other's cursors (-32602) and session
  ids (404), so the two tests above would fail if the key were not shared.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from http_helpers import (
    JSON_HEADERS,
    MODERN_META,
    Served,
    modern_headers,
    rpc,
    serving,
)

SKILLS: Final = 1000
LEGACY: Final = "2025-11-25"


@pytest.fixture(scope="module")
def thousand(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("thousand")
    for index in range(SKILLS):
        name = f"skill-{index:04d}"
        folder = root / name
        folder.mkdir()
        (folder / "SKILL.md").write_bytes(
            f"---\nname: {name}\ndescription: Skill number {index}\n---\n\n# {name}\n".encode()
        )
    return root


class Peer:
    """A keep-alive connection to one worker or process."""

    def __init__(self, port: int, connection: http.client.HTTPConnection | None = None) -> None:
        self.port = port
        self.connection = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        self.answered = 0

    def post(self, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], Any]:
        self.connection.request("POST", "/mcp", body=body, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        self.answered += 1
        return response.status, dict(response.getheaders()), json.loads(data) if data else None


def walk(peers: list[Peer], headers: dict[str, str], meta: dict[str, Any] | None) -> list[str]:
    """skills/list to the end, page i asked of peers[i % len(peers)]; no ``meta``: legacy."""
    uris: list[str] = []
    cursor: str | None = None
    page = 0
    while True:
        params: dict[str, Any] = {} if meta is None else {"_meta": meta}
        if cursor is not None:
            params["cursor"] = cursor
        status, _, message = peers[page % len(peers)].post(
            headers, rpc("skills/list", params, page)
        )
        assert status == 200, message
        assert "error" not in message, (page, message)
        assert ("resultType" in message["result"]) == (meta is not None)  # the request's era
        uris += [skill["uri"] for skill in message["result"]["skills"]]
        cursor = message["result"].get("nextCursor")
        page += 1
        if cursor is None:
            return uris
        assert page < 100


def walk_modern(peers: list[Peer]) -> list[str]:
    return walk(peers, modern_headers("skills/list"), MODERN_META)


def walk_legacy(peers: list[Peer]) -> list[str]:
    """initialize on one peer, then initialized and every page alternating between peers."""
    initialize = rpc("initialize", {"protocolVersion": LEGACY, "capabilities": {}})
    status, headers, message = peers[0].post(JSON_HEADERS, initialize)
    assert status == 200
    assert message["result"]["protocolVersion"] == LEGACY
    session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
    with_session = {**JSON_HEADERS, "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session}
    notified = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert peers[1 % len(peers)].post(with_session, notified)[0] == 202
    return walk(peers, with_session, None)


def assert_every_skill_once(uris: list[str]) -> None:
    expected = [f"skill://skill-{index:04d}/SKILL.md" for index in range(SKILLS)]
    assert uris == expected


# --- finding which worker holds a connection ---------------------------------------------------


def _socket_inode(server_port: int, client_port: int) -> str | None:
    """The inode of the server side of 127.0.0.1:client_port -> 127.0.0.1:server_port."""
    local, remote = f"0100007F:{server_port:04X}", f"0100007F:{client_port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == local and fields[2] == remote:
            return fields[9]
    return None


def _group_members(group: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.getpgid(int(entry)) == group:
                    members.append(int(entry))
    return members


def _owner(group: int, inode: str) -> int | None:
    target = f"socket:[{inode}]"
    for pid in _group_members(group):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                        return pid
    return None


def one_peer_per_worker(served: Served, workers: int) -> list[Peer]:
    """Keep-alive connections, one accepted by each worker of ``served``."""
    by_worker: dict[int, Peer] = {}
    spare: list[Peer] = []
    for _ in range(200):
        peer = Peer(served.port)
        status, _, _ = peer.post(
            modern_headers("server/discover"), rpc("server/discover", {"_meta": MODERN_META})
        )
        assert status == 200
        sock = peer.connection.sock
        assert sock is not None
        inode = _socket_inode(served.port, sock.getsockname()[1])
        assert inode is not None
        owner = _owner(served.process.pid, inode)
        assert owner is not None
        assert owner != served.process.pid  # a worker, not the parent holding the listener
        if owner in by_worker:
            spare.append(peer)
        else:
            by_worker[owner] = peer
        if len(by_worker) == workers:
            break
    for peer in spare:
        peer.connection.close()
    assert len(by_worker) == workers, "the kernel never gave a connection to every worker"
    return list(by_worker.values())


# --- the tests ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_workers(thousand: Path) -> Iterator[list[Peer]]:
    with serving(thousand, "--workers", "2", "--page-size", "50") as served:
        peers = one_peer_per_worker(served, 2)
        yield peers
        for peer in peers:
            peer.connection.close()


def test_two_workers_walk_a_listing_alternately(two_workers: list[Peer]) -> None:
    before = [peer.answered for peer in two_workers]
    assert_every_skill_once(walk_modern(two_workers))
    assert [p.answered - b for p, b in zip(two_workers, before, strict=True)] == [10, 10]


def test_two_workers_serve_one_legacy_session(two_workers: list[Peer]) -> None:
    assert_every_skill_once(walk_legacy(two_workers))


@pytest.fixture(scope="module")
def two_processes(thousand: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Peer]]:
    key = tmp_path_factory.mktemp("key") / "cursor.key"
    with (
        serving(thousand, "--page-size", "50", "--cursor-key-file", str(key)) as first,
        serving(thousand, "--page-size", "50", "--cursor-key-file", str(key)) as second,
    ):
        assert key.stat().st_mode & 0o777 == 0o600
        peers = [Peer(first.port), Peer(second.port)]
        yield peers
        for peer in peers:
            peer.connection.close()


def test_two_processes_sharing_the_key_walk_alternately(two_processes: list[Peer]) -> None:
    assert_every_skill_once(walk_modern(two_processes))


def test_two_processes_sharing_the_key_serve_one_legacy_session(
    two_processes: list[Peer],
) -> None:
    assert_every_skill_once(walk_legacy(two_processes))


def test_processes_with_different_keys_refuse_each_other(thousand: Path) -> None:
    """The control: without a shared key, the cursor and the session of one are refused."""
    with (
        serving(thousand) as first,
        serving(thousand) as second,
        contextlib.closing(Peer(first.port).connection) as one_connection,
        contextlib.closing(Peer(second.port).connection) as other_connection,
    ):
        one, other = Peer(first.port, one_connection), Peer(second.port, other_connection)
        _, _, page = one.post(
            modern_headers("skills/list"), rpc("skills/list", {"_meta": MODERN_META})
        )
        cursor = page["result"]["nextCursor"]
        status, _, refused = other.post(
            modern_headers("skills/list"),
            rpc("skills/list", {"_meta": MODERN_META, "cursor": cursor}),
        )
        assert status == 200
        assert refused["error"]["code"] == -32602
        initialize = rpc("initialize", {"protocolVersion": LEGACY, "capabilities": {}})
        _, headers, _ = one.post(JSON_HEADERS, initialize)
        session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
        with_session = {**JSON_HEADERS, "Mcp-Session-Id": session}
        assert other.post(with_session, rpc("ping"))[0] == 404
        assert one.post(with_session, rpc("ping"))[0] == 200
