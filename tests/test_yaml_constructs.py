"""Every YAML construct of decision 3 (docs/design.md#d3): each supported one parses to the right value, each
refused one raises a located FrontmatterError (SIL-09, VER-10).

Line numbers are SKILL.md lines: the opening ``---`` is line 1, so the first YAML line is line 2.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import yaml
from frontmatter_helpers import fm, load, strict_equal

from skills_core.errors import FrontmatterError
from skills_core.frontmatter import parse_frontmatter
from skills_core.jsonvalue import JSONValue


def rejects(yaml_text: str, kind: str, line: int, column: int | None, fragment: str) -> None:
    """Assert that the frontmatter ``yaml_text`` fails with this kind, place and reason."""
    with pytest.raises(FrontmatterError) as info:
        load(yaml_text)
    err = info.value
    assert err.kind == kind, err
    assert err.line == line, err
    if column is not None:
        assert err.column == column, err
    assert fragment in err.reason, err
    assert "\n" not in str(err)


def same_as_pyyaml(yaml_text: str) -> dict[str, JSONValue]:
    """Parse with us and with PyYAML's safe_load; they must agree exactly."""
    ours = load(yaml_text)
    assert strict_equal(ours, yaml.safe_load(yaml_text)), (ours, yaml.safe_load(yaml_text))
    return ours


# --- supported: block collections -----------------------------------------------------------------


def test_block_mapping_of_plain_scalars() -> None:
    assert same_as_pyyaml("name: pdf\ndescription: Extract text from PDFs\n") == {
        "name": "pdf",
        "description": "Extract text from PDFs",
    }


def test_block_mapping_keeps_document_order() -> None:
    assert list(load("b: 1\na: 2\nc: 3\n")) == ["b", "a", "c"]


def test_nested_block_mappings() -> None:
    text = "metadata:\n  author: me\n  tags:\n    primary: pdf\nname: x\n"
    assert same_as_pyyaml(text) == {
        "metadata": {"author": "me", "tags": {"primary": "pdf"}},
        "name": "x",
    }


def test_indented_top_level_mapping() -> None:
    assert same_as_pyyaml("  name: x\n  description: y\n") == {"name": "x", "description": "y"}


def test_block_sequence_of_scalars() -> None:
    assert same_as_pyyaml("tools:\n  - Read\n  - Grep\n") == {"tools": ["Read", "Grep"]}


def test_block_sequence_of_mappings() -> None:
    text = "env:\n  - name: A\n    value: 1\n  - name: B\n    value: 2\n"
    assert same_as_pyyaml(text) == {"env": [{"name": "A", "value": 1}, {"name": "B", "value": 2}]}


def test_compact_sequence_at_the_key_indentation() -> None:
    """``key:`` then ``- item`` at the key's own column, which PyYAML accepts too."""
    text = "tools:\n- Read\n- Grep\nname: x\nnested:\n  list:\n  - a\n"
    assert same_as_pyyaml(text) == {
        "tools": ["Read", "Grep"],
        "name": "x",
        "nested": {"list": ["a"]},
    }


def test_nested_compact_sequences() -> None:
    assert same_as_pyyaml("m:\n  - - a\n    - b\n  - - c\n") == {"m": [["a", "b"], ["c"]]}


def test_empty_values_are_null() -> None:
    text = "a:\nb: # comment\nc:\n  - \n  -\n  - x\n"
    assert same_as_pyyaml(text) == {"a": None, "b": None, "c": [None, None, "x"]}


def test_value_on_the_next_line() -> None:
    assert same_as_pyyaml("a:\n  value\nb:\n  # comment\n  [1, 2]\n") == {
        "a": "value",
        "b": [1, 2],
    }


def test_sequence_entry_value_on_the_next_line() -> None:
    assert same_as_pyyaml("a:\n  -\n    b: 1\n    c: 2\n  -\n    x\n") == {
        "a": [{"b": 1, "c": 2}, "x"]
    }


def test_quoted_and_spaced_keys() -> None:
    text = "'single key': 1\n\"double\\tkey\": 2\nkey with spaces: 3\nspaced   : 4\n"
    assert same_as_pyyaml(text) == {
        "single key": 1,
        "double\tkey": 2,
        "key with spaces": 3,
        "spaced": 4,
    }


def test_quoted_key_in_a_sequence_entry() -> None:
    assert same_as_pyyaml("a:\n  - \"k\": v\n    'j': w\n") == {"a": [{"k": "v", "j": "w"}]}


def test_keys_are_never_type_resolved() -> None:
    """``1:``, ``null:``, ``true:`` are the keys "1", "null", "true" (PyYAML would type them)."""
    assert load("1: a\nnull: b\ntrue: c\n~: d\n0x10: e\n") == {
        "1": "a",
        "null": "b",
        "true": "c",
        "~": "d",
        "0x10": "e",
    }


def test_colon_and_hash_inside_plain_values() -> None:
    text = "url: https://example.com/a#b\nratio: a:b\ntag: c#\nk: a :b\n"
    assert same_as_pyyaml(text) == {
        "url": "https://example.com/a#b",
        "ratio": "a:b",
        "tag": "c#",
        "k": "a :b",
    }


def test_plain_values_starting_with_dash_question_or_colon() -> None:
    assert same_as_pyyaml("a: -x\nb: ?y\nc: :z\nd: -1\n") == {
        "a": "-x",
        "b": "?y",
        "c": ":z",
        "d": -1,
    }


def test_unicode_content() -> None:
    assert same_as_pyyaml("description: Café 📹 — naïve\n") == {"description": "Café 📹 — naïve"}


# --- supported: flow collections ------------------------------------------------------------------


def test_flow_sequence() -> None:
    assert same_as_pyyaml("tools: [Read, Grep, 'Bash(git:*)']\n") == {
        "tools": ["Read", "Grep", "Bash(git:*)"]
    }


def test_flow_mapping_json_superset() -> None:
    text = 'm: {a: 1, "b": [2, 3], \'c\': {d: null}, "e":true}\n'
    assert same_as_pyyaml(text) == {"m": {"a": 1, "b": [2, 3], "c": {"d": None}, "e": True}}


def test_flow_collections_nest_five_levels() -> None:
    text = 'metadata: {"a": {"b": {"c": {"d": ["e"]}}}}\n'
    assert same_as_pyyaml(text) == {"metadata": {"a": {"b": {"c": {"d": ["e"]}}}}}


def test_multi_line_flow_with_trailing_commas() -> None:
    text = 'metadata: {\n  "requires": {\n    "bins": ["node",],\n  },\n  # a comment\n  x: 1,\n}\n'
    assert same_as_pyyaml(text) == {"metadata": {"requires": {"bins": ["node"]}, "x": 1}}


def test_flow_closing_bracket_may_sit_at_column_zero() -> None:
    """The one leniency (a real corpus skill closes ``metadata: {`` at column 0)."""
    assert same_as_pyyaml('metadata: {\n  "a": [\n    1\n]\n}\n') == {"metadata": {"a": [1]}}


def test_flow_mapping_entries_without_values() -> None:
    assert same_as_pyyaml("m: {a, b: 1, c: }\n") == {"m": {"a": None, "b": 1, "c": None}}


def test_flow_single_pair_mapping_in_a_sequence() -> None:
    assert same_as_pyyaml('s: [a: 1, b, "c":d, e: ]\n') == {
        "s": [{"a": 1}, "b", {"c": "d"}, {"e": None}]
    }


def test_flow_single_pair_keys_are_not_resolved() -> None:
    assert load("s: [.inf: 1, 99999999999999999999: 2, 'q': 3]\n") == {
        "s": [{".inf": 1}, {"99999999999999999999": 2}, {"q": 3}]
    }


def test_flow_plain_scalars_fold_across_lines() -> None:
    assert same_as_pyyaml("s: [a\n  b,\n  c\n\n  d, e f]\n") == {"s": ["a b", "c\nd", "e f"]}


def test_flow_plain_scalars_keep_inner_colons_and_hashes() -> None:
    assert same_as_pyyaml("s: [a:b, c#d, http://x]\n") == {"s": ["a:b", "c#d", "http://x"]}


def test_empty_flow_collections() -> None:
    assert same_as_pyyaml("a: []\nb: {}\nc: [ ]\n") == {"a": [], "b": {}, "c": []}


def test_top_level_flow_mapping() -> None:
    assert same_as_pyyaml('{name: x, "description": y}  # c\n# more\n') == {
        "name": "x",
        "description": "y",
    }


def test_flow_collection_followed_by_a_comment() -> None:
    assert same_as_pyyaml("a: [1, 2] # c\nb: {x: y}   # d\n") == {"a": [1, 2], "b": {"x": "y"}}


# --- supported: scalars ---------------------------------------------------------------------------


def test_plain_multi_line_folding() -> None:
    text = "description: one\n  two\n\n  three\n\n\n  four\nnext: x\n"
    assert same_as_pyyaml(text) == {"description": "one two\nthree\n\nfour", "next": "x"}


def test_plain_scalar_ends_at_a_comment() -> None:
    assert same_as_pyyaml("a: x # note\nb: y  #\n") == {"a": "x", "b": "y"}


def test_plain_continuation_may_start_with_dash() -> None:
    assert same_as_pyyaml("a: x\n  - y\n") == {"a": "x - y"}


def test_single_quoted_escapes_and_folding() -> None:
    text = "a: 'it''s'\nb: 'x\n  y  \n\n  z '\nc: ''\nd: '  lead'\n"
    assert same_as_pyyaml(text) == {"a": "it's", "b": "x y\nz ", "c": "", "d": "  lead"}


def test_single_quoted_keeps_backslashes_and_hashes() -> None:
    assert same_as_pyyaml("a: 'C:\\path # not a comment'\n") == {"a": "C:\\path # not a comment"}


ESCAPES = [
    ("\\0", "\x00"),
    ("\\a", "\x07"),
    ("\\b", "\x08"),
    ("\\t", "\t"),
    ("\\\t", "\t"),
    ("\\n", "\n"),
    ("\\v", "\x0b"),
    ("\\f", "\x0c"),
    ("\\r", "\r"),
    ("\\e", "\x1b"),
    ("\\ ", " "),
    ('\\"', '"'),
    ("\\/", "/"),
    ("\\\\", "\\"),
    ("\\N", "\x85"),
    ("\\_", "\xa0"),
    ("\\L", "\u2028"),
    ("\\P", "\u2029"),
    ("\\x41", "A"),
    ("\\xe9", "é"),
    ("\\u00E9", "é"),
    ("\\U0001F600", "😀"),
    ("\\uFEFF", "\ufeff"),
]


@pytest.mark.parametrize(("escape", "expected"), ESCAPES, ids=[e for e, _ in ESCAPES])
def test_every_double_quoted_escape(escape: str, expected: str) -> None:
    text = f'a: "<{escape}>"\n'
    assert same_as_pyyaml(text) == {"a": f"<{expected}>"}


def test_hex_escape_followed_by_more_hex_digits() -> None:
    assert same_as_pyyaml('a: "\\x41BC"\n') == {"a": "ABC"}


def test_double_quoted_folding() -> None:
    text = 'a: "one\n  two  \n\n  three"\nb: "x\n   "\n'
    assert same_as_pyyaml(text) == {"a": "one two\nthree", "b": "x "}


def test_double_quoted_escaped_line_breaks() -> None:
    text = 'a: "join\\\n   ed"\nb: "keep \\\n  space"\nc: "x\\\n\n  y"\nd: "sp\\ \n  z"\n'
    assert same_as_pyyaml(text) == {"a": "joined", "b": "keep space", "c": "x\ny", "d": "sp  z"}


def test_double_quoted_escaped_break_on_its_own_line() -> None:
    assert same_as_pyyaml('a: "x\n  \\\n  y"\n') == {"a": "x y"}


def test_double_quoted_closing_quote_may_sit_at_column_zero() -> None:
    assert same_as_pyyaml('a: "x\n  y\n"\n') == {"a": "x y "}


def test_double_quoted_even_backslashes_do_not_escape_the_break() -> None:
    assert same_as_pyyaml('a: "x\\\\\n  y"\n') == {"a": "x\\ y"}


def test_literal_block_scalar_chomping() -> None:
    text = "clip: |\n  a\n  b\n\nstrip: |-\n  a\n\nkeep: |+\n  a\n\n\nlast: x\n"
    assert same_as_pyyaml(text) == {
        "clip": "a\nb\n",
        "strip": "a",
        "keep": "a\n\n\n",
        "last": "x",
    }


def test_literal_block_scalar_keeps_inner_indentation_and_hashes() -> None:
    text = "a: |\n  def f():\n      return 1\n  # not a comment\n\n  end\n# a comment\n"
    assert same_as_pyyaml(text) == {"a": "def f():\n    return 1\n# not a comment\n\nend\n"}


def test_folded_block_scalar_chomping() -> None:
    text = "clip: >\n  a\n  b\n\nstrip: >-\n  a\n  b\n\nkeep: >+\n  a\n\n"
    assert same_as_pyyaml(text) == {"clip": "a b\n", "strip": "a b", "keep": "a\n\n"}


def test_folded_block_scalar_more_indented_and_empty_lines() -> None:
    text = "a: >\n\n  one\n  two\n\n  three\n    indented\n  four\n\n\n  five\n"
    assert same_as_pyyaml(text) == {"a": "\none two\nthree\n  indented\nfour\n\nfive\n"}


def test_folded_block_scalar_tab_after_indentation_is_more_indented() -> None:
    assert same_as_pyyaml("a: >\n  x\n\n  \ty\n  z\n") == {"a": "x\n\n\ty\nz\n"}


def test_block_scalar_whitespace_lines_beyond_the_indentation_are_content() -> None:
    assert same_as_pyyaml("a: |\n  x\n    \n  y\n") == {"a": "x\n  \ny\n"}
    assert same_as_pyyaml("a: >\n  x\n    \n  y\n") == {"a": "x\n  \ny\n"}


@pytest.mark.parametrize(
    ("header", "body", "expected"),
    [
        ("|2", "   x\n  y\n", " x\ny\n"),
        ("|2-", "   x\n", " x"),
        ("|-2", "   x\n", " x"),
        (">+1", "  x\n y\n\n", " x\ny\n\n"),
        ("|1", "  x\n", " x\n"),
        ("|2+", "  \n  x\n\n", "\nx\n\n"),
    ],
)
def test_block_scalar_indentation_indicators(header: str, body: str, expected: str) -> None:
    assert same_as_pyyaml(f"a: {header}\n{body}") == {"a": expected}


def test_block_scalar_indentation_indicator_in_a_sequence() -> None:
    assert same_as_pyyaml("a:\n- |1\n  x\n- >2-\n   y\n") == {"a": [" x\n", " y"]}


def test_block_scalar_header_with_comment_and_header_on_its_own_line() -> None:
    assert same_as_pyyaml("a: | # note\n  x\nb:\n  >-\n   y\n   z\n") == {"a": "x\n", "b": "y z"}


def test_empty_block_scalars() -> None:
    text = "a: |\nb: >-\n\nc: |+\n\n\nd: x\n"
    assert same_as_pyyaml(text) == {"a": "", "b": "", "c": "\n\n", "d": "x"}


def test_clip_block_scalar_right_before_the_closing_delimiter() -> None:
    """The newline before the closing ``---`` belongs to the YAML text (167 corpus files)."""
    doc = "---\nname: x\ndescription: |\n  line one\n  line two\n---\n# Body\n"
    assert parse_frontmatter(doc).data["description"] == "line one\nline two\n"
    doc = "---\nname: x\ndescription: >+\n  kept\n\n---\nbody"
    assert parse_frontmatter(doc).data["description"] == "kept\n\n"


def test_comments_everywhere() -> None:
    text = (
        "# leading\na: 1 # after a value\n  # indented comment\nb: 'q' # after quoted\n#\n"
        "c:\n  # before\n  - x # after item\n# trailing\n"
    )
    assert same_as_pyyaml(text) == {"a": 1, "b": "q", "c": ["x"]}


# --- supported: core-schema resolution ------------------------------------------------------------

RESOLUTION: list[tuple[str, JSONValue]] = [
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("~", None),
    ("true", True),
    ("True", True),
    ("TRUE", True),
    ("false", False),
    ("False", False),
    ("FALSE", False),
    ("0", 0),
    ("-0", 0),
    ("+12", 12),
    ("017", 17),
    ("0o17", 15),
    ("0x1F", 31),
    ("0xff", 255),
    ("9007199254740991", 2**53 - 1),
    ("-9007199254740991", -(2**53 - 1)),
    ("000000000000000000000000001", 1),
    ("1.0", 1.0),
    ("1.", 1.0),
    (".5", 0.5),
    ("-.5", -0.5),
    ("+1.5e3", 1500.0),
    ("1e3", 1000.0),
    ("1E-2", 0.01),
    ("-0.0", -0.0),
    ("1e308", 1e308),
    # everything else stays a string
    ("yes", "yes"),
    ("No", "No"),
    ("on", "on"),
    ("OFF", "OFF"),
    ("y", "y"),
    ("2025-10-20", "2025-10-20"),
    ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
    ("1_000", "1_000"),
    ("1:20", "1:20"),
    ("0b101", "0b101"),
    ("0X1F", "0X1F"),
    ("-0x1F", "-0x1F"),
    ("0o8", "0o8"),
    ("tRUE", "tRUE"),
    ("nULL", "nULL"),
    (".", "."),
    ("+", "+"),
    ("1.2.3", "1.2.3"),
    ("=", "="),
    (".NaN_", ".NaN_"),
    ("١٢٣", "١٢٣"),
]


@pytest.mark.parametrize(("text", "expected"), RESOLUTION, ids=[t for t, _ in RESOLUTION])
def test_plain_scalar_resolution_follows_the_yaml_1_2_core_schema(
    text: str, expected: JSONValue
) -> None:
    """SIL-09: YAML 1.2 core schema; dates, ``yes``, ``1_000`` and ``1:20`` stay strings."""
    for doc in (f"v: {text}\n", f"v: [{text}]\n"):
        value = load(doc)["v"]
        got = value[0] if isinstance(value, list) else value
        assert strict_equal(got, expected), (doc, got)


def test_quoted_scalars_are_never_resolved() -> None:
    assert load("a: 'true'\nb: \"1\"\nc: '~'\nd: \"\"\n") == {
        "a": "true",
        "b": "1",
        "c": "~",
        "d": "",
    }


# --- refused: the constructs of decision 3 (docs/design.md#d3) ------------------------------------


def test_anchor_is_refused() -> None:
    rejects("base: &b x\nother: y\n", "unsupported", 2, 7, "anchors")


def test_alias_is_refused() -> None:
    rejects("a: x\nb: *a\n", "unsupported", 3, 4, "aliases")


def test_alias_bomb_is_refused_at_the_first_anchor_in_no_time() -> None:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for n in range(1, 10):
        prev = chr(ord("a") + n - 1)
        cur = chr(ord("a") + n)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    start = time.perf_counter()
    rejects("\n".join(lines) + "\n", "unsupported", 2, 4, "anchors")
    assert time.perf_counter() - start < 0.5


def test_anchor_and_alias_inside_flow_and_sequences() -> None:
    rejects("a: [&x 1]\n", "unsupported", 2, 5, "anchors")
    rejects("a:\n  - *x\n", "unsupported", 3, 5, "aliases")
    rejects("&x a: 1\n", "unsupported", 2, 1, "anchors")


def test_merge_key_is_refused() -> None:
    rejects("a: {x: 1}\nb:\n  <<: {y: 2}\n", "unsupported", 4, 3, "merge keys")
    rejects("a: {<<: 1}\n", "unsupported", 2, 5, "merge keys")


def test_quoted_merge_key_is_an_ordinary_key() -> None:
    assert load("'<<': 1\n") == {"<<": 1}


def test_tags_are_refused() -> None:
    rejects("a: !!str 1\n", "unsupported", 2, 4, "tags")
    rejects("a: !custom x\n", "unsupported", 2, 4, "tags")
    rejects("a: [!!int 1]\n", "unsupported", 2, 5, "tags")


def test_directive_is_refused() -> None:
    rejects("%YAML 1.2\na: 1\n", "unsupported", 2, 1, "directives")


def test_explicit_complex_key_is_refused() -> None:
    rejects("? a\n: b\n", "unsupported", 2, 1, "complex keys")
    rejects("a: {? b: c}\n", "unsupported", 2, 5, "complex keys")
    rejects("a: [?x]\n", "unsupported", 2, 5, "complex keys")


def test_collection_as_key_is_refused() -> None:
    rejects("[a, b]: c\n", "unsupported", 2, 1, "complex keys")
    rejects("x:\n  {a: 1}: c\n", "unsupported", 3, 3, "complex keys")
    rejects("a: {[b]: c}\n", "unsupported", 2, 5, "complex keys")
    rejects("a: [[b]: c]\n", "unsupported", 2, 5, "complex keys")


def test_duplicate_top_level_key_names_the_first_occurrence() -> None:
    rejects(
        "name: x\ndescription: y\nallowed-tools: Read\nallowed-tools: Bash\n",
        "duplicate-key",
        5,
        1,
        "duplicate key 'allowed-tools' (first at line 4)",
    )


def test_duplicate_key_three_levels_down() -> None:
    text = "a:\n  b:\n    c:\n      d: 1\n      e: 2\n      d: 3\n"
    rejects(text, "duplicate-key", 7, 7, "duplicate key 'd' (first at line 5)")


def test_duplicate_key_in_flow_and_between_quoting_styles() -> None:
    rejects("a: {x: 1, 'x': 2}\n", "duplicate-key", 2, 11, "duplicate key 'x' (first at line 2)")
    rejects('a: 1\n"a": 2\n', "duplicate-key", 3, 1, "duplicate key 'a'")
    rejects("a: 1\nb: 2\na:\n  x: 1\n", "duplicate-key", 4, 1, "duplicate key 'a'")


def test_same_key_in_different_mappings_is_fine() -> None:
    assert load("a: {x: 1}\nb:\n  x: 2\nc: [{x: 3}, {x: 4}]\n")["c"] == [{"x": 3}, {"x": 4}]


def test_tab_in_indentation_is_refused() -> None:
    rejects("a:\n\tb: 1\n", "syntax", 3, 1, "tab")
    rejects("a:\n  - x\n \t- y\n", "syntax", 4, 2, "tab")
    rejects("a: |\n  x\n\ty\n", "syntax", 4, 1, "tab")


def test_tab_outside_quoted_and_block_scalars_is_refused() -> None:
    rejects("a:\tb\n", "syntax", 2, 3, "tab")
    rejects("a: b\tc\n", "syntax", 2, 5, "tab")
    rejects("a: b\t# c\n", "syntax", 2, 5, "tab")
    rejects("a: [1,\t2]\n", "syntax", 2, 7, "tab")
    rejects("a: 'x'\t\n", "syntax", 2, 7, "tab")
    rejects("-\tx: 1\n", "syntax", 2, 2, "tab")
    rejects("a:\n  - \tx\n", "syntax", 3, 5, "tab")
    rejects("a: x\n  \ty\n", "syntax", 3, 3, "tab")


def test_tabs_inside_quoted_scalars_are_content() -> None:
    assert same_as_pyyaml("a: 'x\ty'\nb: \"\tz\"\n") == {"a": "x\ty", "b": "\tz"}


@pytest.mark.parametrize(
    ("char", "fragment"),
    [
        ("\x00", "U+0000"),
        ("\x07", "U+0007"),
        ("\x1b", "U+001B"),
        ("\x7f", "U+007F"),
        ("\x80", "U+0080"),
        ("\x9f", "U+009F"),
        ("\ufffe", "U+FFFE"),
        ("\uffff", "U+FFFF"),
        ("\x85", "NEXT LINE"),
        ("\u2028", "LINE SEPARATOR"),
        ("\u2029", "PARAGRAPH SEPARATOR"),
        ("\ufeff", "byte order mark"),
        ("\ud800", "U+D800"),
    ],
)
def test_non_printable_and_ambiguous_characters_are_refused(char: str, fragment: str) -> None:
    rejects(f"a: 1\nb: 'x{char}'\n", "syntax", 3, 6, fragment)


def test_non_mapping_top_level_is_refused() -> None:
    rejects("- a\n- b\n", "schema", 2, 1, "not a sequence")
    rejects("just text\n", "schema", 2, 1, "must be a mapping")
    rejects("[a, b]\n", "schema", 2, 1, "must be a mapping")
    rejects("|\n  text\n", "schema", 2, 1, "must be a mapping")
    rejects('"quoted"\n', "schema", 2, 1, "must be a mapping")


def test_empty_frontmatter_is_refused() -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter("---\n---\nbody")
    assert (info.value.kind, info.value.line) == ("schema", 2)
    rejects("# only a comment\n\n", "schema", 2, None, "empty")


@pytest.mark.parametrize(
    "text", [".nan", ".NaN", ".NAN", ".inf", ".Inf", "+.INF", "-.inf", "-.Inf"]
)
def test_nan_and_infinity_are_refused(text: str) -> None:
    rejects(f"a: {text}\n", "unsupported", 2, 4, "not a JSON number")
    rejects(f"a: [{text}]\n", "unsupported", 2, 5, "not a JSON number")


def test_float_overflow_is_refused() -> None:
    rejects("a: 1e999\n", "unsupported", 2, 4, "too large")
    rejects("a: -1e309\n", "unsupported", 2, 4, "too large")


def test_integers_beyond_2_53_are_refused() -> None:
    rejects("a: 9007199254740992\n", "unsupported", 2, 4, "2**53")
    rejects("a: -9007199254740992\n", "unsupported", 2, 4, "2**53")
    rejects("a: 0x20000000000000\n", "unsupported", 2, 4, "2**53")
    rejects("a: 0o400000000000000000\n", "unsupported", 2, 4, "2**53")
    rejects("a: " + "9" * 5000 + "\n", "unsupported", 2, 4, "2**53")


def test_document_end_marker_is_refused() -> None:
    rejects("a: 1\n...\n", "unsupported", 3, 1, "document marker")


def test_second_document_start_is_refused() -> None:
    rejects("a: 1\n--- \nb: 2\n", "unsupported", 3, 1, "document marker")
    rejects("a: 1\n--- b: 2\n", "unsupported", 3, 1, "document marker")
    rejects('a: "x\n... y"\n', "unsupported", 3, 1, "document marker")


def test_invalid_escapes_are_refused() -> None:
    rejects('a: "\\q"\n', "syntax", 2, 5, "invalid escape")
    rejects('a: "ok\\x4"\n', "syntax", 2, 7, "2 hexadecimal digits")
    rejects('a: "\\u12"\n', "syntax", 2, 5, "4 hexadecimal digits")
    rejects('a: "x\n  \\U0001F6"\n', "syntax", 3, 3, "8 hexadecimal digits")


def test_surrogate_and_out_of_range_escapes_are_refused() -> None:
    rejects('a: "\\ud83d\\ude00"\n', "unsupported", 2, 5, "surrogate")
    rejects('a: "\\U00110000"\n', "unsupported", 2, 5, "not a Unicode scalar value")


def test_unterminated_scalars_and_collections_are_refused() -> None:
    rejects('a: "open\n  still\n', "syntax", 2, 4, "unterminated double-quoted")
    rejects("a: 'open\n", "syntax", 2, 4, "unterminated single-quoted")
    rejects("a: [1, 2\n", "syntax", 2, 4, "unterminated flow collection (no closing ']')")
    rejects("a: {x: 1\n", "syntax", 2, 4, "no closing '}'")


def test_plain_value_with_colon_space_is_refused() -> None:
    """The most common corpus failure: an unquoted ': ' inside a value."""
    rejects("description: Use this: for things\n", "syntax", 2, 22, "cannot contain ': '")
    rejects("a: b:\n", "syntax", 2, 5, "cannot contain ': '")
    rejects("a: one\n  two: three\n", "syntax", 3, 6, "cannot contain ': '")
    rejects("a: one\n  : two\n", "syntax", 3, 3, "cannot contain ': '")


def test_value_then_key_on_one_line_is_refused() -> None:
    rejects("a: 'b': c\n", "syntax", 2, 7, "mapping values are not allowed here")
    rejects("a: [b]: c\n", "unsupported", 2, 4, "complex keys")


def test_block_sequence_after_key_on_the_same_line_is_refused() -> None:
    rejects("a: - b\n", "syntax", 2, 4, "block sequence")
    rejects("a: -\n", "syntax", 2, 4, "block sequence")


def test_bad_indentation_is_refused() -> None:
    rejects("a: 1\n  b: 2\n", "syntax", 3, 4, "cannot contain ': '")
    rejects("a:\n    b: 1\n  c: 2\n", "syntax", 4, 3, "unexpected indentation")
    rejects("a:\n  b: 1\n    c: 2\n", "syntax", 4, 6, "cannot contain ': '")
    rejects("a:\n  b:\n    - 1\n   c: 2\n", "syntax", 5, 4, "unexpected indentation")
    rejects("a:\n  - x\n  y: 1\n", "syntax", 4, 3, "unexpected indentation")
    rejects("a:\n  b: 1\n  - c\n", "syntax", 4, 3, "sequence entry")


def test_under_indented_continuation_lines_are_refused() -> None:
    rejects('a: "x\ny"\n', "syntax", 3, 1, "indented more")
    rejects("a: 'x\nname: evil'\n", "syntax", 3, 1, "indented more")
    rejects("a: [x,\ny]\n", "syntax", 3, 1, "indented more")
    rejects("a:\n  b: {x: 1,\n  y: 2}\n", "syntax", 4, 3, "indented more")


def test_less_indented_line_after_an_indented_top_level_mapping() -> None:
    rejects("  a: 1\nb: 2\n", "syntax", 3, 1, "less indented than the top-level mapping")


def test_tab_starting_a_quoted_continuation_line() -> None:
    rejects('a: "x\n\ty"\n', "syntax", 3, 1, "tab")


def test_under_indented_plain_line_ends_the_scalar() -> None:
    rejects("a:\n  b: x\n y\n", "syntax", 4, 2, "unexpected indentation")


def test_block_scalar_header_errors() -> None:
    rejects("a: |0\n  x\n", "syntax", 2, 4, "block scalar header")
    rejects("a: | text\n", "syntax", 2, 4, "block scalar header")
    rejects("a: |-+\n", "syntax", 2, 4, "block scalar header")
    rejects("a: >#c\n", "syntax", 2, 4, "block scalar header")


def test_block_scalar_leading_empty_line_with_more_spaces_is_refused() -> None:
    rejects("a: |\n    \n  x\n", "syntax", 4, 1, "leading empty line")


def test_block_scalar_header_at_the_parent_indentation_is_refused() -> None:
    rejects("a:\n|\n  x\n", "syntax", 3, 1, "expected a mapping key")


def test_comment_without_a_preceding_space_is_refused() -> None:
    rejects('a: "b"#c\n', "syntax", 2, 7, "unexpected text")
    rejects("a: [#c\n  ]\n", "syntax", 2, 5, "'#' cannot start a value")
    rejects("a: [x]#c\n", "syntax", 2, 7, "unexpected text")


def test_flow_syntax_errors() -> None:
    rejects("a: [x,,y]\n", "syntax", 2, 7, "a value is missing before ','")
    rejects("a: [x y z\n  w]z\n", "syntax", 3, 5, "unexpected text")
    rejects("a: [x} \n", "syntax", 2, 6, "expected ',' or ']'")
    rejects("a: {x: 'v' y}\n", "syntax", 2, 12, "expected ',' or '}'")
    rejects("a: {x\n  : 1}\n", "syntax", 3, 3, "on its key's line")
    rejects("a: [- x]\n", "syntax", 2, 5, "'-' followed by")
    rejects("a: [:x]\n", "unsupported", 2, 5, "':' inside a flow collection")
    rejects("a: [x, |\n  y]\n", "syntax", 2, 8, "block scalars")
    rejects("a: {'k\n  x': 1}\n", "syntax", 2, 5, "one line")
    rejects("a: ['k\n  x': 1]\n", "syntax", 2, 5, "one line")
    rejects("a: ['k' x]\n", "syntax", 2, 9, "expected ',' or ']'")


def test_reserved_indicators_are_refused() -> None:
    rejects("a: @x\n", "syntax", 2, 4, "reserved")
    rejects("a: `x`\n", "syntax", 2, 4, "reserved")
    rejects("a: %x\n", "unsupported", 2, 4, "directives")
    rejects("a: [@x]\n", "syntax", 2, 5, "reserved")


def test_empty_key_is_refused() -> None:
    rejects(": value\n", "syntax", 2, 1, "key is missing")
    rejects("a: {: value}\n", "syntax", 2, 5, "key is missing")


def test_multi_line_implicit_key_is_refused() -> None:
    rejects('"a\n  b": c\n', "syntax", 2, 1, "one line")
    rejects('x: 1\n"a\n  b": c\n', "syntax", 3, 1, "expected a mapping key")


def test_quoted_key_needs_a_space_after_the_colon() -> None:
    rejects('"a":b\nc: 1\n', "syntax", 2, 4, "unexpected text ':b'")
    rejects('x:\n  - "a":b\n', "syntax", 3, 8, "unexpected text ':b'")


def test_content_after_a_top_level_flow_mapping_is_refused() -> None:
    rejects("{a: 1}\nb: 2\n", "syntax", 3, 1, "after the top-level flow mapping")


def test_key_without_colon_is_refused() -> None:
    rejects("a: 1\nb\n", "syntax", 3, 1, "expected a mapping key")


# --- caps ------------------------------------------------------------------------------------------


def test_ten_megabyte_value_is_a_clean_limit_error() -> None:
    doc = b"---\nname: x\ndescription: " + b"a" * 10_000_000 + b"\n---\nbody\n"
    start = time.perf_counter()
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(doc)
    assert time.perf_counter() - start < 2
    assert info.value.kind == "limit"
    assert info.value.line == 2
    assert parse_frontmatter(doc, max_bytes=11_000_000).data["description"] == "a" * 10_000_000


def test_size_cap_counts_utf8_bytes() -> None:
    doc = "---\na: " + "é" * 600 + "\n---\n"  # 1,204 bytes, 604 characters
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(doc, max_bytes=1203)
    assert info.value.kind == "limit"
    assert parse_frontmatter(doc, max_bytes=1204).data["a"] == "é" * 600


def test_size_cap_on_bytes_input_is_exact() -> None:
    doc = ("---\na: " + "é" * 600 + "\n---\n").encode()  # 1,204 bytes of YAML
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(doc, max_bytes=1203)
    assert info.value.kind == "limit"
    assert parse_frontmatter(doc, max_bytes=1204).data["a"] == "é" * 600


def test_size_cap_without_a_closing_line() -> None:
    doc = "---\na: " + "x" * 5000 + "\n"
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(doc, max_bytes=1000)
    assert (info.value.kind, info.value.line) == ("limit", 2)


def test_depth_cap_in_flow_collections() -> None:
    assert load("a: " + "[" * 63 + "]" * 63 + "\n")
    rejects("a: " + "[" * 64 + "]" * 64 + "\n", "limit", 2, 67, "deeper than 64")
    rejects("a: " + "{b: " * 64 + "}" * 64 + "\n", "limit", 2, None, "deeper than 64")


def test_long_run_of_brackets_fails_fast() -> None:
    start = time.perf_counter()
    rejects("a: " + "[" * 500_000 + "\n", "limit", 2, None, "deeper than 64")
    assert time.perf_counter() - start < 1


def test_depth_cap_in_block_collections() -> None:
    nested = "".join(f"{'  ' * n}k{n}:\n" for n in range(63)) + "  " * 63 + "x: 1\n"
    assert load(nested)
    deeper = "".join(f"{'  ' * n}k{n}:\n" for n in range(64)) + "  " * 64 + "x: 1\n"
    rejects(deeper, "limit", 66, None, "deeper than 64")
    dashes = "a: x\nb:\n" + "- " * 70 + "x\n"
    rejects(dashes, "limit", 4, None, "deeper than 64")


def test_key_length_cap() -> None:
    assert load("k" * 1024 + ": v\n")
    rejects("k" * 1025 + ": v\n", "limit", 2, 1, "1025 characters")
    rejects("'" + "k" * 1025 + "': v\n", "limit", 2, 1, "maximum is 1024")
    rejects("a: {" + "k" * 1025 + ": v}\n", "limit", 2, 5, "maximum is 1024")
    rejects("a:\n  b: 1\n  " + "k" * 1025 + ": v\n", "limit", 4, 3, "maximum is 1024")


SHAPES: dict[str, Callable[[int], str]] = {
    "long plain line": lambda n: "a: " + "word " * n + "\n",
    "single-quoted escapes": lambda n: "a: '" + "x''" * n + "'\n",
    "double-quoted escapes": lambda n: 'a: "' + "\\t\\u00e9" * n + '"\n',
    "many keys": lambda n: "".join(f"k{i}: v\n" for i in range(n)),
    "long flow line": lambda n: "a: [" + "x, " * n + "]\n",
    "many flow lines": lambda n: "a: [\n" + "  x,\n" * n + "]\n",
    "long block scalar": lambda n: "a: |\n" + "  line\n" * n,
    "long plain continuation": lambda n: "a: x\n" + "  more\n" * n,
    "run of spaces": lambda n: "a: x" + " " * (10 * n) + "y\n",
    "long sequence": lambda n: "a:\n" + "  - x\n" * n,
    "run of hashes": lambda n: "a: " + "#" * (10 * n) + "\n",
    "deep indentation": lambda n: "a:\n" + " " * (10 * n) + "b\n",
    "many comment lines": lambda n: "# c\n" * n + "a: 1\n",
    "many blank lines in a quoted string": lambda n: 'a: "x' + "\n" * n + '  y"\n',
}


def _best_time(text: str) -> float:
    best = float("inf")
    for _ in range(7):
        start = time.perf_counter()
        parse_frontmatter(text, max_bytes=50_000_000)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("shape", SHAPES)
def test_no_quadratic_blowup_on_large_inputs(shape: str) -> None:
    """32 times the input takes about 32 times as long; a quadratic step would take 1,024 times.

    A complexity check, not a timing: the bound (128 times, plus 50 ms) leaves a factor of four
    for a loaded machine's noise on either measurement (each the best of seven), and a quadratic
    step still exceeds it eight times over.
    """
    small = _best_time(fm(SHAPES[shape](625)))
    large = _best_time(fm(SHAPES[shape](20_000)))
    assert large < 128 * small + 0.05, (small, large)
