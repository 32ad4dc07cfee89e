"""The replica's check of a catalog without the catalog builder, pure: the same outcome, lazily.

:class:`CatalogChecker` judges a record whose skill stands alone (no skill folder above or below
it, no nested SKILL.md) by the folder rules one record at a time and keeps the skill encoded
(its entry as the document's own JSON text), building its entry and files when first read;
everything else goes through the catalog builder as before. These tests hold it to what the
builder alone makes of the same document (``CatalogChecker._built``, the path every record took
before), whatever the record says, and to the invariants: nothing the folder rules refuse is
served (FMT-01, FMT-03, URI-06, ENTRY-08, ENTRY-19, SIL-05; canonical URIs, SIL-01), a byte is
served only after its digest matched (ENTRY-12), states never go back.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from server_helpers import meta, skill_md
from test_sources_catalog import RULES, SHAPES, TREE

from skills_core.digest import compute_digest
from skills_core.entry import SkillEntry
from skills_core.server.handler import SkillsServer
from skills_core.server.model import OmitCode, OmittedSkill, PublishedSkill
from skills_core.server.source import MemorySource
from skills_core.sources import published as published_module
from skills_core.sources.published import (
    CatalogDocument,
    CatalogError,
    decode_document,
    document_from_catalog,
    encode_document,
)
from skills_core.sources.store import BlobError, CatalogChecker, StoreSource

WIDE: dict[str, bytes] = {
    **TREE,
    "plain/SKILL.md": skill_md("plain", "Plain names", "license: MIT\nmetadata:\n  a: b\n"),
    "plain/a/b/c.txt": b"c\n",
    "plain/z.txt": b"z\n",
    "v1.2/dotted/SKILL.md": skill_md("dotted", "A dot in the prefix"),
    "v1.2/dotted/.dot-file.md": b"x\n",
    "caf\u00e9/accent/SKILL.md": skill_md("accent", "Non-ASCII prefix"),
    "caf\u00e9/accent/r\u00e9sum\u00e9 file.md": b"r\n",
    "a@b/at/SKILL.md": skill_md("at", "An escaped authority"),
    "warned/SKILL.md": skill_md(
        "warned", "Has a reserved key", "metadata:\n  io.modelcontextprotocol/x: y\n"
    ),
    "same-bytes/one/SKILL.md": skill_md("shared", "One SKILL.md, two folders"),
    "same-bytes/two/SKILL.md": skill_md("shared", "One SKILL.md, two folders"),
    "copy-a/shared/SKILL.md": skill_md("shared", "One SKILL.md, two folders"),
    "copy-b/shared/SKILL.md": skill_md("shared", "One SKILL.md, two folders"),
}


def doc_of(files: dict[str, bytes], generation: int = 1) -> CatalogDocument:
    catalog = MemorySource(files).scan()
    return document_from_catalog(catalog, generation=generation, scheme="skill")


def items_of(doc: CatalogDocument) -> list[dict[str, Any]]:
    return copy.deepcopy([dict(record) for record in doc.skills])


def reread(items: list[dict[str, Any]], generation: int = 2) -> CatalogDocument:
    """The document of ``items`` as a replica reads it: encoded, then decoded (entry texts)."""
    doc = CatalogDocument(generation=generation, scheme="skill", skills=items)
    return decode_document(encode_document(doc))


def by_builder(doc: CatalogDocument) -> Any:
    """What the catalog builder alone makes of ``doc``: every record through it."""
    return CatalogChecker()._built(replace(doc, _entries=None), {})


def outcome(catalog: Any) -> tuple[list[Any], list[Any], list[Any]]:
    return (
        [(s.uri, s.entry, dict(s.files), s.findings, s.folder, s.root) for s in catalog.skills],
        sorted((o.uri, o.path, str(o.code), o.reason) for o in catalog.omitted),
        [s.entry.to_json() for s in catalog.skills],
    )


def same_as_builder(doc: CatalogDocument) -> Any:
    state = CatalogChecker().state(doc)
    built, dirs = by_builder(doc)
    assert outcome(state.catalog) == outcome(built)
    assert dict(state.dirs) == dirs
    for skill in state.catalog.skills:  # every served entry is a valid wire entry
        assert SkillEntry.from_json(skill.entry.to_json()) == skill.entry
    return state


def test_a_catalog_of_lone_skills_is_served_as_the_builder_serves_it_and_kept_encoded() -> None:
    doc = decode_document(encode_document(doc_of(WIDE)))
    state = CatalogChecker().state(doc)
    body = encode_document(doc)
    lone = [s for s in state.catalog.skills if not s.uri.startswith("skill://outer/")]
    assert len(lone) == 9
    assert any(s.findings for s in lone)  # warnings are kept
    for skill in lone:
        # kept as the document's own text, nothing built until read
        assert skill.encoded_entry is not None
        assert skill.encoded_entry in body
        assert skill._entry is None
    same_as_builder(doc)
    assert [s.uri for s in state.catalog.skills] == sorted(s.uri for s in state.catalog.skills)


def test_documents_not_in_the_canonical_layout_are_checked_the_same() -> None:
    doc = doc_of(WIDE)
    spaced = json.dumps(doc.body(), ensure_ascii=False, indent=1).encode()
    data = (
        b'{"catalog":'
        + spaced
        + b',"checksum":"sha256:'
        + hashlib.sha256(spaced).hexdigest().encode()
        + b'"}'
    )
    decoded = decode_document(data)
    assert decoded._entries is None  # read whole
    assert outcome(CatalogChecker().state(decoded).catalog) == outcome(
        CatalogChecker().state(decode_document(encode_document(doc))).catalog
    )
    same_as_builder(decoded)
    same_as_builder(doc)  # no entry texts at all: encoded by the checker


@pytest.mark.parametrize(
    ("change", "uri", "code", "reason"),
    [(c, u, k, r) for _, c, u, k, r in RULES],
    ids=[n for n, *_ in RULES],
)
def test_a_bad_record_is_refused_at_load_as_the_builder_refuses_it(
    change: Callable[[list[dict[str, Any]]], object], uri: str, code: OmitCode, reason: str
) -> None:
    items = items_of(doc_of(TREE))
    change(items)
    state = same_as_builder(reread(items))
    assert uri not in {s.uri for s in state.catalog.skills}
    found = StoreSource(state, Blobs({})).recheck(uri)
    assert isinstance(found, OmittedSkill)
    assert found.code is code
    assert reason in found.reason


@pytest.mark.parametrize(("change", "message"), [(c, m) for _, c, m in SHAPES])
def test_records_of_the_wrong_shape_refuse_the_document_read_as_a_replica_reads_it(
    change: Callable[[list[dict[str, Any]]], object], message: str
) -> None:
    items = items_of(doc_of(TREE))
    change(items)
    try:
        doc = reread(items)
    except (CatalogError, ValueError):
        return  # not even a document (the record is not an object)
    with pytest.raises(CatalogError, match=message):
        CatalogChecker().state(doc)


def alpha_entry(items: list[dict[str, Any]]) -> dict[str, Any]:
    entry: dict[str, Any] = next(
        item["entry"] for item in items if item["entry"]["uri"] == "skill://alpha/SKILL.md"
    )
    return entry


EDITS: list[tuple[str, Callable[[list[dict[str, Any]]], object]]] = [
    ("a second record of one URI", lambda i: i.append(copy.deepcopy(i[0]))),
    (
        "a second record of one URI, with a member of its own",
        lambda i: i.append({"entry": {**copy.deepcopy(i[0]["entry"]), "x": 1}}),
    ),
    (
        "a record with a member of its own above a lone skill",
        lambda i: i.append(
            {
                "entry": {
                    "uri": "skill://team/SKILL.md",
                    "frontmatter": {"name": "team", "description": "Above beta"},
                    "resources": [
                        {"uri": "skill://team/SKILL.md", "digest": "sha256:" + "b" * 64, "size": 9},
                        *[
                            {**r, "uri": r["uri"].replace("skill://team/", "skill://team/")}
                            for r in next(
                                item
                                for item in i
                                if item["entry"]["uri"] == "skill://team/beta/SKILL.md"
                            )["entry"]["resources"]
                        ],
                    ],
                    "x-own": True,
                }
            }
        ),
    ),
    (
        "a well-formed record above a lone skill",
        lambda i: i.append(
            {
                "entry": {
                    "uri": "skill://team/SKILL.md",
                    "frontmatter": {"name": "team", "description": "Above beta"},
                    "resources": [
                        {"uri": "skill://team/SKILL.md", "digest": "sha256:" + "b" * 64, "size": 9},
                        *next(
                            item
                            for item in i
                            if item["entry"]["uri"] == "skill://team/beta/SKILL.md"
                        )["entry"]["resources"],
                    ],
                }
            }
        ),
    ),
    (
        "one SKILL.md, two frontmatters, in lone skills",
        lambda i: i.append(
            {
                "entry": {
                    **copy.deepcopy(alpha_entry(i)),
                    "uri": "skill://beta/SKILL.md",
                    "resources": [
                        {**alpha_entry(i)["resources"][0], "uri": "skill://beta/SKILL.md"}
                    ],
                    "frontmatter": {"name": "beta", "description": "Other"},
                }
            }
        ),
    ),
    (
        "one SKILL.md, two frontmatters, a lone skill and a nested one",
        lambda i: next(
            item for item in i if item["entry"]["uri"] == "skill://outer/inner/SKILL.md"
        )["entry"]["resources"].__setitem__(
            0,
            {
                **next(
                    item for item in i if item["entry"]["uri"] == "skill://outer/inner/SKILL.md"
                )["entry"]["resources"][0],
                "digest": alpha_entry(i)["resources"][0]["digest"],
            },
        ),
    ),
    (
        "a resource URI outside its skill",
        lambda i: alpha_entry(i)["resources"][1].update(uri="skill://beta/guide.md"),
    ),
    (
        "a resource URI not canonical",
        lambda i: alpha_entry(i)["resources"][1].update(uri="skill://alpha/notes/%67uide.md"),
    ),
    ("a size that is a boolean", lambda i: alpha_entry(i)["resources"][1].update(size=True)),
    (
        "a digest in capitals",
        lambda i: alpha_entry(i)["resources"][1].update(
            digest=alpha_entry(i)["resources"][1]["digest"].upper()
        ),
    ),
    (
        "a resource listed twice",
        lambda i: alpha_entry(i)["resources"].append(alpha_entry(i)["resources"][1]),
    ),
    (
        "SKILL.md listed again",
        lambda i: alpha_entry(i)["resources"].append(alpha_entry(i)["resources"][0]),
    ),
    ("SKILL.md not first", lambda i: alpha_entry(i)["resources"].reverse()),
    ("empty folders that are not clean", lambda i: i[0].update(dirs=["a/../b"])),
    ("empty folders listed", lambda i: i[0].update(dirs=["empty", "deep/er"])),
    (
        "a lone skill's nested SKILL.md stated as a file",
        lambda i: alpha_entry(i)["resources"].append(
            {"uri": "skill://alpha/sub/SKILL.md", "digest": "sha256:" + "a" * 64, "size": 3}
        ),
    ),
    (
        "a nested SKILL.md with the bytes of a lone skill's",
        lambda i: alpha_entry(i)["resources"].append(
            {
                "uri": "skill://alpha/zz/SKILL.md",
                "digest": next(
                    item for item in i if item["entry"]["uri"] == "skill://team/beta/SKILL.md"
                )["entry"]["resources"][0]["digest"],
                "size": next(
                    item for item in i if item["entry"]["uri"] == "skill://team/beta/SKILL.md"
                )["entry"]["resources"][0]["size"],
            }
        ),
    ),
    (
        "a URI with a dot segment",
        lambda i: alpha_entry(i)["resources"][1].update(uri="skill://alpha/./guide.md"),
    ),
    ("a URI too long", lambda i: alpha_entry(i).update(uri="skill://" + "a" * 5000 + "/SKILL.md")),
    (
        "a skill named by a URI of another scheme",
        lambda i: alpha_entry(i).update(uri="other://alpha/SKILL.md"),
    ),
]


@pytest.mark.parametrize("change", [c for _, c in EDITS], ids=[n for n, _ in EDITS])
def test_any_edited_document_is_checked_as_the_builder_alone_checks_it(
    change: Callable[[list[dict[str, Any]]], object],
) -> None:
    items = items_of(doc_of(TREE))
    change(items)
    items.sort(key=lambda item: str(item["entry"].get("uri")))
    doc = reread(items)
    refused: CatalogError | None = None
    try:
        built = by_builder(doc)
    except CatalogError as exc:
        refused = exc
    if refused is not None:
        with pytest.raises(CatalogError, match=r"records|record of|resource|entry|folders"):
            CatalogChecker().state(doc)
        return
    state = CatalogChecker().state(doc)
    assert outcome(state.catalog) == outcome(built[0])
    assert dict(state.dirs) == built[1]


class Blobs:
    """Bytes by digest; ``wrong`` serves other bytes for one digest."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.data = {compute_digest(data): data for data in files.values()}
        self.wrong: dict[str, bytes] = {}

    def fetch(self, digest: str, size: int) -> bytes:
        if digest in self.wrong:
            return self.wrong[digest]
        if digest not in self.data:
            raise BlobError(f"blobs/{digest}", "there is no such object")
        return self.data[digest]

    def cached(self, digest: str) -> bool:
        return False

    def describe(self, digest: str) -> str:
        return f"blobs/{digest}"


def test_a_skill_kept_encoded_serves_only_bytes_that_match_its_digest() -> None:
    doc = decode_document(encode_document(doc_of(WIDE)))
    blobs = Blobs(WIDE)
    logged: list[str] = []
    source = StoreSource(CatalogChecker().state(doc), blobs, log=logged.append)
    skill = source.scan().get("skill://plain/SKILL.md")
    assert isinstance(skill, PublishedSkill)
    assert skill._entry is None  # kept encoded until now
    assert source.read(skill, "a/b/c.txt") == b"c\n"
    guide = compute_digest(b"z\n")
    blobs.wrong[guide] = b"y\n"  # same size, other bytes
    with pytest.raises(BlobError, match="does not match its digest"):
        source.read(skill, "z.txt")
    blobs.wrong[guide] = b"zz\n"
    with pytest.raises(BlobError, match="holds 3 bytes, not the 2 published"):
        source.read(skill, "z.txt")
    assert len(logged) == 2
    assert source.read(skill, "missing.txt") is None
    assert source.list_directory(skill, "a") == [("b", True)]
    accented = source.scan().get("skill://caf%C3%A9/accent/SKILL.md")
    assert isinstance(accented, PublishedSkill)
    assert accented._entry is None
    assert source.read(accented, "r\u00e9sum\u00e9 file.md") == b"r\n"


def test_a_new_generation_keeps_unchanged_skills_and_rejudges_changed_ones() -> None:
    first = decode_document(encode_document(doc_of(WIDE, 1)))
    checker = CatalogChecker()
    one = checker.state(first)
    items = items_of(first)
    alpha_entry(items)["frontmatter"]["description"] = "Restated"
    plain = next(item for item in items if item["entry"]["uri"] == "skill://plain/SKILL.md")
    plain["entry"]["frontmatter"]["name"] = "other"  # now refused
    second = reread(items, 2)
    two = checker.state(second)
    before = {s.uri: s for s in one.catalog.skills}
    after = {s.uri: s for s in two.catalog.skills}
    assert after["skill://v1.2/dotted/SKILL.md"] is before["skill://v1.2/dotted/SKILL.md"]
    assert after["skill://alpha/SKILL.md"] is not before["skill://alpha/SKILL.md"]
    assert after["skill://alpha/SKILL.md"].entry.frontmatter["description"] == "Restated"
    assert "skill://plain/SKILL.md" not in after
    # what one replica makes of each generation is what a fresh one makes of it
    assert outcome(two.catalog) == outcome(CatalogChecker().state(second).catalog)
    same_as_builder(second)


def test_a_server_over_a_store_reports_changed_skills_without_building_the_others() -> None:
    first = decode_document(encode_document(doc_of(WIDE, 1)))
    checker = CatalogChecker()
    source = StoreSource(checker.state(first), Blobs(WIDE))
    server = SkillsServer(source, cursor_key=b"k" * 32)
    listed: Any = server.answer("skills/list", {"_meta": meta()})
    assert len(listed["skills"]) == len(source.state.catalog.skills)
    lone = [s for s in source.state.catalog.skills if not s.uri.startswith("skill://outer/")]
    assert all(s._entry is None for s in lone)  # listed from their text, nothing built
    items = items_of(first)
    alpha_entry(items)["frontmatter"]["description"] = "Restated"
    source.offer(checker.state(reread(items, 2)))
    server.answer("skills/list", {"_meta": meta()})
    changes = server.changes()
    assert changes is not None
    assert changes.changed == ("skill://alpha/SKILL.md",)
    assert not changes.added
    assert not changes.removed
    unchanged = [s for s in source.state.catalog.skills if not s.uri.startswith("skill://alpha/")]
    assert all(s._entry is None for s in unchanged if not s.uri.startswith("skill://outer/"))
    source.offer(checker.state(reread(items, 3)))  # the same entries again
    server.answer("skills/list", {"_meta": meta()})
    assert server.changes() is None
    source.offer(checker.state(reread(items[1:], 4)))
    server.answer("skills/list", {"_meta": meta()})
    gone = server.changes()
    assert gone is not None
    assert gone.removed == (items[0]["entry"]["uri"],)


def test_the_canonical_reader_is_as_strict_as_the_whole_one() -> None:
    body = encode_document(doc_of(TREE))
    # a duplicate key inside an entry, a NaN, a lone surrogate as UTF-8 bytes: each refused
    twice = body.replace(b'"frontmatter":{', b'"frontmatter":{"name":"x",', 1)
    nan = body.replace(b'"size":6', b'"size":NaN', 1)
    surrogate = body.replace(b"First skill", b"First \xed\xa0\x80skill", 1)
    for changed, message in (
        (twice, "duplicate object key"),
        (nan, "NaN is not a JSON number"),
        (surrogate, "not UTF-8"),
    ):
        assert changed != body
        inner = changed[len(b'{"catalog":') : changed.rindex(b',"checksum":')]
        data = (
            b'{"catalog":'
            + inner
            + b',"checksum":"sha256:'
            + hashlib.sha256(inner).hexdigest().encode()
            + b'"}'
        )
        with pytest.raises(CatalogError, match=message):
            decode_document(data)


def test_the_collector_is_paused_while_a_catalog_is_read_and_only_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = encode_document(doc_of(TREE))
    seen: list[bool] = []
    real = published_module._scan_canonical

    def watched(text: str) -> Any:
        seen.append(gc.isenabled())
        return real(text)

    monkeypatch.setattr(published_module, "_scan_canonical", watched)
    decode_document(body)
    assert gc.isenabled()
    gc.disable()
    try:
        decode_document(body)
        assert not gc.isenabled()  # a pause the caller made is the caller's to end
    finally:
        gc.enable()
    assert seen == [False, False]
