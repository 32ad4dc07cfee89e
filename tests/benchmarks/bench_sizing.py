"""Sizing figures for docs/operations.md: memory per 10,000 skills, requests per second per worker,
start-up time by catalog size.

Run: ``.venv/bin/python tests/benchmarks/bench_sizing.py [--sizes 1000 10000 50000] [--seconds S]``
(the throughput part needs ``wrk``, ``apt-get install -y wrk``, and uvicorn: the ``http`` extra).

The catalogs are generated in a temporary folder: ``N`` skills ``s00000 ... sNNNNN``, each a
``SKILL.md`` of about 250 bytes (name, a one-sentence description, a short body) and one
``ref/notes.md`` of 1,024 bytes of text: a typical small skill.

1. **Start-up and memory**, per size, ``skills-core serve ROOT`` over stdio (the blocking
   adapter, no digest index, the page cache warm from one run before): the time from spawning the
   process to the answer of its first ``skills/list`` (import, a cold scan that reads and hashes
   every file, the first page), and the process's resident set then (``VmRSS`` from ``/proc``),
   less that of the same server over an empty folder. Memory per 10,000 skills is that growth
   scaled; it holds the catalog, the entries and their JSON for the first page (listing all pages
   adds each entry's JSON once).
2. **Requests per second per worker**, ``skills-core serve --http 127.0.0.1:PORT --workers 1``
   over the 10,000-skill catalog (or the largest size asked for, if smaller): ``wrk`` keeps 16
   keep-alive connections busy on 2 threads for S seconds, POSTing a 2026-07-28 request with
   every header the transport requires, (a) ``skills/list`` (the first page, 200 entries by
   default) and (b) ``resources/read`` of one 1,024-byte file. Before the load, one request is
   checked by hand (status 200, the page or the file's bytes); wrk must report no socket errors
   and no non-2xx answer, or the figure is not printed. The load generator shares the machine:
   on a two-core machine wrk takes about one core, so the figure is what one worker does with the
   other core; a dedicated core per worker does better.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _bench_common import REPO, child_env, compile_bytecode, cpu_model, modern_meta

META = modern_meta("bench-sizing")
NOTES = ("Notes for the skill, one line of text repeated. " * 30)[:1023] + "\n"


def make_catalog(root: Path, count: int) -> None:
    root.mkdir(parents=True)
    for index in range(count):
        name = f"s{index:05d}"
        folder = root / name / "ref"
        folder.mkdir(parents=True)
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Generated skill number {index} for the sizing "
            "benchmark; it does one small thing well.\n---\n# Use\n\nRead ref/notes.md first, "
            "then follow the steps it gives.\n"
        )
        (folder / "notes.md").write_text(NOTES)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit("no VmRSS in /proc: Linux only")


def start_stdio(root: Path) -> tuple[float, int]:
    """(seconds from spawn to the first skills/list answer, resident KiB then)."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "skills/list",
        "params": {"_meta": META},
    }
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "skills_core", "serve", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(request).encode() + b"\n")
    process.stdin.flush()
    line = process.stdout.readline()
    elapsed = time.perf_counter() - began
    answer = json.loads(line)
    assert "result" in answer, answer
    rss = rss_kib(process.pid)
    process.stdin.close()
    process.wait(timeout=60)
    process.stdout.close()
    return elapsed, rss


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def headers(method: str, name: str | None = None) -> dict[str, str]:
    out = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if name is not None:
        out["Mcp-Name"] = name
    return out


def body(method: str, params: dict[str, object]) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    )


def post(url: str, method: str, params: dict[str, object], name: str | None) -> dict[str, object]:
    request = urllib.request.Request(
        url, data=body(method, params).encode(), headers=headers(method, name), method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
        answer: dict[str, object] = json.loads(response.read())
        return answer


def wrk(url: str, seconds: int, script: Path) -> float:
    argv = ["wrk", "-t2", "-c16", f"-d{seconds}s", "-s", str(script), url]
    output = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    if "Socket errors" in output or "Non-2xx" in output:
        raise SystemExit(f"wrk saw failures:\n{output}")
    match = re.search(r"Requests/sec:\s+([\d.]+)", output)
    assert match is not None, output
    return float(match.group(1))


def lua(path: Path, method: str, params: dict[str, object], name: str | None) -> None:
    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(body(method, params))}"]
    lines += [
        f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers(method, name).items()
    ]
    path.write_text("\n".join(lines) + "\n")


def throughput(root: Path, seconds: int, work: Path) -> tuple[float, float]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process = subprocess.Popen(
        [sys.executable, "-m", "skills_core", "serve", "--http", f"127.0.0.1:{port}", str(root)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=child_env(),
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                post(url, "skills/list", {}, None)
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit("serve --http did not start") from None
                time.sleep(0.2)
        listed = post(url, "skills/list", {}, None)["result"]
        assert isinstance(listed, dict)
        assert len(listed["skills"]) == 200
        uri = "skill://s00000/ref/notes.md"
        read = post(url, "resources/read", {"uri": uri}, uri)["result"]
        assert isinstance(read, dict)
        assert read["contents"][0]["text"] == NOTES
        list_script, read_script = work / "list.lua", work / "read.lua"
        lua(list_script, "skills/list", {}, None)
        lua(read_script, "resources/read", {"uri": uri}, uri)
        wrk(url, 1, list_script)  # warm-up
        return wrk(url, seconds, list_script), wrk(url, seconds, read_script)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    compile_bytecode()
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, {cpu_model()}, "
        f"{os.cpu_count()} CPU(s), {platform.system()} {platform.release()}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-sizing-") as tmp:
        work = Path(tmp)
        empty = work / "empty"
        empty.mkdir()
        start_stdio(empty)
        _, base = start_stdio(empty)
        print(f"\nempty catalog: {base / 1024:.1f} MiB resident")
        print(
            "\n| skills | start-up to first skills/list | resident | growth | per 10,000 skills |"
        )
        print("|---:|---:|---:|---:|---:|")
        for size in args.sizes:
            root = work / f"c{size}"
            make_catalog(root, size)
            start_stdio(root)  # the page cache warm, bytecode in place
            seconds, rss = start_stdio(root)
            growth = rss - base
            print(
                f"| {size:,} | {seconds:.2f} s | {rss / 1024:.1f} MiB | {growth / 1024:.1f} MiB "
                f"| {growth / 1024 * 10_000 / size:.1f} MiB |"
            )
        target = min(args.sizes, key=lambda size: abs(size - 10_000))
        if shutil.which("wrk") is None:
            print("\n(no wrk: the throughput part is skipped)")
            return
        listing, reading = throughput(work / f"c{target}", args.seconds, work)
        print(
            f"\nserve --http, 1 worker, {target:,} skills, wrk -t2 -c16 -d{args.seconds}s on "
            "the same machine:"
        )
        print("\n| request | requests/s per worker |")
        print("|---|---:|")
        print(f"| skills/list (first page, 200 entries) | {listing:,.0f} |")
        print(f"| resources/read (1,024-byte file) | {reading:,.0f} |")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
