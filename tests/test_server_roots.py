"""Issue 22 in process: roots followed as named, failures that keep the catalog, one view.

The same behaviours through real ``serve`` processes (stdio and ``--http``, real ``SIGHUP``) are
in ``tests/test_serve_reload.py``; here the source's clock is moved by the test, so nothing waits.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from fs_helpers import write
from server_helpers import KEY, Client, skill_md

from skills_core.server import FilesystemSource, ServerOptions, SkillsServer, server_from_roots
from skills_core.server._live import CatalogChange


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """A monotonic clock the test moves (the filesystem source's, for its polls)."""
    now = {"ns": 10**12}
    monkeypatch.setattr(time, "monotonic_ns", lambda: now["ns"])
    return now


def release(base: Path, name: str, skills: dict[str, str]) -> Path:
    """A release folder ``base/releases/<name>`` holding one skill per name (body: its text)."""
    folder = base / "releases" / name
    write(folder, {f"{s}/SKILL.md": skill_md(s, body=text) for s, text in skills.items()})
    return folder


def switch(current: Path, target: Path) -> None:
    """Point the link ``current`` at ``target`` atomically (``ln -sfn`` then a rename)."""
    staged = current.with_name(current.name + ".new")
    staged.symlink_to(target, target_is_directory=True)
    os.replace(staged, current)


def listed(c: Client) -> list[str]:
    return [item["uri"] for item in c.walk("skills/list", "skills")]


def read(c: Client, uri: str) -> str:
    text = c.call("resources/read", {"uri": uri})["contents"][0]["text"]
    assert isinstance(text, str)
    return text


def test_a_switched_link_is_followed_within_ttl(tmp_path: Path, clock: dict[str, int]) -> None:
    """The Capistrano deploy: ``current -> releases/v1`` switched to ``releases/v2``; v1 kept."""
    v1 = release(tmp_path, "v1", {"alpha": "one", "beta": "one"})
    v2 = release(tmp_path, "v2", {"alpha": "two", "gamma": "two"})
    current = tmp_path / "current"
    current.symlink_to(v1, target_is_directory=True)
    logged: list[str] = []
    c = Client(
        server_from_roots(
            [current], cursor_key=KEY, options=ServerOptions(ttl_ms=1_000), log=logged.append
        )
    )
    assert listed(c) == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]
    switch(current, v2)
    # Within ttlMs, one view: v1 still, whole (it still exists).
    assert listed(c) == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]
    assert "one" in read(c, "skill://alpha/SKILL.md")
    clock["ns"] += 10**9
    assert listed(c) == ["skill://alpha/SKILL.md", "skill://gamma/SKILL.md"]
    assert "two" in read(c, "skill://alpha/SKILL.md")
    assert c.error("resources/read", {"uri": "skill://beta/SKILL.md"})["code"] == -32602
    assert any(str(current) in line and str(v2) in line for line in logged), logged


def test_a_release_moved_away_is_followed_at_the_first_read_that_finds_it_gone(
    tmp_path: Path, clock: dict[str, int]
) -> None:
    """v1 deleted right after the switch: a read (or a get) that finds its file gone looks at
    the roots at once and answers from v2, never from an empty catalog."""
    v1 = release(tmp_path, "v1", {"alpha": "one"})
    v2 = release(tmp_path, "v2", {"alpha": "two", "gamma": "two"})
    current = tmp_path / "current"
    current.symlink_to(v1, target_is_directory=True)
    c = Client(server_from_roots([current], cursor_key=KEY, log=lambda _: None))
    assert "one" in read(c, "skill://alpha/SKILL.md")
    switch(current, v2)
    v1.rename(tmp_path / "trash")
    assert "two" in read(c, "skill://alpha/SKILL.md")  # no ttlMs waited
    assert listed(c) == ["skill://alpha/SKILL.md", "skill://gamma/SKILL.md"]
    switch(current, v1.with_name("v3"))  # a link to nothing
    (tmp_path / "releases/v2").rename(tmp_path / "trash2")
    # the root cannot be read: an internal error, not "no such skill"
    assert c.error("skills/get", {"uri": "skill://gamma/SKILL.md"})["code"] == -32603
    assert listed(c) == ["skill://alpha/SKILL.md", "skill://gamma/SKILL.md"]  # kept


def test_a_root_skill_keeps_the_name_it_was_given_across_a_switch(
    tmp_path: Path, clock: dict[str, int]
) -> None:
    one = tmp_path / "releases/v1"
    write(one, {"SKILL.md": skill_md("current", body="one")})
    two = tmp_path / "releases/v2"
    write(two, {"SKILL.md": skill_md("current", body="two")})
    current = tmp_path / "current"
    current.symlink_to(one, target_is_directory=True)
    c = Client(server_from_roots([current], cursor_key=KEY, options=ServerOptions(ttl_ms=1)))
    assert listed(c) == ["skill://current/SKILL.md"]
    switch(current, two)
    clock["ns"] += 10**6
    assert listed(c) == ["skill://current/SKILL.md"]
    assert "two" in read(c, "skill://current/SKILL.md")


def test_refresh_follows_at_once_and_keeps_the_catalog_when_it_fails(tmp_path: Path) -> None:
    """``SkillsServer.refresh()`` (what SIGHUP runs): no ttlMs to wait; a failure raises and
    keeps the catalog; every swap is reported through the one change hook."""
    v1 = release(tmp_path, "v1", {"alpha": "one", "beta": "one"})
    v2 = release(tmp_path, "v2", {"alpha": "two", "gamma": "two"})
    current = tmp_path / "current"
    current.symlink_to(v1, target_is_directory=True)
    server = SkillsServer(
        FilesystemSource([current], log=lambda _: None),
        cursor_key=KEY,
        options=ServerOptions(ttl_ms=10**9),
    )
    changes: list[CatalogChange] = []
    server._live.listen(changes.append)
    switch(current, v2)
    assert [s.uri for s in server.refresh().skills] == [
        "skill://alpha/SKILL.md",
        "skill://gamma/SKILL.md",
    ]
    assert changes == [
        CatalogChange(
            added=("skill://gamma/SKILL.md",),
            removed=("skill://beta/SKILL.md",),
            changed=("skill://alpha/SKILL.md",),
        )
    ]
    v2.rename(tmp_path / "gone")
    with pytest.raises(FileNotFoundError):
        server.refresh()
    assert len(server.catalog.skills) == 2
    assert len(changes) == 1


def test_one_view_after_a_skill_is_deleted(tmp_path: Path) -> None:
    """Issue 22: within ttlMs, a read that finds a listed skill gone makes the next listing
    agree at once (a broken server lists it until ttlMs while refusing to read it)."""
    root = tmp_path / "root"
    write(root, {"a/SKILL.md": skill_md("a"), "a/ref.md": b"ref", "b/SKILL.md": skill_md("b")})
    c = Client(server_from_roots([root], cursor_key=KEY, options=ServerOptions(ttl_ms=10**9)))
    assert listed(c) == ["skill://a/SKILL.md", "skill://b/SKILL.md"]
    for name in ("ref.md", "SKILL.md"):
        (root / "a" / name).unlink()
    (root / "a").rmdir()
    assert c.error("resources/read", {"uri": "skill://a/ref.md"})["code"] == -32602
    assert listed(c) == ["skill://b/SKILL.md"]
    assert c.error("skills/get", {"uri": "skill://a/SKILL.md"})["code"] == -32602


def test_one_view_after_a_file_is_edited(tmp_path: Path) -> None:
    """An edited file is served as it is now, and the listing's entry carries its new size and
    digest from the next skills/list on (same size too: the digest is compared)."""
    root = tmp_path / "root"
    write(root, {"a/SKILL.md": skill_md("a"), "a/ref.md": b"old text"})
    c = Client(server_from_roots([root], cursor_key=KEY, options=ServerOptions(ttl_ms=10**9)))

    def listed_ref() -> dict[str, object]:
        (entry,) = c.call("skills/list")["skills"]
        return next(r for r in entry["resources"] if r["uri"] == "skill://a/ref.md")

    before = listed_ref()
    (root / "a/ref.md").write_bytes(b"new text")  # same size
    assert read(c, "skill://a/ref.md") == "new text"
    after = listed_ref()
    assert after["digest"] != before["digest"]
    assert after["size"] == 8
    (root / "a/ref.md").write_bytes(b"longer new text")
    assert read(c, "skill://a/ref.md") == "longer new text"
    assert listed_ref()["size"] == 15


def test_a_configmap_volume_is_followed_through_its_data_link(
    tmp_path: Path, clock: dict[str, int]
) -> None:
    """Kubernetes' layout: files in a hidden timestamped folder, ``..data`` a link to it switched
    at each update, and the names at the top links into ``..data`` (never followed: the root to
    name is ``..data``)."""
    volume = tmp_path / "skills"
    write(volume / "..2026_01_01.1", {"hello/SKILL.md": skill_md("hello", body="one")})
    write(
        volume / "..2026_01_02.2",
        {"hello/SKILL.md": skill_md("hello", body="two"), "bye/SKILL.md": skill_md("bye")},
    )
    (volume / "..data").symlink_to("..2026_01_01.1", target_is_directory=True)
    (volume / "hello").symlink_to("..data/hello", target_is_directory=True)
    assert FilesystemSource([volume], log=lambda _: None).scan().skills == ()  # links refused
    c = Client(
        server_from_roots([volume / "..data"], cursor_key=KEY, options=ServerOptions(ttl_ms=1_000))
    )
    assert listed(c) == ["skill://hello/SKILL.md"]
    staged = volume / "..data_tmp"
    staged.symlink_to("..2026_01_02.2", target_is_directory=True)
    os.replace(staged, volume / "..data")  # what the kubelet does
    clock["ns"] += 10**9
    assert listed(c) == ["skill://bye/SKILL.md", "skill://hello/SKILL.md"]
    assert "two" in read(c, "skill://hello/SKILL.md")
