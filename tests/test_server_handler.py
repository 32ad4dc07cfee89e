"""Sans-IO request handling, both eras.

Rows: CAP-01, CAP-03..CAP-05, CAP-07, CAP-09, CAP-10, FMT-07..FMT-09, FMT-11, FMT-13, FMT-14,
LIST-01..LIST-04, LIST-07..LIST-09, LIST-11, GET-01, GET-03..GET-09, DIR-01..DIR-10, ERR-01..ERR-08,
SIL-01, SIL-05, SIL-08, SIL-11, SIL-28, SIL-30, SIL-31, WG-14; the base protocol's ``_meta`` rules,
``server/discover``, ``initialize``, ``ping``, notifications and pagination.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import pytest
from server_helpers import (
    EXT,
    KEY,
    MODERN,
    Client,
    Generated,
    answer,
    legacy_request,
    meta,
    request,
    server,
    skill_md,
    spec_files,
)

from skills_core import SkillEntry
from skills_core import spec_examples as ex
from skills_core.jsonrpc import ErrorObject
from skills_core.messages import (
    CacheHint,
    CacheScope,
    Implementation,
    decode_read_result,
    parse_directory_result,
    parse_get_skill_result,
    parse_list_skills_result,
    parse_server_features,
)
from skills_core.server import (
    Catalog,
    MemorySource,
    OmittedSkill,
    PublishedSkill,
    ServerConnection,
    ServerOptions,
    SkillsServer,
    mime_type_for,
)
from skills_core.spec import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION

SKILL_URI = ex.SKILL_MD_URI
TEMPLATES = "skill://pdf-processing/templates"


def many(count: int) -> dict[str, bytes]:
    return {f"s{i:05d}/SKILL.md": skill_md(f"s{i:05d}") for i in range(count)}


# --- capabilities and discovery: CAP-01, CAP-03, CAP-05, CAP-07 ---------------------------------


@pytest.mark.parametrize(
    ("directory_read", "settings"), [(True, {"directoryRead": True}), (False, {})]
)
# Requirement rows: CAP-01, CAP-02, CAP-03, CAP-07, FMT-15
def test_discover_declares_the_extension_and_resources_CAP_01_CAP_02_CAP_03_CAP_07_FMT_15(
    directory_read: bool, settings: dict[str, Any]
) -> None:
    srv = server(directory_read=directory_read, instructions="Use skills.")
    result = Client(srv).call("server/discover")
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == [MODERN]
    resources = {"listChanged": True, "subscribe": True}  # PUSH-01
    assert result["capabilities"] == {"resources": resources, "extensions": {EXT: settings}}
    assert result["instructions"] == "Use skills."
    assert result["_meta"] == {
        "io.modelcontextprotocol/serverInfo": {
            "name": "skills-core",
            "version": srv.options.server_info.version,
        }
    }
    assert result["ttlMs"] == 300_000
    assert result["cacheScope"] == "public"
    features = parse_server_features(result["capabilities"])
    assert features.skills
    assert features.directory_read is directory_read
    assert srv.capabilities() == result["capabilities"]


def test_discover_without_instructions_and_with_custom_cache_settings() -> None:
    srv = server(
        ttl_ms=0,
        cache_scope=CacheScope.PRIVATE,
        server_info=Implementation(name="docs", version="2"),
    )
    result = Client(srv).call("server/discover")
    assert "instructions" not in result
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "docs", "version": "2"}


def test_no_discover_needed_before_other_requests() -> None:
    assert Client(server()).call("skills/list")["skills"][0]["uri"] == SKILL_URI


# --- modern request _meta: CAP-10, SIL-28, CAP-09 -----------------------------------------------


# Requirement rows: CAP-10
def test_missing_meta_is_invalid_params_CAP_10() -> None:
    connection = server().connection()
    params: dict[str, Any]
    for params in ({}, {"_meta": {}}, {"_meta": "x"}, {"_meta": {"progressToken": 1}}):
        response = answer(
            connection, {"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": params}
        )
        assert response is not None
        assert response["error"]["code"] == -32602
        assert "io.modelcontextprotocol/protocolVersion" in response["error"]["message"]
    response = answer(connection, {"jsonrpc": "2.0", "id": 2, "method": "skills/list"})
    assert response is not None
    assert response["error"]["code"] == -32602


# Requirement rows: CAP-10
def test_missing_client_capabilities_is_invalid_params_CAP_10() -> None:
    connection = server().connection()
    caps: object
    for caps in (None, "x", []):
        m: dict[str, object] = {META_PROTOCOL_VERSION: MODERN}
        if caps is not None:
            m[META_CLIENT_CAPABILITIES] = caps
        response = answer(
            connection, {"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {"_meta": m}}
        )
        assert response is not None
        assert response["error"]["code"] == -32602
        assert META_CLIENT_CAPABILITIES in response["error"]["message"]


def test_non_string_protocol_version_is_invalid_params() -> None:
    response = answer(
        server().connection(),
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "skills/list",
            "params": {"_meta": {META_PROTOCOL_VERSION: 20260728, META_CLIENT_CAPABILITIES: {}}},
        },
    )
    assert response is not None
    assert response["error"]["code"] == -32602


@pytest.mark.parametrize("version", ["2025-11-25", "2027-01-01", ""])
def test_unsupported_version_is_32022_with_supported_list(version: str) -> None:
    response = answer(
        server().connection(),
        {
            "jsonrpc": "2.0",
            "id": "a",
            "method": "skills/list",
            "params": {"_meta": meta(version)},
        },
    )
    assert response == {
        "jsonrpc": "2.0",
        "id": "a",
        "error": {
            "code": -32022,
            "message": f"Unsupported protocol version: {version}",
            "data": {"supported": [MODERN], "requested": version},
        },
    }


# Requirement rows: SIL-28, CAP-09
def test_no_client_declaration_of_the_extension_is_required_SIL_28_CAP_09() -> None:
    connection = server().connection()
    capabilities: dict[str, Any]
    for capabilities in ({}, {"extensions": {}}, {"extensions": {"other/ext": {}}}):
        params = {"uri": SKILL_URI, "_meta": meta(capabilities=capabilities)}
        for method in ("resources/read", "skills/get", "skills/list"):
            response = answer(
                connection, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            )
            assert response is not None
            assert "result" in response, response


def test_string_and_integer_ids_are_echoed() -> None:
    connection = server().connection()
    for request_id in (0, -5, 2**60, "", "abc"):
        response = answer(connection, request("ping", request_id=request_id))
        assert response is not None
        assert response["id"] == request_id


# --- legacy era ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("asked", "answered"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ],
)
def test_initialize_negotiates_a_legacy_version(asked: str, answered: str) -> None:
    srv = server(instructions="hi")
    connection = srv.connection()
    response = answer(
        connection,
        legacy_request(
            "initialize",
            {
                "protocolVersion": asked,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        ),
    )
    assert response == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "protocolVersion": answered,
            "capabilities": {
                "resources": {"listChanged": True, "subscribe": True},
                "extensions": {EXT: {"directoryRead": True}},
            },
            "serverInfo": srv.options.server_info.to_json(),
            "instructions": "hi",
        },
    }
    assert connection.legacy
    assert connection.legacy_version == answered


def test_initialize_needs_a_protocol_version() -> None:
    connection = server().connection()
    response = answer(connection, legacy_request("initialize", {"capabilities": {}}))
    assert response is not None
    assert response["error"]["code"] == -32602
    assert not connection.legacy


def test_legacy_session_results_have_the_legacy_shape() -> None:
    client = Client(server(), legacy=True)
    assert client.call("ping") == {}
    listing = client.call("skills/list")
    assert listing == {"skills": [ex.entry_json()]}
    got = client.call("skills/get", {"uri": SKILL_URI})
    assert got == {"skill": ex.entry_json()}
    read = client.call("resources/read", {"uri": SKILL_URI})
    assert read == {
        "contents": [{"uri": SKILL_URI, "mimeType": "text/markdown", "text": ex.SKILL_MD.decode()}]
    }
    directory = client.call("resources/directory/read", {"uri": TEMPLATES})
    assert set(directory) == {"resources"}
    assert set(client.call("resources/list")) == {"resources"}
    assert client.call("resources/templates/list") == {"resourceTemplates": []}


def test_legacy_requests_without_params_are_accepted() -> None:
    connection = server().connection()
    answer(connection, legacy_request("initialize", {"protocolVersion": "2025-11-25"}))
    response = answer(connection, {"jsonrpc": "2.0", "id": 7, "method": "skills/list"})
    assert response is not None
    assert response["result"]["skills"][0]["uri"] == SKILL_URI


def test_modern_request_on_a_legacy_connection_is_served_modern() -> None:
    client = Client(server(), legacy=True)
    response = answer(client.connection, request("skills/list"))
    assert response is not None
    assert response["result"]["resultType"] == "complete"
    assert response["result"]["ttlMs"] == 300_000


def test_discover_on_a_legacy_connection_needs_modern_meta() -> None:
    client = Client(server(), legacy=True)
    assert client.error("server/discover")["code"] == -32601
    response = answer(client.connection, request("server/discover"))
    assert response is not None
    assert "result" in response


def test_legacy_semantics_are_per_connection() -> None:
    srv = server()
    Client(srv, legacy=True)
    response = answer(srv.connection(), {"jsonrpc": "2.0", "id": 1, "method": "skills/list"})
    assert response is not None
    assert response["error"]["code"] == -32602


def test_server_tolerates_being_started_twice() -> None:
    for _ in range(2):
        srv = server()
        assert Client(srv).call("server/discover")["supportedVersions"] == [MODERN]


# --- notifications and envelope errors ----------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": None}},
        {"jsonrpc": "2.0", "method": "notifications/whatever", "params": [1]},
    ],
)
def test_notifications_get_no_answer(message: dict[str, Any]) -> None:
    assert answer(server().connection(), message) is None


@pytest.mark.parametrize(
    ("message", "reply_id"),
    [
        ([], None),
        ("x", None),
        (None, None),
        ({}, None),
        ({"jsonrpc": "2.0", "id": 3}, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": 5}, 3),
        ({"jsonrpc": "1.0", "id": 3, "method": "ping"}, 3),
        ({"id": 3, "method": "ping"}, 3),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": "x"}, 4),
        ({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": None}, 4),
        # Not a valid Request object, so not a notification either (JSON-RPC §5: id null).
        ({"jsonrpc": "1.0", "method": "notifications/initialized"}, None),
        # A server sends no requests: a response on its own is refused, as an HTTP body is.
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, None),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}}, None),
    ],
)
def test_invalid_requests_are_32600(message: object, reply_id: object) -> None:
    response = answer(server().connection(), message)
    assert response is not None
    assert response["id"] == reply_id
    assert response["error"]["code"] == -32600


def test_positional_params_are_invalid_params() -> None:
    response = answer(
        server().connection(), {"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": [1]}
    )
    assert response is not None
    assert response["error"]["code"] == -32602


@pytest.mark.parametrize(
    "method",
    [
        "skills/search",
        "skills/",
        "resource/directory/read",
        "resources/subscribe",
        "tools/list",
        "logging/setLevel",
        "x" * 1000,
    ],
)
# Requirement rows: FMT-13, FMT-14
def test_unknown_methods_are_32601_FMT_13_FMT_14(method: str) -> None:
    error = Client(server()).error(method)
    assert error["code"] == -32601
    assert len(error["message"]) < 400


def test_ping_modern() -> None:
    result = Client(server()).call("ping")
    assert result["resultType"] == "complete"
    assert "ttlMs" not in result


# --- skills/list: LIST-01..LIST-04, LIST-07..LIST-09, LIST-11, CAP-04 ----------------------------


# Requirement rows: LIST-01, LIST-03, LIST-09, CAP-04
def test_skills_list_matches_the_spec_example_LIST_01_LIST_03_LIST_09_CAP_04() -> None:
    result = Client(server()).call("skills/list", {})
    assert result["skills"] == [ex.entry_json()]
    assert result["resultType"] == "complete"
    assert result["ttlMs"] == 300_000
    assert result["cacheScope"] == "public"
    assert "nextCursor" not in result
    page = parse_list_skills_result(result)
    assert page.rejected == ()
    assert page.entries == (SkillEntry.from_json(ex.entry_json()),)


# Requirement rows: LIST-04
def test_empty_listing_is_valid_LIST_04() -> None:
    result = Client(server({})).call("skills/list")
    assert result["skills"] == []
    assert result["resultType"] == "complete"


@pytest.mark.parametrize("page_size", [1, 2, 3, 7, 100])
# Requirement rows: LIST-02, LIST-07
def test_pagination_walks_every_skill_exactly_once_LIST_02_LIST_07(page_size: int) -> None:
    files = many(23) | {"s00005/sub/SKILL.md": skill_md("sub")}
    client = Client(server(files, page_size=page_size))
    skills = client.walk("skills/list", "skills")
    listed = [s["uri"] for s in skills]
    assert listed == sorted(listed)
    assert len(listed) == len(set(listed)) == 24
    first = client.call("skills/list")
    assert len(first["skills"]) == min(page_size, 24)
    assert ("nextCursor" in first) is (page_size < 24)


# Requirement rows: LIST-08
def test_entries_are_never_split_across_pages_LIST_08() -> None:
    files = {"big/SKILL.md": skill_md("big")} | {f"big/f{i}": b"" for i in range(300)} | many(3)
    client = Client(server(files, page_size=1))
    for skill in client.walk("skills/list", "skills"):
        entry = SkillEntry.from_json(skill)
        if entry.name == "big":
            assert len(entry.resources) == 301


def test_cursors_cannot_be_forged_and_are_bound_to_the_method() -> None:
    client = Client(server(many(5), page_size=2))
    cursor = client.call("skills/list")["nextCursor"]
    assert (
        client.call("skills/list", {"cursor": cursor})["skills"][0]["uri"]
        == "skill://s00002/SKILL.md"
    )
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    forged_position = (
        base64.urlsafe_b64encode(raw[:16] + b"skill://s00003/SKILL.md").rstrip(b"=").decode()
    )
    flipped = cursor[:-1] + ("A" if cursor[-1] != "A" else "B")
    for bad in [
        forged_position,
        flipped,
        "",
        "!!!",
        "abc",
        cursor + "=",
        cursor + "AA",
        "é" + cursor,
        5,
        [cursor],
        {"c": 1},
        "x" * 50_000,
    ]:
        error = client.error("skills/list", {"cursor": bad})
        assert error["code"] == -32602
        assert error["message"] == "Invalid cursor"
    assert client.error("resources/list", {"cursor": cursor})["code"] == -32602
    other_key = Client(
        SkillsServer(
            MemorySource(many(5)), cursor_key=b"k" * 32, options=ServerOptions(page_size=2)
        )
    )
    assert other_key.error("skills/list", {"cursor": cursor})["code"] == -32602


def test_null_cursor_means_the_first_page() -> None:
    client = Client(server(many(3), page_size=2))
    assert len(client.call("skills/list", {"cursor": None})["skills"]) == 2


def test_cursor_survives_a_refresh_as_a_keyset_position() -> None:
    source = MemorySource(many(4))
    srv = server(source, page_size=2)
    client = Client(srv)
    cursor = client.call("skills/list")["nextCursor"]
    source.write("s00000a/SKILL.md", skill_md("s00000a"))  # sorts before the cursor: not repeated
    source.write("s00003a/SKILL.md", skill_md("s00003a"))
    srv.refresh()
    rest = client.walk("skills/list", "skills", {"cursor": cursor})
    assert [s["frontmatter"]["name"] for s in rest] == ["s00002", "s00003", "s00003a"]


# Requirement rows: LIST-11
def test_listing_serves_every_scheme_LIST_11() -> None:
    source = MemorySource(
        spec_files(),
        dynamic=[
            Generated("github://owner/repo/refunds/SKILL.md", {"SKILL.md": skill_md("refunds")})
        ],
    )
    listed = [s["uri"] for s in Client(server(source)).call("skills/list")["skills"]]
    assert listed == ["github://owner/repo/refunds/SKILL.md", SKILL_URI]


# --- skills/get: GET-01, GET-03..GET-09, ERR-01, ERR-06, SIL-31 ----------------------------------


# Requirement rows: GET-01, GET-04, GET-05, GET-09
def test_skills_get_returns_the_entry_GET_01_GET_04_GET_05_GET_09() -> None:
    result = Client(server()).call("skills/get", {"uri": SKILL_URI})
    assert result["skill"] == ex.entry_json()
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int)
    assert result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert "nextCursor" not in result
    _, cache = parse_get_skill_result(result, requested_uri=SKILL_URI)
    assert cache.present


# Requirement rows: GET-06
def test_get_entry_equals_the_list_entry_GET_06() -> None:
    client = Client(server(many(3) | {"s00001/x/y.md": b"y"}))
    for listed in client.call("skills/list")["skills"]:
        assert client.call("skills/get", {"uri": listed["uri"]})["skill"] == listed


# Requirement rows: GET-03
def test_unlisted_skill_is_still_served_by_get_GET_03() -> None:
    hidden = Generated(
        "skill://internal/hidden/SKILL.md", {"SKILL.md": skill_md("hidden")}, listed=False
    )
    client = Client(server(MemorySource(spec_files(), dynamic=[hidden])))
    assert [s["uri"] for s in client.call("skills/list")["skills"]] == [SKILL_URI]
    assert client.call("skills/get", {"uri": hidden.uri})["skill"]["resources"] == "dynamic"
    assert [s["uri"] for s in client.call("skills/list")["skills"]] == [SKILL_URI]
    assert hidden.uri in [r["uri"] for r in client.call("resources/list")["resources"]]


# Requirement rows: GET-08, ENTRY-15
def test_dynamic_skill_is_dynamic_in_get_and_list_GET_08_ENTRY_15() -> None:
    daily = Generated(
        "skill://reports/daily/SKILL.md",
        {"SKILL.md": skill_md("daily", "Live data"), "data/today.csv": b"a,b\n"},
    )
    client = Client(server(MemorySource(dynamic=[daily])))
    (listed,) = client.call("skills/list")["skills"]
    assert listed["resources"] == "dynamic"
    assert client.call("skills/get", {"uri": daily.uri})["skill"] == listed
    read = client.call("resources/read", {"uri": "skill://reports/daily/data/today.csv"})
    assert read["contents"] == [
        {"uri": "skill://reports/daily/data/today.csv", "mimeType": "text/csv", "text": "a,b\n"}
    ]
    directory = client.call("resources/directory/read", {"uri": "skill://reports/daily"})
    assert [(r["name"], r["mimeType"]) for r in directory["resources"]] == [
        ("daily", "text/markdown"),
        ("data", "inode/directory"),
    ]
    assert directory["resources"][0]["description"] == "Live data"
    assert (
        client.error("resources/directory/read", {"uri": "skill://reports/daily/nope"})["code"]
        == -32602
    )
    daily.files["SKILL.md"] = skill_md("daily", "Changed")
    assert (
        client.call("skills/get", {"uri": daily.uri})["skill"]["frontmatter"]["description"]
        == "Changed"
    )
    del daily.files["SKILL.md"]
    assert client.error("skills/get", {"uri": daily.uri})["code"] == -32602


# Requirement rows: ERR-01
def test_unknown_skill_is_invalid_params_with_the_spec_message_ERR_01() -> None:
    error = Client(server()).error(
        "skills/get", {"uri": "skill://acme/billing/chargebacks/SKILL.md"}
    )
    assert error == {
        "code": -32602,
        "message": "No skill is served at skill://acme/billing/chargebacks/SKILL.md",
        "data": {"uri": "skill://acme/billing/chargebacks/SKILL.md"},
    }


@pytest.mark.parametrize(
    "uri",
    [
        "skill://pdf-processing",
        "skill://pdf-processing/",
        "skill://pdf-processing/templates/invoice.md",
        "skill://pdf-processing/skill.md",
        "skill://pdf-processing/Skill.md",
        "skill:///SKILL.md",
        "https://example.com/SKILL.md",
        "not a uri",
    ],
)
# Requirement rows: ERR-01, ERR-06, SIL-05, SIL-31
def test_get_of_a_non_skill_md_uri_is_invalid_params_ERR_01_ERR_06_SIL_05_SIL_31(uri: str) -> None:
    error = Client(server()).error("skills/get", {"uri": uri})
    assert error["code"] == -32602
    assert uri in error["message"]
    assert error["data"] == {"uri": uri}


# Requirement rows: SIL-31
def test_get_of_a_nested_skill_md_that_is_not_published_SIL_31() -> None:
    files = spec_files() | {"pdf-processing/sub/SKILL.md": skill_md("wrong-name")}
    client = Client(server(files))
    error = client.error("skills/get", {"uri": "skill://pdf-processing/sub/SKILL.md"})
    assert error["code"] == -32602
    assert error["message"].startswith(
        "No skill is served at skill://pdf-processing/sub/SKILL.md ("
    )
    assert "differs from the folder name" in error["message"]
    read = client.call("resources/read", {"uri": "skill://pdf-processing/sub/SKILL.md"})
    assert read["contents"][0]["text"].startswith("---\nname: wrong-name")


@pytest.mark.parametrize("bad", [None, 5, ["x"], {"u": 1}])
def test_get_needs_a_string_uri(bad: object) -> None:
    params: dict[str, Any] = {} if bad is None else {"uri": bad}
    error = Client(server()).error("skills/get", params)
    assert error["code"] == -32602
    assert error["message"] == "params.uri must be a string"


def test_get_sees_the_skill_as_it_is_now() -> None:
    source = MemorySource(spec_files())
    srv = server(source)
    client = Client(srv)
    source.write("pdf-processing/templates/credit-note.md", ex.CREDIT_NOTE)
    got = SkillEntry.from_json(client.call("skills/get", {"uri": SKILL_URI})["skill"])
    assert (
        got.resource_set == SkillEntry.from_json(ex.entry_json(with_credit_note=True)).resource_set
    )
    assert srv.catalog.skills[0].entry == got  # the catalog took the re-checked entry
    assert client.call("skills/list")["skills"][0] == got.to_json()
    source.delete("pdf-processing")
    assert client.error("skills/get", {"uri": SKILL_URI})["code"] == -32602
    assert client.call("skills/list")["skills"] == []
    assert srv.catalog.skills == ()


def test_get_finds_a_skill_added_since_the_scan_and_lists_it_after() -> None:
    source = MemorySource(spec_files())
    srv = server(source)
    client = Client(srv)
    source.write("new/SKILL.md", skill_md("new"))
    assert (
        client.call("skills/get", {"uri": "skill://new/SKILL.md"})["skill"]["uri"]
        == "skill://new/SKILL.md"
    )
    assert [s["uri"] for s in client.call("skills/list")["skills"]] == [
        "skill://new/SKILL.md",
        SKILL_URI,
    ]
    assert srv.catalog.get("skill://new/SKILL.md") is not None


def test_get_of_a_skill_that_became_invalid_records_the_omission() -> None:
    source = MemorySource(spec_files())
    srv = server(source)
    source.write("pdf-processing/SKILL.md", b"no frontmatter\n")
    error = Client(srv).error("skills/get", {"uri": SKILL_URI})
    assert "(SKILL.md frontmatter" in error["message"]
    assert [o.uri for o in srv.catalog.omitted] == [SKILL_URI]
    source.write("pdf-processing/SKILL.md", ex.SKILL_MD)
    Client(srv).call("skills/get", {"uri": SKILL_URI})
    assert srv.catalog.omitted == ()


def test_refresh_rescans() -> None:
    source = MemorySource(spec_files())
    srv = server(source)
    source.write("other/SKILL.md", skill_md("other"))
    assert len(srv.catalog.skills) == 1
    assert len(srv.refresh().skills) == 2
    assert len(srv.catalog.skills) == 2


# --- resources/read: FMT-07, FMT-11, SIL-11, ERR-03, SIL-30, CAP-09 ------------------------------


# Requirement rows: FMT-07
def test_read_returns_exact_text_with_mime_FMT_07() -> None:
    client = Client(server())
    result = client.call("resources/read", {"uri": SKILL_URI})
    assert result["contents"] == [
        {"uri": SKILL_URI, "mimeType": "text/markdown", "text": ex.SKILL_MD.decode()}
    ]
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == (
        "complete",
        300_000,
        "public",
    )
    assert decode_read_result(result, uri=SKILL_URI, max_size=151) == ex.SKILL_MD


@pytest.mark.parametrize(
    "data",
    [
        "café €".encode("latin-1", errors="replace"),
        b"\xff\xfe\x00",
        b"\xed\xa0\x80",
        b"\xc0\xaf",
        b"\x00\x01binary",
    ],
    ids=["latin1", "bom16", "surrogate", "overlong", "nul-ok"],
)
# Requirement rows: SIL-11
def test_non_utf8_bytes_are_sent_as_blob_SIL_11(data: bytes) -> None:
    files = spec_files() | {"pdf-processing/data.bin": data}
    result = Client(server(files)).call(
        "resources/read", {"uri": "skill://pdf-processing/data.bin"}
    )
    (item,) = result["contents"]
    if "text" in item:
        assert item["text"].encode() == data
    else:
        assert base64.b64decode(item["blob"]) == data
    assert decode_read_result(result, uri="skill://pdf-processing/data.bin") == data
    assert item["mimeType"] == "application/octet-stream"


# Requirement rows: SIL-11
def test_latin1_file_is_a_blob_whose_digest_covers_the_raw_bytes_SIL_11() -> None:
    data = "Größe: 5 €\n".encode("cp1252")
    files = spec_files() | {"pdf-processing/notes.txt": data}
    client = Client(server(files))
    result = client.call("resources/read", {"uri": "skill://pdf-processing/notes.txt"})
    assert "blob" in result["contents"][0]
    entry = SkillEntry.from_json(client.call("skills/get", {"uri": SKILL_URI})["skill"])
    resource = entry.resource("skill://pdf-processing/notes.txt")
    assert resource is not None
    from skills_core import verify_bytes

    verify_bytes(
        decode_read_result(result, uri=resource.uri), size=resource.size, digest=resource.digest
    )


# Requirement rows: FMT-11
def test_read_mime_types_FMT_11() -> None:
    files = spec_files() | {
        "pdf-processing/scripts/extract.py": b"print()\n",
        "pdf-processing/a.JSON": b"{}",
        "pdf-processing/LICENSE": b"MIT\n",
        "pdf-processing/x.unknownext": b"?",
        "pdf-processing/.hidden": b"?",
    }
    client = Client(server(files))
    mimes = {
        uri.rpartition("/")[2]: client.call("resources/read", {"uri": uri})["contents"][0][
            "mimeType"
        ]
        for uri in [
            f"skill://pdf-processing/{p}"
            for p in (
                "scripts/extract.py",
                "a.JSON",
                "LICENSE",
                "x.unknownext",
                ".hidden",
                "templates/invoice.md",
            )
        ]
    }
    assert mimes == {
        "extract.py": "text/x-python",
        "a.JSON": "application/json",
        "LICENSE": "text/plain",
        "x.unknownext": "application/octet-stream",
        ".hidden": "application/octet-stream",
        "invoice.md": "text/markdown",
    }
    assert "inode/directory" not in mimes.values()
    assert mime_type_for("SKILL.md") == "text/markdown"
    assert mime_type_for("noext") == "application/octet-stream"


@pytest.mark.parametrize(
    "uri",
    [
        "skill://pdf-processing/templates/nope.md",
        "skill://pdf-processing/../../etc/passwd",
        "skill://pdf-processing/%2e%2e/%2e%2e/etc/passwd",
        "skill://pdf-processing/%2E%2E/SKILL.md",
        "skill://pdf-processing/templates%2f..%2f..%2fSKILL.md",
        "skill://pdf-processing/templates%2Finvoice.md",
        "skill://pdf-processing/templates%5cinvoice.md",
        "skill://pdf-processing/./SKILL.md",
        "skill://pdf-processing//SKILL.md",
        "skill://pdf-processing/templates/invoice.md/",
        "skill://pdf-processing/templates/invoice.md?x=1",
        "skill://pdf-processing/templates/invoice.md#top",
        "skill://pdf-processing/templates/invoice%2Emd",
        "skill://pdf-processing/%74emplates/invoice.md",
        "skill://pdf-processing/templates/invoice.md%00",
        "skill://pdf%2Dprocessing/SKILL.md",
        "SKILL://pdf-processing/SKILL.md",
        "skill://PDF-processing/SKILL.md",
        "skill://pdf-processing\\SKILL.md",
        "file:///etc/passwd",
        "skill://other/SKILL.md",
        "",
        "skill://",
    ],
)
# Requirement rows: ERR-03, SIL-01
def test_unknown_and_traversal_uris_are_invalid_params_ERR_03_SIL_01(uri: str) -> None:
    error = Client(server()).error("resources/read", {"uri": uri})
    assert error["code"] == -32602
    assert error["data"] == {"uri": uri}


# Requirement rows: SIL-30
def test_read_of_a_directory_is_invalid_params_SIL_30() -> None:
    client = Client(server())
    for uri in (TEMPLATES, "skill://pdf-processing"):
        error = client.error("resources/read", {"uri": uri})
        assert error["code"] == -32602
        assert (
            error["message"]
            == f"{uri} is a directory resource; list it with resources/directory/read"
        )


def test_read_sees_files_as_they_are_now() -> None:
    source = MemorySource(spec_files())
    client = Client(server(source))
    source.write("pdf-processing/templates/invoice.md", b"changed")
    assert (
        client.call("resources/read", {"uri": "skill://pdf-processing/templates/invoice.md"})[
            "contents"
        ][0]["text"]
        == "changed"
    )
    source.delete("pdf-processing/templates/invoice.md")
    assert (
        client.error("resources/read", {"uri": "skill://pdf-processing/templates/invoice.md"})[
            "code"
        ]
        == -32602
    )


def test_files_of_omitted_skills_are_not_readable() -> None:
    files = spec_files() | {
        "broken/SKILL.md": b"# nothing\n",
        "broken/notes.md": b"secret",
        "loose.md": b"x",
    }
    client = Client(server(files))
    for uri in ("skill://broken/SKILL.md", "skill://broken/notes.md", "skill://loose.md"):
        assert client.error("resources/read", {"uri": uri})["code"] == -32602


def test_long_uris_are_cut_in_messages_but_kept_in_data() -> None:
    uri = "skill://pdf-processing/" + "a" * 5000
    error = Client(server()).error("resources/read", {"uri": uri})
    assert len(error["message"]) < 400
    assert error["data"] == {"uri": uri}


# --- resources/list: FMT-08, FMT-09, DIR-03, WG-14 ------------------------------------------------


# Requirement rows: FMT-08, FMT-09, WG-14
def test_resources_list_names_skill_md_by_its_frontmatter_FMT_08_FMT_09_WG_14() -> None:
    files = spec_files() | {"acme/billing/refunds/SKILL.md": skill_md("refunds", "Process refunds")}
    client = Client(server(files))
    result = client.call("resources/list")
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == (
        "complete",
        300_000,
        "public",
    )
    by_uri = {r["uri"]: r for r in result["resources"]}
    assert by_uri["skill://acme/billing/refunds/SKILL.md"] == {
        "uri": "skill://acme/billing/refunds/SKILL.md",
        "name": "refunds",
        "description": "Process refunds",
        "mimeType": "text/markdown",
        "annotations": {"audience": ["assistant"], "priority": 0.8},
        "size": len(skill_md("refunds", "Process refunds")),
    }
    assert by_uri["skill://pdf-processing/templates/invoice.md"] == {
        "uri": "skill://pdf-processing/templates/invoice.md",
        "name": "invoice.md",
        "mimeType": "text/markdown",
        "annotations": {"audience": ["assistant"], "priority": 0.3},
        "size": 29,
    }
    assert TEMPLATES not in by_uri  # DIR-03
    assert list(by_uri) == sorted(by_uri)


def test_resources_list_paginates_and_lists_nested_files_once() -> None:
    files = {
        "a/SKILL.md": skill_md("a"),
        "a/sub/SKILL.md": skill_md("sub"),
        "a/sub/x.md": b"x",
        "a/y.md": b"y",
    }
    for page_size in (1, 2, 100):
        resources = Client(server(files, page_size=page_size)).walk("resources/list", "resources")
        assert [r["uri"] for r in resources] == [
            "skill://a/SKILL.md",
            "skill://a/sub/SKILL.md",
            "skill://a/sub/x.md",
            "skill://a/y.md",
        ]
        assert resources[1]["name"] == "sub"


def test_resources_list_follows_catalog_changes() -> None:
    source = MemorySource(spec_files())
    client = Client(server(source))
    assert len(client.call("resources/list")["resources"]) == 3
    source.write("pdf-processing/templates/credit-note.md", ex.CREDIT_NOTE)
    client.call("skills/get", {"uri": SKILL_URI})
    assert len(client.call("resources/list")["resources"]) == 4


def test_templates_list_is_empty_and_refuses_cursors() -> None:
    client = Client(server())
    result = client.call("resources/templates/list")
    assert result["resourceTemplates"] == []
    assert result["ttlMs"] == 300_000
    assert client.error("resources/templates/list", {"cursor": "abc"})["code"] == -32602


# --- resources/directory/read: DIR-01..DIR-10, ERR-02, ERR-05, SIL-08 ----------------------------


# Requirement rows: DIR-02, DIR-04, DIR-05, DIR-06
def test_directory_read_of_the_spec_example_DIR_02_DIR_04_DIR_05_DIR_06() -> None:
    files = spec_files() | {"pdf-processing/templates/regional/eu.md": b"eu"}
    result = Client(server(files)).call("resources/directory/read", {"uri": TEMPLATES})
    assert result["resources"] == [
        {
            "uri": "skill://pdf-processing/templates/invoice.md",
            "name": "invoice.md",
            "mimeType": "text/markdown",
        },
        {
            "uri": "skill://pdf-processing/templates/purchase-order.md",
            "name": "purchase-order.md",
            "mimeType": "text/markdown",
        },
        {
            "uri": "skill://pdf-processing/templates/regional",
            "name": "regional",
            "mimeType": "inode/directory",
        },
    ]
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == (
        "complete",
        300_000,
        "public",
    )
    children, dropped, cursor = parse_directory_result(result, directory_uri=TEMPLATES)
    assert not any(r["uri"].endswith("/") for r in result["resources"])
    assert dropped == ()
    assert cursor is None
    assert [c.is_directory for c in children] == [False, False, True]


# Requirement rows: DIR-01, FMT-07
def test_directory_read_of_the_skill_root_DIR_01_FMT_07() -> None:
    result = Client(server()).call("resources/directory/read", {"uri": "skill://pdf-processing"})
    assert result["resources"] == [
        {
            "uri": SKILL_URI,
            "name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents",
            "mimeType": "text/markdown",
        },
        {"uri": TEMPLATES, "name": "templates", "mimeType": "inode/directory"},
    ]


# Requirement rows: DIR-08
def test_empty_directory_is_an_empty_list_DIR_08() -> None:
    source = MemorySource(spec_files())
    source.mkdir("pdf-processing/empty")
    result = Client(server(source)).call(
        "resources/directory/read", {"uri": "skill://pdf-processing/empty"}
    )
    assert result["resources"] == []
    assert "nextCursor" not in result


# Requirement rows: DIR-10
def test_every_directory_of_every_skill_is_readable_DIR_10() -> None:
    files = {
        "a/SKILL.md": skill_md("a"),
        "a/b/c/d.md": b"d",
        "a/sub/SKILL.md": skill_md("sub"),
        "a/sub/e/f.md": b"f",
    }
    client = Client(server(files))
    for uri in ("skill://a", "skill://a/b", "skill://a/b/c", "skill://a/sub", "skill://a/sub/e"):
        assert "resources" in client.call("resources/directory/read", {"uri": uri})


@pytest.mark.parametrize("page_size", [1, 2, 100])
# Requirement rows: DIR-09
def test_directory_read_paginates_DIR_09(page_size: int) -> None:
    files = spec_files() | {f"pdf-processing/templates/t{i}.md": b"t" for i in range(5)}
    client = Client(server(files, page_size=page_size))
    children = client.walk("resources/directory/read", "resources", {"uri": TEMPLATES})
    assert [c["name"] for c in children] == [
        "invoice.md",
        "purchase-order.md",
        "t0.md",
        "t1.md",
        "t2.md",
        "t3.md",
        "t4.md",
    ]


def test_directory_cursor_is_bound_to_the_directory() -> None:
    files = spec_files() | {f"pdf-processing/other/t{i}.md": b"t" for i in range(3)}
    client = Client(server(files, page_size=1))
    cursor = client.call("resources/directory/read", {"uri": TEMPLATES})["nextCursor"]
    error = client.error(
        "resources/directory/read", {"uri": "skill://pdf-processing/other", "cursor": cursor}
    )
    assert error["code"] == -32602
    assert client.error("skills/list", {"cursor": cursor})["code"] == -32602


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        (SKILL_URI, f"{SKILL_URI} is not a directory resource"),
        (
            "skill://pdf-processing/templates/invoice.md",
            "skill://pdf-processing/templates/invoice.md is not a directory resource",
        ),
        ("skill://nope", "skill://nope is not a directory resource"),
        ("skill://pdf-processing/nope", "skill://pdf-processing/nope is not a directory resource"),
        (
            "skill://pdf-processing/%2e%2e",
            "skill://pdf-processing/%2e%2e is not a directory resource",
        ),
        (
            TEMPLATES + "/",
            f"{TEMPLATES}/ is not a directory resource; directory URIs have no trailing slash",
        ),
        (
            "skill://pdf-processing/",
            "skill://pdf-processing/ is not a directory resource; directory URIs have no trailing slash",
        ),
    ],
)
# Requirement rows: ERR-02, SIL-08
def test_directory_read_errors_ERR_02_SIL_08(uri: str, message: str) -> None:
    error = Client(server()).error("resources/directory/read", {"uri": uri})
    assert error == {"code": -32602, "message": message, "data": {"uri": uri}}


# Requirement rows: ERR-05, CAP-05
def test_directory_read_is_unknown_when_not_declared_ERR_05_CAP_05() -> None:
    client = Client(server(directory_read=False))
    assert client.error("resources/directory/read", {"uri": TEMPLATES})["code"] == -32601
    assert Client(server(directory_read=True)).call("resources/directory/read", {"uri": TEMPLATES})


def test_prefix_folders_above_skills_are_not_directory_resources() -> None:
    client = Client(server({"acme/billing/refunds/SKILL.md": skill_md("refunds")}))
    assert (
        client.error("resources/directory/read", {"uri": "skill://acme/billing"})["code"] == -32602
    )


def test_directory_children_with_unnameable_names_are_not_listed() -> None:
    source = MemorySource(spec_files() | {"pdf-processing/templates/bad\x01.md": b"x"})
    names = [
        r["name"]
        for r in Client(server(source)).call("resources/directory/read", {"uri": TEMPLATES})[
            "resources"
        ]
    ]
    assert names == ["invoice.md", "purchase-order.md"]


# --- internal errors: ERR-04, ERR-08 --------------------------------------------------------------


class Exploding(Generated):
    def read(self, file_path: str) -> bytes | None:
        if file_path == "boom.md":
            raise OSError(5, "Input/output error", "/secret/server/path/boom.md")
        return super().read(file_path)

    def list_directory(self, dir_path: str) -> Sequence[tuple[str, bool]] | None:
        raise RuntimeError("/secret/server/path")


# Requirement rows: ERR-04, ERR-08
def test_internal_errors_are_32603_without_details_ERR_04_ERR_08() -> None:
    skill = Exploding("skill://x/y/SKILL.md", {"SKILL.md": skill_md("y")})
    client = Client(server(MemorySource(dynamic=[skill])))
    for method, uri in (
        ("resources/read", "skill://x/y/boom.md"),
        ("resources/directory/read", "skill://x/y"),
    ):
        response = client.send(method, {"uri": uri})
        assert response == {
            "jsonrpc": "2.0",
            "id": response["id"],
            "error": {"code": -32603, "message": "Internal error"},
        }


# Requirement rows: ERR-04
def test_a_failing_method_is_32603_and_notifications_never_reach_it_ERR_04(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def boom(*args: object) -> None:
        raise RuntimeError("/secret/path exploded")

    monkeypatch.setattr(SkillsServer, "_dispatch", boom)
    connection = server().connection()
    assert answer(connection, {"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert answer(connection, {"jsonrpc": "2.0", "id": 9, "method": "ping"}) == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32603, "message": "Internal error"},
    }
    assert connection.answer("ping", None) == ErrorObject(code=-32603, message="Internal error")


# --- configuration ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"page_size": 0},
        {"page_size": True},
        {"page_size": 1.5},
        {"ttl_ms": -1},
        {"ttl_ms": False},
        {"cache_scope": "world"},
        {"cache_scope": "public"},  # no coercion: a CacheScope member, not its value
        {"directory_read": 1},
        {"server_info": {"name": "x", "version": "1"}},
        {"instructions": 5},
    ],
)
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(
        ValueError, match=r"page_size|ttl_ms|cache_scope|directory_read|server_info|instructions"
    ):
        ServerOptions(**options)


@pytest.mark.parametrize(
    "settings",
    [
        {"cursor_key": b"short"},
        {"cursor_key": "text" * 10},
        {"cursor_key": KEY, "options": {"page_size": 5}},
    ],
)
def test_bad_server_settings_are_refused(settings: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"cursor_key|options"):
        SkillsServer(MemorySource(), **settings)


@pytest.mark.parametrize("version", ["2026-07-28", "", "1.0"])
def test_a_connection_cannot_start_in_an_unknown_legacy_version(version: str) -> None:
    srv = server()
    with pytest.raises(ValueError, match="legacy_version"):
        srv.connection(legacy_version=version)
    with pytest.raises(ValueError, match="legacy_version"):
        srv.answer("ping", None, legacy_version=version)


def test_from_files_and_accessors() -> None:
    options = ServerOptions(page_size=5, ttl_ms=10, directory_read=False)
    srv = SkillsServer.from_files(spec_files(), cursor_key=KEY, options=options)
    assert isinstance(srv.source, MemorySource)
    assert srv.options is options
    assert options.cache_hint == CacheHint(ttl_ms=10, scope=CacheScope.PUBLIC, present=True)
    assert isinstance(srv.catalog, Catalog)
    assert srv.catalog.skills[0].uri == SKILL_URI
    connection = srv.connection()
    assert isinstance(connection, ServerConnection)
    assert connection.server is srv
    assert (connection.legacy, connection.legacy_version) == (False, None)
    assert SkillsServer(MemorySource(), cursor_key=KEY).options == ServerOptions()


def test_the_catalog_reflects_rechecks_and_omissions() -> None:
    source = MemorySource(spec_files())
    srv = server(source)
    client = Client(srv)
    source.write("x/SKILL.md", b"bad")
    client.error("skills/get", {"uri": "skill://x/SKILL.md"})
    (left_out,) = srv.catalog.omitted
    assert isinstance(left_out, OmittedSkill)
    assert isinstance(srv.catalog.skills[0], PublishedSkill)
    client.error("skills/get", {"uri": "skill://never/SKILL.md"})
    assert len(srv.catalog.omitted) == 1


def test_meta_with_capabilities_but_no_version_names_only_the_version() -> None:
    response = answer(
        server().connection(),
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "skills/list",
            "params": {"_meta": {META_CLIENT_CAPABILITIES: {}}},
        },
    )
    assert response is not None
    message = response["error"]["message"]
    assert META_PROTOCOL_VERSION in message
    assert META_CLIENT_CAPABILITIES not in message


def test_unlisted_skill_changing_and_vanishing_stays_unlisted() -> None:
    hidden = Generated(
        "skill://internal/hidden/SKILL.md", {"SKILL.md": skill_md("hidden")}, listed=False
    )
    srv = server(MemorySource(dynamic=[hidden]))
    client = Client(srv)
    hidden.files["SKILL.md"] = skill_md("hidden", "changed")
    assert (
        client.call("skills/get", {"uri": hidden.uri})["skill"]["frontmatter"]["description"]
        == "changed"
    )
    assert client.call("skills/list")["skills"] == []
    del hidden.files["SKILL.md"]
    assert client.error("skills/get", {"uri": hidden.uri})["code"] == -32602
    assert srv.catalog.get(hidden.uri) is None


# Requirement rows: FMT-16
def test_no_skill_frontmatter_is_exposed_under_resource_meta_FMT_10_FMT_16() -> None:
    """We expose no frontmatter in ``_meta`` (FMT-10 is a MAY), so no key under any prefix."""
    files = spec_files() | {"x/SKILL.md": skill_md("x", extra="license: MIT\n")}
    client = Client(server(files))
    items = client.walk("resources/list", "resources")
    items += client.call("resources/directory/read", {"uri": "skill://x"})["resources"]
    items += client.call("resources/read", {"uri": "skill://x/SKILL.md"})["contents"]
    assert items
    assert all("_meta" not in item for item in items)


# Requirement rows: DIR-11
def test_directory_reads_under_another_scheme_DIR_11() -> None:
    skill = Generated(
        "github://owner/repo/refunds/SKILL.md", {"SKILL.md": skill_md("refunds"), "docs/a.md": b"a"}
    )
    client = Client(server(MemorySource(dynamic=[skill])))
    children = client.call("resources/directory/read", {"uri": "github://owner/repo/refunds/docs"})
    assert children["resources"] == [
        {
            "uri": "github://owner/repo/refunds/docs/a.md",
            "name": "a.md",
            "mimeType": "text/markdown",
        }
    ]


def test_resolution_cache_is_bounded_and_answers_stay_right() -> None:
    """The handler remembers URI resolutions, but never more than a fixed number of them."""
    from skills_core.server import _live

    server = SkillsServer.from_files(
        {"pdf-processing/" + path: data for path, data in ex.FILES.items()}, cursor_key=b"k" * 32
    )
    live = server._live
    for index in range(_live._RESOLVE_CACHE + 10):
        live.resolve(f"skill://pdf-processing/missing-{index}.md")
    assert len(live._resolved) <= _live._RESOLVE_CACHE
    found = live.resolve("skill://pdf-processing/templates/invoice.md")
    assert found is not None
    assert found[1] == "templates/invoice.md"
    assert live.resolve("skill://elsewhere/x.md") is None
