"""What a hostile ``skills/list`` costs the host: memory kept, peak memory, and time.

Run: ``.venv/bin/python tests/benchmarks/bench_host_listing.py``.

Not a test (pytest ignores tests/benchmarks). Three hostile shapes, fed to a
:class:`skills_core.host.Host` with the default policy, each result decoded from JSON text first
(as a transport does, so every string is its own object):

* **maximal skills**: pages of 300 entries of 512 files each, with fresh cursors, for as long as
  the host asks (without budgets the 10,000-entry cap stopped this after 34 pages, 1.5 GB);
* **one huge page**: one page of 200,000 one-file entries (without the change all were validated
  to keep 10,000);
* **several servers**: five servers each sending the maximal-skill pages: the host-wide budget
  holds the total.

Memory is measured with ``tracemalloc`` (Python allocations; "kept" is what the registry holds after
the walk, "peak" the most in use while an answer was taken, above what was in use before it), time
in a separate run without tracing. Building and decoding the pages is not timed or counted.
"""

from __future__ import annotations

import json
import platform
import sys
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

from _bench_common import cpu_model

from skills_core.host import Effect, Host, ListingPartial, SendRequest
from skills_core.messages import server_capabilities

MB = 1_000_000


def entry_text(index: int, files: int) -> str:
    root = f"skill://hostile/s{index:07d}"
    rows = [f'{{"uri":"{root}/SKILL.md","digest":"sha256:{"1" * 64}","size":100}}']
    rows += [
        f'{{"uri":"{root}/f{j:04d}.md","digest":"sha256:{j:064x}","size":{j + 1}}}'
        for j in range(files - 1)
    ]
    return (
        f'{{"uri":"{root}/SKILL.md","frontmatter":{{"name":"s{index:07d}","description":"d"}},'
        f'"resources":[{",".join(rows)}]}}'
    )


def pages(count: int, files: int, first: int = 0) -> Iterator[Any]:
    number = 0
    while True:
        start = first + number * count
        items = ",".join(entry_text(start + i, files) for i in range(count))
        number += 1
        page = json.loads(
            f'{{"resultType":"complete","skills":[{items}],"nextCursor":"c{number}"}}'
        )
        del items
        yield page


def walk(host: Host, origin: str, source: Iterator[Any], *, traced: bool) -> dict[str, Any]:
    """Answer the walk from ``source``; return pages taken, time, peak, and how it ended."""
    effects: list[Effect] = host.list_skills(origin)
    taken = 0
    seconds = 0.0
    peak = 0
    while True:
        sends = [e for e in effects if isinstance(e, SendRequest)]
        if not sends:
            break
        result = next(source)
        if traced:
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
        started = time.perf_counter()
        effects = host.on_response(origin, sends[0].token, result=result)
        seconds += time.perf_counter() - started
        if traced:
            peak = max(peak, tracemalloc.get_traced_memory()[1] - base)
        taken += 1
        del result
    ended = next((e for e in effects if isinstance(e, ListingPartial)), None)
    return {
        "pages": taken,
        "seconds": seconds,
        "peak": peak,
        "why": ended.reason.value if ended is not None else "complete",
    }


def run(name: str, servers: int, count: int, files: int, *, one_page: bool = False) -> None:
    results = []
    for traced in (False, True):
        host = Host()
        if traced:
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
        walks = []
        for index in range(servers):
            label = f"s{index}"
            host.connect(label, server_capabilities(directory_read=False))
            source = pages(count, files, first=index * 10_000_000)
            if one_page:
                source = iter([{**next(source), "nextCursor": None}])
            walks.append(walk(host, label, source, traced=traced))
            del source  # the last page the walk was offered, but did not take, goes too
        kept = tracemalloc.get_traced_memory()[0] - before if traced else 0
        if traced:
            tracemalloc.stop()
        results.append((walks, kept, host.registry.count(), host.registry.usage()))
    (timed, _, entries, usage), (traced_walks, kept, _, _) = results
    seconds = sum(w["seconds"] for w in timed)
    peak = max(w["peak"] for w in traced_walks)
    print(
        f"{name:<44} {entries:>8} {usage.resources:>9} {seconds:>8.2f}s {kept / MB:>8.1f} "
        f"{peak / MB:>8.1f}  {', '.join(sorted({w['why'] for w in timed}))}"
    )


def main() -> None:
    print(f"machine: {cpu_model()}, Python {platform.python_version()} ({sys.implementation.name})")
    print(
        f"{'shape':<44} {'entries':>8} {'rows':>9} {'time':>9} {'kept MB':>8} {'peak MB':>8}"
        "  stopped by"
    )
    run("maximal skills: pages of 300 x 512 files", 1, 300, 512)
    run("one page of 200,000 one-file entries", 1, 200_000, 1, one_page=True)
    run("five servers sending maximal skills", 5, 300, 512)


if __name__ == "__main__":
    main()
