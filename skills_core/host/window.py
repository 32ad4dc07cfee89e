"""The acting window on one skill: its held entry, and every read and listing under it.

Theory of operation
-------------------
When a skill's SKILL.md was verified and delivered, its load session
(:class:`~skills_core.host.session.LoadSession`) opens an :class:`ActingWindow` on the entry it
loaded: an immutable snapshot the window **holds** (HELD-01) until the session closes it or, after
re-approval of a changed skill whose SKILL.md is unchanged, replaces it (HELD-05). Nothing here
moves the session's state: reads are served only while the session is ACTING (the session and the
router check that first), and every request a window sends carries the session's generation, so an
answer that arrives after the session moved is discarded before it reaches the window.

* **Reads** resolve against the skill root (SIL-21), or a nested skill's root when the reference
  was found in that nested SKILL.md (URI-18), with the foundation's resolver, and only to URIs
  listed in the held entry (HELD-03, URI-25); an unlisted file is a verification failure and no
  request is sent (HELD-04). Bytes are verified, size first, against the held entry's row for the
  URI, then delivered, tagged with the origin; verified files are kept in the verified cache,
  which re-verifies every hit (CACHE-02). A read names the row it was sent for, and its answer
  reaches the window only in the generation it was sent in, when that row is still the held
  entry's (the held entry changes only with a move of the session).
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

from typing import Protocol, final

from ..digest import verify_bytes
from ..entry import SkillEntry, SkillResource
from ..errors import RemoteProtocolError, URIError, VerificationError, VerificationKind
from ..jsonvalue import JSONValue
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
    HostContext,
    OriginRecord,
    cache_failure,
    not_connected,
    protocol_failed,
    reference_error,
)
from .effects import (
    DeliverToModel,
    DirectoryListing,
    Effect,
    Notice,
    Refused,
    RequestFailed,
    SendRequest,
    VerificationFailed,
    skill_file_delivery,
)
from .registry import ListingWalk
from .requests import DirectoryWalk, GetRefresh, Key, ReadDirectory, ReadFile


class _Owner(Protocol):
    """What a window knows of the load session that opened it (a
    :class:`~skills_core.host.session.LoadSession`, which imports this module)."""

    @property
    def server(self) -> OriginRecord:
        """The record of the skill's server."""

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

    __slots__ = ("_ctx", "_root", "_server", "_session", "bytes_used", "held", "key", "settled")

    def __init__(
        self, ctx: HostContext, session: _Owner, held: SkillEntry, *, delivered: int
    ) -> None:
        """Open ``session``'s window on ``held``, whose SKILL.md (``delivered`` bytes) was just
        delivered."""
        self._ctx = ctx
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

    def read(self, ref: str, found_in: str | None) -> list[Effect]:
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

    def read_uri(self, uri: str) -> list[Effect]:
        """Read ``uri``: only a file the held entry lists (HELD-03, HELD-04)."""
        origin, skill_uri = self.key
        held = self.held
        policy = self._ctx.policy
        if held.is_dynamic:
            if self.bytes_used >= policy.dynamic_total_bytes:
                return [self._size_limit(uri)]
            if not self._server.connected:
                return [not_connected(self._server, uri)]
            return [self._send_read(uri, None)]
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
        effects: list[Effect] = []
        hit = self._ctx.cache.get(origin, resource)
        if hit.error is not None:
            effects.append(cache_failure(origin, skill_uri, hit.error))
        if hit.data is not None:
            effects.append(
                skill_file_delivery(origin, uri, hit.data, skill_uri, self._root, from_cache=True)
            )
        elif not self._server.connected:
            effects.append(not_connected(self._server, uri))
        elif not self._server.can_fetch(resource.size, policy):
            effects.append(self._ctx.over_budget(self._server, uri))
        else:
            effects.append(self._send_read(uri, resource))
        return effects

    def _send_read(self, uri: str, resource: SkillResource | None) -> SendRequest:
        origin, skill_uri = self.key
        session = self._session
        request = ReadFile(
            origin=origin,
            uri=uri,
            session=session,
            generation=session.generation,
            skill_uri=skill_uri,
            resource=resource,
        )
        return self._ctx.send(self._server, {"uri": uri}, request)

    def on_file(self, request: ReadFile, result: object) -> list[Effect]:
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
            self._server.bytes_fetched += len(data)
            verify_bytes(data, size=size, digest=resource.digest, uri=uri)
        except VerificationError as exc:
            return self._verification_failed(uri, exc, FailureSource.SERVER)
        except RemoteProtocolError as exc:
            return [protocol_failed(request, exc)]
        origin = request.origin
        self._ctx.cache.put(origin, resource, data)
        return [
            skill_file_delivery(origin, uri, data, request.skill_uri, self._root, from_cache=False)
        ]

    def _on_dynamic_file(self, request: ReadFile, result: object) -> list[Effect]:
        """A dynamic skill's file: nothing to verify against, but capped (ENTRY-22, HELD-08)."""
        origin, skill_uri = self.key
        uri = request.uri
        room = self._ctx.policy.dynamic_total_bytes - self.bytes_used
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
        self._server.bytes_fetched += len(data)
        return [
            DeliverToModel(
                origin=origin,
                uri=uri,
                kind=DeliveryKind.SKILL_FILE,
                content=data,
                verified=False,
                skill_uri=skill_uri,
                skill_root=self.held.root,
            )
        ]

    def _size_limit(self, uri: str) -> Refused:
        return Refused(
            code=RefusalCode.SKILL_SIZE_LIMIT,
            message=f"this dynamic skill already delivered {self._ctx.policy.dynamic_total_bytes} "
            "bytes, the most one skill may (ENTRY-22, HELD-08)",
            origin=self.key[0],
            uri=uri,
        )

    def file_request_failed(
        self, request: ReadFile, failed: RequestFailed, not_found: bool
    ) -> list[Effect]:
        """A file read failed; a listed file the server no longer serves means the skill changed,
        so refresh once (DIR-17)."""
        refresh = self._start_refresh(request.uri) if not_found else None
        return [failed] if refresh is None else [failed, refresh]

    # -- failures and refreshes -------------------------------------------------------------------

    def _verification_failed(
        self, uri: str, error: VerificationError, source: FailureSource
    ) -> list[Effect]:
        """A file failed: it is not used; at most one refresh (VER-09, VER-16)."""
        origin, skill_uri = self.key
        refresh = self._start_refresh(uri)
        effects: list[Effect] = [
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

    def _start_refresh(self, failure_uri: str) -> SendRequest | None:
        server = self._server
        if (
            self.key in self._ctx.refreshing
            or failure_uri in self.settled
            or not server.connected
            or not server.features.skills
        ):
            return None
        skill_uri = self.key[1]
        request = GetRefresh(origin=server.label, uri=skill_uri, failure_uri=failure_uri)
        send = self._ctx.send(server, {"uri": skill_uri}, request)
        self._ctx.refreshing[self.key] = send.token
        return send

    def refreshed(self, request: GetRefresh, entry: SkillEntry) -> list[Effect]:
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

    def list_dir(self, ref: str) -> list[Effect]:
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
        policy = self._ctx.policy
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
        return [self._ctx.send(self._server, {"uri": directory}, request)]

    def on_directory(self, request: ReadDirectory, result: object) -> list[Effect]:
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
            params: dict[str, JSONValue] = {"uri": request.uri, "cursor": step.cursor}
            return [self._ctx.send(self._server, params, request)]
        return self._directory_done(request, partial)

    def _directory_done(self, request: ReadDirectory, partial: bool) -> list[Effect]:
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
        effects: list[Effect] = [listing]
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
