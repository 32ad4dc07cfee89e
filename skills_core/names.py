"""Agent Skills name rules (docs/design.md#d4; URI-07).

A skill name is 1-64 characters of ASCII lowercase letters, digits and single hyphens, with no
leading, trailing or doubled hyphen: ``^[a-z0-9]+(-[a-z0-9]+)*$``. Unicode letters that the Agent
Skills reference validator accepts are refused here on purpose (SIL-07: look-alike names).
"""

from __future__ import annotations

import re

from .spec import NAME_MAX_LENGTH

__all__ = ["is_valid_skill_name", "skill_name_problem"]

_NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def is_valid_skill_name(name: object) -> bool:
    """Return True when ``name`` is a string that satisfies the skill naming rules."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= NAME_MAX_LENGTH
        and _NAME_RE.fullmatch(name) is not None
    )


def skill_name_problem(name: object) -> str | None:
    """Explain why ``name`` is not a valid skill name, or return None when it is valid."""
    if not isinstance(name, str):
        return f"a skill name must be a string, not {type(name).__name__}"
    if not name:
        return "a skill name must not be empty"
    if len(name) > NAME_MAX_LENGTH:
        return f"skill name is {len(name)} characters long; the maximum is {NAME_MAX_LENGTH}"
    if _NAME_RE.fullmatch(name) is None:
        shown = name if len(name) <= 80 else name[:77] + "..."
        return (
            f"skill name {shown!r} must use only lowercase ASCII letters, digits and single "
            "hyphens, and must not start or end with a hyphen"
        )
    return None
