"""The acting window on one skill: its held entry, and every read and listing under it.

Theory of operation
-------------------
When a skill's SKILL.md was verified and delivered, its load session
(:class:`~skills_core.host.session.LoadSession`) opens an :class:`ActingWindow` on the entry it
loaded: an immutable snapshot the window **holds** (HELD-01) until the session closes it or, after
re-approval of a changed skill whose SKILL.md is unchanged, replaces it (HELD-05). Nothing here
moves the session's state: reads are served only while the session is ACTING (the session and the
router check that first), and every request a window asks for carries the session's generation,
so an answer that arrives after the session moved is discarded before it reaches the window.

Like its session, the window writes nothing host-wide: it reads the cache, the policy and the
refreshes in flight through the session's read-only views, and returns **steps**, effects and the
intents of :mod:`skills_core.host.intents` (the request records to send, a refresh, the bytes to
charge and to keep, a stale cached copy to drop), which the router carries out.

* **Reads** resolve against the skill root (SIL-21), or a nested skill's root when the reference
  was found in that nested SKILL.md (URI-18), with the foundation's resolver, and only to URIs
  listed in the held entry (HELD-03, URI-25); an unlisted file is a verification failure and no
  request is sent (HELD-04). Bytes are verified, size first, against the held entry's row for the
  URI, then delivered, tagged with the origin; verified files are kept in the verified cache
  (:class:`~skills_core.host.intents.KeepVerified`), which re-verifies every hit (CACHE-02). A
  read names the row it was sent for, and its answer reaches the window only in the generation it
  was sent in, when that row is still the held entry's (the held entry changes only with a move of
  the session).
* **A verification failure** is reported and triggers at most one ``skills/get`` refresh per
  skill at a time; if the refreshed entry is unchanged, the failure stands and that file is not
  refreshed again under this entry (VER-09, VER-16, no loop).
* **A dynamic skill** has nothing to verify against: its files are delivered unverified, up to the
  cumulative cap for one skill (ENTRY-22, HELD-08).
* **Directory listings** come from the held entry when the server does not declare
  ``directoryRead`` (DIR-12, CAP-06); otherwise a live read is filtered by the held manifest, so a
  directory result never extends it, and a disagreement is reported as a probable change (DIR-13,
  DIR-14, DIR-16, DIR-18).

The invariant, by construction: :func:`~skills_core.host.effects.skill_file_delivery` (a verified
supporting file) is called in exactly two places: in :meth:`ActingWindow.on_file` right after
``verify_bytes`` against the held entry's row, and in :meth:`ActingWindow.read_uri` on a cache hit
that re-verified against it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol, final

from ..digest import verify_bytes
from ..entry import SkillEntry, SkillResource
from ..errors import RemoteProtocolError, URIError, VerificationError, VerificationKind
from ..messages import DirectoryChild, decode_read_result, parse_directory_result
from ..uri import (
    SkillURI,
    is_skill_md_uri,
    resolve_directory_reference,
    resolve_reference,
)
from .approvals import same_manifest
from .codes import DeliveryKind, FailureSource, NoticeCode, NoticeLevel, RefusalCode
from .context import (
    cache_failure,
    not_connected,
    over_budget,
    protocol_failed,
    reference_error,
)
from .effects import (
    DeliverToModel,
    DirectoryListing,
    Notice,
    Refused,
    RequestFailed,
    VerificationFailed,
    skill_file_delivery,
)
from .intents import (
    Charge,
    DiscardCached,
    OriginView,
    Refresh,
    Step,
    StoreView,
    keep_verified,
)
from .registry import ListingWalk
from .requests import DirectoryWalk, GetRefresh, Key, ReadDirectory, ReadFile, read_file


class _Owner(Protocol):
    """What a window knows of the load session that opened it (a
    :class:`~skills_core.host.session.LoadSession`, which imports this module)."""

    @property
    def server(self) -> OriginView:
        """The skill's server."""

    @property
    def key(self) -> Key:
        """``(origin label, skill uri)``."""

    @property
    def generation(self) -> int:
        """The session's generation now."""


__all__ = ["ActingWindow", "manifest_children"]


@final
class ActingWindow:
    """The held entry of one acting skill, and the reads under it; see the module docstring.

    Attributes:
        key: ``(origin label, skill uri)``.
        held: The held entry, an immutable snapshot (HELD-01).
        settled: Files whose failure stands: a refresh found the entry unchanged (VER-16).
        bytes_used: Bytes a dynamic skill delivered in this load (ENTRY-22, HELD-08).
    """

    __slots__ = ("_reads", "_root", "_server", "_session", "bytes_used", "held", "key", "settled")

    def __init__(
        self, reads: StoreView, session: _Owner, held: SkillEntry, *, delivered: int
    ) -> None:
        """Open ``session``'s window on ``held``, whose SKILL.md (``delivered`` bytes) was just
        delivered; ``reads`` are the router's stores, which the window only reads."""
        self._reads = reads
        self._session = session
        self._server = session.server
        self.key: Key = session.key
        self.held = held
        self._root = held.root
        self.settled: set[str] = set()
        self.bytes_used = delivered if held.is_dynamic else 0

    def replace(self, entry: SkillEntry) -> None:
        """Hold ``entry`` instead: re-approved, and its SKILL.md is unchanged (HELD-05)."""
        self.held = entry
        self._root = entry.root
        self.settled.clear()

    # -- files ------------------------------------------------------------------------------------

    def read(self, ref: str, found_in: str | None) -> list[Step]:
        """Read the file ``ref`` names (SIL-21; URI-18 when ``found_in`` is a nested SKILL.md)."""
        held = self.held
        base = held.skill
        if (
            found_in is not None
            and found_in != held.uri
            and is_skill_md_uri(found_in)
            and held.skill.contains(found_in)
        ):
            base = SkillURI.parse(found_in)
        try:
            uri = resolve_reference(base, ref)
        except URIError as exc:
            return [reference_error(self.key[0], self.key[1], ref, exc)]
        return self.read_uri(uri)

    def read_uri(self, uri: str) -> list[Step]:
        """Read ``uri``: only a file the held entry lists (HELD-03, HELD-04)."""
        origin, skill_uri = self.key
        held = self.held
        policy = self._reads.policy
        if held.is_dynamic:
            if self.bytes_used >= policy.dynamic_total_bytes:
                return [self._size_limit(uri)]
            if not self._server.connected:
                return [not_connected(origin, uri)]
            return [self._read_request(uri, None)]
        resource = held.resource(uri)
        if resource is None:
            error = VerificationError(
                f"{uri} is not listed in the held entry of {skill_uri}; while acting on a skill "
                "only its listed files are read (the skill may have changed)",
                kind=VerificationKind.UNLISTED,
                uri=uri,
            )
            return self._verification_failed(uri, error, FailureSource.MANIFEST)
        cap = policy.max_file_bytes
        if cap is not None and resource.size > cap:
            return [
                Refused(
                    code=RefusalCode.FILE_TOO_LARGE,
                    message=f"{uri} is {resource.size} bytes; this host accepts at most {cap} "
                    "per file (WG-03)",
                    origin=origin,
                    uri=uri,
                )
            ]
        steps: list[Step] = []
        hit = self._reads.cache.lookup(origin, resource)
        if hit.error is not None:
            steps.append(DiscardCached(origin=origin, resource=resource))
            steps.append(cache_failure(origin, skill_uri, hit.error))
        if hit.data is not None:
            steps.append(
                skill_file_delivery(origin, uri, hit.data, skill_uri, self._root, from_cache=True)
            )
        elif not self._server.connected:
            steps.append(not_connected(origin, uri))
        elif not self._server.can_fetch(resource.size, policy):
            steps.append(over_budget(policy, origin, uri))
        else:
            steps.append(self._read_request(uri, resource))
        return steps

    def _read_request(self, uri: str, resource: SkillResource | None) -> ReadFile:
        """The read of ``uri`` to send (the intent: the router gives it its token)."""
        origin, skill_uri = self.key
        return read_file(origin, uri, self._session, skill_uri, resource)

    def on_file(self, request: ReadFile, result: object) -> list[Step]:
        """A file read answered, in the generation it was sent in: verify and deliver.

        That generation guarantees the row the read was sent for is still the held entry's.
        """
        resource = request.resource
        if resource is None:
            return self._on_dynamic_file(request, result)
        uri = request.uri
        size = resource.size
        try:
            data = decode_read_result(result, uri=uri, max_size=size)
        except VerificationError as exc:
            return self._verification_failed(uri, exc, FailureSource.SERVER)
        except RemoteProtocolError as exc:
            return [protocol_failed(request, exc)]
        origin = request.origin
        try:
            verify_bytes(data, size=size, digest=resource.digest, uri=uri)
        except VerificationError as exc:
            charge = Charge(origin=origin, size=len(data))
            return [charge, *self._verification_failed(uri, exc, FailureSource.SERVER)]
        return [
            keep_verified(origin, resource, data),
            skill_file_delivery(origin, uri, data, request.skill_uri, self._root, from_cache=False),
        ]

    def _on_dynamic_file(self, request: ReadFile, result: object) -> list[Step]:
        """A dynamic skill's file: nothing to verify against, but capped (ENTRY-22, HELD-08)."""
        origin, skill_uri = self.key
        uri = request.uri
        room = self._reads.policy.dynamic_total_bytes - self.bytes_used
        try:
            data = decode_read_result(result, uri=uri, max_size=room)
        except VerificationError as exc:
            if exc.kind is VerificationKind.SIZE:
                return [self._size_limit(uri)]
            return self._verification_failed(uri, exc, FailureSource.SERVER)
        except RemoteProtocolError as exc:
            return [protocol_failed(request, exc)]
        if len(data) > room:
            return [self._size_limit(uri)]
        self.bytes_used += len(data)
        return [
            Charge(origin=origin, size=len(data)),
            DeliverToModel(
                origin=origin,
                uri=uri,
                kind=DeliveryKind.SKILL_FILE,
                content=data,
                verified=False,
                skill_uri=skill_uri,
                skill_root=self.held.root,
            ),
        ]

    def _size_limit(self, uri: str) -> Refused:
        return Refused(
            code=RefusalCode.SKILL_SIZE_LIMIT,
            message=f"this dynamic skill already delivered {self._reads.policy.dynamic_total_bytes} "
            "bytes, the most one skill may (ENTRY-22, HELD-08)",
            origin=self.key[0],
            uri=uri,
        )

    def file_request_failed(
        self, request: ReadFile, failed: RequestFailed, not_found: bool
    ) -> list[Step]:
        """A file read failed; a listed file the server no longer serves means the skill changed,
        so refresh once (DIR-17)."""
        refresh = self._start_refresh(request.uri) if not_found else None
        return [failed] if refresh is None else [failed, refresh]

    # -- failures and refreshes -------------------------------------------------------------------

    def _verification_failed(
        self, uri: str, error: VerificationError, source: FailureSource
    ) -> list[Step]:
        """A file failed: it is not used; at most one refresh (VER-09, VER-16)."""
        origin, skill_uri = self.key
        refresh = self._start_refresh(uri)
        effects: list[Step] = [
            VerificationFailed(
                origin=origin,
                uri=uri,
                skill_uri=skill_uri,
                error=error,
                source=source,
                refreshing=refresh is not None,
            )
        ]
        if refresh is not None:
            effects.append(refresh)
        elif uri in self.settled:
            effects.append(
                Notice(
                    level=NoticeLevel.WARNING,
                    code=NoticeCode.FAILURE_STANDS,
                    message=f"{uri}: the entry was refreshed and is unchanged, so the failure "
                    "stands; no further refresh is made for it",
                    origin=origin,
                    uri=uri,
                )
            )
        return effects

    def _start_refresh(self, failure_uri: str) -> Refresh | None:
        """The refresh ``failure_uri`` asks for, unless one is in flight or its failure stands."""
        server = self._server
        if (
            self.key in self._reads.refreshing
            or failure_uri in self.settled
            or not server.connected
            or not server.features.skills
        ):
            return None
        return Refresh(origin=self.key[0], uri=self.key[1], failure_uri=failure_uri)

    def refreshed(self, request: GetRefresh, entry: SkillEntry) -> list[Step]:
        """A refresh answered with ``entry``: if it is the held entry, the failure stands."""
        failure = request.failure_uri
        if failure is None or not same_manifest(self.held, entry):
            return []
        self.settled.add(failure)
        return [
            Notice(
                level=NoticeLevel.WARNING,
                code=NoticeCode.FAILURE_STANDS,
                message=f"{failure}: the refreshed entry of {request.uri} is unchanged, so the "
                "verification failure stands",
                origin=request.origin,
                uri=failure,
            )
        ]

    # -- directories ------------------------------------------------------------------------------

    def list_dir(self, ref: str) -> list[Step]:
        """List a directory: from the held entry, or a live read filtered by it (DIR-07..DIR-18)."""
        origin, skill_uri = self.key
        held = self.held
        try:
            directory = resolve_directory_reference(held.skill, ref)
        except URIError as exc:
            return [reference_error(origin, skill_uri, ref, exc)]
        if held.resource(directory) is not None:
            return [
                Refused(
                    code=RefusalCode.NOT_A_DIRECTORY,
                    message=f"{directory} is a file of the skill, not a directory",
                    origin=origin,
                    uri=directory,
                )
            ]
        if not (self._server.features.directory_read and self._server.connected):
            if held.is_dynamic:
                return [
                    Refused(
                        code=RefusalCode.DIRECTORY_READ_NOT_DECLARED,
                        message=f"{origin!r} has not declared directoryRead (or is disconnected) "
                        "and this dynamic skill has no manifest to answer from (CAP-06)",
                        origin=origin,
                        uri=directory,
                    )
                ]
            return [
                DirectoryListing(
                    origin=origin,
                    skill_uri=skill_uri,
                    uri=directory,
                    children=manifest_children(held, directory),
                    from_manifest=True,
                )
            ]
        policy = self._reads.policy
        walk = ListingWalk(
            max_pages=policy.max_directory_pages, max_entries=policy.max_directory_entries
        )
        request = ReadDirectory(
            origin=origin,
            uri=directory,
            skill_uri=skill_uri,
            session=self._session,
            generation=self._session.generation,
            gathered=DirectoryWalk(walk=walk),
        )
        return [request]

    def on_directory(self, request: ReadDirectory, result: object) -> list[Step]:
        """A page of a directory read answered: ask for the next, or answer.

        Children and dropped ones count alike against the walk's cap, and nothing past it is
        looked at (WG-05).
        """
        gathered = request.gathered
        walk = gathered.walk
        room = walk.remaining
        try:
            children, dropped, cursor = parse_directory_result(
                result, directory_uri=request.uri, max_items=room + 1
            )
        except RemoteProtocolError as exc:
            return [protocol_failed(request, exc)]
        kept = children[:room]
        gathered.children.extend(kept)
        gathered.dropped.extend(dropped[: room - len(kept)])
        truncated = len(children) + len(dropped) > room
        step = walk.record_page(min(len(children) + len(dropped), room), cursor)
        partial = truncated or step.stop is not None
        if not partial and step.cursor is not None:
            return [replace(request, cursor=step.cursor)]  # the next page of the same read
        return self._directory_done(request, partial)

    def _directory_done(self, request: ReadDirectory, partial: bool) -> list[Step]:
        origin, skill_uri = self.key
        held = self.held
        gathered = request.gathered
        listed = {c.uri: c for c in gathered.children}
        if held.is_dynamic:
            listing = DirectoryListing(
                origin=origin,
                skill_uri=skill_uri,
                uri=request.uri,
                children=tuple(listed.values()),
                from_manifest=False,
                dropped=tuple(gathered.dropped),
                partial=partial,
                verified=False,
            )
            return [listing]
        manifest = {c.uri: c for c in manifest_children(held, request.uri)}
        hidden = tuple(uri for uri in listed if uri not in manifest)
        missing = tuple(uri for uri in manifest if uri not in listed)
        listing = DirectoryListing(
            origin=origin,
            skill_uri=skill_uri,
            uri=request.uri,
            children=tuple(c for uri, c in manifest.items() if uri in listed),
            from_manifest=False,
            hidden=hidden,
            missing=missing,
            dropped=tuple(gathered.dropped),
            partial=partial,
        )
        effects: list[Step] = [listing]
        if listing.looks_changed and not partial:
            effects.append(
                Notice(
                    level=NoticeLevel.WARNING,
                    code=NoticeCode.SKILL_MAY_HAVE_CHANGED,
                    message=f"{request.uri} on {origin!r} differs from the approved skill "
                    f"({len(hidden)} new, {len(missing)} missing); refresh {skill_uri} to see the "
                    "change (it will need approval again)",
                    origin=origin,
                    uri=skill_uri,
                )
            )
        return effects


def manifest_children(entry: SkillEntry, directory: str) -> tuple[DirectoryChild, ...]:
    """The direct children of ``directory`` according to the manifest (DIR-12)."""
    if isinstance(entry.resources, str):
        return ()
    prefix = directory + "/"
    children: dict[str, DirectoryChild] = {}
    for resource in entry.resources:
        if not resource.uri.startswith(prefix):
            continue
        name, sep, _ = resource.uri[len(prefix) :].partition("/")
        uri = prefix + name
        if uri not in children:
            children[uri] = DirectoryChild(
                uri=uri, name=name, is_directory=bool(sep), mime_type=None
            )
    return tuple(sorted(children.values(), key=lambda c: c.name))
