"""The host side of the Skills extension: load MCP-served skills safely, sans-IO.

Theory of operation
-------------------
:class:`Host` is the one object a host application drives; every call returns
:mod:`effects <skills_core.host.effects>` for the caller to carry out (send a request, prompt the
user, deliver content to the model tagged with its origin, tell the user something). The map, one
job per module:

* :mod:`~skills_core.host.router`: :class:`Host`, the router: origins, name resolution, prompts,
  and the dispatch of every answer by the kind of request it answers;
* :mod:`~skills_core.host.session`: the load session of one skill, ``(origin, uri)``; **every
  decision that moves a skill's state is made here** (loading, approval, changed entries,
  re-approval, closing);
* :mod:`~skills_core.host.states`: the states, the inputs and the transition table, and the
  machine that applies it (a missing pair is a ``LocalProtocolError`` and the ERROR state);
* :mod:`~skills_core.host.window`: the acting window a session opens: its held entry, and the
  reads, failures and directory listings under it (none of which moves the state);
* :mod:`~skills_core.host.intake`: entries from listing pages and ``skills/get`` answers, into the
  registry, the approvals and the sessions;
* :mod:`~skills_core.host.listing`: one origin's ``skills/list`` walk in progress, and its budgets;
* :mod:`~skills_core.host.reads`: reads that are not a load (previews, ordinary resources);
* :mod:`~skills_core.host.requests`: one small record per kind of outstanding request and prompt;
* :mod:`~skills_core.host.context`: what the router and the sessions share (origin records,
  tokens, prompts, policy, approvals, cache) and the effect builders both use;
* :mod:`~skills_core.host.effects` and :mod:`~skills_core.host.codes`: the effects, in five families
  (outbound request, prompt, delivery, outcome, problem), and the codes they carry;
* :mod:`~skills_core.host.registry`: per-origin registry, name resolution, capped walks;
* :mod:`~skills_core.host.approvals`: approvals bound to ``(uri, digest, size)`` sets, persisted
  as a versioned JSON document, and manifest comparison;
* :mod:`~skills_core.host.gates`: permission-widening fields and the code-execution gate;
* :mod:`~skills_core.host.cache`: cache keys and paths, the store interface, re-verification;
* :mod:`~skills_core.host.cache_store`: the disk store, the host's only I/O module;
* :mod:`~skills_core.host.framing`: the model-facing, origin-tagged text;
* :mod:`~skills_core.host.policy`: every knob, failing closed by default.

The disk store is not imported here, so importing the host does no I/O set-up; import
``skills_core.host.cache_store`` when a disk cache is wanted.
"""

from __future__ import annotations

from skills_core.host.approvals import APPROVALS_FORMAT_VERSION as APPROVALS_FORMAT_VERSION
from skills_core.host.approvals import ApprovalRecord as ApprovalRecord
from skills_core.host.approvals import ApprovalsFileError as ApprovalsFileError
from skills_core.host.approvals import ApprovalStore as ApprovalStore
from skills_core.host.approvals import ManifestChanges as ManifestChanges
from skills_core.host.approvals import manifest_changes as manifest_changes
from skills_core.host.cache import CacheLocation as CacheLocation
from skills_core.host.cache import CacheStore as CacheStore
from skills_core.host.cache import MemoryCacheStore as MemoryCacheStore
from skills_core.host.cache import VerifiedCache as VerifiedCache
from skills_core.host.cache import cache_relpath as cache_relpath
from skills_core.host.cache import parse_cache_relpath as parse_cache_relpath
from skills_core.host.codes import ApprovalReason as ApprovalReason
from skills_core.host.codes import CloseReason as CloseReason
from skills_core.host.codes import DeclineReason as DeclineReason
from skills_core.host.codes import DeliveryKind as DeliveryKind
from skills_core.host.codes import FailureSource as FailureSource
from skills_core.host.codes import NoticeCode as NoticeCode
from skills_core.host.codes import NoticeLevel as NoticeLevel
from skills_core.host.codes import RefusalCode as RefusalCode
from skills_core.host.codes import StopReason as StopReason
from skills_core.host.effects import ApprovalGranted as ApprovalGranted
from skills_core.host.effects import ApprovalRevoked as ApprovalRevoked
from skills_core.host.effects import ApprovalWithdrawn as ApprovalWithdrawn
from skills_core.host.effects import Connected as Connected
from skills_core.host.effects import DeliverToModel as DeliverToModel
from skills_core.host.effects import Delivery as Delivery
from skills_core.host.effects import DirectoryListing as DirectoryListing
from skills_core.host.effects import Effect as Effect
from skills_core.host.effects import EntryRejected as EntryRejected
from skills_core.host.effects import HeldEntryReplaced as HeldEntryReplaced
from skills_core.host.effects import ListingComplete as ListingComplete
from skills_core.host.effects import ListingPartial as ListingPartial
from skills_core.host.effects import LoadDeclined as LoadDeclined
from skills_core.host.effects import LoadFailed as LoadFailed
from skills_core.host.effects import NameCollision as NameCollision
from skills_core.host.effects import NotASkill as NotASkill
from skills_core.host.effects import Notice as Notice
from skills_core.host.effects import OutboundRequest as OutboundRequest
from skills_core.host.effects import Outcome as Outcome
from skills_core.host.effects import PreviewReady as PreviewReady
from skills_core.host.effects import Problem as Problem
from skills_core.host.effects import Prompt as Prompt
from skills_core.host.effects import ReferenceRejected as ReferenceRejected
from skills_core.host.effects import Refused as Refused
from skills_core.host.effects import RegistryUpdated as RegistryUpdated
from skills_core.host.effects import ReloadRequired as ReloadRequired
from skills_core.host.effects import RequestApproval as RequestApproval
from skills_core.host.effects import RequestCrossOriginApproval as RequestCrossOriginApproval
from skills_core.host.effects import RequestFailed as RequestFailed
from skills_core.host.effects import ResponseDiscarded as ResponseDiscarded
from skills_core.host.effects import SendRequest as SendRequest
from skills_core.host.effects import SkillChanged as SkillChanged
from skills_core.host.effects import SkillConfirmed as SkillConfirmed
from skills_core.host.effects import SkillLoaded as SkillLoaded
from skills_core.host.effects import UnexpectedResponse as UnexpectedResponse
from skills_core.host.effects import VerificationFailed as VerificationFailed
from skills_core.host.effects import WindowClosed as WindowClosed
from skills_core.host.gates import DEFAULT_WIDENING_FIELDS as DEFAULT_WIDENING_FIELDS
from skills_core.host.gates import ExecDecision as ExecDecision
from skills_core.host.gates import ExecGateResult as ExecGateResult
from skills_core.host.gates import SkillPermissions as SkillPermissions
from skills_core.host.policy import CrossOriginPolicy as CrossOriginPolicy
from skills_core.host.policy import HostPolicy as HostPolicy
from skills_core.host.registry import Candidate as Candidate
from skills_core.host.registry import CatalogItem as CatalogItem
from skills_core.host.registry import ListingWalk as ListingWalk
from skills_core.host.registry import Registry as Registry
from skills_core.host.registry import RejectedRecord as RejectedRecord
from skills_core.host.registry import Resolution as Resolution
from skills_core.host.registry import ResolutionStatus as ResolutionStatus
from skills_core.host.registry import check_label as check_label
from skills_core.host.router import Host as Host
from skills_core.host.session import WindowView as WindowView
from skills_core.host.states import TRANSITIONS as TRANSITIONS
from skills_core.host.states import LoadInput as LoadInput
from skills_core.host.states import LoadState as LoadState
from skills_core.host.states import LoadStateMachine as LoadStateMachine
from skills_core.host.states import transition_diagram as transition_diagram

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
    "RejectedRecord",
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
]
