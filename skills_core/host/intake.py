"""Entries the host learns of: listing pages and ``skills/get`` answers, into the registry.

Theory of operation
-------------------
Every entry a server sends reaches the host here, from a ``skills/list`` page or a ``skills/get``
answer, and three things follow from it (:meth:`EntryIntake.observe`): the registry records it
under ``(origin, uri)`` (never fetching anything; LIST-13), an active approval of another set is
revoked and says what changed (APR-02), and the skill's load session, if it has one, is told
(a changed skill needs approval again; HELD-09), what it decides carried out at once
(:mod:`~skills_core.host.carrier`). An entry that cannot be loaded (invalid, over
the limits, or "not a skill") is kept out of the registry with its reason and ends whatever load
or window it concerned (:meth:`EntryIntake.unusable`).

A listing page (:meth:`EntryIntake.take_page`) is taken entry by entry until the walk's caps
stop it (SIL-17, WG-05); the same skill listed twice with different entries is refused and
fetched again with ``skills/get`` (SIL-04). The walk then asks for the next page, or ends with
``ListingComplete`` or one ``ListingPartial`` that says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import final

from ..entry import SkillEntry
from ..errors import (
    EntryProblem,
    InvalidEntryError,
    LocalProtocolError,
    RemoteProtocolError,
)
from ..messages import parse_get_skill_result, parse_list_skills_envelope
from .approvals import approvable_set, manifest_changes
from .budgets import Footprint, entry_footprint
from .carrier import Carrier
from .codes import StopReason
from .context import HostContext, OriginRecord, protocol_failed
from .effects import (
    ApprovalRevoked,
    Effect,
    EntryRejected,
    ListingComplete,
    ListingPartial,
    NameCollision,
    RegistryUpdated,
)
from .listing import ListingProgress, budget_stop, rejection_footprint
from .registry import ListingWalk, PutResult, Registry
from .requests import GetConfirm, GetForLoad, GetPreview, GetRefresh, Key, ListPage
from .session import LoadSession

__all__ = ["EntryIntake"]


@final
class EntryIntake:
    """Takes entries into the registry, the approvals and the sessions; see the module docstring."""

    __slots__ = ("_carrier", "_ctx", "_registry", "_sessions")

    def __init__(
        self,
        ctx: HostContext,
        registry: Registry,
        sessions: Mapping[Key, LoadSession],
        carrier: Carrier,
    ) -> None:
        """Feed ``registry``; ``sessions`` is the router's live map of load sessions, and
        ``carrier`` carries out what they decide."""
        self._ctx = ctx
        self._registry = registry
        self._sessions = sessions
        self._carrier = carrier

    def observe(
        self, origin: str, entry: SkillEntry, footprint: Footprint
    ) -> tuple[list[Effect], PutResult]:
        """Record an entry from ``skills/list`` or ``skills/get`` (what keeping it costs is
        ``footprint``) and apply what follows from it."""
        effects: list[Effect] = []
        result, collision = self._registry.put(origin, entry, footprint.bytes)
        if collision:
            effects.append(NameCollision(name=entry.name, candidates=collision))
        approvals = self._ctx.approvals
        approval = approvals.record(origin, entry.uri)
        if approval is not None and not approval.revoked:
            new_set = approvable_set(entry)
            revoked = approvals.observe(origin, entry.uri, new_set)
            if revoked is not None:
                changes = manifest_changes(revoked.resources, new_set, root=entry.root)
                effects.append(ApprovalRevoked(origin=origin, uri=entry.uri, changes=changes))
        session = self._sessions.get((origin, entry.uri))
        if session is not None:
            effects.extend(self._carrier.run(session, session.observe(entry)))
        return effects, result

    def unusable(self, origin: str, uri: str, error: InvalidEntryError | None) -> list[Effect]:
        """The skill's latest entry cannot be loaded (invalid, over limits, or, None, gone)."""
        effects: list[Effect] = []
        revoked = self._ctx.approvals.revoke(origin, uri)
        if revoked is not None:
            changes = manifest_changes(revoked.resources, frozenset(), root=None)
            effects.append(ApprovalRevoked(origin=origin, uri=uri, changes=changes))
        session = self._sessions.get((origin, uri))
        if session is not None:
            effects.extend(self._carrier.run(session, session.unusable(error)))
        return effects

    def reject(self, origin: str, uri: str | None, error: InvalidEntryError) -> EntryRejected:
        """Keep a refused entry out of the registry, with its reason (ENTRY-07, SIL-12)."""
        rejected = EntryRejected(origin=origin, uri=uri, error=error)
        self._registry.reject(rejected, rejection_footprint(error).bytes)
        return rejected

    # -- skills/get -------------------------------------------------------------------------------

    def take_entry(
        self,
        token: int,
        request: GetForLoad | GetRefresh | GetConfirm | GetPreview,
        result: object,
        load: LoadSession | None = None,
    ) -> tuple[list[Effect], SkillEntry | None]:
        """Parse and record a ``skills/get`` answer; the entry, or the effects of its absence.

        ``load`` is the session whose ``skills/get`` this answers, when it is one: an unusable
        answer ends that load instead of whatever else the skill had.
        """
        origin, uri = request.origin, request.uri
        self.refresh_answered(token, (origin, uri))
        try:
            entry, _ = parse_get_skill_result(
                result, requested_uri=uri, limits=self._ctx.policy.limits
            )
        except RemoteProtocolError as exc:
            effects: list[Effect] = [protocol_failed(request, exc)]
            if load is not None:
                effects.extend(self._carrier.run(load, load.entry_failed(exc.message, exc)))
            return effects, None
        except InvalidEntryError as exc:
            effects = [self.reject(origin, uri, exc)]
            if load is not None:
                effects.extend(self._carrier.run(load, load.entry_refused(exc)))
            else:
                effects.extend(self.unusable(origin, uri, exc))
            return effects, None
        skill = result.get("skill") if isinstance(result, dict) else None
        effects, put = self.observe(origin, entry, entry_footprint(skill))
        if put is not PutResult.SAME:
            effects.append(
                RegistryUpdated(
                    origin=origin,
                    added=(uri,) if put is PutResult.ADDED else (),
                    changed=(uri,) if put is PutResult.CHANGED else (),
                )
            )
        return effects, entry

    def not_a_skill(self, origin: str, uri: str) -> list[Effect]:
        """The server answered ``skills/get`` with "not a skill" (ERR-07): forget the entry."""
        if self._registry.remove(origin, uri) is None:
            return []
        return [RegistryUpdated(origin=origin, added=(), changed=(), removed=(uri,))]

    def refresh_answered(self, token: int, key: Key) -> None:
        """The ``skills/get`` under ``token`` was answered; if it was the skill's refresh, the next
        one may go."""
        if self._ctx.refreshing.get(key) == token:
            del self._ctx.refreshing[key]

    # -- skills/list ------------------------------------------------------------------------------

    def take_page(self, server: OriginRecord, request: ListPage, result: object) -> list[Effect]:
        """One ``skills/list`` page: take its entries in order, within the walk's caps and the
        listing budgets, then ask for the next page or report the outcome."""
        origin = server.label
        listing = request.listing
        walk = listing.walk
        try:
            envelope = parse_list_skills_envelope(result)
        except RemoteProtocolError as exc:
            server.listing = None
            reason = f"skills/list result is malformed: {exc.message}"
            return [
                protocol_failed(request, exc),
                _partial(origin, walk, StopReason.MALFORMED_RESULT, reason),
            ]
        try:
            effects, taken, stop = self._take_items(server, listing, envelope.items)
        except LocalProtocolError:
            server.listing = None  # a session broke (a host bug); the walk ends with it
            raise
        step = walk.record_page(taken, envelope.next_cursor)
        if stop is None and step.stop is not None:
            stop = step.stop, step.message
        if stop is None and step.cursor is not None:
            effects.append(self._ctx.send(server, {"cursor": step.cursor}, request))
            return effects
        server.listing = None
        if stop is None:
            effects.append(
                ListingComplete(
                    origin=origin,
                    pages=walk.pages,
                    entries=walk.entries,
                    listed=frozenset(listing.seen),
                )
            )
        else:
            effects.append(_partial(origin, walk, *stop))
        return effects

    def _take_items(
        self, server: OriginRecord, listing: ListingProgress, items: list[object]
    ) -> tuple[list[Effect], int, tuple[StopReason, str] | None]:
        """Take a page's entries up to the cap or a budget: the effects, how many were taken,
        and why the walk stops, if it does."""
        origin = server.label
        walk = listing.walk
        effects: list[Effect] = []
        tally = _Tally()
        room = walk.remaining
        taken = 0
        stop: tuple[StopReason, str] | None = None
        for item in items:
            if taken >= room:
                stop = (
                    StopReason.ENTRY_CAP,
                    (
                        f"stopped after {walk.entries + taken} entries (the cap, "
                        f"{walk.max_entries} entries); the listing may be incomplete"
                    ),
                )
                break
            footprint = entry_footprint(item)
            stop = self._over_budget(origin, item, footprint)
            if stop is not None:
                break
            try:
                entry = SkillEntry.from_json(item, limits=self._ctx.policy.limits)
            except InvalidEntryError as exc:
                # A refused entry is kept as its error report; that must fit the budget too.
                stop = self._over_budget(origin, item, rejection_footprint(exc))
                if stop is not None:
                    break
                taken += 1
                effects.append(self.reject(origin, exc.uri, exc))
                if exc.uri is not None:
                    effects.extend(self.unusable(origin, exc.uri, exc))
                continue
            taken += 1
            effects.extend(self._listed(server, listing, entry, footprint, tally))
        if tally.added or tally.changed:
            added, changed = tuple(tally.added), tuple(tally.changed)
            effects.append(RegistryUpdated(origin=origin, added=added, changed=changed))
        return effects, taken, stop

    def _over_budget(
        self, origin: str, item: object, footprint: Footprint
    ) -> tuple[StopReason, str] | None:
        """Would keeping ``footprint`` for the wire entry ``item`` (less what it replaces) break a
        listing budget (see :mod:`skills_core.host.listing`)?"""
        uri = item.get("uri") if isinstance(item, dict) else None
        replaced = self._registry.cost(origin, uri) if isinstance(uri, str) else Footprint()
        return budget_stop(
            self._ctx.policy,
            origin,
            server=self._registry.usage(origin),
            total=self._registry.usage(),
            change=footprint - replaced,
        )

    def _listed(
        self,
        server: OriginRecord,
        listing: ListingProgress,
        entry: SkillEntry,
        footprint: Footprint,
        tally: _Tally,
    ) -> list[Effect]:
        """One valid entry of a listing page (SIL-04: the same skill twice must agree)."""
        origin = server.label
        seen = listing.seen.get(entry.uri)
        if seen is not None:
            if seen == entry or entry.uri in listing.conflicts:
                return []
            listing.conflicts.add(entry.uri)
            problem = EntryProblem(
                code="listed-twice",
                pointer="",
                message="the listing has two different entries for this skill; refetching it "
                "with skills/get (SIL-04)",
            )
            error = InvalidEntryError((problem,), uri=entry.uri)
            refetch = GetRefresh(origin=origin, uri=entry.uri)
            return [
                self.reject(origin, entry.uri, error),
                self._ctx.send(server, {"uri": entry.uri}, refetch),
            ]
        listing.seen[entry.uri] = entry
        effects, result = self.observe(origin, entry, footprint)
        if result is PutResult.ADDED:
            tally.added.append(entry.uri)
        elif result is PutResult.CHANGED:
            tally.changed.append(entry.uri)
        return effects

    @staticmethod
    def list_failed(server: OriginRecord, request: ListPage, message: str) -> ListingPartial:
        """A page request failed: the walk ends; what was registered stays usable (LIST-05)."""
        server.listing = None
        walk = request.listing.walk
        return _partial(
            server.label, walk, StopReason.REQUEST_FAILED, f"skills/list failed: {message}"
        )


@final
@dataclass(slots=True)
class _Tally:
    """The skills a page added to the registry and changed in it."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)


def _partial(origin: str, walk: ListingWalk, reason: StopReason, message: str) -> ListingPartial:
    return ListingPartial(
        origin=origin, reason=reason, pages=walk.pages, entries=walk.entries, message=message
    )
