"""Cost of one ``skills/list`` page vs. catalog size.

Run: ``.venv/bin/python tests/benchmarks/bench_list.py``.

For in-memory catalogs of 100, 1,000 and 10,000 skills (each with a SKILL.md and two supporting
files, in ten prefix folders), a :class:`SkillsServer` with the default page size (50) answers
``skills/list`` for the first page (no cursor), a middle page and the last page (with their
cursors). Each figure is the median of 1,000 calls of ``ServerConnection.answer`` (the one
request path) for one modern request: ``_meta`` checks, cursor authentication (HMAC-SHA256), a
binary search and the page's entries (whose JSON is built once per catalog, on first use; one
warm-up walk precedes timing). The nine figures are measured round-robin, 7 rounds, and the
lowest median of each is kept, so that noise from other processes lands on no figure in
particular.
The claim under test: the cost of a page does not grow with the catalog.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from typing import Any

from _bench_common import cpu_model

from skills_core.server import MemorySource, ServerConnection, SkillsServer

SIZES = (100, 1_000, 10_000)
CALLS = 1_000
ROUNDS = 7
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/skills": {}}
    },
}


def catalog(count: int) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for i in range(count):
        folder = f"team-{i % 10}/skill-{i:05d}"
        files[f"{folder}/SKILL.md"] = (
            f"---\nname: skill-{i:05d}\ndescription: Skill number {i}\nlicense: MIT\n---\n# {i}\n"
        ).encode()
        files[f"{folder}/references/guide.md"] = f"# Guide {i}\n".encode()
        files[f"{folder}/scripts/run.py"] = f"print({i})\n".encode()
    return files


def params(cursor: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"_meta": META}
    if cursor is not None:
        out["cursor"] = cursor
    return out


def cursors(server: SkillsServer) -> list[str | None]:
    """The cursor of every page, the first page's being None."""
    connection = server.connection()
    out: list[str | None] = [None]
    while True:
        result = connection.answer("skills/list", params(out[-1]))
        assert isinstance(result, dict)
        cursor = result.get("nextCursor")
        if cursor is None:
            return out
        assert isinstance(cursor, str)
        out.append(cursor)


def median_us(connection: ServerConnection, page: dict[str, Any]) -> float:
    samples = []
    for _ in range(CALLS):
        start = time.perf_counter()
        connection.answer("skills/list", page)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def main() -> None:
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"
    )
    print(f"python:  {sys.version.split()[0]} ({platform.python_implementation()})")
    print(f"page size 50; lowest of {ROUNDS} medians of {CALLS:,} calls per figure")
    print()
    cases: list[tuple[int, int, str, ServerConnection, dict[str, Any]]] = []
    for size in SIZES:
        server = SkillsServer(MemorySource(catalog(size)), cursor_key=os.urandom(32))
        pages = cursors(server)  # also the warm-up: every entry's JSON is now built
        for label, cursor in (
            ("first", pages[0]),
            ("middle", pages[len(pages) // 2]),
            ("last", pages[-1]),
        ):
            cases.append((size, len(pages), label, server.connection(), params(cursor)))
    best: dict[tuple[int, str], float] = {}
    for _ in range(ROUNDS):
        for size, _pages, label, connection, page in cases:
            figure = median_us(connection, page)
            best[size, label] = min(best.get((size, label), figure), figure)
    print(f"{'skills':>8} {'pages':>6} {'first':>10} {'middle':>10} {'last':>10}")
    for size in SIZES:
        count = next(pages for s, pages, *_ in cases if s == size)
        row = " ".join(f"{best[size, label]:>8.1f}us" for label in ("first", "middle", "last"))
        print(f"{size:>8,} {count:>6} {row}")


if __name__ == "__main__":
    main()
