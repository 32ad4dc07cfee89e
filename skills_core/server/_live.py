"""The catalog a running server serves: the last scan, kept current by re-checks (internal).

Theory of operation
-------------------
A :class:`~skills_core.server.catalog.Catalog` is a value: the result of one scan. A running
server needs more: ``skills/get`` re-checks one skill and the answer must replace that skill in
later listings, and listing pages must cost ``O(log n + page)``. :class:`LiveCatalog` keeps

* the listed SKILL.md URIs in a sorted list (keyset pagination by binary search),
* published skills by SKILL.md URI (a client URI maps to the innermost published skill
  containing it in ``O(depth)`` lookups: each folder prefix of it, with ``/SKILL.md`` added),
* nothing per entry for listings: each page decodes the entries it shows from the encoded
  entries the skills hold (JSON text, a few microseconds each in C), so a catalog of any size
  costs the same per page and nothing more once listed (a skill without one, a dynamic skill,
  has its JSON built and remembered, a few thousand at most),
* the ``resources/list`` index (every served file, sorted), built on first use,

and updates them in place when a re-check finds a changed, new or vanished skill.

**Skills added or removed while serving.** :meth:`LiveCatalog.sync` is called at the start of
``skills/list`` and ``resources/list`` (and after each re-check, see below) with the source and
the server's ``ttlMs``: it asks the source's :meth:`~skills_core.server.source.SkillSource.poll`
and, when the source re-scanned, serves the new catalog from then on. The source decides how often
it looks (the filesystem source at most once per ``ttlMs``, at each root as the operator named it
and at the folder structure and each ``SKILL.md``'s stat signature), so a listing stays cheap and
a skill added or removed shows up in listings within ``ttlMs``; ``skills/get`` and reads look at
the files as they are at once. A look that cannot be completed (the filesystem source out of
descriptors, a root gone) is no change: the source answers None and says why, and the catalog
served stays as it was: a catalog is only ever replaced by another whole one, never emptied by a
failure. The handler reads no clock: the filesystem source does.

**One view.** When a request finds the files differ from the catalog (``skills/get`` re-checks
its skill; a ``resources/read`` finds a listed file gone, or bytes other than the listed digest),
the handler re-checks that skill, records the answer with :meth:`LiveCatalog.update` and syncs
again, so the next listing agrees with what the request saw, without waiting for ``ttlMs``.

**Every change passes through one place.** :meth:`LiveCatalog.replace` (a new catalog: a poll
that re-scanned, ``SkillsServer.refresh()``) and :meth:`LiveCatalog.update` (one re-checked
skill) both compute a :class:`CatalogChange` (the skill URIs added, removed and changed) and hand
it to :meth:`LiveCatalog._changed`, which calls the listeners registered with
:meth:`LiveCatalog.listen` when anything changed. Change notifications hang off that one hook.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from json import loads
from typing import Final, final

from ..entry import SkillEntry
from ..jsonvalue import JSONValue
from ..spec import SKILL_MD, SKILL_MD_MIME_TYPE
from .catalog import Catalog
from .mime import mime_type_for
from .model import OmittedSkill, PublishedSkill
from .paths import split_uri
from .source import SkillSource

#: How many entries' JSON :meth:`LiveCatalog.entry_json` remembers before it starts over (those
#: of skills without an encoded entry: dynamic skills, a source's own).
_JSON_CACHE: Final = 4096
#: How many URIs :meth:`_Live.resolve` remembers before it starts over (bounds memory whatever
#: URIs a client sends; a real client reads a few hundred files at most).
_RESOLVE_CACHE: Final = 4096

__all__ = ["CatalogChange", "LiveCatalog"]

#: ``annotations.priority`` of ``resources/list`` items (WG-14): SKILL.md matters most.
_SKILL_MD_PRIORITY: Final = 0.8
_SLASH_SKILL_MD: Final = "/" + SKILL_MD
_FILE_PRIORITY: Final = 0.3


@final
@dataclass(frozen=True, slots=True)
class CatalogChange:
    """What one replacement or update of the live catalog changed, by SKILL.md URI (sorted).

    Attributes:
        added: Skills published now that were not before.
        removed: Skills published before that are not now (gone, or left out now).
        changed: Skills published before and now whose entry (or whether it is listed) differs.
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


#: Called with every non-empty change (see :meth:`LiveCatalog.listen`).
ChangeListener = Callable[[CatalogChange], None]

_NO_CHANGE: Final = CatalogChange()


@final
class LiveCatalog:
    """The server's current view: the last scan, plus whatever skills/get re-checked since.

    Not a value: the handler updates it in place as re-checks find changes. :attr:`catalog`
    materialises it as an immutable :class:`Catalog` when asked.
    """

    __slots__ = (
        "_base",
        "_by_uri",
        "_catalog",
        "_json",
        "_listed",
        "_listeners",
        "_omitted",
        "_resolved",
        "_resources",
        "_shared",
    )

    def __init__(self, catalog: Catalog) -> None:
        self._listeners: list[ChangeListener] = []
        self._reset(catalog)

    def _reset(self, catalog: Catalog) -> None:
        self._base = catalog
        self._catalog: Catalog | None = catalog
        self._by_uri: dict[str, PublishedSkill] = {skill.uri: skill for skill in catalog.skills}
        # Whether published() handed _by_uri out: then copied before it is next changed.
        self._shared = False
        self._listed: list[str] = [skill.uri for skill in catalog.skills if skill.listed]
        self._omitted: list[OmittedSkill] = list(catalog.omitted)
        self._json: dict[str, dict[str, JSONValue]] = {}
        self._resources: tuple[list[str], list[dict[str, JSONValue]]] | None = None
        # uri -> resolve() answer; emptied whenever a skill is added, replaced or dropped.
        self._resolved: dict[str, tuple[PublishedSkill, str] | None] = {}

    def listen(self, listener: ChangeListener) -> None:
        """Call ``listener`` with each non-empty :class:`CatalogChange` from now on."""
        self._listeners.append(listener)

    def sync(self, source: SkillSource, max_age_ms: int) -> CatalogChange | None:
        """Serve ``source``'s new catalog if it re-scanned (see the module docstring).

        Returns what changed, or None when the source did not re-scan.
        """
        catalog = source.poll(max_age_ms)
        if catalog is None:
            return None
        return self.replace(catalog)

    def replace(self, catalog: Catalog) -> CatalogChange:
        """Serve ``catalog`` from now on (a whole new scan); return what changed."""
        old = self._by_uri
        new = {skill.uri: skill for skill in catalog.skills}
        added = sorted(uri for uri in new if uri not in old)
        removed = sorted(uri for uri in old if uri not in new)
        changed = sorted(
            uri
            for uri, skill in new.items()
            if (before := old.get(uri)) is not None
            and before is not skill
            and (before.entry != skill.entry or before.listed != skill.listed)
        )
        self._reset(catalog)
        return self._changed(CatalogChange(tuple(added), tuple(removed), tuple(changed)))

    def _changed(self, change: CatalogChange) -> CatalogChange:
        """The one place every change passes through: tell the listeners, return ``change``."""
        if change:
            for listener in self._listeners:
                listener(change)
        return change

    @property
    def catalog(self) -> Catalog:
        catalog = self._catalog
        if catalog is None:
            skills = tuple(sorted(self._by_uri.values(), key=lambda skill: skill.uri))
            base = self._base
            catalog = Catalog(
                skills=skills,
                omitted=tuple(self._omitted),
                problems=base.problems,
                skipped=base.skipped,
            )
            self._catalog = catalog
        return catalog

    def entries(self) -> dict[str, SkillEntry]:
        """``{SKILL.md URI: entry}`` of every published skill (listed or not)."""
        return {uri: skill.entry for uri, skill in self._by_uri.items()}

    def published(self) -> Mapping[str, PublishedSkill]:
        """``{SKILL.md URI: skill}`` of every published skill now (listed or not), a map that
        later changes leave as it is (shared until the next :meth:`update`, which copies it
        first), so holding it costs nothing per skill and builds no entry."""
        self._shared = True
        return self._by_uri

    @property
    def listed(self) -> list[str]:
        return self._listed

    def get(self, uri: str) -> PublishedSkill | None:
        return self._by_uri.get(uri)

    def entry_json(self, skill: PublishedSkill) -> dict[str, JSONValue]:
        """The entry's wire JSON: decoded from its encoded entry (C code, a few microseconds,
        nothing kept), or built from the entry and remembered (up to :data:`_JSON_CACHE`)."""
        encoded = skill.encoded_entry
        if encoded is not None:
            entry: dict[str, JSONValue] = loads(encoded)
            return entry
        cached = self._json.get(skill.uri)
        if cached is None:
            cached = skill.entry.to_json()
            if len(self._json) >= _JSON_CACHE:
                self._json.clear()
            self._json[skill.uri] = cached
        return cached

    def update(self, uri: str, result: PublishedSkill | OmittedSkill | None) -> CatalogChange:
        """Record what a re-check of ``uri`` found; return what changed."""
        old = self._by_uri.get(uri)
        if isinstance(result, PublishedSkill):
            if old is not None and old.entry == result.entry and old.listed == result.listed:
                return _NO_CHANGE
            self._own()
            self._drop(uri, old)
            self._by_uri[uri] = result
            if result.listed:
                bisect.insort(self._listed, uri)
            change = CatalogChange(changed=(uri,)) if old else CatalogChange(added=(uri,))
        else:
            if old is None and result is None:
                return _NO_CHANGE
            self._own()
            self._drop(uri, old)
            if result is not None:
                self._omitted.append(result)
            change = CatalogChange(removed=(uri,)) if old else _NO_CHANGE
        self._catalog = None
        self._resources = None
        return self._changed(change)

    def _own(self) -> None:
        """Copy the map of skills before changing it, if :meth:`published` handed it out."""
        if self._shared:
            self._by_uri = dict(self._by_uri)
            self._shared = False

    def _drop(self, uri: str, old: PublishedSkill | None) -> None:
        self._resolved.clear()
        self._omitted = [o for o in self._omitted if o.uri != uri]
        self._json.pop(uri, None)
        if old is None:
            return
        del self._by_uri[uri]
        index = bisect.bisect_left(self._listed, uri)
        if index < len(self._listed) and self._listed[index] == uri:
            del self._listed[index]

    def resolve(self, uri: str) -> tuple[PublishedSkill, str] | None:
        """Return the innermost published skill ``uri`` lies in and the path inside it.

        Answers are remembered (up to :data:`_RESOLVE_CACHE` URIs) until the set of skills
        changes, so a busy client reading the same files costs one dictionary lookup each.
        """
        cache = self._resolved
        if uri in cache:
            return cache[uri]
        answer = self._resolve(uri)
        if len(cache) >= _RESOLVE_CACHE:
            cache.clear()
        cache[uri] = answer
        return answer

    def _resolve(self, uri: str) -> tuple[PublishedSkill, str] | None:
        split = split_uri(uri)
        if split is None:
            return None
        scheme, names = split
        ends: list[int] = []
        position = len(scheme) + 3
        for _ in range(len(names) - 1):
            position = uri.index("/", position)
            ends.append(position)
            position += 1
        ends.append(len(uri))
        by_uri = self._by_uri
        for count in range(len(names), 0, -1):  # a skill's root URI and "/SKILL.md" is its URI
            skill = by_uri.get(uri[: ends[count - 1]] + _SLASH_SKILL_MD)
            if skill is not None:
                return skill, "/".join(names[count:])
        return None

    def resource_index(self) -> tuple[list[str], list[dict[str, JSONValue]]]:
        """Every served file as a Resource, sorted by URI (built once per catalog change)."""
        index = self._resources
        if index is None:
            items: dict[str, dict[str, JSONValue]] = {}
            for skill in self._by_uri.values():
                if skill.is_dynamic:
                    items[skill.uri] = self.resource_item(skill.uri, SKILL_MD)
                    continue
                for file_uri, path in skill.files.items():
                    if file_uri not in items:
                        item = self.resource_item(file_uri, path.rpartition("/")[2])
                        resource = skill.entry.resource(file_uri)
                        assert resource is not None
                        item["size"] = resource.size
                        items[file_uri] = item
            uris = sorted(items)
            index = (uris, [items[uri] for uri in uris])
            self._resources = index
        return index

    def resource_item(self, uri: str, name: str, *, annotate: bool = True) -> dict[str, JSONValue]:
        """The Resource metadata of a file (FMT-07..FMT-09, FMT-11, WG-14)."""
        skill = self._by_uri.get(uri) if name == SKILL_MD else None
        item: dict[str, JSONValue]
        if skill is not None:
            item = {
                "uri": uri,
                "name": skill.entry.name,
                "description": skill.entry.description,
                "mimeType": SKILL_MD_MIME_TYPE,
            }
        else:
            item = {"uri": uri, "name": name, "mimeType": mime_type_for(name)}
        if annotate:
            priority = _SKILL_MD_PRIORITY if name == SKILL_MD else _FILE_PRIORITY
            item["annotations"] = {"audience": ["assistant"], "priority": priority}
        return item
