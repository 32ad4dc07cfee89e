"""The host: a sans-IO state machine that loads MCP-served skills safely.

Theory of operation
-------------------
:class:`Host` holds, per host-assigned origin label, what that server declared, the registry of its
skills, the approvals bound to their manifests, and one load session per skill being loaded or acted
on. Its methods are the things a host does ("connect", "list", "load", "read", "approve", "the
server answered") and each returns a list of :mod:`effects <skills_core.host.effects>` for the caller
to carry out, in order. It never does I/O and never sends a request that no call asked for: nothing
is fetched on connect, on listing or at approval (VER-12, APR-03); every ``SendRequest`` traces back
to the call that returned it, or to the response (passed back in by the caller) of a request that
call made.

**Refusals.** A call that the current state does not allow returns ``[Refused(code, ...)]`` and
changes nothing. Methods never raise for anything a model, user or server can cause; the one
exception is :meth:`Host.connect` with an invalid label (a configuration error), which raises
:class:`~skills_core.errors.LocalProtocolError`. Responses with unknown, duplicate or foreign tokens
give :class:`~skills_core.host.effects.UnexpectedResponse`.

**Load sessions** move through :class:`~skills_core.host.states.LoadState` by the transition table
:data:`~skills_core.host.states.TRANSITIONS` (in :mod:`skills_core.host.states`), keyed by
``(state, input)`` pairs; every move goes through it and bumps the session's generation.
A response is acted on only if its request's generation is still current, so an answer to a
request made under an entry that has since changed is discarded, never delivered::

    IDLE --load--> AWAITING_ENTRY (skills/get for an unlisted skill; LIST-06)
         --load--> AWAITING_APPROVAL (prompt bound to the manifest; APR-01)
         --load--> READING_SKILL_MD (an approval of this exact set exists)
    AWAITING_APPROVAL --approve--> READING_SKILL_MD --verified--> ACTING (window open, entry held)
    READING_SKILL_MD --verification failed--> AWAITING_ENTRY (one skills/get refresh; VER-09)
    ACTING --a different set observed--> REAPPROVAL (reads and exec suspended; HELD-09)
    REAPPROVAL --approve--> ACTING (SKILL.md unchanged; HELD-05) or STALE (it changed; HELD-07)
    STALE --load--> READING_SKILL_MD; any window --close/deny--> IDLE

**Loading** (VER-04, SIL-34): approve (bound to the set) → ``resources/read`` SKILL.md → size, then
digest → parse the frontmatter and compare it field by field with the entry (VER-10, VER-11; a
parse error is a frontmatter failure) → deliver, tagged with the origin → open the acting window
holding the entry, an immutable snapshot (HELD-01).

**The acting window**: reads resolve against the skill root with the foundation's resolver and
only to URIs listed in the held entry (HELD-03, URI-25, SIL-21); an unlisted file is a
verification failure and no request is sent for it (HELD-04). Every verification failure yields
``VerificationFailed`` plus at most one ``skills/get`` refresh; if the refreshed entry is the same,
the failure stands and that file does not trigger another refresh under this entry (VER-16, no
loop). A different set revokes the approval and is presented as "this skill changed and needs
approval again" (APR-02, DIR-15, DIR-16). Directory results never extend the manifest (DIR-13,
DIR-14, DIR-18); without ``directoryRead`` they come from the held entry (DIR-12, CAP-06).
Reading another server from a skill needs a per-call approval naming both (ORG-08, ORG-09).

**The invariant**, enforced by construction: ``DeliverToModel(verified=True)`` is built in exactly
two places, each right after ``verify_bytes`` (or a re-verifying cache hit) against a resource of
the held, approved entry of the same origin (or, for SKILL.md, the entry being loaded under a
current approval), with the session's generation unchanged since the request was made.
``verified=False`` is used only for explicit ordinary resource reads and dynamic skills.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, final

from skills_core._version import __version__
from skills_core.digest import verify_bytes
from skills_core.entry import SkillEntry, SkillResource
from skills_core.errors import (
    EntryProblem,
    FrontmatterError,
    InvalidEntryError,
    RemoteProtocolError,
    URIError,
    URIErrorKind,
    VerificationError,
    VerificationKind,
    quote_for_message,
)
from skills_core.frontmatter import compare_frontmatter, parse_frontmatter
from skills_core.host._records import (
    Key,
    Listing,
    Origin,
    Pending,
    Prompt,
    Purpose,
    Session,
    changes_between,
    differs,
    error_fields,
    manifest_children,
    set_of,
)
from skills_core.host.approvals import ApprovalStore, manifest_changes
from skills_core.host.cache import CacheStore, MemoryCacheStore, VerifiedCache
from skills_core.host.effects import (
    ApprovalGranted,
    ApprovalReason,
    ApprovalRevoked,
    ApprovalWithdrawn,
    CloseReason,
    Connected,
    DeclineReason,
    DeliverToModel,
    DeliveryKind,
    DirectoryListing,
    Effect,
    EntryRejected,
    FailureSource,
    HeldEntryReplaced,
    ListingComplete,
    ListingPartial,
    LoadDeclined,
    LoadFailed,
    NameCollision,
    NotASkill,
    Notice,
    NoticeLevel,
    PreviewReady,
    ReferenceRejected,
    RefusalCode,
    Refused,
    RegistryUpdated,
    ReloadRequired,
    RequestApproval,
    RequestCrossOriginApproval,
    RequestFailed,
    ResponseDiscarded,
    SendRequest,
    SkillChanged,
    SkillConfirmed,
    SkillLoaded,
    UnexpectedResponse,
    VerificationFailed,
    WindowClosed,
    _skill_file_delivery,
)
from skills_core.host.framing import content_warnings
from skills_core.host.gates import (
    ExecGateResult,
    SkillPermissions,
    WindowExecState,
    exec_decision,
    widening_fields,
)
from skills_core.host.policy import DEFAULT_POLICY, CrossOriginPolicy, HostPolicy
from skills_core.host.registry import (
    CatalogItem,
    ListingWalk,
    PutResult,
    Registry,
    RejectedRecord,
    Resolution,
    StopReason,
    check_label,
)
from skills_core.host.states import TRANSITIONS, WINDOW_STATES, LoadInput, LoadState
from skills_core.jsonvalue import ABSENT, JSONValue, thaw_json
from skills_core.messages import (
    Era,
    Implementation,
    ServerFeatures,
    decode_read_result,
    parse_directory_result,
    parse_get_skill_result,
    parse_list_skills_result,
    parse_server_features,
    request_meta,
    with_meta,
)
from skills_core.spec import MODERN_PROTOCOL_VERSION, ErrorCode, Method
from skills_core.uri import (
    SkillURI,
    is_skill_md_uri,
    resolve_directory_reference,
    resolve_reference,
)

__all__ = [
    "WindowView",
    "DEFAULT_CLIENT_INFO",
    "DEFAULT_MEMORY_CACHE_BYTES",
    "Host",
]

#: ``clientInfo`` sent in modern requests unless the host gives its own.
DEFAULT_CLIENT_INFO: Final = Implementation(name="skills-core", version=__version__)
#: Bound of the in-memory cache a :class:`Host` makes when given none: four maximal skills.
DEFAULT_MEMORY_CACHE_BYTES: Final = 64 * 1024 * 1024

#: Error codes meaning "no such resource": -32602 now, -32002 in 2025-11-25 (base-protocol §1.1).
_NOT_FOUND_CODES: Final = frozenset({ErrorCode.INVALID_PARAMS, ErrorCode.LEGACY_RESOURCE_NOT_FOUND})


_WINDOW_STATES: Final = WINDOW_STATES


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class WindowView:
    """A read-only view of one skill's load session.

    Attributes:
        origin: Server label.
        uri: Skill URI.
        state: Where the session stands.
        held: The held entry (while a window is open), an immutable snapshot (HELD-01).
        pending: A newer entry awaiting re-approval or a reload.
        dynamic_bytes: Bytes a dynamic skill delivered in this load (HELD-08).
    """

    origin: str
    uri: str
    state: LoadState
    held: SkillEntry | None
    pending: SkillEntry | None
    dynamic_bytes: int


@final
class Host:
    """The sans-IO host state machine; see the module docstring."""

    def __init__(
        self,
        *,
        policy: HostPolicy = DEFAULT_POLICY,
        client_info: Implementation = DEFAULT_CLIENT_INFO,
        approvals: ApprovalStore | None = None,
        cache: CacheStore | None = None,
    ) -> None:
        """Create a host.

        Args:
            policy: How skills are treated; the defaults fail closed.
            client_info: The ``clientInfo`` sent in modern requests' ``_meta``.
            approvals: Persisted approvals to start from (see :class:`ApprovalStore`).
            cache: Where verified files are kept; an in-memory store of
                :data:`DEFAULT_MEMORY_CACHE_BYTES` when None.
        """
        self._policy = policy
        self._client_info = client_info
        self._approvals = approvals if approvals is not None else ApprovalStore()
        self._cache = VerifiedCache(
            cache if cache is not None else MemoryCacheStore(max_bytes=DEFAULT_MEMORY_CACHE_BYTES)
        )
        self._registry = Registry()
        self._origins: dict[str, Origin] = {}
        self._sessions: dict[Key, Session] = {}
        self._pending: dict[int, Pending] = {}
        self._prompts: dict[int, Prompt] = {}
        self._next_token = 1
        self._next_prompt = 1
        self._generation = 0

    # -- read-only views ------------------------------------------------------------------------

    @property
    def policy(self) -> HostPolicy:
        """The policy in force."""
        return self._policy

    @property
    def registry(self) -> Registry:
        """The per-origin registry (read it; the host writes it)."""
        return self._registry

    @property
    def approvals(self) -> ApprovalStore:
        """The approval store; persist it with ``host.approvals.dumps()``."""
        return self._approvals

    @property
    def pending_requests(self) -> int:
        """How many requests await a response."""
        return len(self._pending)

    def features(self, origin: str) -> ServerFeatures | None:
        """What ``origin`` declared at connect, or None for an unknown label."""
        conn = self._origins.get(origin)
        return conn.features if conn is not None else None

    def state(self, origin: str, uri: str) -> LoadState:
        """Where the skill ``(origin, uri)`` stands."""
        session = self._sessions.get((origin, uri))
        return session.state if session is not None else LoadState.IDLE

    def window(self, origin: str, uri: str) -> WindowView | None:
        """The skill's session, or None when it is idle."""
        session = self._sessions.get((origin, uri))
        return self._view(session) if session is not None else None

    def windows(self) -> tuple[WindowView, ...]:
        """Every session with an open window (acting, suspended or stale)."""
        return tuple(self._view(s) for s in self._sessions.values() if s.state in _WINDOW_STATES)

    @staticmethod
    def _view(session: Session) -> WindowView:
        return WindowView(
            origin=session.key[0],
            uri=session.key[1],
            state=session.state,
            held=session.held,
            pending=session.pending_entry,
            dynamic_bytes=session.bytes_used,
        )

    def resolve(self, query: str) -> Resolution:
        """Resolve a skill URI, ``label:name`` or bare name; never silently (ORG-12..ORG-14)."""
        return self._registry.resolve(query)

    def catalog(self, origin: str | None = None) -> tuple[CatalogItem, ...]:
        """The registered skills as presented to the model, each tagged with its origin."""
        return self._registry.catalog(origin)

    # -- plumbing -------------------------------------------------------------------------------

    def _move(self, session: Session, event: LoadInput) -> None:
        session.state = TRANSITIONS[(session.state, event)]
        # One counter for the whole host: a session closed and opened again never reuses a
        # generation, so an answer to a request of the old session cannot pass for the new one.
        self._generation += 1
        session.generation = self._generation
        if session.state is LoadState.IDLE:
            if self._sessions.get(session.key) is session:
                del self._sessions[session.key]
        else:
            self._sessions[session.key] = session

    def _send(
        self, conn: Origin, method: Method, params: dict[str, JSONValue], pending: Pending
    ) -> SendRequest:
        token = self._next_token
        self._next_token += 1
        self._pending[token] = pending
        return SendRequest(
            origin=conn.label, token=token, method=method.value, params=with_meta(params, conn.meta)
        )

    def _origin(self, origin: str, *, skills: bool = True) -> Origin | Refused:
        conn = self._origins.get(origin)
        if conn is None:
            return Refused(
                code=RefusalCode.UNKNOWN_ORIGIN,
                message=f"no server is connected under the label {origin!r}",
                origin=origin,
            )
        if skills and not conn.features.skills:
            return Refused(
                code=RefusalCode.EXTENSION_NOT_DECLARED,
                message=f"{origin!r} has not declared the skills extension; its skills are not "
                "used (CAP-08)",
                origin=origin,
            )
        return conn

    @staticmethod
    def _not_connected(conn: Origin, uri: str | None = None) -> Refused:
        return Refused(
            code=RefusalCode.NOT_CONNECTED,
            message=f"{conn.label!r} is disconnected",
            origin=conn.label,
            uri=uri,
        )

    def _approved(self, key: Key, entry: SkillEntry) -> bool:
        return (
            not entry.is_dynamic
            and self._approvals.approved(key[0], key[1], entry.resource_set) is not None
        )

    def _needs_prompt(self, key: Key, entry: SkillEntry) -> bool:
        """A prompt is needed unless policy waives it or an approval of this exact set exists."""
        return self._policy.require_approval and not self._approved(key, entry)

    @staticmethod
    def _approve_by_policy(session: Session) -> None:
        """Host policy approves this load (no prompt): nothing granted, nothing persisted."""
        session.per_load = True
        session.per_load_fields = frozenset()
        session.per_load_exec = False

    def _withdraw(self, session: Session, reason: str) -> list[Effect]:
        prompt_id = session.prompt_id
        if prompt_id is None:
            return []
        session.prompt_id = None
        self._prompts.pop(prompt_id, None)
        return [ApprovalWithdrawn(prompt_id=prompt_id, reason=reason)]

    # -- origins --------------------------------------------------------------------------------

    def connect(
        self,
        origin: str,
        capabilities: object,
        *,
        era: Era = Era.MODERN,
        protocol_version: str = MODERN_PROTOCOL_VERSION,
    ) -> list[Effect]:
        """Record a server under a host-assigned label, with its declared capabilities.

        Nothing is fetched (VER-12, GET-10). The label is the identity; the server's self-reported
        name is never used (ORG-05). Connecting an existing label again updates its capabilities
        and marks it connected.

        Args:
            origin: The host-assigned label.
            capabilities: The ``capabilities`` object from ``server/discover`` or ``initialize``.
            era: Modern requests carry ``_meta``; legacy ones do not (CAP-10).
            protocol_version: The modern revision to declare in ``_meta``.

        Raises:
            LocalProtocolError: ``origin`` is not a valid label (see ``check_label``).
        """
        check_label(origin)
        features = parse_server_features(capabilities)
        meta = (
            request_meta(self._client_info, protocol_version=protocol_version)
            if era is Era.MODERN
            else None
        )
        conn = self._origins.get(origin)
        if conn is None:
            self._origins[origin] = Origin(label=origin, features=features, meta=meta)
        else:
            conn.features = features
            conn.meta = meta
            conn.connected = True
        effects: list[Effect] = [Connected(origin=origin, features=features)]
        effects.extend(
            Notice(level=NoticeLevel.WARNING, code="capabilities", message=text, origin=origin)
            for text in features.notices
        )
        return effects

    def disconnect(self, origin: str) -> list[Effect]:
        """Mark ``origin`` disconnected: requests in flight fail; open windows stay (served from
        the verified cache, still as MCP content; CACHE-05).
        """
        conn = self._origins.get(origin)
        if conn is None:
            return [self._unknown(origin)]
        conn.connected = False
        effects: list[Effect] = []
        for token in [t for t, p in self._pending.items() if p.origin == origin]:
            effects.extend(self._request_failed(token, None, f"{origin!r} disconnected"))
        return effects

    def forget(self, origin: str) -> list[Effect]:
        """Remove a server: its windows, prompts, registry entries, approvals and cached content
        (CACHE-07). Other servers' same-URI content is untouched.
        """
        conn = self._origins.get(origin)
        if conn is None:
            return [self._unknown(origin)]
        effects: list[Effect] = []
        for session in [s for k, s in self._sessions.items() if k[0] == origin]:
            effects.extend(self._withdraw(session, f"{origin!r} was removed"))
            if session.state in _WINDOW_STATES:
                effects.append(
                    WindowClosed(origin=origin, uri=session.key[1], reason=CloseReason.FORGOTTEN)
                )
            self._move(session, LoadInput.ABANDON)
        for prompt_id, prompt in list(self._prompts.items()):
            if origin in (prompt.key[0], prompt.cross_to):
                del self._prompts[prompt_id]
                effects.append(
                    ApprovalWithdrawn(prompt_id=prompt_id, reason=f"{origin!r} was removed")
                )
        for token in [t for t, p in self._pending.items() if p.origin == origin]:
            del self._pending[token]
        self._registry.forget_origin(origin)
        self._approvals.forget_origin(origin)
        self._cache.forget(origin)
        del self._origins[origin]
        effects.append(
            Notice(
                level=NoticeLevel.INFO,
                code="origin-forgotten",
                message=f"{origin!r}: registry, approvals and cached content removed",
                origin=origin,
            )
        )
        return effects

    @staticmethod
    def _unknown(origin: str) -> Refused:
        return Refused(
            code=RefusalCode.UNKNOWN_ORIGIN,
            message=f"no server is connected under the label {origin!r}",
            origin=origin,
        )

    def register_local_skill(self, name: str, location: str = "") -> list[Effect]:
        """Register one of the host's own filesystem skills, so that an MCP-served skill of the
        same name never shadows it or is substituted for it (ORG-14, ORG-15).
        """
        candidates = self._registry.register_local(name, location)
        if candidates:
            return [NameCollision(name=name, candidates=candidates)]
        return []

    def unregister_local_skill(self, name: str) -> list[Effect]:
        """Forget a local skill; its name stays contested, so it never silently retargets."""
        self._registry.unregister_local(name)
        return []

    # -- listing and entries --------------------------------------------------------------------

    def list_skills(self, origin: str) -> list[Effect]:
        """Walk ``skills/list`` (following cursors up to the policy caps) into the registry.

        Records each valid entry under ``(origin, uri)`` and keeps invalid and over-limit ones out
        with their reasons; fetches nothing else (LIST-13, VER-12).

        Args:
            origin: The server's label.

        Returns:
            ``[SendRequest(skills/list)]``; the answers lead to ``RegistryUpdated``,
            ``EntryRejected`` and finally ``ListingComplete`` or ``ListingPartial``.
        """
        conn = self._origin(origin)
        if isinstance(conn, Refused):
            return [conn]
        if not conn.connected:
            return [self._not_connected(conn)]
        if conn.listing is not None:
            return [
                Refused(
                    code=RefusalCode.LISTING_IN_PROGRESS,
                    message=f"a listing of {origin!r} is already in progress",
                    origin=origin,
                )
            ]
        walk = ListingWalk(max_pages=self._policy.max_pages, max_entries=self._policy.max_entries)
        send = self._send(
            conn,
            Method.SKILLS_LIST,
            {},
            Pending(origin=origin, method="skills/list", purpose=Purpose.LIST, uri=""),
        )
        conn.listing = Listing(token=send.token, walk=walk)
        return [send]

    def get_skill(self, origin: str, uri: str) -> list[Effect]:
        """Confirm an explicit reference with ``skills/get`` (URI-15, URI-16, GET-10).

        Only a SKILL.md URI may be asked about (GET-02). A -32602 answer means "not a skill here"
        and registers nothing (ERR-07).

        Args:
            origin: The server's label.
            uri: The SKILL.md URI named by the reference.

        Returns:
            ``[SendRequest(skills/get)]``; the answer leads to ``SkillConfirmed`` or ``NotASkill``.
        """
        conn = self._origin(origin)
        if isinstance(conn, Refused):
            return [conn]
        refused = self._check_get(conn, uri)
        if refused is not None:
            return [refused]
        return [self._send_get(conn, uri, Purpose.GET_CONFIRM)]

    def refresh(self, origin: str, uri: str) -> list[Effect]:
        """Fetch the current entry of one skill with exactly one ``skills/get`` (GET-07, DIR-15).

        A different set revokes the approval and, for an acting skill, suspends it until
        re-approved (APR-02, HELD-09).

        Args:
            origin: The server's label.
            uri: The skill's SKILL.md URI.
        """
        conn = self._origin(origin)
        if isinstance(conn, Refused):
            return [conn]
        refused = self._check_get(conn, uri)
        if refused is not None:
            return [refused]
        session = self._sessions.get((origin, uri))
        if session is not None and session.refresh_token is not None:
            return [
                Refused(
                    code=RefusalCode.REFRESH_IN_FLIGHT,
                    message=f"a refresh of {uri} is already in flight",
                    origin=origin,
                    uri=uri,
                )
            ]
        send = self._send_get(conn, uri, Purpose.GET_REFRESH)
        if session is not None:
            session.refresh_token = send.token
        return [send]

    def _check_get(self, conn: Origin, uri: str) -> Refused | None:
        if not is_skill_md_uri(uri):
            return Refused(
                code=RefusalCode.NOT_SKILL_MD_URI,
                message=f"{quote_for_message(uri)} is not a SKILL.md URI; skills/get takes the URI "
                "of a skill's SKILL.md (GET-02)",
                origin=conn.label,
                uri=uri if isinstance(uri, str) else None,
            )
        if not conn.connected:
            return self._not_connected(conn, uri)
        return None

    def _send_get(
        self,
        conn: Origin,
        uri: str,
        purpose: Purpose,
        *,
        key: Key | None = None,
        generation: int = 0,
        entry: SkillEntry | None = None,
        failure_uri: str | None = None,
        ref: str | None = None,
    ) -> SendRequest:
        return self._send(
            conn,
            Method.SKILLS_GET,
            {"uri": uri},
            Pending(
                origin=conn.label,
                method="skills/get",
                purpose=purpose,
                uri=uri,
                key=key,
                generation=generation,
                entry=entry,
                failure_uri=failure_uri,
                ref=ref,
            ),
        )

    def _observe(self, origin: str, entry: SkillEntry) -> tuple[list[Effect], PutResult]:
        """Record an entry from ``skills/list`` or ``skills/get`` and apply what follows from it."""
        effects: list[Effect] = []
        result, collision = self._registry.put(origin, entry)
        if collision:
            effects.append(NameCollision(name=entry.name, candidates=collision))
        record = self._approvals.record(origin, entry.uri)
        if record is not None and not record.revoked:
            new_set = set_of(entry)
            revoked = self._approvals.observe(origin, entry.uri, new_set)
            if revoked is not None:
                effects.append(
                    ApprovalRevoked(
                        origin=origin,
                        uri=entry.uri,
                        changes=manifest_changes(revoked.resources, new_set, root=entry.root),
                    )
                )
        session = self._sessions.get((origin, entry.uri))
        if session is not None:
            effects.extend(self._entry_for_session(session, entry))
        return effects, result

    def _unusable(self, origin: str, uri: str, error: InvalidEntryError | None) -> list[Effect]:
        """The skill's latest entry cannot be loaded (invalid, over limits, or gone)."""
        effects: list[Effect] = []
        revoked = self._approvals.revoke(origin, uri)
        if revoked is not None:
            effects.append(
                ApprovalRevoked(
                    origin=origin,
                    uri=uri,
                    changes=manifest_changes(revoked.resources, frozenset(), root=None),
                )
            )
        session = self._sessions.get((origin, uri))
        if session is None or session.state is LoadState.AWAITING_ENTRY:
            return effects
        effects.extend(self._withdraw(session, "the skill's entry can no longer be loaded"))
        if session.state in _WINDOW_STATES:
            self._move(session, LoadInput.CLOSE)
            effects.append(WindowClosed(origin=origin, uri=uri, reason=CloseReason.ENTRY_UNUSABLE))
            return effects
        self._move(session, LoadInput.DECLINE)
        effects.append(self._declined_invalid(origin, uri, error))
        return effects

    @staticmethod
    def _declined_invalid(origin: str, uri: str, error: InvalidEntryError | None) -> LoadDeclined:
        if error is None:
            return LoadDeclined(
                origin=origin,
                uri=uri,
                reason=DeclineReason.NOT_A_SKILL,
                message=f"{origin!r} no longer serves {uri} as a skill",
            )
        return LoadDeclined(
            origin=origin,
            uri=uri,
            reason=DeclineReason.INVALID_ENTRY if error.malformed else DeclineReason.OVER_LIMIT,
            message=error.message,
            error=error,
        )

    # -- loading --------------------------------------------------------------------------------

    def load(self, origin: str, uri: str) -> list[Effect]:
        """Load a skill: entry (``skills/get`` if unknown), limits, policy, approval, SKILL.md.

        Args:
            origin: The server's label.
            uri: The skill's SKILL.md URI. For a skill in the STALE state, loads it again.

        Returns:
            Effects ending, possibly after later calls, in ``SkillLoaded`` (window open) or
            ``LoadDeclined``/``LoadFailed``.
        """
        conn = self._origin(origin)
        if isinstance(conn, Refused):
            return [conn]
        key = (origin, uri)
        if self._policy.denies(origin, uri):
            return [
                LoadDeclined(
                    origin=origin,
                    uri=uri,
                    reason=DeclineReason.POLICY,
                    message=f"host policy does not allow loading {uri} from {origin!r} (SEC-04)",
                )
            ]
        session = self._sessions.get(key)
        if session is not None and session.state is LoadState.STALE:
            assert session.pending_entry is not None
            return self._begin_load(session, session.pending_entry, preapproved=True)
        if session is not None:
            return [self._busy(session)]
        session = Session(key=key)
        entry = self._registry.get(origin, uri)
        if entry is not None:
            return self._begin_load(session, entry)
        rejected = self._registry.rejection(origin, uri)
        if rejected is not None:
            return [self._declined_invalid(origin, uri, rejected.error)]
        refused = self._check_get(conn, uri)
        if refused is not None:
            return [refused]
        self._move(session, LoadInput.FETCH_ENTRY)
        return [self._send_get(conn, uri, Purpose.GET_LOAD, key=key, generation=session.generation)]

    @staticmethod
    def _busy(session: Session) -> Refused:
        origin, uri = session.key
        if session.state is LoadState.ACTING:
            return Refused(
                code=RefusalCode.ALREADY_ACTING,
                message=f"{uri} from {origin!r} is already loaded",
                origin=origin,
                uri=uri,
            )
        if session.state is LoadState.REAPPROVAL:
            return Refused(
                code=RefusalCode.REAPPROVAL_REQUIRED,
                message=f"{uri} from {origin!r} changed and awaits re-approval",
                origin=origin,
                uri=uri,
            )
        return Refused(
            code=RefusalCode.LOAD_IN_PROGRESS,
            message=f"a load of {uri} from {origin!r} is in progress",
            origin=origin,
            uri=uri,
        )

    def _decline(self, session: Session, reason: DeclineReason, message: str) -> list[Effect]:
        self._move(session, LoadInput.DECLINE)
        origin, uri = session.key
        return [LoadDeclined(origin=origin, uri=uri, reason=reason, message=message)]

    def _begin_load(
        self, session: Session, entry: SkillEntry, *, preapproved: bool = False
    ) -> list[Effect]:
        """Checks from the entry alone, then approval or the SKILL.md read."""
        origin, uri = session.key
        conn = self._origins[origin]
        if entry.is_dynamic and not self._policy.allow_dynamic:
            return self._decline(
                session,
                DeclineReason.DYNAMIC,
                f"{uri} from {origin!r} is dynamic: its content cannot be verified or bound to "
                "an approval, and host policy declines such skills (ENTRY-16)",
            )
        skill_md = entry.resource(entry.uri)
        cap = self._policy.max_file_bytes
        if skill_md is not None and cap is not None and skill_md.size > cap:
            return self._decline(
                session,
                DeclineReason.FILE_TOO_LARGE,
                f"{uri}: SKILL.md is {skill_md.size} bytes; this host accepts at most {cap} per "
                "file (WG-03)",
            )
        if (
            skill_md is not None
            and conn.bytes_fetched + skill_md.size > self._policy.per_server_budget_bytes
        ):
            return self._decline(
                session,
                DeclineReason.SERVER_BUDGET,
                f"{origin!r} has used its budget of {self._policy.per_server_budget_bytes} "
                "fetched bytes (WG-04)",
            )
        if preapproved or self._approved(session.key, entry):
            return self._read_skill_md(session, entry)
        if not self._policy.require_approval:
            self._approve_by_policy(session)
            return self._read_skill_md(session, entry)
        self._move(session, LoadInput.ASK_APPROVAL)
        return [self._prompt(session, entry)]

    def _prompt(self, session: Session, entry: SkillEntry) -> RequestApproval:
        origin, uri = session.key
        record = self._approvals.record(origin, uri)
        previous = record.resources if record is not None else None
        if entry.is_dynamic:
            reason = ApprovalReason.DYNAMIC
            changes = None
        elif record is not None:
            reason = ApprovalReason.CHANGED
            changes = manifest_changes(previous, entry.resource_set, root=entry.root)
        elif session.held is not None:
            reason = ApprovalReason.CHANGED
            changes = manifest_changes(set_of(session.held), entry.resource_set, root=entry.root)
        else:
            reason = ApprovalReason.NEW
            changes = None
        prompt_id = self._next_prompt
        self._next_prompt += 1
        fields = widening_fields(entry.frontmatter, self._policy.widening_fields)
        self._prompts[prompt_id] = Prompt(
            key=session.key, generation=session.generation, entry=entry, widening=fields
        )
        session.prompt_id = prompt_id
        session.entry = entry
        frontmatter = thaw_json(entry.frontmatter)
        assert isinstance(frontmatter, dict)
        return RequestApproval(
            prompt_id=prompt_id,
            origin=origin,
            uri=uri,
            name=entry.name,
            description=entry.description,
            manifest="dynamic" if isinstance(entry.resources, str) else tuple(entry.resources),
            total_size=entry.total_size,
            reason=reason,
            changes=changes,
            frontmatter=frontmatter,
            widening_fields=fields,
            dynamic=entry.is_dynamic,
        )

    def _read_skill_md(self, session: Session, entry: SkillEntry) -> list[Effect]:
        """Move to READING_SKILL_MD and read SKILL.md (from the verified cache when possible)."""
        origin, uri = session.key
        conn = self._origins[origin]
        self._move(session, LoadInput.READ_SKILL_MD)
        session.entry = entry
        effects: list[Effect] = []
        resource = entry.resource(entry.uri)
        if resource is not None:
            hit = self._cache.get(origin, resource)
            if hit.error is not None:
                effects.append(self._cache_failure(origin, uri, hit.error))
            if hit.data is not None:
                effects.extend(self._skill_md_verified(session, entry, hit.data, from_cache=True))
                return effects
        if not conn.connected:
            self._move(session, LoadInput.FAIL)
            effects.append(
                LoadFailed(origin=origin, uri=uri, message=f"{origin!r} is disconnected")
            )
            return effects
        effects.append(
            self._send(
                conn,
                Method.RESOURCES_READ,
                {"uri": entry.uri},
                Pending(
                    origin=origin,
                    method="resources/read",
                    purpose=Purpose.READ_SKILL_MD,
                    uri=entry.uri,
                    key=session.key,
                    generation=session.generation,
                    resource=resource,
                    entry=entry,
                ),
            )
        )
        return effects

    @staticmethod
    def _cache_failure(origin: str, skill_uri: str, error: VerificationError) -> VerificationFailed:
        return VerificationFailed(
            origin=origin,
            uri=error.uri or skill_uri,
            skill_uri=skill_uri,
            error=error,
            source=FailureSource.CACHE,
            refreshing=False,
        )

    def _check_frontmatter(self, entry: SkillEntry, data: bytes) -> None:
        """Parse SKILL.md's frontmatter and compare it with the entry's (VER-10, VER-11)."""
        try:
            parsed = parse_frontmatter(data, max_bytes=self._policy.max_frontmatter_bytes)
        except FrontmatterError as exc:
            raise VerificationError(
                f"{entry.uri}: frontmatter mismatch: the SKILL.md frontmatter cannot be read "
                f"({exc.message})",
                kind=VerificationKind.FRONTMATTER,
                uri=entry.uri,
            ) from None
        differences = compare_frontmatter(parsed.data, entry.frontmatter)
        if differences:
            shown = "; ".join(str(d) for d in differences[:5])
            more = f" (and {len(differences) - 5} more)" if len(differences) > 5 else ""
            raise VerificationError(
                f"{entry.uri}: frontmatter mismatch with the entry: {shown}{more}",
                kind=VerificationKind.FRONTMATTER,
                uri=entry.uri,
                expected=thaw_json(entry.frontmatter),
                actual=parsed.data,
            )

    def _skill_md_verified(
        self, session: Session, entry: SkillEntry, data: bytes, *, from_cache: bool
    ) -> list[Effect]:
        """SKILL.md passed size and digest (or is dynamic): check frontmatter, deliver, open."""
        origin, uri = session.key
        try:
            self._check_frontmatter(entry, data)
        except VerificationError as exc:
            source = FailureSource.CACHE if from_cache else FailureSource.SERVER
            return self._skill_md_failed(session, entry, exc, source)
        resource = entry.resource(entry.uri)
        if resource is not None and not from_cache:
            self._cache.put(origin, resource, data)
        self._move(session, LoadInput.OPEN_WINDOW)
        session.held = entry
        session.entry = None
        session.pending_entry = None
        session.settled.clear()
        session.bytes_used = len(data) if entry.is_dynamic else 0
        return [
            DeliverToModel(
                origin=origin,
                uri=entry.uri,
                kind=DeliveryKind.SKILL,
                content=data,
                verified=not entry.is_dynamic,
                skill_uri=entry.uri,
                skill_root=entry.root,
                from_cache=from_cache,
            ),
            SkillLoaded(origin=origin, uri=uri, entry=entry),
        ]

    def _skill_md_failed(
        self, session: Session, entry: SkillEntry, error: VerificationError, source: FailureSource
    ) -> list[Effect]:
        """SKILL.md failed verification: nothing is used; refresh once (VER-08, VER-09)."""
        origin, uri = session.key
        conn = self._origins[origin]
        can_refresh = conn.connected and conn.features.skills
        effects: list[Effect] = [
            VerificationFailed(
                origin=origin,
                uri=entry.uri,
                skill_uri=uri,
                error=error,
                source=source,
                refreshing=can_refresh,
            )
        ]
        if not can_refresh:
            self._move(session, LoadInput.FAIL)
            effects.append(LoadFailed(origin=origin, uri=uri, message=error.message, error=error))
            return effects
        self._move(session, LoadInput.FETCH_ENTRY)
        effects.append(
            self._send_get(
                conn,
                uri,
                Purpose.GET_LOAD,
                key=session.key,
                generation=session.generation,
                entry=entry,
                failure_uri=entry.uri,
            )
        )
        return effects

    def approve(
        self, prompt_id: int, *, grant_fields: Iterable[str] = (), allow_exec: bool = False
    ) -> list[Effect]:
        """Answer a prompt with yes.

        For a skill, the approval is bound to the manifest the prompt showed (APR-01); it is
        recorded in the approval store unless the skill is dynamic (per load, never persisted;
        APR-04). ``grant_fields`` names the widening frontmatter fields the user grants (only
        those the prompt listed count; APR-09); ``allow_exec`` approves code execution while acting
        (APR-13). For a cross-origin prompt, the one read is performed (ORG-09).
        """
        prompt = self._prompts.pop(prompt_id, None)
        if prompt is None:
            return [self._unknown_prompt(prompt_id)]
        if prompt.cross_to is not None:
            return self._cross_origin_read(prompt)
        session = self._sessions.get(prompt.key)
        assert session is not None
        assert session.prompt_id == prompt_id
        assert prompt.entry is not None
        session.prompt_id = None
        entry = prompt.entry
        origin, uri = prompt.key
        grants = frozenset(grant_fields) & frozenset(prompt.widening)
        if entry.is_dynamic:
            session.per_load = True
            session.per_load_fields = grants
            session.per_load_exec = allow_exec
        else:
            session.per_load = False
            self._approvals.grant(
                origin, uri, entry.resource_set, granted_fields=grants, allow_exec=allow_exec
            )
        effects: list[Effect] = [
            ApprovalGranted(
                origin=origin,
                uri=uri,
                persisted=not entry.is_dynamic,
                granted_fields=tuple(sorted(grants)),
                allow_exec=allow_exec,
            )
        ]
        if session.state is LoadState.AWAITING_APPROVAL:
            effects.extend(self._read_skill_md(session, entry))
        else:
            effects.extend(self._reapproved(session, entry))
        return effects

    def deny(self, prompt_id: int) -> list[Effect]:
        """Answer a prompt with no: the load is declined, or the changed skill's window closes."""
        prompt = self._prompts.pop(prompt_id, None)
        if prompt is None:
            return [self._unknown_prompt(prompt_id)]
        if prompt.cross_to is not None:
            return [
                Notice(
                    level=NoticeLevel.INFO,
                    code="cross-origin-denied",
                    message=f"the read of {prompt.cross_uri} from {prompt.cross_to!r} was refused",
                    origin=prompt.cross_to,
                    uri=prompt.cross_uri,
                )
            ]
        session = self._sessions.get(prompt.key)
        assert session is not None
        assert session.prompt_id == prompt_id
        session.prompt_id = None
        origin, uri = prompt.key
        if session.state is LoadState.AWAITING_APPROVAL:
            self._move(session, LoadInput.DECLINE)
            return [
                LoadDeclined(
                    origin=origin,
                    uri=uri,
                    reason=DeclineReason.DENIED,
                    message=f"loading {uri} from {origin!r} was not approved",
                )
            ]
        self._move(session, LoadInput.CLOSE)
        return [WindowClosed(origin=origin, uri=uri, reason=CloseReason.DENIED)]

    @staticmethod
    def _unknown_prompt(prompt_id: int) -> Refused:
        return Refused(
            code=RefusalCode.UNKNOWN_PROMPT,
            message=f"no prompt {prompt_id} is open (already answered or withdrawn)",
        )

    def _reapproved(self, session: Session, entry: SkillEntry) -> list[Effect]:
        """REAPPROVAL answered yes: continue under the new entry, or mark the window stale."""
        origin, uri = session.key
        held = session.held
        assert held is not None
        skill_md_changed, _ = changes_between(held, entry)
        if not skill_md_changed:
            self._move(session, LoadInput.RESUME)
            session.held = entry
            session.pending_entry = None
            session.settled.clear()
            return [HeldEntryReplaced(origin=origin, uri=uri, entry=entry)]
        self._move(session, LoadInput.MARK_STALE)
        session.pending_entry = entry
        return [
            ReloadRequired(
                origin=origin,
                uri=uri,
                message=f"the SKILL.md of {uri} from {origin!r} changed; the copy in context is "
                "stale and reads are refused until the skill is loaded again (HELD-07)",
            )
        ]

    def _entry_for_session(self, session: Session, entry: SkillEntry) -> list[Effect]:
        """A new entry arrived for a skill being loaded or acted on."""
        state = session.state
        origin, uri = session.key
        if state is LoadState.AWAITING_APPROVAL or state is LoadState.READING_SKILL_MD:
            assert session.entry is not None
            if not differs(session.entry, entry):
                return []
            skill_md_changed, changes = changes_between(session.entry, entry)
            effects = self._withdraw(session, "the skill changed")
            effects.append(
                SkillChanged(
                    origin=origin,
                    uri=uri,
                    requires_reapproval=self._needs_prompt(session.key, entry),
                    changes=changes,
                    skill_md_changed=skill_md_changed,
                )
            )
            effects.extend(self._begin_load(session, entry))
            return effects
        if state not in _WINDOW_STATES:
            return []
        assert session.held is not None
        reference = session.held if state is LoadState.ACTING else session.pending_entry
        assert reference is not None
        if not differs(reference, entry):
            return []
        effects = self._withdraw(session, "the skill changed again")
        skill_md_changed, changes = changes_between(session.held, entry)
        if entry.is_dynamic and not self._policy.allow_dynamic:
            self._move(session, LoadInput.CLOSE)
            return [
                *effects,
                SkillChanged(
                    origin=origin,
                    uri=uri,
                    requires_reapproval=True,
                    changes=changes,
                    skill_md_changed=True,
                ),
                WindowClosed(origin=origin, uri=uri, reason=CloseReason.ENTRY_UNUSABLE),
            ]
        self._move(session, LoadInput.SUSPEND)
        session.pending_entry = entry
        needs_prompt = self._needs_prompt(session.key, entry)
        effects.append(
            SkillChanged(
                origin=origin,
                uri=uri,
                requires_reapproval=needs_prompt,
                changes=changes,
                skill_md_changed=skill_md_changed,
            )
        )
        if not needs_prompt:
            if self._approved(session.key, entry):
                session.per_load = False
            else:
                self._approve_by_policy(session)
            effects.extend(self._reapproved(session, entry))
        else:
            effects.append(self._prompt(session, entry))
        return effects

    def close(self, origin: str, uri: str) -> list[Effect]:
        """Close the acting window: the SKILL.md left the model's context (HELD-01, SIL-32).

        The host decides when that is; it may keep windows open until the session ends.

        Args:
            origin: The server's label.
            uri: The skill's SKILL.md URI.
        """
        session = self._sessions.get((origin, uri))
        if session is None or session.state not in _WINDOW_STATES:
            return [self._not_acting(origin, uri)]
        effects = self._withdraw(session, "the window was closed")
        self._move(session, LoadInput.CLOSE)
        effects.append(WindowClosed(origin=origin, uri=uri, reason=CloseReason.CLOSED))
        return effects

    @staticmethod
    def _not_acting(origin: str, uri: str) -> Refused:
        return Refused(
            code=RefusalCode.NOT_ACTING,
            message=f"the host is not acting on {uri} from {origin!r}",
            origin=origin,
            uri=uri,
        )

    # -- the acting window ----------------------------------------------------------------------

    def _acting(self, origin: str, skill_uri: str) -> Session | Refused:
        session = self._sessions.get((origin, skill_uri))
        if session is None or session.state not in _WINDOW_STATES:
            return self._not_acting(origin, skill_uri)
        if session.state is LoadState.REAPPROVAL:
            return Refused(
                code=RefusalCode.REAPPROVAL_REQUIRED,
                message=f"{skill_uri} from {origin!r} changed; reads and execution wait for "
                "re-approval (HELD-09)",
                origin=origin,
                uri=skill_uri,
            )
        if session.state is LoadState.STALE:
            return Refused(
                code=RefusalCode.RELOAD_REQUIRED,
                message=f"{skill_uri} from {origin!r} changed its SKILL.md; load it again first "
                "(HELD-07)",
                origin=origin,
                uri=skill_uri,
            )
        return session

    def read(
        self, origin: str, skill_uri: str, ref: str, *, found_in: str | None = None
    ) -> list[Effect]:
        """Read a file of the skill being acted on.

        ``ref`` resolves against the skill root (also for references found in supporting files;
        SIL-21), or against a nested skill's root when ``found_in`` is that nested SKILL.md
        (URI-18). Only URIs listed in the held entry are read (HELD-03); anything else is a
        verification failure with no request for it (HELD-04, URI-25).

        Args:
            origin: Server label of the acting skill (reads are routed there; HELD-06, ORG-08).
            skill_uri: The acting skill.
            ref: The reference as written (relative, or an absolute URI inside the skill).
            found_in: The URI of the file where the reference was found, if known.
        """
        session = self._acting(origin, skill_uri)
        if isinstance(session, Refused):
            return [session]
        held = session.held
        assert held is not None
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
            return [self._reference_error(origin, skill_uri, ref, exc)]
        return self._read_file(session, uri)

    @staticmethod
    def _reference_error(origin: str, skill_uri: str, ref: str, exc: URIError) -> Effect:
        if exc.kind is URIErrorKind.NOT_IN_SKILL:
            return Refused(
                code=RefusalCode.NOT_IN_SKILL,
                message=f"{exc.message} (read it with its own load, or as an ordinary resource)",
                origin=origin,
                uri=exc.value,
            )
        return ReferenceRejected(origin=origin, skill_uri=skill_uri, ref=ref, error=exc)

    def _read_file(self, session: Session, uri: str) -> list[Effect]:
        """Read ``uri`` under the held entry of an ACTING session."""
        origin, skill_uri = session.key
        conn = self._origins[origin]
        held = session.held
        assert held is not None
        if held.is_dynamic:
            if session.bytes_used >= self._policy.dynamic_total_bytes:
                return [self._size_limit(origin, uri)]
            if not conn.connected:
                return [self._not_connected(conn, uri)]
            return [self._send_file_read(conn, session, uri, None)]
        resource = held.resource(uri)
        if resource is None:
            error = VerificationError(
                f"{uri} is not listed in the held entry of {skill_uri}; while acting on a skill "
                "only its listed files are read (the skill may have changed)",
                kind=VerificationKind.UNLISTED,
                uri=uri,
            )
            return self._verification_failed(session, uri, error, FailureSource.MANIFEST)
        cap = self._policy.max_file_bytes
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
        hit = self._cache.get(origin, resource)
        if hit.error is not None:
            effects.append(self._cache_failure(origin, skill_uri, hit.error))
        if hit.data is not None:
            effects.append(self._deliver_file(session, resource, hit.data, from_cache=True))
            return effects
        if not conn.connected:
            effects.append(self._not_connected(conn, uri))
            return effects
        if conn.bytes_fetched + resource.size > self._policy.per_server_budget_bytes:
            effects.append(self._over_budget(conn, uri))
            return effects
        effects.append(self._send_file_read(conn, session, uri, resource))
        return effects

    def _over_budget(self, conn: Origin, uri: str) -> Refused:
        return Refused(
            code=RefusalCode.SERVER_BUDGET,
            message=f"{conn.label!r} has used its budget of "
            f"{self._policy.per_server_budget_bytes} fetched bytes (WG-04)",
            origin=conn.label,
            uri=uri,
        )

    def _send_file_read(
        self, conn: Origin, session: Session, uri: str, resource: SkillResource | None
    ) -> SendRequest:
        return self._send(
            conn,
            Method.RESOURCES_READ,
            {"uri": uri},
            Pending(
                origin=conn.label,
                method="resources/read",
                purpose=Purpose.READ_FILE,
                uri=uri,
                key=session.key,
                generation=session.generation,
                resource=resource,
                entry=session.held,
            ),
        )

    def _size_limit(self, origin: str, uri: str) -> Refused:
        return Refused(
            code=RefusalCode.SKILL_SIZE_LIMIT,
            message=f"this dynamic skill already delivered {self._policy.dynamic_total_bytes} "
            "bytes, the most one skill may (ENTRY-22, HELD-08)",
            origin=origin,
            uri=uri,
        )

    def _deliver_file(
        self, session: Session, resource: SkillResource, data: bytes, *, from_cache: bool
    ) -> DeliverToModel:
        """Deliver a supporting file verified against ``resource`` of the held entry."""
        origin, skill_uri = session.key
        held = session.held
        assert held is not None
        assert held.resource(resource.uri) is resource
        return _skill_file_delivery(
            origin, resource.uri, data, skill_uri, held.root, from_cache=from_cache
        )

    def _verification_failed(
        self, session: Session, uri: str, error: VerificationError, source: FailureSource
    ) -> list[Effect]:
        """A file of the acting skill failed: not used; at most one refresh (VER-09, VER-16)."""
        origin, skill_uri = session.key
        refresh = self._start_refresh(session, uri)
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
        elif uri in session.settled:
            effects.append(
                Notice(
                    level=NoticeLevel.WARNING,
                    code="failure-stands",
                    message=f"{uri}: the entry was refreshed and is unchanged, so the failure "
                    "stands; no further refresh is made for it",
                    origin=origin,
                    uri=uri,
                )
            )
        return effects

    def _start_refresh(self, session: Session, failure_uri: str) -> SendRequest | None:
        origin, skill_uri = session.key
        conn = self._origins[origin]
        if (
            session.refresh_token is not None
            or failure_uri in session.settled
            or not conn.connected
            or not conn.features.skills
        ):
            return None
        send = self._send_get(conn, skill_uri, Purpose.GET_REFRESH, failure_uri=failure_uri)
        session.refresh_token = send.token
        return send

    def list_dir(self, origin: str, skill_uri: str, ref: str = "") -> list[Effect]:
        """List a directory of the skill being acted on.

        Without ``directoryRead`` the answer comes from the held entry and nothing is sent
        (DIR-12, CAP-06). With it, ``resources/directory/read`` is sent to the skill's origin
        (HELD-06) and the result is filtered by the held manifest: children it lacks are never
        shown as files of the skill, and a disagreement is reported as a probable change (DIR-13,
        DIR-14, DIR-16, DIR-17). The held entry never changes (DIR-18). No recursion (DIR-07).

        Args:
            origin: The acting skill's server label.
            skill_uri: The acting skill.
            ref: The directory, relative to the skill root (``""`` or ``"."`` for the root).
        """
        session = self._acting(origin, skill_uri)
        if isinstance(session, Refused):
            return [session]
        held = session.held
        assert held is not None
        try:
            directory = resolve_directory_reference(held.skill, ref)
        except URIError as exc:
            return [self._reference_error(origin, skill_uri, ref, exc)]
        if held.resource(directory) is not None:
            return [
                Refused(
                    code=RefusalCode.NOT_A_DIRECTORY,
                    message=f"{directory} is a file of the skill, not a directory",
                    origin=origin,
                    uri=directory,
                )
            ]
        conn = self._origins[origin]
        if not (conn.features.directory_read and conn.connected):
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
        pending = Pending(
            origin=origin,
            method="resources/directory/read",
            purpose=Purpose.DIR_READ,
            uri=directory,
            key=session.key,
            generation=session.generation,
            entry=held,
            walk=ListingWalk(
                max_pages=self._policy.max_directory_pages,
                max_entries=self._policy.max_directory_entries,
            ),
        )
        return [self._send(conn, Method.RESOURCES_DIRECTORY_READ, {"uri": directory}, pending)]

    def read_resource(
        self, origin: str, uri: str, *, acting_on: tuple[str, str] | None = None
    ) -> list[Effect]:
        """An ordinary ``resources/read``, e.g. from a generic read tool (VER-02, VER-03).

        It is never a load: no approval, no window, and the content is delivered as
        ``kind="resource"``, unverified. But a URI inside a skill the host is acting on goes
        through the window (only listed files; HELD-03), and when ``acting_on`` names the skill
        driving the read and ``origin`` is another server, the read needs a per-call approval
        naming both (ORG-08, ORG-09).

        Args:
            origin: The label of the server to read from.
            uri: The resource URI.
            acting_on: ``(label, skill_uri)`` of the skill driving the read, when one is.
        """
        conn = self._origin(origin, skills=False)
        if isinstance(conn, Refused):
            return [conn]
        if acting_on is not None:
            driver = self._acting(*acting_on)
            if isinstance(driver, Refused):
                return [driver]
            if acting_on[0] != origin:
                return [self._cross_origin_prompt(acting_on, origin, uri)]
        return self._plain_read(conn, uri)

    def _plain_read(self, conn: Origin, uri: str) -> list[Effect]:
        window = self._window_containing(conn.label, uri)
        if window is not None:
            session = self._acting(*window.key)
            if isinstance(session, Refused):
                return [session]
            return self._read_file(session, uri)
        if not conn.connected:
            return [self._not_connected(conn, uri)]
        return [
            self._send(
                conn,
                Method.RESOURCES_READ,
                {"uri": uri},
                Pending(
                    origin=conn.label,
                    method="resources/read",
                    purpose=Purpose.READ_RESOURCE,
                    uri=uri,
                ),
            )
        ]

    def _window_containing(self, origin: str, uri: str) -> Session | None:
        """The innermost open window on ``origin`` whose skill contains ``uri`` (HELD-03)."""
        best: Session | None = None
        best_depth = -1
        for (label, _), session in self._sessions.items():
            held = session.held
            if (
                label != origin
                or session.state not in _WINDOW_STATES
                or held is None
                or not (uri == held.uri or held.skill.contains(uri))
            ):
                continue
            if len(held.root) > best_depth:
                best, best_depth = session, len(held.root)
        return best

    def _cross_origin_prompt(self, acting_on: tuple[str, str], to_origin: str, uri: str) -> Effect:
        from_origin, skill_uri = acting_on
        if self._policy.cross_origin is CrossOriginPolicy.DENY:
            return Refused(
                code=RefusalCode.CROSS_ORIGIN_DENIED,
                message=f"skill {skill_uri} from {from_origin!r} may not read from "
                f"{to_origin!r} (host policy; ORG-08)",
                origin=to_origin,
                uri=uri,
            )
        prompt_id = self._next_prompt
        self._next_prompt += 1
        self._prompts[prompt_id] = Prompt(key=acting_on, cross_to=to_origin, cross_uri=uri)
        return RequestCrossOriginApproval(
            prompt_id=prompt_id,
            from_origin=from_origin,
            skill_uri=skill_uri,
            to_origin=to_origin,
            uri=uri,
        )

    def _cross_origin_read(self, prompt: Prompt) -> list[Effect]:
        """The user allowed one cross-origin read; perform exactly that one (SIL-25)."""
        assert prompt.cross_to is not None
        assert prompt.cross_uri is not None
        # Forgetting an origin withdraws every prompt that names it, so the target is known.
        return self._plain_read(self._origins[prompt.cross_to], prompt.cross_uri)

    def preview(self, origin: str, skill_uri: str, ref: str | None = None) -> list[Effect]:
        """Let the user inspect a skill file before loading it (SEC-05, SIL-33, WG-10).

        A user-initiated, verified fetch (``skills/get`` first when the entry is unknown); the
        result is :class:`PreviewReady`, never delivered to the model, and opens no window.

        Args:
            origin: The server's label.
            skill_uri: The skill's SKILL.md URI.
            ref: A file of the skill, relative to its root; SKILL.md when None.
        """
        conn = self._origin(origin)
        if isinstance(conn, Refused):
            return [conn]
        entry = self._registry.get(origin, skill_uri)
        if entry is not None:
            return self._preview_read(conn, entry, ref)
        refused = self._check_get(conn, skill_uri)
        if refused is not None:
            return [refused]
        return [self._send_get(conn, skill_uri, Purpose.GET_PREVIEW, ref=ref)]

    def _preview_read(self, conn: Origin, entry: SkillEntry, ref: str | None) -> list[Effect]:
        origin = conn.label
        if ref is None:
            uri = entry.uri
        else:
            try:
                uri = resolve_reference(entry.skill, ref)
            except URIError as exc:
                return [self._reference_error(origin, entry.uri, ref, exc)]
        resource = entry.resource(uri)
        if resource is None and not entry.is_dynamic:
            error = VerificationError(
                f"{uri} is not listed in the entry of {entry.uri}",
                kind=VerificationKind.UNLISTED,
                uri=uri,
            )
            return [
                VerificationFailed(
                    origin=origin,
                    uri=uri,
                    skill_uri=entry.uri,
                    error=error,
                    source=FailureSource.MANIFEST,
                    refreshing=False,
                )
            ]
        effects: list[Effect] = []
        if resource is not None:
            hit = self._cache.get(origin, resource)
            if hit.error is not None:
                effects.append(self._cache_failure(origin, entry.uri, hit.error))
            if hit.data is not None:
                return [self._preview_ready(origin, entry, uri, hit.data)]
            if conn.bytes_fetched + resource.size > self._policy.per_server_budget_bytes:
                return [*effects, self._over_budget(conn, uri)]
        if not conn.connected:
            return [*effects, self._not_connected(conn, uri)]
        return [
            *effects,
            self._send(
                conn,
                Method.RESOURCES_READ,
                {"uri": uri},
                Pending(
                    origin=origin,
                    method="resources/read",
                    purpose=Purpose.READ_PREVIEW,
                    uri=uri,
                    resource=resource,
                    entry=entry,
                ),
            ),
        ]

    @staticmethod
    def _preview_ready(origin: str, entry: SkillEntry, uri: str, data: bytes) -> PreviewReady:
        return PreviewReady(
            origin=origin,
            skill_uri=entry.uri,
            uri=uri,
            content=data,
            verified=not entry.is_dynamic,
            warnings=content_warnings(data),
        )

    # -- gates ----------------------------------------------------------------------------------

    def exec_gate(self, origin: str | None = None, skill_uri: str | None = None) -> ExecGateResult:
        """May host-side code execution happen now (APR-11, APR-13, WG-08)?

        Considers every open window (or only those of ``origin`` / ``skill_uri`` when given).
        The host calls it before any code-execution tool call, and before any write to agent
        configuration (WG-11), while the model may be acting on MCP-served skills.

        Args:
            origin: Only windows of this server, when given.
            skill_uri: Only this skill's window, when given.
        """
        states: list[WindowExecState] = []
        for (label, uri), session in self._sessions.items():
            if session.state not in _WINDOW_STATES:
                continue
            if (origin is not None and label != origin) or (
                skill_uri is not None and uri != skill_uri
            ):
                continue
            held = session.held
            assert held is not None
            states.append(
                WindowExecState(
                    origin=label,
                    uri=uri,
                    suspended=session.state is not LoadState.ACTING,
                    dynamic=held.is_dynamic,
                    exec_approved=self._exec_approved(session),
                )
            )
        return exec_decision(states)

    def _exec_approved(self, session: Session) -> bool:
        held = session.held
        assert held is not None
        if session.per_load:
            return session.per_load_exec
        record = self._approvals.approved(session.key[0], session.key[1], held.resource_set)
        return record is not None and record.allow_exec

    def permissions(self, origin: str, skill_uri: str) -> SkillPermissions:
        """Which permission-widening fields of an acting skill take effect (APR-08..APR-10).

        Only fields the user granted for this skill's current approval; nothing outside an open,
        non-suspended window.

        Args:
            origin: The server's label.
            skill_uri: The skill.
        """
        session = self._sessions.get((origin, skill_uri))
        if session is None or session.state is not LoadState.ACTING:
            return SkillPermissions(origin=origin, uri=skill_uri)
        held = session.held
        assert held is not None
        present = widening_fields(held.frontmatter, self._policy.widening_fields)
        if session.per_load:
            granted = session.per_load_fields
        else:
            record = self._approvals.approved(origin, skill_uri, held.resource_set)
            granted = record.granted_fields if record is not None else frozenset()
        honoured: dict[str, JSONValue] = {
            name: thaw_json(held.frontmatter[name]) for name in present if name in granted
        }
        return SkillPermissions(
            origin=origin,
            uri=skill_uri,
            honoured=MappingProxyType(honoured),
            ignored=tuple(name for name in present if name not in granted),
            allow_exec=self._exec_approved(session),
        )

    # -- responses ------------------------------------------------------------------------------

    def on_response(
        self,
        origin: str,
        token: int,
        *,
        result: object = ABSENT,
        error: object = ABSENT,
    ) -> list[Effect]:
        """Hand the host a response to one of its requests.

        Args:
            origin: The label of the server that answered.
            token: The ``SendRequest.token`` of the request.
            result: The JSON-RPC ``result`` (decoded JSON), when the server answered with one.
            error: The JSON-RPC ``error`` object, when the server answered with an error.
        """
        pending = self._pending.get(token)
        if pending is None:
            return [
                UnexpectedResponse(
                    origin=origin,
                    token=token,
                    message=f"no request with token {token} is waiting (unknown or already "
                    "answered); ignored",
                )
            ]
        if pending.origin != origin:
            return [
                UnexpectedResponse(
                    origin=origin,
                    token=token,
                    message=f"token {token} belongs to a request sent to {pending.origin!r}, not "
                    f"{origin!r}; ignored",
                )
            ]
        if (result is ABSENT) == (error is ABSENT):
            return self._request_failed(
                token, None, "the response must carry exactly one of result and error"
            )
        if error is not ABSENT:
            code, message = error_fields(error)
            return self._request_failed(token, code, message)
        del self._pending[token]
        if pending.purpose is Purpose.READ_FILE:  # the most frequent answer, without a detour
            return self._on_file(pending, result)
        return self._on_result(token, pending, result)

    def on_request_failed(self, origin: str, token: int, message: str) -> list[Effect]:
        """The request could not complete (timeout, transport failure, the server died)."""
        pending = self._pending.get(token)
        if pending is None or pending.origin != origin:
            return [
                UnexpectedResponse(
                    origin=origin,
                    token=token,
                    message=f"no request with token {token} to {origin!r} is waiting; ignored",
                )
            ]
        return self._request_failed(token, None, message)

    def _request_failed(self, token: int, code: int | None, message: str) -> list[Effect]:
        pending = self._pending.pop(token)
        purpose = pending.purpose
        origin = pending.origin
        failed = RequestFailed(
            origin=origin,
            method=pending.method,
            uri=pending.uri or None,
            code=code,
            message=message,
        )
        not_found = code in _NOT_FOUND_CODES
        if purpose is Purpose.LIST:
            conn = self._origins[origin]
            assert conn.listing is not None
            walk = conn.listing.walk
            conn.listing = None
            return [
                failed,
                ListingPartial(
                    origin=origin,
                    reason=StopReason.REQUEST_FAILED,
                    pages=walk.pages,
                    entries=walk.entries,
                    message=f"skills/list failed: {message}",
                ),
            ]
        if purpose in (
            Purpose.GET_LOAD,
            Purpose.GET_REFRESH,
            Purpose.GET_CONFIRM,
            Purpose.GET_PREVIEW,
        ):
            return self._get_failed(pending, token, failed, not_found)
        if purpose is Purpose.READ_SKILL_MD:
            session = self._current(pending)
            if session is None:
                return [self._discarded(pending)]
            if not_found:
                assert pending.entry is not None
                error = VerificationError(
                    f"{pending.uri}: the server no longer serves this listed file ({message})",
                    kind=VerificationKind.CONTENT,
                    uri=pending.uri,
                )
                return [
                    failed,
                    *self._skill_md_failed(session, pending.entry, error, FailureSource.SERVER),
                ]
            self._move(session, LoadInput.FAIL)
            return [failed, LoadFailed(origin=origin, uri=session.key[1], message=message)]
        if purpose is Purpose.READ_FILE:
            session = self._current(pending)
            if session is None:
                return [self._discarded(pending)]
            effects: list[Effect] = [failed]
            if not_found:
                # DIR-17: a listed file the server no longer serves means the skill changed.
                refresh = self._start_refresh(session, pending.uri)
                if refresh is not None:
                    effects.append(refresh)
            return effects
        return [failed]

    def _get_failed(
        self, pending: Pending, token: int, failed: RequestFailed, not_found: bool
    ) -> list[Effect]:
        origin, uri = pending.origin, pending.uri
        effects: list[Effect] = []
        session = self._sessions.get((origin, uri))
        if session is not None and session.refresh_token == token:
            session.refresh_token = None
        if not_found:
            effects.append(NotASkill(origin=origin, uri=uri, message=failed.message))
            if self._registry.remove(origin, uri) is not None:
                effects.append(RegistryUpdated(origin=origin, added=(), changed=(), removed=(uri,)))
            if pending.purpose is not Purpose.GET_LOAD:
                effects.extend(self._unusable(origin, uri, None))
        else:
            effects.insert(0, failed)
        if pending.purpose is Purpose.GET_LOAD:
            load = self._load_session(pending)
            if not_found:
                self._move(load, LoadInput.DECLINE)
                effects.append(self._declined_invalid(origin, uri, None))
            else:
                self._move(load, LoadInput.FAIL)
                effects.append(LoadFailed(origin=origin, uri=uri, message=failed.message))
        return effects

    def _load_session(self, pending: Pending) -> Session:
        """The session a load's ``skills/get`` was sent for; it cannot have moved meanwhile.

        A session in AWAITING_ENTRY leaves that state only through this answer or through
        ``ABANDON`` (forget, which also drops the token), so the generation still matches.
        """
        session = self._current(pending)
        assert session is not None
        assert session.state is LoadState.AWAITING_ENTRY
        return session

    def _current(self, pending: Pending) -> Session | None:
        """The session the request was made for, if it has not moved since."""
        assert pending.key is not None
        session = self._sessions.get(pending.key)
        if session is None or session.generation != pending.generation:
            return None
        return session

    @staticmethod
    def _discarded(pending: Pending) -> ResponseDiscarded:
        return ResponseDiscarded(
            origin=pending.origin,
            uri=pending.uri or None,
            message=f"the answer to {pending.method} {pending.uri} arrived after the skill "
            "changed or closed; it was not used",
        )

    def _on_result(self, token: int, pending: Pending, result: object) -> list[Effect]:
        """Every answer but a file read's (on_response hands those to _on_file itself)."""
        purpose = pending.purpose
        if purpose is Purpose.LIST:
            return self._on_list_page(token, pending, result)
        if purpose is Purpose.READ_SKILL_MD:
            return self._on_skill_md(pending, result)
        if purpose is Purpose.DIR_READ:
            return self._on_directory(pending, result)
        if purpose is Purpose.READ_PREVIEW:
            return self._on_preview(pending, result)
        if purpose is Purpose.READ_RESOURCE:
            return self._on_resource(pending, result)
        return self._on_get(token, pending, result)

    # -- skills/list ----------------------------------------------------------------------------

    def _on_list_page(self, token: int, pending: Pending, result: object) -> list[Effect]:
        origin = pending.origin
        conn = self._origins[origin]
        listing = conn.listing
        assert listing is not None
        assert listing.token == token
        walk = listing.walk
        try:
            page = parse_list_skills_result(result, limits=self._policy.limits)
        except RemoteProtocolError as exc:
            conn.listing = None
            return [
                RequestFailed(
                    origin=origin,
                    method="skills/list",
                    uri=None,
                    code=None,
                    message=exc.message,
                    error=exc,
                ),
                ListingPartial(
                    origin=origin,
                    reason=StopReason.MALFORMED_RESULT,
                    pages=walk.pages,
                    entries=walk.entries,
                    message=f"skills/list result is malformed: {exc.message}",
                ),
            ]
        effects: list[Effect] = []
        added: list[str] = []
        changed: list[str] = []
        room = walk.remaining
        taken = 0
        for entry in page.entries:
            if taken >= room:
                break
            taken += 1
            effects.extend(self._listed(conn, listing, entry, added, changed))
        for rejected in page.rejected:
            if taken >= room:
                break
            taken += 1
            record = RejectedRecord(origin=origin, uri=rejected.uri, error=rejected.error)
            self._registry.reject(record)
            effects.append(EntryRejected(origin=origin, uri=rejected.uri, error=rejected.error))
            if rejected.uri is not None:
                effects.extend(self._unusable(origin, rejected.uri, rejected.error))
        if added or changed:
            effects.append(
                RegistryUpdated(origin=origin, added=tuple(added), changed=tuple(changed))
            )
        total = len(page.entries) + len(page.rejected)
        step = walk.record_page(taken, page.next_cursor)
        if taken < total:
            step_stop: StopReason | None = StopReason.ENTRY_CAP
            step_message = (
                f"stopped after {walk.entries} entries (the cap); the listing may be incomplete"
            )
        else:
            step_stop, step_message = step.stop, step.message
        if step_stop is None and step.cursor is not None:
            send = self._send(conn, Method.SKILLS_LIST, {"cursor": step.cursor}, pending)
            listing.token = send.token
            effects.append(send)
            return effects
        conn.listing = None
        if step_stop is None:
            effects.append(ListingComplete(origin=origin, pages=walk.pages, entries=walk.entries))
            return effects
        effects.append(
            ListingPartial(
                origin=origin,
                reason=step_stop,
                pages=walk.pages,
                entries=walk.entries,
                message=step_message,
            )
        )
        return effects

    def _listed(
        self,
        conn: Origin,
        listing: Listing,
        entry: SkillEntry,
        added: list[str],
        changed: list[str],
    ) -> list[Effect]:
        """One valid entry of a listing page (SIL-04: the same skill twice must agree)."""
        origin = conn.label
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
            self._registry.reject(RejectedRecord(origin=origin, uri=entry.uri, error=error))
            return [
                EntryRejected(origin=origin, uri=entry.uri, error=error),
                self._send_get(conn, entry.uri, Purpose.GET_REFRESH),
            ]
        listing.seen[entry.uri] = entry
        effects, result = self._observe(origin, entry)
        if result is PutResult.ADDED:
            added.append(entry.uri)
        elif result is PutResult.CHANGED:
            changed.append(entry.uri)
        return effects

    # -- skills/get -----------------------------------------------------------------------------

    def _on_get(self, token: int, pending: Pending, result: object) -> list[Effect]:
        origin, uri = pending.origin, pending.uri
        session = self._sessions.get((origin, uri))
        if session is not None and session.refresh_token == token:
            session.refresh_token = None
        load = self._load_session(pending) if pending.purpose is Purpose.GET_LOAD else None
        try:
            entry, _ = parse_get_skill_result(result, requested_uri=uri, limits=self._policy.limits)
        except RemoteProtocolError as exc:
            effects: list[Effect] = [
                RequestFailed(
                    origin=origin,
                    method="skills/get",
                    uri=uri,
                    code=None,
                    message=exc.message,
                    error=exc,
                )
            ]
            if load is not None:
                self._move(load, LoadInput.FAIL)
                effects.append(LoadFailed(origin=origin, uri=uri, message=exc.message, error=exc))
            return effects
        except InvalidEntryError as exc:
            self._registry.reject(RejectedRecord(origin=origin, uri=uri, error=exc))
            effects = [EntryRejected(origin=origin, uri=uri, error=exc)]
            if load is not None:
                self._move(load, LoadInput.DECLINE)
                effects.append(self._declined_invalid(origin, uri, exc))
            else:
                effects.extend(self._unusable(origin, uri, exc))
            return effects
        effects, put = self._observe(origin, entry)
        if put is not PutResult.SAME:
            effects.append(
                RegistryUpdated(
                    origin=origin,
                    added=(uri,) if put is PutResult.ADDED else (),
                    changed=(uri,) if put is PutResult.CHANGED else (),
                )
            )
        purpose = pending.purpose
        if purpose is Purpose.GET_CONFIRM:
            effects.append(SkillConfirmed(origin=origin, uri=uri, entry=entry))
        elif purpose is Purpose.GET_PREVIEW:
            effects.extend(self._preview_read(self._origins[origin], entry, pending.ref))
        elif purpose is Purpose.GET_REFRESH:
            effects.extend(self._refreshed(pending, entry))
        else:
            assert load is not None
            effects.extend(self._entry_for_load(load, pending.entry, entry))
        return effects

    def _entry_for_load(
        self, load: Session, failed: SkillEntry | None, entry: SkillEntry
    ) -> list[Effect]:
        """A load's ``skills/get`` answered: go on, or (after a failed SKILL.md) decide."""
        origin, uri = load.key
        if failed is None:
            return self._begin_load(load, entry)
        if differs(failed, entry):
            skill_md_changed, changes = changes_between(failed, entry)
            return [
                SkillChanged(
                    origin=origin,
                    uri=uri,
                    requires_reapproval=self._needs_prompt(load.key, entry),
                    changes=changes,
                    skill_md_changed=skill_md_changed,
                ),
                *self._begin_load(load, entry),
            ]
        self._move(load, LoadInput.FAIL)
        return [
            LoadFailed(
                origin=origin,
                uri=uri,
                message=f"{uri}: SKILL.md failed verification and the refreshed entry is "
                "unchanged; the failure stands",
            )
        ]

    def _refreshed(self, pending: Pending, entry: SkillEntry) -> list[Effect]:
        """After a refresh: if the held entry still stands, the failure that caused it stands."""
        session = self._sessions.get((pending.origin, pending.uri))
        failure = pending.failure_uri
        if (
            session is None
            or session.state is not LoadState.ACTING
            or failure is None
            or session.held is None
            or differs(session.held, entry)
        ):
            return []
        session.settled.add(failure)
        return [
            Notice(
                level=NoticeLevel.WARNING,
                code="failure-stands",
                message=f"{failure}: the refreshed entry of {pending.uri} is unchanged, so the "
                "verification failure stands",
                origin=pending.origin,
                uri=failure,
            )
        ]

    # -- resources/read -------------------------------------------------------------------------

    def _on_skill_md(self, pending: Pending, result: object) -> list[Effect]:
        session = self._current(pending)
        if session is None:
            return [self._discarded(pending)]
        entry = pending.entry
        assert entry is not None
        assert session.entry is entry
        resource = pending.resource
        origin, uri = session.key
        conn = self._origins[origin]
        max_size = resource.size if resource is not None else self._policy.dynamic_total_bytes
        try:
            data = decode_read_result(result, uri=entry.uri, max_size=max_size)
            conn.bytes_fetched += len(data)
            if resource is not None:
                verify_bytes(data, size=resource.size, digest=resource.digest, uri=resource.uri)
        except VerificationError as exc:
            return self._skill_md_failed(session, entry, exc, FailureSource.SERVER)
        except RemoteProtocolError as exc:
            self._move(session, LoadInput.FAIL)
            return [
                RequestFailed(
                    origin=origin,
                    method="resources/read",
                    uri=entry.uri,
                    code=None,
                    message=exc.message,
                    error=exc,
                ),
                LoadFailed(origin=origin, uri=uri, message=exc.message, error=exc),
            ]
        return self._skill_md_verified(session, entry, data, from_cache=False)

    def _on_file(self, pending: Pending, result: object) -> list[Effect]:
        # _current(pending), inline: this runs once per file of a skill.
        assert pending.key is not None
        session = self._sessions.get(pending.key)
        if session is None or session.generation != pending.generation:
            return [self._discarded(pending)]
        origin, skill_uri = session.key
        conn = self._origins[origin]
        resource = pending.resource
        uri = pending.uri
        if resource is None:
            room = self._policy.dynamic_total_bytes - session.bytes_used
            try:
                data = decode_read_result(result, uri=uri, max_size=room)
            except VerificationError as exc:
                if exc.kind is VerificationKind.SIZE:
                    return [self._size_limit(origin, uri)]
                return self._verification_failed(session, uri, exc, FailureSource.SERVER)
            except RemoteProtocolError as exc:
                return [self._protocol_failed(pending, exc)]
            if len(data) > room:
                return [self._size_limit(origin, uri)]
            session.bytes_used += len(data)
            conn.bytes_fetched += len(data)
            return [
                DeliverToModel(
                    origin=origin,
                    uri=uri,
                    kind=DeliveryKind.SKILL_FILE,
                    content=data,
                    verified=False,
                    skill_uri=skill_uri,
                    skill_root=session.held.root if session.held is not None else None,
                )
            ]
        try:
            data = decode_read_result(result, uri=uri, max_size=resource.size)
            conn.bytes_fetched += len(data)
            verify_bytes(data, size=resource.size, digest=resource.digest, uri=uri)
        except VerificationError as exc:
            return self._verification_failed(session, uri, exc, FailureSource.SERVER)
        except RemoteProtocolError as exc:
            return [self._protocol_failed(pending, exc)]
        self._cache.put(origin, resource, data)
        return [self._deliver_file(session, resource, data, from_cache=False)]

    @staticmethod
    def _protocol_failed(pending: Pending, exc: RemoteProtocolError) -> RequestFailed:
        return RequestFailed(
            origin=pending.origin,
            method=pending.method,
            uri=pending.uri,
            code=None,
            message=exc.message,
            error=exc,
        )

    def _on_preview(self, pending: Pending, result: object) -> list[Effect]:
        entry = pending.entry
        assert entry is not None
        origin = pending.origin
        resource = pending.resource
        max_size = resource.size if resource is not None else self._policy.dynamic_total_bytes
        try:
            data = decode_read_result(result, uri=pending.uri, max_size=max_size)
            self._origins[origin].bytes_fetched += len(data)
            if resource is not None:
                verify_bytes(data, size=resource.size, digest=resource.digest, uri=pending.uri)
            if pending.uri == entry.uri:
                self._check_frontmatter(entry, data)
        except VerificationError as exc:
            return [
                VerificationFailed(
                    origin=origin,
                    uri=pending.uri,
                    skill_uri=entry.uri,
                    error=exc,
                    source=FailureSource.SERVER,
                    refreshing=False,
                )
            ]
        except RemoteProtocolError as exc:
            return [self._protocol_failed(pending, exc)]
        if resource is not None:
            self._cache.put(origin, resource, data)
        return [self._preview_ready(origin, entry, pending.uri, data)]

    def _on_resource(self, pending: Pending, result: object) -> list[Effect]:
        cap = self._policy.max_resource_bytes
        try:
            data = decode_read_result(result, uri=pending.uri, max_size=cap)
        except VerificationError as exc:
            if exc.kind is VerificationKind.SIZE:
                return [
                    Refused(
                        code=RefusalCode.RESOURCE_TOO_LARGE,
                        message=f"{pending.uri} is larger than {cap} bytes, the most this host "
                        "accepts from an ordinary read (WG-03)",
                        origin=pending.origin,
                        uri=pending.uri,
                    )
                ]
            return [
                RequestFailed(
                    origin=pending.origin,
                    method="resources/read",
                    uri=pending.uri,
                    code=None,
                    message=exc.message,
                    error=exc,
                )
            ]
        except RemoteProtocolError as exc:
            return [self._protocol_failed(pending, exc)]
        if len(data) > cap:
            return [
                Refused(
                    code=RefusalCode.RESOURCE_TOO_LARGE,
                    message=f"{pending.uri} is larger than {cap} bytes (WG-03)",
                    origin=pending.origin,
                    uri=pending.uri,
                )
            ]
        return [
            DeliverToModel(
                origin=pending.origin,
                uri=pending.uri,
                kind=DeliveryKind.RESOURCE,
                content=data,
                verified=False,
                skill_uri=None,
                skill_root=None,
            )
        ]

    # -- resources/directory/read ---------------------------------------------------------------

    def _on_directory(self, pending: Pending, result: object) -> list[Effect]:
        session = self._current(pending)
        if session is None:
            return [self._discarded(pending)]
        walk = pending.walk
        assert walk is not None
        try:
            children, dropped, cursor = parse_directory_result(result, directory_uri=pending.uri)
        except RemoteProtocolError as exc:
            return [self._protocol_failed(pending, exc)]
        room = walk.remaining
        pending.children.extend(children[:room])
        pending.dropped.extend(dropped)
        truncated = len(children) > room
        step = walk.record_page(min(len(children), room), cursor)
        partial = truncated or step.stop is not None
        if not partial and step.cursor is not None:
            conn = self._origins[pending.origin]
            return [
                self._send(
                    conn,
                    Method.RESOURCES_DIRECTORY_READ,
                    {"uri": pending.uri, "cursor": step.cursor},
                    pending,
                )
            ]
        return self._directory_done(session, pending, partial)

    def _directory_done(self, session: Session, pending: Pending, partial: bool) -> list[Effect]:
        origin, skill_uri = session.key
        held = session.held
        assert held is not None
        listed = {c.uri: c for c in pending.children}
        if held.is_dynamic:
            listing = DirectoryListing(
                origin=origin,
                skill_uri=skill_uri,
                uri=pending.uri,
                children=tuple(listed.values()),
                from_manifest=False,
                dropped=tuple(pending.dropped),
                partial=partial,
                verified=False,
            )
            return [listing]
        manifest = {c.uri: c for c in manifest_children(held, pending.uri)}
        shown = tuple(c for uri, c in manifest.items() if uri in listed)
        hidden = tuple(uri for uri in listed if uri not in manifest)
        missing = tuple(uri for uri in manifest if uri not in listed)
        listing = DirectoryListing(
            origin=origin,
            skill_uri=skill_uri,
            uri=pending.uri,
            children=shown,
            from_manifest=False,
            hidden=hidden,
            missing=missing,
            dropped=tuple(pending.dropped),
            partial=partial,
        )
        effects: list[Effect] = [listing]
        if listing.looks_changed and not partial:
            effects.append(
                Notice(
                    level=NoticeLevel.WARNING,
                    code="skill-may-have-changed",
                    message=f"{pending.uri} on {origin!r} differs from the approved skill "
                    f"({len(hidden)} new, {len(missing)} missing); refresh {skill_uri} to see the "
                    "change (it will need approval again)",
                    origin=origin,
                    uri=skill_uri,
                )
            )
        return effects
