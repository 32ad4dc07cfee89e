"""Warm starts from a digest index vs cold starts, as whole ``manifest --json`` processes.

Run: ``.venv/bin/python tests/benchmarks/bench_warm_start.py [--rounds N] [--trees small,large]
[--baseline REV]``.

Two trees, built once in a temporary folder:

* **small**: the 5,000 corpus skills of ``bench_catalog.py`` (small ``SKILL.md`` files only);
* **large**: 1,000 skills, each a ``SKILL.md`` and four 256 KiB assets (1 MiB of assets per
  skill, about 1 GiB in all; every file's bytes differ, so every digest does).

Each measurement is a fresh process with its output sent to ``/dev/null`` (the interpreter's
start and the imports included; bytecode compiled beforehand, as ``bench_startup.py`` does):

* **bare**: ``os.walk`` the tree, read every file, ``hashlib.sha256`` it (the issue's bare walk);
* **cold**: ``skills-core manifest --json ROOT``;
* **cold, writing the index**: ``manifest --json --index FILE`` with no index yet;
* **warm**: ``manifest --json --index FILE`` with the index of the unchanged tree;
* **baseline** (with ``--baseline REV``): ``manifest --json ROOT`` run from ``git archive REV``,
  the code before the index existed (the "cold no slower than today" check).

Rounds are interleaved (every round runs every measurement once, in the same order); the table
shows the median wall time and the median CPU time of the child (user + system, from ``wait4``),
which moves less than wall time on a busy machine. The two outputs are checked to be identical.

Then, for each tree, where a start's CPU time goes, measured in one process (median of rounds,
the garbage collector paused as ``manifest`` pauses it): the fixed cost of any
``manifest --json`` process (the same command on an empty folder: the interpreter and the
imports), reading the index, the walk (``_snapshot``), building the catalog from it, and writing
the JSON; beside them the *stat-only safe walk* (each folder opened by name from its parent with
``O_NOFOLLOW``, listed, each file ``fstatat``-ed, nothing else): the floor of a walk that lists
every folder and checks every file's signature without following links. A warm start does less
than that: it replays a folder whose signature is unchanged instead of listing it (see
``skills_core.server.filesystem``). The line "floor of a warm start" adds the fixed cost, the
stat-only walk, and the warm catalog and JSON. A warm walk makes one ``SnapshotFile`` per file
with a trusted constructor (``skills_core._fast``): the row "plain constructor vs trusted
constructor" says what the plain constructor would add to the warm walk, per file.

Last, the second-thread experiment: in one process, walk + read + SHA-256 of each tree on one
thread, and with the reads and hashes on a pool of two threads (``hashlib`` releases the GIL for
inputs over 2 KiB and ``os.read`` does too). It says whether a second thread could pay here at
all: the source's walk does the same work and more. (Handing files of 256 KiB or more to one or
two worker threads inside the source was built and measured: a cold ``manifest`` of the large
tree took 1.13-1.14x as long as without, wall and CPU time alike, so it was taken out again.)
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _bench_common import (
    REPO,
    Construction,
    child_env,
    compile_bytecode,
    constructor_rows,
    cpu_model,
)
from bench_catalog import bare_safe_walk, build_tree

from skills_core.cli.manifest import _json_document
from skills_core.digest import compute_digest
from skills_core.server import FilesystemSource
from skills_core.server.model import SnapshotFile, new_snapshot_file

#: Issue 15: warm at most this fraction of the bare walk on the large tree ...
LARGE_TARGET = 0.25
#: ... and of our own cold start on the small tree.
SMALL_TARGET = 0.6
ASSET = 256 * 1024
ASSETS_PER_SKILL = 4
LARGE_SKILLS = 1_000

BARE = """
import hashlib, os, sys
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        with open(os.path.join(folder, name), "rb") as handle:
            hashlib.sha256(handle.read()).hexdigest()
"""


def build_large(target: Path) -> int:
    """1,000 skills of a SKILL.md and 1 MiB of assets each; returns the bytes written."""
    block = os.urandom(ASSET)
    total = 0
    for number in range(LARGE_SKILLS):
        name = f"asset-skill-{number:04d}"
        assets = target / name / "assets"
        assets.mkdir(parents=True)
        text = f"---\nname: {name}\ndescription: Skill {number} with large assets\n---\n# {name}\n"
        (target / name / "SKILL.md").write_text(text)
        total += len(text)
        for part in range(ASSETS_PER_SKILL):
            data = number.to_bytes(4, "big") + part.to_bytes(4, "big") + block[8:]
            (assets / f"part-{part}.bin").write_bytes(data)
            total += len(data)
    return total


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (user + system) and stdout of one child process."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE)
    assert process.stdout is not None
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"{argv} exited with {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, out


def measure_tree(
    label: str, tree: Path, work: Path, rounds: int, baseline: Path | None
) -> dict[str, float]:
    env = child_env()
    manifest = [sys.executable, "-m", "skills_core", "manifest", "--json"]
    index = work / f"{label}.index"
    fresh = work / f"{label}.fresh.index"
    measures: dict[str, Callable[[], tuple[float, float, bytes]]] = {
        "bare: walk + read + sha256": lambda: run(
            [sys.executable, "-c", BARE, str(tree)], REPO, env
        ),
        "cold: manifest --json": lambda: run([*manifest, str(tree)], REPO, env),
        "cold, writing the index": lambda: run(
            [*manifest, "--index", str(fresh), str(tree)], REPO, env
        ),
        "warm: from the index": lambda: run(
            [*manifest, "--index", str(index), str(tree)], REPO, env
        ),
    }
    if baseline is not None:
        old_env = dict(env, PYTHONPATH=str(baseline))
        measures["baseline: manifest --json (before)"] = lambda: run(
            [*manifest, str(tree)], baseline, old_env
        )
    # Warm-up: the page cache, the index (written once, then old enough to be trusted).
    _, _, cold_out = measures["cold: manifest --json"]()
    run([*manifest, "--index", str(index), str(tree)], REPO, env)
    time.sleep(3.5)  # files written just now are racy and never recorded
    run([*manifest, "--index", str(index), str(tree)], REPO, env)
    _, _, warm_out = measures["warm: from the index"]()
    assert warm_out == cold_out, "warm and cold outputs differ"
    walls: dict[str, list[float]] = {name: [] for name in measures}
    cpus: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(rounds):
        for name, action in measures.items():
            fresh.unlink(missing_ok=True)
            wall, cpu, _ = action()
            walls[name].append(wall)
            cpus[name].append(cpu)
    print(f"\n{label}: median of {rounds} interleaved rounds (ratio range: per round)")
    print(f"  {'process':<38} {'wall':>9} {'x bare':>7} {'x cold':>7} {'CPU':>9} {'x cold':>7}")
    bare = statistics.median(walls["bare: walk + read + sha256"])
    cold = statistics.median(walls["cold: manifest --json"])
    cold_cpu = statistics.median(cpus["cold: manifest --json"])
    for name in measures:
        wall = statistics.median(walls[name])
        cpu = statistics.median(cpus[name])
        print(
            f"  {name:<38} {wall * 1e3:7.0f}ms {wall / bare:7.2f} {wall / cold:7.2f} "
            f"{cpu * 1e3:7.0f}ms {cpu / cold_cpu:7.2f}"
        )
    result = {
        "warm/bare": statistics.median(walls["warm: from the index"]) / bare,
        "warm/cold": statistics.median(walls["warm: from the index"]) / cold,
        "warm/cold cpu": statistics.median(cpus["warm: from the index"]) / cold_cpu,
    }
    if baseline is not None:
        result["cold/baseline"] = cold / statistics.median(
            walls["baseline: manifest --json (before)"]
        )
    per_round = sorted(
        w / c
        for w, c in zip(walls["warm: from the index"], walls["cold: manifest --json"], strict=True)
    )
    print(f"  warm/cold per round: {per_round[0]:.2f}-{per_round[-1]:.2f}")
    return result


def breakdown(label: str, tree: Path, index: Path, empty: Path, rounds: int) -> None:
    """Where the CPU time of a cold and a warm start goes (see the module docstring)."""
    env = child_env()
    fixed = statistics.median(
        run([sys.executable, "-m", "skills_core", "manifest", "--json", str(empty)], REPO, env)[1]
        for _ in range(rounds)
    )
    parts: dict[str, list[float]] = {}

    def clock(name: str, start: float) -> None:
        parts.setdefault(name, []).append(time.process_time() - start)

    # What a replay of these trees must look at: every folder and file (all in skills).
    entries = [
        os.path.relpath(os.path.join(folder, name), tree)
        for folder, folders, files in os.walk(tree)
        for name in [*folders, *files]
    ]
    gc.disable()  # as manifest does (and every process measured above)
    for _ in range(rounds):
        gc.collect()
        for mode in ("cold", "warm"):
            start = time.process_time()
            source = FilesystemSource([tree], index=index if mode == "warm" else None)
            clock(f"{mode}: make the source (warm: read the index)", start)
            start = time.process_time()
            snapshot = source._snapshot(0, "")
            clock(f"{mode}: walk", start)
            start = time.process_time()
            catalog = source._builder.build([snapshot])
            clock(f"{mode}: build the catalog", start)
            start = time.process_time()
            b"".join(_json_document(catalog))
            clock(f"{mode}: write the JSON", start)
        start = time.process_time()
        bare_safe_walk(tree, stat_only=True)
        clock("stat-only safe walk (lists every folder)", start)
        start = time.process_time()
        stat_every(tree, entries)
        clock("one fstatat per folder and file, nothing else", start)
        start = time.process_time()
        hashlib.sha256(index.read_bytes()).digest()
        clock("read the index and hash it, nothing else", start)
    gc.enable()
    median = {name: statistics.median(times) for name, times in parts.items()}
    print(f"\n{label}: CPU time by part, in one process (median of {rounds})")
    print(f"  {'fixed: manifest --json of an empty folder':<48} {fixed * 1e3:7.1f}ms")
    for name, seconds in median.items():
        print(f"  {name:<48} {seconds * 1e3:7.1f}ms")
    cold = fixed + sum(v for k, v in median.items() if k.startswith("cold"))
    warm = fixed + sum(v for k, v in median.items() if k.startswith("warm"))
    floor = (
        fixed
        + median["one fstatat per folder and file, nothing else"]
        + median["read the index and hash it, nothing else"]
    )
    print(f"  {'sum, cold':<48} {cold * 1e3:7.1f}ms")
    print(f"  {'sum, warm':<48} {warm * 1e3:7.1f}ms  ({warm / cold:.2f}x cold)")
    print(
        f"  {'floor of any warm start (fixed + the fstatats':<48}\n"
        f"  {'  + reading the index)':<48} {floor * 1e3:7.1f}ms  ({floor / cold:.2f}x cold)"
    )
    files = sum(len(names) for _, _, names in os.walk(tree))
    path, size, digest = "skill/assets/a.bin", 1 << 18, compute_digest(b"")
    file = Construction(
        "SnapshotFile",
        lambda: SnapshotFile(path, size, digest, None),
        lambda: new_snapshot_file(path, size, digest, None),
    )
    walk = median["warm: walk"] / files
    for line in constructor_rows([file], walk, "file", "the warm walk"):
        print(f"  {line}")


def stat_every(tree: Path, paths: list[str]) -> None:
    """``fstatat`` each path below ``tree`` (what a replay of an unchanged tree must do)."""
    fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for path in paths:
            os.stat(path, dir_fd=fd, follow_symlinks=False)
    finally:
        os.close(fd)


def read_and_hash(path: str) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        hasher = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            hasher.update(chunk)
        return hasher.hexdigest()
    finally:
        os.close(fd)


def second_thread(label: str, tree: Path, rounds: int) -> None:
    """Walk + read + hash on one thread, and with the reads and hashes on two."""
    paths = [os.path.join(folder, n) for folder, _, names in os.walk(tree) for n in names]
    pool = ThreadPoolExecutor(2)
    one: list[float] = []
    two: list[float] = []
    list(pool.map(read_and_hash, paths))
    for _ in range(rounds):
        start = time.perf_counter()
        for path in paths:
            read_and_hash(path)
        one.append(time.perf_counter() - start)
        start = time.perf_counter()
        list(pool.map(read_and_hash, paths, chunksize=16))
        two.append(time.perf_counter() - start)
    pool.shutdown()
    a, b = statistics.median(one), statistics.median(two)
    print(f"  {label}: one thread {a * 1e3:.0f}ms, two threads {b * 1e3:.0f}ms ({b / a:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trees", default="small,large")
    parser.add_argument("--baseline", metavar="REV", help="also run the code of this git revision")
    options = parser.parse_args()
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"
    )
    print(f"python:  {sys.version.split()[0]}; load average at start: {os.getloadavg()}")
    compile_bytecode()
    work = Path(tempfile.mkdtemp(prefix="bench-warm-"))
    try:
        baseline = None
        if options.baseline:
            baseline = work / "baseline"
            baseline.mkdir()
            archive = subprocess.run(
                ["git", "archive", options.baseline], cwd=REPO, check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(baseline)], input=archive, check=True)
        results: dict[str, dict[str, float]] = {}
        trees: dict[str, Path] = {}
        for label in options.trees.split(","):
            tree = work / label
            tree.mkdir()
            if label == "small":
                _, count, total = build_tree(tree)
            else:
                total, count = build_large(tree), LARGE_SKILLS
            print(f"tree {label}: {count:,} skills, {total / 1e6:,.1f} MB")
            trees[label] = tree
            results[label] = measure_tree(label, tree, work, options.rounds, baseline)
            empty = work / "empty"
            empty.mkdir(exist_ok=True)
            breakdown(label, tree, work / f"{label}.index", empty, options.rounds)
        print("\nsecond thread for reads and hashes (in one process, median of rounds):")
        for label, tree in trees.items():
            second_thread(label, tree, options.rounds)
        print("\ntargets (issue 15):")
        if "large" in results:
            ratio = results["large"]["warm/bare"]
            verdict = "met" if ratio <= LARGE_TARGET else "not met"
            print(f"  large: warm <= {LARGE_TARGET}x bare: {ratio:.2f}x ({verdict})")
        if "small" in results:
            ratio = results["small"]["warm/cold"]
            verdict = "met" if ratio <= SMALL_TARGET else "not met"
            print(
                f"  small: warm <= {SMALL_TARGET}x cold: {ratio:.2f}x ({verdict}); "
                f"in CPU time {results['small']['warm/cold cpu']:.2f}x"
            )
        for label, result in results.items():
            if "cold/baseline" in result:
                print(f"  {label}: cold x before: {result['cold/baseline']:.2f}")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
