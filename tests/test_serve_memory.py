"""A server's memory stays bounded however a client pipelines (issue: ``serve`` amplified memory).

A client writes 40 ``resources/read`` of a 2 MiB binary file in one write (each answer is a
2.8 MB line of base64) and reads nothing for half a second. The server must write each answer as
it makes it and stop reading while its output is not taken: its peak resident memory may grow by
a few answers, not by forty. Before the fix, every answer to one input chunk was built and joined
before anything was written: 40 answers and their join, over 200 MB here (4.1 GB for 250 reads of
8 MiB). Measured for ``skills-core serve`` (the blocking adapter), the asyncio and trio adapters
and ``examples/tcp_server.py``, from the peak resident set (``VmHWM``) of the server process.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "tests" / "peers"
#: 2 MiB that are not UTF-8, so each answer is base64: 2,796,204 bytes of it.
BIG = bytes(range(256)) * (8 << 10)
REQUESTS = 40
#: What the growth of the peak may reach, in answers. A fixed server holds one answer and its
#: intermediate forms (the file, its base64 text, the encoded result, the response line).
BOUND_IN_ANSWERS = 8
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc (Linux)"
)


def read_line(request_id: int, uri: str) -> bytes:
    params = {"uri": uri, "_meta": META}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "resources/read", "params": params}
    return json.dumps(message).encode() + b"\n"


def peak_rss(pid: int) -> int:
    """The peak resident set of a live process, in bytes (``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")  # pragma: no cover


def skills_folder(tmp_path: Path) -> Path:
    skill = tmp_path / "skills" / "big"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_bytes(b"---\nname: big\ndescription: One large file\n---\n")
    (skill / "big.bin").write_bytes(BIG)
    return tmp_path / "skills"


def check_answers(lines: Iterator[bytes], first_id: int) -> None:
    digest = hashlib.sha256(BIG).digest()
    for request_id in range(first_id, first_id + REQUESTS):
        answer = json.loads(next(lines))
        assert answer["id"] == request_id
        [item] = answer["result"]["contents"]
        assert hashlib.sha256(base64.b64decode(item["blob"])).digest() == digest


def assert_bounded(pid: int, send: Callable[[bytes], None], lines: Iterator[bytes]) -> None:
    """Handshake with one small read, then pipeline the large reads without reading for a while."""
    send(read_line(0, "skill://big/SKILL.md"))
    assert json.loads(next(lines))["result"]["contents"][0]["uri"] == "skill://big/SKILL.md"
    before = peak_rss(pid)
    send(b"".join(read_line(n, "skill://big/big.bin") for n in range(1, REQUESTS + 1)))
    time.sleep(0.5)  # a client that does not read: the server must wait, not build answers
    check_answers(lines, 1)
    answer = len(json.dumps({"blob": base64.b64encode(BIG).decode()}))
    growth = peak_rss(pid) - before
    assert growth < BOUND_IN_ANSWERS * answer, (
        f"peak grew by {growth / answer:.1f} answers of {answer:,} bytes"
    )


@pytest.mark.parametrize("flavour", ["blocking", "asyncio", "trio"])
def test_stdio_servers_hold_a_few_answers_whatever_a_client_pipelines(
    tmp_path: Path, flavour: str
) -> None:
    folder = skills_folder(tmp_path)
    if flavour == "blocking":
        argv = [sys.executable, "-m", "skills_core", "serve", str(folder)]
    else:
        argv = [sys.executable, str(PEERS / "serve_adapter.py"), flavour, str(folder)]
    with subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        stdin, stdout = process.stdin, process.stdout

        def send(data: bytes) -> None:
            stdin.write(data)
            stdin.flush()

        try:
            assert_bounded(process.pid, send, iter(stdout.readline, b""))
        finally:
            stdin.close()
            assert process.wait(timeout=30) == 0


def test_the_tcp_example_holds_a_few_answers_whatever_a_client_pipelines(tmp_path: Path) -> None:
    folder = skills_folder(tmp_path)
    with subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "tcp_server.py"), str(folder), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ) as process:
        try:
            assert process.stdout is not None
            host, port = process.stdout.readline().split()[-1].rsplit(":", 1)
            with (
                socket.create_connection((host, int(port)), timeout=30) as sock,
                sock.makefile("rb") as reader,
            ):
                assert_bounded(process.pid, sock.sendall, iter(reader.readline, b""))
        finally:
            process.terminate()
