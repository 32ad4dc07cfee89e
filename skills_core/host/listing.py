"""One origin's ``skills/list`` walk in progress.

Theory of operation
-------------------
``Host.list_skills`` starts a walk; each page's answer is taken by the router
(:mod:`skills_core.host.router`), which records entries in the registry and asks this module's
:class:`ListingProgress` what it has seen: the page and entry counts (:class:`ListingWalk`, which
stops at the caps and at a repeated cursor; SIL-17, WG-05), and each skill seen in this walk, so
that the same skill listed twice with different entries is caught (SIL-04).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import final

from skills_core.entry import SkillEntry
from skills_core.host.registry import ListingWalk

__all__ = ["ListingProgress"]


@final
@dataclass(slots=True, eq=False)
class ListingProgress:
    """A walk in progress.

    Attributes:
        token: The token of the page request outstanding.
        walk: Pages and entries counted so far.
        seen: Each skill's entry as this walk first listed it.
        conflicts: Skills this walk listed twice with different entries.
    """

    token: int
    walk: ListingWalk
    seen: dict[str, SkillEntry] = field(default_factory=dict)
    conflicts: set[str] = field(default_factory=set)
