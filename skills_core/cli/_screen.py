"""Lines for a terminal that untrusted text cannot break out of, even by wrapping.

Theory of operation: :func:`skills_core.display.display` makes untrusted text one line of visible
characters, but a terminal wraps a long line, and a server that pads its description can choose
what lands at the start of the next row on the screen (a fake ``Approve this manifest?`` line, a
fake list entry). So when output goes to a terminal, every line that carries untrusted text is cut
here, at the terminal's width, into rows that each begin with a prefix of ours; our own lines
begin differently. Widths are counted conservatively (East Asian wide, fullwidth and ambiguous
characters as two columns), so a row is never wider than the terminal and the terminal never wraps
it. When output is not a terminal (a pipe, a file) nothing is cut.

A row is a line a CI runner may read too (a job's log keeps the terminal's lines when a tool runs
under ``script`` or a pseudo-terminal): where a row begins with an indent of spaces and the text
carried on to it begins, after spaces, with ``::``, the first ``:`` is written ``\\x3a``, as
:func:`skills_core.display.display` writes it at the start of a line. (A ``##[`` cannot appear in
a row: the text has none, and a cut only takes pieces of it.)

Nothing here decides what is untrusted: callers pass text already shown through ``display``, and
the width (:func:`skills_core.cli._common.terminal_width`). Nothing here does I/O.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["fit"]

_WIDE: Final = frozenset({"W", "F", "A"})
#: Marks and controls: a runner that compares text as a culture does may skip them.
_INERT: Final = frozenset({"Mn", "Mc", "Me", "Cc", "Cf"})
#: How a ``:`` that would begin ``::`` on a row is written (as ``display`` writes it).
_COLON: Final = "\\x3a"


def _columns(char: str) -> int:
    return 2 if not char.isascii() and unicodedata.east_asian_width(char) in _WIDE else 1


def fit(first: str, text: str, *, width: int | None, indent: str) -> list[str]:
    """Lay ``first + text`` out in rows of at most ``width`` columns.

    Args:
        first: Our prefix for the first row.
        text: Safe text (already shown through ``display``) to follow it.
        width: The terminal's width, or None for one row however long.
        indent: Our prefix for every further row (at most half the width).

    Returns:
        The rows, without line ends.
    """
    if width is None:
        return [first + text]
    rows: list[str] = []
    row, used = first, sum(_columns(c) for c in first)
    blank = False  # the row so far is an indent of ours and spaces: it may begin a command
    for index, char in enumerate(text):
        columns = _columns(char)
        if used + columns > width:
            rows.append(row)
            row, used = indent, len(indent)
            blank = not indent.strip()
        if blank and not _skipped(char):
            blank = False
            if char == ":" and _next_kept(text, index + 1) == ":":
                if used + len(_COLON) > width:
                    rows.append(row)
                    row, used = indent, len(indent)
                row += _COLON
                used += len(_COLON)
                continue
        row += char
        used += columns
    rows.append(row)
    return rows


def _skipped(char: str) -> bool:
    """What a runner skips before a command: whitespace, and what it may compare as nothing."""
    return char.isspace() or unicodedata.category(char) in _INERT


def _next_kept(text: str, index: int) -> str:
    """The first character at or after ``index`` that a runner may not skip ("" at the end)."""
    for char in text[index:]:
        if unicodedata.category(char) not in _INERT:
            return char
    return ""
