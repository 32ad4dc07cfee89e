"""Property tests of the server.

* Any JSON value handed to a connection gives no exception and either nothing (a notification or
  a response) or one valid JSON-RPC response carrying the request's id (ERR-08).
* Well-formed requests with arbitrary params, in both eras, likewise.
* Pagination walked to the end, with any page size, yields every skill exactly once, in order.
* Every catalog of random files publishes entries that pass full wire validation, whose every
  file reads back with the listed size and digest.
* Names and cursors round-trip; nothing else decodes.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_helpers import KEY, Client, meta, server, skill_md

from skills_core import SkillEntry, verify_bytes
from skills_core.messages import decode_read_result
from skills_core.server import Catalog, CursorCodec, MemorySource, SkillsServer
from skills_core.server.paths import decode_segment, encode_segment, split_uri
from skills_core.uri import SkillURI

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)
METHODS = [
    "server/discover",
    "initialize",
    "ping",
    "skills/list",
    "skills/get",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "resources/directory/read",
    "notifications/initialized",
    "notifications/cancelled",
    "skills/search",
]
URIS = st.sampled_from(
    [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing",
        "skill://pdf-processing/templates",
        "skill://pdf-processing/templates/invoice.md",
        "skill://pdf-processing/templates/",
        "skill://pdf-processing/%2e%2e/x",
        "skill://nope/SKILL.md",
    ]
) | st.text(max_size=40)
request_ids = (
    st.integers() | st.text(max_size=8) | st.none() | st.booleans() | st.floats(allow_nan=False)
)
params = st.fixed_dictionaries(
    {},
    optional={
        "uri": URIS | json_values,
        "cursor": st.text(max_size=30) | json_values,
        "protocolVersion": st.sampled_from(["2025-11-25", "2026-07-28", "1999-01-01"])
        | json_values,
        "_meta": st.just(meta()) | st.builds(meta, version=st.text(max_size=12)) | json_values,
    },
)
messages = st.fixed_dictionaries(
    {"method": st.sampled_from(METHODS) | st.text(max_size=20)},
    optional={
        "jsonrpc": st.just("2.0") | json_values,
        "id": request_ids,
        "params": params | json_values,
    },
)

SERVER = server(page_size=1)


def check_response(message: object, response: dict[str, Any] | None) -> None:
    json.dumps(response, allow_nan=False)  # plain JSON, always
    if response is None:
        assert isinstance(message, dict)
        assert "id" not in message or (
            "method" not in message and ("result" in message or "error" in message)
        )
        return
    assert response["jsonrpc"] == "2.0"
    assert ("result" in response) != ("error" in response)
    request_id = message.get("id") if isinstance(message, dict) else None
    valid_id = isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    )
    if valid_id and isinstance(message, dict) and isinstance(message.get("method"), str):
        assert response["id"] == request_id
    else:
        assert response["id"] is None or response["id"] == request_id
    if "error" in response:
        error = response["error"]
        assert isinstance(error["code"], int)
        assert isinstance(error["message"], str)
        assert "Traceback" not in error["message"]
    else:
        assert isinstance(response["result"], dict)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
# Requirement rows: ERR-08
def test_any_json_value_never_raises_ERR_08(message: object) -> None:
    check_response(message, SERVER.connection().handle(message))


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages, min_size=1, max_size=5))
# Requirement rows: ERR-08
def test_request_like_messages_never_raise_ERR_08(batch: list[dict[str, Any]]) -> None:
    connection = SERVER.connection()
    for message in batch:
        check_response(message, connection.handle(message))


@settings(max_examples=60, deadline=None)
@given(count=st.integers(0, 40), page_size=st.integers(1, 12), nested=st.booleans())
def test_pagination_yields_every_skill_exactly_once(
    count: int, page_size: int, nested: bool
) -> None:
    files = {f"g{i % 3}/s{i}/SKILL.md": skill_md(f"s{i}") for i in range(count)}
    if nested and count:
        files["g0/s0/inner/SKILL.md"] = skill_md("inner")
    client = Client(server(files, page_size=page_size))
    listed = [skill["uri"] for skill in client.walk("skills/list", "skills")]
    assert listed == sorted(set(listed))
    assert len(listed) == len(files)
    resources = [r["uri"] for r in client.walk("resources/list", "resources")]
    assert len(resources) == len(files)


names = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=12).filter(
    lambda n: n not in (".", "..")
)


@given(names, st.booleans())
def test_encoded_names_decode_back_exactly_once(name: str, first: bool) -> None:
    try:
        encoded = encode_segment(name, first=first)
    except ValueError:
        return  # a name no URI can carry (control, format, separator, '/', '\\')
    assert encoded.isascii()
    assert decode_segment(encoded, first=first) == name
    if first:
        assert ":" not in encoded
        assert "@" not in encoded


@given(st.text(max_size=30))
def test_only_canonical_segments_decode(segment: str) -> None:
    name = decode_segment(segment)
    if name is not None:
        assert encode_segment(name) == segment


tree_names = st.sampled_from(
    ["a", "b", "x y", "é", "docs", "SKILL.md", "skill.md", "A", "n-1", "te:am", "u@v"]
)
trees = st.dictionaries(
    st.lists(tree_names, min_size=1, max_size=4).map("/".join),
    st.binary(max_size=40),
    max_size=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees)
def test_random_trees_publish_valid_entries_whose_files_read_back(tree: dict[str, bytes]) -> None:
    files: dict[str, bytes] = {}
    for path, raw in tree.items():
        parts = path.split("/")
        if any("/".join(parts[:i]) in files for i in range(1, len(parts))):
            continue  # a file cannot also be a folder
        if any(other.startswith(path + "/") for other in files):
            continue
        data = raw
        if parts[-1] == "SKILL.md" and len(parts) > 1 and raw[:1] != b"!":
            data = skill_md(parts[-2])
        files[path] = data
    catalog = Catalog.from_files(files)
    client = Client(SkillsServer(MemorySource(files), cursor_key=KEY))
    for skill in catalog.skills:
        assert SkillEntry.from_json(skill.entry.to_json()) == skill.entry
        SkillURI.parse(skill.uri)
        assert not isinstance(skill.entry.resources, str)
        for resource in skill.entry.resources:
            result = client.call("resources/read", {"uri": resource.uri})
            verify_bytes(
                decode_read_result(result, uri=resource.uri),
                size=resource.size,
                digest=resource.digest,
            )
            assert split_uri(resource.uri) is not None
    assert len({s.uri for s in catalog.skills}) == len(catalog.skills)


@given(st.text(max_size=50), st.text(max_size=20))
def test_cursors_round_trip_and_are_bound(position: str, context: str) -> None:
    codec = CursorCodec(KEY)
    cursor = codec.encode(context, position)
    assert codec.decode(context, cursor) == position
    assert codec.decode(context + "x", cursor) is None


@given(st.text(max_size=60))
def test_random_strings_are_not_cursors(text: str) -> None:
    assert CursorCodec(KEY).decode("skills/list", text) is None


def test_segments_that_are_not_utf8_or_too_long_uris_do_not_decode() -> None:
    assert decode_segment("%FF") is None
    assert decode_segment("%C3") is None
    assert split_uri("skill://" + "a" * 9000) is None
    assert split_uri("skill://a/b") == ("skill", ["a", "b"])
