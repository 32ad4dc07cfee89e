"""Changes pushed by the asyncio and trio servers, end to end with real processes and peers.

* The asyncio and the trio ``serve_stdio`` (``tests/async_stdio_server.py``: a folder served by
  each, over a :class:`~skills_core.server.ServerConnection` or a
  :class:`~skills_core.adapters.loading.LoadingConnection` whose catalog loads for a second)
  against ``skills-core host ... watch --json`` and the TypeScript SDK 2.4.0 client's
  ``listen()``, both eras: a skill added, edited and removed is reported within ``ttlMs`` plus
  the pacer's window (plus slack); a cancelled server ends the listen stream with its result; a
  re-scan that changes no entry sends nothing.
* The ASGI app under ``hypercorn --worker-class trio`` (and its asyncio worker): the legacy
  session's GET stream and the 2026-07-28 listen stream, the same peers, and the listen result
  when hypercorn stops.

Skills are added and edited whole here (:func:`publish`, a rename). A plain rewrite truncates
the file first, and a look that lands between the truncation and the write sees the skill gone:
the pacer then announces that (its window holds the announcement, but the catalog it reports was
scanned at the look, and the next scan may come only ``ttlMs`` later), and a second
notification follows. That is the server's pacing, the same under every loop, not what these
tests are about.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_helpers import free_port, require_node_tools, stop, wait_until_answering
from interop_helpers import child_env
from test_live_peers import SUB_ID, TsClient
from test_live_watch import Watcher

PY = sys.executable
HERE = Path(__file__).resolve().parent
TTL_MS = 300
#: ttlMs + the window (0.2 s) + a re-list; generous slack for a loaded CI machine.
DEADLINE = TTL_MS / 1000 + 0.2 + 3.0
#: Seconds a client is given to see nothing after a re-scan that changes no entry: several looks.
QUIET = 4 * TTL_MS / 1000 + 0.2 + 0.5
KEY = "k" * 64
BACKENDS = ["asyncio", "trio"]


def write_skill(root: Path, name: str, body: str = "body\n") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}"
    )


def publish(root: Path, name: str, body: str = "body\n") -> None:
    """Add or replace a skill whole (a rename): no look can see its SKILL.md half written. (A
    plain rewrite truncates first: a look between the truncation and the write sees the skill
    gone, and the pacer's window does not hide that; see the module docstring.)"""
    staging = root.parent / f".staging-{name}"
    shutil.rmtree(staging, ignore_errors=True)
    write_skill(staging, name, body)
    if (root / name).exists():
        os.replace(staging / name / "SKILL.md", root / name / "SKILL.md")
    else:
        os.rename(staging / name, root / name)
    shutil.rmtree(staging)


def launcher(backend: str, mode: str, root: Path) -> list[str]:
    """The command serving ``root`` with ``backend``'s serve_stdio."""
    return [PY, str(HERE / "async_stdio_server.py"), backend, mode, str(TTL_MS), str(root)]


def report_add_edit_remove(root: Path, watcher: Watcher) -> None:
    """Add, edit and remove a skill; each must be reported in time (PUSH-03/06/09)."""
    try:
        publish(root, "beta")
        assert watcher.next_change(DEADLINE) == {
            "server": "s",
            "change": "added",
            "uri": "skill://beta/SKILL.md",
        }
        publish(root, "alpha", "edited body\n")
        assert watcher.next_change(DEADLINE) == {
            "server": "s",
            "change": "changed",
            "uri": "skill://alpha/SKILL.md",
        }
        shutil.rmtree(root / "beta")
        assert watcher.next_change(DEADLINE) == {
            "server": "s",
            "change": "removed",
            "uri": "skill://beta/SKILL.md",
        }
    finally:
        assert watcher.stop() == 0


def check_session(client: TsClient, root: Path, mode: str) -> dict[str, object]:
    """The TS client's session: capabilities (PUSH-01), the honored filter (PUSH-06), a skill
    added and one edited, each notified (tagged with the listen id on 2026-07-28: PUSH-07; on
    2025-11-25 also ``updated`` for the URI it subscribed to: PUSH-04)."""
    ready = client.next()
    assert ready["event"] == "ready"
    capabilities = ready["capabilities"]
    assert isinstance(capabilities, dict)
    assert capabilities["resources"] == {"listChanged": True, "subscribe": True}
    modern = mode == "pin"
    assert ready["negotiated"] == ("2026-07-28" if modern else "2025-11-25")
    if modern:
        assert ready["honored"] == {"resourcesListChanged": True}
    publish(root, "beta")
    event = client.next(DEADLINE)
    assert event == {"event": "list_changed", "meta": {SUB_ID: "listen:0"} if modern else None}
    publish(root, "alpha", "edited\n")
    event = client.next(DEADLINE)
    assert event == {"event": "list_changed", "meta": {SUB_ID: "listen:0"} if modern else None}
    if not modern:
        assert client.next(DEADLINE) == {
            "event": "updated",
            "uri": "skill://alpha/SKILL.md",
            "meta": None,
        }
    return ready


# --- the asyncio and trio stdio servers ---------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("mode", ["plain", "loading"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_host_watch_against_async_stdio_push_03_push_05_push_06_push_09(
    tmp_path: Path, backend: str, mode: str, era: str
) -> None:
    """PUSH-03 (legacy: list_changed on the connection), PUSH-06 (modern: on the listen stream),
    PUSH-05 (within ttlMs + the window), PUSH-09 (the host reports each change) against the
    asyncio and trio serve_stdio; ``loading``: the catalog loads on a thread meanwhile."""
    root = tmp_path / "skills"
    write_skill(root, "alpha")
    argv = " ".join(launcher(backend, mode, root))
    report_add_edit_remove(root, Watcher(f"s={argv}", era))


@pytest.mark.parametrize("mode", ["pin", "legacy"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_ts_client_against_async_stdio_push_03_push_04_push_06_push_07_push_08(
    tmp_path: Path, backend: str, mode: str
) -> None:
    """The TS SDK client: listen() tagged notifications (PUSH-06/07) and, when the server task is
    cancelled (SIGTERM in the launcher), the listen result (PUSH-08); legacy list_changed and
    updated for its subscribed URI (PUSH-03/04)."""
    require_node_tools()
    root = tmp_path / "skills"
    write_skill(root, "alpha")
    client = TsClient(mode, launcher(backend, "plain", root))
    try:
        ready = check_session(client, root, mode)
        if mode == "pin":
            pid = ready["pid"]
            assert isinstance(pid, int)
            os.kill(pid, signal.SIGTERM)
            assert client.next(DEADLINE) == {"event": "closed", "cause": "graceful"}
    finally:
        client.close()


class RawClient:
    """A server process spoken to line by line: what it writes, and what it does not."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.buffer = b""

    def send(self, message: dict[str, object]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def next(self, within: float) -> dict[str, object] | None:
        """The next message, or None when ``within`` seconds pass without one."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + within
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, "the server closed its output"
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        message: dict[str, object] = json.loads(line)
        return message

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            assert self.process.stdout is not None
            self.process.stdout.close()


def open_session(client: RawClient, era: str) -> None:
    if era == "legacy":
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
        client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        answer = client.next(30)
        assert answer is not None
        assert answer["id"] == 1
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"_meta": meta, "notifications": {"resourcesListChanged": True}}
    client.send({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params})
    ack = client.next(30)
    assert ack is not None
    assert ack["method"] == "notifications/subscriptions/acknowledged"


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_rescan_with_equal_entries_sends_nothing_push_02(
    tmp_path: Path, backend: str, era: str
) -> None:
    """PUSH-02 over the async loops: a SKILL.md rewritten with the same bytes and a new mtime
    makes the server re-scan and find equal entries, which is no change: nothing is written.
    A real edit then is (the channel works, so the silence before means something)."""
    root = tmp_path / "skills"
    write_skill(root, "alpha")
    client = RawClient(launcher(backend, "plain", root))
    try:
        open_session(client, era)
        skill = root / "alpha" / "SKILL.md"
        for step in (1, 2):
            publish(root, "alpha")  # the same bytes, a new file
            later = time.time() + 10 * step
            os.utime(skill, (later, later))
            assert client.next(QUIET) is None
        publish(root, "alpha", "edited\n")
        pushed = client.next(DEADLINE)
        assert pushed is not None
        assert pushed["method"] == "notifications/resources/list_changed"
        assert pushed.get("params") == (None if era == "legacy" else {"_meta": {SUB_ID: 7}})
        assert client.next(QUIET) is None  # one edit, one notification (PUSH-05)
    finally:
        client.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_regular_file_as_input_is_read_whole_with_the_timer_on(
    tmp_path: Path, backend: str
) -> None:
    """With the change timer on, stdin that the event loop cannot watch (a regular file: asyncio
    reads it in a worker thread, the read kept across the timer's wakeups) is read whole: each
    request is answered, in order, and the loop ends at the end of the input."""
    import asyncio

    import trio

    from skills_core.adapters import asyncio_stdio, trio_stdio
    from skills_core.server import ServerOptions, server_from_roots

    root = tmp_path / "skills"
    write_skill(root, "alpha")
    server = server_from_roots([root], cursor_key=b"k" * 32, options=ServerOptions(ttl_ms=0))
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    wire = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}]
    wire.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wire += [{"jsonrpc": "2.0", "id": n, "method": "resources/list"} for n in range(1, 40)]
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(b"".join(json.dumps(message).encode() + b"\n" for message in wire))
    answers = tmp_path / "out.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        serve = asyncio_stdio.serve_stdio if backend == "asyncio" else trio_stdio.serve_stdio
        served = serve(server.connection(), stdin_fd=stdin.fileno(), stdout_fd=stdout.fileno())
        if backend == "asyncio":
            asyncio.run(served)
        else:
            trio.run(lambda: served)
    lines = [json.loads(line) for line in answers.read_bytes().splitlines()]
    assert [line["id"] for line in lines] == list(range(40))
    assert lines[-1]["result"]["resources"][0]["uri"] == "skill://alpha/SKILL.md"


# --- the ASGI app under hypercorn's trio worker -------------------------------------------------


@contextlib.contextmanager
def hypercorn(root: Path, worker: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``hypercorn --worker-class WORKER`` serving ``root`` (a graceful timeout of 1 s)."""
    port = free_port()
    env = {
        "SKILLS_CORE_ROOTS": str(root),
        "SKILLS_CORE_CURSOR_KEY": KEY,
        "SKILLS_CORE_TTL_MS": str(TTL_MS),
    }
    process = subprocess.Popen(
        [
            *(PY, "-m", "hypercorn", "skills_core.adapters.asgi:app_from_env()"),
            *("--worker-class", worker, "--bind", f"127.0.0.1:{port}"),
            *("--graceful-timeout", "1"),
        ],
        env=child_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until_answering(port)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        stop(process)


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("worker", ["trio", "asyncio"])
def test_host_watch_against_hypercorn_push_03_push_06_push_09(
    tmp_path: Path, worker: str, era: str
) -> None:
    """Under hypercorn's trio worker (and its asyncio one): the legacy session's GET stream
    (PUSH-03) and the listen stream (PUSH-06) carry each change in time, and the host reports it
    (PUSH-09)."""
    root = tmp_path / "skills"
    write_skill(root, "alpha")
    with hypercorn(root, worker) as (url, _):
        report_add_edit_remove(root, Watcher(f"s={url}", era))


@pytest.mark.parametrize("mode", ["pin", "legacy"])
@pytest.mark.parametrize("worker", ["trio", "asyncio"])
def test_ts_client_against_hypercorn_push_03_push_04_push_06_push_07_push_08(
    tmp_path: Path, worker: str, mode: str
) -> None:
    """The TS SDK client under hypercorn's trio worker (and its asyncio one): tagged
    notifications on its listen stream (PUSH-06/07) and the listen result when hypercorn stops
    (PUSH-08: at its graceful timeout, as hypercorn tells the app nothing when its drain
    begins); legacy: the GET stream's list_changed and updated (PUSH-03/04)."""
    require_node_tools()
    root = tmp_path / "skills"
    write_skill(root, "alpha")
    with hypercorn(root, worker) as (url, process):
        client = TsClient(mode, [url])
        try:
            check_session(client, root, mode)
            if mode == "pin":
                process.send_signal(signal.SIGTERM)  # hypercorn's own process: its shutdown
                assert client.next(DEADLINE) == {"event": "closed", "cause": "graceful"}
        finally:
            client.close()
