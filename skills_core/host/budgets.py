"""What keeping a listing costs a host, counted the same way wherever it is asked.

The registry keeps every entry a server lists (see :mod:`skills_core.host.listing` for the
budgets that bound it); what an entry costs is its :class:`Footprint`: the manifest rows it holds
and its "listing bytes", its compact JSON plus :data:`CONTAINER_BYTES` per object and array (an
estimate of the Python objects it becomes). :func:`entry_footprint` counts one wire entry, and
:func:`listing_overflow` says whether a whole listing fits a policy's caps, so a server can tell at
start whether a default host reads its catalog whole (``skills-core serve`` does). This module
imports nothing of the host's machinery, so asking costs a server no more than its own imports.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, final

from .policy import HostPolicy

__all__ = ["CONTAINER_BYTES", "Footprint", "entry_footprint", "listing_overflow"]

#: Listing bytes charged for each JSON object and array, beyond its text: a frozen object is a
#: read-only mapping over a dict (about 110 bytes empty), an array a tuple (56 bytes and up).
CONTAINER_BYTES: Final = 100


@final
@dataclass(frozen=True, slots=True)
class Footprint:
    """What registering an entry (or keeping a refused one) costs the host.

    Attributes:
        resources: Manifest rows kept.
        bytes: Listing bytes kept (see ``HostPolicy.max_listing_bytes``).
    """

    resources: int = 0
    bytes: int = 0

    def __add__(self, other: Footprint) -> Footprint:
        return Footprint(self.resources + other.resources, self.bytes + other.bytes)

    def __sub__(self, other: Footprint) -> Footprint:
        return Footprint(self.resources - other.resources, self.bytes - other.bytes)


def entry_footprint(item: object) -> Footprint:
    """Estimate what registering the wire entry ``item`` costs (see the module docstring).

    Never raises: a value that is not JSON, or nests too deeply to encode, is charged its manifest
    rows only (it is refused as invalid, and then charged for its error report instead).
    """
    resources = item.get("resources") if isinstance(item, dict) else None
    rows = len(resources) if isinstance(resources, list) else 0
    try:
        text = json.dumps(item, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return Footprint(resources=rows)
    containers = text.count("{") + text.count("[")
    return Footprint(resources=rows, bytes=len(text) + CONTAINER_BYTES * containers)


def listing_overflow(items: Iterable[object], policy: HostPolicy) -> str | None:
    """Why a host with ``policy`` would stop before the end of a listing of ``items``, or None.

    What a server can ask at start (``skills-core serve`` warns when its catalog is past what a
    default host reads whole): the entry cap and the one server's budgets of manifest rows and
    listing bytes, counted as the host counts them (:func:`entry_footprint`).

    Args:
        items: Every listed entry, as JSON values (``SkillEntry.to_json()``).
        policy: The host's policy (``HostPolicy()`` for a default host).
    """
    entries = rows = size = 0
    for item in items:
        footprint = entry_footprint(item)
        entries += 1
        rows += footprint.resources
        size += footprint.bytes
    for held, cap, name, what in (
        (entries, policy.max_entries, "max_entries", "entries"),
        (rows, policy.max_listed_resources, "max_listed_resources", "manifest rows"),
        (size, policy.max_listing_bytes, "max_listing_bytes", "listing bytes"),
    ):
        if held > cap:
            return f"{held:,} {what}, over the {cap:,} of HostPolicy.{name}"
    return None
