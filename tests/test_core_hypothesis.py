"""Property tests of the data core: references never escape, parsers raise only typed errors."""

from __future__ import annotations

import contextlib
import json
from typing import Any
from urllib.parse import unquote

from hypothesis import given, settings
from hypothesis import strategies as st

from skills_core import (
    InvalidEntryError,
    SkillEntry,
    SkillsError,
    URIError,
    parse_skill_uri,
    resolve_directory_reference,
    resolve_reference,
)
from skills_core import spec_examples as ex

BASES = [
    "skill://acme/billing/refunds/SKILL.md",
    "skill://git-workflow/SKILL.md",
    "github://owner/repo/skills/refunds/SKILL.md",
]

PIECES = st.sampled_from(
    [
        "..",
        ".",
        "/",
        "//",
        "a",
        "b.md",
        "SKILL.md",
        "%2e",
        "%2E",
        "%2f",
        "%5c",
        "%5C",
        "%00",
        "%",
        "%4",
        "%41",
        "%25",
        "\\",
        ":",
        "?",
        "#",
        "\x00",
        "\n",
        "é",
        " ",
        "\u202e",
        "C:",
        "file:",
        "skill:",
        "skill://acme/billing/refunds/",
        "skill://acme/billing/",
        "skill://",
        "refunds",
        "templates",
        "~",
        "@",
        "[",
        "]",
    ]
)
REFERENCES = st.one_of(
    st.lists(PIECES, max_size=12).map("".join),
    st.text(max_size=40),
    st.lists(st.sampled_from(["..", ".", "a", "b", "%2e%2e", ""]), max_size=8).map("/".join),
)


def assert_inside(root: str, resolved: str) -> None:
    """The resolved URI is a clean path strictly below the root, also after one decoding."""
    assert resolved.startswith(root + "/")
    rest = resolved[len(root) + 1 :]
    assert "?" not in rest
    assert "#" not in rest
    for segment in rest.split("/"):
        assert segment not in ("", ".", "..")
        decoded = unquote(segment)
        assert decoded not in (".", "..")
        assert "/" not in decoded
        assert "\\" not in decoded
        assert "\x00" not in decoded


@settings(max_examples=3000, deadline=None)
@given(base=st.sampled_from(BASES), ref=REFERENCES)
# Requirement rows: URI-19, URI-22
def test_no_accepted_reference_lands_outside_the_root_URI_19_URI_22(base: str, ref: str) -> None:
    root = parse_skill_uri(base).root
    try:
        resolved = resolve_reference(base, ref)
    except URIError:
        pass
    else:
        if resolved != base:
            assert_inside(root, resolved)
        assert parse_skill_uri(base).contains(resolved)
    try:
        directory = resolve_directory_reference(base, ref)
    except URIError:
        return
    if directory != root:
        assert_inside(root, directory)


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.text(max_size=80), st.lists(PIECES, max_size=12).map("".join)))
def test_parsing_arbitrary_strings_raises_only_uri_error(text: str) -> None:
    for candidate in (text, f"skill://{text}/SKILL.md", f"skill://a/{text}/SKILL.md"):
        try:
            parsed = parse_skill_uri(candidate)
        except URIError:
            continue
        assert parsed.uri == candidate
        assert candidate.endswith("/SKILL.md")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def mutations(base: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Entries with one field replaced by arbitrary JSON, and fully arbitrary values."""
    keys = st.sampled_from(["uri", "frontmatter", "resources", "extra"])

    def replace(key: str, value: Any) -> Any:
        obj = json.loads(json.dumps(base))
        obj[key] = value
        return obj

    def replace_resource(index: int, key: str, value: Any) -> Any:
        obj = json.loads(json.dumps(base))
        obj["resources"][index % len(obj["resources"])][key] = value
        return obj

    return st.one_of(
        JSON,
        st.builds(replace, keys, JSON),
        st.builds(
            replace_resource,
            st.integers(0, 2),
            st.sampled_from(["uri", "digest", "size", "x"]),
            JSON,
        ),
    )


@settings(max_examples=1500, deadline=None)
@given(mutations(ex.entry_json()))
def test_arbitrary_json_entries_raise_only_typed_errors(obj: Any) -> None:
    try:
        parsed = SkillEntry.from_json(obj)
    except InvalidEntryError as exc:
        problems = exc.problems
        assert problems
        return
    # whatever is accepted round-trips exactly and re-validates
    assert parsed.to_json() == obj
    assert SkillEntry.from_json(parsed.to_json()) == parsed


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_json_text_raises_only_typed_errors(data: bytes) -> None:
    with contextlib.suppress(SkillsError):
        SkillEntry.from_json_text(data)
