"""The sources' edges, against a real SeaweedFS and real git repositories, the commands in-process.

What the other source tests leave aside: ``publish``, ``validate`` and ``serve --http``'s app
read their source URLs in this process (so every branch of the command is seen); a bucket that
does not exist, a key written twice with ``create``, a blob gone from the bucket, a catalog
replaced by an older or malformed one while a replica serves, a publish whose commit point was
taken by a later publish meanwhile, one that meets a file changed since its scan, garbage
collection that cannot be done safely; boto3's credential chain (a named profile in a shared
credentials file); git repositories that vanish or have no such ref; the refresher going on
after a failing check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from seaweed_helpers import ACCESS_KEY, BUCKET, SECRET_KEY, Seaweed, seaweed
from server_helpers import skill_md

from skills_core.adapters.asgi import AppConfig
from skills_core.cli import main
from skills_core.server.filesystem import FilesystemSource
from skills_core.server.model import PublishedSkill
from skills_core.server.source import MemorySource
from skills_core.sources import s3 as s3_module
from skills_core.sources._background import Refresher
from skills_core.sources.git import GitError, GitRepository, open_git_source
from skills_core.sources.published import CatalogDocument, decode_document, encode_document
from skills_core.sources.s3 import (
    Bucket,
    StoreError,
    collect_garbage,
    load_s3_state,
    open_s3_source,
    publish,
)
from skills_core.sources.store import BlobError
from skills_core.sources.urls import S3URL, GitURL

TREE = {
    "alpha/SKILL.md": skill_md("alpha", "First skill"),
    "alpha/notes.md": b"notes\n",
    "team/beta/SKILL.md": skill_md("beta", "Second skill"),
    "gamma/SKILL.md": skill_md("other", "Left out, its name is not its folder name"),
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
    return S3URL(BUCKET, f"edges{os.getpid()}-{next(_COUNTER)}-{name}")


def write_tree(root: Path, files: dict[str, bytes] = TREE) -> Path:
    for relative, data in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


# --- the commands, in this process ---------------------------------------------------------------


def test_publish_and_validate_in_process(
    s3env: Seaweed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_tree(tmp_path / "tree")
    target = str(prefix("cli"))
    assert main(["publish", str(root), target]) == 0
    assert "generation 1" in capsys.readouterr().err
    assert main(["publish", str(root), target]) == 0
    assert "unchanged: generation 1" in capsys.readouterr().err
    assert main(["publish", "--json", "--gc-grace", "3600", str(root), target]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["generation"], shown["changed"], shown["skills"]) == (1, False, 2)
    # usage errors, said before anything is read
    assert main(["publish", str(root), "s3://"]) == 1
    assert "is not s3://BUCKET/PREFIX" in capsys.readouterr().err
    assert main(["publish", str(root), str(root)]) == 1
    assert "the target must be s3://BUCKET/PREFIX" in capsys.readouterr().err
    assert main(["publish", target, target]) == 1
    assert "not a bucket" in capsys.readouterr().err
    # a bucket that does not exist: the store's refusal, exit 2
    assert main(["publish", str(root), "s3://no-such-bucket-here/x"]) == 2
    assert "publish: cannot" in capsys.readouterr().err
    # validate reads the catalog: gamma is left out, an error with its code
    assert main(["validate", target, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    codes = {(s["uri"], f["code"]) for s in report["results"] for f in s["findings"]}
    assert ("skill://gamma/SKILL.md", "name-mismatch") in codes
    assert main(["validate", str(prefix("nothing"))]) == 2
    assert "nothing is published" in capsys.readouterr().err
    assert main(["validate", "s3://"]) == 2


def test_a_skill_over_the_limits_is_reported_as_too_large_by_validate(
    s3env: Seaweed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {"big/SKILL.md": skill_md("big", "Big")}
    files.update({f"big/f{n:03d}.txt": b"x" for n in range(512)})
    root = write_tree(tmp_path / "tree", files)
    target = str(prefix("big"))
    assert main(["publish", str(root), target]) == 0
    capsys.readouterr()
    assert main(["validate", target, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [f["code"] for s in report["results"] for f in s["findings"]] == ["too-large"]


def test_the_app_from_the_environment_opens_source_urls(s3env: Seaweed, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "tree")
    url = prefix("app")
    publish(FilesystemSource([root]), url, scheme="skill")
    config = AppConfig(roots=(), source=str(url), secret=b"k" * 40, ttl_ms=1_000)
    app = AppConfig.from_environ(config.to_environ()).build()
    try:
        assert [s.uri for s in app.server.catalog.skills] == [
            "skill://alpha/SKILL.md",
            "skill://team/beta/SKILL.md",
        ]
    finally:
        app.server.source.close()  # type: ignore[attr-defined]
    for source, message in [
        (str(prefix("empty")), "nothing is published"),
        ("s3://", "is not s3://BUCKET/PREFIX"),
        (f"git:{tmp_path / 'no-repository'}", "no such folder"),
        ("file:///x", "is not s3://BUCKET/PREFIX or git:PATH"),
    ]:
        with pytest.raises(ValueError, match=message):
            AppConfig(roots=(), source=source, secret=b"k" * 40).build()


# --- the bucket ----------------------------------------------------------------------------------


def test_bucket_operations_that_fail_say_what_failed(s3env: Seaweed) -> None:
    missing = Bucket(S3URL("no-such-bucket-here", "p"))
    with pytest.raises(StoreError, match="cannot list s3://no-such-bucket-here/p/x"):
        list(missing.list("x"))
    with pytest.raises(StoreError, match="cannot look at"):
        missing.modified("gone")
    bucket = Bucket(prefix("create"))
    assert bucket.put("once", b"1", mode="create")
    assert not bucket.put("once", b"2", mode="create")  # create-only: refused, not an error
    assert bucket.get("once") == (b"1", bucket.get("once")[1])  # type: ignore[index]
    with pytest.raises(StoreError, match="the S3 endpoint must be an http"):
        Bucket(S3URL(BUCKET, "x"), endpoint="ftp://127.0.0.1:21")


def test_a_bucket_needs_no_endpoint_or_region_in_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    bucket = Bucket(S3URL(BUCKET, "p"))  # AWS itself, us-east-1: nothing is sent yet
    assert bucket.where("k") == f"s3://{BUCKET}/p/k"


def test_without_obstore_an_s3_url_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "obstore", None)
    with pytest.raises(StoreError, match=r"pip install 'skills-core\[s3\]'"):
        Bucket(S3URL(BUCKET, "p"))


def test_a_named_profile_is_read_through_boto3s_chain(
    weed: Seaweed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[skills]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
    )
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_PROFILE", "skills")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    bucket = Bucket(prefix("profile"), endpoint=weed.endpoint)
    assert bucket.put("k", b"v")
    got = bucket.get("k")
    assert got is not None
    assert got[0] == b"v"
    # without boto3, obstore's own chain (which knows no profile)
    monkeypatch.setitem(sys.modules, "obstore.auth.boto3", None)
    assert s3_module._credential_provider() is None


# --- a serving replica ---------------------------------------------------------------------------


def wait_for(condition: Any, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_replica_refuses_older_and_malformed_catalogs_and_reads_of_gone_blobs(
    s3env: Seaweed, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "tree")
    url = prefix("replica")
    publish(FilesystemSource([root]), url, scheme="skill")
    (root / "alpha" / "notes.md").write_bytes(b"second\n")
    publish(FilesystemSource([root]), url, scheme="skill")  # generation 2
    bucket = Bucket(url)
    first = bucket.get("catalogs/00000000000000000001.json")
    assert first is not None
    logged: list[str] = []
    replica = open_s3_source(url, ttl_ms=200, log=logged.append)
    try:
        assert replica.state.generation == 2
        bucket.put("catalog.json", first[0])  # an older generation put back by hand
        wait_for(lambda: any("refused generation 1" in line for line in logged), str(logged))
        # a catalog whose records break the format
        current = decode_document(first[0])
        broken = [json.loads(json.dumps(record)) for record in current.skills]
        broken[0]["entry"]["resources"] = "dynamic"
        bucket.put(
            "catalog.json",
            encode_document(CatalogDocument(generation=3, scheme="skill", skills=broken)),
        )
        wait_for(lambda: any("refused generation 3" in line for line in logged), str(logged))
        assert replica.poll(0) is None
        assert replica.state.generation == 2
        # a blob gone from the bucket: the read fails with its key, and says so
        skill = replica.scan().get("skill://alpha/SKILL.md")
        assert isinstance(skill, PublishedSkill)
        resource = skill.entry.resource("skill://alpha/notes.md")
        assert resource is not None
        bucket.delete(["blobs/sha256/" + resource.digest.removeprefix("sha256:")])
        with pytest.raises(BlobError, match="there is no such object"):
            replica.read(skill, "notes.md")
        assert any("cannot read" in line and "no such object" in line for line in logged)
    finally:
        replica.close()


# --- publishing ----------------------------------------------------------------------------------


def test_a_slower_publish_never_replaces_a_later_one(
    s3env: Seaweed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(tmp_path / "tree")
    url = prefix("race")
    publish(FilesystemSource([root]), url, scheme="skill")
    (root / "alpha" / "notes.md").write_bytes(b"slow publisher\n")
    later = CatalogDocument(generation=9, scheme="skill", skills=[])
    put = Bucket.put
    raced: list[bool] = []

    def racing_put(self: Bucket, key: str, data: bytes, **options: Any) -> bool:
        if key == "catalog.json" and not raced:  # another publish commits first
            raced.append(True)
            put(self, key, encode_document(later))
        return put(self, key, data, **options)

    monkeypatch.setattr(Bucket, "put", racing_put)
    logged: list[str] = []
    result = publish(FilesystemSource([root]), url, scheme="skill", log=logged.append)
    assert result.superseded
    assert result.generation == 2
    assert any("generation 9 was committed first" in line for line in logged)
    assert load_s3_state(url).generation == 9


def test_a_publish_over_an_unreadable_catalog_and_a_history_taken_meanwhile(
    s3env: Seaweed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(tmp_path / "tree")
    url = prefix("unreadable")
    bucket = Bucket(url)
    bucket.put("catalog.json", b"not a catalog")
    logged: list[str] = []
    result = publish(FilesystemSource([root]), url, scheme="skill", log=logged.append)
    assert result.generation == 1
    assert any("is unreadable" in line and "publishing over it" in line for line in logged)
    # every next generation's history document taken by other publishers: it gives up, clearly
    put = Bucket.put

    def taken(self: Bucket, key: str, data: bytes, **options: Any) -> bool:
        if key.startswith("catalogs/"):
            return False
        return put(self, key, data, **options)

    monkeypatch.setattr(Bucket, "put", taken)
    (root / "alpha" / "notes.md").write_bytes(b"changed\n")
    with pytest.raises(StoreError, match="other publishes keep taking the next generation"):
        publish(FilesystemSource([root]), url, scheme="skill")


class ChangingSource:
    """A source whose files change between its scan and the upload."""

    def __init__(self) -> None:
        self.inner = MemorySource(TREE)

    def scan(self) -> Any:
        return self.inner.scan()

    def read(self, skill: PublishedSkill, file_path: str) -> bytes | None:
        data = self.inner.read(skill, file_path)
        return None if data is None else data + b"changed"

    def list_directory(self, skill: PublishedSkill, dir_path: str) -> Any:
        return self.inner.list_directory(skill, dir_path)


def test_a_file_changed_while_publishing_commits_nothing(s3env: Seaweed) -> None:
    url = prefix("changing")
    with pytest.raises(StoreError, match="changed while it was published; nothing was committed"):
        publish(ChangingSource(), url, scheme="skill")
    with pytest.raises(KeyError):
        Bucket(url).get("catalog.json")


def test_garbage_collection_refuses_what_it_cannot_do_safely(
    s3env: Seaweed, tmp_path: Path
) -> None:
    root = write_tree(tmp_path / "tree")
    url = prefix("gc-edges")
    bucket = Bucket(url)
    with pytest.raises(ValueError, match="must not be negative"):
        collect_garbage(bucket, -1)
    with pytest.raises(StoreError, match="is not a readable catalog"):
        collect_garbage(bucket, 3600)
    publish(FilesystemSource([root]), url, scheme="skill")
    (root / "alpha" / "notes.md").write_bytes(b"two\n")
    result = publish(FilesystemSource([root]), url, scheme="skill", gc_grace=3600)
    assert result.generation == 2
    bucket.delete(["catalogs/00000000000000000001.json"])
    bucket.put("catalogs/00000000000000000001.json", b"damaged")
    with pytest.raises(StoreError, match="cannot read generation 1 to collect garbage safely"):
        collect_garbage(bucket, 3600)


# --- git -----------------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def repository(tmp_path: Path) -> Path:
    repo = write_tree(tmp_path / "repo")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    return repo


def test_git_failures_are_typed_and_a_vanished_repository_is_logged_once_then_recovered(
    tmp_path: Path,
) -> None:
    repo = repository(tmp_path)
    with pytest.raises(GitError, match="'nope' names no commit"):
        open_git_source(GitURL(str(repo), "nope"), refresh=False)
    reader = GitRepository(str(repo))
    try:
        with pytest.raises(GitError, match="no blob"):
            reader.read("0" * 40)
        with pytest.raises(GitError, match="git ls-tree failed"):
            reader.tree("0" * 40)
    finally:
        reader.close()
    logged: list[str] = []
    source = open_git_source(GitURL(str(repo), "main"), ttl_ms=200, log=logged.append)
    try:
        moved = tmp_path / "moved"
        repo.rename(moved)
        wait_for(lambda: any("still serving commit" in line for line in logged), str(logged))
        moved.rename(repo)
        wait_for(lambda: any("resolves again" in line for line in logged), str(logged))
        assert sum("still serving commit" in line for line in logged) == 1
        skill = source.scan().get("skill://alpha/SKILL.md")
        assert isinstance(skill, PublishedSkill)
        assert source.read(skill, "notes.md") == b"notes\n"
    finally:
        source.close()


def test_the_refresher_goes_on_after_a_check_that_raises() -> None:
    calls: list[int] = []
    logged: list[str] = []
    done = threading.Event()

    def check() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom")
        done.set()

    refresher = Refresher(check, 0.01, name="test refresher", log=logged.append)
    refresher.start()
    try:
        assert done.wait(10)
    finally:
        refresher.close()
    assert logged == ["refresh failed (RuntimeError: boom)"]
