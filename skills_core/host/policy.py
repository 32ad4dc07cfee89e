"""Host policy: every knob of the host state machine, with fail-closed defaults.

Theory of operation
-------------------
One frozen value object configures a :class:`~skills_core.host.Host`. The defaults are the
secure choices of decision 8 (docs/design.md#d8) and the WG and SIL rows of docs/requirements.md;
each field cites its row. A host may loosen them (allow dynamic skills, raise limits) but the
library never does so by itself.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final, final

from ..entry import DEFAULT_LIMITS, Limits
from ..frontmatter import DEFAULT_MAX_BYTES
from ..spec import MAX_TOTAL_BYTES
from .gates import DEFAULT_WIDENING_FIELDS

__all__ = [
    "MIB",
    "DEFAULT_SERVER_BUDGET",
    "DEFAULT_LISTED_RESOURCES",
    "DEFAULT_LISTING_BYTES",
    "DEFAULT_TOTAL_LISTED_RESOURCES",
    "DEFAULT_TOTAL_LISTING_BYTES",
    "CrossOriginPolicy",
    "HostPolicy",
    "DEFAULT_POLICY",
]

MIB: Final = 1024 * 1024
#: Cumulative skill-file bytes fetched from one server (WG-04; the threat model's fixtures use
#: 200 MiB, about twelve maximal skills).
DEFAULT_SERVER_BUDGET: Final = 200 * MIB

# What listings may make the host keep. The registry holds every entry a server lists until the
# server is forgotten (an entry missing from a later listing is not removed; LIST-05), so these
# bound what it holds, per server and for all servers together, not just one walk: without them,
# pages of 300 entries of 512 files each reach 1.5 GB before the 10,000-entry cap stops the walk.
# A listed resource costs the registry about 270 bytes (measured: the ``SkillResource`` and its
# URI and digest strings); "listing bytes" are an entry's compact JSON plus 100 bytes for each
# object and array in it, an estimate of the Python objects it becomes.

#: Resources (manifest rows) one server's listed entries may hold: 10,000 skills of 5 files, about
#: 14 MB of host memory; a hostile listing of maximal skills stops after 97 of them.
DEFAULT_LISTED_RESOURCES: Final = 50_000
#: Listing bytes one server's entries may hold: one maximal JSON-RPC message (32 MiB), so a page
#: the transport accepted always fits in an otherwise empty registry.
DEFAULT_LISTING_BYTES: Final = 32 * MIB
#: Resources all servers' listed entries may hold together: four servers at their budget.
DEFAULT_TOTAL_LISTED_RESOURCES: Final = 4 * DEFAULT_LISTED_RESOURCES
#: Listing bytes all servers' entries may hold together: four servers at their budget, so several
#: hostile servers cannot multiply the worst case past about 128 MiB of listings.
DEFAULT_TOTAL_LISTING_BYTES: Final = 4 * DEFAULT_LISTING_BYTES


class CrossOriginPolicy(enum.StrEnum):
    """What happens when an acting skill asks to read from another server (ORG-08, ORG-09)."""

    #: Ask the user, per call, naming both servers.
    PROMPT = "prompt"
    #: Refuse outright (stricter, still compliant).
    DENY = "deny"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HostPolicy:
    """How the host treats MCP-served skills.

    Attributes:
        allow_dynamic: Load ``"dynamic"`` skills (approved per load, never persisted); declined by
            default (ENTRY-16, APR-04).
        require_approval: Prompt before every load not covered by an approval of the exact set.
            ``False`` means the host's own policy approves loads (SEC-06); nothing is persisted.
        limits: Per-skill limits checked from the entry before anything is fetched (ENTRY-17..21).
            The spec's values are the floor.
        max_pages: Pages followed in one ``skills/list`` walk, or None (the default) for no page
            cap of its own: the walk is then bounded by ``max_entries``, a page with no entry
            counting as one (SIL-17, WG-05), so a server's page size never shortens a listing.
        max_entries: Entries accepted in one ``skills/list`` walk (SIL-17, WG-05). The default,
            10,000, is the largest catalog a default host reads whole; the byte and manifest-row
            budgets below bound what those entries may hold.
        max_directory_pages: Pages followed in one directory read (WG-05).
        max_directory_entries: Children accepted in one directory read (WG-05).
        per_server_budget_bytes: Cumulative skill-file bytes fetched from one server (WG-04).
        max_listed_resources: Manifest rows one server's registered entries may hold; a listing
            that would pass it stops with ``ListingPartial`` (reason ``resource-budget``).
        max_listing_bytes: Listing bytes (compact JSON, plus 100 per object and array) one
            server's registered entries and refused entries may hold (``byte-budget``).
        max_total_listed_resources: The same for all servers together.
        max_total_listing_bytes: The same for all servers together.
        max_file_bytes: Optional per-file cap, checked from the entry before fetching (WG-03).
        max_resource_bytes: Cap on an ordinary resource read (no entry bounds it; WG-03).
        cross_origin: Reads of another server driven by a skill (ORG-08, ORG-09).
        widening_fields: Frontmatter fields ignored unless granted for the skill (APR-08, APR-09).
        denied_origins: Labels whose skills are never loaded (SEC-04).
        denied_skills: ``(label, uri)`` pairs never loaded (SEC-04).
        max_frontmatter_bytes: Cap on a SKILL.md frontmatter when verifying it (SIL-09, SIL-10).
    """

    allow_dynamic: bool = False
    require_approval: bool = True
    limits: Limits = DEFAULT_LIMITS
    max_pages: int | None = None
    max_entries: int = 10_000
    max_directory_pages: int = 50
    max_directory_entries: int = 10_000
    per_server_budget_bytes: int = DEFAULT_SERVER_BUDGET
    max_listed_resources: int = DEFAULT_LISTED_RESOURCES
    max_listing_bytes: int = DEFAULT_LISTING_BYTES
    max_total_listed_resources: int = DEFAULT_TOTAL_LISTED_RESOURCES
    max_total_listing_bytes: int = DEFAULT_TOTAL_LISTING_BYTES
    max_file_bytes: int | None = None
    max_resource_bytes: int = MAX_TOTAL_BYTES
    cross_origin: CrossOriginPolicy = CrossOriginPolicy.PROMPT
    widening_fields: frozenset[str] = DEFAULT_WIDENING_FIELDS
    denied_origins: frozenset[str] = field(default_factory=frozenset)
    denied_skills: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    max_frontmatter_bytes: int = DEFAULT_MAX_BYTES

    def __post_init__(self) -> None:
        if self.max_pages is not None and (
            isinstance(self.max_pages, bool)
            or not isinstance(self.max_pages, int)
            or self.max_pages < 1
        ):
            raise ValueError(
                f"HostPolicy.max_pages must be None or a positive int, not {self.max_pages!r}"
            )
        for name in (
            "max_entries",
            "max_directory_pages",
            "max_directory_entries",
            "per_server_budget_bytes",
            "max_listed_resources",
            "max_listing_bytes",
            "max_total_listed_resources",
            "max_total_listing_bytes",
            "max_resource_bytes",
            "max_frontmatter_bytes",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"HostPolicy.{name} must be a positive int, not {value!r}")
        if self.max_file_bytes is not None and (
            isinstance(self.max_file_bytes, bool)
            or not isinstance(self.max_file_bytes, int)
            or self.max_file_bytes < 0
        ):
            raise ValueError(
                f"HostPolicy.max_file_bytes must be None or a non-negative int, not "
                f"{self.max_file_bytes!r}"
            )
        if not isinstance(self.limits, Limits):
            raise ValueError("HostPolicy.limits must be a Limits")
        object.__setattr__(self, "cross_origin", CrossOriginPolicy(self.cross_origin))
        object.__setattr__(self, "widening_fields", frozenset(self.widening_fields))
        object.__setattr__(self, "denied_origins", frozenset(self.denied_origins))
        object.__setattr__(self, "denied_skills", frozenset(self.denied_skills))

    @property
    def dynamic_total_bytes(self) -> int:
        """Cumulative bytes one load of a dynamic skill may deliver (ENTRY-22, HELD-08)."""
        return self.limits.max_total_bytes

    def denies(self, origin: str, uri: str) -> bool:
        """True when explicit policy forbids loading ``(origin, uri)`` (SEC-04)."""
        return origin in self.denied_origins or (origin, uri) in self.denied_skills


#: The fail-closed defaults.
DEFAULT_POLICY: Final = HostPolicy()
