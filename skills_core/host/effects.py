"""Effects: everything the host asks its caller to do or to know.

Theory of operation
-------------------
:class:`~skills_core.host.Host` never does I/O. Each call returns a list of effects, in the order
the caller should carry them out. Every effect is an :class:`Effect` (a frozen, slotted value
object; do not subclass them) with a one-sentence :attr:`~Effect.message` for a person, and
belongs to exactly one family, so a consumer can match by family and look closer only where it
cares:

* :class:`OutboundRequest`: traffic, only ever a :class:`SendRequest` (the caller sends it to the
  named origin and hands the answer back with ``Host.on_response(origin, token, ...)``). Nothing is
  sent unless a call asked for it: no prefetch on connect, listing or approval (VER-12).
* :class:`Prompt`: questions for the user. :class:`RequestApproval` (bound to a manifest) and
  :class:`RequestCrossOriginApproval` (one read, naming both servers) are answered with
  ``Host.approve(prompt_id)`` / ``Host.deny(prompt_id)``; :class:`ApprovalWithdrawn` retracts a
  prompt that became moot.
* :class:`Delivery`: content. :class:`DeliverToModel` and :class:`DirectoryListing` are for the
  model; their ``model_text`` frames the content with its origin label and marks it untrusted
  (ORG-06, SEC-01, SEC-03; see :mod:`skills_core.host.framing`). :class:`PreviewReady` is for the
  user only.
* :class:`Outcome`: facts for the user or the caller's bookkeeping: connections, registry updates,
  a finished listing, loads, windows, changes, approvals recorded or revoked, notices.
* :class:`Problem`: something was refused or failed: rejected entries, a listing stopped early,
  declined or failed loads, verification failures, refused references and calls, failed requests,
  responses the host was not waiting for.

Each fact is reported once: a declined load is one :class:`LoadDeclined`, a listing stopped early
one :class:`ListingPartial`, never also a :class:`Notice` with the same text. Effects carry the
host-assigned origin label wherever a skill or resource is named (ORG-02).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, final

from .._fast import new_blank, slot_setters
from ..entry import SkillEntry, SkillResource
from ..errors import (
    InvalidEntryError,
    RemoteProtocolError,
    URIError,
    VerificationError,
)
from ..jsonvalue import JSONValue
from ..messages import DirectoryChild, ServerFeatures
from .approvals import ManifestChanges
from .codes import (
    ApprovalReason,
    CloseReason,
    DeclineReason,
    DeliveryKind,
    FailureSource,
    NoticeCode,
    NoticeLevel,
    RefusalCode,
    StopReason,
)
from .framing import frame_content, frame_listing

__all__ = [
    "Effect",
    "OutboundRequest",
    "Prompt",
    "Delivery",
    "Outcome",
    "Problem",
    # the codes effects carry, defined in skills_core.host.codes
    "DeliveryKind",
    "NoticeLevel",
    "NoticeCode",
    "RefusalCode",
    "DeclineReason",
    "FailureSource",
    "StopReason",
    "CloseReason",
    "ApprovalReason",
    # a value effects carry
    "Candidate",
    # the effects
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
]


# --- a value effects carry ----------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One skill a name or URI could mean.

    Attributes:
        origin: The server label, or ``None`` for a local filesystem skill of the host.
        name: The skill name.
        uri: The SKILL.md URI (``None`` for a local skill).
        qualified: What to type to mean exactly this skill: ``label:name``, ``label:billing/refunds``
            or ``label:<uri>``; a local skill's bare name.
        location: Where a local skill lives, as the host registered it.
        problem: Why the entry was refused (invalid or over the limits), or None when it is valid.
    """

    origin: str | None
    name: str
    uri: str | None
    qualified: str
    location: str | None = None
    problem: str | None = None

    @property
    def is_local(self) -> bool:
        """True for a local filesystem skill of the host."""
        return self.origin is None


# --- the base and the families -------------------------------------------------------------------


class Effect:
    """Base of every effect; see the module docstring for the families.

    Every effect has a ``message``: one sentence for a person (server text in it is untrusted:
    display it escaped). Some effects compute it from their fields, others carry it as a field.
    """

    __slots__ = ()

    if TYPE_CHECKING:
        # Declared for type checkers only: at run time a property here would become the default
        # value of every subclass's ``message`` field (dataclasses take a field's default from the
        # class attribute of that name, inherited ones included).
        @property
        def message(self) -> str:
            """One sentence for a person (server text in it is untrusted: display it escaped)."""


class OutboundRequest(Effect):
    """Family: a request for the caller to send."""

    __slots__ = ()


class Prompt(Effect):
    """Family: a question for the user, or the retraction of one."""

    __slots__ = ()


class Delivery(Effect):
    """Family: content, for the model (framed, origin-tagged) or for the user (a preview)."""

    __slots__ = ()


class Outcome(Effect):
    """Family: a fact for the user or for the caller's bookkeeping."""

    __slots__ = ()


class Problem(Effect):
    """Family: something was refused or failed; :attr:`message` says what and why."""

    __slots__ = ()


# --- outbound -----------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SendRequest(OutboundRequest):
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

    @property
    def message(self) -> str:
        """What to send, and to whom."""
        uri = self.params.get("uri")
        about = f" for {uri}" if isinstance(uri, str) else ""
        return f"send {self.method}{about} to {self.origin!r}"


# --- prompts ------------------------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestApproval(Prompt):
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
class RequestCrossOriginApproval(Prompt):
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
class ApprovalWithdrawn(Prompt):
    """A prompt no longer applies (the entry changed again, or the origin was forgotten)."""

    prompt_id: int
    reason: str

    @property
    def message(self) -> str:
        """Which prompt, and why it no longer applies."""
        return f"approval prompt {self.prompt_id} withdrawn: {self.reason}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalGranted(Outcome):
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

    @property
    def message(self) -> str:
        """What was approved, and for how long."""
        scope = "recorded" if self.persisted else "for this load only"
        grants = f"; granted: {', '.join(self.granted_fields)}" if self.granted_fields else ""
        run = "; code execution allowed" if self.allow_exec else ""
        return f"approval of {self.uri} from {self.origin!r} {scope}{grants}{run}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRevoked(Outcome):
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
class DeliverToModel(Delivery):
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

    @property
    def message(self) -> str:
        """What was delivered, from where, and whether it was verified."""
        integrity = "verified" if self.verified else "NOT verified"
        cached = ", from the verified cache" if self.from_cache else ""
        return (
            f"{self.kind.value} {self.uri} from {self.origin!r} delivered to the model: "
            f"{len(self.content)} bytes, {integrity}{cached}"
        )


# A verified supporting file's delivery is built by a trusted constructor (skills_core._fast): one
# per file read, up to 512 per skill; bench_host_verify.py prints what the plain constructor
# would cost there.
(
    _SET_ORIGIN,
    _SET_URI,
    _SET_KIND,
    _SET_CONTENT,
    _SET_VERIFIED,
    _SET_SKILL_URI,
    _SET_SKILL_ROOT,
    _SET_FROM_CACHE,
    _SET_TRUST,
) = slot_setters(
    DeliverToModel,
    "origin",
    "uri",
    "kind",
    "content",
    "verified",
    "skill_uri",
    "skill_root",
    "from_cache",
    "trust",
)

#: The member, looked up on its enum class once rather than per delivery.
_SKILL_FILE: Final = DeliveryKind.SKILL_FILE


def skill_file_delivery(
    origin: str, uri: str, content: bytes, skill_uri: str, skill_root: str, *, from_cache: bool
) -> DeliverToModel:
    """``DeliverToModel(kind=SKILL_FILE, verified=True, ...)``: the trusted constructor
    (package-private) of a verified supporting file's delivery.

    Only for a supporting file verified against the held entry (see the invariant in
    :mod:`skills_core.host.window`).
    """
    delivery: DeliverToModel = new_blank(DeliverToModel)
    _SET_ORIGIN(delivery, origin)
    _SET_URI(delivery, uri)
    _SET_KIND(delivery, _SKILL_FILE)
    _SET_CONTENT(delivery, content)
    _SET_VERIFIED(delivery, True)
    _SET_SKILL_URI(delivery, skill_uri)
    _SET_SKILL_ROOT(delivery, skill_root)
    _SET_FROM_CACHE(delivery, from_cache)
    _SET_TRUST(delivery, "untrusted")
    return delivery


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class DirectoryListing(Delivery):
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
    def message(self) -> str:
        """What the listing holds, and whether it can be trusted to be complete."""
        source = "from the approved manifest" if self.from_manifest else "from the server"
        text = (
            f"directory {self.uri} of {self.skill_uri} on {self.origin!r}: "
            f"{len(self.children)} entries, {source}"
        )
        if self.looks_changed:
            text += f"; {len(self.hidden)} not approved (hidden), {len(self.missing)} missing"
        if self.dropped:
            text += f"; {len(self.dropped)} malformed children dropped"
        if self.partial:
            text += "; the walk stopped early"
        if not self.verified:
            text += "; not verified (dynamic skill)"
        return text

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
class PreviewReady(Delivery):
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

    @property
    def message(self) -> str:
        """What is ready to inspect, and what to look out for."""
        integrity = "verified" if self.verified else "NOT verified"
        notes = f"; {'; '.join(self.warnings)}" if self.warnings else ""
        return (
            f"preview of {self.uri} from {self.origin!r}: {len(self.content)} bytes, "
            f"{integrity}{notes}"
        )


# --- registry and listing -----------------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Connected(Outcome):
    """An origin was connected (or its capabilities updated)."""

    origin: str
    features: ServerFeatures

    @property
    def message(self) -> str:
        """What the server declared."""
        if not self.features.skills:
            return f"{self.origin!r} connected; its skills are not used (extension not usable)"
        directory = " with directoryRead" if self.features.directory_read else ""
        return f"{self.origin!r} connected: skills extension{directory}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RegistryUpdated(Outcome):
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

    @property
    def message(self) -> str:
        """How many skills were added, changed and removed."""
        return (
            f"{self.origin!r}: {len(self.added)} skills added, {len(self.changed)} changed, "
            f"{len(self.removed)} removed"
        )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class EntryRejected(Problem):
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

    @property
    def message(self) -> str:
        """The server, and every problem."""
        return f"{self.origin!r}: {self.error.message}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ListingComplete(Outcome):
    """A ``skills/list`` walk reached its end (``listed``: the SKILL.md URIs it listed)."""

    origin: str
    pages: int
    entries: int
    listed: frozenset[str] = frozenset()

    @property
    def message(self) -> str:
        """How far the walk went."""
        return f"{self.origin!r}: listing complete ({self.pages} pages, {self.entries} entries)"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ListingPartial(Problem):
    """A ``skills/list`` walk stopped early; what was registered stays usable (LIST-05, WG-05)."""

    origin: str
    reason: StopReason
    pages: int
    entries: int
    message: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class NameCollision(Outcome):
    """A skill name is served by more than one origin (or also by a local skill) (ORG-15).

    Bare-name resolution of ``name`` is never silent from now on: every candidate is named.
    """

    name: str
    candidates: tuple[Candidate, ...]

    @property
    def message(self) -> str:
        """Every candidate, so the user can say which."""
        listed = ", ".join(
            c.qualified + (" (local)" if c.is_local else "") for c in self.candidates
        )
        return f"the skill name {self.name!r} is served by more than one origin: {listed}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillConfirmed(Outcome):
    """``skills/get`` confirmed an explicit reference as a skill (URI-16)."""

    origin: str
    uri: str
    entry: SkillEntry

    @property
    def message(self) -> str:
        """What was confirmed."""
        return f"{self.uri} is a skill served by {self.origin!r}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class NotASkill(Outcome):
    """The server says the URI is not a skill it serves (-32602 to ``skills/get``; ERR-07).

    The URI stays readable as an ordinary resource; nothing was registered.
    """

    origin: str
    uri: str
    message: str


# --- loading and the acting window --------------------------------------------------------------


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoadDeclined(Problem):
    """The skill will not be loaded, before or instead of any read."""

    origin: str
    uri: str
    reason: DeclineReason
    message: str
    error: InvalidEntryError | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class LoadFailed(Problem):
    """A load was attempted and did not complete (verification failure that stands, or an error)."""

    origin: str
    uri: str
    message: str
    error: VerificationError | RemoteProtocolError | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillLoaded(Outcome):
    """The skill was delivered and the acting window opened on the held entry (VER-04, HELD-01)."""

    origin: str
    uri: str
    entry: SkillEntry

    @property
    def message(self) -> str:
        """What was loaded."""
        return f"loaded {self.uri} from {self.origin!r}; its acting window is open"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class HeldEntryReplaced(Outcome):
    """After re-approval, reads continue under the refreshed entry (HELD-05)."""

    origin: str
    uri: str
    entry: SkillEntry

    @property
    def message(self) -> str:
        """What continues."""
        return f"{self.uri} from {self.origin!r} re-approved; reads continue under the new entry"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReloadRequired(Outcome):
    """The re-approved skill's SKILL.md changed: the copy in context is stale (HELD-07).

    Reads are refused until ``Host.load`` delivers the new SKILL.md.
    """

    origin: str
    uri: str
    message: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class WindowClosed(Outcome):
    """The acting window on a skill closed."""

    origin: str
    uri: str
    reason: CloseReason

    @property
    def message(self) -> str:
        """Which window closed, and why."""
        return f"the acting window on {self.uri} from {self.origin!r} closed ({self.reason.value})"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillChanged(Outcome):
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
class VerificationFailed(Problem):
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

    @property
    def message(self) -> str:
        """The failure, and what the host does about it."""
        cached = " (the cached copy was discarded)" if self.source is FailureSource.CACHE else ""
        refresh = "; refreshing the entry" if self.refreshing else ""
        return f"{self.origin!r}: {self.error.message}{cached}{refresh}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReferenceRejected(Problem):
    """A reference was refused before anything was sent (URI-19..URI-24)."""

    origin: str
    skill_uri: str
    ref: str
    error: URIError

    @property
    def message(self) -> str:
        """The reference, and why it was refused."""
        return f"reference {self.ref!r} of {self.skill_uri} refused: {self.error.message}"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFailed(Problem):
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
class Refused(Problem):
    """The call was not allowed now; nothing else happened and no state changed."""

    code: RefusalCode
    message: str
    origin: str | None = None
    uri: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class UnexpectedResponse(Problem):
    """``on_response`` got a token the host is not waiting for (unknown, duplicate, wrong origin)."""

    origin: str
    token: int
    message: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseDiscarded(Outcome):
    """A response arrived for a request whose purpose lapsed (the skill changed or closed)."""

    origin: str
    uri: str | None
    message: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Notice(Outcome):
    """Something to tell the user.

    Attributes:
        level: How prominent.
        code: What the notice is about.
        message: The text.
        origin: Server label, when about one.
        uri: URI, when about one.
    """

    level: NoticeLevel
    code: NoticeCode
    message: str
    origin: str | None = None
    uri: str | None = None
