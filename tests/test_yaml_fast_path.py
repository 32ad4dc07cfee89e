"""The whole-document fast path of the YAML parser agrees with the general parser.

:func:`skills_core._yaml._fast_document` reads the common shapes of frontmatter (``key: value``
lines, one nested mapping or sequence, one-line flow collections, top-level block scalars) and
gives up on anything else. Whenever it returns a value, that value must be exactly the one the
general parser returns; whenever the general parser raises, the fast path must have given up (so
every error, with its line and column, still comes from the general parser).

``parse_yaml(text, plain_hook=...)`` always takes the general parser (the lint hook needs it), so
it is the reference here.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from frontmatter_helpers import corpus_files, strict_equal
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_core._yaml import MAX_DEPTH, _fast_document, parse_yaml
from skills_core.errors import FrontmatterError
from skills_core.frontmatter import (
    frontmatter_data,
    parse_frontmatter,
    split_frontmatter,
)
from skills_core.jsonvalue import JSONValue


def _general(text: str, max_depth: int = MAX_DEPTH) -> dict[str, JSONValue]:
    return parse_yaml(text, first_line=2, max_depth=max_depth, plain_hook=lambda *args: None)


def _outcome(parse: Callable[[str], dict[str, JSONValue]], text: str) -> tuple[str, object]:
    try:
        return "ok", parse(text)
    except FrontmatterError as exc:
        return "error", (exc.kind, exc.reason, exc.line, exc.column)


def assert_agrees(text: str, max_depth: int = MAX_DEPTH) -> dict[str, JSONValue] | None:
    """Check the fast path (and parse_yaml) against the general parser; return the fast result."""
    general = _outcome(lambda t: _general(t, max_depth), text)
    fast = _fast_document(text, max_depth)
    if fast is not None:
        assert general[0] == "ok", (text, general)
        assert strict_equal(fast, general[1]), (text, fast, general)
    ours = _outcome(lambda t: parse_yaml(t, first_line=2, max_depth=max_depth), text)
    assert ours[0] == general[0], (text, ours, general)
    if ours[0] == "ok":
        assert strict_equal(ours[1], general[1]), (text, ours, general)
    else:
        assert ours == general, text
    return fast


# --- documents the fast path reads ----------------------------------------------------------------

FAST = [
    "name: pdf\ndescription: Extract text, fill forms. Use for PDFs.\nlicense: Apache-2.0\n",
    "a: 1\nb: -2\nc: 0x1F\nd: 0o17\ne: 1.5\nf: 1e3\ng: true\nh: Null\ni: ~\nj: yes\nk: 1_000\n",
    "a: word   \nb:    spaced out  \n",
    "a: C#\nb: http://example.com/x:y\nc: a-b\nd: 100%\n",
    'a: "quoted: # not a comment"\nb: "x"   # a comment\nc: ""\n',
    "a: -x\nb: ?x\nc: :x\nd:\n- -1\n- ?y\n",
    "a: 'single \"quoted\"'\nb: 'x'  # c\nc: ''\nd: 'back\\slash'\n",
    "tags: [productivity, reporting, two words]\nn: [1, -2, 0.5, true, null, x]\ne: [ a ]\n",
    "deps: [crewai>=1.2.0, crewai-tools>=1.2.0, a#b, (x), -b, -#]\n",
    'metadata: {"clawdbot":{"emoji":"\U0001f4cb","requires":{"bins":["planka-cli"]}}}\n',
    'a: {"x": 1, "y": [true, false, null, -0, 9007199254740991], "z": {}}\nb: []\nc: {}\n',
    'a: ["x", "y"]   \nb: { "k" : "v" }\n',
    "metadata:\n  author: me\n  version: '1.0'\n  n: 2\n  tags: [a, b]\nname: x\n",
    'metadata:\n    author: me\n    json: {"a": 1}\nother:\n',
    "a:\nb:   \nc: 1\n",
    "a:\n  b:\n  c: 1\n",
    "requires:\n  mcp:\n    - rube\n    - 'two'\n  other: x\n",
    "requires:\n  mcp:\n  - rube\n  other: x\nz: 1\n",
    'list:\n- a\n- 2\n- "c"\nnext: 1\n',
    "list:\n  - a\n  - b\n",
    "description: |\n  Line one\n    indented\n  line: three # not a comment\n\nname: x\n",
    "description: >-\n  Folded\n  text\n\n  para\n\n\nname: x\n",
    "a: |+\n  keep\n\n\nb: >\n  x\nc: |-\n  y\n",
    "a: |\n\n  \n  text\nb: 1\n",
    "a: |\n\n\nb: |+\n\n\nc: >-\n",
    "a: 1\nb: |\n  x\nc:\n  d: 2\ne: [f]\n",
]


@pytest.mark.parametrize("text", FAST)
def test_the_fast_path_reads_the_common_shapes(text: str) -> None:
    assert assert_agrees(text) is not None


# --- documents it leaves to the general parser ------------------------------------------------------

SLOW = [
    "",
    "a: 1",  # no final line feed (outside the contract of parse_yaml)
    "\n",
    "# comment\na: 1\n",
    "a: 1\n\nb: 2\n",
    "a: 1 # comment\n",
    "a: b: c\n",
    "a: b:\n",
    "a:b\n",
    "a: - b\n",
    "a: &x 1\n",
    "a: *x\n",
    "a: !t 1\n",
    "a: @x\n",
    "a: .inf\n",
    "a: 9007199254740992\n",
    "a: 1e400\n",
    "a: 1\na: 2\n",
    "a:\n  b: 1\n  b: 2\n",
    "a:\n  b: 1\na: 2\n",
    "a:\n- x\na:\n- y\n",
    "a: 1\n  b: 2\n",
    "a:\n  b: 1\n   c: 2\n",
    "a:\n  b: 1\n c: 2\n",
    "  a: 1\n  b: 2\n",
    "a:\n  b:\n    c: 1\n",
    "a: x\n- y\n",
    "a:\n- x\n  - y\n",
    "a:\n  - x\n  b: 1\n",
    "a:\n  b: 1\n  - x\n",
    "a:\n  b: 1\n- x\n",
    "a:\n  b: x\n    - y\n",
    "- a\n- b\n",
    "a:\n-\n",
    "a:\n- [x]\n",
    "a:\n- b: c\n",
    "a: 'it''s'\n",
    'a: "x\\ny"\n',
    'a: "x"y\n',
    'a: "x"#c\n',
    'a: "unterminated\n',
    "a: [b\n  , c]\n",
    "a: [b,]\n",
    "a: [b, [c]]\n",
    "a: [b: c]\n",
    "a: [- b]\n",
    "a: [-, b]\n",
    "a: [?b]\n",
    "a: [.inf]\n",
    "a: [b] # c\n",
    "a: {b: c}\n",
    'a: {"b": 1, "b": 2}\n',
    'a: {"b": {"c": 1}, "d": {"c": 2}}\n',
    'a: {"b": 1.5}\n',
    'a: {"b": NaN}\n',
    'a: {"b": Infinity}\n',
    'a: ["x", NaN]\n',
    'a: {"b": 9007199254740992}\n',
    'a: {"b": ' + "9" * 5000 + "}\n",
    'a: {"b\\"c": 1}\n',
    'a: {"b": 1} x\n',
    'a: {"b": 1}}\n',
    'a: {"b"}\n',
    'a: ["b" "c"]\n',
    'a: {"' + "k" * 1025 + '": 1}\n',
    "a: [" * 70 + "]" * 70 + "\n",
    "a: |2\n   x\n",
    "a: | # c\n  x\n",
    "a: |\n    x\n  y\n",
    "a: |\n   \n  x\n",
    "a: >\n  x\n b\n",
    "a:\n  b: |\n    x\n",
    "a: |\n  x\n# comment\n",
    "a: |\n  x\nb: - y\n",
    "a: \tb\n",
    'a: "\tx"\n',
    "a: -\n",
    "a: ?\n",
    "a: - x\n",
    "a: b\t\n",
    "a: \x01\n",
    "a: b\n---\nc: d\n",
    "...\n",
    "? a\n",
    "<<: {}\n",
    "k" * 1025 + ": 1\n",
    "{a: 1}\n",
    "a: 1\n" + "b:\n  c: [d\n  e]\n",
    "a: [b c\n  d\n  e]\n",
]


@pytest.mark.parametrize("text", SLOW)
def test_the_fast_path_leaves_other_shapes_to_the_general_parser(text: str) -> None:
    assert assert_agrees(text) is None


def test_the_fast_path_honours_max_depth() -> None:
    text = 'a:\n  b: [c]\nd: {"e": {"f": [1]}}\n'
    assert assert_agrees(text) is not None
    for depth in range(6):
        assert_agrees(text, max_depth=depth)
    assert _fast_document("a: 1\n", 2) is None  # below 3 it never tries
    assert _fast_document("a:\n  b: [c]\n", 3) is not None  # the sequence is level 3
    assert _fast_document('a:\n  b: {"c": [1]}\n', 3) is None  # this one would be level 4
    assert _fast_document('a: {"b": [1]}\n', 3) is not None
    assert _fast_document('a: {"b": [1]}\n', 2) is None


# --- generated documents --------------------------------------------------------------------------

_KEYS = st.sampled_from(["a", "b", "name", "k_1", "x.y", "a-b", "9", "true", "<<", "a b", "é"])
_PLAIN = st.sampled_from(
    [
        "word",
        "two words",
        "1",
        "-1",
        "0x1F",
        "1.5",
        ".inf",
        "9007199254740993",
        "null",
        "~",
        "False",
        "a: b",
        "a:",
        "a #c",
        "a#c",
        "http://x",
        ": x",
        "-x",
        "?x",
        "x  ",
        "é😀",
        "a\tb",
        "%x",
        "|",
        ">-",
        "|2",
    ]
)
_QUOTED = st.sampled_from(
    ['"x"', '"a b"  # c', '"a\\nb"', '"a"b"', '""', '"a"#c', '"open', "'x'", "'it''s'", "''", "'a"]
)
_FLOW = st.sampled_from(
    [
        "[a, b]",
        "[a,b,]",
        "[]",
        "[ a , b c ]",
        "[1, true, null, x]",
        "[a: b]",
        "[-a]",
        "[a, [b]]",
        "[a",
        "{}",
        '{"a": 1}',
        '{"a":{"b":[1,2]}}',
        '{"a": 1, "a": 2}',
        '{"a": 1.5}',
        '{"a": "x\\"y"}',
        '{"a": "b"} x',
        '[ "a", b ]',
        "{a: b}",
        '{"a"}',
    ]
)
_VALUES = st.one_of(_PLAIN, _QUOTED, _FLOW, st.just(""))
_INDENTS = st.sampled_from(["", " ", "  ", "   ", "    "])


@st.composite
def _lines(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["key", "key", "key", "nested", "dash", "content", "blank", "odd"]))
    if kind == "key":
        value = draw(_VALUES)
        return f"{draw(_KEYS)}:{' ' if value else ''}{value}"
    if kind == "nested":
        value = draw(_VALUES)
        return f"{draw(_INDENTS)}{draw(_KEYS)}:{' ' if value else ''}{value}"
    if kind == "dash":
        return f"{draw(_INDENTS)}-{' ' + draw(_VALUES)}"
    if kind == "content":
        return f"{draw(_INDENTS)}{draw(st.sampled_from(['text', 'a: b', '- x', '# c', '  deep']))}"
    if kind == "blank":
        return draw(st.sampled_from(["", "  ", "     "]))
    return draw(
        st.sampled_from(["# c", "\t", "---", "...", "a:b", "\x01", "? x", "key: |", "k: >+"])
    )


@settings(max_examples=3000, deadline=None)
@given(st.lists(_lines(), min_size=1, max_size=8))
def test_generated_documents_agree(lines: list[str]) -> None:
    assert_agrees("".join(line + "\n" for line in lines))


@st.composite
def _well_formed(draw: st.DrawFn) -> str:
    """Documents mostly in the fast path's shapes, with an occasional slip."""
    out: list[str] = []
    for key in draw(st.lists(_KEYS, min_size=1, max_size=6, unique=draw(st.booleans()))):
        shape = draw(st.sampled_from(["scalar", "flow", "empty", "map", "seq", "block"]))
        if shape == "scalar":
            out.append(f"{key}: {draw(st.one_of(_PLAIN, _QUOTED))}")
        elif shape == "flow":
            out.append(f"{key}: {draw(_FLOW)}")
        elif shape == "empty":
            out.append(f"{key}:")
        elif shape == "map":
            out.append(f"{key}:")
            indent = draw(st.sampled_from(["  ", "    "]))
            for sub in draw(st.lists(_KEYS, min_size=1, max_size=3)):
                value = draw(st.one_of(_VALUES, st.just("SEQ")))
                if value == "SEQ":
                    out.append(f"{indent}{sub}:")
                    deeper = draw(st.sampled_from([indent, indent + "  "]))
                    out.extend(f"{deeper}- {item}" for item in draw(st.lists(_PLAIN, max_size=3)))
                else:
                    out.append(f"{indent}{sub}:{' ' if value else ''}{value}")
        elif shape == "seq":
            out.append(f"{key}:")
            indent = draw(st.sampled_from(["", "  "]))
            out.extend(
                f"{indent}- {item}"
                for item in draw(st.lists(st.one_of(_PLAIN, _QUOTED), min_size=1, max_size=3))
            )
        else:
            header = draw(st.sampled_from(["|", ">", "|-", ">-", "|+", ">+"]))
            out.append(f"{key}: {header}")
            indent = draw(st.sampled_from(["  ", "   "]))
            for _ in range(draw(st.integers(min_value=0, max_value=4))):
                out.append(
                    draw(
                        st.sampled_from(
                            [
                                f"{indent}text",
                                f"{indent}key: value # x",
                                f"{indent}  more",
                                "",
                                indent,
                                indent + "   ",
                                " text",
                            ]
                        )
                    )
                )
    return "".join(line + "\n" for line in out)


@settings(max_examples=3000, deadline=None)
@given(_well_formed())
def test_well_formed_documents_agree(text: str) -> None:
    assert_agrees(text)


# --- the corpus -------------------------------------------------------------------------------------


def test_the_fast_path_agrees_on_the_whole_corpus() -> None:
    files = corpus_files()
    if not files:  # pragma: no cover - the corpus ships with the repository
        pytest.skip("no corpus")
    fast = 0
    for path in files:
        try:
            text, _ = split_frontmatter(path.read_bytes())
        except FrontmatterError:
            continue
        fast += assert_agrees(text) is not None
    assert fast > 0.8 * len(files)


# --- SKILL.md bytes: the inline split -------------------------------------------------------------


@pytest.mark.parametrize(
    "skill_md",
    [
        b"---\nname: x\ndescription: d\n---\nbody\n",
        b"---\nname: x\ndescription: d\n---",
        b"---\nname: x\n---x\n---\nbody",
        b"---\nname: x\r\ndescription: d\n---\n",
        b"---\nname: \xff\n---\n",
        b"---\nname: \xe2\x82\n---\n",
        b"---\nname: x\n---\r\nbody",
        b"\xef\xbb\xbf---\nname: x\n---\n",
        b"---\r\nname: x\r\n---\r\n",
        b"---\nname: " + b"x" * 100 + b"\n---\n",
        b"---\nname: x\n",
        b"name: x\n",
    ],
)
def test_frontmatter_data_is_parse_frontmatter_data(skill_md: bytes) -> None:
    for max_bytes in (1 << 20, 20, 104, 105, 106):
        try:
            expected: object = parse_frontmatter(skill_md, max_bytes=max_bytes).data
        except FrontmatterError as exc:
            expected = (exc.kind, exc.reason, exc.line, exc.column)
        try:
            got: object = frontmatter_data(skill_md, max_bytes=max_bytes)
        except FrontmatterError as exc:
            got = (exc.kind, exc.reason, exc.line, exc.column)
        assert got == expected, (skill_md, max_bytes)
        try:
            text: object = frontmatter_data(
                skill_md.decode("utf-8", "replace"), max_bytes=max_bytes
            )
        except FrontmatterError:
            text = None
        assert text is None or isinstance(text, dict)


def test_a_plain_scalar_in_a_flow_collection_may_span_several_lines() -> None:
    text = "a: [b\n  c\n  d\n  e, f]\n"
    assert assert_agrees(text) is None
    assert parse_yaml(text) == {"a": ["b c d e", "f"]}
