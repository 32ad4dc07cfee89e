"""A catalog of 100,000 skills (issue 23): start-up, memory and list latency of ``serve``.

Run: ``.venv/bin/python tests/benchmarks/bench_scale.py [--tree DIR] [--skills N] [--rounds R]``.

The tree (built once, then reused: ``DIR`` defaults to a folder under the system's temporary
folder named after ``N``) holds ``N`` skills in 100 team folders, each skill a ``SKILL.md`` (name,
description, license, a short body) and one reference file, ``references/guide.md``.

Each round runs, as whole processes (bytecode compiled beforehand, as ``bench_startup.py``
does), in this order:

* **stat walk**: ``os.scandir`` every folder (no link followed), ``stat`` every file without
  following links, nothing else: the floor of any start that looks at every file's signature;
* **cold**: ``python -m skills_core serve TREE``;
* **cold, writing the index**: ``serve --index FILE TREE`` with no index yet (then the index
  file's size);
* **warm**: ``serve --index FILE TREE`` again, the tree unchanged;
* **warm floor**: read and check the index, then ``stat`` (no link followed) every folder and
  file it lists, nothing else: the least a warm start that checks every signature does;
* **http** (with ``--http``): ``serve --http 127.0.0.1:PORT --index FILE TREE`` (one worker),
  asked for ``server/discover`` and a legacy ``initialize`` over a fresh connection every 20 ms
  from the spawn until answered, then ``/readyz`` until 200: when the handshake is answered and
  when the catalog is served, from the spawn.

For each ``serve``, the client writes ``initialize``, ``server/discover`` and a modern
``skills/list`` at once as soon as the process is spawned, and notes when each answer arrives
(from the spawn). It then notes the server's resident set (``VmRSS`` and its peak ``VmHWM``, from
``/proc``), pages through the whole listing one request at a time (each page's round trip timed:
p50 and p99 over every page), notes the resident set again (the *steady* figure: every entry
has been listed), closes stdin and waits for the process.

Targets: ``initialize`` and ``server/discover`` answered within 1 s of the spawn at any size;
the resident set of a serving process at 100,000 skills at most 250 MiB; list page p99 at most
5 ms; a warm start (spawn to the first ``skills/list`` answer) at most 0.6x the stat walk of the
same round; the index at most 40 MB. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _bench_common import child_env, compile_bytecode, cpu_model, modern_meta

META = modern_meta("bench-scale")
TEAMS = 100
STAT_WALK = """
import os, sys
stack = [sys.argv[1]]
files = folders = 0
while stack:
    with os.scandir(stack.pop()) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
                folders += 1
            else:
                os.stat(entry.path, follow_symlinks=False)
                files += 1
print(files, folders)
"""
#: The floor of a warm start that keeps the rules: read and check the index, then one
#: ``fstatat`` (no link followed) per folder and file it lists; no object per file, no catalog.
WARM_FLOOR = """
import os, sys
from skills_core.server.index import decode_index, unpack_folder
from skills_core.server.index_file import read_index_file
data = read_index_file(sys.argv[2])
(root,) = decode_index(data).roots
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
for path, record in root.records.items():
    os.stat(path or ".", dir_fd=fd, follow_symlinks=False)
    for name in unpack_folder(record)[2]:
        os.stat(f"{path}/{name}" if path else name, dir_fd=fd, follow_symlinks=False)
"""


def build_tree(tree: Path, skills: int) -> None:
    """Write the tree once; a finished tree has a ``.complete`` marker (a hidden name: skipped)."""
    marker = tree / ".complete"
    if marker.exists():
        return
    print(f"building {skills:,} skills under {tree} ...", flush=True)
    for number in range(skills):
        folder = tree / f"team-{number % TEAMS:03d}" / f"skill-{number:06d}"
        (folder / "references").mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{number:06d}\n"
            f"description: Skill number {number} of team {number % TEAMS}; use it when the task "
            f"mentions widget {number}.\nlicense: MIT\n---\n\n# Skill {number}\n\n"
            "Read references/guide.md first.\n"
        )
        (folder / "references" / "guide.md").write_text(
            f"# Guide {number}\n\n" + "Step by step, with examples.\n" * 8
        )
    marker.write_text("")


def rss(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of ``pid`` in bytes."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


def request(request_id: int, method: str, params: dict[str, object]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


@dataclass
class Serve:
    """What one ``serve`` process showed."""

    initialize: float = 0.0
    discover: float = 0.0
    first_list: float = 0.0
    rss_first: int = 0
    hwm_first: int = 0
    rss_steady: int = 0
    hwm_steady: int = 0
    pages: list[float] = field(default_factory=list)
    listed: int = 0


def run_serve(tree: Path, index: Path | None) -> Serve:
    argv = [sys.executable, "-m", "skills_core", "serve"]
    if index is not None:
        argv += ["--index", str(index)]
    argv.append(str(tree))
    out = Serve()
    start = time.perf_counter()
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_env()
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        stdin, stdout = process.stdin, process.stdout
        stdin.write(
            request(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench-scale", "version": "0"},
                },
            )
            + request(2, "server/discover", {"_meta": META})
            + request(3, "skills/list", {"_meta": META})
        )
        stdin.flush()
        answers: dict[int, tuple[float, dict[str, object]]] = {}
        while len(answers) < 3:
            line = stdout.readline()
            if not line:
                raise RuntimeError("serve exited before answering")
            answer = json.loads(line)
            answers[answer["id"]] = (time.perf_counter() - start, answer)
        out.initialize = answers[1][0]
        out.discover = answers[2][0]
        out.first_list = answers[3][0]
        out.rss_first, out.hwm_first = rss(process.pid)
        result = answers[3][1]["result"]
        assert isinstance(result, dict)
        out.listed = len(result["skills"])
        cursor = result.get("nextCursor")
        request_id = 4
        while cursor is not None:
            began = time.perf_counter()
            stdin.write(request(request_id, "skills/list", {"_meta": META, "cursor": cursor}))
            stdin.flush()
            line = stdout.readline()
            out.pages.append(time.perf_counter() - began)  # the client's parsing not included
            answer = json.loads(line)
            assert answer["id"] == request_id, answer
            out.listed += len(answer["result"]["skills"])
            cursor = answer["result"].get("nextCursor")
            request_id += 1
        out.rss_steady, out.hwm_steady = rss(process.pid)
        stdin.close()
        process.wait()
    return out


def stat_walk(tree: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", STAT_WALK, str(tree)], check=True, stdout=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def warm_floor(tree: Path, index: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", WARM_FLOOR, str(tree), str(index)], check=True, env=child_env()
    )
    return time.perf_counter() - start


def run_http(tree: Path, index: Path) -> tuple[float, float, float]:
    """Seconds from the spawn of ``serve --http`` to ``server/discover`` answered, to a legacy
    ``initialize`` answered, and to ``/readyz`` 200."""
    import http.client
    import signal
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [sys.executable, "-m", "skills_core", "serve", "--http", f"127.0.0.1:{port}"]
    argv += ["--log-level", "error", "--index", str(index), str(tree)]
    json_headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    asks = {
        "discover": (
            request(1, "server/discover", {"_meta": META}),
            {**json_headers, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
        ),
        "initialize": (
            request(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench-scale", "version": "0"},
                },
            ),
            json_headers,
        ),
    }

    def status(method: str, path: str, ask: tuple[bytes, dict[str, str]] | None) -> int | None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        try:
            body, headers = ask if ask is not None else (None, {})
            connection.request(method, path, body=body, headers=headers)
            return connection.getresponse().status
        except OSError:
            return None
        finally:
            connection.close()

    times: dict[str, float] = {}
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, env=child_env(), stdin=subprocess.DEVNULL, start_new_session=True
    )
    try:
        for name, ask in asks.items():
            while status("POST", "/mcp", ask) != 200:
                time.sleep(0.02)
            times[name] = time.perf_counter() - start
        while status("GET", "/readyz", None) != 200:
            time.sleep(0.02)
        times["ready"] = time.perf_counter() - start
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait()
    return times["discover"], times["initialize"], times["ready"]


def mib(value: int) -> str:
    return f"{value / 2**20:.0f} MiB"


def show(label: str, serve: Serve) -> None:
    pages = sorted(serve.pages)
    p50 = statistics.median(pages) * 1e3 if pages else 0.0
    p99 = pages[int(len(pages) * 0.99)] * 1e3 if pages else 0.0
    print(
        f"  {label:<12} initialize {serve.initialize:6.2f} s  discover {serve.discover:6.2f} s  "
        f"first list {serve.first_list:6.2f} s  RSS first {mib(serve.rss_first)} "
        f"(peak {mib(serve.hwm_first)})  steady {mib(serve.rss_steady)} "
        f"(peak {mib(serve.hwm_steady)})  pages {len(pages) + 1} p50 {p50:.2f} ms "
        f"p99 {p99:.2f} ms  listed {serve.listed:,}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--skills", type=int, default=100_000)
    parser.add_argument("--tree", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold start without index")
    parser.add_argument("--http", action="store_true", help="also time serve --http's start")
    args = parser.parse_args()
    tree = args.tree or Path(tempfile.gettempdir()) / f"skills-core-bench-scale-{args.skills}"
    build_tree(tree, args.skills)
    compile_bytecode()
    print(f"Machine: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}")
    print(f"Tree: {args.skills:,} skills in {TEAMS} team folders, {tree}")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        index = Path(tmp) / "index"
        for number in range(args.rounds):
            print(f"round {number + 1}:", flush=True)
            walk = stat_walk(tree)
            print(f"  stat walk    {walk:6.2f} s", flush=True)
            if not args.no_cold:
                show("cold", run_serve(tree, None))
            index.unlink(missing_ok=True)
            show("cold+index", run_serve(tree, index))
            size = index.stat().st_size
            print(f"  index file   {size / 1e6:.1f} MB", flush=True)
            warm = run_serve(tree, index)
            show("warm", warm)
            floor = warm_floor(tree, index)
            print(
                f"  warm floor   {floor:6.2f} s (read the index, one stat per folder and file)",
                flush=True,
            )
            print(
                f"  warm / stat walk: {warm.first_list / walk:.2f}x "
                f"(stat walk again: {stat_walk(tree):.2f} s)",
                flush=True,
            )
            if args.http:
                discover, initialize, ready = run_http(tree, index)
                print(
                    f"  http (warm)  discover {discover:6.2f} s  initialize {initialize:6.2f} s  "
                    f"/readyz 200 {ready:6.2f} s",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
