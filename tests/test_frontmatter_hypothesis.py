"""Property tests for the frontmatter parser (SIL-09, VER-10).

* Round trip: random JSON-compatible values, dumped by PyYAML in block and flow styles with
  varied quoting, line widths and indentation, parse back to exactly the same value.
* Fuzz: arbitrary bytes, arbitrary text, and YAML-looking token soup raise nothing but
  ``FrontmatterError`` (and the validator raises nothing at all).
* Differential fuzz: where PyYAML and we both accept a token soup and both produce only strings,
  nulls and collections (no YAML 1.1 / 1.2 typing differences), the values are equal.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml
from frontmatter_helpers import fm, strict_equal
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from skills_core._yaml import parse_yaml
from skills_core.errors import FrontmatterError
from skills_core.frontmatter import parse_frontmatter
from skills_core.jsonvalue import JSONValue
from skills_core.validation import validate_skill_md

# --- round trip -------------------------------------------------------------------------------------

# Characters we refuse anywhere in the frontmatter even though PyYAML may write them unescaped
# with allow_unicode=True: U+0085, U+2028 and U+2029 are line breaks in YAML 1.1 but text in YAML
# 1.2, and a raw U+FEFF is only allowed inside quoted scalars by YAML 1.2 (see skills_core._yaml).
# Hypothesis never generates lone surrogates unless asked.
_REFUSED_RAW = re.compile("[\x85\u2028\u2029\ufeff]")

# Strings that the YAML 1.2 core schema reads as numbers but YAML 1.1 (PyYAML's resolver) reads
# as strings, e.g. "0o17", "1e3", "1.0e5". PyYAML writes them unquoted because, to it, they are
# plain strings; we would read a number back. That is the documented YAML 1.1/1.2 difference
# (the portability lint warns about it), not a parser bug, so the generator avoids them.
_CORE_NUMBER = re.compile(
    r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
)
_PYYAML_RESOLVER = yaml.resolver.Resolver()


def _unambiguous(text: str) -> bool:
    if _REFUSED_RAW.search(text):
        return False
    if _CORE_NUMBER.fullmatch(text):
        tag = _PYYAML_RESOLVER.resolve(yaml.nodes.ScalarNode, text, (True, False))
        return bool(tag != "tag:yaml.org,2002:str")
    return True


_WORDS = st.lists(
    st.sampled_from(
        [
            "word",
            "x",
            " ",
            "  ",
            "\n",
            "\n\n",
            "\t",
            "#",
            " #",
            ": ",
            ":",
            "- ",
            "-",
            "'",
            '"',
            "\\",
            "é",
            "😀",
            "yes",
            "null",
            "1",
            "0.5",
            "[",
            "]",
            "{",
            "}",
            ",",
            "|",
            ">",
            "~",
            "\x01",
            "...",
            "---",
            "&a",
            "*a",
            "!t",
            "%",
            "@",
            "`",
            "?",
            " \n ",
        ]
    ),
    max_size=12,
).map("".join)
STRINGS = st.one_of(st.text(max_size=40), _WORDS).filter(_unambiguous)
# PyYAML writes empty keys, and keys longer than 128 characters after escaping, as explicit "? "
# keys, which we refuse; non-empty printable ASCII keys of up to 30 characters stay simple keys.
KEYS = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=30
).filter(_unambiguous)
SCALARS: st.SearchStrategy[JSONValue] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    STRINGS,
)
VALUES: st.SearchStrategy[JSONValue] = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(KEYS, children, max_size=4)
    ),
    max_leaves=20,
)
DOCUMENTS = st.dictionaries(KEYS, VALUES, max_size=6)


class StyledStr(str):
    """A string that asks PyYAML's emitter for one scalar style (the emitter may overrule it)."""

    __slots__ = ("style",)
    style: str | None


class _Dumper(yaml.SafeDumper):
    pass


def _represent_styled(dumper: Any, data: StyledStr) -> Any:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style=data.style)


_Dumper.add_representer(StyledStr, _represent_styled)


def _styled(value: JSONValue, styles: list[str | None]) -> object:
    """Wrap every string of ``value`` in a StyledStr, cycling through ``styles``."""
    counter = iter(range(10**9))

    def walk(node: JSONValue) -> object:
        if isinstance(node, str):
            wrapped = StyledStr(node)
            wrapped.style = styles[next(counter) % len(styles)] if styles else None
            return wrapped
        if isinstance(node, list):
            return [walk(item) for item in node]
        if isinstance(node, dict):
            return {key: walk(item) for key, item in node.items()}
        return node

    return walk(value)


DUMP_OPTIONS = st.fixed_dictionaries(
    {
        "default_flow_style": st.sampled_from([False, True, None]),
        "width": st.sampled_from([12, 40, 80, 10_000]),
        "indent": st.sampled_from([2, 3, 4]),
        "allow_unicode": st.booleans(),
    }
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    document=DOCUMENTS,
    styles=st.lists(st.sampled_from([None, "'", '"', "|", ">"]), max_size=5),
    options=DUMP_OPTIONS,
)
def test_round_trip_through_pyyaml_dump(
    document: dict[str, JSONValue], styles: list[str | None], options: dict[str, Any]
) -> None:
    """Whatever PyYAML writes for a JSON value, we read back the same value (VER-10)."""
    dumped = yaml.dump(_styled(document, styles), Dumper=_Dumper, sort_keys=False, **options)
    assert isinstance(dumped, str)
    # After a "keep" block scalar at the very end, PyYAML closes the document with "...", a
    # document end marker we refuse (docs/design.md#d3); in a SKILL.md the closing "---" does that job.
    if dumped.endswith("\n...\n"):
        dumped = dumped[: -len("...\n")]
    parsed = parse_frontmatter("---\n" + dumped + "---\nbody\n").data
    expected: object = document
    reread = yaml.safe_load(dumped)
    if not strict_equal(reread, document):
        # PyYAML's emitter does not always round-trip: with a narrow width it can split a
        # double-quoted line right after the backslash that escapes a leading space, writing
        # "\\" (an escaped backslash). Then the value to match is what PyYAML's own loader
        # reads back from the same text.
        expected = reread
    assert strict_equal(parsed, expected), dumped


# --- fuzz -------------------------------------------------------------------------------------------


def _only_frontmatter_errors(skill_md: bytes | str) -> None:
    error: FrontmatterError | None = None
    try:
        parse_frontmatter(skill_md)
    except FrontmatterError as exc:
        error = exc
    if error is not None:
        assert error.line is not None
        assert error.line >= 1
        assert error.column is None or error.column >= 1
        assert "\n" not in str(error)
    findings = validate_skill_md(skill_md)
    assert isinstance(findings, tuple)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_arbitrary_bytes(data: bytes) -> None:
    _only_frontmatter_errors(data)
    _only_frontmatter_errors(b"---\n" + data + b"\n---\n")


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_arbitrary_text(text: str) -> None:
    _only_frontmatter_errors(text)
    _only_frontmatter_errors("---\n" + text + "\n---\n")
    _only_frontmatter_errors(fm("k: " + text + "\n"))


_TOKENS = [
    "a",
    "b",
    "k",
    " ",
    "  ",
    "   ",
    "\n",
    "\n",
    "\r\n",
    "\t",
    ": ",
    ":",
    "- ",
    "-",
    "[",
    "]",
    "{",
    "}",
    ", ",
    ",",
    '"',
    "'",
    "\\",
    "\\n",
    "\\x4",
    "\\u00e9",
    "#",
    " #c",
    "|",
    ">",
    "|-",
    ">+",
    "|2",
    "x y",
    "\n  ",
    "\n    ",
    "\n- ",
    "\n  - ",
    "k: ",
    "\nk2: ",
    '"q"',
    "'s'",
    "''",
    "true",
    "1",
    "0.5",
    "~",
    "?",
    ".",
    "&",
    "*",
    "!",
    "%",
    "@",
    "`",
    "...",
    "---",
    "\ufeff",
    "\x85",
    "\x00",
    "é",
    "1e999",
    ".inf",
    "9" * 20,
]
SOUP = st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=25).map("".join)


@settings(max_examples=2000, deadline=None)
@given(SOUP)
def test_fuzz_yaml_token_soup(soup: str) -> None:
    _only_frontmatter_errors(fm("k: " + soup + "\n"))
    _only_frontmatter_errors(fm(soup + "\n"))


def _strings_only(value: object) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _strings_only(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_strings_only(v) for v in value)
    return value is None or isinstance(value, str)


@settings(max_examples=2000, deadline=None)
@given(SOUP)
def test_differential_fuzz_against_pyyaml(soup: str) -> None:
    """Where both parsers accept a document of strings, both read the same strings (SIL-09)."""
    text = "k: " + soup.replace("\r", "") + "\n"
    try:
        ours = parse_frontmatter(fm(text)).data
    except FrontmatterError:
        return
    try:
        theirs = yaml.safe_load(text)
    except yaml.YAMLError:
        return
    assume(_strings_only(ours) and _strings_only(theirs))
    assert strict_equal(ours, theirs), text


# --- the fast path agrees with the general code -------------------------------------------------

_LINE_VALUES = st.one_of(
    SOUP.map(lambda soup: soup.replace("\n", " ").replace("\r", "")),
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30),
)


def _outcome(
    skill_md: str, pick: Callable[[dict[str, JSONValue]], JSONValue]
) -> tuple[str, object]:
    try:
        return "ok", pick(parse_frontmatter(skill_md).data)
    except FrontmatterError as exc:
        return "error", (exc.kind, exc.reason)


@settings(max_examples=2000, deadline=None)
@given(_LINE_VALUES)
def test_fast_path_agrees_with_the_general_path(value: str) -> None:
    """``k: <value>`` at the top level takes the fast path; after ``- `` the general code."""

    def top(data: dict[str, JSONValue]) -> JSONValue:
        return data["k"]

    def nested(data: dict[str, JSONValue]) -> JSONValue:
        outer = data["s"]
        assert isinstance(outer, list)
        inner = outer[0]
        assert isinstance(inner, dict)
        return inner["k"]

    fast = _outcome(fm(f"k: {value}\nz: 1\n"), top)
    general = _outcome(fm(f"s:\n- k: {value}\nz: 1\n"), nested)
    if fast[0] == "ok" or general[0] == "ok":
        assert fast[0] == general[0], (fast, general)
        assert strict_equal(fast[1], general[1]), (fast, general)


def _parse_or_error(
    text: str, hook: Callable[..., None] | None
) -> tuple[dict[str, JSONValue] | None, tuple[str, int | None, int | None] | None]:
    try:
        return parse_yaml(text, plain_hook=hook), None
    except FrontmatterError as exc:
        return None, (exc.kind, exc.line, exc.column)


@settings(max_examples=1000, deadline=None)
@given(SOUP)
def test_the_lint_hook_does_not_change_the_result(soup: str) -> None:
    text = "k: " + soup.replace("\r", "") + "\n"
    seen: list[object] = []
    plain, plain_error = _parse_or_error(text, None)
    hooked, hooked_error = _parse_or_error(text, lambda *args: seen.append(args))
    assert plain_error == hooked_error
    assert strict_equal(hooked, plain)
