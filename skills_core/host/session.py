"""One skill's load session: the only code that moves a skill's state.

Theory of operation
-------------------
For each ``(origin label, uri)`` being loaded or acted on, the router
(:class:`~skills_core.host.router.Host`) keeps one :class:`LoadSession`. The session owns
everything about that skill's load: its state (a :class:`~skills_core.host.states.LoadStateMachine`,
moved only by :meth:`LoadSession._move`, through the table in :mod:`skills_core.host.states`), its
generation, its entries, its per-load grants and, through its window, a dynamic skill's byte cap.
It decides which input happened; the table decides where that leads. The router asks, the session
answers (the h2 split: the connection routes frames and owns what is connection-wide, the stream
keeps its own state machine).

**It writes nothing host-wide.** Every method returns a list of steps, in order: effects for the
caller, and the intents of :mod:`skills_core.host.intents` for what the router owns (send this
request, open or withdraw an approval prompt, record an approval, charge fetched bytes to the
origin, keep verified bytes in the cache, drop a stale cached copy); the router carries them out as
soon as the session returns (:mod:`skills_core.host.carrier`). What it needs of the router's stores
(the policy, approvals, cached bytes, refreshes in flight, its server's connection and budget) it
reads through the read-only views it was made with. So a session can be made and driven on its own,
answer by answer, and what it decided read off what it returns.

**Its entries.** One entry is in use at a time, in one of three roles:

* ``loading``: the entry being loaded (AWAITING_APPROVAL, READING_SKILL_MD; in AWAITING_ENTRY
  after SKILL.md failed verification, the entry that failed, to compare the refreshed one with);
* ``held``: the immutable snapshot the acting window was opened on (ACTING, REAPPROVAL, STALE;
  HELD-01);
* ``proposed``: a newer entry with another set, awaiting re-approval (REAPPROVAL) or, re-approved
  with a changed SKILL.md, a reload (STALE; HELD-07).

**Loading** (VER-04, SIL-34): limits and policy from the entry alone, then approval (a prompt
bound to the manifest, unless an approval of the exact set exists or policy waives prompts), then
``resources/read`` of SKILL.md (or the verified cache) → size, then digest → parse the frontmatter
and compare it field by field with the entry (VER-10, VER-11) → deliver, tagged with the origin →
open the window holding the entry. A failure asks for exactly one ``skills/get`` (VER-09): a
different entry starts the load again, the same entry lets the failure stand.

**The acting window** (:class:`~skills_core.host.window.ActingWindow`) holds the loaded entry and
serves the reads under it; the session opens it, replaces its entry after re-approval when
SKILL.md is unchanged (HELD-05), and closes it. An entry with another set suspends it (HELD-09)
until re-approved; a changed SKILL.md marks it stale until the skill is loaded again (HELD-07).

**The invariant**: ``DeliverToModel(verified=True)`` for a SKILL.md is built in exactly one place
here, right after ``verify_bytes`` (or a re-verifying cache hit) and the frontmatter check against
the entry being loaded under a current approval, in the generation the request was made in; the
window does the same for supporting files. ``verified=False`` is only for a dynamic skill.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from types import MappingProxyType
from typing import NoReturn, final

from ..digest import verify_bytes
from ..entry import SkillEntry
from ..errors import (
    InvalidEntryError,
    RemoteProtocolError,
    VerificationError,
    VerificationKind,
)
from ..jsonvalue import JSONValue, thaw_json
from ..messages import decode_read_result
from .approvals import (
    approvable_set,
    entry_changes,
    manifest_changes,
    same_manifest,
)
from .codes import (
    ApprovalReason,
    CloseReason,
    DeclineReason,
    DeliveryKind,
    FailureSource,
    RefusalCode,
)
from .context import (
    cache_failure,
    check_frontmatter,
    not_acting,
    protocol_failed,
)
from .effects import (
    ApprovalGranted,
    DeliverToModel,
    HeldEntryReplaced,
    LoadDeclined,
    LoadFailed,
    Refused,
    ReloadRequired,
    RequestFailed,
    SkillChanged,
    SkillLoaded,
    VerificationFailed,
    WindowClosed,
)
from .gates import SkillPermissions, WindowExecState, widening_fields
from .intents import (
    AskApproval,
    Charge,
    DiscardCached,
    KeepVerified,
    OriginView,
    RecordApproval,
    Step,
    StoreView,
    WithdrawPrompt,
)
from .requests import (
    GetForLoad,
    GetRefresh,
    Key,
    ReadSkillMd,
)
from .states import WINDOW_STATES, LoadInput, LoadState, LoadStateMachine
from .window import ActingWindow

__all__ = ["WindowView", "PerLoadGrant", "LoadSession", "declined_invalid"]


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
@dataclass(frozen=True, slots=True, kw_only=True)
class PerLoadGrant:
    """An approval that lives on the load, never in the store: a dynamic skill's (APR-04), or
    host policy's when prompts are waived (SEC-06; nothing granted then).

    Attributes:
        fields: The permission-widening fields granted (APR-09).
        allow_exec: Code execution while acting was approved (APR-13).
    """

    fields: frozenset[str] = frozenset()
    allow_exec: bool = False


def declined_invalid(origin: str, uri: str, error: InvalidEntryError | None) -> LoadDeclined:
    """The skill's entry cannot be loaded: invalid, over the limits, or (None) not a skill."""
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


@final
class LoadSession:
    """One skill's load and acting window; see the module docstring.

    Attributes:
        key: ``(origin label, skill uri)``.
        server: The skill's server (its origin), read only.
        generation: Bumped by every move; requests and prompts made in an older one are stale.
        loading: The entry being loaded.
        window: The acting window, holding its entry, while one is open.
        proposed: A newer entry awaiting re-approval or a reload.
        asking: An approval prompt of this session is open (the router knows its id).
        grant: The approval on the load itself, or None when the approval store decides.
    """

    __slots__ = (
        "_machine",
        "_reads",
        "asking",
        "generation",
        "grant",
        "key",
        "loading",
        "proposed",
        "server",
        "window",
    )

    def __init__(self, reads: StoreView, server: OriginView, uri: str) -> None:
        """A new, IDLE session of the skill ``uri`` of ``server``.

        Args:
            reads: The router's stores, which the session only reads.
            server: The skill's server, which the session only reads.
            uri: The skill's SKILL.md URI.
        """
        self._reads = reads
        self._machine = LoadStateMachine()
        self.key: Key = (server.label, uri)
        self.server = server
        self.generation = 0
        self.loading: SkillEntry | None = None
        self.window: ActingWindow | None = None
        self.proposed: SkillEntry | None = None
        self.asking = False
        self.grant: PerLoadGrant | None = None

    # -- state --------------------------------------------------------------------------------------

    @property
    def state(self) -> LoadState:
        """Where the session stands."""
        return self._machine.state

    @property
    def held(self) -> SkillEntry | None:
        """The entry the acting window holds, while one is open (HELD-01)."""
        window = self.window
        return window.held if window is not None else None

    @property
    def has_window(self) -> bool:
        """True while an acting window is open, suspended or not."""
        return self._machine.state in WINDOW_STATES

    def view(self) -> WindowView:
        """A read-only view for callers."""
        return WindowView(
            origin=self.key[0],
            uri=self.key[1],
            state=self.state,
            held=self.held,
            pending=self.proposed,
            dynamic_bytes=self.window.bytes_used if self.window is not None else 0,
        )

    def _move(self, event: LoadInput) -> None:
        """Apply one input through the table; the only place the state changes."""
        try:
            self._machine.process_input(event)
        finally:
            self.generation += 1

    def _fault(self, problem: str) -> NoReturn:
        """An invariant of this module does not hold (a bug): ERROR, and raise."""
        error = self._machine.fault(problem)
        self.generation += 1
        raise error

    def _window(self) -> ActingWindow:
        window = self.window
        if window is None:
            self._fault(f"{self.key[1]}: a window state without a window")
        return window

    def _held(self) -> SkillEntry:
        return self._window().held

    def _awaited(self) -> SkillEntry:
        """The entry the open approval prompt is about."""
        entry = self.loading if self.state is LoadState.AWAITING_APPROVAL else self.proposed
        return self._require(entry, "a prompt is open without an entry to approve")

    def _require(self, entry: SkillEntry | None, problem: str) -> SkillEntry:
        """``entry``, which the state says is there; if it is not, that is a bug: ERROR."""
        if entry is None:
            self._fault(f"{self.key[1]}: {problem}")
        return entry

    def _withdraw(self, reason: str) -> list[Step]:
        if not self.asking:
            return []
        self.asking = False
        return [WithdrawPrompt(origin=self.key[0], uri=self.key[1], reason=reason)]

    def _approved(self, entry: SkillEntry) -> bool:
        origin, uri = self.key
        return (
            not entry.is_dynamic
            and self._reads.approvals.approved(origin, uri, entry.resource_set) is not None
        )

    def _needs_prompt(self, entry: SkillEntry) -> bool:
        """A prompt is needed unless policy waives it or an approval of this exact set exists."""
        return self._reads.policy.require_approval and not self._approved(entry)

    # -- loading ----------------------------------------------------------------------------------

    def load_again(self) -> list[Step]:
        """``Host.load`` of a skill that already has a session: a STALE window reloads."""
        origin, uri = self.key
        state = self.state
        if state is LoadState.STALE:
            return self.begin(
                self._require(self.proposed, "a stale window without its new entry"),
                preapproved=True,
            )
        if state is LoadState.ACTING:
            code, text = RefusalCode.ALREADY_ACTING, f"{uri} from {origin!r} is already loaded"
        elif state is LoadState.REAPPROVAL:
            code = RefusalCode.REAPPROVAL_REQUIRED
            text = f"{uri} from {origin!r} changed and awaits re-approval"
        elif state is LoadState.ERROR:
            code = RefusalCode.SESSION_FAILED
            text = f"the load session of {uri} from {origin!r} failed; close it to start again"
        else:
            code, text = (
                RefusalCode.LOAD_IN_PROGRESS,
                f"a load of {uri} from {origin!r} is in progress",
            )
        return [Refused(code=code, message=text, origin=origin, uri=uri)]

    def fetch_entry(self) -> list[Step]:
        """The entry is unknown: ask for it with ``skills/get`` (LIST-06)."""
        self._move(LoadInput.FETCH_ENTRY)
        origin, uri = self.key
        return [GetForLoad(origin=origin, uri=uri, session=self, generation=self.generation)]

    def begin(self, entry: SkillEntry, *, preapproved: bool = False) -> list[Step]:
        """Checks from the entry alone, then approval or the SKILL.md read."""
        origin, uri = self.key
        policy = self._reads.policy
        if entry.is_dynamic and not policy.allow_dynamic:
            return self._decline(
                DeclineReason.DYNAMIC,
                f"{uri} from {origin!r} is dynamic: its content cannot be verified or bound to "
                "an approval, and host policy declines such skills (ENTRY-16)",
            )
        skill_md = entry.resource(entry.uri)
        cap = policy.max_file_bytes
        if skill_md is not None and cap is not None and skill_md.size > cap:
            return self._decline(
                DeclineReason.FILE_TOO_LARGE,
                f"{uri}: SKILL.md is {skill_md.size} bytes; this host accepts at most {cap} per "
                "file (WG-03)",
            )
        if skill_md is not None and not self.server.can_fetch(skill_md.size, policy):
            return self._decline(
                DeclineReason.SERVER_BUDGET,
                f"{origin!r} has used its budget of {policy.per_server_budget_bytes} "
                "fetched bytes (WG-04)",
            )
        if preapproved or self._approved(entry):
            return self._read_skill_md(entry)
        if not policy.require_approval:
            self.grant = PerLoadGrant()  # host policy approves; nothing granted or persisted
            return self._read_skill_md(entry)
        self._move(LoadInput.ASK_APPROVAL)
        self.loading = entry
        return [self._prompt(entry)]

    def _decline(self, reason: DeclineReason, message: str) -> list[Step]:
        self._move(LoadInput.DECLINE)
        origin, uri = self.key
        return [LoadDeclined(origin=origin, uri=uri, reason=reason, message=message)]

    def _prompt(self, entry: SkillEntry) -> AskApproval:
        """Ask for a prompt bound to ``entry``'s manifest (APR-01), naming what changed (APR-02)."""
        origin, uri = self.key
        approval = self._reads.approvals.record(origin, uri)
        changes = None
        if entry.is_dynamic:
            reason = ApprovalReason.DYNAMIC
        elif approval is not None:
            reason = ApprovalReason.CHANGED
            changes = manifest_changes(approval.resources, entry.resource_set, root=entry.root)
        elif self.held is not None:
            reason = ApprovalReason.CHANGED
            changes = manifest_changes(
                approvable_set(self.held), entry.resource_set, root=entry.root
            )
        else:
            reason = ApprovalReason.NEW
        self.asking = True
        return AskApproval(
            origin=origin,
            uri=uri,
            generation=self.generation,
            entry=entry,
            reason=reason,
            changes=changes,
            widening_fields=widening_fields(entry.frontmatter, self._reads.policy.widening_fields),
        )

    def _read_skill_md(self, entry: SkillEntry) -> list[Step]:
        """Move to READING_SKILL_MD and read SKILL.md (from the verified cache when possible)."""
        origin, uri = self.key
        self._move(LoadInput.READ_SKILL_MD)
        self.loading = entry
        effects: list[Step] = []
        resource = entry.resource(entry.uri)
        if resource is not None:
            hit = self._reads.cache.lookup(origin, resource)
            if hit.error is not None:
                effects.append(DiscardCached(origin=origin, resource=resource))
                effects.append(cache_failure(origin, uri, hit.error))
            if hit.data is not None:
                effects.extend(self._skill_md_verified(entry, hit.data, from_cache=True))
                return effects
        if not self.server.connected:
            self._move(LoadInput.FAIL)
            effects.append(
                LoadFailed(origin=origin, uri=uri, message=f"{origin!r} is disconnected")
            )
            return effects
        effects.append(
            ReadSkillMd(
                origin=origin, uri=entry.uri, session=self, generation=self.generation, entry=entry
            )
        )
        return effects

    def on_skill_md(self, request: ReadSkillMd, result: object) -> list[Step]:
        """SKILL.md answered (the router checked the generation): verify, deliver, open."""
        entry = request.entry
        resource = entry.resource(entry.uri)
        max_size = resource.size if resource is not None else self._reads.policy.dynamic_total_bytes
        try:
            data = decode_read_result(result, uri=entry.uri, max_size=max_size)
        except VerificationError as exc:
            return self._skill_md_failed(entry, exc, FailureSource.SERVER)
        except RemoteProtocolError as exc:
            self._move(LoadInput.FAIL)
            origin, uri = self.key
            failed = LoadFailed(origin=origin, uri=uri, message=exc.message, error=exc)
            return [protocol_failed(request, exc), failed]
        if resource is not None:
            try:
                verify_bytes(data, size=resource.size, digest=resource.digest, uri=resource.uri)
            except VerificationError as exc:
                charge = Charge(origin=self.key[0], size=len(data))
                return [charge, *self._skill_md_failed(entry, exc, FailureSource.SERVER)]
        return self._skill_md_verified(entry, data, from_cache=False)

    def skill_md_request_failed(
        self, request: ReadSkillMd, failed: RequestFailed, not_found: bool
    ) -> list[Step]:
        """The SKILL.md read failed: a file the entry lists but the server no longer serves is a
        failed verification (refresh once; DIR-17), anything else ends the load."""
        if not_found:
            error = VerificationError(
                f"{request.uri}: the server no longer serves this listed file ({failed.message})",
                kind=VerificationKind.CONTENT,
                uri=request.uri,
            )
            return [failed, *self._skill_md_failed(request.entry, error, FailureSource.SERVER)]
        self._move(LoadInput.FAIL)
        return [failed, LoadFailed(origin=self.key[0], uri=self.key[1], message=failed.message)]

    def _skill_md_verified(self, entry: SkillEntry, data: bytes, *, from_cache: bool) -> list[Step]:
        """SKILL.md passed size and digest (or is dynamic): check frontmatter, deliver, open.

        Fetched bytes (not ``from_cache``) are charged to the origin, and kept in the verified
        cache when they verified against the entry's row.
        """
        origin, uri = self.key
        fetched: list[Step] = []
        try:
            check_frontmatter(entry, data, max_bytes=self._reads.policy.max_frontmatter_bytes)
        except VerificationError as exc:
            if from_cache:
                return self._skill_md_failed(entry, exc, FailureSource.CACHE)
            charge = Charge(origin=origin, size=len(data))
            return [charge, *self._skill_md_failed(entry, exc, FailureSource.SERVER)]
        if not from_cache:
            resource = entry.resource(entry.uri)
            fetched.append(
                Charge(origin=origin, size=len(data))
                if resource is None
                else KeepVerified(origin=origin, resource=resource, data=data)
            )
        self._move(LoadInput.OPEN_WINDOW)
        self.window = ActingWindow(self._reads, self, entry, delivered=len(data))
        self.loading = None
        self.proposed = None
        return [
            *fetched,
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
        self, entry: SkillEntry, error: VerificationError, source: FailureSource
    ) -> list[Step]:
        """SKILL.md failed verification: nothing is used; refresh once (VER-08, VER-09)."""
        origin, uri = self.key
        can_refresh = self.server.connected and self.server.features.skills
        effects: list[Step] = [
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
            self._move(LoadInput.FAIL)
            effects.append(LoadFailed(origin=origin, uri=uri, message=error.message, error=error))
            return effects
        self.loading = entry  # the entry that failed, to compare the refreshed one with
        effects.extend(self.fetch_entry())
        return effects

    def on_entry(self, entry: SkillEntry) -> list[Step]:
        """The load's ``skills/get`` answered: go on, or (after a failed SKILL.md) decide."""
        origin, uri = self.key
        failed = self.loading
        if failed is None:
            return self.begin(entry)
        if not same_manifest(failed, entry):
            skill_md_changed, changes = entry_changes(failed, entry)
            changed = SkillChanged(
                origin=origin,
                uri=uri,
                requires_reapproval=self._needs_prompt(entry),
                changes=changes,
                skill_md_changed=skill_md_changed,
            )
            return [changed, *self.begin(entry)]
        self._move(LoadInput.FAIL)
        return [
            LoadFailed(
                origin=origin,
                uri=uri,
                message=f"{uri}: SKILL.md failed verification and the refreshed entry is "
                "unchanged; the failure stands",
            )
        ]

    def entry_refused(self, error: InvalidEntryError | None) -> list[Step]:
        """The load's ``skills/get`` gave an unusable entry, or "not a skill" (None; ERR-07)."""
        self._move(LoadInput.DECLINE)
        return [declined_invalid(self.key[0], self.key[1], error)]

    def entry_failed(self, message: str, error: RemoteProtocolError | None = None) -> list[Step]:
        """The load's ``skills/get`` failed (an error, a malformed result, a transport failure)."""
        self._move(LoadInput.FAIL)
        return [LoadFailed(origin=self.key[0], uri=self.key[1], message=message, error=error)]

    # -- approval ---------------------------------------------------------------------------------

    def approve(self, grant_fields: Iterable[str], allow_exec: bool) -> list[Step]:
        """The session's prompt was answered yes (the router checked it is current).

        The approval binds to the entry the prompt showed (APR-01): recorded in the store (a
        :class:`~skills_core.host.intents.RecordApproval`), or kept on the load for a dynamic skill
        (APR-04). Only widening fields the prompt listed can be granted (APR-09).
        """
        entry = self._awaited()
        self.asking = False
        origin, uri = self.key
        listed = widening_fields(entry.frontmatter, self._reads.policy.widening_fields)
        grants = frozenset(grant_fields) & frozenset(listed)
        effects: list[Step] = []
        if entry.is_dynamic:
            self.grant = PerLoadGrant(fields=grants, allow_exec=allow_exec)
        else:
            self.grant = None
            effects.append(
                RecordApproval(
                    origin=origin,
                    uri=uri,
                    resources=entry.resource_set,
                    granted_fields=grants,
                    allow_exec=allow_exec,
                )
            )
        effects.append(
            ApprovalGranted(
                origin=origin,
                uri=uri,
                persisted=not entry.is_dynamic,
                granted_fields=tuple(sorted(grants)),
                allow_exec=allow_exec,
            )
        )
        if self.state is LoadState.AWAITING_APPROVAL:
            effects.extend(self._read_skill_md(entry))
        else:
            effects.extend(self._reapproved(entry))
        return effects

    def deny(self) -> list[Step]:
        """The session's prompt was answered no: the load is declined, or the window closes."""
        self.asking = False
        origin, uri = self.key
        if self.state is LoadState.AWAITING_APPROVAL:
            return self._decline(
                DeclineReason.DENIED, f"loading {uri} from {origin!r} was not approved"
            )
        self._move(LoadInput.CLOSE)
        return [WindowClosed(origin=origin, uri=uri, reason=CloseReason.DENIED)]

    def _reapproved(self, entry: SkillEntry) -> list[Step]:
        """REAPPROVAL answered yes: continue under the new entry, or mark the window stale."""
        origin, uri = self.key
        window = self._window()
        skill_md_changed, _ = entry_changes(window.held, entry)
        if not skill_md_changed:
            self._move(LoadInput.RESUME)
            window.replace(entry)
            self.proposed = None
            return [HeldEntryReplaced(origin=origin, uri=uri, entry=entry)]
        self._move(LoadInput.MARK_STALE)
        self.proposed = entry
        return [
            ReloadRequired(
                origin=origin,
                uri=uri,
                message=f"the SKILL.md of {uri} from {origin!r} changed; the copy in context is "
                "stale and reads are refused until the skill is loaded again (HELD-07)",
            )
        ]

    # -- entries observed -------------------------------------------------------------------------

    def observe(self, entry: SkillEntry) -> list[Step]:
        """A new entry arrived (``skills/list`` or ``skills/get``) for this skill."""
        state = self.state
        if state is LoadState.AWAITING_APPROVAL or state is LoadState.READING_SKILL_MD:
            return self._changed_while_loading(entry)
        if state not in WINDOW_STATES:
            return []
        held = self._held()
        reference = held if state is LoadState.ACTING else self.proposed
        if reference is not None and same_manifest(reference, entry):
            return []
        origin, uri = self.key
        effects = self._withdraw("the skill changed again")
        skill_md_changed, changes = entry_changes(held, entry)
        if entry.is_dynamic and not self._reads.policy.allow_dynamic:
            self._move(LoadInput.CLOSE)
            effects.append(
                SkillChanged(
                    origin=origin,
                    uri=uri,
                    requires_reapproval=True,
                    changes=changes,
                    skill_md_changed=True,
                )
            )
            effects.append(WindowClosed(origin=origin, uri=uri, reason=CloseReason.ENTRY_UNUSABLE))
            return effects
        self._move(LoadInput.SUSPEND)
        self.proposed = entry
        needs_prompt = self._needs_prompt(entry)
        effects.append(
            SkillChanged(
                origin=origin,
                uri=uri,
                requires_reapproval=needs_prompt,
                changes=changes,
                skill_md_changed=skill_md_changed,
            )
        )
        if needs_prompt:
            effects.append(self._prompt(entry))
            return effects
        # An approval of the new set exists, or policy waives prompts (SEC-06).
        self.grant = None if self._approved(entry) else PerLoadGrant()
        effects.extend(self._reapproved(entry))
        return effects

    def _changed_while_loading(self, entry: SkillEntry) -> list[Step]:
        loading = self._require(self.loading, "a load in progress without its entry")
        if same_manifest(loading, entry):
            return []
        origin, uri = self.key
        skill_md_changed, changes = entry_changes(loading, entry)
        effects = self._withdraw("the skill changed")
        effects.append(
            SkillChanged(
                origin=origin,
                uri=uri,
                requires_reapproval=self._needs_prompt(entry),
                changes=changes,
                skill_md_changed=skill_md_changed,
            )
        )
        effects.extend(self.begin(entry))
        return effects

    def unusable(self, error: InvalidEntryError | None) -> list[Step]:
        """The skill's latest entry cannot be loaded (invalid, over limits, or gone)."""
        state = self.state
        if state is LoadState.AWAITING_ENTRY or state is LoadState.ERROR:
            return []
        origin, uri = self.key
        effects = self._withdraw("the skill's entry can no longer be loaded")
        if state in WINDOW_STATES:
            self._move(LoadInput.CLOSE)
            effects.append(WindowClosed(origin=origin, uri=uri, reason=CloseReason.ENTRY_UNUSABLE))
            return effects
        self._move(LoadInput.DECLINE)
        effects.append(declined_invalid(origin, uri, error))
        return effects

    def refreshed(self, request: GetRefresh, entry: SkillEntry) -> list[Step]:
        """A refresh answered: while acting, a failure under an unchanged entry stands (VER-16)."""
        if self.state is not LoadState.ACTING:
            return []
        return self._window().refreshed(request, entry)

    # -- closing ----------------------------------------------------------------------------------

    def close(self) -> list[Step]:
        """Close the window (the SKILL.md left the model's context), or clear an ERROR."""
        origin, uri = self.key
        effects = self._withdraw("the window was closed")
        had_window = self.has_window
        self._move(LoadInput.CLOSE)
        if had_window:
            effects.append(WindowClosed(origin=origin, uri=uri, reason=CloseReason.CLOSED))
        return effects

    def abandon(self, reason: str) -> list[Step]:
        """The origin was forgotten: withdraw the prompt, close the window, end the session."""
        origin, uri = self.key
        effects = self._withdraw(reason)
        if self.has_window:
            effects.append(WindowClosed(origin=origin, uri=uri, reason=CloseReason.FORGOTTEN))
        self._move(LoadInput.ABANDON)
        return effects

    # -- the acting window ------------------------------------------------------------------------

    def refusal_for_reads(self) -> Refused | None:
        """Why reads and directory listings are refused now, or None in ACTING (HELD-07, HELD-09)."""
        state = self.state
        if state is LoadState.ACTING:
            return None
        origin, uri = self.key
        if state is LoadState.REAPPROVAL:
            return Refused(
                code=RefusalCode.REAPPROVAL_REQUIRED,
                message=f"{uri} from {origin!r} changed; reads and execution wait for "
                "re-approval (HELD-09)",
                origin=origin,
                uri=uri,
            )
        if state is LoadState.STALE:
            return Refused(
                code=RefusalCode.RELOAD_REQUIRED,
                message=f"{uri} from {origin!r} changed its SKILL.md; load it again first "
                "(HELD-07)",
                origin=origin,
                uri=uri,
            )
        return not_acting(origin, uri)

    def read(self, ref: str, found_in: str | None) -> list[Step]:
        """Read the file ``ref`` names (ACTING only; the router checked)."""
        return self._window().read(ref, found_in)

    def read_uri(self, uri: str) -> list[Step]:
        """Read ``uri`` under the held entry (ACTING only; the router checked)."""
        return self._window().read_uri(uri)

    def list_dir(self, ref: str) -> list[Step]:
        """List a directory of the skill (ACTING only; the router checked)."""
        return self._window().list_dir(ref)

    # -- gates ------------------------------------------------------------------------------------

    def exec_state(self) -> WindowExecState:
        """What the code-execution gate needs to know about this window (APR-11, APR-13)."""
        held = self._held()
        return WindowExecState(
            origin=self.key[0],
            uri=self.key[1],
            suspended=self.state is not LoadState.ACTING,
            dynamic=held.is_dynamic,
            exec_approved=self._exec_approved(held),
        )

    def _exec_approved(self, held: SkillEntry) -> bool:
        if self.grant is not None:
            return self.grant.allow_exec
        approval = self._reads.approvals.approved(self.key[0], self.key[1], held.resource_set)
        return approval is not None and approval.allow_exec

    def permissions(self) -> SkillPermissions:
        """Which widening fields take effect: only those granted for the current approval, and
        nothing outside ACTING (APR-08..APR-10)."""
        origin, uri = self.key
        if self.state is not LoadState.ACTING:
            return SkillPermissions(origin=origin, uri=uri)
        held = self._held()
        present = widening_fields(held.frontmatter, self._reads.policy.widening_fields)
        if self.grant is not None:
            granted = self.grant.fields
        else:
            approval = self._reads.approvals.approved(origin, uri, held.resource_set)
            granted = approval.granted_fields if approval is not None else frozenset()
        honoured: dict[str, JSONValue] = {
            name: thaw_json(held.frontmatter[name]) for name in present if name in granted
        }
        return SkillPermissions(
            origin=origin,
            uri=uri,
            honoured=MappingProxyType(honoured),
            ignored=tuple(name for name in present if name not in granted),
            allow_exec=self._exec_approved(held),
        )
