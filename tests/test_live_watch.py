"""Changes pushed, end to end with real processes: ``skills-core host ... watch`` against ``serve``.

A skill is added, edited and removed while the host is connected; each change must be reported
within ``ttlMs`` plus the pacer's window (plus scheduling slack). Both eras, over stdio and over
Streamable HTTP; an edited approved skill is refused until approved again.
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
from pathlib import Path

import pytest
from http_helpers import serving

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
TTL_MS = 300
#: ttlMs + the window (0.2 s) + a re-list; generous slack for a loaded CI machine.
DEADLINE = TTL_MS / 1000 + 0.2 + 3.0


def write_skill(root: Path, name: str, body: str = "body\n") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}"
    )


def serve_argv(root: Path) -> str:
    return f"{PY} -m skills_core serve --ttl-ms {TTL_MS} {root}"


class Watcher:
    """``skills-core host ... watch --json`` as a process, its stdout read line by line."""

    def __init__(self, server: str, era: str) -> None:
        self.process = subprocess.Popen(
            [
                PY,
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
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        self.buffer = b""
        self.wait_for_stderr(b"watching")

    def wait_for_stderr(self, marker: bytes) -> None:
        assert self.process.stderr is not None
        seen = b""
        deadline = time.monotonic() + 30
        while marker not in seen:
            assert time.monotonic() < deadline, seen
            ready, _, _ = select.select([self.process.stderr], [], [], 1)
            if ready:
                chunk = os.read(self.process.stderr.fileno(), 4096)
                assert chunk, seen
                seen += chunk

    def next_change(self, within: float) -> dict[str, str]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + within
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "no change reported in time"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 4096)
                assert chunk, "watch ended"
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        record: dict[str, str] = json.loads(line)
        return record

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


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_watch_reports_add_edit_remove_push_03_push_06_push_09(
    tmp_path: Path, era: str, transport: str
) -> None:
    """PUSH-03/PUSH-06 on the wire, PUSH-09 in the host: each change reported within the bound."""
    write_skill(tmp_path, "alpha")
    with contextlib.ExitStack() as stack:
        if transport == "http":
            served = stack.enter_context(serving(tmp_path, "--ttl-ms", str(TTL_MS)))
            server = f"s={served.url}"
        else:
            server = f"s={serve_argv(tmp_path)}"
        _watch_changes(tmp_path, Watcher(server, era))


def _watch_changes(tmp_path: Path, watcher: Watcher) -> None:
    try:
        write_skill(tmp_path, "beta")
        assert watcher.next_change(DEADLINE) == {
            "server": "s",
            "change": "added",
            "uri": "skill://beta/SKILL.md",
        }
        time.sleep(0.05)
        write_skill(tmp_path, "alpha", "edited body\n")
        assert watcher.next_change(DEADLINE)["change"] == "changed"
        shutil.rmtree(tmp_path / "beta")
        assert watcher.next_change(DEADLINE) == {
            "server": "s",
            "change": "removed",
            "uri": "skill://beta/SKILL.md",
        }
    finally:
        assert watcher.stop() == 0


def test_edited_approved_skill_is_refused_until_reapproved_push_10(tmp_path: Path) -> None:
    """PUSH-10: approvals bind to the manifest; an edit makes the stored approval not cover it."""
    write_skill(tmp_path, "alpha")
    approvals = tmp_path / "approvals.json"
    server = f"s={serve_argv(tmp_path / 'skills')}"
    (tmp_path / "skills").mkdir()
    shutil.move(str(tmp_path / "alpha"), str(tmp_path / "skills" / "alpha"))

    def host(*argv: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [
                PY,
                "-m",
                "skills_core",
                "host",
                "--server",
                server,
                "--approvals",
                str(approvals),
                *list(argv),
            ],
            capture_output=True,
            cwd=ROOT,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    assert host("--yes", "load", "s:alpha").returncode == 0
    assert host("load", "s:alpha").returncode == 0  # the stored approval covers it
    write_skill(tmp_path / "skills", "alpha", "new instructions\n")
    refused = host("load", "s:alpha")
    assert refused.returncode == 4, refused.stderr
    assert b"new instructions" not in refused.stdout
    assert host("--yes", "load", "s:alpha").returncode == 0  # approved again
    assert b"new instructions" in host("load", "s:alpha").stdout
