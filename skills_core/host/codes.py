"""The stable, machine-readable codes and reasons that host effects carry.

Theory of operation
-------------------
Programs branch on these, never on message text: why a call was refused (:class:`RefusalCode`), why
a load was declined (:class:`DeclineReason`), why a walk stopped (:class:`StopReason`), why a
window closed (:class:`CloseReason`), why a prompt is shown (:class:`ApprovalReason`), where bytes
that failed verification came from (:class:`FailureSource`), what a delivery carries
(:class:`DeliveryKind`) and what a notice is about (:class:`NoticeCode`, :class:`NoticeLevel`).
Each is a :class:`enum.StrEnum`, so its value is also its wire and log form. The effects that carry
them live in :mod:`skills_core.host.effects`, which re-exports them.
"""

from __future__ import annotations

import enum

__all__ = [
    "DeliveryKind",
    "NoticeLevel",
    "NoticeCode",
    "RefusalCode",
    "DeclineReason",
    "FailureSource",
    "StopReason",
    "CloseReason",
    "ApprovalReason",
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


class NoticeCode(enum.StrEnum):
    """What a :class:`Notice` is about."""

    #: The server's capabilities were not taken at face value (CAP-01, SIL-15, SIL-16).
    CAPABILITIES = "capabilities"
    #: ``Host.forget`` removed an origin's registry, approvals and cached content (CACHE-07).
    ORIGIN_FORGOTTEN = "origin-forgotten"
    #: A refreshed entry is unchanged, so a verification failure stands (VER-16).
    FAILURE_STANDS = "failure-stands"
    #: A live directory read disagrees with the held manifest (DIR-16).
    SKILL_MAY_HAVE_CHANGED = "skill-may-have-changed"
    #: The user refused a cross-origin read (ORG-09).
    CROSS_ORIGIN_DENIED = "cross-origin-denied"
    #: A pump ended while an approval prompt it output was still unanswered.
    PROMPT_UNANSWERED = "prompt-unanswered"


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
    #: The skill's load session is in ERROR (a bug in the host); close it to start again.
    SESSION_FAILED = "session-failed"
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


class StopReason(enum.StrEnum):
    """Why a listing or directory walk stopped early (SIL-17, WG-05)."""

    REPEATED_CURSOR = "repeated-cursor"
    PAGE_CAP = "page-cap"
    ENTRY_CAP = "entry-cap"
    #: The server's entries would hold more manifest rows than its budget, or all servers'
    #: more than the host-wide one (``HostPolicy.max_listed_resources``).
    RESOURCE_BUDGET = "resource-budget"
    #: The same for listing bytes (``HostPolicy.max_listing_bytes``).
    BYTE_BUDGET = "byte-budget"
    MALFORMED_RESULT = "malformed-result"
    REQUEST_FAILED = "request-failed"
