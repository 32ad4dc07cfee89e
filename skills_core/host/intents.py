"""What a load session asks the router to do, and what it may read: intents and read-only views.

Theory of operation
-------------------
A :class:`~skills_core.host.session.LoadSession` (and the acting window it opens) decides
everything about one skill's load, but writes nothing host-wide: the request tokens, the prompt
ids and the prompt table, the outstanding requests, the approval store, the verified cache and
each origin's byte budget belong to the router (:class:`~skills_core.host.router.Host`), as a
connection's stream table and connection-wide windows belong to an h2 connection, not to a
stream. Every method of a session returns a list of **steps**, in the order they happen: each
either an :class:`~skills_core.host.effects.Effect` for the caller, or an **intent**, a small
frozen value saying what the session wants done to the router's stores. The router carries the
intents out, in order, the moment the session returns (:mod:`skills_core.host.carrier`), and puts
the effect an intent makes, if any, in its place; so a session can be built and driven on its own,
without a host, and what it decided read off the values it returns.

The intents (:data:`Intent`):

* a request record of :mod:`skills_core.host.requests` that a session makes
  (:class:`~skills_core.host.requests.GetForLoad`, :class:`~skills_core.host.requests.ReadSkillMd`,
  :class:`~skills_core.host.requests.ReadFile`, :class:`~skills_core.host.requests.ReadDirectory`)
  is itself the intent "send this request for me": the router gives it a token, keeps it until
  its answer, and puts the ``SendRequest`` in its place;
* :class:`Refresh`: send one ``skills/get`` to refresh the skill's entry after a failure, and
  remember it as the skill's refresh in flight (at most one; VER-16);
* :class:`AskApproval`: open an approval prompt bound to an entry's manifest (APR-01); the router
  gives it its id and puts the ``RequestApproval`` in its place;
* :class:`WithdrawPrompt`: the session's open prompt became moot (``ApprovalWithdrawn``);
* :class:`RecordApproval`: record an approval of exactly this set in the approval store;
* :class:`KeepVerified`: bytes fetched from an origin verified against their row of the entry:
  charge them to the origin's budget (WG-04) and keep them in the verified cache;
* :class:`Charge`: bytes fetched from an origin that are not kept (they failed, or the skill is
  dynamic): charge them to its budget. Every fetched byte is charged exactly once, by one of these
  two;
* :class:`DiscardCached`: a cached copy no longer verified; drop it (CACHE-02).

An intent is emitted only where a store really changes: a cache hit, a refusal or a verification
failure with nothing fetched asks for nothing.

What a session reads of the router's stores it reads through read-only views, passed to it when it
is made: :class:`StoreView` (the policy, the approvals, the verified cache, the refreshes in
flight) and :class:`OriginView` (its server: connected, declared features, budget). They are
protocols: the router passes its own stores, which a type checker then lets the session only read.

Private, like the request records: not exported from :mod:`skills_core.host`; the names may change
at any time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, TypeAlias, final

from .._fast import new_blank, slot_setters
from ..entry import ResourceKey, SkillEntry, SkillResource
from ..jsonvalue import thaw_json
from ..messages import ServerFeatures
from .approvals import ApprovalRecord, ManifestChanges
from .cache import CacheLookup
from .codes import ApprovalReason
from .effects import ApprovalWithdrawn, Effect, RequestApproval
from .policy import HostPolicy
from .requests import GetForLoad, Key, ReadDirectory, ReadFile, ReadSkillMd

__all__ = [
    "ApprovalsView",
    "CacheView",
    "StoreView",
    "OriginView",
    "Refresh",
    "AskApproval",
    "WithdrawPrompt",
    "RecordApproval",
    "KeepVerified",
    "Charge",
    "DiscardCached",
    "Intent",
    "Step",
    "keep_verified",
]


# --- what a session reads ---------------------------------------------------------------------


class ApprovalsView(Protocol):
    """What a session reads of the approval store (an
    :class:`~skills_core.host.approvals.ApprovalStore`)."""

    def record(self, origin: str, skill_uri: str) -> ApprovalRecord | None:
        """The skill's record, active or revoked, or None."""

    def approved(
        self, origin: str, skill_uri: str, resources: frozenset[ResourceKey]
    ) -> ApprovalRecord | None:
        """The active record when it is bound to exactly ``resources``."""


class CacheView(Protocol):
    """What a session reads of the verified cache (a
    :class:`~skills_core.host.cache.VerifiedCache`)."""

    def lookup(self, origin: str, resource: SkillResource) -> CacheLookup:
        """The cached bytes of ``resource`` when they still verify; a stale copy is reported, not
        dropped (that is :class:`DiscardCached`)."""


class StoreView(Protocol):
    """The router's stores, as a session may see them: read only."""

    @property
    def policy(self) -> HostPolicy:
        """The policy in force."""

    @property
    def approvals(self) -> ApprovalsView:
        """The approval store."""

    @property
    def cache(self) -> CacheView:
        """The verified cache."""

    @property
    def refreshing(self) -> Mapping[Key, int]:
        """The refreshing ``skills/get`` in flight per skill (its token)."""


class OriginView(Protocol):
    """A session's server, as the session may see it (an
    :class:`~skills_core.host.context.OriginRecord`): read only."""

    @property
    def label(self) -> str:
        """The host-assigned label."""

    @property
    def features(self) -> ServerFeatures:
        """What it declared at connect."""

    @property
    def connected(self) -> bool:
        """False once disconnected: nothing is sent to it."""

    def can_fetch(self, size: int, policy: HostPolicy) -> bool:
        """True when ``size`` more bytes stay within its budget (WG-04)."""


# --- what a session asks for ------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Refresh:
    """Send one ``skills/get`` for the skill ``uri`` of ``origin``, after ``failure_uri`` failed,
    and remember it as the skill's refresh in flight (VER-09, VER-16, DIR-17).

    Attributes:
        origin: The skill's server label.
        uri: The skill's SKILL.md URI.
        failure_uri: The file whose failure asks for the refresh.
    """

    origin: str
    uri: str
    failure_uri: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class AskApproval:
    """Open an approval prompt bound to ``entry``'s manifest (APR-01), naming what changed (APR-02).

    Attributes:
        origin: The skill's server label.
        uri: The skill's SKILL.md URI.
        generation: The session's generation when it asked; an answer counts only in it.
        entry: The entry the prompt shows and the approval will bind to.
        reason: Why the prompt is shown.
        changes: What changed since the last approval, or since the held entry.
        widening_fields: The permission-widening fields the entry declares (APR-09).
    """

    origin: str
    uri: str
    generation: int
    entry: SkillEntry
    reason: ApprovalReason
    changes: ManifestChanges | None
    widening_fields: tuple[str, ...]

    def effect(self, prompt_id: int) -> RequestApproval:
        """The ``RequestApproval`` this prompt is shown as, under the id the router gave it."""
        entry = self.entry
        frontmatter = thaw_json(entry.frontmatter)
        return RequestApproval(
            prompt_id=prompt_id,
            origin=self.origin,
            uri=self.uri,
            name=entry.name,
            description=entry.description,
            manifest="dynamic" if isinstance(entry.resources, str) else tuple(entry.resources),
            total_size=entry.total_size,
            reason=self.reason,
            changes=self.changes,
            frontmatter=frontmatter if isinstance(frontmatter, dict) else {},
            widening_fields=self.widening_fields,
            dynamic=entry.is_dynamic,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class WithdrawPrompt:
    """The approval prompt the skill's session has open became moot: withdraw it.

    Attributes:
        origin: The skill's server label.
        uri: The skill's SKILL.md URI.
        reason: Why, for the person.
    """

    origin: str
    uri: str
    reason: str

    def effect(self, prompt_id: int) -> ApprovalWithdrawn:
        """The ``ApprovalWithdrawn`` for the prompt ``prompt_id``."""
        return ApprovalWithdrawn(prompt_id=prompt_id, reason=self.reason)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RecordApproval:
    """Record the user's approval of the skill as exactly the set ``resources`` (APR-01).

    Attributes:
        origin: The skill's server label.
        uri: The skill's SKILL.md URI.
        resources: The approved ``(uri, digest, size)`` set.
        granted_fields: The widening fields granted with it (APR-09).
        allow_exec: Code execution while acting was approved (APR-13).
    """

    origin: str
    uri: str
    resources: frozenset[ResourceKey]
    granted_fields: frozenset[str]
    allow_exec: bool


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class KeepVerified:
    """``data``, fetched from ``origin``, verified against ``resource`` (size, digest and, for a
    SKILL.md, frontmatter): charge its size to the origin's budget (WG-04) and keep it in the
    verified cache (CACHE-01).

    Attributes:
        origin: The server the bytes came from.
        resource: The entry's row they verified against.
        data: The bytes.
    """

    origin: str
    resource: SkillResource
    data: bytes


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Charge:
    """``size`` bytes fetched from ``origin`` that are not kept: charge them to its budget (WG-04).

    Attributes:
        origin: The server the bytes came from.
        size: How many.
    """

    origin: str
    size: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DiscardCached:
    """The cached copy of ``resource`` from ``origin`` no longer verified: drop it (CACHE-02).

    Attributes:
        origin: The server it is cached under.
        resource: The current entry's row it failed against.
    """

    origin: str
    resource: SkillResource


#: What a session may ask the router to do.
Intent: TypeAlias = (
    GetForLoad
    | ReadSkillMd
    | ReadFile
    | ReadDirectory
    | Refresh
    | AskApproval
    | WithdrawPrompt
    | RecordApproval
    | KeepVerified
    | Charge
    | DiscardCached
)

#: One step of what a session decided: an effect for the caller, or an intent for the router.
Step: TypeAlias = Effect | Intent


# A verified file's answer is the host's hot path (one per file read, up to 512 per skill), so its
# intent is built by a trusted constructor (skills_core._fast); bench_host_verify.py prints what
# the plain constructor would cost there.
_SET_ORIGIN, _SET_RESOURCE, _SET_DATA = slot_setters(KeepVerified, "origin", "resource", "data")


def keep_verified(origin: str, resource: SkillResource, data: bytes) -> KeepVerified:
    """``KeepVerified(origin=origin, resource=resource, data=data)``: the trusted constructor.

    Only for bytes that were just verified against ``resource`` (the caller checked them).
    """
    intent: KeepVerified = new_blank(KeepVerified)
    _SET_ORIGIN(intent, origin)
    _SET_RESOURCE(intent, resource)
    _SET_DATA(intent, data)
    return intent
