"""The host: a sans-IO router of calls, answers and prompts to per-skill load sessions.

Theory of operation
-------------------
:class:`Host` owns the host-wide state (a :class:`~skills_core.host.context.HostContext`): per
host-assigned origin label, what that server declared (an
:class:`~skills_core.host.context.OriginRecord`) and the bytes fetched from it; the registry of
its skills; the approvals bound to their manifests; the verified cache; the outstanding requests by
token and the open prompts by id. Each skill being loaded or acted on has one
:class:`~skills_core.host.session.LoadSession`, which owns that skill's state and decides every
move of it, but writes none of that: it returns what it wants done as intents, which the router
carries out (:mod:`~skills_core.host.carrier`; the h2 split: the connection routes and owns what
is connection-wide, each stream keeps its own state machine). The host itself decides only what is
origin-wide: connecting and forgetting origins, listing walks, resolving names, ordinary resource
reads, cross-origin prompts, previews, and which session an answer or a prompt belongs to.

Its methods are the things a host does ("connect", "list", "load", "read", "approve", "the server
answered"); each returns a list of :mod:`effects <skills_core.host.effects>` for the caller to
carry out, in order. It never does I/O and never sends a request that no call asked for: nothing
is fetched on connect, on listing or at approval (VER-12, APR-03); every ``SendRequest`` traces
back to the call that returned it, or to the response (passed back in by the caller) of a
request that call made.

**Answers** are found by their token and dispatched by the kind of request they answer, each kind
to its one handler (:mod:`~skills_core.host.answers`).

**Refusals.** A call that the current state does not allow returns ``[Refused(code, ...)]`` and
changes nothing. Methods never raise for anything a model, user or server can cause; two
exceptions, both :class:`~skills_core.errors.LocalProtocolError`: :meth:`Host.connect` with an
invalid label (a configuration error), and a load session asked for a move its transition table
lacks (a bug in the host; the session is left in ERROR, refuses everything, and
:meth:`Host.close` clears it). Responses with unknown, duplicate or foreign tokens give
:class:`~skills_core.host.effects.UnexpectedResponse`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, final

from ..errors import (
    quote_for_message,
)
from ..jsonvalue import ABSENT, JSONValue
from ..messages import (
    SKILLS_CORE,
    Era,
    Implementation,
    ServerFeatures,
    parse_server_features,
    request_meta,
)
from ..spec import MODERN_PROTOCOL_VERSION
from ..uri import is_skill_md_uri
from .answers import ON_RESULT, Answers
from .approvals import ApprovalStore
from .cache import CacheStore, MemoryCacheStore, VerifiedCache
from .carrier import Carrier
from .codes import (
    DeclineReason,
    NoticeCode,
    NoticeLevel,
    RefusalCode,
)
from .context import (
    HostContext,
    OriginRecord,
    not_acting,
    not_connected,
)
from .effects import (
    ApprovalWithdrawn,
    Connected,
    Effect,
    LoadDeclined,
    NameCollision,
    Notice,
    Refused,
    RequestCrossOriginApproval,
    UnexpectedResponse,
)
from .gates import ExecGateResult, SkillPermissions, exec_decision
from .handshake import handshake_request, outcome_of
from .intake import EntryIntake
from .listing import ListingProgress
from .policy import DEFAULT_POLICY, CrossOriginPolicy, HostPolicy
from .reads import preview_read
from .registry import (
    CatalogItem,
    ListingWalk,
    Registry,
    Resolution,
    check_label,
)
from .requests import (
    CrossOriginPrompt,
    GetConfirm,
    GetPreview,
    GetRefresh,
    Key,
    ListPage,
    OpenPrompt,
    ReadResource,
    SkillPrompt,
    error_fields,
)
from .session import LoadSession, WindowView, declined_invalid
from .states import LoadState

__all__ = ["DEFAULT_CLIENT_INFO", "DEFAULT_MEMORY_CACHE_BYTES", "Host"]

#: ``clientInfo`` sent in modern requests unless the host gives its own.
DEFAULT_CLIENT_INFO: Final = SKILLS_CORE
#: Bound of the in-memory cache a :class:`Host` makes when given none: four maximal skills.
DEFAULT_MEMORY_CACHE_BYTES: Final = 64 * 1024 * 1024


@final
class Host:
    """The sans-IO host: a router of calls and answers to load sessions; see the module docstring."""

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
        self._client_info = client_info
        store = (
            cache if cache is not None else MemoryCacheStore(max_bytes=DEFAULT_MEMORY_CACHE_BYTES)
        )
        self._ctx = HostContext(
            policy,
            approvals if approvals is not None else ApprovalStore(),
            VerifiedCache(store),
        )
        self._registry = Registry()
        self._sessions: dict[Key, LoadSession] = {}
        self._carrier = Carrier(self._ctx, self._sessions)
        self._intake = EntryIntake(self._ctx, self._registry, self._sessions, self._carrier)
        self._answers = Answers(self._ctx, self._sessions, self._intake, self._carrier)

    # -- read-only views ------------------------------------------------------------------------

    @property
    def policy(self) -> HostPolicy:
        """The policy in force."""
        return self._ctx.policy

    @property
    def client_info(self) -> Implementation:
        """How this host introduces itself (``clientInfo`` in the handshake and in ``_meta``)."""
        return self._client_info

    @property
    def registry(self) -> Registry:
        """The per-origin registry (read it; the host writes it)."""
        return self._registry

    @property
    def approvals(self) -> ApprovalStore:
        """The approval store; persist it with ``host.approvals.dumps()``."""
        return self._ctx.approvals

    @property
    def pending_requests(self) -> int:
        """How many requests await a response."""
        return len(self._ctx.pending)

    def is_prompt_open(self, prompt_id: int) -> bool:
        """Whether the prompt ``prompt_id`` still awaits :meth:`approve` or :meth:`deny`."""
        return prompt_id in self._ctx.prompts

    def features(self, origin: str) -> ServerFeatures | None:
        """What ``origin`` declared at connect, or None for an unknown label."""
        server = self._ctx.origins.get(origin)
        return server.features if server is not None else None

    def era(self, origin: str) -> Era | None:
        """The era ``origin`` was connected in (modern requests carry ``_meta``), or None."""
        server = self._ctx.origins.get(origin)
        if server is None:
            return None
        return Era.LEGACY if server.meta is None else Era.MODERN

    def state(self, origin: str, uri: str) -> LoadState:
        """Where the skill ``(origin, uri)`` stands."""
        session = self._sessions.get((origin, uri))
        return session.state if session is not None else LoadState.IDLE

    def window(self, origin: str, uri: str) -> WindowView | None:
        """The skill's session, or None when it is idle."""
        session = self._sessions.get((origin, uri))
        return session.view() if session is not None else None

    def windows(self) -> tuple[WindowView, ...]:
        """Every session with an open window (acting, suspended or stale)."""
        return tuple(s.view() for s in self._sessions.values() if s.has_window)

    def resolve(self, query: str) -> Resolution:
        """Resolve a skill URI, ``label:name`` or bare name; never silently (ORG-12..ORG-14)."""
        return self._registry.resolve(query)

    def catalog(self, origin: str | None = None) -> tuple[CatalogItem, ...]:
        """The registered skills as presented to the model, each tagged with its origin."""
        return self._registry.catalog(origin)

    # -- plumbing -------------------------------------------------------------------------------

    def _server(self, origin: str, *, skills: bool = True) -> OriginRecord | Refused:
        """The record of a known server (that declared the extension, unless ``skills=False``)."""
        server = self._ctx.origins.get(origin)
        if server is None:
            return _unknown_origin(origin)
        if skills and not server.features.skills:
            return Refused(
                code=RefusalCode.EXTENSION_NOT_DECLARED,
                message=f"{origin!r} has not declared the skills extension; its skills are not "
                "used (CAP-08)",
                origin=origin,
            )
        return server

    # -- origins --------------------------------------------------------------------------------

    def handshake_request(self, era: Era = Era.MODERN) -> tuple[str, dict[str, JSONValue]]:
        """The ``(method, params)`` that opens a connection in ``era``; send it, then
        :meth:`on_handshake` with the answer.

        Modern: ``server/discover`` with this host's request ``_meta``. Legacy: ``initialize``;
        once answered, send ``notifications/initialized``
        (:data:`~skills_core.host.handshake.INITIALIZED_NOTIFICATION`). Which era to try first is
        the transport's choice (stdio probes ``server/discover`` and falls back on an error or a
        timeout; HTTP decides by status, docs/requirements.md#http-client rule 6).
        """
        return handshake_request(self._client_info, era)

    def on_handshake(self, origin: str, era: Era, result: object) -> list[Effect]:
        """Connect ``origin`` with the answer to :meth:`handshake_request` of ``era``.

        Raises:
            RemoteProtocolError: the answer is not an object, or a ``server/discover`` result
                names no modern version this library speaks (``kind="no-common-version"``: a
                transport that probes falls back to ``initialize``); nothing is connected.
            LocalProtocolError: ``origin`` is not a valid label.
        """
        outcome = outcome_of(era, result)
        return self.connect(
            origin, outcome.capabilities, era=outcome.era, protocol_version=outcome.protocol_version
        )

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
        server = self._ctx.origins.get(origin)
        if server is None:
            self._ctx.origins[origin] = OriginRecord(label=origin, features=features, meta=meta)
        else:
            server.features = features
            server.meta = meta
            server.connected = True
        effects: list[Effect] = [Connected(origin=origin, features=features)]
        effects.extend(
            Notice(
                level=NoticeLevel.WARNING,
                code=NoticeCode.CAPABILITIES,
                message=text,
                origin=origin,
            )
            for text in features.notices
        )
        return effects

    def disconnect(self, origin: str) -> list[Effect]:
        """Mark ``origin`` disconnected: requests in flight fail; open windows stay (served from
        the verified cache, still as MCP content; CACHE-05).
        """
        server = self._ctx.origins.get(origin)
        if server is None:
            return [_unknown_origin(origin)]
        server.connected = False
        effects: list[Effect] = []
        for token in [t for t, r in self._ctx.pending.items() if r.origin == origin]:
            effects.extend(self._answers.failed(token, None, f"{origin!r} disconnected"))
        return effects

    def forget(self, origin: str) -> list[Effect]:
        """Remove a server: its windows, prompts, registry entries, approvals and cached content
        (CACHE-07). Other servers' same-URI content is untouched.
        """
        if origin not in self._ctx.origins:
            return [_unknown_origin(origin)]
        reason = f"{origin!r} was removed"
        effects: list[Effect] = []
        for session in [s for k, s in self._sessions.items() if k[0] == origin]:
            effects.extend(self._carrier.run(session, session.abandon(reason)))
        prompts = self._ctx.prompts
        for prompt_id, prompt in list(prompts.items()):
            if origin == prompt.key[0] or (
                isinstance(prompt, CrossOriginPrompt) and origin == prompt.to_origin
            ):
                del prompts[prompt_id]
                effects.append(ApprovalWithdrawn(prompt_id=prompt_id, reason=reason))
        pending = self._ctx.pending
        for token in [t for t, r in pending.items() if r.origin == origin]:
            del pending[token]
        for table in (self._ctx.asked, self._ctx.refreshing):
            for key in [k for k in table if k[0] == origin]:
                del table[key]
        self._registry.forget_origin(origin)
        self._ctx.approvals.forget_origin(origin)
        self._ctx.cache.forget(origin)
        del self._ctx.origins[origin]
        effects.append(
            Notice(
                level=NoticeLevel.INFO,
                code=NoticeCode.ORIGIN_FORGOTTEN,
                message=f"{origin!r}: registry, approvals and cached content removed",
                origin=origin,
            )
        )
        return effects

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
        server = self._server(origin)
        if isinstance(server, Refused):
            return [server]
        if not server.connected:
            return [not_connected(server.label)]
        if server.listing is not None:
            return [
                Refused(
                    code=RefusalCode.LISTING_IN_PROGRESS,
                    message=f"a listing of {origin!r} is already in progress",
                    origin=origin,
                )
            ]
        policy = self._ctx.policy
        walk = ListingWalk(max_pages=policy.max_pages, max_entries=policy.max_entries)
        listing = ListingProgress(walk=walk)
        server.listing = listing
        return [self._ctx.send(server, {}, ListPage(origin=origin, uri=None, listing=listing))]

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
        server = self._server(origin)
        if isinstance(server, Refused):
            return [server]
        refused = _refuse_get(server, uri)
        if refused is not None:
            return [refused]
        return [self._ctx.send(server, {"uri": uri}, GetConfirm(origin=origin, uri=uri))]

    def refresh(self, origin: str, uri: str) -> list[Effect]:
        """Fetch the current entry of one skill with exactly one ``skills/get`` (GET-07, DIR-15).

        A different set revokes the approval and, for an acting skill, suspends it until
        re-approved (APR-02, HELD-09).

        Args:
            origin: The server's label.
            uri: The skill's SKILL.md URI.
        """
        server = self._server(origin)
        if isinstance(server, Refused):
            return [server]
        refused = _refuse_get(server, uri)
        if refused is not None:
            return [refused]
        if (origin, uri) in self._ctx.refreshing:
            return [
                Refused(
                    code=RefusalCode.REFRESH_IN_FLIGHT,
                    message=f"a refresh of {uri} is already in flight",
                    origin=origin,
                    uri=uri,
                )
            ]
        send = self._ctx.send(server, {"uri": uri}, GetRefresh(origin=origin, uri=uri))
        self._ctx.refreshing[origin, uri] = send.token
        return [send]

    # -- loading and prompts --------------------------------------------------------------------

    def load(self, origin: str, uri: str) -> list[Effect]:
        """Load a skill: entry (``skills/get`` if unknown), limits, policy, approval, SKILL.md.

        Args:
            origin: The server's label.
            uri: The skill's SKILL.md URI. For a skill in the STALE state, loads it again.

        Returns:
            Effects ending, possibly after later calls, in ``SkillLoaded`` (window open) or
            ``LoadDeclined``/``LoadFailed``.
        """
        server = self._server(origin)
        if isinstance(server, Refused):
            return [server]
        if self._ctx.policy.denies(origin, uri):
            return [
                LoadDeclined(
                    origin=origin,
                    uri=uri,
                    reason=DeclineReason.POLICY,
                    message=f"host policy does not allow loading {uri} from {origin!r} (SEC-04)",
                )
            ]
        session = self._sessions.get((origin, uri))
        if session is not None:
            return self._carrier.run(session, session.load_again())
        entry = self._registry.get(origin, uri)
        if entry is not None:
            session = self._carrier.open(server, uri)
            return self._carrier.run(session, session.begin(entry))
        rejected = self._registry.rejection(origin, uri)
        if rejected is not None:
            return [declined_invalid(origin, uri, rejected.error)]
        refused = _refuse_get(server, uri)
        if refused is not None:
            return [refused]
        session = self._carrier.open(server, uri)
        return self._carrier.run(session, session.fetch_entry())

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
        prompt = self._ctx.prompts.pop(prompt_id, None)
        if isinstance(prompt, CrossOriginPrompt):
            return self._cross_origin_read(prompt)
        session = self._prompted(prompt_id, prompt)
        if session is None:
            return [_unknown_prompt(prompt_id)]
        return self._carrier.run(session, session.approve(grant_fields, allow_exec))

    def deny(self, prompt_id: int) -> list[Effect]:
        """Answer a prompt with no: the load is declined, or the changed skill's window closes."""
        prompt = self._ctx.prompts.pop(prompt_id, None)
        if isinstance(prompt, CrossOriginPrompt):
            return [
                Notice(
                    level=NoticeLevel.INFO,
                    code=NoticeCode.CROSS_ORIGIN_DENIED,
                    message=f"the read of {prompt.uri} from {prompt.to_origin!r} was refused",
                    origin=prompt.to_origin,
                    uri=prompt.uri,
                )
            ]
        session = self._prompted(prompt_id, prompt)
        if session is None:
            return [_unknown_prompt(prompt_id)]
        return self._carrier.run(session, session.deny())

    def _prompted(self, prompt_id: int, prompt: OpenPrompt | None) -> LoadSession | None:
        """The session an answered skill prompt belongs to, if the prompt is still its own (and
        then the prompt is closed: it is no longer the one the session has open)."""
        if not isinstance(prompt, SkillPrompt):
            return None
        key = prompt.key
        session = self._sessions.get(key)
        asked = self._ctx.asked
        if (
            session is None
            or asked.get(key) != prompt_id
            or session.generation != prompt.generation
        ):
            return None
        del asked[key]
        return session

    def close(self, origin: str, uri: str) -> list[Effect]:
        """Close the acting window: the SKILL.md left the model's context (HELD-01, SIL-32).

        The host decides when that is; it may keep windows open until the session ends. A
        session in ERROR is cleared the same way.

        Args:
            origin: The server's label.
            uri: The skill's SKILL.md URI.
        """
        session = self._sessions.get((origin, uri))
        if session is None or not (session.has_window or session.state is LoadState.ERROR):
            return [not_acting(origin, uri)]
        return self._carrier.run(session, session.close())

    # -- the acting window ----------------------------------------------------------------------

    def _acting(self, origin: str, skill_uri: str) -> LoadSession | Refused:
        session = self._sessions.get((origin, skill_uri))
        if session is None:
            return not_acting(origin, skill_uri)
        refused = session.refusal_for_reads()
        return refused if refused is not None else session

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
        return self._carrier.carry_out(session.read(ref, found_in))

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
        return self._carrier.carry_out(session.list_dir(ref))

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
        server = self._server(origin, skills=False)
        if isinstance(server, Refused):
            return [server]
        if acting_on is not None:
            driver = self._acting(*acting_on)
            if isinstance(driver, Refused):
                return [driver]
            if acting_on[0] != origin:
                return [self._cross_origin_prompt(acting_on, origin, uri)]
        return self._plain_read(server, uri)

    def _plain_read(self, server: OriginRecord, uri: str) -> list[Effect]:
        window = self._window_containing(server.label, uri)
        if window is not None:
            refused = window.refusal_for_reads()
            if refused is not None:
                return [refused]
            return self._carrier.carry_out(window.read_uri(uri))
        if not server.connected:
            return [not_connected(server.label, uri)]
        return [self._ctx.send(server, {"uri": uri}, ReadResource(origin=server.label, uri=uri))]

    def _window_containing(self, origin: str, uri: str) -> LoadSession | None:
        """The innermost open window on ``origin`` whose skill contains ``uri`` (HELD-03)."""
        best: LoadSession | None = None
        best_depth = -1
        for (label, _), session in self._sessions.items():
            held = session.held
            if (
                label != origin
                or not session.has_window
                or held is None
                or not (uri == held.uri or held.skill.contains(uri))
            ):
                continue
            if len(held.root) > best_depth:
                best, best_depth = session, len(held.root)
        return best

    def _cross_origin_prompt(self, acting_on: Key, to_origin: str, uri: str) -> Effect:
        from_origin, skill_uri = acting_on
        if self._ctx.policy.cross_origin is CrossOriginPolicy.DENY:
            return Refused(
                code=RefusalCode.CROSS_ORIGIN_DENIED,
                message=f"skill {skill_uri} from {from_origin!r} may not read from "
                f"{to_origin!r} (host policy; ORG-08)",
                origin=to_origin,
                uri=uri,
            )
        prompt = CrossOriginPrompt(key=acting_on, to_origin=to_origin, uri=uri)
        return RequestCrossOriginApproval(
            prompt_id=self._ctx.open_prompt(prompt),
            from_origin=from_origin,
            skill_uri=skill_uri,
            to_origin=to_origin,
            uri=uri,
        )

    def _cross_origin_read(self, prompt: CrossOriginPrompt) -> list[Effect]:
        """The user allowed one cross-origin read; perform exactly that one (SIL-25)."""
        # Forgetting an origin withdraws every prompt that names it, so the target is known.
        return self._plain_read(self._ctx.origins[prompt.to_origin], prompt.uri)

    # -- previews -------------------------------------------------------------------------------

    def preview(self, origin: str, skill_uri: str, ref: str | None = None) -> list[Effect]:
        """Let the user inspect a skill file before loading it (SEC-05, SIL-33, WG-10).

        A user-initiated, verified fetch (``skills/get`` first when the entry is unknown); the
        result is :class:`PreviewReady`, never delivered to the model, and opens no window.

        Args:
            origin: The server's label.
            skill_uri: The skill's SKILL.md URI.
            ref: A file of the skill, relative to its root; SKILL.md when None.
        """
        server = self._server(origin)
        if isinstance(server, Refused):
            return [server]
        entry = self._registry.get(origin, skill_uri)
        if entry is not None:
            return preview_read(self._ctx, server, entry, ref)
        refused = _refuse_get(server, skill_uri)
        if refused is not None:
            return [refused]
        request = GetPreview(origin=origin, uri=skill_uri, ref=ref)
        return [self._ctx.send(server, {"uri": skill_uri}, request)]

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
        return exec_decision(
            session.exec_state()
            for (label, uri), session in self._sessions.items()
            if session.has_window
            and (origin is None or label == origin)
            and (skill_uri is None or uri == skill_uri)
        )

    def permissions(self, origin: str, skill_uri: str) -> SkillPermissions:
        """Which permission-widening fields of an acting skill take effect (APR-08..APR-10).

        Only fields the user granted for this skill's current approval; nothing outside an open,
        non-suspended window.

        Args:
            origin: The server's label.
            skill_uri: The skill.
        """
        session = self._sessions.get((origin, skill_uri))
        if session is None:
            return SkillPermissions(origin=origin, uri=skill_uri)
        return session.permissions()

    # -- answers --------------------------------------------------------------------------------

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
        pending = self._ctx.pending
        request = pending.get(token)
        if request is None:
            return [
                UnexpectedResponse(
                    origin=origin,
                    token=token,
                    message=f"no request with token {token} is waiting (unknown or already "
                    "answered); ignored",
                )
            ]
        if request.origin != origin:
            return [
                UnexpectedResponse(
                    origin=origin,
                    token=token,
                    message=f"token {token} belongs to a request sent to {request.origin!r}, not "
                    f"{origin!r}; ignored",
                )
            ]
        if error is ABSENT and result is not ABSENT:
            del pending[token]
            return ON_RESULT[type(request)](self._answers, token, request, result)
        if error is ABSENT or result is not ABSENT:
            return self._answers.failed(
                token, None, "the response must carry exactly one of result and error"
            )
        code, message = error_fields(error)
        return self._answers.failed(token, code, message)

    def on_request_failed(self, origin: str, token: int, message: str) -> list[Effect]:
        """The request could not complete (timeout, transport failure, the server died)."""
        request = self._ctx.pending.get(token)
        if request is None or request.origin != origin:
            return [
                UnexpectedResponse(
                    origin=origin,
                    token=token,
                    message=f"no request with token {token} to {origin!r} is waiting; ignored",
                )
            ]
        return self._answers.failed(token, None, message)


def _unknown_origin(origin: str) -> Refused:
    return Refused(
        code=RefusalCode.UNKNOWN_ORIGIN,
        message=f"no server is connected under the label {origin!r}",
        origin=origin,
    )


def _unknown_prompt(prompt_id: int) -> Refused:
    return Refused(
        code=RefusalCode.UNKNOWN_PROMPT,
        message=f"no prompt {prompt_id} is open (already answered or withdrawn)",
    )


def _refuse_get(server: OriginRecord, uri: str) -> Refused | None:
    """Why ``skills/get`` of ``uri`` cannot be sent to ``server``'s origin, or None."""
    if not is_skill_md_uri(uri):
        return Refused(
            code=RefusalCode.NOT_SKILL_MD_URI,
            message=f"{quote_for_message(uri)} is not a SKILL.md URI; skills/get takes the URI "
            "of a skill's SKILL.md (GET-02)",
            origin=server.label,
            uri=uri if isinstance(uri, str) else None,
        )
    if not server.connected:
        return not_connected(server.label, uri)
    return None
