"""Wire shapes: CAP-01..CAP-03, CAP-07, CAP-10, SIL-11, SIL-13..SIL-16, SIL-29, VER-17, WG-01, WG-03."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from skills_core import (
    EntryOverLimitError,
    InvalidEntryError,
    RemoteProtocolError,
    VerificationError,
    VerificationKind,
)
from skills_core import spec_examples as ex
from skills_core.messages import (
    CacheHint,
    CacheScope,
    Era,
    Implementation,
    client_capabilities,
    complete_result,
    decode_read_result,
    encode_resource_contents,
    parse_cache_hint,
    parse_directory_result,
    parse_get_skill_result,
    parse_list_skills_result,
    parse_server_features,
    request_meta,
    server_capabilities,
    with_meta,
)

EXT = "io.modelcontextprotocol/skills"
INVOICE_URI = "skill://pdf-processing/templates/invoice.md"


# Requirement rows: CAP-01, CAP-03, CAP-07
def test_server_capabilities_CAP_01_CAP_03_CAP_07() -> None:
    assert server_capabilities(directory_read=True) == {
        "resources": {},
        "extensions": {EXT: {"directoryRead": True}},
    }
    assert server_capabilities(directory_read=False) == {"resources": {}, "extensions": {EXT: {}}}


@pytest.mark.parametrize(
    ("caps", "skills", "directory_read", "notices"),
    [
        ({"resources": {}, "extensions": {EXT: {}}}, True, False, 0),  # CAP-02, CAP-03
        ({"resources": {}, "extensions": {EXT: {"directoryRead": True}}}, True, True, 0),
        ({"resources": {}, "extensions": {EXT: {"directoryRead": False}}}, True, False, 0),
        (
            {"resources": {}, "extensions": {EXT: {"directoryRead": "true"}}},
            True,
            False,
            1,
        ),  # SIL-15
        ({"resources": {}, "extensions": {EXT: {"directoryRead": 1}}}, True, False, 1),
        ({"resources": {}, "extensions": {EXT: {"directoryRead": None}}}, True, False, 1),
        ({"extensions": {EXT: {"directoryRead": True}}}, False, False, 1),  # SIL-16
        ({"resources": {}, "extensions": {EXT: True}}, False, False, 1),  # CAP-01
        (
            {"resources": {}, "extensions": {"io.modelcontextprotocol.skills": {}}},
            False,
            False,
            0,
        ),  # FMT-15
        ({"resources": {}}, False, False, 0),
        ({"resources": {}, "extensions": []}, False, False, 0),
        ("nope", False, False, 1),
    ],
)
def test_parse_server_features(
    caps: object, skills: bool, directory_read: bool, notices: int
) -> None:
    features = parse_server_features(caps)
    assert features.skills is skills
    assert features.directory_read is directory_read
    assert len(features.notices) == notices


# Requirement rows: CAP-10, SIL-28
def test_request_meta_and_with_meta_CAP_10_SIL_28() -> None:
    info = Implementation(name="host", version="1.0")
    meta = request_meta(info)
    assert meta == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "host", "version": "1.0"},
    }
    assert client_capabilities(declare_skills=False) == {}
    assert request_meta(info, capabilities={})["io.modelcontextprotocol/clientCapabilities"] == {}
    assert with_meta({"uri": "u"}, meta) == {"uri": "u", "_meta": meta}
    assert with_meta(None, None) == {}
    assert with_meta({"uri": "u"}, None) == {"uri": "u"}


def test_complete_result_per_era() -> None:
    info = Implementation(name="srv", version="2")
    cache = CacheHint(ttl_ms=300000, scope=CacheScope.PUBLIC, present=True)
    modern = complete_result({"skills": []}, era=Era.MODERN, cache=cache, server_info=info)
    assert modern == {
        "resultType": "complete",
        "skills": [],
        "ttlMs": 300000,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "srv", "version": "2"}},
    }
    assert complete_result({"skills": []}, era=Era.LEGACY, cache=cache, server_info=info) == {
        "skills": []
    }


@pytest.mark.parametrize(
    ("result", "ttl", "scope", "present"),
    [
        ({"ttlMs": 300000, "cacheScope": "public"}, 300000, CacheScope.PUBLIC, True),
        ({}, 0, CacheScope.PRIVATE, False),  # SIL-14
        ({"ttlMs": -5, "cacheScope": "public"}, 0, CacheScope.PUBLIC, True),
        ({"ttlMs": 2.5, "cacheScope": "weird"}, 2, CacheScope.PRIVATE, True),
        ({"ttlMs": True, "cacheScope": "private"}, 0, CacheScope.PRIVATE, True),
        ({"ttlMs": float("inf")}, 0, CacheScope.PRIVATE, False),
    ],
)
# Requirement rows: SIL-14
def test_parse_cache_hint_SIL_14(
    result: dict[str, Any], ttl: int, scope: CacheScope, present: bool
) -> None:
    assert parse_cache_hint(result) == CacheHint(ttl_ms=ttl, scope=scope, present=present)


# --- skills/list and skills/get ------------------------------------------------------------


# Requirement rows: LIST-13
def test_parse_spec_listing_LIST_13() -> None:
    result = {
        "resultType": "complete",
        "skills": [ex.entry_json()],
        "ttlMs": 300000,
        "cacheScope": "public",
    }
    page = parse_list_skills_result(result)
    assert [e.uri for e in page.entries] == [ex.SKILL_MD_URI]
    assert page.rejected == ()
    assert page.next_cursor is None
    assert page.cache.ttl_ms == 300000


# Requirement rows: SIL-12, ENTRY-07
def test_invalid_entries_are_rejected_without_affecting_siblings_SIL_12_ENTRY_07() -> None:
    bad = ex.entry_json()
    bad["resources"] = "DYNAMIC"
    big = ex.entry_json()
    assert isinstance(big["resources"], list)
    big["resources"] = big["resources"] * 1  # same size
    over = {
        "uri": "skill://big/SKILL.md",
        "frontmatter": {"name": "big", "description": "d"},
        "resources": [
            {"uri": "skill://big/SKILL.md", "digest": "sha256:" + "1" * 64, "size": 2**24 + 1}
        ],
    }
    page = parse_list_skills_result({"skills": [bad, ex.entry_json(), over, 7], "nextCursor": "c"})
    assert [e.uri for e in page.entries] == [ex.SKILL_MD_URI]
    assert [(r.index, r.uri) for r in page.rejected] == [
        (0, ex.SKILL_MD_URI),
        (2, "skill://big/SKILL.md"),
        (3, None),
    ]
    assert isinstance(page.rejected[1].error, EntryOverLimitError)
    assert page.next_cursor == "c"
    assert not page.cache.present


@pytest.mark.parametrize(
    "result",
    [
        None,
        [],
        {"skills": {}},
        {"skills": [], "nextCursor": 5},
        {"skills": [], "resultType": "input_required"},
    ],
)
def test_malformed_listing_is_a_protocol_error(result: object) -> None:
    with pytest.raises(RemoteProtocolError):
        parse_list_skills_result(result)


# Requirement rows: SIL-13
def test_parse_get_result_and_uri_mismatch_SIL_13() -> None:
    entry, cache = parse_get_skill_result(
        {"resultType": "complete", "skill": ex.entry_json(), "ttlMs": 1, "cacheScope": "public"},
        requested_uri=ex.SKILL_MD_URI,
    )
    assert entry.uri == ex.SKILL_MD_URI
    assert cache.ttl_ms == 1
    with pytest.raises(InvalidEntryError) as info:
        parse_get_skill_result({"skill": ex.entry_json()}, requested_uri="skill://other/SKILL.md")
    assert [p.code for p in info.value.problems] == ["uri-mismatch"]
    with pytest.raises(InvalidEntryError):
        parse_get_skill_result({"skill": "x"}, requested_uri=ex.SKILL_MD_URI)
    with pytest.raises(RemoteProtocolError):
        parse_get_skill_result({}, requested_uri=ex.SKILL_MD_URI)


# --- resources/read ------------------------------------------------------------------------


def read_result(**item: Any) -> dict[str, Any]:
    return {
        "resultType": "complete",
        "contents": [{"uri": INVOICE_URI, **item}],
        "ttlMs": 0,
        "cacheScope": "private",
    }


# Requirement rows: SIL-11
def test_encode_contents_text_only_for_exact_utf8_SIL_11() -> None:
    assert encode_resource_contents(INVOICE_URI, ex.INVOICE, "text/markdown") == {
        "uri": INVOICE_URI,
        "mimeType": "text/markdown",
        "text": ex.INVOICE.decode(),
    }
    latin1 = "café".encode("latin-1")
    item = encode_resource_contents("skill://x/a", latin1, None)
    assert item == {"uri": "skill://x/a", "blob": base64.b64encode(latin1).decode()}
    bom = b"\xef\xbb\xbfhi"
    text_item = encode_resource_contents("skill://x/b", bom, None)
    assert isinstance(text_item["text"], str)
    assert text_item["text"].encode("utf-8") == bom


# Requirement rows: VER-17
def test_decode_text_and_blob_VER_17() -> None:
    assert (
        decode_read_result(read_result(text=ex.INVOICE.decode()), uri=INVOICE_URI, max_size=29)
        == ex.INVOICE
    )
    blob = "IyBJbnZvaWNlCgpDdXN0b21lcjoKQW1vdW50Ogo="
    assert decode_read_result(read_result(blob=blob), uri=INVOICE_URI, max_size=29) == ex.INVOICE
    assert (
        decode_read_result({"contents": [{"uri": INVOICE_URI, "text": ""}]}, uri=INVOICE_URI) == b""
    )


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"contents": "x"}, "not an array"),
        ({"contents": []}, "exactly one content item, got 0"),
        (
            {"contents": [{"uri": INVOICE_URI, "text": "a"}, {"uri": INVOICE_URI, "text": "b"}]},
            "got 2",
        ),
        ({"contents": ["x"]}, "not an object"),
        (
            {"contents": [{"uri": "skill://pdf-processing/SKILL.md", "text": "a"}]},
            "not the URI read",
        ),
        ({"contents": [{"text": "a"}]}, "not the URI read"),
        ({"contents": [{"uri": INVOICE_URI}]}, "exactly one of 'text' and 'blob'"),
        ({"contents": [{"uri": INVOICE_URI, "text": "a", "blob": "YQ=="}]}, "exactly one of"),
        ({"contents": [{"uri": INVOICE_URI, "text": 5}]}, "'text' is not a string"),
        ({"contents": [{"uri": INVOICE_URI, "blob": 5}]}, "'blob' is not a string"),
        ({"contents": [{"uri": INVOICE_URI, "blob": "a b"}]}, "not valid base64"),
        ({"contents": [{"uri": INVOICE_URI, "blob": "YQ"}]}, "not valid base64"),
        ({"contents": [{"uri": INVOICE_URI, "blob": "é"}]}, "not valid base64"),
        ({"contents": [{"uri": INVOICE_URI, "text": "\ud800"}]}, "lone surrogate"),
    ],
)
# Requirement rows: VER-17
def test_malformed_read_results_are_content_failures_VER_17(
    result: dict[str, Any], message: str
) -> None:
    with pytest.raises(VerificationError) as info:
        decode_read_result(result, uri=INVOICE_URI)
    assert info.value.kind is VerificationKind.CONTENT
    assert message in str(info.value)
    assert info.value.uri == INVOICE_URI


# Requirement rows: WG-03
def test_oversized_content_is_refused_before_decoding_WG_03() -> None:
    with pytest.raises(VerificationError) as info:
        decode_read_result(read_result(text="x" * 30), uri=INVOICE_URI, max_size=29)
    assert info.value.kind is VerificationKind.SIZE
    # 4 * ceil(29 / 3) = 40 base64 characters at most for 29 bytes
    with pytest.raises(VerificationError) as info:
        decode_read_result(read_result(blob="A" * 44), uri=INVOICE_URI, max_size=29)
    assert info.value.kind is VerificationKind.SIZE
    # within the bound it decodes, and the caller's size check decides
    assert len(decode_read_result(read_result(blob="A" * 40), uri=INVOICE_URI, max_size=29)) == 30


def test_read_result_must_be_complete() -> None:
    with pytest.raises(RemoteProtocolError):
        decode_read_result({"resultType": "input_required"}, uri=INVOICE_URI)
    with pytest.raises(RemoteProtocolError):
        decode_read_result("x", uri=INVOICE_URI)


# --- resources/directory/read --------------------------------------------------------------


# Requirement rows: DIR-06, SIL-29
def test_parse_spec_directory_result_DIR_06_SIL_29() -> None:
    result = {
        "resultType": "complete",
        "resources": [
            {
                "uri": "skill://pdf-processing/templates/invoice.md",
                "name": "invoice.md",
                "mimeType": "text/markdown",
            },
            {
                "uri": "skill://pdf-processing/templates/regional",
                "name": "regional",
                "mimeType": "inode/directory",
            },
            {"uri": "skill://pdf-processing/templates/credit-note.md", "name": "NOT THE NAME"},
        ],
        "nextCursor": "n",
    }
    children, dropped, cursor = parse_directory_result(
        result, directory_uri="skill://pdf-processing/templates"
    )
    assert [(c.name, c.is_directory, c.mime_type) for c in children] == [
        ("invoice.md", False, "text/markdown"),
        ("regional", True, "inode/directory"),
        ("credit-note.md", False, None),
    ]
    assert dropped == ()
    assert cursor == "n"


@pytest.mark.parametrize(
    "uri",
    [
        "skill://b/secret.md",
        "skill://pdf-processing/templates/../../b/x",
        "skill://pdf-processing/templates/x/y.md",
        "file:///etc/passwd",
        "skill://pdf-processing/templates%2f..%2fx",
        "skill://pdf-processing/templates/%2e%2e",
        "skill://pdf-processing/templates/",
        "skill://pdf-processing/templates/a?b",
        "skill://pdf-processing/templates/a\u202eb",
        "skill://pdf-processing/templatesX",
        None,
    ],
)
# Requirement rows: WG-01
def test_escaping_directory_children_are_dropped_WG_01(uri: object) -> None:
    result = {"resources": [{"uri": uri, "name": "x"}, {"uri": INVOICE_URI, "name": "invoice.md"}]}
    children, dropped, _ = parse_directory_result(
        result, directory_uri="skill://pdf-processing/templates"
    )
    assert [c.uri for c in children] == [INVOICE_URI]
    assert len(dropped) == 1


def test_duplicate_directory_children_are_dropped() -> None:
    result = {"resources": [{"uri": INVOICE_URI}, {"uri": INVOICE_URI}, "junk"]}
    children, dropped, _ = parse_directory_result(
        result, directory_uri="skill://pdf-processing/templates"
    )
    assert len(children) == 1
    assert len(dropped) == 2


@pytest.mark.parametrize("result", [{"resources": {}}, {"resources": [], "nextCursor": 1}, []])
def test_malformed_directory_results(result: object) -> None:
    with pytest.raises(RemoteProtocolError):
        parse_directory_result(result, directory_uri="skill://pdf-processing/templates")


def test_complete_result_without_cache_or_server_info() -> None:
    assert complete_result({"resources": []}, era=Era.MODERN) == {
        "resultType": "complete",
        "resources": [],
    }


def test_large_text_that_escapes_badly_goes_as_blob() -> None:
    newlines = b"\n" * (2 << 20)  # 2 MiB: 4 MiB as JSON text, 2.7 MiB as base64
    item = encode_resource_contents("skill://x/a", newlines, "text/plain")
    assert "blob" in item
    assert decode_read_result({"contents": [item]}, uri="skill://x/a") == newlines
    prose = b"plain words " * (200_000)  # 2.4 MB that needs no escaping stays text
    assert "text" in encode_resource_contents("skill://x/b", prose, "text/plain")
    separators = "\u2028".encode() * (1 << 19)
    assert "blob" in encode_resource_contents("skill://x/c", separators, None)
