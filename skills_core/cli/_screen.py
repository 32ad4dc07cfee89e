"""Lines for a terminal that untrusted text cannot break out of, even by wrapping.

Theory of operation: :func:`skills_core.display.display` makes untrusted text one line of visible
characters, but a terminal wraps a long line, and a server that pads its description can choose
what lands at the start of the next row on the screen (a fake ``Approve this manifest?`` line, a
fake list entry). So when output goes to a terminal, every line that carries untrusted text is cut
here, at the terminal's width, into rows that each begin with a prefix of ours; our own lines
begin differently. Widths are counted conservatively (East Asian wide, fullwidth and ambiguous
characters as two columns), so a row is never wider than the terminal and the terminal never wraps
it. When output is not a terminal (a pipe, a file) nothing is cut.

Nothing here decides what is untrusted: callers pass text already shown through ``display``, and
the width (:func:`skills_core.cli._common.terminal_width`). Nothing here does I/O.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["fit"]

_WIDE: Final = frozenset({"W", "F", "A"})


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
    for char in text:
        columns = _columns(char)
        if used + columns > width:
            rows.append(row)
            row, used = indent, len(indent)
        row += char
        used += columns
    rows.append(row)
    return rows
