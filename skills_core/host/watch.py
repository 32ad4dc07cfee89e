"""What a host does when a server says its skills changed: re-list, verify, report (no I/O).

Theory of operation
-------------------
A change notification (``notifications/resources/list_changed`` or
``notifications/resources/updated``, on a 2025-11-25 connection or a 2026-07-28
``subscriptions/listen`` stream) is only a hint (PUSH-09): it carries no data the host uses. A
:class:`ChangeWatch` turns hints into re-lists of that server, and re-lists into a
:class:`SkillsChanged` outcome naming the skills added, removed and changed.

**Bounded work** (PUSH-11). :meth:`ChangeWatch.notified` costs a dictionary write, whatever the
notification says; an origin is re-listed at most once per ``interval`` (one second by default),
and the notifications that arrive while a re-list runs or before the interval has passed make one
more re-list at most. A server that sends 100,000 notifications costs 100,000 dictionary writes
and a handful of re-lists. The clock is the caller's: ``now`` is an argument.

**The re-list** is :meth:`Host.list_skills <skills_core.host.router.Host.list_skills>`, verified
as any listing: every entry is checked, charged to the budgets and recorded; a changed entry of a
skill the host holds goes through its load session, which suspends an acting skill and asks for
approval again before any of the new bytes reach the model (PUSH-10, HELD-09, APR-02). A skill
missing from a *complete* listing is not taken as gone on the listing's word (an empty or partial
listing proves nothing: LIST-05): the host asks ``skills/get`` for it
(:meth:`Host.refresh <skills_core.host.router.Host.refresh>`), and a ``-32602`` answer removes it
from the registry and unloads it. A new skill is recorded, never loaded: loading still needs the
usual consent.

**Servers that send nothing.** A server may offer no notification stream at all (a 2026-07-28
server without ``subscriptions/listen``, a 2025-11-25 HTTP server without a GET stream).
:meth:`ChangeWatch.poll` has such an origin re-listed every ``every`` seconds instead (never more
often than ``interval``): the same re-list, verification and report, on a timer.

The three steps, each returning effects to carry out (``pump`` them):

1. :meth:`ChangeWatch.begin` (when :meth:`ChangeWatch.due` names the origin): the re-list;
2. :meth:`ChangeWatch.listed` with what the re-list produced: the ``skills/get`` confirmations of
   skills it no longer lists;
3. :meth:`ChangeWatch.end`: the :class:`SkillsChanged`, when anything changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, final

from ..entry import SkillEntry
from .effects import Effect, ListingComplete, Outcome
from .router import Host

__all__ = [
    "ChangeWatch",
    "SkillsChanged",
    "CHANGE_NOTIFICATIONS",
    "DEFAULT_RELIST_INTERVAL",
]

#: Seconds between two re-lists of one server at least (PUSH-11).
DEFAULT_RELIST_INTERVAL: Final = 1.0

#: The notifications that make a host re-list (both eras use the same methods).
CHANGE_NOTIFICATIONS: Final = frozenset(
    {"notifications/resources/list_changed", "notifications/resources/updated"}
)

#: Skills missing from one re-list that are confirmed with ``skills/get`` (the rest wait for the
#: next re-list): bounds what one listing that drops everything costs.
MAX_CONFIRMATIONS: Final = 256


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillsChanged(Outcome):
    """A re-list after a change notification found skills added, removed or changed (PUSH-09).

    Attributes:
        origin: Server label.
        added: SKILL.md URIs newly in the registry (recorded, not loaded).
        removed: SKILL.md URIs the server says are no longer skills (removed and unloaded).
        changed: SKILL.md URIs whose entry changed (a held one needs approval again).
    """

    origin: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        """How many skills were added, removed and changed."""
        return (
            f"{self.origin!r}: {len(self.added)} skills added, {len(self.removed)} removed, "
            f"{len(self.changed)} changed"
        )


@final
class ChangeWatch:
    """Re-lists servers on change notifications, paced, and reports what changed.

    Args:
        host: The host whose registry is re-listed.
        interval: Seconds between two re-lists of one server at least.
    """

    __slots__ = (
        "_before",
        "_busy",
        "_host",
        "_interval",
        "_last",
        "_pending",
        "_polled",
        "notifications",
    )

    def __init__(self, host: Host, *, interval: float = DEFAULT_RELIST_INTERVAL) -> None:
        if not interval >= 0:
            raise ValueError(f"interval must be non-negative seconds, not {interval!r}")
        self._host = host
        self._interval = float(interval)
        #: Origins notified since their last re-list began.
        self._pending: set[str] = set()
        #: When each origin's last re-list began.
        self._last: dict[str, float] = {}
        #: The registry of each origin being re-listed, as it was before.
        self._before: dict[str, dict[str, SkillEntry]] = {}
        self._busy: set[str] = set()
        #: Origins re-listed on a timer (:meth:`poll`), with their period.
        self._polled: dict[str, float] = {}
        #: Change notifications received, all origins (for reports).
        self.notifications = 0

    def notified(self, origin: str, method: str) -> bool:
        """Record a notification; True when it is a change notification (it asks a re-list)."""
        if method not in CHANGE_NOTIFICATIONS:
            return False
        self.notifications += 1
        self._pending.add(origin)
        return True

    def poll(self, origin: str, every: float, now: float) -> None:
        """Re-list ``origin`` every ``every`` seconds (at least the watch's ``interval``) from
        ``now`` on, notified or not: for a server that offers no notification stream.

        Raises:
            ValueError: ``every`` is not a positive number of seconds.
        """
        if not every > 0:
            raise ValueError(f"a poll period must be positive seconds, not {every!r}")
        self._polled[origin] = max(float(every), self._interval)
        self._last.setdefault(origin, now)

    def due(self, now: float) -> list[str]:
        """The origins to re-list now (call :meth:`begin` for each)."""
        return [
            origin
            for origin in sorted(self._pending | self._polled.keys())
            if origin not in self._busy and now >= self._due_at(origin)
        ]

    def next_wakeup(self) -> float | None:
        """When the next re-list is due, or None when nothing is pending or polled (or all are
        running)."""
        waiting = [
            self._due_at(origin)
            for origin in self._pending | self._polled.keys()
            if origin not in self._busy
        ]
        return min(waiting) if waiting else None

    def _due_at(self, origin: str) -> float:
        last = self._last.get(origin)
        if origin in self._pending:
            return (-self._interval if last is None else last) + self._interval
        assert last is not None  # polled: poll() set it
        return last + self._polled[origin]

    def begin(self, origin: str, now: float) -> list[Effect]:
        """Start re-listing ``origin``: the effects to carry out (the ``skills/list`` walk)."""
        self._pending.discard(origin)
        self._busy.add(origin)
        self._last[origin] = now
        self._before[origin] = self._entries(origin)
        return self._host.list_skills(origin)

    def listed(self, origin: str, outcome: Iterable[object]) -> list[Effect]:
        """The re-list was carried out: ``skills/get`` for the skills it no longer lists."""
        complete = next(
            (e for e in outcome if isinstance(e, ListingComplete) and e.origin == origin), None
        )
        if complete is None:  # cut short: an incomplete listing proves nothing (LIST-05)
            return []
        missing = [uri for uri in self._entries(origin) if uri not in complete.listed]
        effects: list[Effect] = []
        for uri in sorted(missing)[:MAX_CONFIRMATIONS]:
            effects.extend(self._host.refresh(origin, uri))
        return effects

    def end(self, origin: str) -> SkillsChanged | None:
        """The re-list of ``origin`` is over: what changed in its registry, if anything."""
        self._busy.discard(origin)
        before = self._before.pop(origin, {})
        after = self._entries(origin)
        added = tuple(sorted(uri for uri in after if uri not in before))
        removed = tuple(sorted(uri for uri in before if uri not in after))
        changed = tuple(
            sorted(uri for uri, entry in after.items() if uri in before and before[uri] != entry)
        )
        if not (added or removed or changed):
            return None
        return SkillsChanged(origin=origin, added=added, removed=removed, changed=changed)

    def _entries(self, origin: str) -> dict[str, SkillEntry]:
        return {entry.uri: entry for _, entry in self._host.registry.entries(origin)}
