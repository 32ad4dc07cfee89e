"""The per-origin skill registry, name resolution, and the capped listing walk.

Theory of operation
-------------------
**Identity is (origin label, uri)** (ORG-01..ORG-03). Labels are assigned by the host, never taken
from ``serverInfo.name`` (ORG-05, SIL-24); :func:`check_label` says what a label may be. The registry
records, per origin, the latest observation of each skill: either a valid :class:`SkillEntry` or the
reason its entry was refused (invalid or over the limits; ENTRY-07, SIL-12). Recording never
fetches anything (LIST-13), and an entry absent from a listing is not removed: an empty or partial
listing proves nothing (LIST-05).

**Names are labels, not identifiers** (spec, "Names"). A name resolves only within an origin's
namespace, as ``label:name`` (ORG-13). Within one origin, skills sharing a name are told apart by
their distinguishing path segments, ``billing/refunds`` and ``support/refunds`` (ORG-11, ORG-12):
each gets the shortest suffix of two or more skill-path segments that no other same-named skill of
that origin has, or its SKILL.md URI when no suffix is unique (the same path under two schemes). A
bare name resolves only when exactly one skill anywhere answers to it. A name that two origins
serve, or an origin and a **local filesystem skill registered with the host**, is *contested*:
:meth:`Registry.resolve` never picks one silently, returns every candidate, and keeps refusing the
bare name even after all but one candidate disappear, so removing one skill never silently
retargets a name to another origin's skill (ORG-14). The registry reports each new collision so the
host can tell the user (ORG-15).

**Listings are walked with caps** (SIL-17, WG-05): :class:`ListingWalk` counts pages and entries
(50 pages and 10,000 entries by default; host policy sets them) and stops at a repeated cursor.
The same walk serves directory reads.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, final

from ..entry import SkillEntry
from ..errors import LocalProtocolError, quote_for_message
from .budgets import Footprint
from .codes import StopReason
from .effects import Candidate, EntryRejected
from .framing import one_line

__all__ = [
    "MAX_LABEL_BYTES",
    "check_label",
    "PutResult",
    "ResolutionStatus",
    "Resolution",
    "CatalogItem",
    "Registry",
    "WalkStep",
    "ListingWalk",
]

#: Longest origin label, in UTF-8 bytes. Labels are typed by people ("docs-server"); the bound keeps
#: cache paths, which encode the label reversibly, within filesystem component limits.
MAX_LABEL_BYTES: Final = 64

_URI_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")


def check_label(label: object) -> str:
    """Return ``label`` when it is a valid host-assigned origin label.

    A label is 1 to :data:`MAX_LABEL_BYTES` UTF-8 bytes of printable, non-whitespace characters
    without ``:`` (which separates a label from a name in ``label:name``).

    Raises:
        LocalProtocolError: the label is not valid (the host's configuration is wrong).
    """
    if not isinstance(label, str) or not label:
        raise LocalProtocolError(
            f"an origin label must be a non-empty string, not {quote_for_message(label)}",
            kind="bad-label",
        )
    try:
        size = len(label.encode("utf-8"))
    except UnicodeEncodeError:
        size = -1
    bad = next(
        (
            ch
            for ch in label
            if ch == ":"
            or ch.isspace()
            or not ch.isprintable()
            or unicodedata.category(ch) in ("Cf", "Cs", "Co")
        ),
        None,
    )
    if bad is not None or size < 0 or size > MAX_LABEL_BYTES:
        raise LocalProtocolError(
            f"origin label {quote_for_message(label)} must be 1-{MAX_LABEL_BYTES} UTF-8 bytes of "
            "printable characters with no whitespace and no ':'",
            kind="bad-label",
        )
    return label


class PutResult(enum.Enum):
    """What recording an entry did."""

    ADDED = "added"
    CHANGED = "changed"
    SAME = "same"


class ResolutionStatus(enum.StrEnum):
    """The outcome of :meth:`Registry.resolve`."""

    UNIQUE = "unique"
    AMBIGUOUS = "ambiguous"
    NOT_FOUND = "not-found"
    #: One candidate remains, but the name is contested: it must be qualified (ORG-14).
    REQUIRES_QUALIFICATION = "requires-qualification"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Resolution:
    """What a skill name, ``label:name`` or URI resolves to.

    Attributes:
        query: The query as given.
        status: Whether it resolved.
        candidates: Every candidate, in a stable order (local skills first, then by label and URI).
        message: One sentence for the user, naming every candidate when there are several.
    """

    query: str
    status: ResolutionStatus
    candidates: tuple[Candidate, ...]
    message: str

    @property
    def unique(self) -> Candidate | None:
        """The candidate when the query resolved to exactly one skill, else None."""
        return self.candidates[0] if self.status is ResolutionStatus.UNIQUE else None

    @property
    def origin(self) -> str | None:
        """The server label the query resolved to, when it resolved to one MCP-served skill."""
        unique = self.unique
        return unique.origin if unique is not None else None

    @property
    def uri(self) -> str | None:
        """The SKILL.md URI the query resolved to, when it resolved to one MCP-served skill:
        with :attr:`origin`, what ``Host.load`` takes."""
        unique = self.unique
        return unique.uri if unique is not None else None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogItem:
    """How one registered skill is presented to a model or a user (LIST-13, ORG-16, WG-16).

    Attributes:
        origin: Server label (always shown; ORG-07, ORG-16).
        uri: SKILL.md URI.
        name: ``frontmatter.name``.
        qualified: ``label:name`` or ``label:billing/refunds``: what the model passes to load it.
        description: ``frontmatter.description`` (untrusted text).
        dynamic: The skill's content cannot be verified.
    """

    origin: str
    uri: str
    name: str
    qualified: str
    description: str
    dynamic: bool

    @property
    def model_line(self) -> str:
        """One catalog line, marked as an MCP skill from its server; never like a local skill."""
        tag = f"MCP skill served by {json.dumps(self.origin)}; untrusted"
        if self.dynamic:
            tag += "; generated content, cannot be verified"
        return f"- {self.qualified} ({tag}): {one_line(self.description)}"


# Bound on refused entries kept without a usable URI, per origin (they are shown, never loaded).
_MAX_ANONYMOUS_REJECTIONS: Final = 1000


_NOTHING: Final = Footprint()


def _rows(entry: SkillEntry) -> int:
    return 0 if isinstance(entry.resources, str) else len(entry.resources)


@final
class Registry:
    """Skills known to the host, per origin, with name resolution. Pure data; no I/O."""

    __slots__ = (
        "_contested",
        "_display",
        "_entries",
        "_listing_bytes",
        "_local",
        "_names",
        "_rejected",
        "_total",
        "_usage",
    )

    def __init__(self) -> None:
        """Create an empty registry."""
        self._entries: dict[str, dict[str, SkillEntry]] = {}
        self._rejected: dict[str, dict[str | None, list[EntryRejected]]] = {}
        self._names: dict[str, dict[str, set[str]]] = {}
        self._local: dict[str, str] = {}
        self._contested: set[str] = set()
        self._display: dict[tuple[str, str], dict[str, str]] = {}
        # What is kept: listing bytes per recorded entry or keyed refusal (its manifest rows come
        # from the entry), and the sums per origin and in total.
        self._listing_bytes: dict[str, dict[str, int]] = {}
        self._usage: dict[str, Footprint] = {}
        self._total = _NOTHING

    # -- recording --------------------------------------------------------------------------------

    def put(
        self, origin: str, entry: SkillEntry, listing_bytes: int = 0
    ) -> tuple[PutResult, tuple[Candidate, ...]]:
        """Record ``entry`` as the latest observation of ``(origin, entry.uri)``.

        Args:
            origin: The server label.
            entry: The entry.
            listing_bytes: What keeping it costs, in listing bytes (``HostPolicy``); with its
                manifest rows, it replaces the cost of what it replaces.

        Returns:
            What changed, and every candidate for the entry's name when this entry makes the name
            newly shared between origins (or with a local skill), else an empty tuple.
        """
        before = self.cost(origin, entry.uri)
        by_uri = self._entries.setdefault(origin, {})
        old = by_uri.get(entry.uri)
        self._drop_rejection(origin, entry.uri)
        by_uri[entry.uri] = entry
        self._recharge(origin, entry.uri, before, Footprint(_rows(entry), listing_bytes))
        if old is not None:
            return (PutResult.SAME if old == entry else PutResult.CHANGED), ()
        name = entry.name
        origins = self._names.setdefault(name, {})
        new_origin = origin not in origins
        origins.setdefault(origin, set()).add(entry.uri)
        self._display.pop((origin, name), None)
        if new_origin and len(origins) + (name in self._local) >= 2:
            self._contested.add(name)
            return PutResult.ADDED, self.candidates_for_name(name)
        return PutResult.ADDED, ()

    def reject(self, record: EntryRejected, listing_bytes: int = 0) -> None:
        """Record a refused entry; it replaces a valid entry for the same URI (latest wins).

        Args:
            record: The refused entry and why, as it was reported.
            listing_bytes: What keeping the record costs, in listing bytes.
        """
        origin = record.origin
        per_origin = self._rejected.setdefault(origin, {})
        if record.uri is not None:
            self.remove(origin, record.uri)
            per_origin[record.uri] = [record]
            before = self.cost(origin, record.uri)
            self._recharge(origin, record.uri, before, Footprint(0, listing_bytes))
            return
        anonymous = per_origin.setdefault(None, [])
        if len(anonymous) < _MAX_ANONYMOUS_REJECTIONS:
            anonymous.append(record)
            self._add(origin, Footprint(0, listing_bytes))

    def _drop_rejection(self, origin: str, uri: str) -> None:
        per_origin = self._rejected.get(origin)
        if per_origin is not None:
            per_origin.pop(uri, None)

    def _recharge(self, origin: str, uri: str, before: Footprint, after: Footprint) -> None:
        """What is recorded for ``(origin, uri)`` now costs ``after`` instead of ``before``."""
        by_uri = self._listing_bytes.setdefault(origin, {})
        if after.bytes:
            by_uri[uri] = after.bytes
        else:
            by_uri.pop(uri, None)
        self._add(origin, after - before)

    def _add(self, origin: str, change: Footprint) -> None:
        self._usage[origin] = self._usage.get(origin, _NOTHING) + change
        self._total = self._total + change

    def cost(self, origin: str, uri: str) -> Footprint:
        """What the entry (or refusal) recorded for ``(origin, uri)`` costs."""
        entry = self.get(origin, uri)
        rows = _rows(entry) if entry is not None else 0
        return Footprint(rows, self._listing_bytes.get(origin, {}).get(uri, 0))

    def usage(self, origin: str | None = None) -> Footprint:
        """What the registry holds for ``origin``, or for all origins together."""
        if origin is None:
            return self._total
        return self._usage.get(origin, _NOTHING)

    def remove(self, origin: str, uri: str) -> SkillEntry | None:
        """Forget the entry for ``(origin, uri)``; return it, or None when there was none."""
        before = self.cost(origin, uri)
        by_uri = self._entries.get(origin)
        entry = by_uri.pop(uri, None) if by_uri is not None else None
        if entry is None:
            return None
        self._recharge(origin, uri, before, _NOTHING)
        origins = self._names[entry.name]
        uris = origins[origin]
        uris.discard(uri)
        if not uris:
            del origins[origin]
        if not origins:
            del self._names[entry.name]
        self._display.pop((origin, entry.name), None)
        return entry

    def forget_origin(self, origin: str) -> None:
        """Remove everything recorded for ``origin`` (its names stay contested; ORG-14)."""
        for uri in list(self._entries.get(origin, {})):
            self.remove(origin, uri)
        self._entries.pop(origin, None)
        self._rejected.pop(origin, None)
        self._listing_bytes.pop(origin, None)
        self._total = self._total - self._usage.pop(origin, _NOTHING)

    def register_local(self, name: str, location: str = "") -> tuple[Candidate, ...]:
        """Register a local filesystem skill of the host, for collision checks (ORG-14).

        Returns:
            Every candidate for ``name`` when it is now shared with an MCP-served skill.
        """
        self._local[name] = location
        if name in self._names:
            self._contested.add(name)
            return self.candidates_for_name(name)
        return ()

    def unregister_local(self, name: str) -> None:
        """Forget a local skill. A contested name stays contested: nothing is retargeted silently."""
        self._local.pop(name, None)

    # -- lookups ----------------------------------------------------------------------------------

    def get(self, origin: str, uri: str) -> SkillEntry | None:
        """Return the valid entry recorded for ``(origin, uri)``, or None."""
        by_uri = self._entries.get(origin)
        return by_uri.get(uri) if by_uri is not None else None

    def rejection(self, origin: str, uri: str) -> EntryRejected | None:
        """Return why the latest entry for ``(origin, uri)`` was refused, or None."""
        records = self._rejected.get(origin, {}).get(uri)
        return records[0] if records else None

    def entries(self, origin: str | None = None) -> Iterator[tuple[str, SkillEntry]]:
        """Yield ``(origin, entry)`` for every valid entry (of one origin when given)."""
        origins = [origin] if origin is not None else sorted(self._entries)
        for label in origins:
            for entry in list(self._entries.get(label, {}).values()):
                yield label, entry

    def rejected(self, origin: str | None = None) -> tuple[EntryRejected, ...]:
        """Every refused entry (of one origin when given), to show with its reason."""
        origins = [origin] if origin is not None else sorted(self._rejected)
        out: list[EntryRejected] = []
        for label in origins:
            for records in self._rejected.get(label, {}).values():
                out.extend(records)
        return tuple(out)

    def count(self, origin: str | None = None) -> int:
        """How many valid entries are recorded (for one origin when given)."""
        if origin is not None:
            return len(self._entries.get(origin, {}))
        return sum(len(v) for v in self._entries.values())

    def is_contested(self, name: str) -> bool:
        """True when ``name`` was ever served by two origins (or an origin and a local skill)."""
        return name in self._contested

    def display_name(self, origin: str, uri: str) -> str:
        """The name that tells this skill apart within its origin (ORG-12).

        Raises:
            KeyError: no valid entry is recorded for ``(origin, uri)``.
        """
        entry = self._entries[origin][uri]
        uris = self._names[entry.name][origin]
        if len(uris) == 1:
            return entry.name
        key = (origin, entry.name)
        names = self._display.get(key)
        if names is None:
            names = _disambiguate([self._entries[origin][u] for u in sorted(uris)])
            self._display[key] = names
        return names[uri]

    def qualified_name(self, origin: str, uri: str) -> str:
        """``label:display-name``: names exactly this skill (ORG-13, WG-16)."""
        return f"{origin}:{self.display_name(origin, uri)}"

    def candidates_for_name(self, name: str) -> tuple[Candidate, ...]:
        """Every skill, of every origin and local, that answers to the bare ``name``."""
        out: list[Candidate] = []
        if name in self._local:
            out.append(
                Candidate(
                    origin=None, name=name, uri=None, qualified=name, location=self._local[name]
                )
            )
        for origin in sorted(self._names.get(name, {})):
            for uri in sorted(self._names[name][origin]):
                out.append(self._candidate(origin, uri))
        return tuple(out)

    def _candidate(self, origin: str, uri: str) -> Candidate:
        entry = self._entries[origin][uri]
        return Candidate(
            origin=origin,
            name=entry.name,
            uri=uri,
            qualified=self.qualified_name(origin, uri),
        )

    def _rejected_candidate(self, record: EntryRejected) -> Candidate:
        assert record.uri is not None
        name = record.uri.rstrip("/").rsplit("/", 2)[-2] if "/" in record.uri else record.uri
        return Candidate(
            origin=record.origin,
            name=name,
            uri=record.uri,
            qualified=f"{record.origin}:{record.uri}",
            problem=record.error.message,
        )

    def catalog(self, origin: str | None = None) -> tuple[CatalogItem, ...]:
        """How every valid entry is presented to the model and the user (LIST-13, ORG-16)."""
        return tuple(
            CatalogItem(
                origin=label,
                uri=entry.uri,
                name=entry.name,
                qualified=self.qualified_name(label, entry.uri),
                description=entry.description,
                dynamic=entry.is_dynamic,
            )
            for label, entry in self.entries(origin)
        )

    # -- resolution -------------------------------------------------------------------------------

    def resolve(self, query: str) -> Resolution:
        """Resolve a skill URI, ``label:name`` (or ``label:billing/refunds``, ``label:<uri>``), or a
        bare name. Never picks one of several candidates (ORG-12..ORG-14).
        """
        if _URI_RE.match(query):
            return self._resolve_uri(query, sorted(set(self._entries) | set(self._rejected)))
        label, sep, rest = query.partition(":")
        if sep:
            if label not in self._entries and label not in self._rejected:
                return Resolution(
                    query=query,
                    status=ResolutionStatus.NOT_FOUND,
                    candidates=(),
                    message=f"no server is labelled {label!r}",
                )
            if _URI_RE.match(rest):
                return self._resolve_uri(rest, [label], query=query)
            return self._resolve_name(query, rest, [label])
        return self._resolve_name(query, query, sorted(self._entries), bare=True)

    def _resolve_uri(self, uri: str, origins: list[str], *, query: str | None = None) -> Resolution:
        found: list[Candidate] = []
        for origin in origins:
            if self.get(origin, uri) is not None:
                found.append(self._candidate(origin, uri))
                continue
            record = self.rejection(origin, uri)
            if record is not None:
                found.append(self._rejected_candidate(record))
        return _outcome(query if query is not None else uri, found, contested=False)

    def _resolve_name(
        self, query: str, name: str, origins: list[str], *, bare: bool = False
    ) -> Resolution:
        found: list[Candidate] = []
        if bare and name in self._local:
            found.append(
                Candidate(
                    origin=None, name=name, uri=None, qualified=name, location=self._local[name]
                )
            )
        for origin in origins:
            exact = sorted(self._names.get(name, {}).get(origin, ()))
            by_display: list[str] = []
            if "/" in name:
                leaf = name.rsplit("/", 1)[-1]
                by_display = [
                    uri
                    for uri in sorted(self._names.get(leaf, {}).get(origin, ()))
                    if self.display_name(origin, uri) == name
                ]
            found.extend(self._candidate(origin, uri) for uri in (exact or by_display))
        contested = bare and name in self._contested
        return _outcome(query, found, contested=contested)


def _outcome(query: str, found: list[Candidate], *, contested: bool) -> Resolution:
    candidates = tuple(found)
    if not candidates:
        return Resolution(
            query=query,
            status=ResolutionStatus.NOT_FOUND,
            candidates=(),
            message=f"no skill matches {query!r}",
        )
    listed = ", ".join(c.qualified + (" (local)" if c.is_local else "") for c in candidates)
    if len(candidates) > 1:
        return Resolution(
            query=query,
            status=ResolutionStatus.AMBIGUOUS,
            candidates=candidates,
            message=f"{query!r} is ambiguous; say which: {listed}",
        )
    if contested:
        return Resolution(
            query=query,
            status=ResolutionStatus.REQUIRES_QUALIFICATION,
            candidates=candidates,
            message=f"{query!r} is served by more than one origin; qualify it: {listed}",
        )
    return Resolution(
        query=query,
        status=ResolutionStatus.UNIQUE,
        candidates=candidates,
        message=f"{query!r} is {listed}",
    )


def _disambiguate(entries: list[SkillEntry]) -> dict[str, str]:
    """Give each same-named entry of one origin the shortest distinguishing path suffix (ORG-12).

    A suffix of ``k`` segments can only equal another entry's suffix of ``k`` segments (segments
    hold no ``/``), so counting every suffix once decides uniqueness in linear time.
    """
    suffixes = {
        e.uri: ["/".join(segments[-k:]) for k in range(1, len(segments) + 1)]
        for e in entries
        for segments in (e.skill.skill_path.split("/"),)
    }
    counts = Counter(suffix for values in suffixes.values() for suffix in values)
    out: dict[str, str] = {}
    for entry in entries:
        unique = [s for s in suffixes[entry.uri][1:] if counts[s] == 1]
        out[entry.uri] = unique[0] if unique else entry.uri
    return out


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class WalkStep:
    """What to do after a page: fetch ``cursor`` next, finish, or stop early.

    Attributes:
        cursor: The next cursor to request, when the walk continues.
        stop: Why the walk stopped early, or None.
        message: The reason in words, when stopped.
    """

    cursor: str | None = None
    stop: StopReason | None = None
    message: str = ""

    @property
    def done(self) -> bool:
        """True when no further page is requested (complete or stopped)."""
        return self.cursor is None


@final
class ListingWalk:
    """Counts a paginated walk and decides when to stop (SIL-17, WG-05).

    Call :meth:`record_page` after each page; it returns the cursor to request next, or why to
    stop. A cursor the server already returned stops the walk at once; so does reaching the entry
    cap, or the page cap when there is one. Without a page cap, pages are bounded by entries: a
    page that carries none but asks for another counts as one entry towards the cap, so a server
    answering empty pages with fresh cursors forever is stopped after ``max_entries`` of them.
    Stopping is not failure: the pages already read stay usable (LIST-05). The walk remembers a
    SHA-256 of each cursor, not the cursor, so huge cursors cost 32 bytes a page.
    """

    __slots__ = ("_charged", "_cursors", "entries", "max_entries", "max_pages", "pages")

    def __init__(self, *, max_pages: int | None, max_entries: int) -> None:
        """Start a walk capped at ``max_entries`` entries (and ``max_pages`` pages, if not None)."""
        self.max_pages = max_pages
        self.max_entries = max_entries
        self.pages = 0
        self.entries = 0
        self._charged = 0  # entries, an empty page counting as one
        self._cursors: set[bytes] = set()

    @property
    def remaining(self) -> int:
        """How many more entries the walk accepts."""
        return max(0, self.max_entries - self.entries)

    def record_page(self, count: int, next_cursor: str | None) -> WalkStep:
        """Count a page of ``count`` entries whose result carried ``next_cursor``."""
        self.pages += 1
        self.entries += count
        self._charged += max(count, 1)
        if next_cursor is None:
            return WalkStep()
        seen = hashlib.sha256(next_cursor.encode("utf-8", "surrogatepass")).digest()
        if seen in self._cursors:
            return WalkStep(
                stop=StopReason.REPEATED_CURSOR,
                message=f"the server repeated the cursor {quote_for_message(next_cursor, 60)}; "
                "the listing may be incomplete",
            )
        if self.max_pages is not None and self.pages >= self.max_pages:
            return WalkStep(
                stop=StopReason.PAGE_CAP,
                message=f"stopped after {self.pages} pages (the cap, {self.max_pages}); the "
                "listing may be incomplete",
            )
        if self._charged >= self.max_entries:
            return WalkStep(
                stop=StopReason.ENTRY_CAP,
                message=f"stopped after {self.entries} entries in {self.pages} pages (the cap, "
                f"{self.max_entries} entries); the listing may be incomplete",
            )
        self._cursors.add(seen)
        return WalkStep(cursor=next_cursor)
