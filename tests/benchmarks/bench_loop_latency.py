"""Event-loop stalls of the asyncio and trio servers while large files are read, and the small path.

Run: ``.venv/bin/python tests/benchmarks/bench_loop_latency.py [--mib M] [--reads N]``
(M at most 15: a skill over 16 MiB is not served).

In one process, ``serve_stdio`` of each adapter serves over two pipes while a ticker task on the
same event loop sleeps 1 ms at a time and records the longest gap between its wake-ups: how long
the loop was unable to run anything else. A client thread writes N ``resources/read`` of an M MiB
text file (and a thread drains the answers). Two settings: files over 256 KiB read and encoded
in a worker thread (``defer_reads_over`` at its default, what the adapters do), and every file read
on the loop (``defer_reads_over=None``, what they did before). Then the small path: 5,000 reads of
a 1 KB file, requests per second with both settings (small files are never deferred; the setting
only adds a size check per read).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import trio
from _bench_common import cpu_model, modern_meta

from skills_core.adapters import DEFAULT_DEFER_READS_OVER, asyncio_stdio, trio_stdio
from skills_core.server import server_from_roots

META = modern_meta("bench-loop-latency")
Serve = Callable[[int, int, int | None], None]


def requests(uri: str, count: int) -> bytes:
    return b"".join(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "resources/read",
                "params": {"uri": uri, "_meta": META},
            }
        ).encode()
        + b"\n"
        for n in range(count)
    )


def serve_asyncio(folder: Path) -> Callable[[int, int, int | None], float]:
    def run(stdin_fd: int, stdout_fd: int, defer: int | None) -> float:
        connection = server_from_roots([folder], cursor_key=os.urandom(32)).connection()
        worst = 0.0

        async def ticker(done: asyncio.Event) -> None:
            nonlocal worst
            while not done.is_set():
                start = time.perf_counter()
                await asyncio.sleep(0.001)
                worst = max(worst, time.perf_counter() - start - 0.001)

        async def main() -> None:
            done = asyncio.Event()
            tick = asyncio.ensure_future(ticker(done))
            await asyncio_stdio.serve_stdio(
                connection,
                stdin_fd=stdin_fd,
                stdout_fd=stdout_fd,
                results_have_string_keys=True,
                defer_reads_over=defer,
            )
            done.set()
            await tick

        asyncio.run(main())
        return worst

    return run


def serve_trio(folder: Path) -> Callable[[int, int, int | None], float]:
    def run(stdin_fd: int, stdout_fd: int, defer: int | None) -> float:
        connection = server_from_roots([folder], cursor_key=os.urandom(32)).connection()
        worst = 0.0

        async def main() -> None:
            nonlocal worst
            async with trio.open_nursery() as nursery:

                async def ticker() -> None:
                    nonlocal worst
                    while True:
                        start = time.perf_counter()
                        await trio.sleep(0.001)
                        worst = max(worst, time.perf_counter() - start - 0.001)

                nursery.start_soon(ticker)
                await trio_stdio.serve_stdio(
                    connection,
                    stdin_fd=stdin_fd,
                    stdout_fd=stdout_fd,
                    results_have_string_keys=True,
                    defer_reads_over=defer,
                )
                nursery.cancel_scope.cancel()

        trio.run(main)
        return worst

    return run


def session(
    run: Callable[[int, int, int | None], float], wire: bytes, defer: int | None
) -> tuple[float, float, int]:
    """(longest stall in s, seconds for the whole session, bytes answered)."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    received = 0

    def write() -> None:
        view = memoryview(wire)
        while view:
            view = view[os.write(in_write, view[: 1 << 16]) :]
        os.close(in_write)

    def drain() -> None:
        nonlocal received
        while chunk := os.read(out_read, 1 << 20):
            received += len(chunk)

    threads = [threading.Thread(target=write), threading.Thread(target=drain)]
    for thread in threads:
        thread.start()
    start = time.perf_counter()
    try:
        worst = run(in_read, out_write, defer)
    finally:
        os.close(in_read)
        os.close(out_write)
    seconds = time.perf_counter() - start
    for thread in threads:
        thread.join()
    os.close(out_read)
    return worst, seconds, received


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mib", type=int, default=8, help="size of the large file, in MiB")
    parser.add_argument("--reads", type=int, default=10, help="reads of the large file")
    parser.add_argument("--small", type=int, default=5000, help="reads of the 1 KB file")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"Machine: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="bench-loop-") as tmp:
        folder = Path(tmp)
        (folder / "s").mkdir()
        (folder / "s" / "SKILL.md").write_bytes(b"---\nname: s\ndescription: d\n---\n")
        (folder / "s" / "big.md").write_bytes(b"0123456789abcdef" * (args.mib << 16))
        (folder / "s" / "small.md").write_bytes(b"x" * 1023 + b"\n")
        large = requests("skill://s/big.md", args.reads)
        small = requests("skill://s/small.md", args.small)
        settings = (("worker thread", DEFAULT_DEFER_READS_OVER), ("on the loop", None))

        def table(wire: bytes, least: int, figure: Callable[[float, float], str]) -> None:
            """One row per adapter, one column per setting: the median of the rounds."""
            print(f"{'adapter':<10}" + "".join(f"{label:>18}" for label, _ in settings))
            for name, make in (("asyncio", serve_asyncio), ("trio", serve_trio)):
                run = make(folder)
                row = []
                for _label, defer in settings:
                    outcomes = [session(run, wire, defer) for _ in range(args.rounds)]
                    assert all(received > least for *_, received in outcomes), "reads failed"
                    row.append(figure(*(statistics.median(o[i] for o in outcomes) for i in (0, 1))))
                print(f"{name:<10}" + "".join(row))

        print(
            f"\nLongest event-loop stall while {args.reads} reads of a {args.mib} MiB text file "
            f"are served (median of {args.rounds} rounds):"
        )
        table(large, args.reads * (args.mib << 20), lambda stall, _: f"{stall * 1e3:>15.1f} ms")
        print(
            f"\nSmall path: {args.small:,} pipelined reads of a 1 KB file, requests per second "
            f"(median of {args.rounds} rounds):"
        )
        table(small, args.small * 1024, lambda _, seconds: f"{args.small / seconds:>18,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
