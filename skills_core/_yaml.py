"""A zero-dependency parser for the YAML subset that SKILL.md frontmatter uses.

Theory of operation
===================

Decision 3 (docs/design.md#d3) fixes the model: YAML 1.2 with the core schema, no timestamps, and a short list
of constructs that are refused with a located :class:`~skills_core.errors.FrontmatterError` instead
of being given a meaning. Hosts compare the parsed frontmatter field by field with JSON that a
server published (VER-10, VER-11, SIL-09), so a construct that two parsers read differently is a
way to smuggle a field past that check. Where the YAML 1.2 specification and the YAML 1.1 parsers
that most servers use (PyYAML, libyaml) disagree, we refuse the input rather than pick a side,
unless real skills need it (see "Leniencies" below).

The input is the frontmatter text *without* its ``---`` delimiters, with ``\\n`` line breaks only
(``frontmatter.py`` turns CRLF and CR into LF and guarantees that the text is empty or ends with a
line feed). Parsing is line oriented:

1. Two sweeps over the whole text refuse characters outside YAML's printable set (plus the four
   characters below) and document markers (``---``/``...`` at column 0). Both run in C: a
   ``bytes.translate`` for ASCII text (a regular expression otherwise), and ``str.find`` before
   a regular expression locates a marker.
2. A recursive descent over the lines builds block mappings and block sequences from indentation.
   Every block node ends at the end of a line, so each function returns the index of the first
   line it did not consume.
3. Scalars and flow collections are read inside lines with precompiled regular expressions and
   ``str.find``; they may continue on later lines (folding), and flow collections walk lines with
   a ``(line, column)`` cursor. No function steps through a line one character at a time in
   Python, and every line is visited a bounded number of times, so the cost is linear in the
   input (no quadratic cases: a long line of ``[`` hits the depth cap, long quoted strings are
   handled by ``re.sub``, runs of spaces by ``re.match``).
4. Two fast paths, each falling back to the general code (which gives the same result) on
   anything unusual. The common line ``key: plain value`` or ``key: "double quoted"`` in a block
   mapping goes through one regular expression and a few ``str`` methods
   (:meth:`_Parser._block_mapping`). Before that, :func:`_fast_document` tries the shape of
   nearly every real frontmatter in one go: every line is ``key: value`` at column 0, or at one
   deeper indentation right after a ``key:`` with no value (one nested mapping), where a value
   is a one-line plain scalar, a quoted scalar without escapes, a flow sequence of plain words,
   or a one-line flow collection of JSON strings, integers, booleans and nulls (read by the
   ``json`` module's C scanner). Two regular expressions check and split the whole text, so
   Python touches each line once; it gives up (returns None) on the first doubt, so every
   error still comes from the general code, with its line and column.

Locations are opt-in. Given ``key_spots`` or ``value_spots`` (or the portability lint's
``plain_hook``), the parse skips :func:`_fast_document` (step 4; the block-mapping fast loop still
runs, and records as it goes) and notes where each mapping key and each value or sequence item
starts, by its path. Without them nothing is recorded, and the cost is one ``is None`` test per
node of the general code.

Plain scalars resolve per the YAML 1.2 core schema (``null``/``~``/empty, ``true``/``false`` in
three spellings, decimal, ``0o`` and ``0x`` integers, floats); everything else, dates, ``yes`` and
``1_000`` included, is a string. Keys are never resolved: ``1: a`` has the key ``"1"``.

Refused, each with its line and column: anchors, aliases, tags, directives, merge keys (a plain
``<<`` key), ``?`` complex keys and collections as keys, duplicate keys at any depth (the message
names the first occurrence), tabs outside quoted and block scalars, characters outside YAML's
printable set, a non-mapping top level, ``.nan``/``.inf``, floats that overflow, integers beyond
``±(2**53 - 1)`` (SIL-09: no JSON peer represents them exactly), document markers, and input
past the depth and key-length caps below. Decisions where YAML 1.2 and YAML 1.1 differ:

* U+0085, U+2028 and U+2029 are line breaks in YAML 1.1 and ordinary characters in YAML 1.2; a
  U+FEFF byte order mark is allowed only inside quoted scalars by YAML 1.2.2. All four are refused
  anywhere in the text (their escapes ``\\N``, ``\\L``, ``\\P``, ``\\uFEFF`` are fine).
* Tabs are refused except inside quoted scalars and inside block-scalar content (after the
  indentation). YAML 1.2 also allows them as separators, PyYAML's pure-Python scanner does not.
* ``#`` starts a comment only after a space or at the start of a line (YAML 1.2); PyYAML also
  accepts ``"a"#c`` and ``[a,#c``. We refuse those.
* In flow collections a plain scalar may not start with ``?`` or ``:`` (YAML 1.1 reads them as
  indicators, YAML 1.2 as text), nor with ``-`` followed by a space or a flow indicator.
* ``\\u`` escapes that denote a surrogate are refused (PyYAML makes a lone surrogate, libyaml
  fails, a JSON encoder would later pair them).
* Keys (implicit or in flow mappings) must fit on one line; a key with an empty value is fine
  (``{a, b: 1}``), an empty key (``: x``) is not.
* A document end marker (``...``) is refused, although PyYAML ignores it.

Leniencies (the places we accept what YAML 1.2 does not): YAML 1.2 wants every line of a flow
collection or of a multi-line quoted scalar indented more than the block collection around it.
PyYAML, libyaml and js-yaml do not check, and a real skill closes ``metadata: {`` with ``}`` at
column 0. So a line whose first character is a closing ``]`` or ``}``, or the closing quote of a
quoted scalar, may sit at any indentation. Every other line of a flow collection, and every
continuation line of a quoted or plain scalar, must be indented more than its parent, so no
column-0 ``key: value`` line can hide inside a value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from .errors import FrontmatterError
from .spec import MAX_SAFE_INTEGER  # SIL-09: integers past it fail verification

if TYPE_CHECKING:
    from .jsonvalue import JSONValue

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_DEPTH",
    "MAX_KEY_LENGTH",
    "Path",
    "PlainHook",
    "Spots",
    "parse_yaml",
]

#: Default cap on the frontmatter's size in UTF-8 bytes (1 MiB). The largest frontmatter in the
#: corpus of 4,986 real skills is 2,722 bytes (median 279), so this leaves a factor of 380 while
#: keeping a hostile SKILL.md from tying up a host; callers may raise it per call.
DEFAULT_MAX_BYTES: Final = 1024 * 1024
#: Maximum nesting of collections (block and flow together). The corpus nests at most 5 levels;
#: PyYAML has no cap and dies with RecursionError near 1,000. 64 keeps our recursion far below
#: Python's default limit on every path.
MAX_DEPTH: Final = 64
#: Longest key, in characters. YAML 1.2 (section 7.4) limits implicit keys to 1,024 characters;
#: we apply the same cap to every key, quoted and flow keys included.
MAX_KEY_LENGTH: Final = 1024

#: A location inside the parsed value: mapping keys and sequence indexes, outermost first.
Path = tuple[str | int, ...]
#: Called once per plain scalar when given to :func:`parse_yaml`, as
#: ``hook(path, line, column, text, is_key)``; ``line`` and ``column`` are 1-based. The portability
#: lint uses it to see the source text of values other parsers type differently.
PlainHook = Callable[[Path, int, int, str, bool], None]
#: Where nodes start, filled by :func:`parse_yaml` when given: ``{path: (line, column)}``, both
#: 1-based, ``line`` counted from ``first_line``, ``column`` in characters.
Spots = dict[Path, tuple[int, int]]

# --- Characters -----------------------------------------------------------------------------------

# YAML 1.2 c-printable is TAB, LF, CR, x20-x7E, x85, xA0-xD7FF, xE000-xFFFD, x10000-x10FFFF.
# We also refuse CR (frontmatter.py has already turned it into LF), x85, U+2028, U+2029 and U+FEFF
# (see the module docstring).
# Written as the short list of refused characters, never as the long list of allowed ones: the
# regex compiler needs about 1 ms for the former and 9 ms for the latter, and every start-up pays.
_REFUSED_RANGES: Final = "\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff"
# The same, less TAB and LF (x09, x0A): the characters a YAML text may not hold anywhere.
_FORBIDDEN_CHAR = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)
_CHAR_REASONS: Final = {
    "\x85": "U+0085 NEXT LINE is a line break in YAML 1.1 and text in YAML 1.2; write \\N in a "
    "double-quoted string",
    "\u2028": "U+2028 LINE SEPARATOR is a line break in YAML 1.1 and text in YAML 1.2; write \\L "
    "in a double-quoted string",
    "\u2029": "U+2029 PARAGRAPH SEPARATOR is a line break in YAML 1.1 and text in YAML 1.2; write "
    "\\P in a double-quoted string",
    "\ufeff": "a byte order mark (U+FEFF) inside the frontmatter is not supported; write \\uFEFF in "
    "a double-quoted string",
}
_ASCII_ALLOWED: Final = bytes([0x09, 0x0A, *range(0x20, 0x7F)])
# A document marker: "---" or "..." at column 0 followed by whitespace or the end of the line.
_DOC_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\n]|\Z)", re.MULTILINE)

# Characters that cannot start a plain scalar (c-indicator); "-", "?" and ":" can when a
# non-space character follows.
_INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")

# The fast path: a simple key (at most MAX_KEY_LENGTH characters), a colon, then spaces or the
# end of the line; and a double-quoted value without escapes, closed on its line, then spaces or
# a comment.
_FAST_KEY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]{0,1023}):(?: +|\Z)").match
_FAST_DQ = re.compile(r'"([^"\\]*)"(?: *| +#.*)\Z').fullmatch

_SPACES = re.compile(" *")
# Inside a double-quoted scalar: everything up to the closing quote or a trailing backslash.
_DQ_BODY = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+')
_SQ_BODY = re.compile(r"[^']*+(?:''[^']*+)*+")
_DQ_ESCAPE = re.compile(r"\\(?:([xuU])([0-9A-Fa-f]*)|(.))")
_HEX_LENGTH: Final = {"x": 2, "u": 4, "U": 8}
_SIMPLE_ESCAPES: Final = {
    "0": "\x00",
    "a": "\x07",
    "b": "\x08",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}

# Plain scalars in flow context: words of non-space characters other than flow indicators, where
# ":" counts only when a "safe" character follows and "#" only inside a word, joined by spaces.
_F_WORD_REST = r"(?:[^ \t,\[\]{}:]++|:(?=[^ \t,\[\]{}]))*+"
_F_NEXT_WORD = r"(?:[^ \t,\[\]{}:#]|:(?=[^ \t,\[\]{}]))" + _F_WORD_REST
_FLOW_RUN = re.compile(
    r"(?:[^ \t,\[\]{}:]|:(?=[^ \t,\[\]{}]))" + _F_WORD_REST + r"(?: ++" + _F_NEXT_WORD + r")*+"
)
_FLOW_CONTINUATION = re.compile(r"(?:" + _F_NEXT_WORD + r"(?: ++" + _F_NEXT_WORD + r")*+)?+")

_BLOCK_HEADER = re.compile(r"([|>])(?:([1-9])([-+]?)|([-+])([1-9]?))?(?: *| +#.*)\Z")

# --- Core-schema resolution -----------------------------------------------------------------------

_WORDS: Final[dict[str, JSONValue]] = {
    "~": None,
    "null": None,
    "Null": None,
    "NULL": None,
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
}
_NUMBER_START: Final = frozenset("0123456789+-.")
_DECIMAL = re.compile(r"[-+]?[0-9]+")
_OCTAL = re.compile(r"0o[0-7]+")
_HEXADECIMAL = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF_NAN = re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")


def parse_yaml(
    text: str,
    *,
    first_line: int = 1,
    max_depth: int = MAX_DEPTH,
    plain_hook: PlainHook | None = None,
    key_spots: Spots | None = None,
    value_spots: Spots | None = None,
) -> dict[str, JSONValue]:
    """Parse frontmatter YAML text into JSON-compatible values.

    Locations are opt-in: without ``plain_hook``, ``key_spots`` and ``value_spots`` the parse
    takes its fast paths and records nothing.

    Args:
        text: The YAML text, LF line breaks only, empty or ending with a line feed.
        first_line: The line number (in the SKILL.md) of the text's first line; errors and hook
            calls report line numbers relative to it.
        max_depth: Maximum nesting of collections.
        plain_hook: Called for every plain scalar (keys included); see :data:`PlainHook`.
        key_spots: Filled with where each mapping key starts, by the path of its member.
        value_spots: Filled with where each value and sequence item starts, by its path. A
            member with no value (``key:``, ``{a}``) has no spot here.

    Returns:
        The top-level mapping, in document order.

    Raises:
        FrontmatterError: The text is outside the supported subset; ``line`` and ``column`` say
            where.
    """
    if plain_hook is None and key_spots is None and value_spots is None:
        # The fast path accepts only text that the two sweeps below would let through.
        fast = _fast_document(text, max_depth)
        if fast is not None:
            return fast
    # ASCII text (nearly all frontmatter) is checked with bytes.translate, which deletes the
    # allowed bytes in one C loop; only when something is left does the regex locate it.
    bad = (
        _FORBIDDEN_CHAR.search(text)
        if not text.isascii() or text.encode("ascii").translate(None, _ASCII_ALLOWED)
        else None
    )
    if bad is not None:
        char = bad.group()
        reason = _CHAR_REASONS.get(char, f"character U+{ord(char):04X} is not allowed in YAML")
        _raise_at_offset(text, bad.start(), first_line, reason, "syntax")
    marker = (
        _DOC_MARKER.search(text)
        if "\n---" in text or "\n..." in text or text.startswith(("---", "..."))
        else None
    )
    if marker is not None:
        _raise_at_offset(
            text,
            marker.start(),
            first_line,
            f"document marker {marker.group()!r} inside the frontmatter (only one YAML document "
            "is allowed)",
            "unsupported",
        )
    return _Parser(
        text, first_line, max_depth, plain_hook, keys_at=key_spots, values_at=value_spots
    ).document()


def _raise_at_offset(text: str, offset: int, first_line: int, reason: str, kind: str) -> None:
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1)
    raise FrontmatterError(reason, kind=kind, line=first_line + line, column=column + 1)


class _UnrepresentableError(Exception):
    """A plain scalar that resolves to a number JSON cannot carry; the caller adds the place."""


def _resolve(text: str) -> JSONValue:
    """Resolve a (non-empty) plain scalar per the YAML 1.2 core schema.

    Raises:
        _UnrepresentableError: NaN, an infinity, a float that overflows, or an integer beyond
            ±(2**53 - 1).
    """
    if text in _WORDS:
        return _WORDS[text]
    if text[0] not in _NUMBER_START:
        return text
    if _DECIMAL.fullmatch(text):
        value = _integer(text.lstrip("+-").lstrip("0"), 10, text)
        return -value if text[0] == "-" else value
    if _OCTAL.fullmatch(text):
        return _integer(text[2:].lstrip("0"), 8, text)
    if _HEXADECIMAL.fullmatch(text):
        return _integer(text[2:].lstrip("0"), 16, text)
    if _FLOAT.fullmatch(text):
        number = float(text)
        if math.isinf(number):
            raise _UnrepresentableError(f"the number {_short(text)} is too large for a JSON number")
        return number
    if _INF_NAN.fullmatch(text):
        raise _UnrepresentableError(
            f"{text} is not a JSON number (infinities and NaN are not supported); quote it"
        )
    return text


def _integer(digits: str, base: int, text: str) -> int:
    # ``digits`` has no sign and no leading zeros, so its length bounds the magnitude before int()
    # runs (int() refuses strings over 4,300 digits, and we want our own error anyway).
    value = int(digits or "0", base) if len(digits) <= 20 else MAX_SAFE_INTEGER + 1
    if value > MAX_SAFE_INTEGER:
        raise _UnrepresentableError(
            f"the integer {_short(text)} is beyond ±(2**53 - 1), which JSON peers cannot hold "
            "exactly; quote it"
        )
    return value


# --- The whole-document fast path ---------------------------------------------------------------

# A character YAML allows in the text, other than TAB and LF (the complement of _FORBIDDEN_CHAR).
_FAST_CHAR = "[^" + _REFUSED_RANGES + "]"
_FAST_NON_SPACE = "[^ " + _REFUSED_RANGES + "]"
_FAST_KEY_TEXT = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,1023}"
# One line: indentation, then "key:" or "-" (a sequence entry), then after spaces the rest of the
# line up to its last non-space character (empty when there is none), as (indentation, key,
# dash, rest).
# When every line of a text matches, the text has no forbidden character, no tab and no
# document marker, which is what the two sweeps of parse_yaml look for.
_FAST_LINES = re.compile(
    r"^( *+)(?:(" + _FAST_KEY_TEXT + r"):|(-)(?= ))"
    r"(?: ++(" + _FAST_CHAR + "*" + _FAST_NON_SPACE + r"))?+ *+\n",
    re.MULTILINE,
).findall
# A top-level block scalar ("key: |", "key: >-", ...) and its content lines (empty, or indented).
_FAST_BLOCK_SCALAR = re.compile(
    r"^(" + _FAST_KEY_TEXT + r"): ++([|>])([-+]?) *+\n((?:(?: ++" + _FAST_CHAR + r"*+)?\n)*+)",
    re.MULTILINE,
).split
# A quoted value without escapes (and no '' inside single quotes), then spaces or a comment.
_FAST_DOUBLE_QUOTED = re.compile(r'"([^"\\]*+)"(?: *+| ++#.*+)').fullmatch
_FAST_SINGLE_QUOTED = re.compile(r"'([^']*+)'(?: *+| ++#.*+)").fullmatch
# A flow sequence of plain scalars (no ':', no '#' after a space, and no indicator first but a
# "-" that a word character follows), joined by commas.
_FAST_WORD = (
    r"(?:[^-?:,\[\]{}#&*!|>'\"%@` \t\n]|-(?=[^ \t\n,\[\]{}:]))[^ \t\n,\[\]{}:]*+"
    r"(?: ++[^ \t\n,\[\]{}:#][^ \t\n,\[\]{}:]*+)*+"
)
_FAST_WORDS = re.compile(
    r"\[ *+((?:" + _FAST_WORD + r" *+, *+)*+" + _FAST_WORD + r") *+\] *+"
).fullmatch
# Every string of JSON text without escapes, and whether a colon follows it (it is then a key).
_FAST_JSON_STRINGS = re.compile(r'"([^"]*+)" *+(:?)').findall


class _NotFastError(Exception):
    """The fast path gives up; the general parser reads the text (and reports any error)."""


def _not_fast(_text: str) -> JSONValue:
    raise _NotFastError


def _fast_int(text: str) -> int:
    value = int(text)
    if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return value
    raise _NotFastError


# JSON and YAML 1.2 read the same text the same way when it has no escapes (checked apart), no
# floats, no NaN or Infinity, and integers within +-(2**53 - 1): the hooks give up on the rest.
_JSON_DECODER: Final = json.JSONDecoder(
    parse_float=_not_fast, parse_int=_fast_int, parse_constant=_not_fast
)


def _fast_flow(raw: str, depth: int, max_depth: int) -> JSONValue:
    """A one-line flow collection in ``raw`` (trailing spaces allowed) at nesting ``depth``."""
    if raw[0] == "[":
        words = _FAST_WORDS(raw)
        if words is not None:  # one level, at most 3 (_fast_document needs max_depth >= 3)
            items: list[JSONValue] = []
            for word in words.group(1).split(","):
                item = word.strip(" ")
                items.append(_resolve(item) if item[0] in _NUMBER_START or item in _WORDS else item)
            return items
    # Every "[" or "{" (even inside a string) may open a level: a bound, not a count.
    if "\\" in raw or depth + raw.count("[") + raw.count("{") > max_depth:
        raise _NotFastError
    keys = [key for key, colon in _FAST_JSON_STRINGS(raw) if colon]
    # Keys unique in the whole text are unique in each object; JSON keeps the last of two.
    if len(set(keys)) != len(keys) or (keys and max(map(len, keys)) > MAX_KEY_LENGTH):
        raise _NotFastError
    try:
        value, end = _JSON_DECODER.raw_decode(raw)
    except ValueError:
        raise _NotFastError from None
    if raw[end:].strip(" "):
        raise _NotFastError
    decoded: JSONValue = value  # what json decodes is JSON
    return decoded


def _fast_quoted(raw: str) -> str:
    """A one-line quoted scalar without escapes, trailing spaces allowed; anything else gives up."""
    found = (
        _FAST_DOUBLE_QUOTED(raw)
        if raw[0] == '"'
        else _FAST_SINGLE_QUOTED(raw)
        if raw[0] == "'"
        else None
    )
    if found is None:
        raise _NotFastError
    return found.group(1)


def _fast_value(raw: str, in_sequence: bool, depth: int, max_depth: int) -> JSONValue:
    """The value ``raw`` (no trailing spaces) of an entry at nesting ``depth``, or give up.

    One-line plain scalars, quoted scalars without escapes and (not in sequences) the flow
    collections of :func:`_fast_flow`.
    """
    first = raw[0]
    # A plain scalar starts with a character that is not an indicator, or with "-", "?" or ":"
    # followed by one that is not a space.
    if first not in _INDICATORS or (first in "-?:" and raw[1:2] not in ("", " ")):
        # It must not hold ": " or " #" or end with ":" (other constructs); the callers make
        # sure that the next line does not continue it.
        if ": " in raw or raw[-1] == ":" or " #" in raw:
            raise _NotFastError
        return _resolve(raw) if first in _NUMBER_START or raw in _WORDS else raw
    if first in "[{" and not in_sequence:
        return _fast_flow(raw, depth, max_depth)
    return _fast_quoted(raw)


def _fast_lines(text: str, result: dict[str, JSONValue], max_depth: int) -> None:
    """Add the entries of ``text`` to ``result``, or raise _NotFastError.

    Every line must be ``key: value`` or ``key:`` at column 0, or, after a ``key:`` with no
    value, one level of ``key: value`` lines at one deeper indentation (a mapping) or of
    ``- value`` lines at one indentation (a sequence of scalars); a ``key:`` of such a mapping
    may hold a sequence too. Values are those of :func:`_fast_value`.
    """
    lines = _FAST_LINES(text)
    if len(lines) != text.count("\n"):
        raise _NotFastError  # a line of another shape: a comment, a blank line, a scalar...
    before = len(result)
    # The lines "key: value" at column 0 first, inline; _fast_nested takes over at the first other.
    for done, (indent, key, _dash, raw) in enumerate(lines):
        if indent or not raw or not key:
            _fast_nested(lines, done, result, before + done, max_depth)
            return
        first = raw[0]
        if first in _INDICATORS:
            result[key] = _fast_value(raw, False, 1, max_depth)
        elif ": " in raw or raw[-1] == ":" or " #" in raw:
            raise _NotFastError  # as in _fast_value
        else:
            result[key] = _resolve(raw) if first in _NUMBER_START or raw in _WORDS else raw
    if len(result) - before != len(lines):
        raise _NotFastError  # a duplicate key


def _fast_nested(
    lines: list[tuple[str, str, str, str]],
    start: int,
    result: dict[str, JSONValue],
    expected: int,
    max_depth: int,
) -> None:
    """:func:`_fast_lines` from ``lines[start]`` on, with nested mappings and sequences.

    ``result`` should hold ``expected`` keys by then (fewer means a duplicate key).
    """
    made: list[dict[str, JSONValue] | list[JSONValue]] = []
    nested: dict[str, JSONValue] | None = None  # the open nested mapping
    nested_indent = ""
    items: list[JSONValue] | None = None  # the open sequence
    items_indent = ""
    items_nested = False  # whether the open sequence is a value of the nested mapping
    top_key: str | None = None  # a top-level key with no value yet
    nested_key: str | None = None  # a key of the nested mapping with no value yet
    value: JSONValue
    tops = 0  # top-level entries
    for index in range(start, len(lines)):
        indent, key, dash, raw = lines[index]
        if raw:
            value = _fast_value(raw, bool(dash), 2 if indent else 1, max_depth)
        elif dash:
            raise _NotFastError  # an empty entry, or a collection inside a sequence
        else:
            value = None
        if key:
            if not indent:
                result[key] = value
                tops += 1
                top_key = None if raw else key
                nested = items = nested_key = None
                continue
            if items is not None:
                if not items_nested or indent != nested_indent:
                    raise _NotFastError
                items = None
            if nested is None:
                if top_key is None:
                    raise _NotFastError
                nested = result[top_key] = {}
                made.append(nested)
                nested_indent = indent
                top_key = None
            elif indent != nested_indent:
                raise _NotFastError
            nested[key] = value
            nested_key = None if raw else key
        elif items is not None:
            if indent != items_indent:
                raise _NotFastError
            items.append(value)
        elif top_key is not None:
            items = result[top_key] = [value]
            made.append(items)
            items_indent = indent
            items_nested = False
            top_key = None
        elif nested_key is not None and nested is not None and len(indent) >= len(nested_indent):
            items = nested[nested_key] = [value]
            made.append(items)
            items_indent = indent
            items_nested = True
            nested_key = None
        else:
            raise _NotFastError
    # Each line added one entry somewhere; a duplicate key adds none.
    if len(result) != expected + tops or sum(map(len, made)) != len(lines) - start - tops:
        raise _NotFastError


def _fast_block_scalar(style: str, chomp: str, content: str) -> str:
    """The value of a top-level block scalar whose content lines are ``content``."""
    lines = content.split("\n")
    lines.pop()  # content is empty or ends with "\n"
    first = 0
    while first < len(lines) and not lines[first].lstrip(" "):
        first += 1
    if first == len(lines):
        # No content line: only empty lines, which only "keep" chomping retains.
        return "\n" * len(lines) if chomp == "+" else ""
    indent = len(lines[first]) - len(lines[first].lstrip(" "))
    if any(len(empty) > indent for empty in lines[:first]):
        raise _NotFastError  # a leading empty line wider than the content (an error)
    pieces = []
    for line in lines:
        if line[:indent].strip(" "):
            raise _NotFastError  # a less indented line (an error)
        pieces.append(line[indent:])
    return _block_value(style, chomp, pieces)


def _fast_document(text: str, max_depth: int) -> dict[str, JSONValue] | None:
    """Parse the common shape of frontmatter (module docstring, 4), or return None.

    None means "not sure": the text may still be valid, and the general parser decides. A result
    is always the one the general parser gives.
    """
    if max_depth < 3 or text[-1:] != "\n":
        return None
    result: dict[str, JSONValue] = {}
    try:
        _fast_lines(text, result, max_depth)
        return result
    except (_NotFastError, _UnrepresentableError):
        if "|" not in text and ">" not in text:
            return None
    # Top-level block scalars, and the other entries around them.
    parts = _FAST_BLOCK_SCALAR(text)
    if len(parts) == 1:
        return None
    result = {}
    try:
        for index in range(0, len(parts) - 1, 5):
            _fast_lines(parts[index], result, max_depth)
            key, style, chomp, content = parts[index + 1 : index + 5]
            if key in result:
                return None
            result[key] = _fast_block_scalar(style, chomp, content)
        _fast_lines(parts[-1], result, max_depth)
    except (_NotFastError, _UnrepresentableError):
        return None
    return result


def _skip_spaces(line: str, col: int) -> int:
    """Index of the first character of ``line`` at or after ``col`` that is not a space."""
    if line[col : col + 1] != " ":
        return col
    return _match_end(_SPACES, line, col + 1)


def _match_end(pattern: re.Pattern[str], line: str, col: int) -> int:
    """End of the match of ``pattern`` at ``col``; only for patterns that cannot fail there."""
    match = pattern.match(line, col)
    assert match is not None  # each pattern used here matches the empty string, or a known char
    return match.end()


def _comment_start(line: str, start: int, end: int) -> int:
    """Index of the space before the first " #" in ``line[start:end]``, or -1.

    Searching for the rare "#" and checking the character before it is much faster than
    ``find(" #")``, whose first character (a space) is everywhere.
    """
    k = line.find("#", start, end)
    while k != -1 and line[k - 1] != " ":
        k = line.find("#", k + 1, end)
    return k - 1 if k != -1 else -1


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _show(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:57] + "...")


class _Parser:
    """One parse: the lines, the caps, and the recursive descent over them.

    Positions are (line index, column), both 0-based; errors add ``first_line`` and 1.
    """

    __slots__ = ("first_line", "hook", "keys_at", "lines", "max_depth", "n", "values_at")

    def __init__(
        self,
        text: str,
        first_line: int,
        max_depth: int,
        hook: PlainHook | None,
        *,
        keys_at: Spots | None = None,
        values_at: Spots | None = None,
    ) -> None:
        lines = text.split("\n")
        # The text is empty or ends with "\n", so the last element is the empty remainder.
        lines.pop()
        self.lines = lines
        self.n = len(lines)
        self.first_line = first_line
        self.max_depth = max_depth
        self.hook = hook
        self.keys_at = keys_at
        self.values_at = values_at

    # --- errors and small helpers ---------------------------------------------------------------

    def error(self, reason: str, kind: str, i: int, col: int) -> FrontmatterError:
        return FrontmatterError(reason, kind=kind, line=self.first_line + i, column=col + 1)

    def _resolve(self, text: str, i: int, col: int) -> JSONValue:
        try:
            return _resolve(text)
        except _UnrepresentableError as exc:
            raise self.error(str(exc), "unsupported", i, col) from None

    def _depth_error(self, i: int, col: int) -> FrontmatterError:
        return self.error(f"collections nest deeper than {self.max_depth} levels", "limit", i, col)

    def _tab_error(self, i: int, col: int) -> FrontmatterError:
        return self.error(
            "tab character outside a quoted or block scalar (YAML forbids tabs in indentation; "
            "use spaces)",
            "syntax",
            i,
            col,
        )

    def _mapping_value_error(self, i: int, col: int) -> FrontmatterError:
        return self.error(
            "mapping values are not allowed here: a plain value cannot contain ': ' (quote the "
            "value)",
            "syntax",
            i,
            col,
        )

    def _next_content(self, i: int) -> tuple[int, int]:
        """Skip blank and comment lines from line ``i``; return (line, indentation) or (n, -1)."""
        lines = self.lines
        n = self.n
        while i < n:
            line = lines[i]
            rest = line.lstrip(" ")
            if rest and rest[0] != "#":
                indent = len(line) - len(rest)
                if rest[0] == "\t":
                    raise self._tab_error(i, indent)
                return i, indent
            i += 1
        return n, -1

    def _end_of_line(self, i: int, col: int) -> None:
        """Require only spaces and an optional comment from ``col`` to the end of line ``i``."""
        line = self.lines[i]
        end = _skip_spaces(line, col)
        if end == len(line) or (line[end] == "#" and end > col):
            return
        char = line[end]
        if char == "\t":
            raise self._tab_error(i, end)
        if char == ":" and line[end + 1 : end + 2] in ("", " "):
            raise self.error(
                "mapping values are not allowed here (a key cannot follow a value on its line)",
                "syntax",
                i,
                end,
            )
        raise self.error(f"unexpected text {_show(line[end:])} after a value", "syntax", i, end)

    def _node_start_error(self, i: int, col: int, *, flow: bool) -> FrontmatterError:
        """The error for a node that starts with an indicator that cannot start it."""
        line = self.lines[i]
        char = line[col]
        if line[col + 1 : col + 2] == "\t":
            return self._tab_error(i, col + 1)
        if char == "&":
            return self.error("anchors ('&') are not supported", "unsupported", i, col)
        if char == "*":
            return self.error("aliases ('*') are not supported", "unsupported", i, col)
        if char == "!":
            return self.error("tags ('!') are not supported", "unsupported", i, col)
        if char == "%":
            return self.error(
                "directives ('%') are not supported, and '%' cannot start a plain scalar; quote "
                "the value",
                "unsupported",
                i,
                col,
            )
        if char == "?":
            return self.error(
                "complex keys ('?') are not supported"
                + ("; quote a value that starts with '?'" if flow else ""),
                "unsupported",
                i,
                col,
            )
        if char == ":":
            if flow and line[col + 1 : col + 2] not in ("", " ", ",", "[", "]", "{", "}"):
                return self.error(
                    "a value starting with ':' inside a flow collection is read differently by "
                    "YAML 1.1 and YAML 1.2; quote it",
                    "unsupported",
                    i,
                    col,
                )
            return self.error("a mapping key is missing before ':'", "syntax", i, col)
        if char in "|>":
            return self.error(
                "block scalars ('|', '>') are not allowed inside flow collections",
                "syntax",
                i,
                col,
            )
        if char == "-":
            return self.error(
                "'-' followed by a space or a flow indicator cannot start a value here",
                "syntax",
                i,
                col,
            )
        if char == "#":
            return self.error(
                "'#' cannot start a value (a comment needs a space before it)", "syntax", i, col
            )
        if char in ",]}":
            return self.error(f"a value is missing before {char!r}", "syntax", i, col)
        return self.error(
            f"{char!r} is reserved and cannot start a plain scalar; quote the value",
            "syntax",
            i,
            col,
        )

    def _key(self, text: str, i: int, col: int, path: Path, *, plain: bool) -> str:
        """Check a key against the caps and report it to the hook."""
        if len(text) > MAX_KEY_LENGTH:
            raise self.error(
                f"key is {len(text)} characters long; the maximum is {MAX_KEY_LENGTH}",
                "limit",
                i,
                col,
            )
        if plain:
            if text == "<<":
                raise self.error("merge keys ('<<') are not supported", "unsupported", i, col)
            if self.hook is not None:
                self.hook((*path, text), self.first_line + i, col + 1, text, True)
        if self.keys_at is not None:
            self.keys_at[(*path, text)] = (self.first_line + i, col + 1)
        return text

    def _value_at(self, path: Path, i: int, col: int) -> None:
        """Record that the value at ``path`` starts at (i, col), when locations are wanted."""
        if self.values_at is not None:
            self.values_at[path] = (self.first_line + i, col + 1)

    def _watch_fast(
        self, key: str, i: int, indent: int, path: Path, *, vcol: int, plain: str | None
    ) -> None:
        """What the hooks see of a ``key: value`` line read by the fast loop of a block mapping.

        ``vcol`` is where the value starts; ``plain`` is its text when it is a plain scalar.
        """
        self._key(key, i, indent, path, plain=True)
        self._value_at((*path, key), i, vcol)
        if plain is not None and self.hook is not None:
            self.hook((*path, key), self.first_line + i, vcol + 1, plain, False)

    def _duplicate(self, key: str, first: int, i: int, col: int) -> FrontmatterError:
        return self.error(
            f"duplicate key {_show(key)} (first at line {self.first_line + first})",
            "duplicate-key",
            i,
            col,
        )

    # --- document -------------------------------------------------------------------------------

    def document(self) -> dict[str, JSONValue]:
        i, indent = self._next_content(0)
        if i == self.n:
            raise FrontmatterError(
                "the frontmatter is empty; it must be a mapping",
                kind="schema",
                line=self.first_line,
            )
        if self.lines[i][indent] == "{":
            mapping, i, col = self._flow_mapping(i, indent, -1, (), 1)
            self._end_of_line(i, col)
            j, ind = self._next_content(i + 1)
            if j < self.n:
                raise self.error(
                    "unexpected content after the top-level flow mapping", "syntax", j, ind
                )
            return mapping
        line = self.lines[i]
        if line[indent] == "-" and line[indent + 1 : indent + 2] in ("", " "):
            raise self.error(
                "the frontmatter must be a mapping, not a sequence", "schema", i, indent
            )
        mapping, i = self._block_mapping(i, indent, (), 1, None)
        if i < self.n:
            # _block_mapping stops at the end or at a line less indented than its keys.
            raise self.error(
                "this line is less indented than the top-level mapping", "syntax", i, 0
            )
        return mapping

    # --- block collections ----------------------------------------------------------------------

    def _try_key(self, i: int, col: int, path: Path) -> tuple[str, int] | None:
        """Read an implicit key at (i, col): return (key, column after ':'), or None.

        None means that a value (not a key) starts at (i, col); constructs that can start
        neither raise.
        """
        line = self.lines[i]
        char = line[col]
        if char in "\"'":
            body = _match_end(_DQ_BODY if char == '"' else _SQ_BODY, line, col + 1)
            if body == len(line) or line[body] != char:
                return None  # not closed on this line: a multi-line value, not a key
            after = _skip_spaces(line, body + 1)
            if line[after : after + 1] != ":" or line[after + 1 : after + 2] not in ("", " "):
                return None
            raw = line[col + 1 : body]
            if char == "'":
                text = raw.replace("''", "'")
            elif "\\" in raw:
                text = self._unescape(raw, i, col + 1)
            else:
                text = raw
            return self._key(text, i, col, path, plain=False), after + 1
        if char in _INDICATORS:
            nxt = line[col + 1 : col + 2]
            if char in "[{|>" or (char == "-" and nxt in ("", " ")):
                return None  # a flow collection, a block scalar or a sequence entry
            if char not in "-?:" or nxt in ("", " ", "\t"):
                raise self._node_start_error(i, col, flow=False)
        end = self._block_run_end(line, col, i)
        if end == len(line) or line[end] != ":":
            return None
        return self._key(line[col:end].rstrip(" "), i, col, path, plain=True), end + 1

    def _block_run_end(self, line: str, start: int, i: int) -> int:
        """End of the plain-scalar text on ``line`` from ``start`` (block context).

        The text stops at ": " or a final ":" (the returned index points at the ":"), at " #"
        (it points at the space), or at the end of the line. Trailing spaces are not removed.
        A tab in the text is an error.
        """
        end = len(line)
        k = line.find(": ", start)
        if k != -1:
            end = k
        elif line[-1] == ":":
            end -= 1
        k = _comment_start(line, start, end)
        if k != -1:
            end = k
        k = line.find("\t", start, end)
        if k != -1:
            raise self._tab_error(i, k)
        return end

    def _block_mapping(
        self, i: int, indent: int, path: Path, depth: int, first_key: tuple[str, int] | None
    ) -> tuple[dict[str, JSONValue], int]:
        """A block mapping whose keys are at column ``indent``, starting on line ``i``.

        ``first_key`` is the first key and the column after its ':' when the caller has already
        read it (a key after "- ", or one that had to be told apart from a scalar).
        """
        if depth > self.max_depth:
            raise self._depth_error(i, indent)
        lines = self.lines
        n = self.n
        watched = self.hook is not None or self.keys_at is not None or self.values_at is not None
        result: dict[str, JSONValue] = {}
        first: dict[str, int] = {}
        value: JSONValue
        pending = first_key
        while True:
            if pending is None:
                # The fast path: 'key: plain value' and 'key: "quoted"' lines at this
                # indentation, one regular expression and a few str methods each. Anything else
                # leaves the loop for the general code below.
                while i < n:
                    line = lines[i]
                    if indent and (line[:indent].strip(" ") or line[indent : indent + 1] == " "):
                        break
                    match = _FAST_KEY(line, indent)
                    if match is None:
                        break
                    raw = line[match.end() :]
                    if not raw:
                        break
                    key = match.group(1)
                    first_char = raw[0]
                    if first_char == '"':
                        quoted = _FAST_DQ(raw)
                        if quoted is None:
                            break
                        value = quoted.group(1)
                        if watched:
                            self._watch_fast(
                                key, i, indent, path, vcol=len(line) - len(raw), plain=None
                            )
                    elif first_char in _INDICATORS or "\t" in raw:
                        break
                    else:
                        comment = _comment_start(raw, 1, len(raw)) if "#" in raw else -1
                        plain = raw if comment == -1 else raw[:comment]
                        if ": " in plain or plain[-1] == ":":
                            break
                        if (
                            comment == -1
                            and i + 1 < n
                            and not lines[i + 1][: indent + 1].strip(" ")
                        ):
                            break  # the next line is blank or more indented: it may continue
                        plain = plain.rstrip(" ")
                        if watched:
                            self._watch_fast(
                                key, i, indent, path, vcol=len(line) - len(raw), plain=plain
                            )
                        if plain[0] in _NUMBER_START or plain in _WORDS:
                            value = self._resolve(plain, i, len(line) - len(raw))
                        else:
                            value = plain
                    if key in result:
                        raise self._duplicate(key, first[key], i, indent)
                    first[key] = i
                    result[key] = value
                    i += 1
                i, ind = self._next_content(i)
                if i == n or ind < indent:
                    return result, i
                if ind > indent:
                    raise self.error(
                        "unexpected indentation (more than this mapping's keys)", "syntax", i, ind
                    )
                found = self._try_key(i, indent, path)
                if found is None:
                    if depth == 1 and not result:
                        # The top level is not a mapping: let _block_node report what it is
                        # when that is an error of its own (a complex key, an anchor...).
                        self._block_node(i, indent, -1, path, depth, block_ok=False)
                        raise self.error(
                            "the frontmatter must be a mapping, not a scalar or a flow sequence",
                            "schema",
                            i,
                            indent,
                        )
                    line = lines[i]
                    what = (
                        "a sequence entry ('- ')" if line[indent] == "-" else _show(line[indent:])
                    )
                    raise self.error(
                        f"expected a mapping key ('key: value'), found {what}", "syntax", i, indent
                    )
                key, col = found
            else:
                key, col = pending
                pending = None
            if key in result:
                raise self._duplicate(key, first[key], i, indent)
            first[key] = i
            value, i = self._map_value(i, col, indent, (*path, key), depth)
            result[key] = value

    def _map_value(
        self, i: int, col: int, indent: int, path: Path, depth: int
    ) -> tuple[JSONValue, int]:
        """The value of a block-mapping entry whose ':' is just before (i, col)."""
        line = self.lines[i]
        start = _skip_spaces(line, col)
        if start == len(line) or line[start] == "#":
            j, ind = self._next_content(i + 1)
            if j < self.n:
                if ind > indent:
                    return self._block_node(j, ind, indent, path, depth, block_ok=True)
                nxt = self.lines[j]
                if ind == indent and nxt[ind] == "-" and nxt[ind + 1 : ind + 2] in ("", " "):
                    # "key:" followed by "- item" at the key's own indentation.
                    self._value_at(path, j, ind)
                    return self._block_sequence(j, ind, path, depth + 1)
            return None, i + 1
        if line[start] == "\t":
            raise self._tab_error(i, start)
        return self._block_node(i, start, indent, path, depth, block_ok=False)

    def _block_sequence(
        self, i: int, indent: int, path: Path, depth: int
    ) -> tuple[list[JSONValue], int]:
        """A block sequence whose first "-" is at (i, indent)."""
        if depth > self.max_depth:
            raise self._depth_error(i, indent)
        lines = self.lines
        items: list[JSONValue] = []
        value: JSONValue
        while True:
            line = lines[i]
            start = _skip_spaces(line, indent + 1)
            if start == len(line) or line[start] == "#":
                j, ind = self._next_content(i + 1)
                if j < self.n and ind > indent:
                    value, i = self._block_node(
                        j, ind, indent, (*path, len(items)), depth, block_ok=True
                    )
                else:
                    self._value_at((*path, len(items)), i, indent)  # an empty item: its "-"
                    value, i = None, i + 1
            elif line[start] == "\t":
                raise self._tab_error(i, start)
            else:
                value, i = self._block_node(
                    i, start, indent, (*path, len(items)), depth, block_ok=True
                )
            items.append(value)
            i, ind = self._next_content(i)
            if ind != indent:
                return items, i
            line = lines[i]
            if line[indent] != "-" or line[indent + 1 : indent + 2] not in ("", " "):
                return items, i

    def _block_node(
        self, i: int, col: int, parent: int, path: Path, depth: int, *, block_ok: bool
    ) -> tuple[JSONValue, int]:
        """The node starting at (i, col), inside a block collection indented ``parent``.

        ``block_ok`` is true where a block mapping or sequence may start (at the start of a line
        or after "- "), false after "key: ". Returns the value and the next line.
        """
        if self.values_at is not None:
            self.values_at[path] = (self.first_line + i, col + 1)
        lines = self.lines
        line = lines[i]
        char = line[col]
        if char == "-" and line[col + 1 : col + 2] in ("", " "):
            if not block_ok:
                raise self.error(
                    "a block sequence cannot start after 'key: ' on the same line (put it on "
                    "the next line, or quote a value that starts with '- ')",
                    "syntax",
                    i,
                    col,
                )
            return self._block_sequence(i, col, path, depth + 1)
        if block_ok:
            key = self._try_key(i, col, path)
            if key is not None:
                return self._block_mapping(i, col, path, depth + 1, key)
        if char in "\"'":
            text, j, end = self._quoted(i, col, parent)
            after = _skip_spaces(lines[j], end)
            if j != i and lines[j][after : after + 1] == ":":
                raise self.error("an implicit key must fit on one line", "syntax", i, col)
            self._end_of_line(j, end)
            return text, j + 1
        if char in "[{":
            value, j, end = self._flow_not_key(i, col, parent, path, depth)
            self._end_of_line(j, end)
            return value, j + 1
        if char in "|>":
            return self._block_scalar(i, col, parent)
        if char in _INDICATORS and (char not in "-?:" or line[col + 1 : col + 2] in ("", " ")):
            raise self._node_start_error(i, col, flow=False)
        return self._plain_block(i, col, parent, path)

    # --- block scalars --------------------------------------------------------------------------

    def _block_scalar(self, i: int, col: int, parent: int) -> tuple[str, int]:
        """A literal (|) or folded (>) scalar whose header is at (i, col)."""
        lines = self.lines
        n = self.n
        header = _BLOCK_HEADER.match(lines[i], col)
        if header is None:
            raise self.error(
                "invalid block scalar header (expected '|' or '>', an optional indentation "
                "digit 1-9 and chomping indicator '-' or '+', then only a comment)",
                "syntax",
                i,
                col,
            )
        style, digit_a, chomp_a, chomp_b, digit_b = header.groups()
        digit = digit_a or digit_b
        chomp = chomp_a or chomp_b
        j = i + 1
        if digit:
            content_indent = parent + int(digit)
        else:
            # The first non-empty line sets the indentation; the leading empty lines must not
            # have more spaces than it (YAML 1.2, section 8.1.1.1).
            widest = 0
            while j < n:
                line = lines[j]
                rest = line.lstrip(" ")
                if rest:
                    break
                widest = max(widest, len(line))
                j += 1
            content_indent = len(lines[j]) - len(rest) if j < n else -1
            if content_indent <= parent:
                # No content line: only empty lines, which only "keep" chomping retains.
                return ("\n" * (j - i - 1) if chomp == "+" else ""), j
            if widest > content_indent:
                raise self.error(
                    "a leading empty line of this block scalar has more spaces than its first "
                    "text line",
                    "syntax",
                    j,
                    0,
                )
            j = i + 1
        pieces: list[str] = []
        while j < n:
            line = lines[j]
            if line[:content_indent].strip(" "):
                break  # a less indented line ends the scalar
            pieces.append(line[content_indent:])
            j += 1
        return _block_value(style, chomp, pieces), j

    # --- plain scalars --------------------------------------------------------------------------

    def _plain_block(self, i: int, col: int, parent: int, path: Path) -> tuple[JSONValue, int]:
        """A plain scalar in block context, possibly continued on more-indented lines."""
        lines = self.lines
        line = lines[i]
        end = self._block_run_end(line, col, i)
        parts = [line[col:end].rstrip(" ")]
        j = i + 1
        if end < len(line):
            if line[end] == ":":
                raise self._mapping_value_error(i, end)
            # A comment: the scalar ends here (a plain scalar cannot continue after a comment).
        else:
            empty = 0
            n = self.n
            while j < n:
                line = lines[j]
                rest = line.lstrip(" ")
                if not rest:
                    empty += 1
                    j += 1
                    continue
                ind = len(line) - len(rest)
                if ind <= parent or rest[0] == "#":
                    break
                if rest[0] == "\t":
                    raise self._tab_error(j, ind)
                end = self._block_run_end(line, ind, j)
                if end == ind or line[end : end + 1] == ":":
                    raise self._mapping_value_error(j, end)
                parts.append("\n" * empty if empty else " ")
                parts.append(line[ind:end].rstrip(" "))
                empty = 0
                j += 1
                if end < len(line):
                    break  # a comment ends the scalar
        text = "".join(parts)
        if self.hook is not None:
            self.hook(path, self.first_line + i, col + 1, text, False)
        return self._resolve(text, i, col), j

    # --- quoted scalars -------------------------------------------------------------------------

    def _quoted(self, i: int, col: int, parent: int) -> tuple[str, int, int]:
        """A single- or double-quoted scalar opening at (i, col).

        Returns the value, the line of the closing quote and the column after it. Continuation
        lines must be indented more than ``parent``.
        """
        lines = self.lines
        quote = lines[i][col]
        body_re = _DQ_BODY if quote == '"' else _SQ_BODY
        segments: list[str] = []
        start = col + 1
        j = i
        while True:
            line = lines[j]
            end = _match_end(body_re, line, start)
            if end < len(line) and line[end] == quote:
                segments.append(line[start:end])
                break
            segments.append(line[start:])
            j += 1
            if j == self.n:
                what = "double" if quote == '"' else "single"
                raise self.error(f"unterminated {what}-quoted string", "syntax", i, col)
            line = lines[j]
            rest = line.lstrip(" ")
            ind = len(line) - len(rest)
            if (
                ind <= parent
                and rest.strip(" \t")
                and (rest[0] != quote or rest[1:2] == "'")  # a closing quote may sit anywhere
            ):
                if not self._closes_cleanly(quote, j):
                    # Most likely the closing quote was forgotten: say so where the string opens.
                    what = "double" if quote == '"' else "single"
                    raise self.error(
                        f"unterminated {what}-quoted string (line {self.first_line + j} cannot "
                        "continue it: it is not indented more than the string's key)",
                        "syntax",
                        i,
                        col,
                    )
                if rest[0] == "\t":
                    raise self._tab_error(j, ind)
                raise self.error(
                    "a continuation line of a quoted string must be indented more than its parent",
                    "syntax",
                    j,
                    ind,
                )
            start = 0
        if len(segments) == 1:
            raw = segments[0]
            if quote == "'":
                return raw.replace("''", "'"), j, end + 1
            return (self._unescape(raw, i, col + 1) if "\\" in raw else raw), j, end + 1
        return self._fold_quoted(segments, i, col + 1, quote == '"'), j, end + 1

    def _closes_cleanly(self, quote: str, j: int) -> bool:
        """Whether a quoted string still open at the start of line ``j`` closes on some later
        line with nothing after the quote but white space, a comment, or a flow ``,]}``.

        When it does, the string was closed and only under-indented; when it does not, its
        closing quote is most likely missing.
        """
        body_re = _DQ_BODY if quote == '"' else _SQ_BODY
        for line in self.lines[j:]:
            end = _match_end(body_re, line, 0)
            if end < len(line) and line[end] == quote:
                after = line[end + 1 :].strip(" \t")
                return not after or after[0] in "#,]}"
        return False

    def _fold_quoted(self, segments: list[str], i: int, col: int, double: bool) -> str:
        """Fold the lines of a multi-line quoted scalar (YAML 1.2, sections 7.3.1 and 7.3.2).

        White space before a line break and at the start of a continuation line is dropped; a
        single line break becomes a space, each empty line in between a line feed. In a
        double-quoted scalar a backslash before the line break removes the break (and keeps the
        white space before the backslash), and escapes are decoded per line.
        """
        last = len(segments) - 1
        out: list[str] = []
        empty = 0
        escaped_before = False
        for k, segment in enumerate(segments):
            escaped = False
            text = segment
            if k < last:
                text = segment.rstrip(" \t")
                if double:
                    backslashes = len(text) - len(text.rstrip("\\"))
                    if backslashes % 2:
                        if len(text) == len(segment):
                            escaped = True  # a backslash at the end of the line
                            text = segment[:-1]
                        else:
                            text = segment[: len(text) + 1]  # an escaped space or tab
            seg_col = col
            if k:
                seg_col = len(text) - len(text.lstrip(" \t"))
                text = text[seg_col:]
                if k < last and not text and not escaped:
                    empty += 1
                    continue
                out.append("\n" * empty if empty or escaped_before else " ")
                empty = 0
            if double:
                out.append(self._unescape(text, i + k, seg_col) if "\\" in text else text)
            else:
                out.append(text.replace("''", "'"))
            escaped_before = escaped
        return "".join(out)

    def _unescape(self, raw: str, i: int, col: int) -> str:
        """Decode the escapes of one line of a double-quoted scalar."""

        def replace(match: re.Match[str]) -> str:
            kind, digits, char = match.groups()
            if kind is None:
                if char in _SIMPLE_ESCAPES:
                    return _SIMPLE_ESCAPES[char]
                raise self.error(
                    f"invalid escape '\\{char}' in a double-quoted string",
                    "syntax",
                    i,
                    col + match.start(),
                )
            width = _HEX_LENGTH[kind]
            if len(digits) < width:
                raise self.error(
                    f"escape '\\{kind}' needs {width} hexadecimal digits",
                    "syntax",
                    i,
                    col + match.start(),
                )
            code = int(digits[:width], 16)
            if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                raise self.error(
                    f"escape '\\{kind}{digits[:width]}' is not a Unicode scalar value (write the "
                    "character itself; surrogate escapes are not supported)",
                    "unsupported",
                    i,
                    col + match.start(),
                )
            return chr(code) + digits[width:]

        return _DQ_ESCAPE.sub(replace, raw)

    # --- flow collections -----------------------------------------------------------------------

    def _flow_skip(self, i: int, col: int, parent: int, opener: tuple[int, int]) -> tuple[int, int]:
        """Skip spaces, line breaks and comments inside a flow collection.

        Returns the position of the next token. A token that starts a line must be indented more
        than ``parent`` unless it is a closing bracket (see "Leniency" in the module docstring).
        """
        lines = self.lines
        line = lines[i]
        # The common cases first: the token is right here, or after one space.
        char = line[col : col + 1]
        if char and char not in " #\t":
            return i, col
        if char == " ":
            char = line[col + 1 : col + 2]
            if char and char not in " #\t":
                return i, col + 1
        moved = False
        while True:
            start = col
            col = _skip_spaces(line, col)
            if col < len(line):
                char = line[col]
                if char == "\t":
                    raise self._tab_error(i, col)
                if char != "#" or (col == start and col > 0):
                    if moved and col <= parent and char not in "]}":
                        raise self.error(
                            "this line inside a flow collection must be indented more than its "
                            "parent",
                            "syntax",
                            i,
                            col,
                        )
                    return i, col
            i += 1
            if i == self.n:
                closer = "]" if lines[opener[0]][opener[1]] == "[" else "}"
                raise self.error(
                    f"unterminated flow collection (no closing {closer!r})",
                    "syntax",
                    opener[0],
                    opener[1],
                )
            line = lines[i]
            col = 0
            moved = True

    def _flow(
        self, i: int, col: int, parent: int, path: Path, depth: int
    ) -> tuple[JSONValue, int, int]:
        """A flow collection opening at (i, col); returns (value, line, column after it)."""
        if self.lines[i][col] == "[":
            return self._flow_sequence(i, col, parent, path, depth)
        return self._flow_mapping(i, col, parent, path, depth)

    def _flow_sequence(
        self, i: int, col: int, parent: int, path: Path, depth: int
    ) -> tuple[list[JSONValue], int, int]:
        if depth > self.max_depth:
            raise self._depth_error(i, col)
        lines = self.lines
        opener = (i, col)
        items: list[JSONValue] = []
        value: JSONValue
        i, col = self._flow_skip(i, col + 1, parent, opener)
        while lines[i][col] != "]":
            value, i, col = self._flow_entry(
                i, col, parent, (*path, len(items)), depth, opener=opener
            )
            items.append(value)
            i, col = self._flow_skip(i, col, parent, opener)
            char = lines[i][col]
            if char == ",":
                i, col = self._flow_skip(i, col + 1, parent, opener)
            elif char != "]":
                raise self.error("expected ',' or ']' in a flow sequence", "syntax", i, col)
        return items, i, col + 1

    def _flow_entry(
        self, i: int, col: int, parent: int, path: Path, depth: int, *, opener: tuple[int, int]
    ) -> tuple[JSONValue, int, int]:
        """An entry of a flow sequence: a node, or a single-pair mapping ``key: value``."""
        if self.values_at is not None:
            self.values_at[path] = (self.first_line + i, col + 1)
        lines = self.lines
        line = lines[i]
        char = line[col]
        key: str
        if char in "[{":
            return self._flow_not_key(i, col, parent, path, depth)
        if char in "\"'":
            text, j, end = self._quoted(i, col, parent)
            after = _skip_spaces(lines[j], end)
            if lines[j][after : after + 1] != ":":
                return text, j, end
            if j != i:
                raise self.error("a key must fit on one line", "syntax", i, col)
            key = self._key(text, i, col, path, plain=False)
        else:
            self._check_flow_plain_start(i, col)
            end = _match_end(_FLOW_RUN, line, col)
            after = _skip_spaces(line, end)
            if line[after : after + 1] != ":":
                return self._flow_plain(i, col, end, parent, path)
            # After a plain scalar, ":" is always followed by a space or a flow indicator here.
            key = self._key(line[col:end], i, col, path, plain=True)
        # A single-pair mapping, [key: value].
        i, col = self._flow_skip(i, after + 1, parent, opener)
        if lines[i][col] in ",]":
            return {key: None}, i, col
        pair, i, col = self._flow_node(i, col, parent, (*path, key), depth)
        return {key: pair}, i, col

    def _flow_mapping(
        self, i: int, col: int, parent: int, path: Path, depth: int
    ) -> tuple[dict[str, JSONValue], int, int]:
        if depth > self.max_depth:
            raise self._depth_error(i, col)
        lines = self.lines
        opener = (i, col)
        result: dict[str, JSONValue] = {}
        first: dict[str, int] = {}
        value: JSONValue
        i, col = self._flow_skip(i, col + 1, parent, opener)
        while lines[i][col] != "}":
            key_i, key_col = i, col
            key, i, col = self._flow_key(i, col, parent, path)
            if key in result:
                raise self._duplicate(key, first[key], key_i, key_col)
            first[key] = key_i
            line = lines[i]
            after = _skip_spaces(line, col)
            if line[after : after + 1] == ":":
                i, col = self._flow_skip(i, after + 1, parent, opener)
                if lines[i][col] in ",}":
                    value = None
                else:
                    value, i, col = self._flow_node(i, col, parent, (*path, key), depth)
            else:
                value = None
            result[key] = value
            i, col = self._flow_skip(i, col, parent, opener)
            char = lines[i][col]
            if char == ",":
                i, col = self._flow_skip(i, col + 1, parent, opener)
            elif char == ":":
                raise self.error(
                    "the ':' of a flow mapping entry must be on its key's line", "syntax", i, col
                )
            elif char != "}":
                raise self.error("expected ',' or '}' in a flow mapping", "syntax", i, col)
        return result, i, col + 1

    def _flow_not_key(
        self, i: int, col: int, parent: int, path: Path, depth: int
    ) -> tuple[JSONValue, int, int]:
        """A flow collection at ``depth``, refused if a ``:`` follows it (it would be a key)."""
        value, j, end = self._flow(i, col, parent, path, depth + 1)
        line = self.lines[j]
        after = _skip_spaces(line, end)
        if line[after : after + 1] == ":":
            raise self.error(
                "complex keys (a collection as a key) are not supported", "unsupported", i, col
            )
        return value, j, end

    def _flow_key(self, i: int, col: int, parent: int, path: Path) -> tuple[str, int, int]:
        """A key inside a flow mapping: a quoted or plain scalar on one line."""
        line = self.lines[i]
        char = line[col]
        if char in "\"'":
            text, j, end = self._quoted(i, col, parent)
            if j != i:
                raise self.error("a key must fit on one line", "syntax", i, col)
            return self._key(text, i, col, path, plain=False), i, end
        if char in "[{":
            raise self.error(
                "complex keys (a collection as a key) are not supported", "unsupported", i, col
            )
        self._check_flow_plain_start(i, col)
        end = _match_end(_FLOW_RUN, line, col)
        return self._key(line[col:end], i, col, path, plain=True), i, end

    def _check_flow_plain_start(self, i: int, col: int) -> None:
        line = self.lines[i]
        char = line[col]
        if char in _INDICATORS and (
            char != "-" or line[col + 1 : col + 2] in ("", " ", "\t", ",", "[", "]", "{", "}")
        ):
            raise self._node_start_error(i, col, flow=True)

    def _flow_node(
        self, i: int, col: int, parent: int, path: Path, depth: int
    ) -> tuple[JSONValue, int, int]:
        """A value inside a flow collection; returns (value, line, column after it)."""
        if self.values_at is not None:
            self.values_at[path] = (self.first_line + i, col + 1)
        line = self.lines[i]
        char = line[col]
        if char in "[{":
            return self._flow(i, col, parent, path, depth + 1)
        if char in "\"'":
            return self._quoted(i, col, parent)
        self._check_flow_plain_start(i, col)
        return self._flow_plain(i, col, _match_end(_FLOW_RUN, line, col), parent, path)

    def _flow_plain(
        self, i: int, col: int, end: int, parent: int, path: Path
    ) -> tuple[JSONValue, int, int]:
        """A plain scalar in a flow collection whose first line's text is ``[col:end]``."""
        line = self.lines[i]
        text = line[col:end]
        j = i
        if _skip_spaces(line, end) == len(line):
            # The scalar may continue on the next lines (folded like a quoted scalar).
            lines = self.lines
            parts = [text]
            empty = 0
            k = i + 1
            while k < self.n:
                nxt = lines[k]
                rest = nxt.lstrip(" ")
                if not rest:
                    empty += 1
                    k += 1
                    continue
                ind = len(nxt) - len(rest)
                more = _match_end(_FLOW_CONTINUATION, nxt, ind)
                if ind <= parent or more == ind:
                    break  # not a continuation; _flow_skip reports a misplaced line
                parts.append("\n" * empty if empty else " ")
                parts.append(nxt[ind:more])
                empty = 0
                j, end = k, more
                if _skip_spaces(nxt, more) != len(nxt):
                    break
                k += 1
            text = "".join(parts)
        if self.hook is not None:
            self.hook(path, self.first_line + i, col + 1, text, False)
        return self._resolve(text, i, col), j, end


def _block_value(style: str, chomp: str | None, pieces: list[str]) -> str:
    """The value of a block scalar (``style`` ``|`` or ``>``) from its content lines, each
    without the content indentation, trailing empty lines included (YAML 1.2, 8.1.1.2).
    """
    last = len(pieces) - 1
    while last >= 0 and not pieces[last]:
        last -= 1
    if last < 0:
        return "\n" * len(pieces) if chomp == "+" else ""
    value = "\n".join(pieces[: last + 1]) if style == "|" else _fold_block(pieces, last)
    if chomp == "-":
        return value
    if chomp == "+":
        return value + "\n" * (len(pieces) - last)
    return value + "\n"


def _fold_block(pieces: list[str], last: int) -> str:
    """Fold the content lines of a ">" block scalar up to ``pieces[last]`` (YAML 1.2, 8.1.3).

    A line break between two text lines becomes a space, or is dropped when empty lines follow
    it (each empty line is a line feed). Breaks next to "spaced" lines (starting with white
    space) are kept.
    """
    out: list[str] = []
    previous = ""  # "" before the first line, else "text" or "spaced"
    empty = 0
    for piece in pieces[: last + 1]:
        if not piece:
            empty += 1
            continue
        kind = "spaced" if piece[0] in " \t" else "text"
        if not previous:
            out.append("\n" * empty)
        elif previous == "text" and kind == "text":
            out.append("\n" * empty if empty else " ")
        else:
            out.append("\n" * (empty + 1))
        out.append(piece)
        previous = kind
        empty = 0
    return "".join(out)
