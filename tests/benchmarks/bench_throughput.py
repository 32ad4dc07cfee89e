"""Throughput over stdio: pipelined ``resources/read`` of a 1 KB file, ours vs FastMCP vs a stub.

Run: ``.venv/bin/python tests/benchmarks/bench_throughput.py [--requests N] [--rounds R]``.

One run measures three targets with the same driver, on the same folder (one skill, ``bench``,
whose ``data/1k.md`` is 1,024 bytes of text):

1. ``python -m skills_core serve <folder>`` (ours);
2. ``tests/peers/fastmcp_server.py <folder>`` (FastMCP 4.1.6, ``experimental_skills=True``);
3. ``tests/peers/stub_server.py`` answering every request with prepared bytes: our server's own
   answer to the same request, captured during (1), with the id substituted. Nothing any Python
   stdio server does per request can be cheaper, so this is the ceiling: the cost of Python
   stdio itself (and of this driver).

The driver uses plain asyncio subprocess pipes (no MCP client). Per target: spawn, handshake
(``server/discover`` with the modern ``_meta``), then a writer task writes N ``resources/read``
requests (prepared before timing, each with the modern ``_meta``) while a reader task reads the
answers concurrently (a server stops reading when its stdout pipe is full, so writing everything
first could deadlock). Every answer is parsed; it must carry a pending id and a result whose one
content item decodes (text as UTF-8, or blob as base64) to exactly the file's 1,024 bytes. The
time is from the first write to the last answer. The targets: ours at least 30x FastMCP's
requests per second (issue 6), and at least 0.7 of the stub's (issue 12). Beside each run, the CPU
time per request of the server process and of this driver (from ``/proc``): on a machine whose
other work takes a core, the two processes take turns on the one left, and the ratio of rates is
then (driver + stub) / (driver + ours) per request, not stub / ours.

Then, in this process and without pipes, where a request's time goes (best of 5, per request):
the whole server path (``ServerStream`` over the same 10,000 requests, as ``serve`` runs it: the
requests of one chunk share one look at the file); the same requests answered one by one (a look
per request: what a client that waits for each answer gets); decoding a request alone
(``parse_message``: UTF-8, strict JSON with the duplicate-key check, the envelope); the look at a
file read before (``FilesystemSource.read_since``: ``readlink`` of its held descriptor,
``fstat`` and one ``pread``: the bytes are read at every look and compared by the server); and the
walk it replaces (``FilesystemSource.read``: the descriptor-relative walk that
never follows a link, then the read; about ten system calls).

The file is written, then left alone for the racy window (3 s) before anything is measured, as
served files normally are (reads no longer depend on it: every look reads the file; the wait keeps
runs comparable with earlier ones).

Children run with bytecode available (``compileall`` is run first on the package and on the
venv's site-packages, and ``PYTHONDONTWRITEBYTECODE`` is removed from their environment), so
start-up compilation does not leak into anything; it does not matter much here since timing
starts after the handshake.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _bench_common import PEERS, child_env, compile_bytecode, cpu_model, modern_meta

URI = "skill://bench/data/1k.md"
META = modern_meta("bench-throughput")
SKILL_MD = (
    b"---\nname: bench\ndescription: A skill with one 1 KB file for benchmarks\n---\n\n# Bench\n"
)
#: 1,024 bytes of plain markdown: 16 lines of 64 bytes.
ONE_KB = b"".join(f"line {i:02d} ".encode() + b"x" * 55 + b"\n" for i in range(16))
assert len(ONE_KB) == 1024
WRITE_CHUNK = 1 << 16
#: A little over the filesystem source's racy window (see the module docstring).
RACY_SECONDS = 3.2
READ_CHUNK = 1 << 16


def request_line(request_id: int | str, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


@dataclass
class Outcome:
    name: str
    requests: int
    seconds: float
    first_answer: bytes
    #: CPU microseconds per request: the server process's, and this driver's.
    server_cpu: float = 0.0
    driver_cpu: float = 0.0

    @property
    def rate(self) -> float:
        return self.requests / self.seconds


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def check_answer(message: dict[str, Any]) -> None:
    result = message.get("result")
    if not isinstance(result, dict):
        raise AssertionError(f"not a result: {str(message)[:200]}")
    [item] = result["contents"]
    text = item.get("text")
    data = text.encode() if text is not None else base64.b64decode(item["blob"], validate=True)
    if data != ONE_KB:
        raise AssertionError(f"wrong content ({len(data)} bytes) for id {message.get('id')}")


async def measure(name: str, argv: list[str], requests: int, timeout: float) -> Outcome:
    """Spawn ``argv``, handshake, pipeline ``requests`` reads; return the timing."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=child_env(),
        limit=1 << 24,
    )
    stdin, stdout = process.stdin, process.stdout
    assert stdin is not None
    assert stdout is not None
    try:
        stdin.write(request_line(0, "server/discover", {"_meta": META}))
        await stdin.drain()
        answer = json.loads(await asyncio.wait_for(stdout.readline(), timeout))
        if answer.get("id") != 0 or "result" not in answer:
            raise AssertionError(f"{name}: handshake failed: {answer}")
        payload = b"".join(
            request_line(i, "resources/read", {"uri": URI, "_meta": META})
            for i in range(1, requests + 1)
        )
        pending = set(range(1, requests + 1))
        first_answer = b""

        async def writer() -> None:
            view = memoryview(payload)
            for start in range(0, len(view), WRITE_CHUNK):
                stdin.write(view[start : start + WRITE_CHUNK])
                await stdin.drain()

        async def reader() -> None:
            nonlocal first_answer
            buffer = b""
            while pending:
                data = await stdout.read(READ_CHUNK)
                if not data:
                    raise AssertionError(f"{name} closed its output; {len(pending)} unanswered")
                lines = (buffer + data).split(b"\n")
                buffer = lines.pop()
                for line in lines:
                    message = json.loads(line)
                    request_id = message.get("id")
                    if request_id not in pending:
                        raise AssertionError(f"{name}: unexpected id {request_id!r}")
                    pending.discard(request_id)
                    check_answer(message)
                    if not first_answer:
                        first_answer = line

        server_before, driver_before = process_cpu(process.pid), time.process_time()
        start = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(writer(), reader()), timeout)
        seconds = time.perf_counter() - start
        server = (process_cpu(process.pid) - server_before) / requests * 1e6
        driver = (time.process_time() - driver_before) / requests * 1e6
        return Outcome(name, requests, seconds, first_answer, server, driver)
    finally:
        if not stdin.is_closing():
            stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            process.kill()
            await process.wait()


def stub_template(answer_line: bytes) -> bytes:
    """Our server's answer with its id replaced by the stub's placeholder."""
    message = json.loads(answer_line)
    message["id"] = "@@ID@@"
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


async def main_async(args: argparse.Namespace, folder: Path, stub_file: Path) -> int:
    n = args.requests
    ours_argv = [sys.executable, "-m", "skills_core", "serve", str(folder)]
    fastmcp_argv = [sys.executable, str(PEERS / "fastmcp_server.py"), str(folder)]
    stub_argv = [sys.executable, str(PEERS / "stub_server.py"), str(stub_file)]

    ours: list[Outcome] = []
    stub: list[Outcome] = []
    for round_number in range(args.rounds):
        ours.append(await measure("skills-core serve", ours_argv, n, 120))
        if round_number == 0:
            stub_file.write_bytes(stub_template(ours[0].first_answer) + b"\n")
        stub.append(await measure("stub", stub_argv, n, 120))
    fastmcp = [] if args.skip_fastmcp else [await measure("FastMCP", fastmcp_argv, n, 600)]

    ours_rate = statistics.median(o.rate for o in ours)
    stub_rate = statistics.median(o.rate for o in stub)
    print(f"Machine: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}")
    print(f"         ({platform.platform()})")
    print("Bytecode: compiled first (compileall), PYTHONDONTWRITEBYTECODE unset for children.")
    print(
        f"Workload: {n:,} pipelined resources/read of a {len(ONE_KB):,}-byte file over stdio, "
        f"every answer checked; answer line {len(ours[0].first_answer):,} bytes."
    )
    print()
    print(
        f"{'target':<22}{'runs (req/s)':<36}{'median req/s':>14}{'median s':>10}"
        f"{'server CPU':>12}{'driver CPU':>12}"
    )
    for label, runs in (
        ("skills-core serve", ours),
        ("stub (ceiling)", stub),
        ("FastMCP", fastmcp),
    ):
        if not runs:
            continue
        rates = ", ".join(f"{o.rate:,.0f}" for o in runs)
        print(
            f"{label:<22}{rates:<36}{statistics.median(o.rate for o in runs):>14,.0f}"
            f"{statistics.median(o.seconds for o in runs):>10.3f}"
            f"{statistics.median(o.server_cpu for o in runs):>9.1f} us"
            f"{statistics.median(o.driver_cpu for o in runs):>9.1f} us"
        )
    print()
    ok = True
    if fastmcp:
        ratio = ours_rate / fastmcp[0].rate
        met = ratio >= 30
        ok &= met
        print(f"ours / FastMCP = {ratio:,.1f}x   (target >= 30x: {'met' if met else 'MISSED'})")
    share = ours_rate / stub_rate
    met = share >= 0.7
    ok &= met
    print(f"ours / stub    = {share:.2f}      (target >= 0.7: {'met' if met else 'MISSED'})")
    return 0 if ok else 1


def in_process(folder: Path, requests: int) -> None:
    """Microseconds per request of the server path, its parts, and the walk the look replaces."""
    from skills_core.adapters import ServerStream
    from skills_core.jsonrpc import parse_message
    from skills_core.server import FilesystemSource, server_from_roots

    server = server_from_roots([folder], cursor_key=os.urandom(32))
    lines = [
        request_line(i, "resources/read", {"uri": URI, "_meta": META}) for i in range(requests)
    ]
    payload = b"".join(lines)
    chunks = [payload[i : i + READ_CHUNK] for i in range(0, len(payload), READ_CHUNK)]

    def serve() -> None:
        stream = ServerStream(server.connection(), results_have_string_keys=True)
        for chunk in chunks:
            stream.receive_data(chunk)
            while type(stream.next_output()) is bytes:
                pass

    def one_by_one() -> None:
        stream = ServerStream(server.connection(), results_have_string_keys=True)
        for line in lines:
            stream.receive_data(line)
            while type(stream.next_output()) is bytes:
                pass

    def decode() -> None:
        for line in lines:
            parse_message(line)

    source = server.source
    assert isinstance(source, FilesystemSource)
    skill = server.catalog.get("skill://bench/SKILL.md")
    assert skill is not None
    got = source.read_since(skill, "data/1k.md", None)
    assert got is not None
    version = got[1]

    def look() -> None:
        for _ in range(requests):
            source.read_since(skill, "data/1k.md", version)

    def walk() -> None:
        for _ in range(requests):
            source.read(skill, "data/1k.md")

    print()
    print(f"In process, best of 5, per request ({requests:,} requests):")
    for label, run in (
        ("ServerStream, whole path", serve),
        ("  the same, a look per request", one_by_one),
        ("  decoding a request", decode),
        ("  the look (read_since)", look),
        ("  the walk (read)", walk),
    ):
        run()
        best = min(_timed(run) for _ in range(5))
        print(f"  {label:<34}{best / requests * 1e6:>8.2f} us")


def _timed(run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument(
        "--rounds", type=int, default=5, help="runs of ours and the stub (FastMCP runs once)"
    )
    parser.add_argument("--skip-fastmcp", action="store_true", help="for quick iterations")
    args = parser.parse_args()
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp:
        folder = Path(tmp) / "skills"
        (folder / "bench" / "data").mkdir(parents=True)
        (folder / "bench" / "SKILL.md").write_bytes(SKILL_MD)
        (folder / "bench" / "data" / "1k.md").write_bytes(ONE_KB)
        time.sleep(RACY_SECONDS)  # see the module docstring
        status = asyncio.run(main_async(args, folder, Path(tmp) / "stub-answer.json"))
        in_process(folder, args.requests)
        return status


if __name__ == "__main__":
    sys.exit(main())
