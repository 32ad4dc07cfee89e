"""SKILL.md frontmatter: extraction, parsing to JSON values, and field-by-field comparison.

Theory of operation
===================

A host that fetched a ``SKILL.md`` must parse its YAML frontmatter and compare it field by field
with the ``frontmatter`` object of the skill entry the server published (VER-10); any difference
is a verification failure (VER-11). Both halves live here, and neither does I/O.

**Extraction** (:func:`split_frontmatter`, SIL-10). The input is the file's bytes (or text):

* the frontmatter, from line 1 to the end of the closing line, must be strict UTF-8 (an error
  names the line and column of the first bad byte); the delimiters are found in the raw bytes
  (UTF-8 leaves ASCII alone) and the body is never decoded, so its size costs nothing and its
  encoding is the caller's business;
* one leading U+FEFF byte order mark is skipped for parsing only (digests still cover the raw
  bytes, which this module never changes);
* CRLF, lone CR and LF are all line breaks; the text is split on them explicitly, never with
  ``str.splitlines()`` (which also splits on U+2028, form feed and others);
* line 1 must be exactly ``---``; the frontmatter closes at the first later line that is exactly
  ``---`` (``--- `` with a trailing space, or ``description: a --- b``, do not close it);
* the YAML text is the lines in between, each keeping its line break (as LF), so a block scalar
  right before the closing ``---`` keeps its final line feed;
* no closing line is an error, and so is a frontmatter over ``max_bytes`` UTF-8 bytes (the
  search for the closing line stops there, so a huge file costs no more than the cap).

**Parsing** is :func:`skills_core._yaml.parse_yaml`: the YAML 1.2 subset of docs/design.md#d3 with
core-schema resolution; see that module for the exact subset and the refused constructs. The
result is a ``dict`` of JSON-compatible values (:data:`JSONValue`) in document order.

**Locations** are opt-in (``parse_frontmatter(..., locate=True)``), so that a host's parse pays
nothing for them: :attr:`ParsedFrontmatter.locations` then maps the JSON pointer of every member
and sequence item, at any depth, to a :class:`FieldLocation`: the SKILL.md line and column where
its key starts (or the item, in a sequence) and where its value starts. Lines count from the
opening ``---`` (line 1); columns count characters from 1. The YAML text keeps the SKILL.md's
lines and columns exactly (a CRLF becomes an LF at the end of a line; a byte order mark sits
before the opening ``---``), so the positions are the file's.

**Comparison** (:func:`compare_frontmatter`, SIL-09) works on the JSON data model: objects are
unordered, arrays ordered, strings compared exactly (no trimming, no Unicode normalisation),
numbers by exact mathematical value (``1 == 1.0``, ``2**53 + 1 != float(2**53)``), a boolean
never equals a number, and ``null`` never equals an absent member (``ABSENT``, the sentinel of
:mod:`skills_core.jsonvalue`, re-exported here). Values that are not JSON (tuples, sets, bytes,
NaN and infinities, mappings with non-string keys, other objects) never compare equal to anything
and are reported as differences, on either side; the function never raises for odd input, and
stops descending (reporting a difference) past :data:`MAX_COMPARE_DEPTH` levels, so cyclic input
cannot crash it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import AnyStr, ClassVar, Final, final

from ._yaml import DEFAULT_MAX_BYTES, MAX_DEPTH, Path, Spots, parse_yaml
from .errors import FrontmatterError, quote_for_message
from .jsonvalue import ABSENT, AbsentType, JSONValue, escape_pointer_token

__all__ = [
    "ABSENT",
    "AbsentType",
    "DEFAULT_MAX_BYTES",
    "MAX_DEPTH",
    "MAX_COMPARE_DEPTH",
    "FieldLocation",
    "ParsedFrontmatter",
    "FrontmatterDifference",
    "json_pointer",
    "split_frontmatter",
    "parse_frontmatter",
    "compare_frontmatter",
]

#: How deep :func:`compare_frontmatter` descends before reporting "too deep" instead. Parsed
#: frontmatter nests at most :data:`MAX_DEPTH` levels, so this only stops hostile or cyclic input.
MAX_COMPARE_DEPTH: Final = 4 * MAX_DEPTH


_UTF8_BOM: Final = b"\xef\xbb\xbf"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")
_LF_OR_END: Final = (b"\n", b"")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class FieldLocation:
    """Where one frontmatter member (or sequence item) sits in its SKILL.md.

    Lines are SKILL.md lines (the opening ``---`` is line 1); columns count characters from 1.

    Attributes:
        line: The line of the member's key (of the item itself, in a sequence).
        column: The column of the member's key (of the item itself, in a sequence).
        value_line: The line where the value starts; the key's line when it has no value
            (``key:`` with nothing after it).
        value_column: The column where the value starts (the key's, when it has no value).
    """

    line: int
    column: int
    value_line: int
    value_column: int


#: No locations: what :attr:`ParsedFrontmatter.locations` holds unless asked for (shared).
_NO_LOCATIONS: Final[Mapping[str, FieldLocation]] = MappingProxyType({})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedFrontmatter:
    """A SKILL.md split into its parsed frontmatter and its body.

    Attributes:
        data: The frontmatter as JSON-compatible values, keys in document order.
        yaml_text: The YAML text between the delimiters, LF line breaks, each line ending in LF.
        closing_line: The SKILL.md line number (1-based) of the closing ``---``.
        body_offset: Where the body (everything after the closing ``---`` line and its line
            break) starts, as a character index into the decoded SKILL.md text *without* its
            byte order mark, original line breaks kept.
        body_byte_offset: The same place as a byte index into the raw SKILL.md bytes (the byte
            order mark, when present, counted).
        has_bom: Whether the SKILL.md started with a U+FEFF byte order mark.
        locations: ``{JSON pointer: FieldLocation}`` for every member and sequence item, at any
            depth (``"/name"``, ``"/metadata/author"``, ``"/allowed-tools/0"``), when
            :func:`parse_frontmatter` was asked to ``locate``; empty otherwise.
    """

    data: dict[str, JSONValue]
    yaml_text: str
    closing_line: int
    body_offset: int
    body_byte_offset: int
    has_bom: bool
    locations: Mapping[str, FieldLocation] = field(default_factory=lambda: _NO_LOCATIONS)

    #: The SKILL.md line number of the YAML text's first line: always 2 (line 1 is ``---``).
    first_line: ClassVar[int] = 2

    @property
    def last_line(self) -> int:
        """The SKILL.md line number of the YAML text's last line (``closing_line - 1``)."""
        return self.closing_line - 1


#: What :func:`_split` finds: the YAML text, the SKILL.md line of the closing "---", the body's
#: character offset (in the text without BOM) and byte offset (in the raw bytes), and the BOM flag.
_Split = tuple[str, int, int, int, bool]


def _split(skill_md: bytes | str, max_bytes: int) -> _Split:
    if isinstance(skill_md, bytes):
        return _split_bytes(skill_md, max_bytes)
    has_bom = skill_md.startswith("\ufeff")
    start = 1 if has_bom else 0
    opener_end = _opener_end(skill_md, start)
    window = opener_end + max_bytes + 8
    found = _find_closer(skill_md, "\n---", "\r---", start + 3, window)
    if found is None:
        raise _no_closer(len(skill_md) > window, max_bytes)
    yaml_end, body_start = found
    yaml_raw = skill_md[opener_end:yaml_end]
    size = len(yaml_raw)
    # A character is 1-4 UTF-8 bytes: encode (surrogates too, to measure) only when it matters.
    if size > max_bytes or (
        size * 4 > max_bytes and len(yaml_raw.encode("utf-8", "surrogatepass")) > max_bytes
    ):
        raise _too_large(max_bytes)
    yaml_text = yaml_raw
    if "\r" in yaml_text:
        yaml_text = yaml_text.replace("\r\n", "\n").replace("\r", "\n")
    prefix_bytes = len(skill_md[:body_start].encode("utf-8", "surrogatepass"))
    return (
        yaml_text,
        2 + yaml_text.count("\n"),
        body_start - start,
        prefix_bytes,
        has_bom,
    )


def _split_bytes(raw: bytes, max_bytes: int) -> _Split:
    # UTF-8 leaves ASCII bytes alone, so the delimiters are found in the bytes and only the part
    # up to the end of the closing line is decoded (strictly). The body is not decoded: its
    # bytes are the caller's business (the digest covers them all).
    has_bom = raw.startswith(_UTF8_BOM)
    start = 3 if has_bom else 0
    # "---\n" is the common case; _opener_end checks the others.
    opener_end = start + 4 if raw.startswith(b"---\n", start) else _opener_end(raw, start)
    window = opener_end + max_bytes + 8
    # The common case: LF line breaks only, and the first "\n---" is the closing line (followed
    # by LF or the end of the file). Then the YAML text is the bytes in between, decoded on its
    # own: the delimiter lines are ASCII, so a bad byte is reported exactly as below.
    lf_at = raw.find(b"\n---", start + 3, window)
    if (
        lf_at != -1
        and raw[lf_at + 4 : lf_at + 5] in _LF_OR_END
        and raw.find(b"\r", start, lf_at) == -1
        and lf_at + 1 - opener_end <= max_bytes
    ):
        try:
            yaml_text = raw[opener_end : lf_at + 1].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _decode_error(raw, start, opener_end + exc.start) from None
        body_start = min(lf_at + 5, len(raw))
        return (
            yaml_text,
            2 + yaml_text.count("\n"),
            opener_end - start + len(yaml_text) + body_start - lf_at - 1,
            body_start,
            has_bom,
        )
    found = _find_closer(raw, b"\n---", b"\r---", start + 3, window)
    if found is None:
        raise _no_closer(len(raw) > window, max_bytes)
    yaml_end, body_start = found
    if yaml_end - opener_end > max_bytes:
        raise _too_large(max_bytes)
    try:
        prefix = raw[start:body_start].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _decode_error(raw, start, start + exc.start) from None
    # Everything from the end of the YAML text to the body is ASCII ("---" and a line break).
    yaml_text = prefix[opener_end - start : len(prefix) - (body_start - yaml_end)]
    if "\r" in yaml_text:
        yaml_text = yaml_text.replace("\r\n", "\n").replace("\r", "\n")
    return yaml_text, 2 + yaml_text.count("\n"), len(prefix), body_start, has_bom


def _opener_end(text: str | bytes, start: int) -> int:
    """Where the YAML text starts: after line 1, which must be exactly "---"."""
    head = _text_of(text[start : start + 5])
    if head.startswith("---\r\n"):
        return start + 5
    if head.startswith(("---\n", "---\r")) or head == "---":
        return start + 4
    first_line = _LINE_BREAK.split(_text_of(text[start : start + 200]), maxsplit=1)[0]
    raise FrontmatterError(
        "SKILL.md must start with a '---' line opening the YAML frontmatter; line 1 is "
        f"{quote_for_message(first_line, 60)}",
        kind="delimiter",
        line=1,
    )


def _text_of(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", "backslashreplace")


def _no_closer(over_limit: bool, max_bytes: int) -> FrontmatterError:
    if over_limit:
        return FrontmatterError(
            f"no closing '---' line within the first {max_bytes} bytes of frontmatter (the "
            "frontmatter size limit)",
            kind="limit",
            line=2,
        )
    return FrontmatterError(
        "the frontmatter opened on line 1 is never closed by a '---' line",
        kind="delimiter",
        line=1,
    )


def _too_large(max_bytes: int) -> FrontmatterError:
    return FrontmatterError(
        f"the frontmatter is larger than the limit of {max_bytes} bytes", kind="limit", line=2
    )


def _decode_error(raw: bytes, start: int, bad: int) -> FrontmatterError:
    good = raw[start:bad]
    line_start = max(good.rfind(b"\n"), good.rfind(b"\r")) + 1
    return FrontmatterError(
        f"SKILL.md is not valid UTF-8 (byte 0x{raw[bad]:02X} at offset {bad})",
        kind="encoding",
        line=len(_LINE_BREAK_BYTES.findall(good)) + 1,
        column=len(good[line_start:].decode("utf-8")) + 1,
    )


def _find_closer(
    text: AnyStr, lf: AnyStr, cr: AnyStr, start: int, end: int
) -> tuple[int, int] | None:
    """Find the first line after line 1 that is exactly "---", looking before ``end``.

    ``lf`` and ``cr`` are "\\n---" and "\\r---" (as str or bytes, like ``text``); ``start`` is
    the offset of the line break that ends line 1. Returns the offset where the YAML text ends
    (just after the line break before "---") and where the body starts (after the "---" line's
    own line break), or None. Two ``find`` cursors, for LF and for lone-CR line breaks, visit
    each candidate line once.
    """
    size = len(text)
    newline = lf[:1]
    carriage = cr[:1]
    lf_at = text.find(lf, start, end)
    cr_end = lf_at if lf_at != -1 else end
    cr_at = text.find(cr, start, cr_end)  # only a CR break before the next LF one matters
    while cr_at != -1 or lf_at != -1:
        at = cr_at if cr_at != -1 else lf_at
        after = at + 4
        following = text[after : after + 1]
        if after == size or following == newline:
            return at + 1, min(after + 1, size)
        if following == carriage:
            return at + 1, after + (2 if text[after + 1 : after + 2] == newline else 1)
        if at == cr_at:
            cr_at = text.find(cr, at + 1, cr_end)
        else:
            lf_at = text.find(lf, at + 1, end)
            cr_end = lf_at if lf_at != -1 else end
            cr_at = text.find(cr, at + 1, cr_end)
    return None


def split_frontmatter(
    skill_md: bytes | str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[str, int]:
    """Extract the YAML text of a SKILL.md's frontmatter without parsing it (SIL-10).

    Args:
        skill_md: The raw SKILL.md bytes, or its text.
        max_bytes: Cap on the frontmatter's size in UTF-8 bytes.

    Returns:
        The YAML text (LF line breaks, each line ending in LF) and the character offset of the
        body in the decoded text without its byte order mark.

    Raises:
        FrontmatterError: Not UTF-8 (kind ``"encoding"``), no opening or closing ``---`` line
            (``"delimiter"``), or larger than ``max_bytes`` (``"limit"``).
    """
    yaml_text, _, body_offset, _, _ = _split(skill_md, max_bytes)
    return yaml_text, body_offset


def parse_frontmatter(
    skill_md: bytes | str, *, max_bytes: int = DEFAULT_MAX_BYTES, locate: bool = False
) -> ParsedFrontmatter:
    """Extract and parse the YAML frontmatter of a SKILL.md (VER-10, SIL-09, SIL-10).

    Args:
        skill_md: The raw SKILL.md bytes, or its text.
        max_bytes: Cap on the frontmatter's size in UTF-8 bytes (default 1 MiB).
        locate: Also record where every member sits (:attr:`ParsedFrontmatter.locations`).
            This takes the parser's general path, which is slower than a plain parse.

    Returns:
        The parsed frontmatter and where the body starts.

    Raises:
        FrontmatterError: The file has no well-formed frontmatter, or its YAML is outside the
            supported subset. ``line`` and ``column`` locate the problem in the SKILL.md.
    """
    yaml_text, closing_line, body_offset, body_byte_offset, has_bom = _split(skill_md, max_bytes)
    if not locate:
        return ParsedFrontmatter(
            data=parse_yaml(yaml_text, first_line=2),
            yaml_text=yaml_text,
            closing_line=closing_line,
            body_offset=body_offset,
            body_byte_offset=body_byte_offset,
            has_bom=has_bom,
        )
    keys: Spots = {}
    values: Spots = {}
    return ParsedFrontmatter(
        data=parse_yaml(yaml_text, first_line=2, key_spots=keys, value_spots=values),
        yaml_text=yaml_text,
        closing_line=closing_line,
        body_offset=body_offset,
        body_byte_offset=body_byte_offset,
        has_bom=has_bom,
        locations=field_locations(keys, values),
    )


def field_locations(keys: Spots, values: Spots) -> Mapping[str, FieldLocation]:
    """Merge the parser's key and value spots into ``{JSON pointer: FieldLocation}`` (package-private).

    A member with no value is located at its key; an item of a sequence at itself.
    """
    found: list[FieldLocation] = []
    pointers: list[str] = []
    for path, (line, column) in values.items():
        key_line, key_column = keys.get(path, (line, column))
        found.append(
            FieldLocation(line=key_line, column=key_column, value_line=line, value_column=column)
        )
        pointers.append(json_pointer(path))
    for path, (line, column) in keys.items():
        if path not in values:
            found.append(
                FieldLocation(line=line, column=column, value_line=line, value_column=column)
            )
            pointers.append(json_pointer(path))
    # In document order (members without a value were added last).
    order = sorted(range(len(found)), key=lambda k: (found[k].line, found[k].column))
    return MappingProxyType({pointers[k]: found[k] for k in order})


def json_pointer(path: Path) -> str:
    """The RFC 6901 JSON pointer of a parser path: ``("metadata", "a/b")`` -> ``"/metadata/a~1b"``."""
    return "".join("/" + escape_pointer_token(str(part)) for part in path)


def frontmatter_data(
    skill_md: bytes | str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> dict[str, JSONValue]:
    """``parse_frontmatter(skill_md).data``, without building the rest (package-private).

    The catalog builder parses thousands of SKILL.md files and needs only their data.

    Raises:
        FrontmatterError: As :func:`parse_frontmatter`, identically.
    """
    if isinstance(skill_md, bytes) and skill_md.startswith(b"---\n"):
        # The common case of _split_bytes, inline (no byte order mark): the first "\n---" line
        # closes, LF line breaks only. A decoding error is left to _split_bytes to report.
        end = skill_md.find(b"\n---", 3, max_bytes + 12)
        if (
            end != -1
            and skill_md[end + 4 : end + 5] in _LF_OR_END
            and skill_md.find(b"\r", 0, end) == -1
            and end - 3 <= max_bytes
        ):
            try:
                yaml_text = skill_md[4 : end + 1].decode("utf-8")
            except UnicodeDecodeError:
                pass
            else:
                return parse_yaml(yaml_text, first_line=2)
    return parse_yaml(_split(skill_md, max_bytes)[0], first_line=2)


# --- comparison -----------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class FrontmatterDifference:
    """One place where parsed and published frontmatter differ.

    Attributes:
        pointer: RFC 6901 JSON pointer to the differing member (``""`` is the whole object).
        parsed: The value parsed from SKILL.md there, or :data:`ABSENT`.
        published: The value in the published entry there, or :data:`ABSENT`.
        reason: A short explanation, e.g. ``"only in SKILL.md"`` or ``"a bool is not a number"``.
    """

    pointer: str
    parsed: object
    published: object
    reason: str

    def __str__(self) -> str:
        where = self.pointer or "(the whole frontmatter)"
        return (
            f"{where}: SKILL.md has {_display(self.parsed)}, the entry has "
            f"{_display(self.published)} ({self.reason})"
        )


def _display(value: object) -> str:
    if value is ABSENT:
        return "nothing"
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return quote_for_message(value, 80)
    return text if len(text) <= 80 else text[:77] + "..."


def _kind(value: object) -> str:
    """The JSON type of ``value``, or a description of why it is not JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "number"
    if isinstance(value, float):
        return "number" if math.isfinite(value) else f"not a JSON value ({value!r})"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        # Tuples are arrays too: SkillEntry.frontmatter is frozen (tuples, read-only mappings).
        return "array"
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                return f"not a JSON value (an object with the non-string key {key!r})"
        return "object"
    return f"not a JSON value ({type(value).__name__})"


def compare_frontmatter(
    parsed: Mapping[str, object], published: Mapping[str, object]
) -> tuple[FrontmatterDifference, ...]:
    """Compare parsed SKILL.md frontmatter with a published entry's ``frontmatter`` (VER-11).

    Args:
        parsed: The frontmatter parsed from SKILL.md (:attr:`ParsedFrontmatter.data`).
        published: The entry's ``frontmatter`` object as decoded from JSON, or the frozen
            :attr:`SkillEntry.frontmatter <skills_core.entry.SkillEntry.frontmatter>` (tuples
            compare as arrays, any mapping as an object).

    Returns:
        Every difference, parsed members in document order first, then members only the entry
        has; an empty tuple when the two are equal on the JSON data model.
    """
    out: list[FrontmatterDifference] = []
    _compare(parsed, published, "", out, 0)
    return tuple(out)


def _compare(
    a: object, b: object, pointer: str, out: list[FrontmatterDifference], depth: int
) -> None:
    kind_a = _kind(a)
    kind_b = _kind(b)
    if kind_a != kind_b or kind_a.startswith("not"):
        if kind_a.startswith("not"):
            reason = f"the SKILL.md value is {kind_a}"
        elif kind_b.startswith("not"):
            reason = f"the entry's value is {kind_b}"
        else:
            reason = f"a {kind_a} is not a {kind_b}"
        out.append(FrontmatterDifference(pointer=pointer, parsed=a, published=b, reason=reason))
        return
    if kind_a in ("object", "array") and depth >= MAX_COMPARE_DEPTH:
        out.append(
            FrontmatterDifference(
                pointer=pointer,
                parsed=a,
                published=b,
                reason=f"nested deeper than {MAX_COMPARE_DEPTH} levels",
            )
        )
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key, value in a.items():
            child = f"{pointer}/{escape_pointer_token(key)}"
            if key in b:
                _compare(value, b[key], child, out, depth + 1)
            else:
                out.append(
                    FrontmatterDifference(
                        pointer=child, parsed=value, published=ABSENT, reason="only in SKILL.md"
                    )
                )
        for key, value in b.items():
            if key not in a:
                out.append(
                    FrontmatterDifference(
                        pointer=f"{pointer}/{escape_pointer_token(key)}",
                        parsed=ABSENT,
                        published=value,
                        reason="only in the entry",
                    )
                )
        return
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            _compare(x, y, f"{pointer}/{index}", out, depth + 1)
        for index in range(len(b), len(a)):
            out.append(
                FrontmatterDifference(
                    pointer=f"{pointer}/{index}",
                    parsed=a[index],
                    published=ABSENT,
                    reason="only in SKILL.md (the arrays differ in length)",
                )
            )
        for index in range(len(a), len(b)):
            out.append(
                FrontmatterDifference(
                    pointer=f"{pointer}/{index}",
                    parsed=ABSENT,
                    published=b[index],
                    reason="only in the entry (the arrays differ in length)",
                )
            )
        return
    # Scalars. Python compares int and float exactly (2**53 + 1 != float(2**53)), and kinds
    # already keep booleans and numbers apart.
    if a != b:
        reason = "the strings differ" if kind_a == "string" else "the numbers differ"
        out.append(FrontmatterDifference(pointer=pointer, parsed=a, published=b, reason=reason))
