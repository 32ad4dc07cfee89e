"""The published catalog's format and its checks, pure (no store, no I/O).

:func:`decode_document` refuses every document that is not a whole, undamaged, strict catalog of
this version with one typed error (:class:`CatalogError`), whatever the bytes (hypothesis, fed
whole: the format is read in one piece). :class:`CatalogChecker` refuses a document whose
records have the wrong shape (a :class:`CatalogError` naming the record) and leaves out, with a
code and a reason, each skill the folder rules refuse or whose entry is not the one its files
and frontmatter make.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_helpers import skill_md

from skills_core.server.model import OmitCode
from skills_core.server.source import MemorySource
from skills_core.sources import published
from skills_core.sources.published import (
    CatalogDocument,
    CatalogError,
    decode_document,
    document_from_catalog,
    encode_document,
    same_content,
)
from skills_core.sources.store import CatalogChecker

TREE: dict[str, bytes] = {
    "alpha/SKILL.md": skill_md("alpha", "First skill"),
    "alpha/notes/guide.md": b"guide\n",
    "team/beta/SKILL.md": skill_md("beta", "Second skill"),
    "team/beta/data.bin": bytes(range(256)),
    "outer/SKILL.md": skill_md("outer", "Holds a nested skill"),
    "outer/inner/SKILL.md": skill_md("inner", "Nested"),
    "outer/inner/x.txt": b"x\n",
}


def document(files: dict[str, bytes] | None = None, generation: int = 1) -> CatalogDocument:
    catalog = MemorySource(TREE if files is None else files).scan()
    return document_from_catalog(catalog, generation=generation, scheme="skill")


def records(doc: CatalogDocument) -> list[dict[str, Any]]:
    """The document's records, deep-copied so that a test may edit them."""
    return copy.deepcopy([dict(record) for record in doc.skills])


def record_of(items: list[dict[str, Any]], uri: str) -> dict[str, Any]:
    return next(item for item in items if item["entry"]["uri"] == uri)


def with_records(items: list[dict[str, Any]], generation: int = 2) -> CatalogDocument:
    return CatalogDocument(generation=generation, scheme="skill", skills=items)


def wrap(body: bytes) -> bytes:
    """A document of ``body`` with a checksum that matches it."""
    digest = hashlib.sha256(body).hexdigest()
    return b'{"catalog":' + body + b',"checksum":"sha256:' + digest.encode() + b'"}'


def body_of(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def good_body(**changes: object) -> dict[str, Any]:
    body = document().body()
    body.update(changes)
    return body


# --- decoding ------------------------------------------------------------------------------------


def test_a_document_round_trips_and_checks_to_what_the_folder_serves() -> None:
    doc = document()
    decoded = decode_document(encode_document(doc))
    assert decoded == doc
    state = CatalogChecker().state(decoded)
    folder = MemorySource(TREE).scan()
    assert [s.entry.to_json() for s in state.catalog.skills] == [
        s.entry.to_json() for s in folder.skills
    ]
    assert state.label == "generation 1"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "not a catalog document"),
        (b"{}", "not a catalog document"),
        (b'{"catalog":{},"checksum":"sha256:' + b"0" * 64 + b'"}', "does not match its checksum"),
        (wrap(b"{not json"), "not strict JSON"),
        (wrap(b"[1, 2]"), "body is not an object"),
        (wrap(b'{"a":1,"a":2}'), "duplicate object key"),
        (wrap(b"[" * 100_000 + b"]" * 100_000), "nested too deeply"),
        (wrap(body_of(good_body(format="other"))), "format is not"),
        (wrap(body_of(good_body(version=2))), "of version 2"),
        (wrap(body_of(good_body(version="1"))), "of version '1'"),
        (wrap(body_of(good_body(version=True))), "of version True"),
        (wrap(body_of(good_body(version=1.0))), "of version 1.0"),
        (wrap(body_of(good_body(generation=-1))), "generation is not a whole number"),
        (wrap(body_of(good_body(generation=1.5))), "generation is not a whole number"),
        (wrap(body_of(good_body(generation="3"))), "generation is not a whole number"),
        (wrap(body_of(good_body(generation=True))), "generation is not a whole number"),
        (wrap(body_of(good_body(scheme=7))), "lacks its scheme"),
        (wrap(body_of(good_body(skills={}))), "lacks its scheme"),
        (wrap(body_of(good_body(omitted="none"))), "lacks its scheme"),
        (wrap(body_of(good_body(skills=[1]))), "record of the catalog is not an object"),
        (wrap(body_of(good_body(omitted=[[]]))), "record of the catalog is not an object"),
    ],
)
def test_malformed_documents_are_refused_with_the_typed_error(data: bytes, message: str) -> None:
    with pytest.raises(CatalogError, match=message) as caught:
        decode_document(data)
    assert "\n" not in caught.value.message


def test_a_damaged_or_cut_document_is_refused_by_its_checksum() -> None:
    data = encode_document(document())
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x01
    with pytest.raises(CatalogError, match="does not match its checksum"):
        decode_document(bytes(flipped))
    with pytest.raises(CatalogError, match="cut short"):
        decode_document(data[:-1])
    with pytest.raises(CatalogError, match="cut short"):
        decode_document(data + b"\n")


def test_nan_and_infinity_are_refused_on_both_sides() -> None:
    # A NaN in a frontmatter would be published and could not be sent in any answer.
    body = good_body()
    body["skills"][0]["entry"]["frontmatter"]["x-extra"] = [float("nan")]
    with pytest.raises(CatalogError, match="NaN is not a JSON number"):
        decode_document(wrap(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()))
    with pytest.raises(ValueError, match="Out of range float"):
        encode_document(with_records([{"entry": {"frontmatter": {"x": float("inf")}}}]))


@pytest.mark.parametrize(
    ("escape", "refused"),
    [
        (rb"\ud800", True),
        (rb"\uDFFF", True),
        (rb"\ud83d\ude00", True),  # a pair, but never how the canonical encoding writes it
        (rb"\\ud800", False),  # an escaped backslash, then the text "ud800"
        (rb"\\\ud800", True),
        (rb"\\\\ud800", False),
        (rb"\u00e9", False),
        (rb"\u0001", False),  # control characters are escaped by the canonical encoding
    ],
)
def test_surrogate_escapes_are_refused_and_nothing_else(escape: bytes, refused: bool) -> None:
    body = body_of(
        good_body(omitted=[{"code": "invalid", "path": "p", "reason": "r", "uri": None}])
    )
    body = body.replace(b'"reason":"r"', b'"reason":"' + escape + b'"')
    if refused:
        with pytest.raises(CatalogError, match="surrogate escape"):
            decode_document(wrap(body))
    else:
        assert decode_document(wrap(body)).omitted[0]["reason"] == json.loads(b'"' + escape + b'"')


def test_a_document_over_the_size_bound_is_refused_before_it_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = encode_document(document())
    monkeypatch.setattr(published, "MAX_DOCUMENT_BYTES", len(data) - 1)
    with pytest.raises(CatalogError, match="larger than"):
        decode_document(data)


def test_same_content_ignores_the_generation_only() -> None:
    first, second = document(generation=1), document(generation=9)
    assert same_content(first, second)
    changed = document({**TREE, "alpha/notes/guide.md": b"changed\n"}, generation=1)
    assert not same_content(first, changed)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
GOOD = encode_document(document())


def mutate(data: bytes, position: int, replacement: bytes, cut: int) -> bytes:
    position %= len(data) + 1
    return data[:position] + replacement + data[position + cut :]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.binary(max_size=300),
        st.builds(mutate, st.just(GOOD), st.integers(0), st.binary(max_size=4), st.integers(0, 4)),
        st.builds(lambda v: wrap(body_of(v)), JSON),
        st.builds(wrap, st.binary(max_size=200)),
        st.builds(
            lambda changes: wrap(body_of(good_body(**changes))),
            st.dictionaries(
                st.sampled_from(["format", "version", "generation", "scheme", "skills", "omitted"]),
                JSON,
                max_size=3,
            ),
        ),
    )
)
def test_decoding_never_raises_anything_but_the_typed_error(data: bytes) -> None:
    try:
        doc = decode_document(data)
    except CatalogError as exc:
        message = exc.message
    else:
        # What decodes is checked, and the check too fails only with the typed error.
        try:
            CatalogChecker().state(doc)
        except CatalogError as exc:
            message = exc.message
        else:
            message = "checked"
    assert message
    assert "\n" not in message


# --- the checker: records of the wrong shape -----------------------------------------------------


def edit(change: Callable[[list[dict[str, Any]]], object]) -> CatalogDocument:
    items = records(document())
    change(items)
    return with_records(items)


def alpha(items: list[dict[str, Any]]) -> dict[str, Any]:
    entry: dict[str, Any] = record_of(items, "skill://alpha/SKILL.md")["entry"]
    return entry


def setitem(target: dict[str, Any], key: str, value: object) -> None:
    target[key] = value


SHAPES: list[tuple[str, Callable[[list[dict[str, Any]]], object], str]] = [
    ("no entry", lambda i: i[0].pop("entry"), "has no entry object"),
    (
        "entry URI not canonical",
        lambda i: setitem(alpha(i), "uri", "skill://%61lpha/SKILL.md"),
        "not a canonical SKILL.md URI",
    ),
    (
        "entry URI not a SKILL.md",
        lambda i: setitem(alpha(i), "uri", "skill://alpha/README.md"),
        "not a canonical SKILL.md URI",
    ),
    (
        "entry URI with no folder",
        lambda i: setitem(alpha(i), "uri", "skill://SKILL.md"),
        "not a canonical SKILL.md URI",
    ),
    (
        "entry URI of another scheme",
        lambda i: setitem(alpha(i), "uri", "other://alpha/SKILL.md"),
        "not a canonical SKILL.md URI",
    ),
    ("two records for one URI", lambda i: i.append(copy.deepcopy(i[0])), "two records"),
    (
        "resources not a list",
        lambda i: setitem(alpha(i), "resources", "dynamic"),
        "no list of resources",
    ),
    ("resource not an object", lambda i: alpha(i)["resources"].append([]), "is not an object"),
    (
        "resource outside the skill",
        lambda i: setitem(alpha(i)["resources"][1], "uri", "skill://beta/x.md"),
        "not a URI inside it",
    ),
    ("negative size", lambda i: setitem(alpha(i)["resources"][1], "size", -1), "not a URI inside"),
    (
        "size that is a bool",
        lambda i: setitem(alpha(i)["resources"][1], "size", True),
        "not a URI inside",
    ),
    (
        "size that is a float",
        lambda i: setitem(alpha(i)["resources"][1], "size", 6.0),
        "not a URI inside",
    ),
    (
        "digest in upper case",
        lambda i: setitem(
            alpha(i)["resources"][1], "digest", alpha(i)["resources"][1]["digest"].upper()
        ),
        "not a URI inside",
    ),
    (
        "resource URI not canonical",
        lambda i: setitem(alpha(i)["resources"][1], "uri", "skill://alpha/notes/guid%65.md"),
        "not canonical",
    ),
    (
        "resource URI with a dot segment",
        lambda i: setitem(alpha(i)["resources"][1], "uri", "skill://alpha/./guide.md"),
        "not canonical",
    ),
    (
        "resource URI with a dot-dot segment",
        lambda i: setitem(alpha(i)["resources"][1], "uri", "skill://alpha/notes/../x.md"),
        "not canonical",
    ),
    (
        "two records disagree about a file",
        lambda i: setitem(
            record_of(i, "skill://outer/inner/SKILL.md")["entry"]["resources"][1], "size", 3
        ),
        "disagree about outer/inner/x.txt",
    ),
    ("no SKILL.md among the resources", lambda i: alpha(i)["resources"].pop(0), "has no SKILL.md"),
    (
        "frontmatter not an object",
        lambda i: setitem(alpha(i), "frontmatter", "name: alpha"),
        "no frontmatter object",
    ),
    (
        "one SKILL.md, two frontmatters",
        lambda i: i.append(
            {
                "entry": {
                    **copy.deepcopy(alpha(i)),
                    "uri": "skill://copy/alpha/SKILL.md",
                    "frontmatter": {"name": "alpha", "description": "Other"},
                    "resources": [
                        {**alpha(i)["resources"][0], "uri": "skill://copy/alpha/SKILL.md"}
                    ],
                }
            }
        ),
        "two frontmatters",
    ),
    ("empty folders not clean", lambda i: setitem(i[0], "dirs", ["../up"]), "not clean"),
    ("empty folders not a list", lambda i: setitem(i[0], "dirs", "x"), "not clean"),
]


@pytest.mark.parametrize(
    ("change", "message"), [(c, m) for _, c, m in SHAPES], ids=[n for n, _, _ in SHAPES]
)
def test_records_of_the_wrong_shape_refuse_the_document(
    change: Callable[[list[dict[str, Any]]], object], message: str
) -> None:
    with pytest.raises(CatalogError, match=message):
        CatalogChecker().state(edit(change))


def test_a_document_of_another_scheme_is_refused() -> None:
    doc = CatalogDocument(generation=1, scheme="other", skills=[])
    with pytest.raises(CatalogError, match="publishes other:// URIs; this replica serves skill://"):
        CatalogChecker().state(doc)


# --- the checker: skills the rules leave out -----------------------------------------------------


def left_out(doc: CatalogDocument) -> dict[str | None, tuple[OmitCode, str]]:
    state = CatalogChecker().state(doc)
    published_uris = {skill.uri for skill in state.catalog.skills}
    omitted = {o.uri: (o.code, o.reason) for o in state.catalog.omitted}
    assert not published_uris & set(omitted)
    return omitted


def rename(items: list[dict[str, Any]], name: str) -> None:
    alpha(items)["frontmatter"]["name"] = name


RULES: list[tuple[str, Callable[[list[dict[str, Any]]], object], str, OmitCode, str]] = [
    (
        "a name the rules refuse",
        lambda i: rename(i, "Alpha Skill"),
        "skill://alpha/SKILL.md",
        OmitCode.NAME_MISMATCH,
        "differs from the folder name",
    ),
    (
        "a name that is not its folder's",
        lambda i: rename(i, "gamma"),
        "skill://alpha/SKILL.md",
        OmitCode.NAME_MISMATCH,
        "differs from the folder name",
    ),
    (
        "no description",
        lambda i: alpha(i)["frontmatter"].pop("description"),
        "skill://alpha/SKILL.md",
        OmitCode.INVALID,
        "description",
    ),
    (
        "metadata that is not strings",
        lambda i: setitem(alpha(i)["frontmatter"], "metadata", {"n": 1}),
        "skill://alpha/SKILL.md",
        OmitCode.INVALID,
        "metadata",
    ),
    (
        "a member the builder never makes",
        lambda i: setitem(alpha(i), "x-extra", True),
        "skill://alpha/SKILL.md",
        OmitCode.INVALID,
        "not the entry its files",
    ),
    (
        "a resource member the builder never makes",
        lambda i: setitem(alpha(i)["resources"][1], "mimeType", "text/markdown"),
        "skill://alpha/SKILL.md",
        OmitCode.INVALID,
        "not the entry its files",
    ),
    (
        "resources out of order",
        lambda i: alpha(i)["resources"].reverse(),
        "skill://alpha/SKILL.md",
        OmitCode.INVALID,
        "not the entry its files",
    ),
    (
        "a nested skill's file left out of the enclosing entry",
        lambda i: record_of(i, "skill://outer/SKILL.md")["entry"]["resources"].pop(),
        "skill://outer/SKILL.md",
        OmitCode.INVALID,
        "not the entry its files",
    ),
    (
        "a file over the byte limit",
        lambda i: setitem(alpha(i)["resources"][1], "size", 17 << 20),
        "skill://alpha/SKILL.md",
        OmitCode.OVER_LIMIT,
        "the limits are 512 files",
    ),
    (
        "more files than the limit",
        lambda i: alpha(i)["resources"].extend(
            {"uri": f"skill://alpha/f{n:03d}", "digest": "sha256:" + "0" * 64, "size": 1}
            for n in range(512)
        ),
        "skill://alpha/SKILL.md",
        OmitCode.OVER_LIMIT,
        "514 files",
    ),
    (
        "two paths one file on a case-insensitive filesystem",
        lambda i: alpha(i)["resources"].extend(
            [
                {"uri": "skill://alpha/Notes.md", "digest": "sha256:" + "0" * 64, "size": 1},
                {"uri": "skill://alpha/notes.md", "digest": "sha256:" + "1" * 64, "size": 1},
            ]
        ),
        "skill://alpha/SKILL.md",
        OmitCode.PATH_COLLISION,
        "name the same file",
    ),
    (
        "a nested SKILL.md without a record of its own",
        lambda i: i.remove(record_of(i, "skill://outer/inner/SKILL.md")),
        "skill://outer/inner/SKILL.md",
        OmitCode.REFUSED,
        "not published in the catalog",
    ),
]


@pytest.mark.parametrize(
    ("change", "uri", "code", "reason"),
    [(c, u, k, r) for _, c, u, k, r in RULES],
    ids=[n for n, *_ in RULES],
)
def test_each_rule_leaves_the_skill_out_with_a_finding(
    change: Callable[[list[dict[str, Any]]], object], uri: str, code: OmitCode, reason: str
) -> None:
    omitted = left_out(edit(change))
    assert uri in omitted, omitted
    assert omitted[uri][0] is code
    assert reason in omitted[uri][1]


def test_a_name_that_breaks_the_naming_rules_in_a_folder_of_that_name() -> None:
    items = records(document())
    bad = json.loads(json.dumps(alpha(items)).replace("skill://alpha/", "skill://Bad_Name/"))
    bad["frontmatter"]["name"] = "Bad_Name"
    bad["resources"][0]["digest"] = "sha256:" + "2" * 64  # a SKILL.md of its own
    omitted = left_out(with_records([*items, {"entry": bad}]))
    assert omitted["skill://Bad_Name/SKILL.md"][0] is OmitCode.INVALID


def test_the_other_skills_of_a_document_are_served_whatever_one_record_says() -> None:
    state = CatalogChecker().state(edit(lambda i: rename(i, "gamma")))
    assert [s.uri for s in state.catalog.skills] == [
        "skill://outer/SKILL.md",
        "skill://outer/inner/SKILL.md",
        "skill://team/beta/SKILL.md",
    ]


def test_the_publishers_own_omissions_are_kept_and_others_ignored() -> None:
    files = {**TREE, "broken/SKILL.md": b"---\nname: [\n---\n"}
    doc = document(files)
    assert [item["uri"] for item in doc.omitted] == ["skill://broken/SKILL.md"]
    weird = [*doc.omitted, {"path": 1}, {"path": "p", "uri": None, "code": "nope", "reason": "r"}]
    state = CatalogChecker().state(
        CatalogDocument(generation=1, scheme="skill", skills=doc.skills, omitted=weird)
    )
    assert [(o.uri, o.code) for o in state.catalog.omitted] == [
        ("skill://broken/SKILL.md", OmitCode.FRONTMATTER)
    ]


def test_a_nested_skill_the_publisher_left_out_says_why_once() -> None:
    files = {**TREE, "outer/inner/SKILL.md": b"---\nname: inner\n---\n"}  # no description
    doc = document(files)
    omitted = left_out(doc)
    assert list(omitted) == ["skill://outer/inner/SKILL.md"]
    assert omitted["skill://outer/inner/SKILL.md"][0] is OmitCode.INVALID


def test_a_nested_skill_md_without_a_record_is_left_out_even_when_its_bytes_are_stated() -> None:
    # outer/alpha/SKILL.md holds the very bytes of alpha/SKILL.md, whose record states them
    files = {**TREE, "outer/alpha/SKILL.md": TREE["alpha/SKILL.md"]}
    items = records(document(files))
    items.remove(record_of(items, "skill://outer/alpha/SKILL.md"))
    omitted = left_out(with_records(items))
    assert omitted["skill://outer/alpha/SKILL.md"] == (
        OmitCode.REFUSED,
        "SKILL.md is not published in the catalog (the publisher left it out)",
    )


def test_names_that_need_escapes_are_read_from_their_canonical_uris() -> None:
    files = {**TREE, "alpha/with space/ümlaut %.md": b"x\n", "a:b/SKILL.md": skill_md("a:b")}
    doc = document(files)
    state = CatalogChecker().state(doc)
    assert [s.entry.to_json() for s in state.catalog.skills] == [
        s.entry.to_json() for s in MemorySource(files).scan().skills
    ]
    assert "skill://alpha/with%20space/%C3%BCmlaut%20%25.md" in {
        r["uri"] for r in record_of(records(doc), "skill://alpha/SKILL.md")["entry"]["resources"]
    }


# --- the checker: one replica's successive checks ------------------------------------------------


def fresh(doc: CatalogDocument) -> tuple[list[Any], list[Any]]:
    return summary(CatalogChecker().state(doc))


def summary(state: Any) -> tuple[list[Any], list[Any]]:
    return (
        [s.entry.to_json() for s in state.catalog.skills],
        sorted((o.uri, str(o.code)) for o in state.catalog.omitted),
    )


def test_a_nested_skill_whose_record_goes_is_left_out_as_a_fresh_replica_leaves_it() -> None:
    # generation 1 publishes outer/inner; generation 2 has its file but no record for it
    first = document()
    items = records(first)
    items.remove(record_of(items, "skill://outer/inner/SKILL.md"))
    second = with_records(items)
    checker = CatalogChecker()
    checker.state(first)
    assert summary(checker.state(second)) == fresh(second)
    assert ("skill://outer/inner/SKILL.md", "refused") in fresh(second)[1]


def test_a_skill_md_restated_with_another_frontmatter_is_judged_by_the_new_one() -> None:
    # the same SKILL.md bytes (digest), stated with another frontmatter by the next generation
    first = document()
    items = records(first)
    alpha(items)["frontmatter"]["description"] = "Restated"
    second = with_records(items)
    checker = CatalogChecker()
    checker.state(first)
    assert summary(checker.state(second)) == fresh(second)
    served = {entry["uri"]: entry for entry in fresh(second)[0]}
    assert served["skill://alpha/SKILL.md"]["frontmatter"]["description"] == "Restated"


def test_every_published_entry_is_the_record_exactly() -> None:
    # the check compares files; the frontmatter is the record's by construction: both hold
    items = records(document())
    alpha(items)["frontmatter"]["metadata"] = {"a": "1", "b": "two"}
    alpha(items)["frontmatter"]["x-custom"] = [1, {"nested": [None, True, 2.5]}]
    state = CatalogChecker().state(with_records(items))
    served = {skill.uri: skill.entry.to_json() for skill in state.catalog.skills}
    for item in items:
        assert served[item["entry"]["uri"]] == item["entry"]
