"""What a person sees: untrusted text made safe to show on a terminal or in a log line.

Theory of operation
-------------------
A hostile server controls every string it sends (names, descriptions, URIs, file names,
frontmatter values, error messages) and, over stdio, its own stderr. A skill folder controls its
file names and its SKILL.md. Written raw to a terminal, such text can move the cursor, erase lines,
conceal what follows (``ESC[8m``), reverse the order of what is shown (bidirectional overrides) or
simply start a new line that looks like ours: it can draw a fake manifest and a fake approval
question above the real ones (DESIGN.md decision 11).

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
* lone surrogates (category ``Cs``; they come from file names that are not UTF-8 and cannot be
  written to a UTF-8 stream at all) and private-use and unassigned code points (``Co``, ``Cn``),
  whose rendering no one can predict.

Escapes are written as Python writes them (``\\n``, ``\\x1b``, ``\\u202e``, ``\\U000e0041``), so a
person can read what was there. The output contains no character of the classes above, so it
cannot break a line, and printed after a fixed prefix of ours it cannot pass for one of our lines.

A description is shown on one line and cut after :data:`DESCRIPTION_LIMIT` characters of the
escaped form, saying how long it was in all; longer texts in a log line are cut the same way at a
limit the caller chooses. Nothing here does I/O.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["DESCRIPTION_LIMIT", "display", "display_line", "is_safe"]

#: Characters of an escaped description shown before it is cut (the full length is stated).
#: 300 is what fits in four lines of an 80-column terminal; a description may be 1,024 characters
#: (Agent Skills), and the whole of it stays available through ``--json``.
DESCRIPTION_LIMIT: Final = 300

#: Unicode categories shown escaped (see the module docstring).
_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

_SHORT: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


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
    return unicodedata.category(char) in _UNSAFE_CATEGORIES


def is_safe(text: str) -> bool:
    """True when ``text`` has no character that :func:`display` would escape."""
    if text.isascii():
        return text.isprintable()
    return not any(_unsafe(char) for char in text)


def display(text: str) -> str:
    """Return ``text`` with every control, format or invisible character shown as an escape.

    The result is one line of printable characters: it is safe to write to a terminal after a
    prefix of ours, and it says exactly what ``text`` held.

    Example:
        >>> display("ok\\x1b[8m hidden\\nApprove? [y/N]\\u202e")
        'ok\\\\x1b[8m hidden\\\\nApprove? [y/N]\\\\u202e'
    """
    if text.isascii() and text.isprintable():  # the common case, and a fast one
        return text
    return "".join(_escape(char) if _unsafe(char) else char for char in text)


def display_line(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """Return :func:`display` of ``text``, cut after ``limit`` characters with its length stated.

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
    return f"{shown[:limit]}... ({len(text):,} characters in all)"
