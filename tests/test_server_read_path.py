"""The read path: files held open between reads, looked at once per received chunk, never stale.

Rows: WG-09 (no link followed), SIL-01 (nothing outside a root), and the server issue's rule that
a read shows a file as it is now. ``FilesystemSource.read_since`` keeps the descriptor of a file it
read and uses it again only while the kernel names it at the same path; its stat signature tells
an unchanged file only once the file is older than the racy window. A stream's connection is told
of each chunk it buffers, and answers the reads of one chunk from one look at each file.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fs_helpers import spec_tree, spy_opens, write
from mmap_helpers import shared_mapping, write_unseen
from server_helpers import KEY, Client, CountingSource, request, spec_files

import skills_core.server.filesystem as fs_module
from skills_core import spec_examples as ex
from skills_core.adapters import ServerStream
from skills_core.entry import DEFAULT_LIMITS
from skills_core.jsonrpc import NEED_DATA, EncodedResult
from skills_core.server import (
    FilesystemSource,
    PublishedSkill,
    SkillsServer,
    server_from_roots,
)
from skills_core.server.open_files import MAX_HELD_FILES

INVOICE = "skill://pdf-processing/templates/invoice.md"
INVOICE_PATH = "pdf-processing/templates/invoice.md"
SKILL_URI = ex.SKILL_MD_URI


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return spec_tree(tmp_path / "root")


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return spy_opens(monkeypatch)


def client(root: Path) -> Client:
    return Client(server_from_roots([root], cursor_key=KEY))


def text_of(c: Client, uri: str = INVOICE) -> str:
    contents = c.call("resources/read", {"uri": uri})["contents"]
    text: str = contents[0]["text"]
    return text


def the_skill(source: FilesystemSource) -> PublishedSkill:
    skill = source.scan().get(SKILL_URI)
    assert skill is not None
    return skill


def settled_clock(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """The source's clock well past the racy window of ``path``'s last change."""
    st = path.stat()
    later = max(st.st_mtime_ns, st.st_ctime_ns) + 10 * 10**9
    monkeypatch.setattr(time, "time_ns", lambda: later)


def open_descriptors(*into: str) -> set[int]:
    """This process's open descriptors; with ``into``, only those whose target starts with one of
    them (so descriptors other threads of the suite open and close meanwhile are not counted)."""
    found: set[int] = set()
    for name in os.listdir("/proc/self/fd"):
        if into:
            try:
                target = os.readlink(f"/proc/self/fd/{name}")
            except OSError:  # closed since the listing (the listing's own descriptor, say)
                continue
            if not target.startswith(into):
                continue
        found.add(int(name))
    return found


# --- held descriptors ----------------------------------------------------------------------------


def test_a_second_read_opens_nothing(root: Path, opened: list[str]) -> None:
    c = client(root)
    assert text_of(c) == ex.INVOICE.decode()
    assert opened  # the first read walked from the root
    opened.clear()
    assert text_of(c) == ex.INVOICE.decode()
    assert opened == []


def test_a_settled_unchanged_file_is_read_at_every_look(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No stat signature proves a file's bytes unchanged: every look reads them (one pread)."""
    source = FilesystemSource([root])
    skill = the_skill(source)
    settled_clock(monkeypatch, root / INVOICE_PATH)
    assert source.read_since(skill, "templates/invoice.md", None) == (ex.INVOICE, None)
    reads: list[int] = []
    real_pread = os.pread

    def spy_pread(fd: int, size: int, offset: int) -> bytes:
        reads.append(fd)
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", spy_pread)
    assert source.read_since(skill, "templates/invoice.md", object()) == (ex.INVOICE, None)
    assert len(reads) == 1


def test_a_racy_file_gets_no_version_and_is_read_every_time(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Changed within the racy window: an edit that kept every timestamp is still seen."""
    source = FilesystemSource([root])
    skill = the_skill(source)
    invoice = root / INVOICE_PATH
    monkeypatch.setattr(time, "time_ns", lambda: invoice.stat().st_mtime_ns + 1)
    original = os.stat(invoice)
    assert source.read_since(skill, "templates/invoice.md", None) == (ex.INVOICE, None)
    edited = ex.INVOICE.replace(b"Amount", b"Amoun7")
    with open(invoice, "r+b") as file:  # in place: the same inode, the same size
        file.write(edited)
    real_key = fs_module._stat_key
    monkeypatch.setattr(fs_module, "_stat_key", lambda st: real_key(original))
    assert source.read_since(skill, "templates/invoice.md", None) == (edited, None)


def test_an_edit_in_place_shows_at_once(root: Path) -> None:
    c = client(root)
    assert text_of(c) == ex.INVOICE.decode()
    invoice = root / INVOICE_PATH
    with open(invoice, "r+b") as file:
        file.write(b"EDITED")
    assert text_of(c) == "EDITED" + ex.INVOICE.decode()[6:]
    with open(invoice, "ab") as file:
        file.write(b"more")
    assert text_of(c).endswith("more")


def test_a_file_replaced_by_a_rename_is_read_anew(root: Path) -> None:
    """Editors save by writing a new file and renaming it over the old one."""
    c = client(root)
    assert text_of(c) == ex.INVOICE.decode()
    write(root, {"pdf-processing/templates/.invoice.tmp": b"# New invoice\n"})
    os.replace(root / "pdf-processing/templates/.invoice.tmp", root / INVOICE_PATH)
    assert text_of(c) == "# New invoice\n"


def test_a_deleted_file_is_not_served(root: Path) -> None:
    c = client(root)
    assert text_of(c) == ex.INVOICE.decode()
    (root / INVOICE_PATH).unlink()
    assert c.error("resources/read", {"uri": INVOICE})["code"] == -32602


# --- folders renamed, moved or swapped for links: WG-09, SIL-01 ------------------------------------


def test_a_folder_renamed_away_is_not_served_from_its_old_place(root: Path) -> None:
    c = client(root)
    assert text_of(c) == ex.INVOICE.decode()
    templates = root / "pdf-processing/templates"
    templates.rename(root / "pdf-processing/old-templates")
    assert c.error("resources/read", {"uri": INVOICE})["code"] == -32602
    write(root, {INVOICE_PATH: b"# In the new folder\n"})
    assert text_of(c) == "# In the new folder\n"


def test_a_skill_folder_renamed_away_is_not_served_from_its_old_place(root: Path) -> None:
    """The rename of a folder further up: the held file's own folder did not move."""
    c = client(root)
    assert text_of(c) == ex.INVOICE.decode()
    (root / "pdf-processing").rename(root / "elsewhere")
    assert c.error("resources/read", {"uri": INVOICE})["code"] == -32602


# Requirement rows: WG-09, SIL-01
def test_a_folder_moved_out_of_the_root_and_linked_back_is_refused_WG_09_SIL_01(
    root: Path, tmp_path: Path, opened: list[str]
) -> None:
    c = client(root)
    assert text_of(c) == ex.INVOICE.decode()
    templates = root / "pdf-processing/templates"
    outside = tmp_path / "outside"
    outside.mkdir()
    templates.rename(outside / "templates")  # the held file moves with it, unchanged
    templates.symlink_to(outside / "templates", target_is_directory=True)
    opened.clear()
    assert c.error("resources/read", {"uri": INVOICE})["code"] == -32602
    real_root = os.path.realpath(root)
    assert all(os.path.commonpath([path, real_root]) == real_root for path in opened), opened


def test_a_root_renamed_away_is_not_served(root: Path, tmp_path: Path) -> None:
    c = client(root)
    assert text_of(c) == ex.INVOICE.decode()
    root.rename(tmp_path / "moved")
    # Not served from where it went; the server cannot read its root: an internal error, and
    # the catalog is kept (issue 22), rather than "no such resource".
    assert c.error("resources/read", {"uri": INVOICE})["code"] == -32603


def test_a_file_swapped_for_a_link_to_itself_elsewhere_is_refused(
    root: Path, tmp_path: Path
) -> None:
    c = client(root)
    assert text_of(c) == ex.INVOICE.decode()
    invoice = root / INVOICE_PATH
    moved = tmp_path / "invoice.md"
    invoice.rename(moved)
    invoice.symlink_to(moved)
    assert c.error("resources/read", {"uri": INVOICE})["code"] == -32602


# --- bounds and fallbacks ----------------------------------------------------------------------


def test_held_descriptors_are_bounded_and_closed(tmp_path: Path) -> None:
    files = {f"many/data/{i:03d}.md": f"file {i}\n".encode() for i in range(MAX_HELD_FILES + 10)}
    write(tmp_path / "root", {"many/SKILL.md": b"---\nname: many\ndescription: d\n---\n", **files})
    # Only descriptors into this test's folder are counted: descriptor numbers other sources of
    # the suite close meanwhile (when collected) are reused, so a difference of sets would not do.
    place = str(tmp_path)
    assert open_descriptors(place) == set()
    source = FilesystemSource([tmp_path / "root"])
    skill = source.scan().get("skill://many/SKILL.md")
    assert skill is not None
    for path, data in files.items():
        assert source.read(skill, path.removeprefix("many/")) == data
        got = source.read_since(skill, path.removeprefix("many/"), None)
        assert got is not None
        assert got[0] == data
    assert len(source._held) == MAX_HELD_FILES
    assert len(open_descriptors(place)) == MAX_HELD_FILES
    source.close()
    assert open_descriptors(place) == set()
    got = source.read_since(skill, "data/000.md", None)  # still works after close()
    assert got is not None
    assert got[0] == b"file 0\n"
    del source, skill, got
    assert open_descriptors(place) == set()  # closed when collected


def test_a_forked_child_asks_its_own_proc(root: Path) -> None:
    """After fork, /proc/self/fd opened by the parent lists the parent's descriptors: the child
    opens its own, and still finds a held file where it is (and not where it is no longer)."""
    source = FilesystemSource([root])
    skill = the_skill(source)
    assert source.read_since(skill, "templates/invoice.md", None) == (ex.INVOICE, None)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, and leave without running pytest's teardown
        try:
            fresh = source._held._proc is None
            got = source.read_since(skill, "templates/invoice.md", None)
            (root / INVOICE_PATH).rename(root / "pdf-processing/templates/moved.md")
            gone = source.read_since(skill, "templates/invoice.md", None)
            os.write(write_end, json.dumps([fresh, got == (ex.INVOICE, None), gone]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    report = json.loads(os.read(read_end, 1000))
    os.close(read_end)
    assert status == 0
    assert report == [True, True, None]
    assert source.read_since(skill, "templates/invoice.md", None) is None  # renamed by the child


def test_without_proc_nothing_is_held(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_proc(path: object, *args: object, **kwargs: object) -> str:
        raise FileNotFoundError(2, "no /proc here")

    monkeypatch.setattr(os, "readlink", no_proc)
    source = FilesystemSource([root])
    skill = the_skill(source)
    for _ in range(2):
        assert source.read_since(skill, "templates/invoice.md", None) == (ex.INVOICE, None)
    assert len(source._held) == 0


def test_a_held_file_grown_past_the_limit_is_not_served(root: Path) -> None:
    limits = DEFAULT_LIMITS
    source = FilesystemSource([root])
    skill = the_skill(source)
    assert source.read_since(skill, "templates/invoice.md", None) is not None
    with open(root / INVOICE_PATH, "ab") as file:
        file.truncate(limits.max_total_bytes + 1)
    assert source.read_since(skill, "templates/invoice.md", None) is None
    assert len(source._held) == 0


def test_a_held_file_renamed_then_deleted_is_not_used(root: Path) -> None:
    """The kernel names a deleted file's path with " (deleted)" after it: a file held as
    "x (deleted)", renamed to "x" and deleted, would be named as it was held; the link count
    (zero) tells it apart."""
    write(root, {"pdf-processing/templates/x (deleted)": b"was here\n"})
    source = FilesystemSource([root])
    skill = the_skill(source)
    got = source.read_since(skill, "templates/x (deleted)", None)
    assert got is not None
    assert got[0] == b"was here\n"
    assert len(source._held) == 1
    templates = root / "pdf-processing/templates"
    (templates / "x (deleted)").rename(templates / "x")
    (templates / "x").unlink()
    assert source.read_since(skill, "templates/x (deleted)", None) is None
    assert len(source._held) == 0


def test_a_held_file_is_walked_to_when_proc_fails(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FilesystemSource([root])
    skill = the_skill(source)
    assert source.read_since(skill, "templates/invoice.md", None) == (ex.INVOICE, None)
    assert len(source._held) == 1

    def broken(path: object, *args: object, **kwargs: object) -> str:
        raise OSError(5, "I/O error")

    monkeypatch.setattr(os, "readlink", broken)
    assert source.read_since(skill, "templates/invoice.md", None) == (ex.INVOICE, None)
    assert len(source._held) == 0


def test_a_file_the_kernel_names_otherwise_is_not_held(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root the kernel spells another way (a bind mount): nothing held, every read walks."""
    monkeypatch.setattr(os, "readlink", lambda *args, **kwargs: "/somewhere/else")
    source = FilesystemSource([root])
    skill = the_skill(source)
    for _ in range(2):
        assert source.read_since(skill, "templates/invoice.md", None) == (ex.INVOICE, None)
    assert len(source._held) == 0


def test_the_walk_refuses_what_is_not_a_servable_file(root: Path) -> None:
    """``read`` (what deferred reads use) gives None for a folder, a FIFO or a missing file."""
    source = FilesystemSource([root])
    skill = the_skill(source)
    os.mkfifo(root / "pdf-processing/templates/pipe")
    assert source.read(skill, "templates/pipe") is None
    assert source.read(skill, "templates") is None
    assert source.read(skill, "nothing.md") is None
    assert source.read(skill, "templates/invoice.md") == ex.INVOICE


def test_a_settled_unchanged_file_is_answered_with_the_answer_made_before(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is read again, found equal, and the encoded answer made before is sent."""
    settled_clock(monkeypatch, root / INVOICE_PATH)
    server = server_from_roots([root], cursor_key=KEY)
    connection = server.connection()
    params = request("resources/read", {"uri": INVOICE})["params"]
    first = connection.answer("resources/read", params)
    reads: list[int] = []
    real_pread = os.pread

    def spy_pread(fd: int, size: int, offset: int) -> bytes:
        reads.append(fd)
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", spy_pread)
    assert connection.answer("resources/read", params) is first
    assert len(reads) == 1


# --- writes that move no timestamp: a shared writable mapping ------------------------------------


@contextlib.contextmanager
def serve_process(root: Path) -> Iterator[Callable[[], str]]:
    """``skills-core serve ROOT`` in a child process; yields a function reading the invoice."""
    process = subprocess.Popen(
        [sys.executable, "-m", "skills_core", "serve", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    line = json.dumps(request("resources/read", {"uri": INVOICE})).encode() + b"\n"

    def read() -> str:
        stdin.write(line)
        stdin.flush()
        answer = json.loads(stdout.readline())
        return str(answer["result"]["contents"][0]["text"])

    try:
        yield read
    finally:
        stdin.close()
        process.wait(timeout=30)
        stdout.close()


def test_a_write_through_a_shared_mapping_shows_at_once(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A settled file changed through ``mmap`` keeps its mtime and ctime; the read shows it."""
    invoice = root / INVOICE_PATH
    with shared_mapping(invoice) as mapping:
        settled_clock(monkeypatch, invoice)
        connection = server_from_roots([root], cursor_key=KEY).connection()
        params = request("resources/read", {"uri": INVOICE})["params"]

        def text() -> str:
            answer = connection.answer("resources/read", params)
            assert isinstance(answer, EncodedResult)
            return str(json.loads(answer.json)["contents"][0]["text"])

        assert text() == text() == ex.INVOICE.decode()  # read, then answered again: cached

        def settle() -> None:
            settled_clock(monkeypatch, invoice)
            text()

        write_unseen(mapping, invoice, b"MAPPED", settle)
        assert text() == "MAPPED" + ex.INVOICE.decode()[6:]


def test_a_write_through_a_shared_mapping_shows_in_the_next_read_of_serve(
    tmp_path: Path,
) -> None:
    """The same through ``skills-core serve`` in a child process, on a file left alone for the
    racy window (3 s) so that its stat signature is settled, as most served files are."""
    root = spec_tree(tmp_path / "root")
    invoice = root / INVOICE_PATH
    with shared_mapping(invoice) as mapping:
        time.sleep(3.5)  # past the racy window of the mapping's first write: settled
        with serve_process(root) as read:
            assert read() == read() == ex.INVOICE.decode()

            def settle() -> None:
                time.sleep(3.5)
                read()

            write_unseen(mapping, invoice, b"MAPPED", settle)
            assert read() == "MAPPED" + ex.INVOICE.decode()[6:]


def test_reads_of_special_files_and_folders_are_refused(root: Path) -> None:
    source = FilesystemSource([root])
    skill = the_skill(source)
    os.mkfifo(root / "pdf-processing/templates/pipe")
    assert source.read_since(skill, "templates/pipe", None) is None
    assert source.read_since(skill, "templates", None) is None
    assert source.read_since(skill, "nothing.md", None) is None
    assert len(source._held) == 0


# --- one look per file per chunk -------------------------------------------------------------------


def lines(*messages: object) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def drain(stream: ServerStream, data: bytes) -> list[Any]:
    stream.receive_data(data)
    out: list[Any] = []
    while (step := stream.next_output()) is not NEED_DATA:
        assert isinstance(step, bytes)
        out += [json.loads(line) for line in step.splitlines()]
    return out


def reads_of(n: int, uri: str = INVOICE) -> bytes:
    return lines(*(request("resources/read", {"uri": uri}, request_id=i) for i in range(n)))


def test_the_reads_of_one_chunk_look_at_the_file_once() -> None:
    source = CountingSource(spec_files())
    stream = ServerStream(SkillsServer(source, cursor_key=KEY).connection())
    first = drain(stream, reads_of(5))
    assert [a["id"] for a in first] == [0, 1, 2, 3, 4]
    assert source.reads == 1
    drain(stream, reads_of(3))  # a new chunk: looked at again
    assert source.reads == 2


def test_an_edit_between_chunks_shows_in_the_next_chunk() -> None:
    source = CountingSource(spec_files())
    stream = ServerStream(SkillsServer(source, cursor_key=KEY).connection())
    [before] = drain(stream, reads_of(1))
    source.memory.write(INVOICE_PATH, b"# Edited\n")
    answers = drain(stream, reads_of(2))
    assert before["result"]["contents"][0]["text"] == ex.INVOICE.decode()
    assert [a["result"]["contents"][0]["text"] for a in answers] == ["# Edited\n"] * 2


def test_a_request_split_across_chunks_is_answered_from_a_look_after_it_arrived() -> None:
    source = CountingSource(spec_files())
    stream = ServerStream(SkillsServer(source, cursor_key=KEY).connection())
    data = reads_of(2)
    cut = len(data) - 10
    assert len(drain(stream, data[:cut])) == 1
    source.memory.write(INVOICE_PATH, b"# Edited\n")
    [second] = drain(stream, data[cut:])
    assert second["result"]["contents"][0]["text"] == "# Edited\n"


def test_a_connection_not_told_of_chunks_looks_every_time() -> None:
    source = CountingSource(spec_files())
    connection = SkillsServer(source, cursor_key=KEY).connection()
    params = request("resources/read", {"uri": INVOICE})["params"]
    for _ in range(3):
        connection.answer("resources/read", params)
    assert source.reads == 3


def test_a_skill_changed_by_a_recheck_within_a_chunk_is_looked_at_again() -> None:
    """skills/get that finds the skill changed makes a new skill object: reads after it in the
    chunk look again (an unchanged skill keeps its object, and its looks)."""
    source = CountingSource(spec_files())
    stream = ServerStream(SkillsServer(source, cursor_key=KEY).connection())
    read = request("resources/read", {"uri": INVOICE})
    get = request("skills/get", {"uri": SKILL_URI})
    drain(stream, lines(read, get, read))
    assert source.reads == 1
    source.memory.write("pdf-processing/templates/new.md", b"# New\n")
    drain(stream, lines(read, get, read))
    assert source.reads == 3


def test_failed_reads_are_not_reused_within_a_chunk() -> None:
    source = CountingSource(spec_files())
    stream = ServerStream(SkillsServer(source, cursor_key=KEY).connection())
    drain(stream, reads_of(1))
    source.memory.delete(INVOICE_PATH)
    answers = drain(stream, reads_of(2))
    assert [a["error"]["code"] for a in answers] == [-32602, -32602]


def test_the_reads_of_one_chunk_look_once_on_disk(root: Path, opened: list[str]) -> None:
    server = server_from_roots([root], cursor_key=KEY)
    stream = ServerStream(server.connection())
    looks: list[str] = []
    real_readlink = os.readlink

    def spy_readlink(path: str, *, dir_fd: int | None = None) -> str:
        looks.append(path)
        return real_readlink(path, dir_fd=dir_fd)

    drain(stream, reads_of(1))  # the walk, and the file held
    assert len(opened) > 0
    opened.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "readlink", spy_readlink)
        answers = drain(stream, reads_of(20))
    assert [a["result"]["contents"][0]["text"] for a in answers] == [ex.INVOICE.decode()] * 20
    assert opened == []
    assert len(looks) == 1  # one look at the held file for the whole chunk
