"""Peak memory of a server while a client pipelines reads of a large file (issue 11's case).

Run: ``.venv/bin/python tests/benchmarks/bench_serve_memory.py [--requests N] [--mib M]``.

For each way of serving (``skills-core serve`` with the blocking adapter, the asyncio and trio
adapters through ``tests/peers/serve_adapter.py``, and ``examples/tcp_server.py``), one process
serves a folder with one M MiB file of bytes that are not UTF-8 (so each answer is base64, the
largest form). The client reads ``SKILL.md`` once, notes the server's peak resident set (VmHWM,
from ``/proc``), then writes N ``resources/read`` of the large file in one write, reads nothing for
one second, and then reads and checks every answer (size and SHA-256 of the decoded content). The
figure is how much the peak grew, in bytes and in answers (one answer is one response line).
Issue 11 measured 4.1 GB for 250 reads of 8 MiB before the fix (every answer to an input chunk
was built and joined before anything was written). Linux only (VmHWM).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from _bench_common import PEERS, REPO, child_env, compile_bytecode, cpu_model, modern_meta

META = modern_meta("bench-serve-memory")


def read_line(request_id: int, uri: str) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "resources/read",
        "params": {"uri": uri, "_meta": META},
    }
    return json.dumps(message).encode() + b"\n"


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def measure(
    pid: int, send: Callable[[bytes], None], lines: Iterator[bytes], big: bytes, requests: int
) -> tuple[int, int, int]:
    """(peak before, peak after, answer size): one small read, then the pipelined reads."""
    send(read_line(0, "skill://big/SKILL.md"))
    json.loads(next(lines))
    before = peak_rss(pid)
    send(b"".join(read_line(n, "skill://big/big.bin") for n in range(1, requests + 1)))
    time.sleep(1.0)  # the client does not read for a while
    digest = hashlib.sha256(big).digest()
    size = 0
    for request_id in range(1, requests + 1):
        line = next(lines)
        size = max(size, len(line))
        answer = json.loads(line)
        assert answer["id"] == request_id, answer.get("error")
        [item] = answer["result"]["contents"]
        assert hashlib.sha256(base64.b64decode(item["blob"])).digest() == digest
    return before, peak_rss(pid), size


def run_stdio(argv: list[str], big: bytes, requests: int) -> tuple[int, int, int]:
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_env()
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        stdin = process.stdin

        def send(data: bytes) -> None:
            stdin.write(data)
            stdin.flush()

        try:
            return measure(process.pid, send, iter(process.stdout.readline, b""), big, requests)
        finally:
            stdin.close()
            process.wait()


def run_tcp(folder: Path, big: bytes, requests: int) -> tuple[int, int, int]:
    argv = [sys.executable, str(REPO / "examples" / "tcp_server.py"), str(folder), "--port", "0"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=child_env()) as process:
        try:
            assert process.stdout is not None
            host, port = process.stdout.readline().split()[-1].rsplit(":", 1)
            with (
                socket.create_connection((host, int(port))) as sock,
                sock.makefile("rb") as reader,
            ):
                return measure(process.pid, sock.sendall, iter(reader.readline, b""), big, requests)
        finally:
            process.terminate()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=250)
    parser.add_argument("--mib", type=int, default=8, help="size of the file read, in MiB")
    args = parser.parse_args()
    compile_bytecode()
    big = bytes(range(256)) * (args.mib << 12)
    print(f"Machine: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}")
    print(
        f"Workload: {args.requests} pipelined resources/read of a {args.mib} MiB binary file "
        "(base64 answers), written at once; the client reads nothing for 1 s, then everything."
    )
    print()
    print(f"{'server':<28}{'peak before':>14}{'peak after':>14}{'growth':>14}{'in answers':>12}")
    with tempfile.TemporaryDirectory(prefix="bench-serve-memory-") as tmp:
        folder = Path(tmp) / "skills"
        (folder / "big").mkdir(parents=True)
        (folder / "big" / "SKILL.md").write_bytes(b"---\nname: big\ndescription: d\n---\n")
        (folder / "big" / "big.bin").write_bytes(big)
        servers: list[tuple[str, Callable[[], tuple[int, int, int]]]] = [
            (
                "skills-core serve (blocking)",
                lambda: run_stdio(
                    [sys.executable, "-m", "skills_core", "serve", str(folder)], big, args.requests
                ),
            ),
            *(
                (
                    f"serve_stdio ({flavour})",
                    lambda flavour=flavour: run_stdio(
                        [sys.executable, str(PEERS / "serve_adapter.py"), flavour, str(folder)],
                        big,
                        args.requests,
                    ),
                )
                for flavour in ("asyncio", "trio")
            ),
            ("examples/tcp_server.py", lambda: run_tcp(folder, big, args.requests)),
        ]
        for name, run in servers:
            before, after, answer = run()
            growth = after - before
            print(
                f"{name:<28}{before / 2**20:>11.1f} MiB{after / 2**20:>10.1f} MiB"
                f"{growth / 2**20:>10.1f} MiB{growth / answer:>12.1f}"
            )
        print(f"\none answer (response line): {answer / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
