"""Real peers over HTTP: our host against FastMCP 4.1.6's HTTP app and the mcp 2.3.0 SDK's server.

Both run under uvicorn in a child process (``tests/peers/http_server.py``) on the SDK's streamable
HTTP transport: legacy sessions, and its modern handler, which refuses a request whose
``MCP-Protocol-Version``, ``Mcp-Method`` or ``Mcp-Name`` header disagrees with the body, so every
modern exchange here also checks our headers (HTTP-31).

* FastMCP serves skills in the modern era only (as over stdio): our host negotiates modern by
  itself, loads ``pdf-processing`` and reads a file, every byte verified, with SSE answers
  (FastMCP's default) and with JSON answers. Pinned legacy, it gets an ``initialize`` session
  and no skills, which the host reports.
* The SDK's own ``MCPServer`` knows no skills; it is the transport peer in both eras: handshake
  (auto, modern, legacy), a ``resources/read`` through the same requester (``Mcp-Name`` checked by
  the server), SSE and JSON answers, sessions (DELETE at close) and stateless mode.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from interop_helpers import PEERS, child_env, new_host, write_spec_skill
from test_http_client import assert_spec_skill, host_cli, load_and_read

from skills_core.adapters.http_client import open_http_client
from skills_core.host.driver import CLIENT_INFO, handshake
from skills_core.jsonvalue import JSONValue
from skills_core.messages import Era, request_meta

SERVER = PEERS / "http_server.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def serving(*args: str) -> Iterator[str]:
    """Start ``http_server.py ARGS... PORT``; yield its URL once it accepts connections."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), *args[:2], str(port), *args[2:]]
        if args[0] == "fastmcp"
        else [sys.executable, str(SERVER), args[0], str(port), *args[1:]],
        cwd=PEERS,
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                stderr = process.stderr.read() if process.stderr else b""
                raise AssertionError(f"the peer did not start: {stderr.decode(errors='replace')}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


@pytest.fixture(scope="module")
def skills_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("skills")
    write_spec_skill(root)
    return root


@pytest.mark.parametrize("answers", [[], ["--json"]], ids=["sse", "json"])
def test_our_host_loads_from_fastmcp_over_http(skills_root: Path, answers: list[str]) -> None:
    with serving("fastmcp", str(skills_root), *answers) as url:

        async def main() -> None:
            async with open_http_client(url, label="fastmcp") as client:
                assert_spec_skill(await load_and_read(client))
                assert client.era is Era.MODERN

        anyio.run(main)


def test_fastmcp_over_http_through_the_cli_in_both_eras(skills_root: Path) -> None:
    with serving("fastmcp", str(skills_root)) as url:
        read = host_cli(
            "--server", f"f={url}", "--yes", "read", "f:pdf-processing", "templates/invoice.md"
        )
        assert read.returncode == 0, read.stderr
        assert "integrity: matches the skill's approved manifest" in read.stdout
        legacy = host_cli("--server", f"f={url}", "--protocol-era", "legacy", "list")
        assert legacy.returncode == 0, legacy.stderr
        assert "does not declare the skills extension" in legacy.stdout + legacy.stderr


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize(
    ("options", "era"),
    [
        ([], None),
        ([], Era.MODERN),
        ([], Era.LEGACY),
        (["--json"], Era.LEGACY),
        (["--stateless"], Era.LEGACY),
        (["--json", "--stateless"], None),
    ],
    ids=[
        "sse-auto",
        "sse-modern",
        "sse-legacy",
        "json-legacy",
        "stateless-legacy",
        "json-stateless-auto",
    ],
)
@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object PoolByteStream.__aiter__"
    ":pytest.PytestUnraisableExceptionWarning"
)
def test_the_mcp_sdk_server_in_both_eras(options: list[str], era: Era | None, backend: str) -> None:
    """HTTP-30..HTTP-37 against the mcp SDK: the handshake and a resources/read in either era."""
    with serving("sdk", *options) as url:

        async def main() -> tuple[Era | None, dict[str, JSONValue]]:
            async with open_http_client(url, label="sdk") as client:
                host = new_host()
                await handshake(host, "sdk", client, timeout=10, era=era)
                params: dict[str, object] = {"uri": "note://greeting"}
                if client.era is Era.MODERN:
                    params["_meta"] = request_meta(CLIENT_INFO)
                result = await client.request("resources/read", params, timeout=10)
                if client.era is Era.LEGACY and "--stateless" not in options:
                    assert client.session is not None
                    assert client.session.session_id  # the SDK issues one; DELETE at close
                return client.era, result

        negotiated, result = anyio.run(main, backend=backend)
    assert negotiated is (era or Era.MODERN)
    contents: Any = result["contents"]
    assert [(c["uri"], c["text"]) for c in contents] == [
        ("note://greeting", "hello from the mcp SDK")
    ]
