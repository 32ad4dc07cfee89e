"""Publishing to and serving from an S3-compatible bucket, against a real S3 server (SeaweedFS).

``weed mini`` is started once for the test process (:mod:`seaweed_helpers`); each test publishes
under a prefix of its own. What is checked: ``publish`` uploads what ``serve ROOT`` would serve
and nothing the second time; a replica serves it, checked by the folder rules, every byte
verified; a blob replaced in the bucket gives a clean error and a log line naming its key; a
replica swaps whole catalogs, never an older generation, keeps serving through an outage and
recovers; garbage is collected after the grace only; and the command line does it all.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from interop_helpers import child_env
from seaweed_helpers import BUCKET, Seaweed, seaweed
from server_helpers import skill_md

from skills_core.digest import compute_digest
from skills_core.jsonvalue import JSONValue
from skills_core.server.filesystem import FilesystemSource
from skills_core.server.handler import PendingRead, SkillsServer
from skills_core.sources.published import (
    CatalogDocument,
    decode_document,
    document_from_catalog,
    encode_document,
)
from skills_core.sources.s3 import (
    Bucket,
    StoreError,
    collect_garbage,
    load_s3_state,
    open_s3_source,
    publish,
)
from skills_core.sources.store import BlobError, StoreSource
from skills_core.sources.urls import S3URL

MODERN: dict[str, JSONValue] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture(scope="module")
def weed() -> Seaweed:
    return seaweed()


@pytest.fixture
def s3env(weed: Seaweed, monkeypatch: pytest.MonkeyPatch) -> Seaweed:
    for name, value in weed.env.items():
        monkeypatch.setenv(name, value)
    return weed


_COUNTER = iter(range(1_000_000))


def prefix(name: str) -> S3URL:
    return S3URL(BUCKET, f"t{os.getpid()}-{next(_COUNTER)}-{name}")


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for relative, data in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def tree_v1() -> dict[str, bytes]:
    return {
        "alpha/SKILL.md": skill_md("alpha", "First skill"),
        "alpha/notes/a.md": b"alpha notes\n",
        "team/beta/SKILL.md": skill_md("beta", "Second skill"),
        "team/beta/data.bin": bytes(range(256)) * 4,
        "gamma/SKILL.md": skill_md("wrong-name", "Left out as its name is not its folder's"),
        "shared/SKILL.md": skill_md("shared", "Shares a file with alpha"),
        "shared/notes/a.md": b"alpha notes\n",
    }


def entries(source: object) -> list[dict[str, Any]]:
    catalog = source.scan()  # type: ignore[attr-defined]
    return [skill.entry.to_json() for skill in catalog.skills]


# --- publish and serve ---------------------------------------------------------------------------


def test_publish_then_serve_is_what_serve_root_serves(s3env: Seaweed, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    (root / "alpha" / "empty-dir").mkdir()
    folder = FilesystemSource([root])
    url = prefix("same")
    result = publish(folder, url, scheme="skill")
    assert result.changed
    assert result.generation == 1
    assert (result.skills, result.omitted) == (3, 1)
    # a file shared by two skills is one object
    assert result.uploaded == 5
    replica = open_s3_source(url, refresh=False)
    try:
        assert entries(replica) == entries(folder)
        served = {o.uri: o.code for o in replica.scan().omitted}
        assert served == {o.uri: o.code for o in folder.scan().omitted}
        for skill in replica.scan().skills:
            for uri, path in skill.files.items():
                data = replica.read(skill, path)
                assert data is not None
                resource = skill.entry.resource(uri)
                assert resource is not None
                assert compute_digest(data) == resource.digest
            original = folder.scan().get(skill.uri)
            assert original is not None
            assert replica.list_directory(skill, "") == folder.list_directory(original, "")
    finally:
        replica.close()


def test_publishing_the_same_tree_twice_uploads_nothing(s3env: Seaweed, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    url = prefix("twice")
    first = publish(FilesystemSource([root]), url, scheme="skill")
    bucket = Bucket(url)
    before = sorted((key, size) for key, size, _ in bucket.list(""))
    again = publish(FilesystemSource([root]), url, scheme="skill")
    assert not again.changed
    assert (again.generation, again.uploaded) == (first.generation, 0)
    assert sorted((key, size) for key, size, _ in bucket.list("")) == before
    # an edit uploads only what changed
    (root / "alpha" / "notes" / "b.md").write_bytes(b"new\n")
    third = publish(FilesystemSource([root]), url, scheme="skill")
    assert (third.changed, third.generation, third.uploaded) == (True, 2, 1)


def test_a_replica_swaps_whole_catalogs_and_never_goes_back(s3env: Seaweed, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    url = prefix("swap")
    publish(FilesystemSource([root]), url, scheme="skill")
    logged: list[str] = []
    replica = open_s3_source(url, ttl_ms=200, log=logged.append)
    try:
        old = replica.scan()
        (root / "alpha" / "SKILL.md").write_bytes(skill_md("alpha", "Changed"))
        (root / "delta" / "SKILL.md").parent.mkdir()
        (root / "delta" / "SKILL.md").write_bytes(skill_md("delta", "New"))
        publish(FilesystemSource([root]), url, scheme="skill")
        new = wait_for_new_catalog(replica)
        assert [s.entry.to_json() for s in new.skills] == entries(FilesystemSource([root]))
        assert old.get("skill://alpha/SKILL.md") != new.get("skill://alpha/SKILL.md")
        # an older document written over the commit point is refused and logged
        bucket = Bucket(url)
        got = bucket.get("catalogs/00000000000000000001.json")
        assert got is not None
        bucket.put("catalog.json", got[0])
        deadline = time.monotonic() + 10
        while not any("generation 1" in line for line in logged):
            assert time.monotonic() < deadline, logged
            time.sleep(0.05)
        assert replica.poll(0) is None
        assert replica.state.generation == 2
    finally:
        replica.close()


def wait_for_new_catalog(source: StoreSource, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        catalog = source.poll(0)
        if catalog is not None:
            return catalog
        assert time.monotonic() < deadline, "the replica never saw the new catalog"
        time.sleep(0.02)


def test_a_reader_never_sees_half_a_publish(s3env: Seaweed, tmp_path: Path) -> None:
    """While publishes run, every catalog a replica serves is one publish's, and every file it
    reads matches the digest its entry publishes."""
    root = write_tree(tmp_path / "tree", tree_v1())
    url = prefix("half")
    publish(FilesystemSource([root]), url, scheme="skill")
    replica = open_s3_source(url, ttl_ms=100)
    published: dict[int, list[dict[str, Any]]] = {}
    stop = threading.Event()
    problems: list[str] = []

    def read_all() -> None:
        while not stop.is_set():
            catalog = replica.scan()
            generation = replica.state.generation
            if (
                generation in published
                and [s.entry.to_json() for s in catalog.skills] != published[generation]
            ):
                problems.append(f"generation {generation} served other entries")
            for skill in catalog.skills:
                for uri, path in skill.files.items():
                    data = replica.read(skill, path)
                    resource = skill.entry.resource(uri)
                    assert data is not None
                    assert resource is not None
                    if compute_digest(data) != resource.digest:
                        problems.append(f"{uri} does not match")

    published[1] = entries(FilesystemSource([root]))
    reader = threading.Thread(target=read_all)
    reader.start()
    try:
        for round_ in range(2, 6):
            (root / "alpha" / "notes" / "a.md").write_bytes(b"round %d\n" % round_)
            folder = FilesystemSource([root])
            published[round_] = entries(folder)
            publish(folder, url, scheme="skill")
            time.sleep(0.2)
    finally:
        stop.set()
        reader.join(timeout=30)
        replica.close()
    assert not problems
    assert replica.state.generation >= 2


def test_a_replaced_blob_is_a_clean_error_with_its_key_logged(
    s3env: Seaweed, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    url = prefix("corrupt")
    publish(FilesystemSource([root]), url, scheme="skill")
    logged: list[str] = []
    replica = open_s3_source(url, refresh=False, log=logged.append)
    try:
        server = SkillsServer(replica, cursor_key=b"k" * 32)
        skill = replica.scan().get("skill://alpha/SKILL.md")
        assert skill is not None
        resource = skill.entry.resource("skill://alpha/notes/a.md")
        assert resource is not None
        key = "blobs/sha256/" + resource.digest.removeprefix("sha256:")
        Bucket(url).put(key, b"ALPHA NOTES\n")  # same size, other bytes
        answer = server.answer(
            "resources/read", {"uri": "skill://alpha/notes/a.md", "_meta": MODERN}
        )
        assert getattr(answer, "code", None) == -32603
        assert any(key in line and "does not match its digest" in line for line in logged)
        with pytest.raises(BlobError):
            replica.read(skill, "notes/a.md")
        # a read deferred to a worker thread fails the same way
        deferred = server.answer(
            "resources/read",
            {"uri": "skill://alpha/notes/a.md", "_meta": MODERN},
            defer_reads_over=1 << 20,
        )
        assert type(deferred) is PendingRead
        assert getattr(deferred.complete(), "code", None) == -32603
        # other files are served
        good = server.answer("resources/read", {"uri": "skill://alpha/SKILL.md", "_meta": MODERN})
        assert b"First skill" in good.json  # type: ignore[union-attr]
    finally:
        replica.close()


def test_reads_that_would_wait_are_deferred_and_cached_ones_are_not(
    s3env: Seaweed, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    url = prefix("defer")
    publish(FilesystemSource([root]), url, scheme="skill")
    replica = open_s3_source(url, refresh=False)
    try:
        server = SkillsServer(replica, cursor_key=b"k" * 32)
        params: dict[str, JSONValue] = {"uri": "skill://alpha/notes/a.md", "_meta": MODERN}
        first = server.answer("resources/read", params, defer_reads_over=1 << 20)
        assert type(first) is PendingRead
        assert b"alpha notes" in first.complete().json  # type: ignore[union-attr]
        second = server.answer("resources/read", params, defer_reads_over=1 << 20)
        assert type(second) is not PendingRead  # now in the replica's cache: no wait
    finally:
        replica.close()


# --- an unreachable bucket -----------------------------------------------------------------------


class Proxy:
    """A TCP forwarder to the S3 server that can be cut and restored."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open = True
        self.connections: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.connections += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def cut(self) -> None:
        self.open = False
        with self.lock:
            for connection in self.connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
                connection.close()
            self.connections.clear()

    def restore(self) -> None:
        self.open = True

    def close(self) -> None:
        self.cut()
        self.listener.close()


def test_an_unreachable_bucket_gives_clean_errors_and_recovers(
    s3env: Seaweed, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    url = prefix("outage")
    publish(FilesystemSource([root]), url, scheme="skill")
    proxy = Proxy(int(s3env.endpoint.rpartition(":")[2]))
    logged: list[str] = []
    replica = open_s3_source(
        url, endpoint=f"http://127.0.0.1:{proxy.port}", ttl_ms=200, log=logged.append
    )
    try:
        server = SkillsServer(replica, cursor_key=b"k" * 32)
        listing: dict[str, JSONValue] = {"_meta": MODERN}
        before = server.answer("skills/list", listing)
        proxy.cut()
        deadline = time.monotonic() + 20
        while not any("still serving generation 1" in line for line in logged):
            assert time.monotonic() < deadline, logged
            time.sleep(0.05)
        # the last good catalog is still listed; a read of an uncached file fails cleanly
        assert server.answer("skills/list", listing) == before
        read = server.answer("resources/read", {"uri": "skill://team/beta/data.bin", **listing})
        assert getattr(read, "code", None) == -32603
        proxy.restore()
        deadline = time.monotonic() + 20
        while not any("answers again" in line for line in logged):
            assert time.monotonic() < deadline, logged
            time.sleep(0.05)
        read = server.answer("resources/read", {"uri": "skill://team/beta/data.bin", **listing})
        assert b"contents" in read.json  # type: ignore[union-attr]
    finally:
        replica.close()
        proxy.close()


def test_opening_an_unreachable_or_empty_bucket_says_so(s3env: Seaweed) -> None:
    with pytest.raises(StoreError, match="nothing is published"):
        open_s3_source(prefix("empty"), refresh=False)
    with pytest.raises(StoreError, match="cannot read"):
        open_s3_source(prefix("down"), endpoint="http://127.0.0.1:1", refresh=False)
    with pytest.raises(StoreError, match="without credentials"):
        Bucket(prefix("x"), endpoint="http://user:secret@127.0.0.1:1")


def test_a_damaged_catalog_is_refused_and_the_last_good_one_kept(
    s3env: Seaweed, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    url = prefix("damaged")
    publish(FilesystemSource([root]), url, scheme="skill")
    logged: list[str] = []
    replica = open_s3_source(url, ttl_ms=200, log=logged.append)
    try:
        bucket = Bucket(url)
        got = bucket.get("catalog.json")
        assert got is not None
        bucket.put("catalog.json", got[0][:-10])
        deadline = time.monotonic() + 10
        while not any("cut short" in line for line in logged):
            assert time.monotonic() < deadline, logged
            time.sleep(0.05)
        assert replica.poll(0) is None
        assert len(replica.scan().skills) == 3
        with pytest.raises(StoreError, match="cut short"):
            load_s3_state(url)
    finally:
        replica.close()


# --- garbage collection --------------------------------------------------------------------------


def test_garbage_is_collected_after_the_grace_only(s3env: Seaweed, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    url = prefix("gc")
    publish(FilesystemSource([root]), url, scheme="skill")
    (root / "team" / "beta" / "data.bin").unlink()
    publish(FilesystemSource([root]), url, scheme="skill")
    bucket = Bucket(url)
    gone = "blobs/sha256/" + compute_digest(bytes(range(256)) * 4).removeprefix("sha256:")
    # generation 1 was replaced a moment ago: within an hour's grace, its files stay
    kept = collect_garbage(bucket, 3600)
    assert (kept.blobs, kept.catalogs, kept.kept_generations) == (0, 0, (1, 2))
    assert bucket.get(gone) is not None
    time.sleep(1.1)  # the store's clock has a one-second grain
    report = collect_garbage(bucket, 0)
    assert (report.blobs, report.catalogs, report.kept_generations) == (1, 1, (2,))
    with pytest.raises(KeyError):
        bucket.get(gone)
    # what the current catalog names is all there
    replica = open_s3_source(url, refresh=False)
    try:
        for skill in replica.scan().skills:
            for path in skill.files.values():
                assert replica.read(skill, path) is not None
    finally:
        replica.close()


# --- what the bucket holds is checked by the folder rules ----------------------------------------


def test_a_hand_made_catalog_is_checked_by_the_folder_rules(s3env: Seaweed, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    url = prefix("rules")
    publish(FilesystemSource([root]), url, scheme="skill")
    bucket = Bucket(url)
    got = bucket.get("catalog.json")
    assert got is not None
    document = decode_document(got[0])
    skills = [dict(record) for record in document.skills]
    # a record whose frontmatter breaks the Agent Skills rules, and one whose entry lies
    bad = json.loads(json.dumps(skills[0]))
    bad["entry"]["frontmatter"]["name"] = "Not A Valid Name"
    liar = json.loads(json.dumps(skills[1]))
    liar["entry"]["x-unpublished"] = True  # a member the rules never make
    forged = CatalogDocument(
        generation=document.generation + 1,
        scheme="skill",
        skills=[bad, liar, *skills[2:]],
        omitted=[],
    )
    bucket.put("catalog.json", encode_document(forged))
    state = load_s3_state(url)
    assert [s.uri for s in state.catalog.skills] == [skills[2]["entry"]["uri"]]
    reasons = {o.uri: o.reason for o in state.catalog.omitted}
    assert skills[0]["entry"]["uri"] in reasons
    assert "not the entry its files" in reasons[skills[1]["entry"]["uri"]]


# --- the command line ----------------------------------------------------------------------------


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skills_core", *args],
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_command_line_publishes_lists_and_validates(s3env: Seaweed, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    target = str(prefix("cli"))
    env = {k: v for k, v in s3env.env.items() if k != "AWS_ENDPOINT_URL"}
    done = run_cli("publish", str(root), target, "--s3-endpoint", s3env.endpoint, env=env)
    assert done.returncode == 0, done.stderr
    assert "generation 1" in done.stderr
    assert "3 skill(s)" in done.stderr
    assert s3env.env["AWS_SECRET_ACCESS_KEY"] not in done.stderr + done.stdout
    again = run_cli("publish", str(root), target, "--json", env=s3env.env)
    assert json.loads(again.stdout)["changed"] is False
    listed = run_cli("manifest", "--json", target, env=s3env.env)
    folder = run_cli("manifest", "--json", str(root), env=s3env.env)
    assert json.loads(listed.stdout)["skills"] == json.loads(folder.stdout)["skills"]
    checked = run_cli("validate", target, env=s3env.env)
    assert checked.returncode == 1  # gamma is left out: an error
    assert "name-mismatch" in checked.stdout
    missing = run_cli("manifest", str(prefix("none")), env=s3env.env)
    assert missing.returncode == 2
    assert "nothing is published" in missing.stderr
    bad = run_cli("publish", str(root), "s3://", env=s3env.env)
    assert bad.returncode == 1


def test_serve_over_stdio_from_a_bucket(s3env: Seaweed, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    target = str(prefix("stdio"))
    assert run_cli("publish", str(root), target, env=s3env.env).returncode == 0
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {"_meta": MODERN}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "resources/read",
            "params": {"uri": "skill://team/beta/SKILL.md", "_meta": MODERN},
        },
    ]
    done = subprocess.run(
        [sys.executable, "-m", "skills_core", "serve", target],
        input="".join(json.dumps(m) + "\n" for m in messages),
        env=child_env(s3env.env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["uri"] for e in answers[0]["result"]["skills"]] == [
        "skill://alpha/SKILL.md",
        "skill://shared/SKILL.md",
        "skill://team/beta/SKILL.md",
    ]
    assert "Second skill" in answers[1]["result"]["contents"][0]["text"]


def test_document_from_catalog_round_trips(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "tree", tree_v1())
    catalog = FilesystemSource([root]).scan()
    document = document_from_catalog(catalog, generation=4, scheme="skill")
    assert decode_document(encode_document(document)) == document
