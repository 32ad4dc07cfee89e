"""Cost of ``verify_bytes`` and ``DigestVerifier`` against bare ``hashlib``, per file.

Run: ``.venv/bin/python tests/benchmarks/bench_verify_bytes.py [--rounds N] [--files N]
[--size BYTES]``.

Not a test (pytest ignores tests/benchmarks). The files are random bytes (512 files of 32 KiB by
default: the spec's 512-file limit, 16 MiB in all). Each round runs every measurement once over
every file, in the same order (interleaved, so a slow phase of the machine hits them all); the
table shows the median and the fastest round, each against the floor.

* **floor**: ``hashlib.sha256(data).hexdigest()``, the least any check of a SHA-256 digest does;
* **verify_bytes**: :func:`skills_core.verify_bytes` with the size, the ``sha256:`` digest and the
  URI, as a host verifies a file read whole (size first, then the digest);
* **compute_digest**: :func:`skills_core.compute_digest`, the server's and ``manifest``'s hashing;
* **floor, in pieces**: ``sha256()``, ``update`` per 8 KiB piece, ``hexdigest()``;
* **DigestVerifier, in pieces**: :class:`skills_core.DigestVerifier` fed the same pieces, then
  ``finish()``.

**Target**: ``verify_bytes`` over 512 files of 32 KiB at most 1.1x the floor.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

from _bench_common import cpu_model

from skills_core import DigestVerifier, compute_digest, verify_bytes

PIECE = 8192
FLOOR = "floor: sha256(data).hexdigest()"
FLOOR_PIECES = "floor, in pieces: update per 8 KiB"


def machine() -> str:
    return (
        f"{cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"Python {sys.version.split()[0]} ({platform.python_implementation()}), "
        f"OpenSSL {__import__('ssl').OPENSSL_VERSION.split()[1]}"
    )


def measurements(files: list[bytes]) -> dict[str, Callable[[], float]]:
    """Each measurement: a function that runs it over every file and returns the seconds."""
    digests = ["sha256:" + hashlib.sha256(data).hexdigest() for data in files]
    uris = [f"skill://bench/verify/files/f{index:03d}.bin" for index in range(len(files))]
    sizes = [len(data) for data in files]
    triples = list(zip(files, sizes, digests, uris, strict=True))
    sha256 = hashlib.sha256

    def floor() -> float:
        start = time.perf_counter()
        for data in files:
            sha256(data).hexdigest()
        return time.perf_counter() - start

    def ours() -> float:
        start = time.perf_counter()
        for data, size, digest, uri in triples:
            verify_bytes(data, size=size, digest=digest, uri=uri)
        return time.perf_counter() - start

    def compute() -> float:
        start = time.perf_counter()
        for data in files:
            compute_digest(data)
        return time.perf_counter() - start

    views = [
        [memoryview(data)[at : at + PIECE] for at in range(0, len(data), PIECE)] for data in files
    ]

    def floor_pieces() -> float:
        start = time.perf_counter()
        for pieces in views:
            hasher = sha256()
            for piece in pieces:
                hasher.update(piece)
            hasher.hexdigest()
        return time.perf_counter() - start

    def verifier_pieces() -> float:
        start = time.perf_counter()
        for pieces, (_, size, digest, uri) in zip(views, triples, strict=True):
            verifier = DigestVerifier(size=size, digest=digest, uri=uri)
            for piece in pieces:
                verifier.update(piece)
            verifier.finish()
        return time.perf_counter() - start

    return {
        FLOOR: floor,
        "verify_bytes": ours,
        "compute_digest": compute,
        FLOOR_PIECES: floor_pieces,
        "DigestVerifier, in pieces": verifier_pieces,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--files", type=int, default=512)
    parser.add_argument("--size", type=int, default=32 * 1024)
    args = parser.parse_args()
    files = [os.urandom(args.size) for _ in range(args.files)]
    runs = measurements(files)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for run in runs.values():
        run()  # warm up
    for _ in range(args.rounds):
        for name, run in runs.items():
            gc.collect()
            times[name].append(run())
    print(machine())
    print(f"{args.files} files of {args.size} bytes, {args.rounds} rounds")
    floor_of = {name: FLOOR_PIECES if "pieces" in name else FLOOR for name in runs}
    print(f"{'measure':40} {'median':>9} {'fastest':>9} {'x floor':>8} {'us/file':>8}")
    for name, values in times.items():
        floor = times[floor_of[name]]
        ratio = statistics.median(values) / statistics.median(floor)
        extra = (statistics.median(values) - statistics.median(floor)) / args.files * 1e6
        print(
            f"{name:40} {statistics.median(values) * 1e3:7.2f}ms {min(values) * 1e3:7.2f}ms "
            f"{ratio:8.3f} {extra:8.2f}"
        )
    ratio = statistics.median(times["verify_bytes"]) / statistics.median(times[FLOOR])
    fastest = min(times["verify_bytes"]) / min(times[FLOOR])
    verdict = "met" if ratio <= 1.1 else "not met"
    print(
        f"target: verify_bytes <= 1.1x the floor: {ratio:.3f}x ({verdict}; fastest rounds: "
        f"{fastest:.3f}x)"
    )


if __name__ == "__main__":
    main()
