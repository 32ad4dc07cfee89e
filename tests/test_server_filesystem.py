"""Skills from real folders: the server's only I/O.

Rows: WG-09 (symlinks), SIL-01 and ERR-03 on disk (nothing outside a root is opened), ENTRY-19,
SIL-23, and the filesystem rules of the server issue: special files never opened, ignored names,
percent-encoded names, one read per file per scan, re-checks of one skill.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fs_helpers import alarm as blocking_alarm
from fs_helpers import spec_tree, spy_opens, write
from server_helpers import KEY, Client, Generated, skill_md

import skills_core.server.filesystem as fs_module
from skills_core import SkillEntry, compute_digest
from skills_core import spec_examples as ex
from skills_core.entry import Limits
from skills_core.server import (
    DEFAULT_IGNORED_NAMES,
    FilesystemSource,
    OmitCode,
    OmittedSkill,
    ProblemCode,
    PublishedSkill,
    RootSnapshot,
    ServerOptions,
    SkillsServer,
    SkipCode,
    server_from_roots,
)

SKILL_URI = ex.SKILL_MD_URI


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return spec_tree(tmp_path / "root")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_bytes(b"TOP SECRET\n")
    return secret


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path the filesystem module opens, resolved through /proc/self/fd after the fact."""
    return spy_opens(monkeypatch)


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail instead of hanging if anything blocks on a FIFO."""
    with blocking_alarm():
        yield


def client(*roots: Path, ttl_ms: int | None = None, **source_options: Any) -> Client:
    options = None if ttl_ms is None else ServerOptions(ttl_ms=ttl_ms)
    return Client(server_from_roots(list(roots), cursor_key=KEY, options=options, **source_options))


def assert_inside(paths: list[str], *roots: Path) -> None:
    real = [os.path.realpath(r) for r in roots]
    for path in paths:
        assert any(os.path.commonpath([path, r]) == r for r in real), path


# --- the spec's example, from disk ----------------------------------------------------------------


def test_spec_example_from_disk(root: Path) -> None:
    c = client(root)
    assert c.call("skills/list")["skills"] == [ex.entry_json()]
    assert (
        c.call("resources/read", {"uri": SKILL_URI})["contents"][0]["text"] == ex.SKILL_MD.decode()
    )
    assert [
        r["name"]
        for r in c.call("resources/directory/read", {"uri": "skill://pdf-processing/templates"})[
            "resources"
        ]
    ] == ["invoice.md", "purchase-order.md"]


def test_credit_note_added_while_running_shows_in_get(root: Path) -> None:
    c = client(root)
    (root / "pdf-processing/templates/credit-note.md").write_bytes(ex.CREDIT_NOTE)
    got = SkillEntry.from_json(c.call("skills/get", {"uri": SKILL_URI})["skill"])
    assert (
        got.resource_set == SkillEntry.from_json(ex.entry_json(with_credit_note=True)).resource_set
    )
    names = [
        r["name"]
        for r in c.call("resources/directory/read", {"uri": "skill://pdf-processing/templates"})[
            "resources"
        ]
    ]
    assert names == ["credit-note.md", "invoice.md", "purchase-order.md"]
    read = c.call("resources/read", {"uri": "skill://pdf-processing/templates/credit-note.md"})
    assert read["contents"][0]["text"] == ex.CREDIT_NOTE.decode()


# --- symbolic links: WG-09 -------------------------------------------------------------------------


# Requirement rows: WG-09
def test_symlink_to_a_file_outside_the_root_is_refused_WG_09(
    root: Path, outside: Path, opened: list[str]
) -> None:
    link = root / "pdf-processing/templates/id_rsa.example"
    link.symlink_to(outside)
    c = client(root)
    entry = SkillEntry.from_json(c.call("skills/get", {"uri": SKILL_URI})["skill"])
    assert entry.resource("skill://pdf-processing/templates/id_rsa.example") is None
    error = c.error("resources/read", {"uri": "skill://pdf-processing/templates/id_rsa.example"})
    assert error["code"] == -32602
    children = c.call("resources/directory/read", {"uri": "skill://pdf-processing/templates"})[
        "resources"
    ]
    assert "id_rsa.example" not in [child["name"] for child in children]
    assert opened
    assert_inside(opened, root)
    catalog = c.server.catalog
    (problem,) = catalog.problems
    assert (problem.path, problem.code) == (
        "pdf-processing/templates/id_rsa.example",
        ProblemCode.SYMLINK,
    )
    assert str(outside) not in problem.reason
    assert [f.code for f in catalog.skills[0].findings] == ["symlink"]


def test_a_hard_link_to_a_file_outside_the_root_is_served_as_the_file_it_is(
    root: Path, outside: Path
) -> None:
    """The documented choice (README, "What the server trusts on disk"): a hard link is the file
    itself, and files with several links are legitimate (deduplicated stores, ``cp -al``), so it
    is served; making one takes write access to the root, and ``fs.protected_hardlinks``."""
    linked = root / "pdf-processing/templates/shared.md"
    os.link(outside, linked)
    assert linked.stat().st_nlink == 2
    c = client(root)
    read = c.call("resources/read", {"uri": "skill://pdf-processing/templates/shared.md"})
    assert read["contents"][0]["text"] == outside.read_text()
    assert c.server.catalog.problems == ()


# Requirement rows: WG-09
def test_symlinks_to_folders_inside_or_outside_are_not_followed_WG_09(
    root: Path, outside: Path, opened: list[str]
) -> None:
    (root / "pdf-processing/escape").symlink_to(outside.parent, target_is_directory=True)
    (root / "pdf-processing/loop").symlink_to(
        root / "pdf-processing/templates", target_is_directory=True
    )
    c = client(root)
    for uri in (
        "skill://pdf-processing/escape/secret.txt",
        "skill://pdf-processing/loop/invoice.md",
    ):
        assert c.error("resources/read", {"uri": uri})["code"] == -32602
    for uri in ("skill://pdf-processing/escape", "skill://pdf-processing/loop"):
        assert c.error("resources/directory/read", {"uri": uri})["code"] == -32602
    assert len(c.server.catalog.skills[0].entry.resources) == 3
    assert_inside(opened, root)


def test_symlinked_skill_md_or_skill_folder_is_not_published(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, {"linked/SKILL.md": skill_md("linked"), "half/SKILL.md": skill_md("half")})
    (root / "linked").symlink_to(elsewhere / "linked", target_is_directory=True)
    (root / "half").mkdir()
    (root / "half/SKILL.md").symlink_to(elsewhere / "half/SKILL.md")
    c = client(root)
    catalog = c.server.catalog
    assert [s.uri for s in catalog.skills] == [SKILL_URI]
    (refused,) = catalog.omitted
    assert (refused.path, refused.code) == ("half", OmitCode.REFUSED)
    assert {p.path for p in catalog.problems} == {"linked", "half/SKILL.md"}
    for uri in ("skill://linked/SKILL.md", "skill://half/SKILL.md"):
        assert c.error("skills/get", {"uri": uri})["code"] == -32602
        assert c.error("resources/read", {"uri": uri})["code"] == -32602


def test_folder_swapped_for_a_symlink_after_the_scan_is_refused(
    root: Path, outside: Path, opened: list[str]
) -> None:
    c = client(root)
    templates = root / "pdf-processing/templates"
    for child in templates.iterdir():
        child.unlink()
    templates.rmdir()
    templates.symlink_to(outside.parent, target_is_directory=True)
    (outside.parent / "invoice.md").write_bytes(b"planted")
    assert (
        c.error("resources/read", {"uri": "skill://pdf-processing/templates/invoice.md"})["code"]
        == -32602
    )
    assert (
        c.error("resources/directory/read", {"uri": "skill://pdf-processing/templates"})["code"]
        == -32602
    )
    entry = SkillEntry.from_json(c.call("skills/get", {"uri": SKILL_URI})["skill"])
    assert [r.uri for r in entry.resources] == [SKILL_URI]  # type: ignore[union-attr]
    assert_inside(opened, root)


def test_file_swapped_for_a_symlink_after_the_scan_is_refused(root: Path, outside: Path) -> None:
    c = client(root)
    invoice = root / "pdf-processing/templates/invoice.md"
    invoice.unlink()
    invoice.symlink_to(outside)
    assert (
        c.error("resources/read", {"uri": "skill://pdf-processing/templates/invoice.md"})["code"]
        == -32602
    )


def test_a_symlinked_root_is_resolved_once(root: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    source = FilesystemSource([alias])
    assert source.roots == (str(root),)
    assert [s.uri for s in source.scan().skills] == [SKILL_URI]


# --- traversal on disk: SIL-01, ERR-03 ---------------------------------------------------------------


@pytest.mark.parametrize(
    "uri",
    [
        "skill://pdf-processing/../outside/secret.txt",
        "skill://pdf-processing/%2e%2e/%2e%2e/outside/secret.txt",
        "skill://pdf-processing/templates%2f..%2f..%2f..%2foutside%2fsecret.txt",
        "skill://pdf-processing/%2E%2E%2F%2E%2E%2Foutside/secret.txt",
        "skill://pdf-processing/..%5c..%5coutside%5csecret.txt",
        "skill://pdf-processing/templates/",
        "skill://pdf-processing/templates/invoice.md/",
        "skill://pdf-processing/templates/invoice.md%00.txt",
    ],
)
# Requirement rows: SIL-01, ERR-03
def test_traversal_attempts_read_nothing_outside_the_roots_SIL_01_ERR_03(
    root: Path, outside: Path, opened: list[str], uri: str
) -> None:
    c = client(root)
    opened.clear()
    for method in ("resources/read", "resources/directory/read"):
        assert c.error(method, {"uri": uri})["code"] == -32602
    assert opened == []  # refused before the source was asked for anything


# --- special files -------------------------------------------------------------------------------------


def test_fifo_is_never_opened(root: Path, alarm: None, opened: list[str]) -> None:
    os.mkfifo(root / "pdf-processing/templates/pipe")
    c = client(root)
    assert all(not p.endswith("/pipe") for p in opened)
    (problem,) = c.server.catalog.problems
    assert problem.code is ProblemCode.SPECIAL_FILE
    assert (
        c.error("resources/read", {"uri": "skill://pdf-processing/templates/pipe"})["code"]
        == -32602
    )
    names = [
        r["name"]
        for r in c.call("resources/directory/read", {"uri": "skill://pdf-processing/templates"})[
            "resources"
        ]
    ]
    assert "pipe" not in names


def test_file_swapped_for_a_fifo_is_not_read_and_does_not_block(root: Path, alarm: None) -> None:
    c = client(root)
    invoice = root / "pdf-processing/templates/invoice.md"
    invoice.unlink()
    os.mkfifo(invoice)
    assert (
        c.error("resources/read", {"uri": "skill://pdf-processing/templates/invoice.md"})["code"]
        == -32602
    )
    entry = SkillEntry.from_json(c.call("skills/get", {"uri": SKILL_URI})["skill"])
    assert entry.resource("skill://pdf-processing/templates/invoice.md") is None


def test_fifo_raced_in_during_a_walk_is_refused(
    root: Path, alarm: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the listing (a regular file) and the open (now a FIFO): fstat catches it."""
    source = FilesystemSource([root])
    real_file = FilesystemSource._file

    def racing(self: FilesystemSource, walk: Any, dir_fd: int, folder: str, name: str) -> Any:
        if name == "invoice.md":
            path = root / folder / name
            path.unlink()
            os.mkfifo(path)
        return real_file(self, walk, dir_fd, folder, name)

    monkeypatch.setattr(FilesystemSource, "_file", racing)
    catalog = source.scan()
    assert ("pdf-processing/templates/invoice.md", ProblemCode.SPECIAL_FILE) in [
        (p.path, p.code) for p in catalog.problems
    ]


def test_socket_is_refused(root: Path, tmp_path: Path) -> None:
    path = root / "pdf-processing/sock"
    if len(str(path)) > 100:
        pytest.skip("socket path too long for AF_UNIX")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        catalog = FilesystemSource([root]).scan()
    assert [(p.path, p.code) for p in catalog.problems] == [
        ("pdf-processing/sock", ProblemCode.SPECIAL_FILE)
    ]


def test_device_is_refused(root: Path) -> None:
    try:
        os.mknod(root / "pdf-processing/null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating device nodes needs privileges")
    catalog = FilesystemSource([root]).scan()
    assert [(p.path, p.code) for p in catalog.problems] == [
        ("pdf-processing/null", ProblemCode.SPECIAL_FILE)
    ]


# --- unreadable entries ----------------------------------------------------------------------------------


def failing_open(monkeypatch: pytest.MonkeyPatch, name: str, error: int) -> None:
    real_open = os.open

    def fake(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if path == name:
            raise OSError(error, os.strerror(error))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", fake)


def test_unreadable_file_becomes_a_problem(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failing_open(monkeypatch, "invoice.md", errno.EACCES)
    catalog = FilesystemSource([root]).scan()
    (problem,) = catalog.problems
    assert (problem.path, problem.code) == (
        "pdf-processing/templates/invoice.md",
        ProblemCode.UNREADABLE,
    )
    assert problem.reason == "could not be read (Permission denied)"
    assert len(catalog.skills[0].entry.resources) == 2


def test_unreadable_folder_becomes_a_problem(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failing_open(monkeypatch, "templates", errno.EACCES)
    catalog = FilesystemSource([root]).scan()
    assert [(p.path, p.code) for p in catalog.problems] == [
        ("pdf-processing/templates", ProblemCode.UNREADABLE)
    ]


def test_folder_that_cannot_be_listed_becomes_a_problem(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_scandir = os.scandir
    calls = {"n": 0}

    def fake(fd: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(errno.EIO, "Input/output error")
        return real_scandir(fd)

    monkeypatch.setattr(os, "scandir", fake)
    catalog = FilesystemSource([root]).scan()
    assert [p.code for p in catalog.problems] == [ProblemCode.UNREADABLE]


def test_unexpected_os_errors_on_read_are_internal_errors(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = client(root)
    failing_open(monkeypatch, "invoice.md", errno.EIO)
    response = c.send("resources/read", {"uri": "skill://pdf-processing/templates/invoice.md"})
    assert response["error"] == {"code": -32603, "message": "Internal error"}
    failing_open(monkeypatch, "templates", errno.EIO)
    response = c.send("resources/directory/read", {"uri": "skill://pdf-processing/templates"})
    assert response["error"] == {"code": -32603, "message": "Internal error"}


def test_unexpected_os_error_checking_for_skill_md(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FilesystemSource([root])
    real_stat = os.stat

    def fake(
        path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True
    ) -> os.stat_result:
        if path == "SKILL.md" and dir_fd is not None:
            raise OSError(errno.EIO, "Input/output error")
        return real_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(os, "stat", fake)
    with pytest.raises(OSError, match="Input/output"):
        source.recheck(SKILL_URI)


def test_missing_skill_md_in_an_unlistable_folder(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FilesystemSource([root])
    failing_open(monkeypatch, "pdf-processing", errno.EACCES)
    assert source.recheck(SKILL_URI) is None


# --- names: ignored, percent-encoded, undecodable ---------------------------------------------------------


def test_ignored_names_are_neither_published_nor_readable(root: Path) -> None:
    write(
        root,
        {
            "pdf-processing/.git/config": b"[core]",
            "pdf-processing/scripts/__pycache__/x.pyc": b"\0",
            "pdf-processing/.DS_Store": b"\0",
            "pdf-processing/scripts/run.py": b"pass\n",
        },
    )
    (root / ".git").mkdir()
    write(root, {".git/x/SKILL.md": skill_md("x")})
    c = client(root)
    entry = SkillEntry.from_json(c.call("skills/get", {"uri": SKILL_URI})["skill"])
    assert {r.uri for r in entry.resources} == {  # type: ignore[union-attr]
        SKILL_URI,
        "skill://pdf-processing/templates/invoice.md",
        "skill://pdf-processing/templates/purchase-order.md",
        "skill://pdf-processing/scripts/run.py",
    }
    for uri in (
        "skill://pdf-processing/.git/config",
        "skill://pdf-processing/.DS_Store",
        "skill://pdf-processing/scripts/__pycache__/x.pyc",
    ):
        assert c.error("resources/read", {"uri": uri})["code"] == -32602
    assert (
        c.error("resources/directory/read", {"uri": "skill://pdf-processing/.git"})["code"]
        == -32602
    )
    assert [
        r["name"]
        for r in c.call("resources/directory/read", {"uri": "skill://pdf-processing/scripts"})[
            "resources"
        ]
    ] == ["run.py"]
    assert c.error("skills/get", {"uri": "skill://.git/x/SKILL.md"})["code"] == -32602
    assert ".git" in DEFAULT_IGNORED_NAMES


def test_ignore_can_be_configured(root: Path) -> None:
    write(root, {"pdf-processing/.git/config": b"[core]"})
    assert len(FilesystemSource([root], ignore=()).scan().skills[0].entry.resources) == 3  # hidden
    source = FilesystemSource([root], ignore=(), include_hidden=True)
    assert len(source.scan().skills[0].entry.resources) == 4


def test_names_needing_percent_encoding_round_trip(tmp_path: Path) -> None:
    write(tmp_path, {"équipe/a b/x/SKILL.md": skill_md("x"), "équipe/a b/x/ça va?.md": b"oui"})
    c = client(tmp_path)
    (skill,) = c.call("skills/list")["skills"]
    assert skill["uri"] == "skill://%C3%A9quipe/a%20b/x/SKILL.md"
    file_uri = "skill://%C3%A9quipe/a%20b/x/%C3%A7a%20va%3F.md"
    assert file_uri in [r["uri"] for r in skill["resources"]]
    assert c.call("resources/read", {"uri": file_uri})["contents"][0]["text"] == "oui"
    for alias in (
        "skill://%c3%a9quipe/a%20b/x/%C3%A7a%20va%3F.md",
        "skill://équipe/a%20b/x/%C3%A7a%20va%3F.md",
        "skill://%C3%A9quipe/a b/x/%C3%A7a%20va%3F.md",
    ):
        assert c.error("resources/read", {"uri": alias})["code"] == -32602


def test_undecodable_names_are_not_served(tmp_path: Path) -> None:
    base = os.fsencode(tmp_path)
    os.makedirs(base + b"/x")
    (tmp_path / "x/SKILL.md").write_bytes(skill_md("x"))
    with open(base + b"/x/bad\xff.md", "wb") as handle:
        handle.write(b"latin")
    os.makedirs(base + b"/\xff/y")
    with open(base + b"/\xff/y/SKILL.md", "wb") as handle:
        handle.write(skill_md("y"))
    c = client(tmp_path)
    catalog = c.server.catalog
    assert [s.uri for s in catalog.skills] == ["skill://x/SKILL.md"]
    assert [f.code for f in catalog.skills[0].findings] == ["bad-file-name"]
    assert [o.code for o in catalog.omitted] == [OmitCode.BAD_PATH]
    assert [
        r["name"] for r in c.call("resources/directory/read", {"uri": "skill://x"})["resources"]
    ] == ["x"]


def test_skill_md_added_directly_in_a_root_while_serving(tmp_path: Path) -> None:
    source = FilesystemSource([tmp_path])  # not a skill folder when the source is made
    write(tmp_path, {"SKILL.md": skill_md("x")})
    catalog = source.scan()
    assert catalog.skills == ()
    assert [o.code for o in catalog.omitted] == [OmitCode.TOP_LEVEL]


# --- limits: ENTRY-19 -----------------------------------------------------------------------------------


def test_huge_file_makes_its_skill_over_limit_without_being_hashed(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open(root / "pdf-processing/huge.bin", "wb") as handle:
        handle.truncate(17 * 1024 * 1024)  # sparse: costs no disk
    hashed: list[int] = []
    real = fs_module._read_fd

    def spy(fd: int, size: int, keep: bool) -> tuple[int, str, bytes | None]:
        hashed.append(size)
        return real(fd, size, keep)

    monkeypatch.setattr(fs_module, "_read_fd", spy)
    c = client(root)
    assert max(hashed) < 1000
    (left_out,) = c.server.catalog.omitted
    assert left_out.code is OmitCode.OVER_LIMIT
    assert f"{17 * 1024 * 1024 + 151 + 29 + 35} bytes" in left_out.reason
    assert c.error("resources/read", {"uri": "skill://pdf-processing/huge.bin"})["code"] == -32602


def test_large_files_are_read_in_chunks(root: Path) -> None:
    data = bytes(range(256)) * (3 * 4096 + 7)  # about 3 MiB
    (root / "pdf-processing/big.bin").write_bytes(data)
    c = client(root)
    entry = c.server.catalog.skills[0].entry
    resource = entry.resource("skill://pdf-processing/big.bin")
    assert resource is not None
    assert (resource.size, resource.digest) == (len(data), compute_digest(data))
    read = c.call("resources/read", {"uri": "skill://pdf-processing/big.bin"})
    assert base64.b64decode(read["contents"][0]["blob"]) == data


def test_read_of_a_file_that_grows_or_shrinks_while_read() -> None:
    for data, claimed in (
        (b"x" * 5000, 10),
        (b"x" * 10, 5000),
        (b"", 3),
        (b"y" * (2 << 20), 1 << 20),
    ):
        read_end, write_end = os.pipe()

        def feed(fd: int = write_end, payload: bytes = data) -> None:
            with os.fdopen(fd, "wb") as writer:
                writer.write(payload)

        reader_data: tuple[int, str, bytes | None]
        thread = threading.Thread(target=feed)
        thread.start()
        try:
            reader_data = fs_module._read_fd(read_end, claimed, True)
        finally:
            thread.join()
            os.close(read_end)
        assert reader_data == (len(data), compute_digest(data), data)


def test_hash_only_read(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"z" * (3 << 20))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert fs_module._read_fd(fd, 1 << 20, False) == (
            3 << 20,
            compute_digest(b"z" * (3 << 20)),
            None,
        )
    finally:
        os.close(fd)


# --- one read per file; re-checks; the digest cache: SIL-23 ---------------------------------------------


def test_each_file_is_read_once_per_scan(root: Path, opened: list[str]) -> None:
    write(
        root,
        {
            "pdf-processing/sub/SKILL.md": skill_md("sub"),
            "pdf-processing/sub/x.md": b"x",
            "outside-any-skill/readme.md": b"r",
        },
    )
    catalog = FilesystemSource([root]).scan()
    assert len(catalog.skills) == 2
    files = [p for p in opened if os.path.isfile(p)]
    assert sorted(files) == sorted(set(files))
    assert not any(p.endswith("readme.md") for p in files)  # not inside a skill: never read
    assert len(files) == 5


def test_unchanged_files_are_not_read_again_on_rescan(
    root: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "time_ns", lambda: 1 << 62)  # long after every change
    source = FilesystemSource([root])
    first = source.scan()
    opened.clear()
    second = source.scan()
    assert first == second
    assert [p for p in opened if os.path.isfile(p)] == []  # SKILL.md's verdict is cached too
    invoice = root / "pdf-processing/templates/invoice.md"
    before = invoice.stat()
    invoice.write_bytes(ex.INVOICE.replace(b"Amount", b"Amoun7"))  # same size
    os.utime(invoice, ns=(before.st_atime_ns, before.st_mtime_ns))  # same mtime: ctime still moves
    third = source.scan()
    assert third.skills[0].entry.resource_set != first.skills[0].entry.resource_set


def test_unchanged_skill_md_is_read_again_when_its_verdict_is_no_longer_cached(
    root: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A skill published with a problem (a link refused) is not kept as a record: its verdict
    is the only thing that spares the read of its SKILL.md."""
    import skills_core.server.catalog as catalog_module

    monkeypatch.setattr(time, "time_ns", lambda: 1 << 62)
    monkeypatch.setattr(catalog_module, "_MAX_CACHED_VERDICTS", 0)
    (root / "pdf-processing/link.md").symlink_to("SKILL.md")
    source = FilesystemSource([root])
    first = source.scan()
    assert first.skills[0].findings  # the link, refused
    assert source.recheck(SKILL_URI) == first.skills[0]  # prunes the verdict cache afterwards
    opened.clear()
    assert source.scan() == first
    assert [p for p in opened if os.path.isfile(p)] == [str(root / "pdf-processing/SKILL.md")]


def test_a_kept_skill_needs_no_cached_verdict_to_spare_its_skill_md(
    root: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A built catalog keeps no verdict of a skill kept as a record (its frontmatter is in its
    encoded entry): an unchanged SKILL.md is still not read again, and when another file of the
    skill changes, the skill is built again from that frontmatter, judged afresh."""
    import skills_core.server.catalog as catalog_module

    monkeypatch.setattr(time, "time_ns", lambda: 1 << 62)
    monkeypatch.setattr(catalog_module, "_MAX_CACHED_VERDICTS", 0)
    source = FilesystemSource([root])
    first = source.scan()
    assert source._builder._verdicts == {}
    assert source.recheck(SKILL_URI) == first.skills[0]  # prunes the verdict cache afterwards
    opened.clear()
    assert source.scan() == first
    assert [p for p in opened if os.path.isfile(p)] == []
    invoice = root / "pdf-processing/templates/invoice.md"
    invoice.write_bytes(ex.INVOICE + b"more")
    opened.clear()
    third = source.scan()
    assert [p for p in opened if os.path.isfile(p)] == [str(invoice)]
    assert third.skills[0].entry.frontmatter == first.skills[0].entry.frontmatter
    assert third.skills[0].entry.resource_set != first.skills[0].entry.resource_set
    assert third.skills[0] == FilesystemSource([root]).scan().skills[0]  # as a cold build


def test_racy_cache_entries_are_not_trusted(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Written and hashed within the same few seconds: the stat key alone is not enough."""
    clock = {"now": 0}
    monkeypatch.setattr(time, "time_ns", lambda: clock["now"])
    source = FilesystemSource([root])
    invoice = root / "pdf-processing/templates/invoice.md"
    clock["now"] = invoice.stat().st_mtime_ns + 1
    source.scan()
    digest = compute_digest(ex.INVOICE.replace(b"Amount", b"Amoun7"))
    original = os.stat(invoice)
    invoice.write_bytes(ex.INVOICE.replace(b"Amount", b"Amoun7"))
    # Even if the file system kept every timestamp (coarse clocks do), the entry is re-hashed.
    real_stat = fs_module._stat_key
    monkeypatch.setattr(fs_module, "_stat_key", lambda st: real_stat(original))
    result = source.recheck(SKILL_URI)
    assert isinstance(result, PublishedSkill)
    resource = result.entry.resource("skill://pdf-processing/templates/invoice.md")
    assert resource is not None
    assert resource.digest == digest


def test_recheck_walks_one_skill_only(root: Path, opened: list[str]) -> None:
    write(root, {"other/SKILL.md": skill_md("other"), "other/big.md": b"b"})
    source = FilesystemSource([root])
    source.scan()
    opened.clear()
    result = source.recheck(SKILL_URI)
    assert isinstance(result, PublishedSkill)
    assert not any("/other" in p for p in opened)


def test_recheck_of_unknown_or_foreign_uris(root: Path) -> None:
    source = FilesystemSource([root])
    for uri in (
        "skill://nope/SKILL.md",
        "other://pdf-processing/SKILL.md",
        "skill://pdf-processing/templates/SKILL.md",
    ):
        assert source.recheck(uri) is None


def test_skill_deleted_while_running(root: Path) -> None:
    c = client(root)
    (root / "pdf-processing/SKILL.md").unlink()
    assert c.error("skills/get", {"uri": SKILL_URI})["code"] == -32602
    assert c.call("skills/list")["skills"] == []


# --- several roots ---------------------------------------------------------------------------------


def test_two_roots_are_merged(root: Path, tmp_path: Path) -> None:
    second = tmp_path / "second"
    write(second, {"acme/billing/refunds/SKILL.md": skill_md("refunds")})
    c = client(root, second)
    assert [s["uri"] for s in c.call("skills/list")["skills"]] == [
        "skill://acme/billing/refunds/SKILL.md",
        SKILL_URI,
    ]
    assert c.call("resources/read", {"uri": "skill://acme/billing/refunds/SKILL.md"})
    assert c.server.catalog.skills[0].root == 1


def test_same_skill_in_two_roots_is_served_from_neither(root: Path, tmp_path: Path) -> None:
    second = tmp_path / "second"
    write(second, {f"pdf-processing/{p}": b for p, b in ex.FILES.items()})
    srv = server_from_roots([root, second], cursor_key=KEY)
    c = Client(srv)
    assert c.call("skills/list")["skills"] == []
    assert [o.code for o in srv.catalog.omitted] == [OmitCode.URI_COLLISION, OmitCode.URI_COLLISION]
    error = c.error("skills/get", {"uri": SKILL_URI})
    assert "has the same skill path; neither is served" in error["message"]
    assert c.error("resources/read", {"uri": SKILL_URI})["code"] == -32602
    # Collisions found by a scan stand until the next scan, even once resolved on disk.
    (second / "pdf-processing/SKILL.md").unlink()
    assert c.error("skills/get", {"uri": SKILL_URI})["code"] == -32602
    srv.refresh()
    assert c.call("skills/get", {"uri": SKILL_URI})["skill"] == ex.entry_json()


def test_collision_appearing_while_running_is_seen_by_get(root: Path, tmp_path: Path) -> None:
    second = tmp_path / "second"
    second.mkdir()
    c = client(root, second)
    write(second, {"pdf-processing/SKILL.md": ex.SKILL_MD})
    assert "root 1 has the same skill path" in c.error("skills/get", {"uri": SKILL_URI})["message"]
    write(second, {"pdf-processing/templates/SKILL.md": skill_md("templates")})
    (second / "pdf-processing/SKILL.md").unlink()
    write(root, {"pdf-processing/templates/SKILL.md": skill_md("templates")})
    error = c.error("skills/get", {"uri": "skill://pdf-processing/templates/SKILL.md"})
    assert "root 1 has the same skill path" in error["message"]


def test_enclosing_skill_in_another_root_is_seen_by_get(root: Path, tmp_path: Path) -> None:
    second = tmp_path / "second"
    write(second, {"pdf-processing/extra/SKILL.md": skill_md("extra")})
    srv = server_from_roots([root, second], cursor_key=KEY)
    assert srv.catalog.skills == ()
    other = tmp_path / "third"
    write(other, {"x/y/SKILL.md": skill_md("y")})
    srv2 = server_from_roots([root, other], cursor_key=KEY)
    write(root, {"x/SKILL.md": skill_md("x")})
    error = Client(srv2).error("skills/get", {"uri": "skill://x/y/SKILL.md"})
    assert "root 0 has an enclosing skill (x)" in error["message"]


def test_dynamic_skill_overlapping_a_folder_is_seen_by_get(root: Path) -> None:
    daily = Generated("skill://reports/daily/SKILL.md", {"SKILL.md": skill_md("daily")})
    source = FilesystemSource([root], dynamic=[daily])
    srv = SkillsServer(source, cursor_key=KEY)
    c = Client(srv)
    assert c.call("skills/get", {"uri": daily.uri})["skill"]["resources"] == "dynamic"
    write(root, {"reports/daily/SKILL.md": skill_md("daily")})
    assert "root 0 has the same skill path" in c.error("skills/get", {"uri": daily.uri})["message"]
    write(root, {"reports/daily/inner/SKILL.md": skill_md("inner")})
    error = c.error("skills/get", {"uri": "skill://reports/daily/inner/SKILL.md"})
    assert "a dynamic skill overlaps it (skill://reports/daily/SKILL.md)" in error["message"]
    other = Generated("docs://elsewhere/x/SKILL.md", {"SKILL.md": skill_md("x")})
    source.add_dynamic(other)
    assert c.call("skills/get", {"uri": other.uri})["skill"]["uri"] == other.uri
    source.remove_dynamic(other.uri)
    assert c.error("skills/get", {"uri": other.uri})["code"] == -32602


def test_dynamic_skill_registration_rules(root: Path) -> None:
    daily = Generated("skill://reports/daily/SKILL.md", {})
    source = FilesystemSource([root], dynamic=[daily])
    with pytest.raises(ValueError, match="already registered"):
        source.add_dynamic(daily)
    with pytest.raises(ValueError, match="canonical"):
        source.add_dynamic(Generated("skill://reports/%7Ex/daily/SKILL.md", {}))
    with pytest.raises(KeyError):
        source.remove_dynamic("skill://nope/SKILL.md")


def test_dynamic_skill_removed_after_the_scan_reads_nothing(root: Path) -> None:
    daily = Generated(
        "skill://reports/daily/SKILL.md", {"SKILL.md": skill_md("daily"), "a.md": b"a"}
    )
    source = FilesystemSource([root], dynamic=[daily])
    c = Client(SkillsServer(source, cursor_key=KEY))
    source.remove_dynamic(daily.uri)
    assert c.error("resources/read", {"uri": "skill://reports/daily/a.md"})["code"] == -32602
    assert c.error("resources/directory/read", {"uri": "skill://reports/daily"})["code"] == -32602


# --- construction ----------------------------------------------------------------------------------


def test_roots_must_be_folders(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(NotADirectoryError):
        FilesystemSource([tmp_path / "file"])
    with pytest.raises(FileNotFoundError):
        FilesystemSource([tmp_path / "missing"])


def test_root_removed_while_running(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    write(folder, {"x/SKILL.md": skill_md("x")})
    source = FilesystemSource([folder])
    (folder / "x/SKILL.md").unlink()
    (folder / "x").rmdir()
    folder.rmdir()
    # A root gone is an error, never an empty catalog (issue 22): the server keeps what it has.
    with pytest.raises(FileNotFoundError) as gone:
        source.scan()
    assert gone.value.filename == str(folder)
    with pytest.raises(FileNotFoundError):
        source.recheck("skill://x/SKILL.md")
    folder.mkdir()  # back (empty): served as it is
    assert source.scan().skills == ()


def test_server_from_roots_passes_options(root: Path) -> None:
    srv = server_from_roots(
        [root],
        cursor_key=KEY,
        options=ServerOptions(directory_read=False, page_size=3, ttl_ms=5, instructions="x"),
        scheme="docs",
    )
    assert isinstance(srv.source, FilesystemSource)
    assert [s.uri for s in srv.catalog.skills] == ["docs://pdf-processing/SKILL.md"]
    assert (
        Client(srv).error("resources/directory/read", {"uri": "docs://pdf-processing"})["code"]
        == -32601
    )
    assert (
        Client(srv).call("resources/read", {"uri": "docs://pdf-processing/SKILL.md"})["ttlMs"] == 5
    )
    write(root, {"pdf-processing/.env": b"x", "pdf-processing/x.log": b"l"})
    index = root.parent / "served.index"
    srv = server_from_roots(
        [root], cursor_key=KEY, include_hidden=True, exclude=["*.log"], index=index
    )
    assert [(s.path, s.code) for s in srv.catalog.skipped] == [
        ("pdf-processing/x.log", SkipCode.EXCLUDED)
    ]
    assert index.is_file()


def test_omitted_skill_read_attempts(tmp_path: Path) -> None:
    write(tmp_path, {"bad/SKILL.md": b"nope", "bad/notes.md": b"n"})
    c = client(tmp_path)
    (left_out,) = c.server.catalog.omitted
    assert isinstance(left_out, OmittedSkill)
    assert c.error("resources/read", {"uri": "skill://bad/notes.md"})["code"] == -32602


def test_unexpected_error_opening_a_root_propagates(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FilesystemSource([root])
    failing_open(monkeypatch, str(root), errno.EIO)
    with pytest.raises(OSError, match="Input/output"):
        source.scan()


def test_folders_are_closed_when_a_walk_fails(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = FilesystemSource([root])
    before = len(os.listdir("/proc/self/fd"))

    def boom(
        self: FilesystemSource, walk: Any, dir_fd: int, entry: os.DirEntry[str], folder: str
    ) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(FilesystemSource, "_file", boom)
    with pytest.raises(RuntimeError, match="boom"):
        source.scan()
    assert len(os.listdir("/proc/self/fd")) == before


# --- a root that is itself a skill folder ----------------------------------------------------------


def test_a_root_that_is_a_skill_publishes_that_skill(root: Path, opened: list[str]) -> None:
    """``serve ./pdf-processing`` publishes the skill under its folder's name (its parent unseen)."""
    folder = root / "pdf-processing"
    write(folder, {"sub/SKILL.md": skill_md("sub")})
    c = client(folder)
    listed = c.walk("skills/list", "skills")
    assert [s["uri"] for s in listed] == [SKILL_URI, "skill://pdf-processing/sub/SKILL.md"]
    got = SkillEntry.from_json(c.call("skills/get", {"uri": SKILL_URI})["skill"])
    assert got.resource_set >= SkillEntry.from_json(ex.entry_json()).resource_set
    read = c.call("resources/read", {"uri": "skill://pdf-processing/templates/invoice.md"})
    assert read["contents"][0]["text"] == ex.INVOICE.decode()
    children = c.call("resources/directory/read", {"uri": "skill://pdf-processing"})["resources"]
    assert [r["uri"] for r in children] == [
        SKILL_URI,
        "skill://pdf-processing/sub",
        "skill://pdf-processing/templates",
    ]
    assert_inside(opened, folder)  # nothing above the root is opened
    assert c.error("skills/get", {"uri": "skill://other/SKILL.md"})["code"] == -32602


def test_a_root_skill_whose_folder_name_is_not_its_name_is_omitted(tmp_path: Path) -> None:
    folder = tmp_path / "checkout-main"
    write(folder, {"SKILL.md": skill_md("checkout")})
    catalog = FilesystemSource([folder]).scan()
    assert catalog.skills == ()
    (omitted,) = catalog.omitted
    assert (omitted.code, omitted.path) == (OmitCode.NAME_MISMATCH, "checkout-main")
    assert "'checkout'" in omitted.reason
    assert "'checkout-main'" in omitted.reason


def test_a_root_skill_and_a_root_of_skills_together(root: Path, tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    write(alone, {"SKILL.md": skill_md("alone"), "notes.md": b"n"})
    c = client(root, alone)
    assert [s["uri"] for s in c.call("skills/list")["skills"]] == [
        "skill://alone/SKILL.md",
        SKILL_URI,
    ]
    assert c.call("resources/read", {"uri": "skill://alone/notes.md"})["contents"][0]["text"] == "n"
    twin = tmp_path / "twin" / "pdf-processing"  # the same skill path from two roots
    write(twin, {"SKILL.md": ex.SKILL_MD})
    catalog = FilesystemSource([root, twin]).scan()
    assert catalog.skills == ()
    assert {o.code for o in catalog.omitted} == {OmitCode.URI_COLLISION}


def test_a_root_skill_whose_skill_md_is_a_link_is_not_one(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "SKILL.md").symlink_to(root / "pdf-processing/SKILL.md")
    catalog = FilesystemSource([folder]).scan()
    assert catalog.skills == ()
    assert [p.code for p in catalog.problems] == [ProblemCode.SYMLINK]


def test_a_root_skill_rechecked_after_its_skill_md_vanished(root: Path) -> None:
    folder = root / "pdf-processing"
    c = client(folder)
    (folder / "SKILL.md").unlink()
    assert c.error("skills/get", {"uri": SKILL_URI})["code"] == -32602
    assert c.error("resources/read", {"uri": SKILL_URI})["code"] == -32602


# --- skills added or removed while serving: in listings within ttlMs --------------------------------


def count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time a FilesystemSource scans."""
    scans: list[int] = []
    real_scan = FilesystemSource.scan

    def scan(self: FilesystemSource) -> Any:
        scans.append(1)
        return real_scan(self)

    monkeypatch.setattr(FilesystemSource, "scan", scan)
    return scans


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """A monotonic clock the test moves (the filesystem source's, for its polls)."""
    now = {"ns": 10**12}
    monkeypatch.setattr(time, "monotonic_ns", lambda: now["ns"])
    return now


def listed(c: Client, method: str = "skills/list") -> list[str]:
    key = "skills" if method == "skills/list" else "resources"
    return [item["uri"] for item in c.walk(method, key)]


def test_a_skill_added_while_serving_is_listed_within_ttl(
    root: Path, clock: dict[str, int]
) -> None:
    c = client(root, ttl_ms=60_000)
    write(root, {"added/SKILL.md": skill_md("added"), "added/x.md": b"x"})
    assert listed(c) == [SKILL_URI]  # the last look is younger than ttlMs
    clock["ns"] += 59_999 * 10**6
    assert listed(c) == [SKILL_URI]
    clock["ns"] += 10**6  # ttlMs after the scan
    assert listed(c) == ["skill://added/SKILL.md", SKILL_URI]
    assert "skill://added/x.md" in listed(c, "resources/list")


def test_a_skill_removed_while_serving_leaves_the_listings_within_ttl(
    root: Path, clock: dict[str, int]
) -> None:
    write(root, {"gone/SKILL.md": skill_md("gone"), "gone/x.md": b"x"})
    c = client(root, ttl_ms=1_000)
    assert "skill://gone/x.md" in listed(c, "resources/list")
    for path in ("gone/SKILL.md", "gone/x.md"):
        (root / path).unlink()
    (root / "gone").rmdir()
    clock["ns"] += 10**9
    assert "skill://gone/x.md" not in listed(c, "resources/list")
    assert listed(c) == [SKILL_URI]


def test_a_zero_ttl_looks_at_every_listing(root: Path) -> None:
    c = client(root, ttl_ms=0)
    write(root, {"added/SKILL.md": skill_md("added")})
    assert listed(c) == ["skill://added/SKILL.md", SKILL_URI]


def test_get_and_list_give_one_view(root: Path, clock: dict[str, int]) -> None:
    """A skill skills/get finds is in listings too, and a vanished one leaves both."""
    c = client(root, ttl_ms=60_000)
    write(root, {"added/SKILL.md": skill_md("added")})
    assert c.call("skills/get", {"uri": "skill://added/SKILL.md"})["skill"]["uri"]
    assert listed(c) == ["skill://added/SKILL.md", SKILL_URI]
    (root / "added/SKILL.md").unlink()
    assert c.error("skills/get", {"uri": "skill://added/SKILL.md"})["code"] == -32602
    assert listed(c) == [SKILL_URI]


def test_an_edited_skill_md_refreshes_the_listing(root: Path, clock: dict[str, int]) -> None:
    """A skill whose SKILL.md was empty when first seen (an editor saving) is listed once fixed."""
    write(root, {"draft/SKILL.md": b""})
    c = client(root, ttl_ms=1_000)
    assert listed(c) == [SKILL_URI]
    (root / "draft/SKILL.md").write_bytes(skill_md("draft", description="Now written"))
    clock["ns"] += 10**9
    assert listed(c) == ["skill://draft/SKILL.md", SKILL_URI]
    entries = c.call("skills/list")["skills"]
    assert entries[0]["frontmatter"]["description"] == "Now written"


def test_an_unchanged_tree_costs_a_structure_walk_only(
    root: Path, clock: dict[str, int], opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A look at the folders opens no file and re-scans nothing when no skill came or went."""
    monkeypatch.setattr(time, "time_ns", lambda: 1 << 62)  # SKILL.md is not racy: not too young
    write(root, {"pdf-processing/big.bin": b"\0" * 100_000, "a/b/c/notes.md": b"n"})
    c = client(root, ttl_ms=1_000)
    scans = count_scans(monkeypatch)
    opened.clear()
    clock["ns"] += 10**9
    assert listed(c) == [SKILL_URI]
    assert scans == []
    assert opened  # the folders were looked at ...
    assert all(os.path.isdir(p) for p in opened)  # ... and no file was opened
    opened.clear()
    assert listed(c) == [SKILL_URI]
    assert opened == []  # at most once per ttlMs
    (root / "pdf-processing/templates/invoice.md").write_bytes(b"changed")
    clock["ns"] += 10**9
    assert listed(c) == [SKILL_URI]
    assert scans == []  # a supporting file: shown by skills/get and reads, not a re-scan


def test_a_racy_skill_md_is_looked_at_again(
    root: Path, clock: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SKILL.md changed within seconds of its scan may keep its signature: re-scanned."""
    c = client(root, ttl_ms=1_000)  # the spec's files were written a moment ago: racy
    scans = count_scans(monkeypatch)
    clock["ns"] += 10**9
    listed(c)
    assert scans == [1]
    monkeypatch.setattr(time, "time_ns", lambda: 1 << 62)
    clock["ns"] += 10**9
    listed(c)  # the re-scan above found it still young; this one trusts it
    clock["ns"] += 10**9
    listed(c)
    assert scans == [1, 1]


def test_a_supporting_file_change_shows_in_get_at_once(root: Path, clock: dict[str, int]) -> None:
    c = client(root, ttl_ms=1_000)
    (root / "pdf-processing/templates/credit-note.md").write_bytes(ex.CREDIT_NOTE)
    got = SkillEntry.from_json(c.call("skills/get", {"uri": SKILL_URI})["skill"])
    assert (
        got.resource_set == SkillEntry.from_json(ex.entry_json(with_credit_note=True)).resource_set
    )


def test_a_poll_keeps_the_catalog_while_a_root_is_gone(
    tmp_path: Path, clock: dict[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 22: a root that vanishes keeps the last good catalog, with one logged error, and the
    catalog follows the root again when it is back."""
    folder = tmp_path / "r"
    write(folder, {"x/SKILL.md": skill_md("x")})
    c = client(folder, ttl_ms=1_000)
    assert listed(c) == ["skill://x/SKILL.md"]
    folder.rename(tmp_path / "away")
    for _ in range(3):
        clock["ns"] += 10**9
        assert listed(c) == ["skill://x/SKILL.md"]
    errors = [r.getMessage() for r in caplog.records if "cannot be read" in r.getMessage()]
    assert len(errors) == 1, errors  # once, not at every poll
    assert str(folder) in errors[0]
    assert "kept" in errors[0]
    write(folder, {"y/SKILL.md": skill_md("y")})
    clock["ns"] += 10**9
    assert listed(c) == ["skill://y/SKILL.md"]
    assert any("can be read again" in r.getMessage() for r in caplog.records)


def test_dynamic_skills_added_or_removed_show_at_once(root: Path) -> None:
    source = FilesystemSource([root])
    c = Client(SkillsServer(source, cursor_key=KEY, options=ServerOptions(ttl_ms=10**9)))
    daily = Generated("skill://reports/daily/SKILL.md", {"SKILL.md": skill_md("daily")})
    source.add_dynamic(daily)
    assert listed(c) == [SKILL_URI, "skill://reports/daily/SKILL.md"]
    source.remove_dynamic(daily.uri)
    assert listed(c) == [SKILL_URI]


def test_a_root_skill_whose_skill_md_is_excluded_is_a_plain_root(root: Path) -> None:
    folder = root / "pdf-processing"
    write(folder, {"sub/SKILL.md": skill_md("sub")})
    catalog = FilesystemSource([folder], exclude=["/SKILL.md"]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://sub/SKILL.md"]


def test_a_snapshot_of_a_folder_gone_is_empty(root: Path) -> None:
    source = FilesystemSource([root])
    assert source._snapshot(0, "gone") == RootSnapshot()
    assert source._snapshot(0, "pdf-processing/.hidden") == RootSnapshot()


def test_an_over_limit_skill_md_does_not_make_every_poll_rescan(
    tmp_path: Path, clock: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "time_ns", lambda: 1 << 62)
    write(tmp_path, {"big/SKILL.md": skill_md("big", body="x" * 200)})
    source = FilesystemSource([tmp_path], limits=Limits(max_resources=512, max_total_bytes=100))
    c = Client(SkillsServer(source, cursor_key=KEY, options=ServerOptions(ttl_ms=1_000)))
    scans = count_scans(monkeypatch)
    clock["ns"] += 10**9
    assert listed(c) == []
    assert scans == []


def test_the_structure_walk_skips_what_the_scan_skips(
    root: Path, clock: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "time_ns", lambda: 1 << 62)
    write(root, {"x/.hidden/SKILL.md": skill_md("hidden"), "locked/a/SKILL.md": skill_md("a")})
    source = FilesystemSource([root])
    c = Client(SkillsServer(source, cursor_key=KEY, options=ServerOptions(ttl_ms=1_000)))
    scans = count_scans(monkeypatch)
    clock["ns"] += 10**9
    assert listed(c) == ["skill://locked/a/SKILL.md", SKILL_URI]
    assert scans == []
    # A folder that cannot be opened, or listed, while looking: the look moves on; the re-scan
    # it triggers (a skill seems gone) reports it.
    failing_open(monkeypatch, "locked", errno.EACCES)
    clock["ns"] += 10**9
    assert listed(c) == [SKILL_URI]
    assert [p.path for p in c.server.catalog.problems] == ["locked"]
    monkeypatch.undo()
    real_scandir = os.scandir

    def unlistable(path: Any) -> Any:
        if isinstance(path, int) and os.readlink(f"/proc/self/fd/{path}").endswith("/x"):
            raise OSError(errno.EIO, "Input/output error")
        return real_scandir(path)

    monkeypatch.setattr(time, "time_ns", lambda: 1 << 62)
    monkeypatch.setattr(time, "monotonic_ns", lambda: clock["ns"])
    monkeypatch.setattr(os, "scandir", unlistable)
    clock["ns"] += 10**9
    assert listed(c) == ["skill://locked/a/SKILL.md", SKILL_URI]


def test_a_skill_md_over_the_limit_is_omitted_without_being_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to reach the catalog builder with neither bytes nor a verdict (an assertion)."""
    monkeypatch.setattr(fs_module, "_read_fd", None)  # any read would fail
    write(tmp_path, {"big/SKILL.md": skill_md("big", body="x" * 200)})
    source = FilesystemSource([tmp_path], limits=Limits(max_resources=512, max_total_bytes=100))
    (omitted,) = source.scan().omitted
    assert (omitted.code, omitted.path) == (OmitCode.OVER_LIMIT, "big")
    assert omitted.reason.startswith("the skill has 1 files and 243 bytes; the limits are")
    assert isinstance(source.recheck("skill://big/SKILL.md"), OmittedSkill)


# --- polls under a descriptor limit: never a partial look taken for a change ---------------------

#: Run in a child process whose descriptor limit is lowered once the source has scanned: more
#: sibling skill folders than it may open, then no descriptor to spare at all.
_LOW_LIMIT_CHILD = r"""
import json, os, resource, sys, time
from skills_core.server import FilesystemSource

root = sys.argv[1]
time_ns = time.time_ns
time.time_ns = lambda: time_ns() + 10**12  # every SKILL.md settled: a poll compares signatures
source = FilesystemSource([root])
first = source.scan()
scans = []
real_scan = FilesystemSource.scan
FilesystemSource.scan = lambda self: scans.append(1) or real_scan(self)
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
in_use = len(os.listdir("/proc/self/fd"))  # the listing's own descriptor is closed again

def poll():
    try:
        catalog = source.poll(0)
    except OSError as exc:
        return f"raised {exc}"
    return None if catalog is None else [s.uri for s in catalog.skills]

report = {"skills": len(first.skills)}
resource.setrlimit(resource.RLIMIT_NOFILE, (in_use + 8, hard))
report["fewer"] = [poll() for _ in range(3)]
report["fewer_scans"] = len(scans)
os.mkdir(os.path.join(root, "added"))
with open(os.path.join(root, "added", "SKILL.md"), "w") as f:
    f.write("---\nname: added\ndescription: d\n---\n")
report["added"] = poll()
report["added_note"] = getattr(source, "poll_note", "no such attribute")
resource.setrlimit(resource.RLIMIT_NOFILE, (in_use - 1, hard))
os.unlink(os.path.join(root, "added", "SKILL.md"))
os.rmdir(os.path.join(root, "added"))
report["none"] = [poll() for _ in range(2)]
report["none_note"] = getattr(source, "poll_note", "no such attribute")
resource.setrlimit(resource.RLIMIT_NOFILE, (in_use + 8, hard))
report["again"] = poll()
report["again_note"] = getattr(source, "poll_note", "no such attribute")
print(json.dumps(report))
"""


def test_polls_under_a_low_descriptor_limit_drop_nothing_and_see_no_false_change(
    tmp_path: Path,
) -> None:
    """With more sibling skill folders than open descriptors allowed, a poll still sees every
    one (it holds one folder open per level) and reports no change that is not one; with no
    descriptor to spare, a poll fails cleanly: no change, the catalog kept, a note saying why."""
    root = tmp_path / "root"
    write(root, {f"s{i:03d}/SKILL.md": skill_md(f"s{i:03d}") for i in range(60)})
    child = subprocess.run(
        [sys.executable, "-c", _LOW_LIMIT_CHILD, str(root)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr.decode()
    report = json.loads(child.stdout)
    assert report["skills"] == 60
    assert report["fewer"] == [None, None, None]  # nothing changed: no re-scan
    assert report["fewer_scans"] == 0
    assert report["added"] is not None
    assert "skill://added/SKILL.md" in report["added"]
    assert len(report["added"]) == 61
    assert report["added_note"] is None
    assert report["none"] == [None, None]  # the removal is not seen yet, and no skill dropped
    assert report["none_note"].startswith("skills added or removed could not be looked for (")
    assert "Too many open files" in report["none_note"]
    assert "the last catalog is kept" in report["none_note"]
    assert report["again"] is not None
    assert len(report["again"]) == 60
    assert "skill://added/SKILL.md" not in report["again"]
    assert report["again_note"] is None


class _Vanishing:
    """A directory entry whose stat fails as ``error`` says (it went away, or worse)."""

    def __init__(self, entry: os.DirEntry[str], error: int) -> None:
        self.name = entry.name
        self._entry = entry
        self._error = error

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return self._entry.is_dir(follow_symlinks=follow_symlinks)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return self._entry.is_file(follow_symlinks=follow_symlinks)

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        raise OSError(self._error, os.strerror(self._error))


@pytest.mark.parametrize(
    ("where", "error", "fails"),
    [
        ("open s001", errno.EMFILE, True),  # a folder cannot be opened: out of descriptors
        ("open s001", errno.EIO, False),  # ... for a reason of its own: passed over, as by a scan
        ("list root", errno.ENFILE, True),  # the root cannot be listed: out of descriptors
        ("list s001", errno.ENOMEM, True),  # a folder cannot be listed: out of memory
        ("list s001", errno.EIO, False),
        ("stat s001", errno.EMFILE, True),  # its SKILL.md cannot be looked at
        ("stat s001", errno.ENOENT, False),  # ... because it went away
    ],
)
def test_a_poll_that_runs_out_of_resources_keeps_the_catalog_and_leaks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, error: int, fails: bool
) -> None:
    """Beside the real descriptor limit above: each place a look can fail, in process."""
    root = tmp_path / "root"
    write(root, {f"s{i:03d}/SKILL.md": skill_md(f"s{i:03d}") for i in range(3)})
    monkeypatch.setattr(time, "time_ns", lambda: 1 << 62)  # settled: a poll compares signatures
    source = FilesystemSource([root])
    source.scan()
    before = {int(name) for name in os.listdir("/proc/self/fd")}
    action, _, folder = where.partition(" ")
    real_open, real_scandir = os.open, os.scandir

    def named(fd: int) -> str:
        return os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))

    def fake_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if action == "open" and path == folder:
            raise OSError(error, os.strerror(error))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    def fake_scandir(path: Any) -> Any:
        if isinstance(path, int) and action == "list" and named(path) == folder:
            raise OSError(error, os.strerror(error))
        listing = real_scandir(path)
        if not (isinstance(path, int) and action == "stat" and named(path) == folder):
            return listing

        @contextlib.contextmanager
        def vanishing() -> Iterator[list[Any]]:
            with listing as entries:
                yield [_Vanishing(entry, error) for entry in entries]

        return vanishing()

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "scandir", fake_scandir)
    catalog = source.poll(0)
    monkeypatch.undo()
    assert {int(name) for name in os.listdir("/proc/self/fd")} == before
    if fails:
        assert catalog is None
        assert source.poll_note is not None
        assert os.strerror(error) in source.poll_note
        assert source.poll(0) is None  # nothing changed
        assert source.poll_note is None
    else:  # s001 seems gone: a re-scan, which reports what the look passed over
        assert source.poll_note is None
        assert catalog is not None
        if action == "stat":  # the scan opens it and finds it
            assert len(catalog.skills) == 3
        else:
            assert len(catalog.skills) == 2
            assert [(p.path, p.reason) for p in catalog.problems] == [
                ("s001", f"could not be read ({os.strerror(error)})")
            ]
