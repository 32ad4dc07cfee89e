"""Effects: everything the host state machine asks its caller to do or to know.

Theory of operation
-------------------
:class:`~skills_core.host.machine.Host` never does I/O. Each call returns a list of effects, in the
order the caller should carry them out:

* **Outbound traffic** is only ever a :class:`SendRequest` (the caller sends it to the named origin
  and hands the answer back with ``Host.on_response(origin, token, ...)``). Nothing is sent unless a
  call asked for it: no prefetch on connect, listing or approval (VER-12).
* **Questions for the user**: :class:`RequestApproval` (bound to a manifest) and
  :class:`RequestCrossOriginApproval` (one read, naming both servers); answered with
  ``Host.approve(prompt_id)`` / ``Host.deny(prompt_id)``. :class:`ApprovalWithdrawn` retracts a
  prompt that became moot.
* **Content for the model**: :class:`DeliverToModel` and :class:`DirectoryListing`. Their
  ``model_text`` frames the content with its origin label and marks it untrusted (ORG-06, SEC-01,
  SEC-03); see :mod:`skills_core.host.framing`. :class:`PreviewReady` is for the user only.
* **Facts for the user or the caller's bookkeeping**: registry updates, rejected entries, listing
  outcomes, name collisions, load outcomes, changes, revocations, verification failures, refusals
  and notices.

Every effect is a frozen, slotted value object; do not subclass them. :data:`Effect` is their union.
Effects carry the host-assigned origin label wherever a skill or resource is named (ORG-02).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal, TypeAlias, final

from skills_core.entry import SkillEntry, SkillResource
from skills_core.errors import (
    InvalidEntryError,
    RemoteProtocolError,
    URIError,
    VerificationError,
)
from skills_core.host.approvals import ManifestChanges
from skills_core.host.framing import frame_content, frame_listing
from skills_core.host.registry import Candidate, StopReason
from skills_core.jsonvalue import JSONValue
from skills_core.messages import DirectoryChild, ServerFeatures

__all__ = [
    "DeliveryKind",
    "NoticeLevel",
    "RefusalCode",
    "DeclineReason",
    "FailureSource",
    "StopReason",
    "CloseReason",
    "ApprovalReason",
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
    "Effect",
]


class DeliveryKind(enum.StrEnum):
    """What a :class:`DeliverToModel` carries."""

    #: A loaded skill's SKILL.md, verified against its held entry (VER-04).
    SKILL = "skill"
    #: A supporting file read while acting on a skill; a nested SKILL.md read this way is ordinary
    #: markdown whose frontmatter is not acted on (APR-05).
    SKILL_FILE = "skill-file"
    #: An ordinary resource read outside any skill (VER-02, VER-03); never a load.
    RESOURCE = "resource"


class NoticeLevel(enum.StrEnum):
    """How prominent a :class:`Notice` is."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class RefusalCode(enum.StrEnum):
    """Why a call was refused without any other effect (see :class:`Refused`)."""

    UNKNOWN_ORIGIN = "unknown-origin"
    NOT_CONNECTED = "not-connected"
    #: The origin has not declared the extension (CAP-08).
    EXTENSION_NOT_DECLARED = "extension-not-declared"
    #: The origin has not declared ``directoryRead`` and no manifest can answer (CAP-06).
    DIRECTORY_READ_NOT_DECLARED = "directory-read-not-declared"
    #: ``skills/get`` needs a SKILL.md URI (GET-02).
    NOT_SKILL_MD_URI = "not-skill-md-uri"
    LISTING_IN_PROGRESS = "listing-in-progress"
    LOAD_IN_PROGRESS = "load-in-progress"
    ALREADY_ACTING = "already-acting"
    #: The call needs an open acting window on the skill.
    NOT_ACTING = "not-acting"
    #: The skill changed and its approval was revoked; reads and execution wait (HELD-09).
    REAPPROVAL_REQUIRED = "reapproval-required"
    #: The skill's SKILL.md changed; the window is stale until the skill is loaded again (HELD-07).
    RELOAD_REQUIRED = "reload-required"
    #: An absolute URI that is not inside the acting skill: another skill or an ordinary resource,
    #: reached through its own load or a generic read (URI-21, SIL-26).
    NOT_IN_SKILL = "not-in-skill"
    NOT_A_DIRECTORY = "not-a-directory"
    UNKNOWN_PROMPT = "unknown-prompt"
    REFRESH_IN_FLIGHT = "refresh-in-flight"
    #: A dynamic skill reached the cumulative 16 MiB it may deliver (ENTRY-22, HELD-08).
    SKILL_SIZE_LIMIT = "skill-size-limit"
    #: The per-server budget of fetched skill bytes is spent (WG-04).
    SERVER_BUDGET = "server-budget"
    #: The file is larger than the host's per-file cap (WG-03).
    FILE_TOO_LARGE = "file-too-large"
    #: Host policy forbids reads from one origin driven by another's skill (ORG-08).
    CROSS_ORIGIN_DENIED = "cross-origin-denied"
    #: A read of an ordinary resource was larger than the host accepts (WG-03).
    RESOURCE_TOO_LARGE = "resource-too-large"


class DeclineReason(enum.StrEnum):
    """Why a skill will not be loaded (see :class:`LoadDeclined`)."""

    #: ``resources`` is ``"dynamic"`` and policy does not allow such skills (ENTRY-16).
    DYNAMIC = "dynamic"
    #: The user refused the approval prompt.
    DENIED = "denied"
    #: Explicit host policy forbids this origin or skill (SEC-04).
    POLICY = "policy"
    #: The entry is malformed (ENTRY-07, SIL-12, SIL-13).
    INVALID_ENTRY = "invalid-entry"
    #: The entry exceeds the per-skill limits (ENTRY-20, ENTRY-21).
    OVER_LIMIT = "over-limit"
    #: The server answered ``skills/get`` with -32602 (ERR-07).
    NOT_A_SKILL = "not-a-skill"
    #: SKILL.md is larger than the host's per-file cap (WG-03).
    FILE_TOO_LARGE = "file-too-large"
    #: The per-server budget of fetched skill bytes is spent (WG-04).
    SERVER_BUDGET = "server-budget"


class FailureSource(enum.StrEnum):
    """Where bytes that failed verification came from."""

    SERVER = "server"
    #: A cached copy no longer matches the entry; it was discarded and is fetched again (CACHE-02).
    CACHE = "cache"
    #: No bytes at all: a read of a file the held entry does not list (HELD-03, HELD-04).
    MANIFEST = "manifest"


class CloseReason(enum.StrEnum):
    """Why an acting window closed (see :class:`WindowClosed`)."""

    #: The caller closed it (the SKILL.md left the model's context; HELD-01, SIL-32).
    CLOSED = "closed"
    #: The user refused to re-approve the changed skill.
    DENIED = "denied"
    #: The refreshed entry is invalid, over the limits, dynamic against policy, or gone.
    ENTRY_UNUSABLE = "entry-unusable"
    #: The origin was forgotten (CACHE-07).
    FORGOTTEN = "forgotten"


class ApprovalReason(enum.StrEnum):
    """Why an approval prompt is shown."""

    #: No approval exists for this skill yet.
    NEW = "new"
    #: An earlier approval was revoked because the manifest changed (APR-02, DIR-15).
    CHANGED = "changed"
    #: The skill is dynamic: approval covers this one load only and is never persisted (APR-04).
    DYNAMIC = "dynamic"


# --- outbound -----------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SendRequest:
    """Send one JSON-RPC request to an origin and pass its answer to ``Host.on_response``.

    Attributes:
        origin: The host-assigned label of the server to send to.
        token: Host-allocated opaque int; hand it back with the response (not a JSON-RPC id).
        method: The JSON-RPC method.
        params: The request params, ``_meta`` included for modern origins (CAP-10). Do not mutate.
    """

    origin: str
    token: int
    method: str
    params: dict[str, JSONValue]


# --- prompts ------------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestApproval:
    """Ask the user to approve loading a skill, bound to the manifest shown (APR-01).

    Answer with ``Host.approve(prompt_id, grant_fields=..., allow_exec=...)`` or
    ``Host.deny(prompt_id)``.

    Attributes:
        prompt_id: Host-allocated prompt identifier.
        origin: The label of the server serving the skill (shown to the user; ORG-16).
        uri: The skill's SKILL.md URI.
        name: ``frontmatter.name`` (untrusted text).
        description: ``frontmatter.description`` (untrusted text).
        manifest: Every file with its size and digest, or ``"dynamic"``.
        total_size: Sum of the sizes (0 for a dynamic skill).
        reason: Why the prompt is shown.
        changes: What changed since the last approval of this skill, when there was one.
        frontmatter: The entry's frontmatter as JSON (what the user approves the model receives).
        widening_fields: Frontmatter fields present that would widen permissions or run code
            (``allowed-tools``, ``hooks``, ...); each is ignored unless granted (APR-08, APR-09).
        dynamic: True for a dynamic skill: the approval covers one load and is never persisted.
    """

    prompt_id: int
    origin: str
    uri: str
    name: str
    description: str
    manifest: tuple[SkillResource, ...] | Literal["dynamic"]
    total_size: int
    reason: ApprovalReason
    changes: ManifestChanges | None
    frontmatter: dict[str, JSONValue]
    widening_fields: tuple[str, ...]
    dynamic: bool

    @property
    def message(self) -> str:
        """One paragraph for a terminal prompt, naming the server and what changed."""
        head = f"Load skill {self.name!r} ({self.uri}) from MCP server {self.origin!r}?"
        if self.dynamic:
            head += " Its content is generated: nothing can be verified; approval is for this load."
        elif self.changes is not None and self.changes:
            head += f" It changed since it was approved: {self.changes.describe()}."
        if self.widening_fields:
            head += (
                " It asks for: "
                + ", ".join(self.widening_fields)
                + " (ignored unless granted separately)."
            )
        return head


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestCrossOriginApproval:
    """Ask the user to allow one read from another server, driven by a skill (ORG-08, ORG-09).

    The approval is single-use and never persisted (SIL-25).

    Attributes:
        prompt_id: Host-allocated prompt identifier.
        from_origin: The label of the server whose skill is asking.
        skill_uri: That skill.
        to_origin: The label of the server that would be read.
        uri: The resource URI that would be read.
    """

    prompt_id: int
    from_origin: str
    skill_uri: str
    to_origin: str
    uri: str

    @property
    def message(self) -> str:
        """The prompt text; it names both servers (ORG-09)."""
        return (
            f"Skill {self.skill_uri} from MCP server {self.from_origin!r} wants to read "
            f"{self.uri} from a different MCP server, {self.to_origin!r}. Allow this one read?"
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalWithdrawn:
    """A prompt no longer applies (the entry changed again, or the origin was forgotten)."""

    prompt_id: int
    reason: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalGranted:
    """An approval was recorded.

    Attributes:
        origin: Server label.
        uri: Skill URI.
        persisted: True when recorded in the approval store (save it); False for a dynamic skill's
            per-load approval (APR-04) or a policy that needs no prompts.
        granted_fields: Permission-widening fields the user granted (APR-09).
        allow_exec: Whether code execution while acting on the skill was approved (APR-13).
    """

    origin: str
    uri: str
    persisted: bool
    granted_fields: tuple[str, ...]
    allow_exec: bool


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRevoked:
    """A stored approval no longer applies because the skill's manifest changed (APR-02).

    Attributes:
        origin: Server label.
        uri: Skill URI.
        changes: Approved set → new set (``to_dynamic`` when the skill became dynamic).
    """

    origin: str
    uri: str
    changes: ManifestChanges

    @property
    def message(self) -> str:
        """Names what changed."""
        return f"approval of {self.uri} from {self.origin!r} revoked: {self.changes.describe()}"


# --- content for the model ----------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DeliverToModel:
    """Place content in the model's context, tagged with its origin.

    ``verified=True`` is only ever produced for bytes that passed size and digest verification
    against the held (or being-loaded), approved entry of the same origin; ``verified=False`` only
    for explicit ordinary resource reads and dynamic skills, and ``model_text`` says so.

    Attributes:
        origin: Host-assigned label of the server the bytes came from (ORG-06).
        uri: The resource URI read.
        kind: What the content is.
        content: The raw bytes (use :attr:`text` or :attr:`model_text`).
        verified: See above.
        skill_uri: The skill the content belongs to (``None`` for ordinary resources).
        skill_root: That skill's root directory URI.
        from_cache: Served from the verified cache; still MCP-origin for every purpose (CACHE-05).
        trust: Always ``"untrusted"`` (SEC-01).
    """

    origin: str
    uri: str
    kind: DeliveryKind
    content: bytes
    verified: bool
    skill_uri: str | None
    skill_root: str | None
    from_cache: bool = False
    trust: Literal["untrusted"] = "untrusted"

    @property
    def text(self) -> str | None:
        """The content as text, or None when it is not strict UTF-8."""
        try:
            return self.content.decode("utf-8")
        except UnicodeDecodeError:
            return None

    @property
    def model_text(self) -> str:
        """The content framed for the model: origin, kind, integrity, untrusted; no role marker."""
        return frame_content(
            origin=self.origin,
            uri=self.uri,
            kind=self.kind.value,
            content=self.content,
            verified=self.verified,
            skill_uri=self.skill_uri,
            skill_root=self.skill_root,
        )


# A frozen dataclass's __init__ sets each field through object.__setattr__ after parsing keyword
# arguments; setting the slots through their descriptors builds the same object several times
# faster. The host delivers one DeliverToModel per file read (up to 512 per skill).
_set_deliver_origin = DeliverToModel.__dict__["origin"].__set__
_set_deliver_uri = DeliverToModel.__dict__["uri"].__set__
_set_deliver_kind = DeliverToModel.__dict__["kind"].__set__
_set_deliver_content = DeliverToModel.__dict__["content"].__set__
_set_deliver_verified = DeliverToModel.__dict__["verified"].__set__
_set_deliver_skill_uri = DeliverToModel.__dict__["skill_uri"].__set__
_set_deliver_skill_root = DeliverToModel.__dict__["skill_root"].__set__
_set_deliver_from_cache = DeliverToModel.__dict__["from_cache"].__set__
_set_deliver_trust = DeliverToModel.__dict__["trust"].__set__


def _skill_file_delivery(
    origin: str, uri: str, content: bytes, skill_uri: str, skill_root: str, *, from_cache: bool
) -> DeliverToModel:
    """``DeliverToModel(kind=SKILL_FILE, verified=True, ...)``, built faster (package-private).

    Only for a supporting file verified against the held entry (see the invariant in
    :mod:`skills_core.host.machine`).
    """
    effect = object.__new__(DeliverToModel)
    _set_deliver_origin(effect, origin)
    _set_deliver_uri(effect, uri)
    _set_deliver_kind(effect, DeliveryKind.SKILL_FILE)
    _set_deliver_content(effect, content)
    _set_deliver_verified(effect, True)
    _set_deliver_skill_uri(effect, skill_uri)
    _set_deliver_skill_root(effect, skill_root)
    _set_deliver_from_cache(effect, from_cache)
    _set_deliver_trust(effect, "untrusted")
    return effect


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DirectoryListing:
    """What a directory of an acting skill contains, as far as the model may know.

    For a skill with a manifest, ``children`` holds only files (and folders holding files) that the
    held manifest lists: a live directory read never extends it (DIR-13, DIR-14, DIR-18).

    Attributes:
        origin: Server label.
        skill_uri: The acting skill.
        uri: The directory URI (no trailing slash).
        children: The children the model may see.
        from_manifest: True when answered from the held entry alone, with no request (DIR-12).
        hidden: Children the server listed that the held manifest lacks (not shown to the model).
        missing: Manifest children the server no longer lists.
        dropped: Reasons for children refused as malformed or outside the directory (WG-01).
        partial: The walk stopped at a cap or a repeated cursor (WG-05).
        verified: False for a dynamic skill, whose listing nothing can check (DIR-19).
    """

    origin: str
    skill_uri: str
    uri: str
    children: tuple[DirectoryChild, ...]
    from_manifest: bool
    hidden: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    partial: bool = False
    verified: bool = True

    @property
    def looks_changed(self) -> bool:
        """The live listing disagrees with the manifest: the skill probably changed (DIR-16)."""
        return bool(self.hidden or self.missing)

    @property
    def model_text(self) -> str:
        """The listing framed for the model, tagged with its origin."""
        note = None
        if self.looks_changed:
            note = (
                "Note: the server's current view of this directory differs from the approved "
                "skill; only approved files are shown. Refreshing the skill needs re-approval."
            )
        elif not self.verified:
            note = "Note: this skill is dynamic; this listing is not verified."
        return frame_listing(
            origin=self.origin,
            directory_uri=self.uri,
            skill_uri=self.skill_uri,
            names=((c.name, c.is_directory) for c in self.children),
            note=note,
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PreviewReady:
    """Content fetched and verified for the user to inspect; nothing reaches the model (SEC-05).

    Attributes:
        origin: Server label.
        skill_uri: The skill.
        uri: The file.
        content: The raw bytes.
        verified: Checked against the entry's size and digest (and frontmatter for SKILL.md).
        warnings: Hidden-text findings (WG-10).
    """

    origin: str
    skill_uri: str
    uri: str
    content: bytes
    verified: bool
    warnings: tuple[str, ...]


# --- registry and listing -----------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Connected:
    """An origin was connected (or its capabilities updated)."""

    origin: str
    features: ServerFeatures


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RegistryUpdated:
    """Entries were recorded under ``(origin, uri)``; nothing was fetched (LIST-13).

    Attributes:
        origin: Server label.
        added: URIs new to the registry.
        changed: URIs whose entry differs from the one recorded before.
        removed: URIs removed because the server says they are not skills (ERR-07).
    """

    origin: str
    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...] = ()


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class EntryRejected:
    """An entry was kept out of the registry, with why (ENTRY-07, ENTRY-21, SIL-12, SIL-13).

    Attributes:
        origin: Server label.
        uri: The entry's URI (or the requested URI for ``skills/get``), if known.
        error: Every problem; an :class:`~skills_core.errors.EntryOverLimitError` when over limits.
    """

    origin: str
    uri: str | None
    error: InvalidEntryError

    @property
    def over_limit(self) -> bool:
        """True when the entry is well-formed but over the limits."""
        return not self.error.malformed


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ListingComplete:
    """A ``skills/list`` walk reached its end."""

    origin: str
    pages: int
    entries: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ListingPartial:
    """A ``skills/list`` walk stopped early; what was registered stays usable (LIST-05, WG-05)."""

    origin: str
    reason: StopReason
    pages: int
    entries: int
    message: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class NameCollision:
    """A skill name is served by more than one origin (or also by a local skill) (ORG-15).

    Bare-name resolution of ``name`` is never silent from now on: every candidate is named.
    """

    name: str
    candidates: tuple[Candidate, ...]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillConfirmed:
    """``skills/get`` confirmed an explicit reference as a skill (URI-16)."""

    origin: str
    uri: str
    entry: SkillEntry


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class NotASkill:
    """The server says the URI is not a skill it serves (-32602 to ``skills/get``; ERR-07).

    The URI stays readable as an ordinary resource; nothing was registered.
    """

    origin: str
    uri: str
    message: str


# --- loading and the acting window --------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoadDeclined:
    """The skill will not be loaded, before or instead of any read."""

    origin: str
    uri: str
    reason: DeclineReason
    message: str
    error: InvalidEntryError | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoadFailed:
    """A load was attempted and did not complete (verification failure that stands, or an error)."""

    origin: str
    uri: str
    message: str
    error: VerificationError | RemoteProtocolError | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillLoaded:
    """The skill was delivered and the acting window opened on the held entry (VER-04, HELD-01)."""

    origin: str
    uri: str
    entry: SkillEntry


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HeldEntryReplaced:
    """After re-approval, reads continue under the refreshed entry (HELD-05)."""

    origin: str
    uri: str
    entry: SkillEntry


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReloadRequired:
    """The re-approved skill's SKILL.md changed: the copy in context is stale (HELD-07).

    Reads are refused until ``Host.load`` delivers the new SKILL.md.
    """

    origin: str
    uri: str
    message: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class WindowClosed:
    """The acting window on a skill closed."""

    origin: str
    uri: str
    reason: CloseReason


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillChanged:
    """The skill changed since the entry the host holds or is loading (DIR-15, DIR-16).

    Presented as "this skill changed and needs approval again", not as a read error.

    Attributes:
        origin: Server label.
        uri: Skill URI.
        requires_reapproval: A new approval is needed before reads or execution continue.
        changes: Held (or loading) set → new set.
        skill_md_changed: SKILL.md itself changed, so the copy in context is stale (HELD-07).
    """

    origin: str
    uri: str
    requires_reapproval: bool
    changes: ManifestChanges
    skill_md_changed: bool

    @property
    def message(self) -> str:
        """Names what changed."""
        tail = " and needs approval again" if self.requires_reapproval else ""
        return f"skill {self.uri} from {self.origin!r} changed{tail}: {self.changes.describe()}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationFailed:
    """Content did not match the entry; it was not used (VER-06..VER-11, HELD-04).

    Attributes:
        origin: Server label.
        uri: The file.
        skill_uri: The skill whose entry the content was checked against.
        error: kind ``size``, ``digest``, ``unlisted``, ``frontmatter`` or ``content``.
        source: Where the bytes came from.
        refreshing: A ``skills/get`` refresh was sent with this failure (VER-09, VER-16).
    """

    origin: str
    uri: str
    skill_uri: str
    error: VerificationError
    source: FailureSource
    refreshing: bool


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReferenceRejected:
    """A reference was refused before anything was sent (URI-19..URI-24)."""

    origin: str
    skill_uri: str
    ref: str
    error: URIError


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFailed:
    """A request got an error response, a malformed result, or failed in transport.

    Attributes:
        origin: Server label.
        method: The method of the failed request.
        uri: The URI the request was about, if any.
        code: The JSON-RPC error code, when the server answered with one.
        message: What happened.
        error: Why the result was refused, when it was malformed: a protocol error, or for a
            ``resources/read`` a verification error (wrong content URI, several items, text and
            blob together).
    """

    origin: str
    method: str
    uri: str | None
    code: int | None
    message: str
    error: RemoteProtocolError | VerificationError | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Refused:
    """The call was not allowed now; nothing else happened and no state changed."""

    code: RefusalCode
    message: str
    origin: str | None = None
    uri: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class UnexpectedResponse:
    """``on_response`` got a token the host is not waiting for (unknown, duplicate, wrong origin)."""

    origin: str
    token: int
    message: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseDiscarded:
    """A response arrived for a request whose purpose lapsed (the skill changed or closed)."""

    origin: str
    uri: str | None
    message: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """Something to tell the user.

    Attributes:
        level: How prominent.
        code: Stable machine-readable code.
        message: The text.
        origin: Server label, when about one.
        uri: URI, when about one.
    """

    level: NoticeLevel
    code: str
    message: str
    origin: str | None = None
    uri: str | None = None


#: Every effect the host returns.
Effect: TypeAlias = (
    SendRequest
    | RequestApproval
    | RequestCrossOriginApproval
    | ApprovalWithdrawn
    | ApprovalGranted
    | ApprovalRevoked
    | DeliverToModel
    | DirectoryListing
    | PreviewReady
    | Connected
    | RegistryUpdated
    | EntryRejected
    | ListingComplete
    | ListingPartial
    | NameCollision
    | SkillConfirmed
    | NotASkill
    | LoadDeclined
    | LoadFailed
    | SkillLoaded
    | HeldEntryReplaced
    | ReloadRequired
    | WindowClosed
    | SkillChanged
    | VerificationFailed
    | ReferenceRejected
    | RequestFailed
    | Refused
    | UnexpectedResponse
    | ResponseDiscarded
    | Notice
)
