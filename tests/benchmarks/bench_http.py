"""Throughput over Streamable HTTP: 1 KB ``resources/read`` under uvicorn, ours vs FastMCP vs a ceiling.

Run: ``.venv/bin/python tests/benchmarks/bench_http.py [--seconds S] [--workers 1 2]``
(needs ``wrk``: ``apt-get install -y wrk``; uvicorn's standard extras come with the test extra).

One skill, ``bench``, whose ``data/1k.md`` is 1,024 bytes of text (as in ``bench_throughput.py``).
Four apps (ours twice), each under the same uvicorn (``--loop uvloop``, httptools, no access log, the
given number of workers), each asked the same thing by the same load generator:

1. ours: ``uvicorn --factory skills_core.adapters.asgi:app_from_env --http
   skills_core.adapters.uvicorn_http:BoundedProtocol`` (what ``serve --http`` runs: httptools
   with the deadlines for heads and stalled writes), without its log, and again with a line per
   request on stderr (``SKILLS_CORE_LOG_LEVEL=info``, ``serve --http``'s default; stderr to a
   file);
2. FastMCP 4.1.6's HTTP app, stateless with JSON responses (``tests/peers/fastmcp_http_app.py``);
3. a bare ASGI app answering prepared bytes, our own answer captured first
   (``tests/peers/bare_asgi.py``): the ceiling of any ASGI app under this uvicorn;
4. for the floor of the work itself, a minimal app that decodes the body with ``json.loads`` and
   looks at the file (``readlink`` and ``fstat``) before answering the same prepared bytes
   (``tests/peers/minimal_asgi.py``): what no skills server can skip, without any of our checks.

``wrk`` (C, so the client is not the bottleneck) keeps 16 keep-alive connections busy on 2
threads for S seconds, posting a 2026-07-28 ``resources/read`` with every header the transport
requires (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``). Before the load, one request
to each app is checked by hand: status 200 and the file's 1,024 bytes in the answer; after it,
wrk must report no socket errors and no non-2xx answer, or the figure is not printed. The
targets: ours at least 20x FastMCP's requests per second, and at least 0.5 of the ceiling.

On a shared machine, throughput moves with whatever else runs; beside it each round reports the
server's CPU time per request (user + system time of its process group, from ``/proc``, over the
requests wrk completed), which moves much less, and the ratios of those.

Then, in this process (no server, no sockets), what our app costs per request, best of 5: the
whole ASGI call with a prepared scope and body, one request at a time (so each read looks at the
file itself), and its parts: the header rungs (``HttpChecks.head``), the body
(``HttpChecks.body``: decoding, the era, the routing headers), the server's answer with a look at
the file (``readlink`` of the held descriptor, ``fstat`` and one ``pread``) and from a look shared
with requests that arrived together, and the encoding. Under uvicorn each costs about twice as much (its own
work between requests keeps the processor's caches busy), which is why the figures above differ
from these.

The file is left alone for the racy window (3 s) first, as in ``bench_throughput.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from _bench_common import PEERS, child_env, compile_bytecode, cpu_model, modern_meta

URI = "skill://bench/data/1k.md"
SKILL_MD = (
    b"---\nname: bench\ndescription: A skill with one 1 KB file for benchmarks\n---\n\n# Bench\n"
)
ONE_KB = b"".join(f"line {i:02d} ".encode() + b"x" * 55 + b"\n" for i in range(16))
assert len(ONE_KB) == 1024
BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resources/read",
        "params": {"uri": URI, "_meta": modern_meta("bench-http")},
    },
    separators=(",", ":"),
)
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "resources/read",
    "Mcp-Name": URI,
}
#: A little over the filesystem source's racy window (see the module docstring).
RACY_SECONDS = 3.2
UVICORN = ["--loop", "uvloop", "--no-access-log", "--log-level", "warning"]
#: What ``serve --http`` runs: uvicorn's httptools protocol with the head and write deadlines.
OURS_PROTOCOL = ["--http", "skills_core.adapters.uvicorn_http:BoundedProtocol"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def ask(port: int) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/mcp", body=BODY, headers={**HEADERS, "Host": "127.0.0.1"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@contextlib.contextmanager
def uvicorn(app: list[str], workers: int, env: dict[str, str]) -> Iterator[tuple[int, int]]:
    """(port, process group) of a uvicorn serving ``app`` until the block ends.

    Its stderr goes to a file (a line per request, when the app logs one, would fill a pipe)."""
    port = free_port()
    protocol = [] if "--http" in app else ["--http", "httptools"]
    argv = [sys.executable, "-m", "uvicorn", *app, *UVICORN, *protocol, "--port", str(port)]
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the process, below
    process = subprocess.Popen(
        [*argv, "--workers", str(workers)],
        env={**child_env(), **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError):
                ask(port)
                break
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait(timeout=5)
                log.seek(0)
                err = log.read().decode(errors="replace")
                raise SystemExit(f"uvicorn {app} did not start:\n{err}")
            time.sleep(0.2)
        yield port, process.pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def check(name: str, status: int, body: bytes) -> None:
    """Status 200 and the file's bytes in the answer (a JSON body or one SSE event)."""
    text = body.decode()
    if text.startswith(("event:", "data:")):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    message = json.loads(text)
    contents = message.get("result", {}).get("contents", [{}])
    if status != 200 or contents[0].get("text", "").encode() != ONE_KB:
        raise SystemExit(f"{name}: wrong answer ({status}): {body[:300]!r}")


def cpu_seconds(group: int) -> float:
    """User + system CPU time of every process in a process group (from /proc), in seconds."""
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
            if int(fields[2]) == group:  # pgrp
                ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def wrk(port: int, group: int, seconds: int, script: Path) -> tuple[float, float]:
    """(requests per second, server CPU microseconds per request) of one wrk run."""
    url = f"http://127.0.0.1:{port}/mcp"
    argv = ["wrk", "-t2", "-c16", f"-d{seconds}s", "-s", str(script), url]
    cpu_before = cpu_seconds(group)
    output = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(group) - cpu_before
    if "Non-2xx" in output or "Socket errors" in output:
        raise SystemExit(f"wrk saw failures:\n{output}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    count = re.search(r"(\d+) requests in", output)
    assert rate is not None, output
    assert count is not None, output
    return float(rate.group(1)), cpu / int(count.group(1)) * 1e6


def lua(path: Path) -> None:
    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(BODY)}"]
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in HEADERS.items()]
    path.write_text("\n".join(lines) + "\n")


def in_process(root: Path, requests: int = 20_000) -> None:
    """Microseconds per request of our app in this process, and of its parts."""
    import asyncio

    from skills_core.adapters.asgi import AppConfig
    from skills_core.http.server import Call, Head, encode_answer
    from skills_core.server_stream import DEFAULT_DEFER_READS_OVER

    app = AppConfig(roots=(str(root),), secret=b"b" * 64).build()
    body = BODY.encode()
    headers = [
        (k.lower().encode(), v.encode()) for k, v in {**HEADERS, "Host": "127.0.0.1"}.items()
    ]
    headers.append((b"content-length", b"%d" % len(body)))
    message = {"type": "http.request", "body": body, "more_body": False}

    def scope() -> dict[str, object]:
        return {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "root_path": "",
            "headers": headers,
        }

    async def receive() -> dict[str, object]:
        return message

    async def send(event: object) -> None:
        pass

    async def calls() -> None:
        for _ in range(requests):
            await app(scope(), receive, send)

    checks, server = app._checks, app.server
    head = checks.head(scope())
    assert isinstance(head, Head)
    call = checks.body(head, body, scope())
    assert isinstance(call, Call)

    def answer(received: int | None = None) -> object:
        return server.answer(
            call.method, call.params, defer_reads_over=DEFAULT_DEFER_READS_OVER, received=received
        )

    answered = answer()
    shared = server.receipt()
    answer(shared)  # the look the others share
    parts = [
        ("the header rungs", lambda: checks.head(scope())),
        ("the body: decoding and checks", lambda: checks.body(head, body, scope())),
        ("the answer, looking at the file", answer),
        ("the answer, from a shared look", lambda: answer(shared)),
        ("encoding it", lambda: encode_answer(call.id, answered)),  # type: ignore[arg-type]
    ]
    print(f"in process, best of 5, per request ({requests:,} requests):")
    best = min(_seconds(lambda: asyncio.run(calls())) for _ in range(5))
    print(f"  {'the whole ASGI call':<36}{best / requests * 1e6:>8.2f} us")
    for label, part in parts:
        best = min(_seconds(lambda part=part: _repeat(part, requests)) for _ in range(5))  # type: ignore[misc]
        print(f"    {label:<34}{best / requests * 1e6:>8.2f} us")


def _repeat(part: Callable[[], object], times: int) -> None:
    """Call ``part`` ``times`` times, keeping no result (a list of them would time the GC)."""
    for _ in range(times):
        part()


def _seconds(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=int, default=10, help="load per app and setting")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per app")
    args = parser.parse_args()
    compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "skills"
        (root / "bench" / "data").mkdir(parents=True)
        (root / "bench" / "SKILL.md").write_bytes(SKILL_MD)
        (root / "bench" / "data" / "1k.md").write_bytes(ONE_KB)
        time.sleep(RACY_SECONDS)  # see the module docstring
        script = Path(tmp) / "post.lua"
        lua(script)
        ours_env = {"SKILLS_CORE_ROOTS": str(root), "SKILLS_CORE_CURSOR_KEY": "b" * 64}
        ours_app = ["--factory", "skills_core.adapters.asgi:app_from_env", *OURS_PROTOCOL]
        with uvicorn(ours_app, 1, ours_env) as (port, _):
            status, answer = ask(port)
            check("ours", status, answer)
        (Path(tmp) / "answer.json").write_bytes(answer)
        logging_env = {**ours_env, "SKILLS_CORE_LOG_LEVEL": "info"}
        targets = [
            ("skills-core (ours)", ours_app, ours_env),
            ("skills-core (ours), a log line per request", ours_app, logging_env),
            (
                "FastMCP 4.1.6 http_app(stateless, json)",
                ["--factory", "fastmcp_http_app:app", "--app-dir", str(PEERS)],
                {"BENCH_ROOT": str(root)},
            ),
            (
                "bare ASGI, prepared bytes (ceiling)",
                ["bare_asgi:app", "--app-dir", str(PEERS), "--lifespan", "off"],
                {"BENCH_BODY_FILE": str(Path(tmp) / "answer.json")},
            ),
            (
                "minimal: json.loads + a look at the file",
                ["minimal_asgi:app", "--app-dir", str(PEERS), "--lifespan", "off"],
                {
                    "BENCH_BODY_FILE": str(Path(tmp) / "answer.json"),
                    "BENCH_FILE": str(root / "bench" / "data" / "1k.md"),
                },
            ),
        ]
        print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
        print(
            f"wrk -t2 -c16 -d{args.seconds}s, POST resources/read of a 1,024-byte file; "
            f"median of {args.rounds} interleaved rounds"
        )
        for w in args.workers:
            with contextlib.ExitStack() as stack:
                servers = [stack.enter_context(uvicorn(app, w, env)) for _, app, env in targets]
                for (name, _, _), (port, _) in zip(targets, servers, strict=True):
                    check(name, *ask(port))
                runs: list[list[tuple[float, float]]] = [[] for _ in targets]
                for _ in range(args.rounds):  # interleaved, so a slow phase hits all three
                    for index, (port, group) in enumerate(servers):
                        runs[index].append(wrk(port, group, args.seconds, script))
            rates = [statistics.median(rate for rate, _ in rounds) for rounds in runs]
            costs = [statistics.median(cost for _, cost in rounds) for rounds in runs]
            for (name, _, _), rate, cost, rounds in zip(targets, rates, costs, runs, strict=True):
                spread = ", ".join(f"{rate:,.0f}" for rate, _ in rounds)
                print(
                    f"  {w} worker(s)  {name:42s} {rate:8,.0f} req/s ({spread}); "
                    f"server CPU {cost:6.1f} us/request"
                )
            print(
                f"  {w} worker(s)  ours / FastMCP = {rates[0] / rates[2]:.1f}x (target 20x); "
                f"ours / ceiling = {rates[0] / rates[3]:.2f} (target 0.5)"
            )
            print(
                f"  {w} worker(s)  by server CPU per request: FastMCP / ours = "
                f"{costs[2] / costs[0]:.1f}x, ceiling / ours = {costs[3] / costs[0]:.2f}, "
                f"ceiling / minimal = {costs[3] / costs[4]:.2f}"
            )
            print(
                f"  {w} worker(s)  a log line per request costs {costs[1] - costs[0]:.1f} us of "
                f"server CPU per request ({costs[1] / costs[0] - 1:+.0%}); requests per second "
                f"{rates[1] / rates[0] - 1:+.0%}"
            )
        in_process(root)


if __name__ == "__main__":
    main()
