"""What a person sees: untrusted text made safe to show on a terminal or in a log line.

Theory of operation
-------------------
A hostile server controls every string it sends (names, descriptions, URIs, file names,
frontmatter values, error messages) and, over stdio, its own stderr. A skill folder controls its
file names and its SKILL.md. Written raw to a terminal, such text can move the cursor, erase lines,
conceal what follows (``ESC[8m``), reverse the order of what is shown (bidirectional overrides) or
simply start a new line that looks like ours: it can draw a fake manifest and a fake approval
question above the real ones (docs/design.md#d11).

So every such string passes through :func:`display` (or :func:`display_line`, for one-line fields
such as a description) before it reaches a terminal or a log line. It is the **one** function that
does this; the command line never writes server or folder text any other way. It shows as visible
escapes, never as themselves:

* C0 and C1 controls and DEL (``\\n``, ``\\r``, ``\\t``, ``\\x1b`` ... ``\\x9b``): line breaks,
  cursor movement and every ANSI/VT escape sequence begin with one of these;
* format characters (Unicode category ``Cf``): the bidirectional embeddings, overrides and
  isolates (U+202A..U+202E, U+2066..U+2069, U+200E/U+200F, U+061C), zero-width characters
  (U+200B..U+200D, U+2060, U+FEFF), the invisible tag characters (U+E0000 block) and the rest;
* U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR (categories ``Zl``/``Zp``), which some
  terminals and most viewers break lines on;
* the other characters Unicode calls *default ignorable* (rendered as nothing) though their
  category is a letter or a mark: variation selectors (U+FE00..U+FE0F, U+E0100..U+E01EF, enough
  to hide a whole message one byte per character), the Hangul fillers (U+115F, U+1160, U+3164,
  U+FFA0), U+034F COMBINING GRAPHEME JOINER, the Khmer inherent vowels (U+17B4, U+17B5) and the
  Mongolian free variation selectors (U+180B..U+180F);
* lone surrogates (category ``Cs``; they come from file names that are not UTF-8 and cannot be
  written to a UTF-8 stream at all) and private-use and unassigned code points (``Co``, ``Cn``),
  whose rendering no one can predict.

Escapes are written as Python writes them (``\\n``, ``\\x1b``, ``\\u202e``, ``\\U000e0041``), so a
person can read what was there. (A backslash stands for itself: ``\\n`` may also be those two
characters as the server sent them; error messages that quote a value with ``repr`` rely on it.)
The output contains no character of the classes above, so it cannot break a line, and printed
after a fixed prefix of ours it cannot pass for one of our lines.

A description is shown on one line and cut after :data:`DESCRIPTION_LIMIT` characters of the
escaped form (never inside an escape), saying how long it was in all; longer texts in a log line
are cut the same way at a limit the caller chooses.

Content shown as a block (a file printed on a terminal) keeps its line breaks (LF, and CR only
before LF) and tabs with ``display(text, lines=True)``; every other character above is escaped,
so a carriage return cannot overwrite a line and no escape sequence can erase one.

JSON written where a person may read it goes through :func:`display_json`: the document is exact
(the same JSON values), but every character of the classes above inside a string is written as a
JSON ``\\u`` escape, so the text is strict UTF-8 (no lone surrogate) and safe on a terminal.

A log is read by programs too. A CI runner obeys commands written in a job's output: the GitHub
Actions runner takes a line whose first characters, after any whitespace, are ``::`` as a workflow
command (``::add-mask::``, ``::stop-commands::``), and when that fails it looks for the legacy
``##[`` *anywhere* in the line (``##[set-output name=approved;]yes``). The output of every function
here forms neither, whatever the text:

* ``[`` after ``##`` is written ``\\x5b`` (``\\u005b`` in JSON, where ``#`` occurs only inside
  strings);
* ``:`` starting a line after whitespace, when a second ``:`` follows, is written ``\\x3a`` (JSON
  never starts a line with ``:``).

Combining marks and tabs between those characters count as nothing (a runner that compares text
as a culture does may skip them): ``#``, a combining accent, then ``#[`` has its ``[`` escaped too.
The output is taken to start a line: a caller prints it after a prefix of ours or after
whitespace, never right after a ``#`` or a ``:`` of its own. Nothing here does I/O.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Final

__all__ = [
    "DESCRIPTION_LIMIT",
    "display",
    "display_line",
    "display_json",
    "display_json_text",
    "is_safe",
]

#: Characters of an escaped description shown before it is cut (the full length is stated).
#: 300 is what fits in four lines of an 80-column terminal; a description may be 1,024 characters
#: (Agent Skills), and the whole of it stays available through ``--json``.
DESCRIPTION_LIMIT: Final = 300

#: Unicode categories shown escaped (see the module docstring).
_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

#: Default-ignorable characters whose category is not one of the above (Unicode's
#: DerivedCoreProperties.txt, Default_Ignorable_Code_Point, minus Cc/Cf/Cn).
_IGNORABLE: Final = frozenset(
    (
        0x034F,
        0x115F,
        0x1160,
        0x17B4,
        0x17B5,
        0x3164,
        0xFFA0,
        *range(0x180B, 0x1810),
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    )
)

#: Characters a runner may skip when it compares text (see :func:`_inert`).
_INERT_CATEGORIES: Final = frozenset({"Mn", "Mc", "Me", "Cc", "Cf"})
#: ``#``, ``#`` and ``[`` with nothing between them but what might be inert (no printable ASCII):
#: where :func:`_bracket_commands` has anything to look at (found at C speed).
_BRACKET_NEAR: Final = re.compile(r"#[^\x20-\x7e]*#[^\x20-\x7e]*\[").search


def _ranges(codes: frozenset[int]) -> str:
    """A regular expression class of ``codes``, as ranges (a class of single characters is
    searched character by character against each, far more slowly)."""
    spans: list[list[int]] = []
    for code in sorted(codes):
        if spans and spans[-1][1] == code - 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return "[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in spans) + "]"


_IGNORABLE_SEARCH: Final = re.compile(_ranges(_IGNORABLE)).search

_SHORT: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: The escapes display() writes, for cutting a line between two of them (never inside one).
_PIECE: Final = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[nrt])|.", re.DOTALL)


def _escape(char: str) -> str:
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _unsafe(char: str) -> bool:
    return unicodedata.category(char) in _UNSAFE_CATEGORIES or ord(char) in _IGNORABLE


def is_safe(text: str) -> bool:
    """True when :func:`display` would show ``text`` as it is.

    That is: no character it escapes, no ``##[`` and no ``::`` at the start (see the module
    docstring).
    """
    return _characters_safe(text) and not _obeyed(text)


def _characters_safe(text: str) -> bool:
    """True when ``text`` has no character :func:`display` escapes."""
    if text.isprintable():  # no Cc, Cf, Cs, Co, Cn, Zl, Zp (nor Zs but the space): C speed
        return text.isascii() or not _IGNORABLE_SEARCH(text)
    return not text.isascii() and not any(_unsafe(char) for char in text)


def _inert(char: str) -> bool:
    """A character a runner may skip when it compares: a mark, a tab, another control."""
    return char not in "\r\n" and unicodedata.category(char) in _INERT_CATEGORIES


def _after_inert(text: str, index: int) -> str:
    """The first character at or after ``index`` that is not inert ("" at the end)."""
    for char in text[index:]:
        if not _inert(char):
            return char
    return ""


def _bracket_commands(text: str) -> list[int]:
    """Where ``text`` has a ``[`` that, skipping inert characters, follows ``##``."""
    found: list[int] = []
    if "#" not in text or not _BRACKET_NEAR(text):
        return found
    start = text.find("[")
    while start >= 0:
        hashes, index = 0, start - 1
        while index >= 0 and hashes < 2:
            char = text[index]
            if char == "#":
                hashes += 1
            elif not _inert(char):
                break
            index -= 1
        if hashes == 2:
            found.append(start)
        start = text.find("[", start + 1)
    return found


def _colon_command(line: str) -> int:
    """Where ``line`` starts with ``::`` after whitespace and inert characters, or -1."""
    for index, char in enumerate(line):
        if char == ":":
            return index if _after_inert(line, index + 1) == ":" else -1
        if not (char.isspace() or _inert(char)):
            return -1
    return -1


def _obeyed(text: str) -> bool:
    """True when a runner could read ``text`` (one line, or JSON) as a command."""
    if "[" in text and _bracket_commands(text):
        return True
    return ":" in text and _colon_command(text) >= 0


def _disarm(text: str, *, bracket: str, colon: str | None) -> str:
    """``text`` with every command a runner could read in it escaped (module docstring).

    Args:
        text: Shown text (one line, a block of lines, or JSON).
        bracket: What to write for a ``[`` after ``##``.
        colon: What to write for the first of two ``:`` starting a line; None for JSON, which
            has no such line.
    """
    if "[" in text:
        found = _bracket_commands(text)
        if found:
            pieces: list[str] = []
            start = 0
            for index in found:
                pieces.append(text[start:index])
                pieces.append(bracket)
                start = index + 1
            pieces.append(text[start:])
            text = "".join(pieces)
    if colon is None or ":" not in text:
        return text
    lines = text.split("\n")
    for number, line in enumerate(lines):
        index = _colon_command(line)
        if index >= 0:
            lines[number] = line[:index] + colon + line[index + 1 :]
    return "\n".join(lines)


def display(text: str, *, lines: bool = False) -> str:
    """Return ``text`` with every control, format or invisible character shown as an escape.

    The result is one line of printable characters (unless ``lines``): it is safe to write to a
    terminal after a prefix of ours, it shows what ``text`` held, and no CI runner reads a
    command in it (``##[`` and a line's leading ``::`` are escaped; see the module docstring).

    Args:
        text: Untrusted text.
        lines: Keep line feeds, tabs, and carriage returns that come just before a line feed (a
            block of text such as a file's content); the result is then several lines, each safe.

    Example:
        >>> display("ok\\x1b[8m hidden\\nApprove? [y/N]\\u202e")
        'ok\\\\x1b[8m hidden\\\\nApprove? [y/N]\\\\u202e'
    """
    if text.isascii() and text.isprintable():  # the common case, and a fast one
        if "##[" not in text and not (text[:1] in " :" and text.lstrip(" ").startswith("::")):
            return text
        shown = text
    elif lines:
        shown = _display_block(text)
    else:
        shown = "".join(_escape(char) if _unsafe(char) else char for char in text)
    return _disarm(shown, bracket="\\x5b", colon="\\x3a")


def _display_block(text: str) -> str:
    out: list[str] = []
    last = len(text) - 1
    for index, char in enumerate(text):
        if char in "\n\t" or (char == "\r" and index < last and text[index + 1] == "\n"):
            out.append(char)
        elif _unsafe(char):
            out.append(_escape(char))
        else:
            out.append(char)
    return "".join(out)


def display_line(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """Return :func:`display` of ``text``, cut after ``limit`` characters with its length stated.

    The cut never falls inside an escape (``\\x1b`` is shown whole or not at all).

    Args:
        text: Untrusted text (a description, an error message from a server, a line of stderr).
        limit: The most characters of the escaped text to show (at least 1).

    Example:
        >>> display_line("x" * 500, limit=10)
        'xxxxxxxxxx... (500 characters in all)'
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit!r}")
    shown = display(text)
    if len(shown) <= limit:
        return shown
    end = 0
    for piece in _PIECE.finditer(shown):
        if piece.end() > limit:
            break
        end = piece.end()
    return f"{shown[:end]}... ({len(text):,} characters in all)"


def display_json(document: object, *, indent: int | None = 2) -> str:
    """Return ``document`` as JSON text that is strict UTF-8 and safe to show on a terminal.

    The JSON is exact: parsing it gives ``document`` back. Non-ASCII text stays readable; only the
    characters :func:`display` would escape are written as ``\\uXXXX`` escapes (a character past
    U+FFFF as its UTF-16 pair, a lone surrogate as itself escaped), and a ``[`` after ``##`` as
    ``\\u005b`` (see the module docstring).

    Args:
        document: JSON values (dicts, lists, strings, numbers, booleans, None).
        indent: As for :func:`json.dumps`.
    """
    return display_json_text(json.dumps(document, indent=indent, ensure_ascii=False))


def display_json_text(text: str) -> str:
    """Return JSON text made safe as :func:`display_json` makes it: the same JSON values.

    Args:
        text: JSON as :func:`json.dumps` writes it (any ``indent``, ``ensure_ascii`` or not):
            outside its strings, nothing but the JSON syntax, spaces and line feeds.

    Returns:
        ``text`` itself when it is safe already.
    """
    if not _characters_safe(text.replace("\n", "")):
        text = "".join(
            _json_escape(char) if _unsafe(char) and char != "\n" else char for char in text
        )
    return _disarm(text, bracket="\\u005b", colon=None)


def _json_escape(char: str) -> str:
    # Outside strings, JSON text has no character display() escapes except the newlines of the
    # indentation (kept above), so every one met here is inside a string.
    return json.dumps(char, ensure_ascii=True)[1:-1]
