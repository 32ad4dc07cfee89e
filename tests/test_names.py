"""Skill name rules (docs/design.md#d4; URI-07)."""

from __future__ import annotations

import pytest

from skills_core import is_valid_skill_name
from skills_core.names import skill_name_problem


@pytest.mark.parametrize("name", ["pdf-processing", "a", "a" * 64, "abc-123", "9"])
# Requirement rows: URI-07
def test_valid_names_URI_07(name: str) -> None:
    assert is_valid_skill_name(name)
    assert skill_name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("PDF-Processing", "lowercase ASCII"),
        ("-pdf", "lowercase ASCII"),
        ("pdf-", "lowercase ASCII"),
        ("pdf--processing", "lowercase ASCII"),
        ("a" * 65, "65 characters long; the maximum is 64"),
        ("pdf_processing", "lowercase ASCII"),
        ("pdf.processing", "lowercase ASCII"),
        ("café", "lowercase ASCII"),  # SIL-07: no Unicode look-alikes
        ("\uff50\uff44\uff46", "lowercase ASCII"),  # fullwidth "pdf"
        ("", "must not be empty"),
        (5, "must be a string, not int"),
        (None, "must be a string, not NoneType"),
    ],
)
# Requirement rows: URI-07
def test_invalid_names_URI_07(name: object, fragment: str) -> None:
    assert not is_valid_skill_name(name)
    problem = skill_name_problem(name)
    assert problem is not None
    assert fragment in problem


def test_long_name_is_shortened_in_the_message() -> None:
    problem = skill_name_problem("X" * 200)
    assert problem is not None
    assert "200 characters" in problem
