"""Cost of verifying a maximal skill through the host, against the least any host must do.

Run: ``.venv/bin/python tests/benchmarks/bench_host_verify.py [--rounds N]``.

Not a test (pytest ignores tests/benchmarks). A 512-file, 16 MiB skill (exactly the spec's
limits) is fed through :class:`skills_core.host.Host`: the ``skills/list`` result is parsed and
registered, the skill is approved and loaded (SKILL.md: size, digest, frontmatter), then every
other file is read and its ``resources/read`` result decoded, size-checked, hashed, cached (when
the host has a cache) and delivered. Every round runs every measurement once, in the same order
(interleaved, so a slow phase of the machine hits them all); the tables show the median and the
fastest round.

**Floors**, the least a Python host can do with what arrives, over the same 512 files:

* *raw bytes*: ``hashlib.sha256(data).hexdigest()`` over the raw bytes (no host receives those);
* *text*: ``hashlib.sha256(text.encode()).hexdigest()``, for content sent as ``text``: the host must
  make the bytes it hashes and delivers (a ``str`` offers no buffer to hash in place);
* *text, kept*: the same, keeping every encoded file, as a memory cache does; measured twice, once
  from **fresh memory** (free heap memory is handed back to the kernel first, with glibc's
  ``malloc_trim``, so the 16 MiB are first-touch pages, as when a host first fills its cache) and
  once from **recycled memory** (16 MiB were allocated, touched and freed just before, as in a host
  that has been running for a while);
* *blob*: ``hashlib.sha256(binascii.a2b_base64(blob, strict_mode=True)).hexdigest()``, for content
  sent as ``blob``: strict base64 (what ``base64.b64decode(validate=True)`` checks), read straight
  from the string.

**Host rows**: *verify only* times just the 512 ``on_response`` calls of the reads (SKILL.md's
included), each timed on its own between the untimed ``read`` calls; *whole flow* is everything
from connecting to the last delivery. *No cache* is a host whose store keeps nothing
(``MemoryCacheStore(max_bytes=0)``); *memory cache* an unbounded ``MemoryCacheStore``, new in each
round, so every file is a miss that the cache then keeps, from fresh or from recycled memory as
for the kept floor.

**Targets** (issue 15), on the verify-only rows: text, no cache, at most 1.1x the text floor; blob,
no cache, at most 1.1x the blob floor; text with the memory cache at most 1.3x the text floor
(both memory rows are held to it; the kept floors show what the memory itself costs).

The same 512 reads of 64-byte files (text, no cache, verify only, against their text floor) give
the host's cost per read with no large data in between; what the gap above has beyond it is what
32 KiB files add (the interpreter's code and data fetched again after each file is encoded and
hashed).

It also prints the minor page faults of each measurement (memory the process had to get from the
kernel; ``resource.getrusage``, so POSIX only), the host's memory for 10,000 registered one-file
entries (tracemalloc, after a ``skills/list`` walk of 4 pages of 2,500), and the machine it ran on.

**Trusted constructors** (``skills_core._fast``): a verified read builds its delivery
(``DeliverToModel``) and its ``KeepVerified`` intent with trusted constructors, and the read
before it its ``ReadFile`` record. Rows "plain constructor vs trusted constructor" give the cost of
each object both ways and what the plain constructors would add per read: to the text floor for
the two of the verify-only rows, to the whole flow's time per read for all three.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import ctypes
import gc
import hashlib
import os
import platform
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from _bench_common import Construction, constructor_rows, cpu_model

from skills_core.digest import compute_digest
from skills_core.entry import SkillResource
from skills_core.host import (
    DeliverToModel,
    DeliveryKind,
    Effect,
    Host,
    MemoryCacheStore,
    RequestApproval,
    SendRequest,
)
from skills_core.host.effects import skill_file_delivery
from skills_core.host.intents import KeepVerified, keep_verified
from skills_core.host.requests import ReadFile, read_file
from skills_core.messages import server_capabilities
from skills_core.spec import MAX_RESOURCES, MAX_TOTAL_BYTES

LABEL = "bench"
ROOT = "skill://bench-skill"
SKILL_URI = f"{ROOT}/SKILL.md"
ROUNDS = 15
CACHE = {"ttlMs": 300000, "cacheScope": "public"}

Wire = tuple[dict[str, Any], dict[str, dict[str, Any]]]


def make_files(count: int = MAX_RESOURCES) -> dict[str, bytes]:
    """``count`` ASCII files totalling exactly 16 MiB."""
    size = MAX_TOTAL_BYTES // count
    head = b"---\nname: bench-skill\ndescription: A maximal skill for the benchmark\n---\n\n"
    line = b"The quick brown fox jumps over the lazy dog; 0123456789.\n"
    filler = line * (size // len(line) + 1)
    files = {"SKILL.md": (head + filler)[:size]}
    for index in range(1, count):
        files[f"files/f{index:03d}.txt"] = (b"%06d " % index + filler)[:size]
    assert sum(len(d) for d in files.values()) == MAX_TOTAL_BYTES
    return files


def make_wire(files: dict[str, bytes], *, blob: bool = False) -> Wire:
    """The ``skills/list`` result, and the ``resources/read`` result of every file by URI, each
    file sent as ``text`` (or as ``blob`` when ``blob``)."""
    entry = {
        "uri": SKILL_URI,
        "frontmatter": {"name": "bench-skill", "description": "A maximal skill for the benchmark"},
        "resources": [
            {"uri": f"{ROOT}/{p}", "digest": compute_digest(d), "size": len(d)}
            for p, d in files.items()
        ],
    }
    listing = {"resultType": "complete", "skills": [entry], **CACHE}
    reads = {}
    for path, data in files.items():
        uri = f"{ROOT}/{path}"
        body = {"blob": base64.b64encode(data).decode()} if blob else {"text": data.decode()}
        item = {"uri": uri, "mimeType": "text/plain", **body}
        reads[uri] = {"resultType": "complete", "contents": [item], **CACHE}
    return listing, reads


T = TypeVar("T")


def only(effects: list[Effect], kind: type[T]) -> T:
    """The one effect of ``kind`` in ``effects``."""
    found = [e for e in effects if isinstance(e, kind)]
    assert len(found) == 1, effects
    return found[0]


def run_host(wire: Wire, paths: list[str], cache: MemoryCacheStore) -> float:
    """Feed the skill through a fresh host; return the seconds spent in the 512 read responses."""
    listing, reads = wire
    host = Host(cache=cache)
    host.connect(LABEL, server_capabilities(directory_read=False))
    send = only(host.list_skills(LABEL), SendRequest)
    host.on_response(LABEL, send.token, result=listing)
    prompt = only(host.load(LABEL, SKILL_URI), RequestApproval)
    send = only(host.approve(prompt.prompt_id), SendRequest)
    on_response = host.on_response
    read = host.read
    start = time.perf_counter()
    delivered = only(on_response(LABEL, send.token, result=reads[SKILL_URI]), DeliverToModel)
    verify = time.perf_counter() - start
    assert delivered.verified
    for path in paths:
        send = only(read(LABEL, SKILL_URI, path), SendRequest)
        result = reads[f"{ROOT}/{path}"]
        start = time.perf_counter()
        effects = on_response(LABEL, send.token, result=result)
        verify += time.perf_counter() - start
        assert only(effects, DeliverToModel).verified
    return verify


def registry_memory(count: int = 10_000, page: int = 2_500) -> tuple[int, int]:
    """Bytes held by a host after registering ``count`` one-file entries; and the peak."""
    body = b"---\nname: x\ndescription: d\n---\n"
    digest = compute_digest(body)
    pages = []
    for start in range(0, count, page):
        skills = [
            {
                "uri": f"skill://s{i:05d}/x/SKILL.md",
                "frontmatter": {"name": "x", "description": f"skill number {i}"},
                "resources": [
                    {"uri": f"skill://s{i:05d}/x/SKILL.md", "digest": digest, "size": len(body)}
                ],
            }
            for i in range(start, min(start + page, count))
        ]
        cursor = {"nextCursor": str(start + page)} if start + page < count else {}
        pages.append({"resultType": "complete", "skills": skills, **cursor, **CACHE})
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    host = Host()
    host.connect(LABEL, server_capabilities(directory_read=False))
    [send] = host.list_skills(LABEL)
    for result in pages:
        assert isinstance(send, SendRequest)
        effects = host.on_response(LABEL, send.token, result=result)
        send = next((e for e in effects if isinstance(e, SendRequest)), send)
    del effects, result
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert host.registry.count() == count
    return current - before, peak - before


def machine() -> str:
    return (
        f"{cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"Python {sys.version.split()[0]} ({platform.python_implementation()}), "
        f"OpenSSL {__import__('ssl').OPENSSL_VERSION.split()[1]}"
    )


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table: what it measures, the sample's key, and the floor it is held to."""

    name: str
    key: str
    floor: str
    target: float | None = None


#: The floors, then the host; ``floor`` names the row a host row is compared with.
ROWS = (
    Row("floor: sha256 of the raw bytes", "bytes", "bytes"),
    Row("floor, text: sha256(text.encode())", "text", "text"),
    Row("floor, text kept, fresh memory", "kept_fresh", "kept_fresh"),
    Row("floor, text kept, recycled memory", "kept_recycled", "kept_recycled"),
    Row("floor, blob: sha256(a2b_base64(blob))", "blob", "blob"),
    Row("host, verify only: text, no cache", "verify_text", "text", 1.1),
    Row("host, verify only: blob, no cache", "verify_blob", "blob", 1.1),
    Row("host, verify only: text, cache, fresh memory", "verify_fresh", "text", 1.3),
    Row("host, verify only: text, cache, recycled mem.", "verify_recycled", "text", 1.3),
    Row("host, whole flow: text, no cache", "flow_text", "text"),
    Row("host, whole flow: blob, no cache", "flow_blob", "blob"),
    Row("host, whole flow: text, cache, fresh memory", "flow_fresh", "text"),
    Row("host, whole flow: text, cache, recycled mem.", "flow_recycled", "text"),
)


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None


MALLOC_TRIM = _malloc_trim()


def fresh_memory() -> None:
    """Hand free heap memory back to the kernel, so what is allocated next is first-touch."""
    if MALLOC_TRIM is not None:
        MALLOC_TRIM(0)


def recycled_memory(total: int, piece: int) -> bytes:
    """Leave ``total`` bytes of touched, freed heap memory for what is allocated next.

    ``piece``-sized allocations are made and freed below a small one that stays (the returned pin,
    to keep until the measurement is done), so the allocator keeps them instead of trimming them.
    """
    pieces = [bytes(piece) for _ in range(total // piece + 1)]
    pin = bytes(1024)
    del pieces
    return pin


def measure(count: int, rounds: int) -> dict[str, float]:
    """Print the table for a 16 MiB skill of ``count`` files; return the median of each key."""
    files = make_files(count)
    text_wire = make_wire(files)
    blob_wire = make_wire(files, blob=True)
    paths = [p for p in files if p != "SKILL.md"]
    raw = list(files.values())
    texts = [r["contents"][0]["text"] for r in text_wire[1].values()]
    blobs = [r["contents"][0]["blob"] for r in blob_wire[1].values()]
    sha256 = hashlib.sha256
    a2b_base64 = binascii.a2b_base64

    def floor_bytes() -> None:
        for data in raw:
            sha256(data).hexdigest()

    def floor_text() -> None:
        for text in texts:
            sha256(text.encode()).hexdigest()

    def floor_kept() -> None:
        kept = []
        for text in texts:
            data = text.encode()
            sha256(data).hexdigest()
            kept.append(data)

    def floor_blob() -> None:
        for blob in blobs:
            sha256(a2b_base64(blob, strict_mode=True)).hexdigest()

    def timed(action: Callable[[], object]) -> float:
        start = time.perf_counter()
        action()
        return time.perf_counter() - start

    def host(wire: Wire, cache_bytes: int | None) -> tuple[float, float]:
        """One fresh host: (whole-flow seconds, verify-only seconds)."""
        store = MemoryCacheStore(max_bytes=cache_bytes)
        start = time.perf_counter()
        verify = run_host(wire, paths, store)
        return time.perf_counter() - start, verify

    def recycled(action: Callable[[], tuple[float, ...]]) -> Callable[[], tuple[float, ...]]:
        def run() -> tuple[float, ...]:
            pin = recycled_memory(MAX_TOTAL_BYTES, MAX_TOTAL_BYTES // count)
            values = action()
            del pin  # only now may the allocator trim what lies below it
            return values

        return run

    def fresh(action: Callable[[], tuple[float, ...]]) -> Callable[[], tuple[float, ...]]:
        def run() -> tuple[float, ...]:
            fresh_memory()
            return action()

        return run

    measurements: list[tuple[tuple[str, ...], Callable[[], tuple[float, ...]]]] = [
        (("bytes",), lambda: (timed(floor_bytes),)),
        (("text",), lambda: (timed(floor_text),)),
        (("kept_fresh",), fresh(lambda: (timed(floor_kept),))),
        (("kept_recycled",), recycled(lambda: (timed(floor_kept),))),
        (("blob",), lambda: (timed(floor_blob),)),
        (("flow_text", "verify_text"), lambda: host(text_wire, 0)),
        (("flow_blob", "verify_blob"), lambda: host(blob_wire, 0)),
        (("flow_fresh", "verify_fresh"), fresh(lambda: host(text_wire, None))),
        (("flow_recycled", "verify_recycled"), recycled(lambda: host(text_wire, None))),
    ]
    host(text_wire, None)  # warm up
    host(blob_wire, 0)
    samples: dict[str, list[float]] = {}
    faults: dict[str, list[int]] = {}
    for _ in range(rounds):
        for keys, action in measurements:
            gc.collect()
            before = minor_faults()
            values = action()
            spent = minor_faults() - before
            for key, value in zip(keys, values, strict=True):
                samples.setdefault(key, []).append(value)
                faults.setdefault(key, []).append(spent)
    median = {key: statistics.median(values) for key, values in samples.items()}
    best = {key: min(values) for key, values in samples.items()}
    mib = MAX_TOTAL_BYTES / (1024 * 1024)
    print(f"skill: {len(files)} files, {MAX_TOTAL_BYTES} bytes ({mib:.0f} MiB)")
    print(
        f"{'measure':<46}{'median':>9}{'fastest':>9}{'x floor':>8}{'rounds':>13}"
        f"{'x bytes':>8}{'x text':>7}{'faults':>7}"
    )
    for row in ROWS:
        seconds = median[row.key]
        # Per-round ratios to the floor measured in the same round: how much the phase moved them.
        ratios = [h / f for h, f in zip(samples[row.key], samples[row.floor], strict=True)]
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if row.key != row.floor else ""
        print(
            f"{row.name:<46}{seconds * 1e3:>7.2f}ms{best[row.key] * 1e3:>7.2f}ms"
            f"{seconds / median[row.floor]:>8.2f}{spread:>13}"
            f"{seconds / median['bytes']:>8.2f}{seconds / median['text']:>7.2f}"
            f"{statistics.median(faults[row.key]):>7.0f}"
        )
    for name, key, floor in (
        ("text", "verify_text", "text"),
        ("blob", "verify_blob", "blob"),
        ("cache, fresh memory", "verify_fresh", "kept_fresh"),
        ("cache, recycled memory", "verify_recycled", "kept_recycled"),
    ):
        extra = (median[key] - median[floor]) / len(files) * 1e6
        print(f"host cost per read beyond its floor ({name}, vs {floor}): {extra:.2f} us")
    for row in ROWS:
        if row.target is not None:
            ratio = median[row.key] / median[row.floor]
            verdict = "met" if ratio <= row.target else "not met"
            print(
                f"target: {row.name[6:]} <= {row.target}x {row.floor}: {ratio:.3f}x ({verdict}; "
                f"fastest rounds: {best[row.key] / best[row.floor]:.3f}x)"
            )
    print()
    return median


def small_files(rounds: int, count: int = MAX_RESOURCES, size: int = 64) -> None:
    """Print the host's cost per read beyond the text floor for ``count`` files of ``size`` bytes."""
    line = b"The quick brown fox jumps over the lazy dog; 0123456789.\n"
    head = b"---\nname: bench-skill\ndescription: A maximal skill for the benchmark\n---\n\n"
    files = {"SKILL.md": (head + line * 2)[: max(size, len(head))]}
    for index in range(1, count):
        files[f"files/f{index:03d}.txt"] = (b"%06d " % index + line * 2)[:size]
    wire = make_wire(files)
    paths = [p for p in files if p != "SKILL.md"]
    texts = [r["contents"][0]["text"] for r in wire[1].values()]
    sha256 = hashlib.sha256

    def floor() -> float:
        start = time.perf_counter()
        for text in texts:
            sha256(text.encode()).hexdigest()
        return time.perf_counter() - start

    run_host(wire, paths, MemoryCacheStore(max_bytes=0))  # warm up
    floors, hosts = [], []
    for _ in range(rounds):
        gc.collect()
        floors.append(floor())
        gc.collect()
        hosts.append(run_host(wire, paths, MemoryCacheStore(max_bytes=0)))
    extra = (statistics.median(hosts) - statistics.median(floors)) / count * 1e6
    fastest = (min(hosts) - min(floors)) / count * 1e6
    print(
        f"host cost per read beyond its floor, {count} files of {size} bytes (text, no cache, "
        f"verify only): {extra:.2f} us (fastest rounds: {fastest:.2f} us)"
    )
    print()


class _Session:
    """What a ``ReadFile`` record keeps of its load session: its generation."""

    generation = 3


def constructors(median: dict[str, float], count: int) -> None:
    """Print the trusted constructors' rows for one read of the ``count``-file skill."""
    data = make_files(count)["files/f001.txt"]
    uri = f"{ROOT}/files/f001.txt"
    row = SkillResource(uri=uri, digest=compute_digest(data), size=len(data))
    session = _Session()
    verify = [
        Construction(
            "DeliverToModel",
            lambda: DeliverToModel(
                origin=LABEL,
                uri=uri,
                kind=DeliveryKind.SKILL_FILE,
                content=data,
                verified=True,
                skill_uri=SKILL_URI,
                skill_root=ROOT,
                from_cache=False,
            ),
            lambda: skill_file_delivery(LABEL, uri, data, SKILL_URI, ROOT, from_cache=False),
        ),
        Construction(
            "KeepVerified",
            lambda: KeepVerified(origin=LABEL, resource=row, data=data),
            lambda: keep_verified(LABEL, row, data),
        ),
    ]
    read = Construction(
        "ReadFile",
        lambda: ReadFile(
            origin=LABEL,
            uri=uri,
            session=session,
            generation=session.generation,
            skill_uri=SKILL_URI,
            resource=row,
        ),
        lambda: read_file(LABEL, uri, session, SKILL_URI, row),
    )
    print("trusted constructors of a verified read (verify only: text, no cache):")
    for line in constructor_rows(verify, median["text"] / count, "read", "the text floor"):
        print(f"  {line}")
    print("trusted constructors of a read and its answer (whole flow: text, no cache):")
    for line in constructor_rows(
        [*verify, read], median["flow_text"] / count, "read", "the whole flow"
    ):
        print(f"  {line}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"{args.rounds} interleaved rounds; faults: median minor page faults per round")
    if MALLOC_TRIM is None:
        print("(no malloc_trim here: the fresh-memory rows are whatever the allocator gives)")
    print()
    median = measure(MAX_RESOURCES, args.rounds)  # the benchmark the issue asks for: 512 files
    small_files(args.rounds)
    constructors(median, MAX_RESOURCES)
    measure(16, args.rounds)  # the same bytes in 16 files: the gap above is per file, not per byte
    held, peak = registry_memory()
    print(
        f"host memory for 10,000 registered one-file entries: {held / 1e6:.1f} MB held "
        f"({held / 10_000:.0f} bytes per entry), {peak / 1e6:.1f} MB peak during the walk"
    )


if __name__ == "__main__":
    main()
