"""Field-by-field comparison of parsed and published frontmatter (VER-10, VER-11, SIL-09)."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import pytest
from frontmatter_helpers import fm

from skills_core.frontmatter import (
    ABSENT,
    MAX_COMPARE_DEPTH,
    FrontmatterDifference,
    compare_frontmatter,
    parse_frontmatter,
)

V1_SKILL_MD = (
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n"
    "# PDF processing\n"
)
V1_ENTRY = {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}


def diff(yaml_text: str, published: dict[str, Any]) -> tuple[FrontmatterDifference, ...]:
    return compare_frontmatter(parse_frontmatter(fm(yaml_text)).data, published)


def pointers(differences: tuple[FrontmatterDifference, ...]) -> list[str]:
    return [d.pointer for d in differences]


def test_ver_10_spec_vector_matches_its_entry() -> None:
    assert compare_frontmatter(parse_frontmatter(V1_SKILL_MD).data, V1_ENTRY) == ()


def test_ver_11_extra_field_in_skill_md() -> None:
    """SKILL.md has ``allowed-tools: Bash`` but the entry lacks it."""
    data = parse_frontmatter(V1_SKILL_MD.replace("---\n\n", "allowed-tools: Bash\n---\n\n")).data
    (only,) = compare_frontmatter(data, V1_ENTRY)
    assert only == FrontmatterDifference(
        pointer="/allowed-tools", parsed="Bash", published=ABSENT, reason="only in SKILL.md"
    )
    assert str(only) == (
        '/allowed-tools: SKILL.md has "Bash", the entry has nothing (only in SKILL.md)'
    )


def test_ver_11_extra_key_in_the_entry() -> None:
    entry = {**V1_ENTRY, "license": "MIT"}
    (only,) = compare_frontmatter(parse_frontmatter(V1_SKILL_MD).data, entry)
    assert (only.pointer, only.parsed, only.published) == ("/license", ABSENT, "MIT")
    assert only.reason == "only in the entry"


def test_ver_11_description_differs_by_one_character() -> None:
    entry = {**V1_ENTRY, "description": V1_ENTRY["description"] + "."}
    (only,) = compare_frontmatter(parse_frontmatter(V1_SKILL_MD).data, entry)
    assert only.pointer == "/description"
    assert only.reason == "the strings differ"


def test_ver_11_mismatched_name() -> None:
    entry = {**V1_ENTRY, "name": "pdf-processor"}
    assert pointers(compare_frontmatter(parse_frontmatter(V1_SKILL_MD).data, entry)) == ["/name"]


def test_sil_09_float_one_equals_integer_one() -> None:
    """YAML ``a: 1.0`` vs JSON ``1`` → equal."""
    assert diff("a: 1.0\n", {"a": 1}) == ()
    assert diff("a: 1\n", {"a": 1.0}) == ()
    assert diff("a: -0.0\n", {"a": 0}) == ()


def test_sil_09_quoted_number_is_not_a_number() -> None:
    """YAML ``v: "1.0"`` vs JSON ``1.0`` → mismatch."""
    (only,) = diff('v: "1.0"\n', {"v": 1.0})
    assert only.reason == "a string is not a number"
    assert diff("v: 1\n", {"v": "1"})[0].reason == "a number is not a string"


def test_sil_09_yes_is_a_string() -> None:
    """YAML ``k: yes`` vs JSON ``"yes"`` → equal under YAML 1.2."""
    assert diff("k: yes\n", {"k": "yes"}) == ()
    assert pointers(diff("k: yes\n", {"k": True})) == ["/k"]


def test_sil_09_reordered_keys_are_equal() -> None:
    assert diff("b: 1\na: {y: 2, x: 3}\n", {"a": {"x": 3, "y": 2}, "b": 1}) == ()


def test_arrays_are_ordered() -> None:
    assert pointers(diff("a: [1, 2]\n", {"a": [2, 1]})) == ["/a/0", "/a/1"]
    longer = diff("a: [1, 2, 3]\n", {"a": [1]})
    assert [(d.pointer, d.parsed, d.published) for d in longer] == [
        ("/a/1", 2, ABSENT),
        ("/a/2", 3, ABSENT),
    ]
    assert "only in SKILL.md" in longer[0].reason
    shorter = diff("a: []\n", {"a": [None]})
    assert [(d.pointer, d.parsed, d.published) for d in shorter] == [("/a/0", ABSENT, None)]


def test_a_bool_never_equals_a_number() -> None:
    assert diff("a: true\n", {"a": 1})[0].reason == "a bool is not a number"
    assert pointers(diff("a: 0\n", {"a": False})) == ["/a"]
    assert pointers(diff("a: 1.0\n", {"a": True})) == ["/a"]


def test_null_never_equals_absent() -> None:
    (only,) = diff("a: 1\nb:\n", {"a": 1})
    assert (only.pointer, only.parsed, only.published) == ("/b", None, ABSENT)
    (only,) = diff("a: 1\n", {"a": 1, "b": None})
    assert (only.pointer, only.parsed, only.published) == ("/b", ABSENT, None)
    assert repr(ABSENT) == "ABSENT"
    assert ABSENT is not None


def test_numbers_compare_by_exact_value() -> None:
    assert diff("a: 9007199254740991\n", {"a": 9007199254740991.0}) == ()
    assert pointers(diff("a: 4503599627370497\n", {"a": 4503599627370497.5})) == ["/a"]
    big = {"a": 2**53 + 1}
    assert compare_frontmatter({"a": float(2**53)}, big)[0].reason == "the numbers differ"
    assert compare_frontmatter({"a": float(2**53)}, {"a": 2**53}) == ()
    assert compare_frontmatter({"a": 1e20}, {"a": 10**20}) == ()
    assert pointers(diff("a: 0.1\n", {"a": 0.1000000000000001})) == ["/a"]


def test_strings_are_exact() -> None:
    assert pointers(diff("a: x\n", {"a": "x "})) == ["/a"]
    assert pointers(diff('a: "caf\\u00e9"\n', {"a": "cafe\u0301"})) == ["/a"]
    assert diff('a: "caf\\u00e9"\n', {"a": "caf\u00e9"}) == ()


def test_pointers_escape_tilde_and_slash() -> None:
    differences = diff("'a/b~c': {'~': 1}\n", {"a/b~c": {"~": 2}})
    assert pointers(differences) == ["/a~1b~0c/~0"]


def test_nested_differences_are_all_reported_in_order() -> None:
    parsed = {"m": {"x": [1, {"y": "a"}], "z": True}, "k": "v"}
    published = {"k": "w", "m": {"x": [1, {"y": "b"}], "z": False, "extra": 1}}
    assert pointers(compare_frontmatter(parsed, published)) == [
        "/m/x/1/y",
        "/m/z",
        "/m/extra",
        "/k",
    ]


def test_fmt_12_reserved_metadata_keys_are_still_compared() -> None:
    """FMT-12: ``io.modelcontextprotocol/...`` metadata keys take part in the comparison."""
    yaml_text = "metadata:\n  io.modelcontextprotocol/x: '1'\n"
    assert diff(yaml_text, {"metadata": {"io.modelcontextprotocol/x": "1"}}) == ()
    assert pointers(diff(yaml_text, {"metadata": {}})) == ["/metadata/io.modelcontextprotocol~1x"]


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({1, 2}, "set"),
        (frozenset(), "frozenset"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (b"x", "bytes"),
        ({1: "a"}, "non-string key 1"),
        (object(), "object"),
    ],
)
def test_non_json_published_values_are_differences(value: object, fragment: str) -> None:
    (only,) = compare_frontmatter({"a": [1, 2]}, {"a": value})
    assert only.pointer == "/a"
    assert "not a JSON value" in only.reason
    assert fragment in only.reason
    assert str(only).startswith("/a: SKILL.md has [1, 2], the entry has ")


def test_non_json_values_never_equal_themselves() -> None:
    nan = float("nan")
    assert pointers(compare_frontmatter({"a": nan}, {"a": nan})) == ["/a"]
    assert "SKILL.md value" in compare_frontmatter({"a": {1}}, {"a": {1}})[0].reason


def test_frozen_entry_frontmatter_compares_like_json() -> None:
    """A SkillEntry's frozen frontmatter (tuples, read-only mappings) compares without thawing."""
    from types import MappingProxyType

    published = MappingProxyType(
        {"name": "x", "tags": ("a", "b"), "m": MappingProxyType({"k": (1,)})}
    )
    assert compare_frontmatter({"name": "x", "tags": ["a", "b"], "m": {"k": [1]}}, published) == ()
    assert pointers(
        compare_frontmatter({"name": "x", "tags": ["a"], "m": {"k": [1]}}, published)
    ) == ["/tags/1"]


def test_whole_frontmatter_of_another_type() -> None:
    (only,) = compare_frontmatter({"a": 1}, [1])  # type: ignore[arg-type]
    assert only.pointer == ""
    assert str(only).startswith("(the whole frontmatter): ")


def test_any_mapping_type_is_an_object() -> None:
    assert (
        compare_frontmatter({"a": {"b": 1}}, MappingProxyType({"a": MappingProxyType({"b": 1})}))
        == ()
    )


def test_cyclic_input_does_not_crash() -> None:
    loop: list[object] = []
    loop.append(loop)
    differences = compare_frontmatter({"a": loop}, {"a": loop})
    assert len(differences) == 1
    assert differences[0].pointer == "/a" + "/0" * (MAX_COMPARE_DEPTH - 1)
    assert "deeper than" in differences[0].reason
    assert "[[[[" in str(differences[0]) or "..." in str(differences[0])


def test_difference_display_is_json_and_truncated() -> None:
    long_value = "x" * 500
    (only,) = compare_frontmatter({"a": long_value}, {"a": "y"})
    text = str(only)
    assert text.startswith('/a: SKILL.md has "xxx')
    assert '..., the entry has "y"' in text
    assert len(text) < 250


def test_parse_then_compare_round_trips_through_json() -> None:
    """What a server would publish (json.dumps of the parsed data) compares equal."""
    data = parse_frontmatter(
        fm("name: x\nv: 1.5\nn: 7\nb: false\nz: null\nl: [1, {k: v}]\nt: |\n  text\n")
    ).data
    assert compare_frontmatter(data, json.loads(json.dumps(data))) == ()
