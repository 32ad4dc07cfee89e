"""Issue 22 through real ``skills-core serve`` processes: deploys never empty or freeze the catalog.

Real ``serve`` (stdio and ``--http``) subprocesses, a ``current`` link switched atomically with
``os.replace`` (what ``ln -sfn`` plus a rename does, and a Kubernetes ConfigMap's ``..data``), real
``SIGHUP``. What a broken server gets wrong, each asserted:

* roots resolved once at start: the switched link keeps serving v1, and once v1 is moved away it
  lists nothing and answers ``-32602`` for every skill, silently;
* ``SIGHUP`` not handled: the process dies (the signal's default), or nothing is re-scanned;
* two views: ``skills/list`` still lists a deleted skill that ``skills/get`` and reads deny.

Waiting is only ever for an expected change, up to a deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from fs_helpers import write
from http_helpers import exchange, free_port, modern_headers, rpc, serving
from interop_helpers import child_env, serve_argv
from server_helpers import meta, request, skill_md

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")

HOUR_MS = "3600000"
DEADLINE = 20.0


def release(base: Path, name: str, skills: dict[str, str]) -> Path:
    folder = base / "releases" / name
    write(folder, {f"{s}/SKILL.md": skill_md(s, body=text) for s, text in skills.items()})
    return folder


def switch(current: Path, target: Path) -> None:
    """Point ``current`` at ``target`` atomically: a new link, renamed over the old one."""
    staged = current.with_name(current.name + ".new")
    staged.symlink_to(target, target_is_directory=True)
    os.replace(staged, current)


@pytest.fixture
def deploy(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``current -> releases/v1`` (alpha, beta), and ``releases/v2`` (alpha changed, gamma)."""
    v1 = release(tmp_path, "v1", {"alpha": "one", "beta": "one"})
    v2 = release(tmp_path, "v2", {"alpha": "two", "gamma": "two"})
    current = tmp_path / "current"
    current.symlink_to(v1, target_is_directory=True)
    return current, v1, v2


V1 = ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]
V2 = ["skill://alpha/SKILL.md", "skill://gamma/SKILL.md"]


class Lines:
    """A process's stderr, read by a thread, as lines that can be waited for."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._queue: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def join(self) -> None:
        """Wait for the end of the stream (the process has exited)."""
        self._thread.join(timeout=DEADLINE)

    def _pump(self, stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            self._queue.put(line.decode("utf-8", "replace").rstrip("\n"))

    def wait_for(self, text: str, count: int = 1) -> list[str]:
        """Wait until ``count`` lines (in all) contain ``text``; return them."""
        deadline = time.monotonic() + DEADLINE
        while True:
            found = [line for line in self.seen if text in line]
            if len(found) >= count:
                return found
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {count} line(s) with {text!r} on stderr: {self.seen}")
            with contextlib.suppress(queue.Empty):
                self.seen.append(self._queue.get(timeout=remaining))

    def drain(self) -> list[str]:
        while True:
            try:
                self.seen.append(self._queue.get_nowait())
            except queue.Empty:
                return self.seen


class Stdio:
    """A ``skills-core serve`` over stdio, answering modern requests one at a time."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            serve_argv(*args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        self.stderr = Lines(self.process.stderr)
        self._id = 0

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._id += 1
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(json.dumps(request(method, params, request_id=self._id)).encode() + b"\n")
        stdin.flush()
        line = stdout.readline()
        assert line, f"the server exited ({self.process.poll()}): {self.stderr.drain()}"
        answer: dict[str, Any] = json.loads(line)
        assert answer["id"] == self._id
        return answer

    def listed(self) -> list[str]:
        result = self.send("skills/list")["result"]
        assert "nextCursor" not in result
        return [entry["uri"] for entry in result["skills"]]

    def read(self, uri: str) -> dict[str, Any]:
        return self.send("resources/read", {"uri": uri})

    def hangup(self) -> None:
        self.process.send_signal(signal.SIGHUP)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=15) == 0
        self.release()

    def release(self) -> None:
        """Close our ends of its pipes (it has exited)."""
        self.stderr.join()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                stream.close()


@pytest.fixture
def stdio_server() -> Iterator[list[Stdio]]:
    started: list[Stdio] = []
    yield started
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait(timeout=15)
        server.release()


def start(started: list[Stdio], *args: str) -> Stdio:
    server = Stdio(*args)
    started.append(server)
    return server


def text_of(answer: dict[str, Any]) -> str:
    text = answer["result"]["contents"][0]["text"]
    assert isinstance(text, str)
    return text


# -- stdio ------------------------------------------------------------------------------------


def test_stdio_sighup_rescans_a_switched_root_at_once(
    deploy: tuple[Path, Path, Path], stdio_server: list[Stdio], tmp_path: Path
) -> None:
    current, _, v2 = deploy
    s = start(stdio_server, "--ttl-ms", HOUR_MS, str(current))
    assert s.listed() == V1
    switch(current, v2)
    assert s.listed() == V1  # an hour's ttlMs: not looked at yet, and v1 is whole
    s.hangup()
    s.stderr.wait_for("reloaded: 2 skill(s) served")
    assert s.listed() == V2  # at once, no ttlMs waited
    assert "two" in text_of(s.read("skill://alpha/SKILL.md"))
    assert s.process.poll() is None  # SIGHUP's default would have ended it

    # The release moved away and the link left dangling: SIGHUP fails, loudly, and the catalog
    # stays (a broken server lists nothing and says nothing).
    v2.rename(tmp_path / "trash")
    s.hangup()
    (failed,) = s.stderr.wait_for("reload failed")
    assert str(current) in failed
    assert "catalog served is kept (2 skill(s))" in failed
    assert s.listed() == V2
    assert s.read("skill://gamma/SKILL.md")["error"]["code"] == -32603  # not "no such skill"

    (tmp_path / "trash").rename(v2)  # back
    s.hangup()
    s.stderr.wait_for("reloaded: 2 skill(s) served", count=2)
    assert s.listed() == V2
    s.close()


def test_stdio_follows_a_switch_within_ttl_and_keeps_the_catalog_while_the_root_is_gone(
    deploy: tuple[Path, Path, Path], stdio_server: list[Stdio], tmp_path: Path
) -> None:
    """LIST-09: a listing's ttlMs says how fresh it is, so a switch shows within it."""
    current, v1, v2 = deploy
    s = start(stdio_server, "--ttl-ms", "100", str(current))
    assert s.listed() == V1
    switch(current, v2)
    v1.rename(tmp_path / "old-release")  # as a deploy that prunes old releases does
    deadline = time.monotonic() + DEADLINE
    while (listed := s.listed()) != V2:
        assert listed == V1, listed  # never empty, never a mix
        assert time.monotonic() < deadline, "the switch never showed"
    s.stderr.wait_for(f"root {current} now leads to {v2}")

    v2.rename(tmp_path / "gone")
    deadline = time.monotonic() + DEADLINE
    while not s.stderr.drain() or not any("cannot be read" in x for x in s.stderr.seen):
        assert s.listed() == V2  # each poll fails, the catalog stays
        assert time.monotonic() < deadline, "the failure was never logged"
    for _ in range(5):
        assert s.listed() == V2
    (tmp_path / "gone").rename(v2)
    deadline = time.monotonic() + DEADLINE
    while not any("can be read again" in x for x in s.stderr.drain()):
        assert s.listed() == V2  # a poll looks at the root again
        assert time.monotonic() < deadline, "the recovery was never logged"
    s.stderr.wait_for(f"root {current} can be read again")
    assert len([x for x in s.stderr.drain() if "cannot be read" in x]) == 1  # once, not per poll
    s.close()


def test_stdio_one_view_after_a_delete_and_an_edit(
    tmp_path: Path, stdio_server: list[Stdio]
) -> None:
    """A read that finds a listed file gone or changed makes the very next listing agree; GET-07:
    skills/get answers the skill as it is now (gone: -32602)."""
    root = tmp_path / "skills"
    write(root, {"a/SKILL.md": skill_md("a"), "a/ref.md": b"old text", "b/SKILL.md": skill_md("b")})
    s = start(stdio_server, "--ttl-ms", HOUR_MS, str(root))
    assert s.listed() == ["skill://a/SKILL.md", "skill://b/SKILL.md"]

    def ref_entry() -> dict[str, Any]:
        skills = s.send("skills/list")["result"]["skills"]
        (entry,) = (e for e in skills if e["uri"] == "skill://a/SKILL.md")
        return next(r for r in entry["resources"] if r["uri"] == "skill://a/ref.md")

    before = ref_entry()
    (root / "a/ref.md").write_bytes(b"new text")  # same size: only the digest tells
    assert text_of(s.read("skill://a/ref.md")) == "new text"
    after = ref_entry()
    assert after["digest"] != before["digest"]

    for name in ("ref.md", "SKILL.md"):
        (root / "a" / name).unlink()
    assert s.read("skill://a/ref.md")["error"]["code"] == -32602
    assert s.listed() == ["skill://b/SKILL.md"]  # at once, an hour's ttlMs notwithstanding
    assert s.send("skills/get", {"uri": "skill://a/SKILL.md"})["error"]["code"] == -32602
    s.close()


# -- HTTP -------------------------------------------------------------------------------------


def http_listed(port: int) -> list[str]:
    answer = exchange(
        port, "POST", "/mcp", modern_headers("skills/list"), rpc("skills/list", {"_meta": meta()})
    )
    assert answer.status == 200, answer.body
    return [entry["uri"] for entry in answer.json()["result"]["skills"]]


class FileLines:
    """The stderr of a :func:`serving` process (a file), as lines that can be waited for."""

    def __init__(self, read: Callable[[], str]) -> None:
        self._read = read

    def wait_for(self, text: str, count: int = 1) -> list[str]:
        """Wait until ``count`` lines (in all) contain ``text``; return them."""
        deadline = time.monotonic() + DEADLINE
        while True:
            seen = self._read().splitlines()
            found = [line for line in seen if text in line]
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"no {count} line(s) with {text!r} on stderr: {seen}")
            time.sleep(0.05)


def workers_of(pid: int) -> list[int]:
    """The worker processes uvicorn's supervisor ``pid`` started (Linux ``/proc``), not the
    other children of the supervisor (multiprocessing's resource tracker)."""
    workers: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
            for child in map(int, handle.read().split()):
                with open(f"/proc/{child}/cmdline", "rb") as cmdline:
                    if b"spawn_main" in cmdline.read():
                        workers.append(child)
    return workers


def test_http_sighup_rescans_in_the_worker(deploy: tuple[Path, Path, Path]) -> None:
    pytest.importorskip("uvicorn")
    current, _, v2 = deploy
    with serving(current, "--ttl-ms", HOUR_MS) as served:
        lines = FileLines(served.stderr)
        assert http_listed(served.port) == V1
        switch(current, v2)
        assert http_listed(served.port) == V1
        served.process.send_signal(signal.SIGHUP)
        lines.wait_for("reloaded: 2 skill(s) served")
        assert http_listed(served.port) == V2
        assert served.process.poll() is None


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="Linux /proc")
def test_http_sighup_rescans_each_worker_it_is_sent_to(deploy: tuple[Path, Path, Path]) -> None:
    """With --workers 2, each worker process reloads on its own SIGHUP, in place (a worker
    without the handler would die of it and be replaced: no "reloaded" line)."""
    pytest.importorskip("uvicorn")
    current, _, v2 = deploy
    with serving(current, "--ttl-ms", HOUR_MS, "--workers", "2") as served:
        lines = FileLines(served.stderr)
        deadline = time.monotonic() + DEADLINE
        while len(workers := workers_of(served.process.pid)) < 2:
            assert time.monotonic() < deadline, workers
            time.sleep(0.05)
        # each worker installs its handler before it loads: once both say they are ready, a
        # SIGHUP finds each with its handler (before, it would die of it and be replaced)
        lines.wait_for("ready: 2 skill(s) loaded", count=2)
        switch(current, v2)
        for worker in workers:
            os.kill(worker, signal.SIGHUP)
        lines.wait_for("reloaded: 2 skill(s) served", count=2)
        assert all(http_listed(served.port) == V2 for _ in range(8))
        assert sorted(workers_of(served.process.pid)) == sorted(workers)  # none replaced


def test_http_one_worker_survives_a_sighup_sent_while_it_starts(tmp_path: Path) -> None:
    """SIGHUP from the moment the command has started (its first line on stderr) until it answers:
    before the app installs its reload handler, the signal's default action would end the server
    (one worker is the serving process itself)."""
    pytest.importorskip("uvicorn")
    root = release(tmp_path, "v1", {"alpha": "one"})
    port = free_port()
    argv = [sys.executable, "-m", "skills_core", "serve", "--http", f"127.0.0.1:{port}"]
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [*argv, str(root)],
            env=child_env({}),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        FileLines(lambda: log.read_text(errors="replace")).wait_for("worker(s)")
        deadline = time.monotonic() + DEADLINE
        answered = False
        while not answered and process.poll() is None and time.monotonic() < deadline:
            process.send_signal(signal.SIGHUP)
            time.sleep(0.02)
            with contextlib.suppress(OSError, AssertionError):
                answered = http_listed(port) == ["skill://alpha/SKILL.md"]
        assert process.poll() is None, f"serve --http died of SIGHUP (status {process.returncode})"
        assert answered
    finally:
        process.terminate()
        process.wait(timeout=30)
