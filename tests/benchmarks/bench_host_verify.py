"""Cost of verifying a maximal skill through the host.

Run: ``.venv/bin/python tests/benchmarks/bench_host_verify.py``.

Not a test (pytest ignores tests/benchmarks). Measures, in 15 interleaved rounds (each round runs
every measurement once, in the same order), side by side; the tables show the median and the
fastest round, as ratios to both baselines:

* **host**: a 512-file, 16 MiB skill (exactly the spec's limits) fed through
  :class:`skills_core.host.Host`: the ``skills/list`` result is parsed and registered, the skill is
  approved and loaded (SKILL.md: size, digest, frontmatter), then every other file is read and its
  ``resources/read`` result (a ``text`` item) decoded, size-checked, hashed, cached and delivered;
* **verify only**: the same, timing only the 512 ``on_response`` calls of the reads;
* **hashlib (bytes)**: ``hashlib.sha256(data).hexdigest()`` over the same 512 raw byte strings
  in one loop: the floor for any verifier;
* **hashlib (text)**: ``hashlib.sha256(text.encode()).hexdigest()`` over the 512 ``text`` values:
  the floor for a verifier that receives ``text`` on the wire, as every host does for text files
  (it must make the bytes it hashes and delivers; ``str`` offers no buffer to hash in place);
* **hashlib (text, kept)**: the same, keeping every encoded file: the floor with a memory cache,
  which holds the 16 MiB (fresh memory for the allocator, page faults included).

Issue 5's target is the no-cache verify-only row against the raw-bytes baseline (at most 1.1x).

It also reports the host's memory for 10,000 registered one-file entries (tracemalloc, after a
``skills/list`` walk of 4 pages of 2,500), and the machine it ran on.
"""

from __future__ import annotations

import gc
import hashlib
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any, TypeVar

from _bench_common import cpu_model

from skills_core.digest import compute_digest
from skills_core.host import (
    DeliverToModel,
    Effect,
    Host,
    MemoryCacheStore,
    RequestApproval,
    SendRequest,
)
from skills_core.messages import server_capabilities
from skills_core.spec import MAX_RESOURCES, MAX_TOTAL_BYTES

LABEL = "bench"
ROOT = "skill://bench-skill"
SKILL_URI = f"{ROOT}/SKILL.md"
ROUNDS = 15
#: Issue 5: verifying (no cache) within this factor of hashing the raw bytes.
TARGET = 1.1
CACHE = {"ttlMs": 300000, "cacheScope": "public"}


def make_files(count: int = MAX_RESOURCES) -> dict[str, bytes]:
    """``count`` ASCII files totalling exactly 16 MiB (the server sends them as ``text``)."""
    size = MAX_TOTAL_BYTES // count
    head = b"---\nname: bench-skill\ndescription: A maximal skill for the benchmark\n---\n\n"
    line = b"The quick brown fox jumps over the lazy dog; 0123456789.\n"
    filler = line * (size // len(line) + 1)
    files = {"SKILL.md": (head + filler)[:size]}
    for index in range(1, count):
        files[f"files/f{index:03d}.txt"] = (b"%06d " % index + filler)[:size]
    assert sum(len(d) for d in files.values()) == MAX_TOTAL_BYTES
    return files


def make_wire(files: dict[str, bytes]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    entry = {
        "uri": SKILL_URI,
        "frontmatter": {"name": "bench-skill", "description": "A maximal skill for the benchmark"},
        "resources": [
            {"uri": f"{ROOT}/{p}", "digest": compute_digest(d), "size": len(d)}
            for p, d in files.items()
        ],
    }
    listing = {"resultType": "complete", "skills": [entry], **CACHE}
    reads = {
        f"{ROOT}/{p}": {
            "resultType": "complete",
            "contents": [{"uri": f"{ROOT}/{p}", "mimeType": "text/plain", "text": d.decode()}],
            **CACHE,
        }
        for p, d in files.items()
    }
    return listing, reads


def run_host(
    listing: dict[str, Any],
    reads: dict[str, dict[str, Any]],
    paths: list[str],
    cache: MemoryCacheStore | None = None,
) -> float:
    """Feed the skill through a fresh host; return the seconds spent in the 512 read responses."""
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


T = TypeVar("T")


def only(effects: list[Effect], kind: type[T]) -> T:
    """The one effect of ``kind`` in ``effects``."""
    found = [e for e in effects if isinstance(e, kind)]
    assert len(found) == 1, effects
    return found[0]


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


def measure(count: int) -> None:
    """Print the table for a 16 MiB skill of ``count`` files."""
    files = make_files(count)
    listing, reads = make_wire(files)
    paths = [p for p in files if p != "SKILL.md"]
    blobs = list(files.values())
    texts = [r["contents"][0]["text"] for r in reads.values()]

    def hash_bytes() -> None:
        for data in blobs:
            hashlib.sha256(data).hexdigest()

    def hash_text() -> None:
        for text in texts:
            hashlib.sha256(text.encode()).hexdigest()

    def hash_text_kept() -> None:
        kept = []
        for text in texts:
            data = text.encode()
            hashlib.sha256(data).hexdigest()
            kept.append(data)

    def host_round(cache_bytes: int | None) -> tuple[float, float]:
        """One fresh host: (whole-flow seconds, verify-only seconds)."""
        cache = MemoryCacheStore(max_bytes=cache_bytes) if cache_bytes is not None else None
        start = time.perf_counter()
        verify = run_host(listing, reads, paths, cache)
        return time.perf_counter() - start, verify

    def timed(action: Callable[[], object]) -> float:
        start = time.perf_counter()
        action()
        return time.perf_counter() - start

    # Side by side: every round runs every measurement once, in the same order.
    host_round(0)  # warm up
    samples: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        round_ = {}
        gc.collect()
        round_["bytes"] = timed(hash_bytes)
        gc.collect()
        round_["text"] = timed(hash_text)
        gc.collect()
        round_["kept"] = timed(hash_text_kept)
        gc.collect()
        round_["full_nocache"], round_["verify_nocache"] = host_round(0)
        gc.collect()
        round_["full_cache"], round_["verify_cache"] = host_round(None)
        for key, value in round_.items():
            samples.setdefault(key, []).append(value)
    median = {key: statistics.median(values) for key, values in samples.items()}
    best = {key: min(values) for key, values in samples.items()}
    mib = MAX_TOTAL_BYTES / (1024 * 1024)
    print(f"skill: {len(files)} files, {MAX_TOTAL_BYTES} bytes ({mib:.0f} MiB), sent as text")
    print(
        f"{'measure':<56}{'median':>9}{'fastest':>9}{'MiB/s':>7}"
        f"{'x bytes':>9}{'x text':>8}{'x kept':>8}"
    )
    rows = [
        ("hashlib sha256 over the raw bytes (baseline 1)", "bytes"),
        ("hashlib sha256 over text.encode() (baseline 2)", "text"),
        ("hashlib sha256 over text.encode(), bytes kept", "kept"),
        ("host, verify only: read responses, no cache", "verify_nocache"),
        ("host, verify only: read responses, memory cache", "verify_cache"),
        ("host, whole flow: list+approve+load+reads, no cache", "full_nocache"),
        ("host, whole flow: list+approve+load+reads, memory cache", "full_cache"),
    ]
    for name, key in rows:
        seconds = median[key]
        print(
            f"{name:<56}{seconds * 1e3:>7.2f}ms{best[key] * 1e3:>7.2f}ms{mib / seconds:>7.0f}"
            f"{seconds / median['bytes']:>9.2f}{seconds / median['text']:>8.2f}"
            f"{seconds / median['kept']:>8.2f}"
        )
    overhead = (median["verify_nocache"] - median["text"]) / len(files) * 1e6
    print(f"host cost per read response beyond encode+hash: {overhead:.1f} us (medians)")
    ratio = median["verify_nocache"] / median["bytes"]
    verdict = "met" if ratio <= TARGET else "not met"
    print(
        f"target (issue 5): verify only, no cache <= {TARGET}x hashlib over the raw bytes: "
        f"{ratio:.2f}x ({verdict}); encode+hash alone is "
        f"{median['text'] / median['bytes']:.2f}x"
    )
    print()


def main() -> None:
    print(f"machine: {machine()}")
    print(f"{ROUNDS} interleaved rounds")
    print()
    measure(MAX_RESOURCES)  # the benchmark the issue asks for: 512 files, 16 MiB
    measure(16)  # the same bytes in 16 files: the gap above is per file, not per byte
    held, peak = registry_memory()
    print(
        f"host memory for 10,000 registered one-file entries: {held / 1e6:.1f} MB held "
        f"({held / 10_000:.0f} bytes per entry), {peak / 1e6:.1f} MB peak during the walk"
    )


if __name__ == "__main__":
    main()
