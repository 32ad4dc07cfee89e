"""The host side of the Skills extension: load MCP-served skills safely, sans-IO.

Theory of operation
-------------------
:class:`Host` is the one object a host application drives; every call returns
:mod:`effects <skills_core.host.effects>` for the caller to carry out (send a request, prompt the
user, deliver content to the model tagged with its origin, tell the user something). The map, one
job per module:

* :mod:`~skills_core.host.router`: :class:`Host`, the router: it owns the host-wide state
  (origins, tokens, prompts, approvals, cache, byte budgets), resolves names, finds the session a
  prompt's answer is for and the request a server's answer is for;
* :mod:`~skills_core.host.answers`: what each answer does, one handler per kind of request for a
  result and one for a failure;
* :mod:`~skills_core.host.session`: the load session of one skill, ``(origin, uri)``; **every
  decision that moves a skill's state is made here** (loading, approval, changed entries,
  re-approval, closing); it writes nothing host-wide, and returns what it wants done as intents;
* :mod:`~skills_core.host.intents`: those intents (send this request, open or withdraw a prompt,
  record an approval, charge and keep fetched bytes, drop a stale cached copy), small frozen
  values, and the read-only views a session reads the router's state through;
* :mod:`~skills_core.host.carrier`: the one place a session's intents are carried out against the
  router's state, and the map of live sessions kept;
* :mod:`~skills_core.host.states`: the states, the inputs and the transition table, and the
  machine that applies it (a missing pair is a ``LocalProtocolError`` and the ERROR state);
* :mod:`~skills_core.host.window`: the acting window a session opens: its held entry, and the
  reads, failures and directory listings under it (none of which moves the state);
* :mod:`~skills_core.host.intake`: entries from listing pages and ``skills/get`` answers, into the
  registry, the approvals and the sessions;
* :mod:`~skills_core.host.listing`: one origin's ``skills/list`` walk in progress, and its budgets;
* :mod:`~skills_core.host.reads`: reads that are not a load (previews, ordinary resources);
* :mod:`~skills_core.host.requests`: one small record per kind of outstanding request and prompt;
* :mod:`~skills_core.host.context`: the host-wide state itself (origin records, tokens, prompts,
  policy, approvals, cache) and the effect builders every part uses;
* :mod:`~skills_core.host.effects` and :mod:`~skills_core.host.codes`: the effects, in five families
  (outbound request, prompt, delivery, outcome, problem), and the codes they carry;
* :mod:`~skills_core.host.registry`: per-origin registry, name resolution, capped walks;
* :mod:`~skills_core.host.approvals`: approvals bound to ``(uri, digest, size)`` sets, persisted
  as a versioned JSON document, and manifest comparison;
* :mod:`~skills_core.host.gates`: permission-widening fields and the code-execution gate;
* :mod:`~skills_core.host.cache`: cache keys and paths, the store interface, re-verification;
* :mod:`~skills_core.host.cache_store`: the disk store, the host's only I/O module;
* :mod:`~skills_core.host.framing`: the model-facing, origin-tagged text;
* :mod:`~skills_core.host.driver`: the stdio handshake, and the pump over live connections;
* :mod:`~skills_core.host.policy`: every knob, failing closed by default.

The disk store is not imported here, so importing the host does no I/O set-up; import
``skills_core.host.cache_store`` when a disk cache is wanted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # type checkers see what runs; names load on first use (PEP 562)
    from .approvals import APPROVALS_FORMAT_VERSION as APPROVALS_FORMAT_VERSION
    from .approvals import ApprovalRecord as ApprovalRecord
    from .approvals import ApprovalsFileError as ApprovalsFileError
    from .approvals import ApprovalStore as ApprovalStore
    from .approvals import ManifestChanges as ManifestChanges
    from .approvals import manifest_changes as manifest_changes
    from .cache import CacheLocation as CacheLocation
    from .cache import CacheStore as CacheStore
    from .cache import MemoryCacheStore as MemoryCacheStore
    from .cache import VerifiedCache as VerifiedCache
    from .cache import cache_relpath as cache_relpath
    from .cache import parse_cache_relpath as parse_cache_relpath
    from .codes import ApprovalReason as ApprovalReason
    from .codes import CloseReason as CloseReason
    from .codes import DeclineReason as DeclineReason
    from .codes import DeliveryKind as DeliveryKind
    from .codes import FailureSource as FailureSource
    from .codes import NoticeCode as NoticeCode
    from .codes import NoticeLevel as NoticeLevel
    from .codes import RefusalCode as RefusalCode
    from .codes import StopReason as StopReason
    from .effects import ApprovalGranted as ApprovalGranted
    from .effects import ApprovalRevoked as ApprovalRevoked
    from .effects import ApprovalWithdrawn as ApprovalWithdrawn
    from .effects import Candidate as Candidate
    from .effects import Connected as Connected
    from .effects import DeliverToModel as DeliverToModel
    from .effects import Delivery as Delivery
    from .effects import DirectoryListing as DirectoryListing
    from .effects import Effect as Effect
    from .effects import EntryRejected as EntryRejected
    from .effects import HeldEntryReplaced as HeldEntryReplaced
    from .effects import ListingComplete as ListingComplete
    from .effects import ListingPartial as ListingPartial
    from .effects import LoadDeclined as LoadDeclined
    from .effects import LoadFailed as LoadFailed
    from .effects import NameCollision as NameCollision
    from .effects import NotASkill as NotASkill
    from .effects import Notice as Notice
    from .effects import OutboundRequest as OutboundRequest
    from .effects import Outcome as Outcome
    from .effects import PreviewReady as PreviewReady
    from .effects import Problem as Problem
    from .effects import Prompt as Prompt
    from .effects import ReferenceRejected as ReferenceRejected
    from .effects import Refused as Refused
    from .effects import RegistryUpdated as RegistryUpdated
    from .effects import ReloadRequired as ReloadRequired
    from .effects import RequestApproval as RequestApproval
    from .effects import RequestCrossOriginApproval as RequestCrossOriginApproval
    from .effects import RequestFailed as RequestFailed
    from .effects import ResponseDiscarded as ResponseDiscarded
    from .effects import SendRequest as SendRequest
    from .effects import SkillChanged as SkillChanged
    from .effects import SkillConfirmed as SkillConfirmed
    from .effects import SkillLoaded as SkillLoaded
    from .effects import UnexpectedResponse as UnexpectedResponse
    from .effects import VerificationFailed as VerificationFailed
    from .effects import WindowClosed as WindowClosed
    from .gates import DEFAULT_WIDENING_FIELDS as DEFAULT_WIDENING_FIELDS
    from .gates import ExecDecision as ExecDecision
    from .gates import ExecGateResult as ExecGateResult
    from .gates import SkillPermissions as SkillPermissions
    from .policy import CrossOriginPolicy as CrossOriginPolicy
    from .policy import HostPolicy as HostPolicy
    from .registry import CatalogItem as CatalogItem
    from .registry import ListingWalk as ListingWalk
    from .registry import Registry as Registry
    from .registry import Resolution as Resolution
    from .registry import ResolutionStatus as ResolutionStatus
    from .registry import check_label as check_label
    from .router import Host as Host
    from .session import WindowView as WindowView
    from .states import TRANSITIONS as TRANSITIONS
    from .states import LoadInput as LoadInput
    from .states import LoadState as LoadState
    from .states import LoadStateMachine as LoadStateMachine
    from .states import transition_diagram as transition_diagram
    from .watch import ChangeWatch as ChangeWatch
    from .watch import SkillsChanged as SkillsChanged

# The host loads its modules when a name is first asked for: ``import skills_core.host.policy``
# (or ``serve`` sizing its catalog) does not import the router and everything behind it.
_LAZY: dict[str, str] = {
    "APPROVALS_FORMAT_VERSION": ".approvals",
    "ApprovalRecord": ".approvals",
    "ApprovalsFileError": ".approvals",
    "ApprovalStore": ".approvals",
    "ManifestChanges": ".approvals",
    "manifest_changes": ".approvals",
    "CacheLocation": ".cache",
    "CacheStore": ".cache",
    "MemoryCacheStore": ".cache",
    "VerifiedCache": ".cache",
    "cache_relpath": ".cache",
    "parse_cache_relpath": ".cache",
    "ApprovalReason": ".codes",
    "CloseReason": ".codes",
    "DeclineReason": ".codes",
    "DeliveryKind": ".codes",
    "FailureSource": ".codes",
    "NoticeCode": ".codes",
    "NoticeLevel": ".codes",
    "RefusalCode": ".codes",
    "StopReason": ".codes",
    "ApprovalGranted": ".effects",
    "ApprovalRevoked": ".effects",
    "ApprovalWithdrawn": ".effects",
    "Candidate": ".effects",
    "Connected": ".effects",
    "DeliverToModel": ".effects",
    "Delivery": ".effects",
    "DirectoryListing": ".effects",
    "Effect": ".effects",
    "EntryRejected": ".effects",
    "HeldEntryReplaced": ".effects",
    "ListingComplete": ".effects",
    "ListingPartial": ".effects",
    "LoadDeclined": ".effects",
    "LoadFailed": ".effects",
    "NameCollision": ".effects",
    "NotASkill": ".effects",
    "Notice": ".effects",
    "OutboundRequest": ".effects",
    "Outcome": ".effects",
    "PreviewReady": ".effects",
    "Problem": ".effects",
    "Prompt": ".effects",
    "ReferenceRejected": ".effects",
    "Refused": ".effects",
    "RegistryUpdated": ".effects",
    "ReloadRequired": ".effects",
    "RequestApproval": ".effects",
    "RequestCrossOriginApproval": ".effects",
    "RequestFailed": ".effects",
    "ResponseDiscarded": ".effects",
    "SendRequest": ".effects",
    "SkillChanged": ".effects",
    "ChangeWatch": ".watch",
    "SkillsChanged": ".watch",
    "SkillConfirmed": ".effects",
    "SkillLoaded": ".effects",
    "UnexpectedResponse": ".effects",
    "VerificationFailed": ".effects",
    "WindowClosed": ".effects",
    "DEFAULT_WIDENING_FIELDS": ".gates",
    "ExecDecision": ".gates",
    "ExecGateResult": ".gates",
    "SkillPermissions": ".gates",
    "CrossOriginPolicy": ".policy",
    "HostPolicy": ".policy",
    "CatalogItem": ".registry",
    "ListingWalk": ".registry",
    "Registry": ".registry",
    "Resolution": ".registry",
    "ResolutionStatus": ".registry",
    "check_label": ".registry",
    "Host": ".router",
    "WindowView": ".session",
    "TRANSITIONS": ".states",
    "LoadInput": ".states",
    "LoadState": ".states",
    "LoadStateMachine": ".states",
    "transition_diagram": ".states",
}


if not TYPE_CHECKING:  # type checkers see the imports above; a typo stays a type error
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)

__all__ = [
    # the state machine
    "Host",
    "HostPolicy",
    "CrossOriginPolicy",
    "LoadState",
    "LoadInput",
    "TRANSITIONS",
    "LoadStateMachine",
    "transition_diagram",
    "WindowView",
    # effects: the base, the five families, every effect
    "Effect",
    "OutboundRequest",
    "Prompt",
    "Delivery",
    "Outcome",
    "Problem",
    "SendRequest",
    "RequestApproval",
    "RequestCrossOriginApproval",
    "ApprovalWithdrawn",
    "ApprovalGranted",
    "ApprovalRevoked",
    "DeliverToModel",
    "DirectoryListing",
    "PreviewReady",
    "Connected",
    "RegistryUpdated",
    "EntryRejected",
    "ListingComplete",
    "ListingPartial",
    "NameCollision",
    "SkillConfirmed",
    "NotASkill",
    "LoadDeclined",
    "LoadFailed",
    "SkillLoaded",
    "HeldEntryReplaced",
    "ReloadRequired",
    "WindowClosed",
    "SkillChanged",
    "VerificationFailed",
    "ReferenceRejected",
    "RequestFailed",
    "Refused",
    "UnexpectedResponse",
    "ResponseDiscarded",
    "Notice",
    # the codes effects carry
    "DeliveryKind",
    "NoticeLevel",
    "NoticeCode",
    "RefusalCode",
    "DeclineReason",
    "FailureSource",
    "CloseReason",
    "ApprovalReason",
    # registry
    "Registry",
    "Candidate",
    "Resolution",
    "ResolutionStatus",
    "CatalogItem",
    "ListingWalk",
    "StopReason",
    "check_label",
    # approvals
    "ApprovalStore",
    "ApprovalRecord",
    "ApprovalsFileError",
    "APPROVALS_FORMAT_VERSION",
    "ManifestChanges",
    "manifest_changes",
    # gates
    "DEFAULT_WIDENING_FIELDS",
    "ExecDecision",
    "ExecGateResult",
    "SkillPermissions",
    # cache
    "CacheStore",
    "MemoryCacheStore",
    "VerifiedCache",
    "CacheLocation",
    "cache_relpath",
    "parse_cache_relpath",
    # changes pushed by servers
    "ChangeWatch",
    "SkillsChanged",
]
