"""The performance shortcuts build exactly what the plain code builds.

* Every trusted constructor (``skills_core._fast``: slots set through their descriptors) makes
  objects equal to, printed and hashed like, of the same type as, and as frozen as those of the
  plain constructor; ``slot_setters`` refuses a list of names that is not the class's slots.
* ``freeze_parsed`` is ``freeze_json`` on parser output; the fast ``encode_folder`` is the
  segment-by-segment encoding; ``verify_bytes`` reports a malformed expected digest first, as
  before, whatever else is wrong.
* A file read whose first ``read`` returns exactly the size ``fstat`` reported costs one read.
"""

from __future__ import annotations

import ast
import os
from dataclasses import FrozenInstanceError
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_helpers import Generated, skill_md

import skills_core.server.catalog as catalog_module
import skills_core.server.filesystem as fs_module
from skills_core._jsonrpc_encode import EncodedResult, encode_result
from skills_core._jsonrpc_events import RequestReceived, new_request
from skills_core.digest import compute_digest, verify_bytes
from skills_core.entry import SkillEntry, SkillResource, unchecked_entry, unchecked_resource
from skills_core.errors import DigestFormatError, URIError, VerificationError, VerificationKind
from skills_core.host.effects import DeliverToModel, DeliveryKind, skill_file_delivery
from skills_core.host.intents import KeepVerified, keep_verified
from skills_core.host.requests import ReadFile, read_file
from skills_core.jsonvalue import JSONValue, freeze_json
from skills_core.server import CatalogBuilder, RootSnapshot
from skills_core.server._rules import ParsedSkillMd, Verdict, freeze_parsed, judge_parsed
from skills_core.server.model import (
    PublishedSkill,
    SnapshotFile,
    new_snapshot_file,
    restored_published_skill,
)
from skills_core.server.paths import encode_folder, encode_segment
from skills_core.uri import SkillURI

# --- records ------------------------------------------------------------------------------------


def same(fast: object, slow: object) -> None:
    """``fast`` is what the plain constructor made as ``slow``: equal, same type, repr and hash."""
    assert type(fast) is type(slow)
    assert fast == slow
    assert repr(fast) == repr(slow)
    try:
        expected = hash(slow)
    except TypeError:  # a mapping field (a resource's extra): neither is hashable
        with pytest.raises(TypeError):
            hash(fast)
    else:
        assert hash(fast) == expected


def test_fast_snapshot_file_is_the_dataclass() -> None:
    for data in (None, b"x"):
        fast = new_snapshot_file("a/SKILL.md", 1, compute_digest(b"x"), data)
        same(fast, SnapshotFile("a/SKILL.md", 1, compute_digest(b"x"), data))
        with pytest.raises(FrozenInstanceError):
            fast.size = 2  # type: ignore[misc]


def test_fast_request_event_and_encoded_result_are_what_the_plain_code_makes() -> None:
    with_uri: dict[str, JSONValue] = {"uri": "skill://a/SKILL.md"}
    for request_id in (7, "seven"):
        for params in (None, with_uri):
            fast = new_request(request_id, "resources/read", params)
            slow = RequestReceived(id=request_id, method="resources/read", params=params)
            assert type(fast) is RequestReceived
            assert fast == slow
            assert repr(fast) == repr(slow)
            with pytest.raises(FrozenInstanceError):
                fast.method = "x"  # type: ignore[misc]
    encoded = encode_result({"a": [1, "é"]})
    assert type(encoded) is EncodedResult
    assert encoded.json == '{"a":[1,"é"]}'.encode()
    assert len(encoded) == len(encoded.json)
    assert repr(encoded) == f"<EncodedResult of {len(encoded.json)} bytes>"
    with pytest.raises(TypeError, match="made by encode_result"):
        EncodedResult()


def test_fast_entry_resource_and_published_skill_are_the_plain_ones() -> None:
    skill = SkillURI.parse("skill://a/b/SKILL.md")
    digest = compute_digest(b"x")
    resource = unchecked_resource("skill://a/b/SKILL.md", digest, 1)
    same(resource, SkillResource(uri="skill://a/b/SKILL.md", digest=digest, size=1))
    extra = freeze_json({"x-note": [1, {"a": None}]})
    assert isinstance(extra, MappingProxyType)
    with_extra = unchecked_resource("skill://a/b/SKILL.md", digest, 1, extra)
    same(with_extra, SkillResource(uri=resource.uri, digest=digest, size=1, extra=extra))
    frontmatter = MappingProxyType({"name": "b", "description": "d"})
    for resources in ((resource,), (with_extra,)):
        entry = unchecked_entry(skill=skill, frontmatter=frontmatter, resources=resources)
        checked = SkillEntry(uri=skill.uri, frontmatter=frontmatter, resources=resources)
        same(entry, checked)
        assert entry == SkillEntry.from_json(entry.to_json())
        assert entry.skill == checked.skill
        assert entry.resource(resource.uri) == resources[0]
        assert entry.resource_set == checked.resource_set
        with pytest.raises(FrozenInstanceError):
            entry.uri = "x"  # type: ignore[misc]
    dynamic = unchecked_entry(
        skill=skill, frontmatter=frontmatter, resources="dynamic", extra=extra
    )
    same(
        dynamic,
        SkillEntry(uri=skill.uri, frontmatter=frontmatter, resources="dynamic", extra=extra),
    )
    files = MappingProxyType({skill.uri: "SKILL.md"})
    published = PublishedSkill(entry=entry, root=0, folder="a/b", files=files, findings=())
    restored = restored_published_skill(
        skill.uri,
        0,
        "a/b",
        findings=(),
        encoded_entry=b"{}",
        make=lambda: (entry, files),
    )
    assert type(restored) is PublishedSkill
    assert restored.encoded_entry == b"{}"
    assert (restored.uri, restored.name) == (published.uri, published.name)
    same(restored, published)  # materialised on first look


def test_fast_delivery_is_the_dataclass() -> None:
    for from_cache in (False, True):
        fast = skill_file_delivery(
            "o",
            "skill://a/b/x.md",
            b"x",
            "skill://a/b/SKILL.md",
            "skill://a/b",
            from_cache=from_cache,
        )
        slow = DeliverToModel(
            origin="o",
            uri="skill://a/b/x.md",
            kind=DeliveryKind.SKILL_FILE,
            content=b"x",
            verified=True,
            skill_uri="skill://a/b/SKILL.md",
            skill_root="skill://a/b",
            from_cache=from_cache,
        )
        same(fast, slow)
        assert fast.model_text == slow.model_text
        assert fast.trust == "untrusted"
        with pytest.raises(FrozenInstanceError):
            fast.origin = "another"  # type: ignore[misc]


class _Session:
    """What a read record keeps of its load session: its generation."""

    generation = 4


def test_fast_keep_and_read_are_the_dataclasses() -> None:
    row = unchecked_resource("skill://a/b/x.md", compute_digest(b"x"), 1)
    same(keep_verified("o", row, b"x"), KeepVerified(origin="o", resource=row, data=b"x"))
    session = _Session()
    for resource in (row, None):
        fast = read_file("o", row.uri, session, "skill://a/b/SKILL.md", resource)
        slow = ReadFile(
            origin="o",
            uri=row.uri,
            session=session,
            generation=4,
            skill_uri="skill://a/b/SKILL.md",
            resource=resource,
        )
        same(fast, slow)
        assert fast.session is session
        with pytest.raises(FrozenInstanceError):
            fast.generation = 5  # type: ignore[misc]


#: Every trusted constructor of the package (a function that calls ``new_blank``), each checked
#: against its plain constructor above (``EncodedResult``'s through ``encode_result``).
TRUSTED = {
    "_jsonrpc_encode._new_encoded",
    "_jsonrpc_events.new_request",
    "entry.unchecked_entry",
    "entry.unchecked_resource",
    "host.effects.skill_file_delivery",
    "host.intents.keep_verified",
    "host.requests.read_file",
    "server.model.new_snapshot_file",
    "server.model.restored_published_skill",
}


def test_every_trusted_constructor_is_checked_here() -> None:
    """A new trusted constructor fails this test until it is added to :data:`TRUSTED` (and
    checked against its plain constructor)."""
    package = Path(__file__).resolve().parents[1] / "skills_core"
    found = set()
    for path in package.rglob("*.py"):
        module = ".".join(path.relative_to(package).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and call.func.id == "new_blank"
                for call in ast.walk(node)
            ):
                found.add(f"{module}.{node.name}")
    assert found == TRUSTED


# --- values -------------------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=3), _JSON, max_size=4), st.lists(_JSON, max_size=3))
def test_freeze_parsed_is_freeze_json(mapping: dict[str, object], items: list[object]) -> None:
    for value in (mapping, items):
        fast = freeze_parsed(value)  # type: ignore[arg-type]
        slow = freeze_json(value)
        assert fast == slow
        assert repr(fast) == repr(slow)


def _slow_encode_folder(folder: str) -> str:
    names = folder.split("/")
    return "/".join(
        [encode_segment(names[0], first=True), *(encode_segment(name) for name in names[1:])]
    )


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from("aZ9-._~!$&'()*+,;=:@/ %é\\\x00"), min_size=0, max_size=6),
        min_size=1,
        max_size=3,
    ).map("/".join)
)
def test_fast_encode_folder_is_the_segment_encoding(folder: str) -> None:
    try:
        expected: object = _slow_encode_folder(folder)
    except URIError as exc:
        expected = ("error", exc.kind, exc.message)
    try:
        got: object = encode_folder(folder)
    except URIError as exc:
        got = ("error", exc.kind, exc.message)
    assert got == expected


# --- verification ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "size"),
    [(b"x", 1), (b"x", 2), (b"", 0)],
)
def test_a_malformed_expected_digest_is_reported_first(data: bytes, size: int) -> None:
    for digest in ("sha256:E3B0", compute_digest(data).upper(), "", None):
        with pytest.raises(DigestFormatError):
            verify_bytes(data, size=size, digest=digest)  # type: ignore[arg-type]


def test_verify_bytes_still_checks_size_then_digest() -> None:
    digest = compute_digest(b"abc")
    verify_bytes(b"abc", size=3, digest=digest)
    verify_bytes(bytearray(b"abc"), size=3, digest=digest)
    verify_bytes(memoryview(b"abc"), size=3, digest=digest)
    with pytest.raises(VerificationError) as info:
        verify_bytes(b"abd", size=4, digest=digest)
    assert info.value.kind is VerificationKind.SIZE
    with pytest.raises(VerificationError) as info:
        verify_bytes(memoryview(b"abd"), size=3, digest=digest)
    assert info.value.kind is VerificationKind.DIGEST


# --- reads ------------------------------------------------------------------------------------


def test_a_file_that_is_its_stat_size_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"hello")
    reads: list[int] = []
    real = os.read

    def spy(fd: int, n: int) -> bytes:
        reads.append(n)
        return real(fd, n)

    monkeypatch.setattr(os, "read", spy)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert fs_module._read_fd(fd, 5, True) == (5, compute_digest(b"hello"), b"hello")
        assert reads == [6]
        reads.clear()
        os.lseek(fd, 0, os.SEEK_SET)
        # fstat said more than there is (the file shrank): one more read makes sure.
        assert fs_module._read_fd(fd, 9, False) == (5, compute_digest(b"hello"), None)
        assert reads == [10, 64 * 1024]
    finally:
        os.close(fd)


# --- the catalog's verdict cache ----------------------------------------------------------------


def test_a_rebuild_judges_each_skill_md_once(monkeypatch: pytest.MonkeyPatch) -> None:
    judged: list[str] = []

    def spy(parsed: ParsedSkillMd, name: str) -> Verdict:
        judged.append(name)
        return judge_parsed(parsed, name)

    monkeypatch.setattr(catalog_module, "judge_parsed", spy)
    builder = CatalogBuilder()
    snapshot = RootSnapshot.from_files({"a/SKILL.md": skill_md("a"), "p/a/SKILL.md": skill_md("a")})
    dynamic = [Generated("skill://d/SKILL.md", {"SKILL.md": skill_md("d")})]
    first = builder.build([snapshot])
    assert builder.build([snapshot]) == first
    assert builder.build([snapshot], dynamic=dynamic).skills[1].uri == "skill://d/SKILL.md"
    assert (
        builder.build([snapshot], dynamic=dynamic).skills
        == builder.build([snapshot], dynamic=dynamic).skills
    )
    # Rebuilds judge nothing again; the first build judges each of the two skills that share a
    # SKILL.md (a skill kept as a record keeps no verdict: its frontmatter is in its record).
    assert sorted(judged) == ["a", "a", "d"]


# --- the helper itself --------------------------------------------------------------------------


def test_slot_setters_take_exactly_the_slots_of_the_class() -> None:
    """A renamed, added or forgotten field makes the builder's module fail at import, not build
    half an object."""
    from skills_core._fast import slot_setters
    from skills_core.host.requests import ReadFile

    assert len(slot_setters(SkillURI, "uri", "scheme", "skill_path")) == 3
    with pytest.raises(TypeError, match="no slot 'nope'"):
        slot_setters(SkillURI, "uri", "scheme", "nope")
    with pytest.raises(TypeError, match="no slot 'resolve'"):
        slot_setters(SkillURI, "uri", "scheme", "skill_path", "resolve")  # a method
    with pytest.raises(TypeError, match=r"slots \['skill_path'\] are not named"):
        slot_setters(SkillURI, "uri", "scheme")
    with pytest.raises(TypeError, match="named twice"):
        slot_setters(SkillURI, "uri", "scheme", "skill_path", "uri")
    # The slots of the bases count: a request record's own and those of its bases.
    names = ("origin", "uri", "session", "generation", "skill_uri", "resource")
    assert len(slot_setters(ReadFile, *names)) == 6
    with pytest.raises(TypeError, match=r"\['generation', 'origin'\] are not named"):
        slot_setters(ReadFile, "uri", "session", "skill_uri", "resource")
    with pytest.raises(TypeError, match="no slot 'method'"):  # a class variable
        slot_setters(ReadFile, *names, "method")

    class Shadowed:
        __slots__ = ("a",)

    class Child(Shadowed):
        __slots__ = ()
        a = 1  # hides the slot of its base

    class Other(Shadowed):
        __slots__ = ()

        @property
        def a(self) -> int:  # hides it too, with a __set__ that refuses
            return 1

    assert len(slot_setters(Shadowed, "a")) == 1
    for hiding in (Child, Other):
        with pytest.raises(TypeError, match="no slot 'a'"):
            slot_setters(hiding, "a")
