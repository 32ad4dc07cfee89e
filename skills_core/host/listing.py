"""One origin's ``skills/list`` walk in progress, and what listings may make the host keep.

Theory of operation
-------------------
``Host.list_skills`` starts a walk; each page's answer is taken, entry by entry, by
:class:`~skills_core.host.intake.EntryIntake`, which asks this module's :class:`ListingProgress`
what the walk has seen: the page and entry counts (:class:`ListingWalk`, which stops at the caps
and at a repeated cursor; SIL-17, WG-05), and each skill seen in this walk, so that the same skill
listed twice with different entries is caught (SIL-04).

**Budgets.** The registry keeps what servers list until they are forgotten, so a listing is
bounded by what the registry may hold, not only by the walk's caps (pages of 300 entries of
512 files reach 1.5 GB before 10,000 entries stop the walk). Before an entry is validated,
:func:`~skills_core.host.budgets.entry_footprint` estimates what keeping it costs: its manifest
rows, and its "listing bytes" (compact JSON plus
:data:`~skills_core.host.budgets.CONTAINER_BYTES` per object and array, since a frozen object costs
far more than its two braces). :func:`budget_stop` refuses the entry, and stops the walk, when keeping
it would take the server's entries past ``HostPolicy.max_listed_resources`` or
``max_listing_bytes``, or all servers' past the host-wide ``max_total_*`` budgets; an entry that
replaces one already registered is charged only the difference. Nothing past the stop is ever
validated. A refused entry is charged for its error report (:func:`rejection_footprint`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, final

from ..entry import SkillEntry
from ..errors import InvalidEntryError
from .budgets import Footprint
from .codes import StopReason
from .policy import HostPolicy
from .registry import ListingWalk

__all__ = [
    "ListingProgress",
    "rejection_footprint",
    "budget_stop",
]

#: Listing bytes charged for each problem a refused entry's error keeps, beyond its text.
_PROBLEM_BYTES: Final = 150


@final
@dataclass(slots=True, eq=False)
class ListingProgress:
    """A walk in progress (its page requests carry it).

    Attributes:
        walk: Pages and entries counted so far.
        seen: Each skill's entry as this walk first listed it.
        conflicts: Skills this walk listed twice with different entries.
    """

    walk: ListingWalk
    seen: dict[str, SkillEntry] = field(default_factory=dict)
    conflicts: set[str] = field(default_factory=set)


def rejection_footprint(error: InvalidEntryError) -> Footprint:
    """What keeping a refused entry's error report (its message and every problem) costs."""
    problems = sum(len(p.message) + len(p.pointer) + _PROBLEM_BYTES for p in error.problems)
    return Footprint(bytes=len(error.message) + problems)


def budget_stop(
    policy: HostPolicy,
    origin: str,
    *,
    server: Footprint,
    total: Footprint,
    change: Footprint,
) -> tuple[StopReason, str] | None:
    """Why keeping ``change`` more would break a listing budget, or None when it fits.

    Args:
        policy: The budgets.
        origin: The server's label, for the message.
        server: What the registry holds for this server now.
        total: What it holds for all servers now.
        change: What the entry would add (less what it replaces).
    """
    checks = (
        (server.resources, policy.max_listed_resources, "max_listed_resources", "resources"),
        (
            total.resources,
            policy.max_total_listed_resources,
            "max_total_listed_resources",
            "resources",
        ),
        (server.bytes, policy.max_listing_bytes, "max_listing_bytes", "bytes"),
        (total.bytes, policy.max_total_listing_bytes, "max_total_listing_bytes", "bytes"),
    )
    for held, budget, name, unit in checks:
        more = change.resources if unit == "resources" else change.bytes
        if more > 0 and held + more > budget:
            whose = f"{origin!r}'s entries" if "total" not in name else "all servers' entries"
            what = "manifest rows" if unit == "resources" else "listing bytes"
            reason = StopReason.RESOURCE_BUDGET if unit == "resources" else StopReason.BYTE_BUDGET
            return reason, (
                f"{whose} would hold {held + more} {what}, over the budget of {budget} "
                f"(HostPolicy.{name}); the listing stopped there and may be incomplete"
            )
    return None
