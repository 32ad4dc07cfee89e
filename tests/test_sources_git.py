"""Serving the skills of a git commit (``git:PATH[@REF]``), against real repositories.

What ``serve git:REPO@REF`` publishes is exactly what ``serve`` publishes from a checkout of that
commit (a differential test, links, submodules, hidden and excluded names included); a moving
ref is followed within ``ttlMs``; digests are kept by blob id, so a new commit reads only the
blobs that changed; every read is verified; bare repositories, tags and commit ids work;
``publish`` from a commit fills a bucket the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from interop_helpers import child_env
from seaweed_helpers import seaweed
from server_helpers import skill_md

from skills_core.server.filesystem import FilesystemSource
from skills_core.sources.git import GitError, GitRepository, open_git_source
from skills_core.sources.store import BlobError
from skills_core.sources.urls import GitURL, parse_source_url


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
        },
    )
    return done.stdout.strip()


def write(root: Path, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


FILES = {
    "alpha/SKILL.md": skill_md("alpha", "First"),
    "alpha/notes/a.md": b"notes\n",
    "alpha/.secret": b"hidden\n",
    "alpha/build.log": b"excluded\n",
    "org/beta/SKILL.md": skill_md("beta", "Second"),
    "org/beta/beta-inner/SKILL.md": skill_md("beta-inner", "Nested"),
    "gamma/SKILL.md": skill_md("nope", "Wrong name"),
    "README.md": b"outside every skill\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, FILES)
    os.symlink("notes/a.md", root / "alpha" / "link.md")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    return root


def catalog_view(source: object) -> tuple[object, ...]:
    catalog = source.scan()  # type: ignore[attr-defined]
    return (
        [skill.entry.to_json() for skill in catalog.skills],
        [(o.path, o.uri, o.code) for o in catalog.omitted],
        [(p.path, p.code) for p in catalog.problems],
        [(s.path, s.code) for s in catalog.skipped],
        [[(f.code, f.message) for f in skill.findings] for skill in catalog.skills],
    )


def test_a_commit_serves_what_its_checkout_serves(repo: Path, tmp_path: Path) -> None:
    # a submodule: another repository's commit in the tree
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q")
    write(sub, {"x": b"x"})
    git(sub, "add", "-A")
    git(sub, "commit", "-qm", "sub")
    commit = git(sub, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{commit},alpha/vendored")
    git(repo, "commit", "-qm", "with a submodule")
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", str(repo), str(checkout))
    (checkout / "alpha" / "vendored").rmdir()  # git leaves an empty folder for it
    source = open_git_source(GitURL(str(repo)), exclude=["*.log"], refresh=False)
    try:
        folder = FilesystemSource([checkout], exclude=["*.log"])
        view = catalog_view(source)
        expected = catalog_view(folder)
        # the checkout's .git is skipped by name; the submodule is refused in the commit only
        problems = [p for p in view[2] if p[0] != "alpha/vendored"]  # type: ignore[attr-defined]
        skipped = [s for s in expected[3] if s[0] != ".git"]  # type: ignore[attr-defined]
        assert view[:2] == expected[:2]
        assert problems == expected[2]
        assert sorted(view[3]) == sorted(skipped)  # type: ignore[call-overload]
        assert ("alpha/vendored", "special-file") in [(p, str(c)) for p, c in view[2]]  # type: ignore[attr-defined]
        alpha = source.scan().get("skill://alpha/SKILL.md")
        assert alpha is not None
        assert source.read(alpha, "notes/a.md") == b"notes\n"
        assert source.read(alpha, "link.md") is None
        assert source.list_directory(alpha, "") == [("SKILL.md", False), ("notes", True)]
    finally:
        source.close()


def test_a_moving_ref_is_followed_and_only_changed_blobs_are_read(repo: Path) -> None:
    logged: list[str] = []
    source = open_git_source(GitURL(str(repo), "main"), ttl_ms=200, log=logged.append)
    reads: list[str] = []
    try:
        first = source.scan()
        # count the blobs the next snapshot reads
        original = GitRepository.read

        def counting(self: GitRepository, oid: str) -> bytes:
            reads.append(oid)
            return original(self, oid)

        GitRepository.read = counting  # type: ignore[method-assign]
        try:
            write(repo, {"alpha/notes/b.md": b"new\n"})
            git(repo, "add", "-A")
            git(repo, "commit", "-qm", "two")
            deadline = time.monotonic() + 15
            while (catalog := source.poll(0)) is None:
                assert time.monotonic() < deadline, logged
                time.sleep(0.02)
        finally:
            GitRepository.read = original  # type: ignore[method-assign]
        alpha = catalog.get("skill://alpha/SKILL.md")
        assert alpha is not None
        assert "skill://alpha/notes/b.md" in alpha.files
        assert first.get("skill://alpha/SKILL.md") != alpha
        # one new blob read, and no SKILL.md again
        new_blob = git(repo, "rev-parse", "HEAD:alpha/notes/b.md")
        assert reads == [new_blob]
    finally:
        source.close()


def test_bare_repositories_tags_and_commit_ids(repo: Path, tmp_path: Path) -> None:
    git(repo, "tag", "v1")
    first = git(repo, "rev-parse", "HEAD")
    write(repo, {"delta/SKILL.md": skill_md("delta", "Later")})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    for ref, count in (("v1", 3), (first, 3), ("main", 4), ("HEAD", 4)):
        source = open_git_source(GitURL(str(bare), ref), refresh=False)
        try:
            assert len(source.scan().skills) == count, ref
        finally:
            source.close()
    with pytest.raises(GitError, match="names no commit"):
        open_git_source(GitURL(str(bare), "no-such-branch"), refresh=False)
    with pytest.raises(GitError):
        open_git_source(GitURL(str(tmp_path / "nothing")), refresh=False)
    assert parse_source_url("git:/a@b.git@v1") == GitURL("/a@b.git", "v1")
    with pytest.raises(ValueError, match="not a ref"):
        parse_source_url("git:/a@--upload-pack=x")


def test_a_blob_that_does_not_match_its_digest_is_refused(repo: Path) -> None:
    logged: list[str] = []
    source = open_git_source(GitURL(str(repo)), refresh=False, log=logged.append)
    try:
        alpha = source.scan().get("skill://alpha/SKILL.md")
        assert alpha is not None
        original = GitRepository.read
        GitRepository.read = lambda self, oid: b"other\n"  # type: ignore[method-assign]
        try:
            with pytest.raises(BlobError):
                source.read(alpha, "notes/a.md")
        finally:
            GitRepository.read = original  # type: ignore[method-assign]
        assert any("blob" in line and "does not match" in line for line in logged)
    finally:
        source.close()


def test_serve_manifest_and_publish_from_a_commit(repo: Path, tmp_path: Path) -> None:
    env = child_env()
    listed = subprocess.run(
        [sys.executable, "-m", "skills_core", "manifest", f"git:{repo}@main"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    assert "skill://org/beta/beta-inner/SKILL.md" in listed.stdout
    weed = seaweed()
    target = f"s3://skills/git-{tmp_path.name}"
    published = subprocess.run(
        [sys.executable, "-m", "skills_core", "publish", f"git:{repo}", target],
        env=child_env(weed.env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert published.returncode == 0, published.stderr
    from_bucket = subprocess.run(
        [sys.executable, "-m", "skills_core", "manifest", "--json", target],
        env=child_env(weed.env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    from_git = subprocess.run(
        [sys.executable, "-m", "skills_core", "manifest", "--json", f"git:{repo}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert json.loads(from_bucket.stdout)["skills"] == json.loads(from_git.stdout)["skills"]
