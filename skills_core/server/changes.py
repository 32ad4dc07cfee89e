"""What changed in a running server's catalog, as a value, and when to say so (public API).

Theory of operation
-------------------
A server tells its clients that its skills changed (docs/design.md#d13): on a 2025-11-25
connection with ``notifications/resources/list_changed`` (and ``notifications/resources/updated``
for a URI the client subscribed to), on 2026-07-28 on the ``subscriptions/listen`` streams a
client opened (:mod:`skills_core.server._subscriptions`). This module holds the two pure parts
every transport shares.

* :class:`SkillChanges` is *what* changed, as a value: the SKILL.md URIs of the skills added,
  removed and changed, and the resource URIs whose bytes changed, appeared or vanished.
  :meth:`SkillsServer.changes() <skills_core.server.SkillsServer.changes>` returns one (or None
  when no entry changed): it asks the source (at most once per ``ttlMs``: the folders' stat
  signatures, the store's refresher) and compares the entries published now with the entries of
  the last change it returned. A re-scan that finds the same entries, an edit undone before it
  was seen, or a skill added then removed within one look, is no change. An embedder (the ``mcp``
  SDK server adapter, a custom transport) sends it as it likes; our transports turn it into each
  client's notifications (``ServerConnection.subscriptions.messages``) and send them.
* :class:`ChangePacer` is *when*: the adapters' timer asks it. No notification storm: the first
  change seen is held for a short window (:data:`DEFAULT_WINDOW`, so a folder written file by file
  is announced once, whole), and two announcements are at least ``interval`` apart (the server's
  ``ttlMs``, floored at :data:`MIN_INTERVAL`). A pacer reads no clock: ``now`` is an argument.

The cost of a change is one comparison of the published entries (a dictionary walk, entries
compared by value) made once per server, whatever the number of clients; each client then costs
the bytes of one notification. With nothing changed, a look costs what the source's ``poll``
costs, and no comparison is made (the live catalog counts its updates).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, final

from ..entry import SkillEntry
from ..jsonvalue import JSONValue
from ._live import LiveCatalog
from .model import PublishedSkill

__all__ = [
    "SkillChanges",
    "ChangePacer",
    "ChangeTracker",
    "DEFAULT_WINDOW",
    "MIN_INTERVAL",
    "diff_entries",
]

#: Seconds a first change is held before it is announced, so that the edits of one publish (a
#: folder copied file by file, a ``git pull``) make one notification. Editors and ``cp -r`` finish
#: well within it; the host re-lists once anyway.
DEFAULT_WINDOW: Final = 0.2

#: Seconds between two announcements at least, whatever ``ttlMs`` says (``ttlMs`` 0 would
#: otherwise have a server look at its folders in a busy loop).
MIN_INTERVAL: Final = 0.1

LIST_CHANGED: Final = "notifications/resources/list_changed"
UPDATED: Final = "notifications/resources/updated"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillChanges:
    """What changed in a server's published catalog between two looks.

    Attributes:
        added: SKILL.md URIs of skills published now and not before, sorted.
        removed: SKILL.md URIs of skills published before and not now, sorted.
        changed: SKILL.md URIs of skills published both times with a different entry, sorted.
        resources: Resource URIs (SKILL.md and every other file) whose bytes changed, appeared or
            vanished, sorted: what ``notifications/resources/updated`` is sent for.
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def to_json(self) -> dict[str, JSONValue]:
        """The change as JSON: ``{"added": [...], "removed": [...], "changed": [...]}``."""
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
            "resources": list(self.resources),
        }


def _files(entry: SkillEntry) -> dict[str, tuple[str, int]]:
    if isinstance(entry.resources, str):  # a dynamic skill: its SKILL.md is its only resource
        return {entry.uri: ("dynamic", 0)}
    return {r.uri: (r.digest, r.size) for r in entry.resources}


def diff_entries(before: Mapping[str, SkillEntry], after: Mapping[str, SkillEntry]) -> SkillChanges:
    """Compare two ``{SKILL.md URI: entry}`` maps; an empty change when every entry is equal."""
    added = sorted(uri for uri in after if uri not in before)
    removed = sorted(uri for uri in before if uri not in after)
    changed: list[str] = []
    resources: set[str] = set()
    for uri in added:
        resources.update(_files(after[uri]))
    for uri in removed:
        resources.update(_files(before[uri]))
    for uri, entry in after.items():
        old = before.get(uri)
        if old is None or old is entry or old == entry:
            continue
        changed.append(uri)
        old_files, new_files = _files(old), _files(entry)
        for file_uri in old_files.keys() | new_files.keys():
            if old_files.get(file_uri) != new_files.get(file_uri):
                resources.add(file_uri)
    changed.sort()
    return SkillChanges(
        added=tuple(added),
        removed=tuple(removed),
        changed=tuple(changed),
        resources=tuple(sorted(resources)),
    )


def _same_entry(old: PublishedSkill, new: PublishedSkill) -> bool:
    """Whether two skills have equal entries, building neither when it need not: the very same
    skill (what a re-scan keeps for a skill whose files did not change), or the same encoded
    entry (the JSON text of equal entries, written the same way)."""
    if old is new:
        return True
    encoded = old.encoded_entry
    if encoded is not None and encoded == new.encoded_entry:
        return True
    return old.entry == new.entry


def _diff_skills(
    before: Mapping[str, PublishedSkill], after: Mapping[str, PublishedSkill]
) -> SkillChanges:
    """:func:`diff_entries` of two ``{SKILL.md URI: skill}`` maps, building the entries only of
    the skills added, removed or changed (a skill kept encoded builds its entry when read)."""
    changed = [
        uri
        for uri, skill in after.items()
        if (old := before.get(uri)) is not None and not _same_entry(old, skill)
    ]
    old_entries = {uri: skill.entry for uri, skill in before.items() if uri not in after}
    new_entries = {uri: skill.entry for uri, skill in after.items() if uri not in before}
    for uri in changed:
        old_entries[uri] = before[uri].entry
        new_entries[uri] = after[uri].entry
    return diff_entries(old_entries, new_entries)


@final
class ChangePacer:
    """When an adapter should look for changes and when it should announce them (no clock).

    The adapter's timer calls :meth:`due` with the time now (any monotonic seconds) and sleeps
    until :meth:`next_wakeup`. Looks happen every ``interval``; a change seen is held for
    ``window`` and then announced, and two announcements are at least ``interval`` apart.

    Args:
        interval: Seconds between looks and between announcements (the server's ``ttlMs`` / 1000;
            at least :data:`MIN_INTERVAL`).
        window: Seconds a change is held before it is announced (:data:`DEFAULT_WINDOW`).
    """

    __slots__ = ("_held_since", "_interval", "_last_look", "_last_sent", "_window")

    def __init__(self, *, interval: float, window: float = DEFAULT_WINDOW) -> None:
        if not interval >= 0 or not window >= 0:
            raise ValueError("interval and window must be non-negative seconds")
        self._interval = max(float(interval), MIN_INTERVAL)
        self._window = float(window)
        self._last_look: float | None = None
        self._last_sent: float | None = None
        self._held_since: float | None = None

    @property
    def interval(self) -> float:
        """Seconds between looks and between announcements."""
        return self._interval

    def look_due(self, now: float) -> bool:
        """Whether the source should be looked at now (then call :meth:`looked`)."""
        if self._held_since is not None:
            return now >= self._announce_at()
        return self._last_look is None or now >= self._last_look + self._interval

    def looked(self, now: float, *, moved: bool) -> bool:
        """Record a look; True when the change seen (held until now) should be announced now.

        Args:
            now: The time of the look.
            moved: The look (or anything since the last announcement) found the catalog moved.
        """
        self._last_look = now
        if moved and self._held_since is None:
            self._held_since = now
        if self._held_since is None or now < self._announce_at():
            return False
        self._held_since = None
        self._last_sent = now
        return True

    def _announce_at(self) -> float:
        held = self._held_since
        assert held is not None
        at = held + self._window
        if self._last_sent is not None:
            at = max(at, self._last_sent + self._interval)
        return at

    def next_wakeup(self) -> float:
        """The time of the next look (:meth:`look_due` is then True)."""
        if self._held_since is not None:
            return self._announce_at()
        if self._last_look is None:
            return 0.0
        return self._last_look + self._interval


@final
class ChangeTracker:
    """The entries a server last reported, and whether its live catalog moved since.

    The live catalog's one change hook (:meth:`LiveCatalog.listen
    <skills_core.server._live.LiveCatalog.listen>`) sets :attr:`moved`; :meth:`take` compares the
    entries published now with those last reported, once. The skills last reported are held as
    the live catalog's map of them (:meth:`LiveCatalog.published
    <skills_core.server._live.LiveCatalog.published>`), so no entry is built to be remembered:
    the comparison builds only the entries of skills that are not the same objects, with the
    same encoded entry, as before.
    """

    __slots__ = ("_live", "_reported", "moved")

    def __init__(self, live: LiveCatalog) -> None:
        self._live = live
        self._reported = live.published()
        #: True once the catalog was replaced or updated since the last :meth:`take`.
        self.moved = False
        live.listen(self._on_change)

    def _on_change(self, change: object) -> None:
        self.moved = True

    def take(self) -> SkillChanges | None:
        """What changed since the last take, or None when no entry did."""
        published = self._live.published()
        change = _diff_skills(self._reported, published)
        self._reported, self.moved = published, False
        return change if change else None
