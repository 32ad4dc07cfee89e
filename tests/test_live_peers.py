"""Changes pushed to real peers: the TypeScript SDK 2.4.0 client against ``skills-core serve``.

Over stdio and Streamable HTTP, in both eras: on 2026-07-28 the client opens
``subscriptions/listen`` (``client.listen()``), gets the acknowledgement with the honored filter,
then ``notifications/resources/list_changed`` tagged with its id, and the stream's graceful end
(the listen result) when the server is stopped; on 2025-11-25 it gets the notification unasked
(over HTTP on the session's GET stream) and ``notifications/resources/updated`` for the URI it
subscribed to (``tests/node/ts_listen_client.mjs``).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from http_helpers import NODE, NODE_DIR, node_env, require_node_tools, serving

SUB_ID = "io.modelcontextprotocol/subscriptionId"
TTL_MS = 300
DEADLINE = 5.0


def write_skill(root: Path, name: str, body: str = "body\n") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}"
    )


class TsClient:
    """``ts_listen_client.mjs`` as a process; its JSON lines read one by one."""

    def __init__(self, mode: str, target: list[str]) -> None:
        self.process = subprocess.Popen(
            [str(NODE), str(NODE_DIR / "ts_listen_client.mjs"), mode, *target],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=node_env(),
        )
        self.buffer = b""

    def next(self, within: float = 30.0) -> dict[str, object]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + within
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "nothing from the TS client in time"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 4096)
                if not chunk:
                    assert self.process.stderr is not None
                    raise AssertionError(self.process.stderr.read().decode(errors="replace"))
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        record: dict[str, object] = json.loads(line)
        return record

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            for pipe in (self.process.stdout, self.process.stderr):
                if pipe is not None:
                    pipe.close()


def check_session(client: TsClient, root: Path, mode: str) -> dict[str, object]:
    ready = client.next()
    assert ready["event"] == "ready"
    capabilities = ready["capabilities"]
    assert isinstance(capabilities, dict)
    assert capabilities["resources"] == {"listChanged": True, "subscribe": True}  # PUSH-01
    modern = mode == "pin"
    assert ready["negotiated"] == ("2026-07-28" if modern else "2025-11-25")
    if modern:  # PUSH-06: only what this server can deliver is honored
        assert ready["honored"] == {"resourcesListChanged": True}
    write_skill(root, "beta")
    event = client.next(DEADLINE)
    assert event["event"] == "list_changed"
    assert event["meta"] == ({SUB_ID: "listen:0"} if modern else None)  # PUSH-07
    write_skill(root, "alpha", "edited\n")
    event = client.next(DEADLINE)
    assert event["event"] == "list_changed"
    if not modern:  # PUSH-04: it subscribed to alpha's SKILL.md
        assert client.next(DEADLINE) == {
            "event": "updated",
            "uri": "skill://alpha/SKILL.md",
            "meta": None,
        }
    return ready


@pytest.mark.parametrize("mode", ["pin", "legacy"])
def test_ts_client_over_stdio_push_03_push_04_push_06_push_07_push_08(
    tmp_path: Path, mode: str
) -> None:
    """The TS SDK client's listen() (2026-07-28) and legacy handler against serve over stdio."""
    require_node_tools()
    write_skill(tmp_path, "alpha")
    argv = [sys.executable, "-m", "skills_core", "serve", "--ttl-ms", str(TTL_MS), str(tmp_path)]
    client = TsClient(mode, argv)
    try:
        ready = check_session(client, tmp_path, mode)
        if mode == "pin":  # PUSH-08: the server stops, the stream ends gracefully
            pid = ready["pid"]
            assert isinstance(pid, int)
            os.kill(pid, signal.SIGTERM)
            assert client.next(DEADLINE) == {"event": "closed", "cause": "graceful"}
    finally:
        client.close()


@pytest.mark.parametrize("mode", ["pin", "legacy"])
def test_ts_client_over_http_push_03_push_04_push_06_push_07_push_08(
    tmp_path: Path, mode: str
) -> None:
    """The same over Streamable HTTP: a listen POST's stream, or the legacy session's GET."""
    require_node_tools()
    write_skill(tmp_path, "alpha")
    with serving(tmp_path, "--ttl-ms", str(TTL_MS)) as served:
        client = TsClient(mode, [served.url])
        try:
            check_session(client, tmp_path, mode)
            if mode == "pin":
                os.killpg(served.process.pid, signal.SIGTERM)
                assert client.next(DEADLINE) == {"event": "closed", "cause": "graceful"}
        finally:
            client.close()


# --- our host against the TypeScript SDK 2.4.0 skills server -----------------------------------


class HostWatch:
    """``skills-core host --server S --protocol-era ERA watch --json`` as a process."""

    def __init__(self, server: str, era: str, *extra: str) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skills_core",
                "host",
                "--server",
                server,
                "--protocol-era",
                era,
                "--timeout",
                "20",
                "watch",
                "--json",
                "--relist-interval",
                "0.2",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=node_env(),
        )
        self.out = TsClient.__new__(TsClient)  # reuse the line reader on our stdout
        self.out.process = self.process
        self.out.buffer = b""

    def wait_watching(self) -> None:
        assert self.process.stderr is not None
        seen = b""
        deadline = time.monotonic() + 60
        while b"watching" not in seen:
            assert time.monotonic() < deadline, seen
            assert self.process.poll() is None, seen + self.process.stderr.read()
            ready, _, _ = select.select([self.process.stderr], [], [], 1)
            if ready:
                seen += os.read(self.process.stderr.fileno(), 4096)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            for pipe in (self.process.stdout, self.process.stderr):
                if pipe is not None:
                    pipe.close()


def reload_and_expect(watch: HostWatch, root: Path, pidfile: Path) -> None:
    """Add a skill and remove it, each followed by the TS catalog's reload() (SIGUSR2)."""
    pid = int(pidfile.read_text())
    write_skill(root, "beta")
    os.kill(pid, signal.SIGUSR2)
    assert watch.out.next(DEADLINE) == {
        "server": "s",
        "change": "added",
        "uri": "skill://beta/SKILL.md",
    }
    for path in sorted((root / "beta").rglob("*"), reverse=True):
        path.unlink()
    (root / "beta").rmdir()
    os.kill(pid, signal.SIGUSR2)
    assert watch.out.next(DEADLINE) == {
        "server": "s",
        "change": "removed",
        "uri": "skill://beta/SKILL.md",
    }


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_our_host_against_the_ts_skills_server_over_stdio_push_09(tmp_path: Path, era: str) -> None:
    """PUSH-09: the TS server's reload() sends list_changed (modern: on our listen stream)."""
    require_node_tools()
    root = tmp_path / "skills"
    write_skill(root, "alpha")
    pidfile = tmp_path / "pid"
    script = NODE_DIR / "ts_live_skills_server.mjs"
    watch = HostWatch(f"s={NODE} {script} {root} {pidfile} stdio", era)
    try:
        watch.wait_watching()
        reload_and_expect(watch, root, pidfile)
    finally:
        assert watch.stop() == 0


def test_our_host_against_the_ts_skills_server_over_http_push_09(tmp_path: Path) -> None:
    """PUSH-09 over HTTP (2026-07-28): the handler's notify.resourcesChanged() reaches our
    listen stream; on 2025-11-25 that server offers no GET stream, so watch says so and re-lists
    it every --poll-interval seconds (with --poll-interval 0 it exits 2)."""
    require_node_tools()
    root = tmp_path / "skills"
    write_skill(root, "alpha")
    pidfile = tmp_path / "pid"
    server = subprocess.Popen(
        [
            str(NODE),
            str(NODE_DIR / "ts_live_skills_server.mjs"),
            str(root),
            str(pidfile),
            "http",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=node_env(),
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline().decode()
        assert line.startswith("listening "), line
        url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"
        watch = HostWatch(f"s={url}", "modern")
        try:
            watch.wait_watching()
            reload_and_expect(watch, root, pidfile)
        finally:
            assert watch.stop() == 0
        # 2025-11-25: no GET stream on that server, so the watch re-lists it on a timer
        polled = HostWatch(f"s={url}", "legacy", "--poll-interval", "0.5")
        try:
            polled.wait_watching()
            reload_and_expect(polled, root, pidfile)
        finally:
            assert polled.stop() == 0
        legacy = HostWatch(f"s={url}", "legacy", "--poll-interval", "0")
        try:
            assert legacy.process.wait(timeout=60) == 2
            assert legacy.process.stderr is not None
            assert b"offers no notification stream" in legacy.process.stderr.read()
        finally:
            legacy.stop()
    finally:
        server.terminate()
        server.wait(timeout=20)
        assert server.stdout is not None
        server.stdout.close()
