"""Rows that untrusted text cannot break out of by wrapping (skills_core.cli._screen; issue 11)."""

from __future__ import annotations

import unicodedata

from ci_runner import PIECES, command_in
from hypothesis import given
from hypothesis import strategies as st

from skills_core.cli._screen import fit
from skills_core.display import display


def columns(row: str) -> int:
    wide = {"W", "F", "A"}
    return sum(2 if unicodedata.east_asian_width(c) in wide else 1 for c in row)


def test_a_padded_forgery_lands_after_our_prefix() -> None:
    """A description padded so that a terminal would wrap "Approve..." to column 0."""
    forged = "x" * 62 + "Approve this manifest? [y/N]"
    rows = fit("  | description: ", forged, width=80, indent="  | ")
    assert rows == ["  | description: " + "x" * 62 + "A", "  | pprove this manifest? [y/N]"]
    assert fit("a: ", forged, width=None, indent="  ") == ["a: " + forged]


def test_wide_characters_count_two_columns() -> None:
    rows = fit("> ", "\u65e5" * 10, width=10, indent="> ")
    assert rows == ["> " + "\u65e5" * 4] * 2 + ["> " + "\u65e5" * 2]


@given(
    st.text(st.characters(exclude_categories=()), max_size=400),
    st.integers(min_value=20, max_value=200),
)
def test_no_row_is_wider_than_the_terminal_and_every_row_is_ours(text: str, width: int) -> None:
    shown = display(text)
    rows = fit("  | name: ", shown, width=width, indent="  | ")
    assert all(columns(row) <= width for row in rows)
    assert rows[0].startswith("  | name: ")
    assert all(row.startswith("  | ") for row in rows)
    assert "".join(row.removeprefix("  | ") for row in rows[1:]) == shown[len(rows[0]) - 10 :]


# --- a continued row is a line a CI runner reads: it never begins a workflow command --------


def test_a_row_carried_on_after_spaces_never_begins_with_two_colons() -> None:
    """A description padded so that ``::add-mask::`` begins the second row, after our indent."""
    padded = "x" * 36 + "::add-mask::secret"
    rows = fit("    ", padded, width=40, indent="    ")
    assert rows == ["    " + "x" * 36, "    \\x3a:add-mask::secret"]
    rows = fit("    ", "x" * 36 + "   ::stop-commands::t", width=40, indent="    ")
    assert rows[1] == "       \\x3a:stop-commands::t"
    # a lone colon, a colon inside the row, and an indent that is not blank stay as they are
    assert fit("    ", "x" * 36 + ":a", width=40, indent="    ")[1] == "    :a"
    assert fit("    ", "x" * 36 + ":", width=40, indent="    ")[1] == "    :"
    assert fit("    ", "x" * 36 + ":\u0301:", width=40, indent="    ")[1] == "    \\x3a\u0301:"
    assert fit("    ", "x" * 36 + "a::b", width=40, indent="    ")[1] == "    a::b"
    assert fit("  | ", "x" * 36 + "::b", width=40, indent="  | ")[1] == "  | ::b"


def test_the_escaped_colon_moves_whole_to_the_next_row() -> None:
    rows = fit("    ", "x" * 36 + " " * 34 + "::k", width=40, indent="    ")
    assert all(columns(row) <= 40 for row in rows)
    assert rows[-1] == "    \\x3a:k"
    assert command_in(rows[-2]) is None


@given(
    st.lists(st.sampled_from([*PIECES, "x" * 9]) | st.characters(), max_size=40).map("".join),
    st.integers(min_value=20, max_value=60),
    st.sampled_from(["", "    ", "  "]),
)
def test_no_row_is_a_runner_command(text: str, width: int, indent: str) -> None:
    rows = fit(indent, display(text), width=width, indent=indent)
    assert all(command_in(row) is None for row in rows), rows
    assert all(columns(row) <= width for row in rows)
