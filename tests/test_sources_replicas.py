"""Many replicas, one answer: ``serve --http`` processes over one bucket and over one repository.

Two replicas (separate processes, as on separate machines) sharing a cursor key file give
identical entries, accept each other's cursors, list a new publish (or commit) within ``ttlMs``
of its commit point, and never list an older catalog after a newer one. The conformance suite's
SEP-2640 scenarios pass against a replica serving from the bucket.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from http_helpers import (
    CONFORMANCE,
    Served,
    exchange,
    modern_headers,
    require_node_tools,
    rpc,
    run_node_tool,
    serving,
)
from interop_helpers import EXTRA_FILES, write_files, write_spec_skill
from seaweed_helpers import Seaweed, seaweed
from server_helpers import skill_md

from skills_core.server.filesystem import FilesystemSource
from skills_core.sources.s3 import publish
from skills_core.sources.urls import S3URL

MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
SEP_2640 = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"]
RESULT = re.compile(r"Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings")


@pytest.fixture(scope="module")
def weed() -> Seaweed:
    return seaweed()


def listing(served: Served, cursor: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"_meta": MODERN}
    if cursor is not None:
        params["cursor"] = cursor
    answer = exchange(
        served.port, "POST", "/mcp", modern_headers("skills/list"), rpc("skills/list", params)
    )
    assert answer.status == 200, answer.body
    result: dict[str, Any] = answer.json()["result"]
    return result


def all_uris(served: Served) -> list[str]:
    uris: list[str] = []
    cursor = None
    while True:
        page = listing(served, cursor)
        uris += [entry["uri"] for entry in page["skills"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            return uris


def write_generation(root: Path, count: int) -> None:
    for number in range(count):
        name = f"skill-{number:02d}"
        path = root / name / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(skill_md(name, f"Skill number {number}"))


@pytest.fixture
def two_replicas(weed: Seaweed, tmp_path: Path) -> Iterator[tuple[Path, S3URL, Served, Served]]:
    root = tmp_path / "tree"
    write_generation(root, 3)
    url = S3URL("skills", f"replicas-{tmp_path.name}")
    env = weed.env
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        publish(FilesystemSource([root]), url, scheme="skill")
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    key = tmp_path / "cursor.key"
    args = ("--cursor-key-file", str(key), "--ttl-ms", "1000", "--page-size", "1")
    with (
        serving(str(url), *args, env=env) as first,  # type: ignore[arg-type]
        serving(str(url), *args, env=env) as second,  # type: ignore[arg-type]
    ):
        yield root, url, first, second


def test_replicas_agree_and_accept_each_others_cursors(
    two_replicas: tuple[Path, S3URL, Served, Served],
) -> None:
    _, _, first, second = two_replicas
    assert listing(first) == listing(second)
    # a page from one, the next from the other, and so on
    uris: list[str] = []
    cursor = None
    for number in range(10):
        page = listing(first if number % 2 == 0 else second, cursor)
        uris += [entry["uri"] for entry in page["skills"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert uris == all_uris(first) == [f"skill://skill-{n:02d}/SKILL.md" for n in range(3)]


def test_every_replica_lists_a_publish_within_ttl_and_never_goes_back(
    weed: Seaweed, two_replicas: tuple[Path, S3URL, Served, Served]
) -> None:
    root, url, first, second = two_replicas
    write_generation(root, 5)
    published = subprocess.run(
        [sys.executable, "-m", "skills_core", "publish", str(root), str(url)],
        env={**os.environ, **weed.env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert published.returncode == 0, published.stderr
    committed = time.monotonic()
    seen: dict[int, float] = {}
    history: dict[int, list[int]] = {first.port: [], second.port: []}
    while len(seen) < 2:
        for served in (first, second):
            count = len(all_uris(served))
            history[served.port].append(count)
            if count == 5 and served.port not in seen:
                seen[served.port] = time.monotonic() - committed
        assert time.monotonic() - committed < 10, history
        time.sleep(0.05)
    # within ttlMs (1 s) of the commit point, with a margin for a loaded machine
    assert max(seen.values()) < 3.0, seen
    for counts in history.values():  # never back to the old catalog once the new one was listed
        assert counts == sorted(counts), counts


@pytest.fixture(scope="module")
def bucket_replica(weed: Seaweed, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    require_node_tools()
    root = tmp_path_factory.mktemp("conformance-bucket")
    write_spec_skill(root)
    write_files(root, EXTRA_FILES)
    url = S3URL("skills", f"conformance-{root.name}")
    done = subprocess.run(
        [sys.executable, "-m", "skills_core", "publish", str(root), str(url)],
        env={**os.environ, **weed.env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with serving(str(url), env=weed.env) as served:  # type: ignore[arg-type]
        yield served


@pytest.mark.parametrize("scenario", SEP_2640)
def test_sep_2640_scenarios_against_a_bucket_replica(bucket_replica: Served, scenario: str) -> None:
    result = run_node_tool(
        [str(CONFORMANCE), "server", "--url", bucket_replica.url, "--scenario", scenario]
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    found = RESULT.search(output)
    assert found is not None, output[-3000:]
    passed, total, failed, warnings = map(int, found.groups())
    assert (failed, warnings) == (0, 0)
    assert passed == total >= 6, output[-3000:]
    assert not re.findall(r"\[([\w-]+)\s*\]\s*\S*SKIPPED", output)
