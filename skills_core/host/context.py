"""The host-wide state the router owns, and the effect builders every part of the host uses.

Theory of operation
-------------------
:class:`~skills_core.host.router.Host` routes calls and answers; each skill being loaded or acted
on has a :class:`~skills_core.host.session.LoadSession`. The host-wide state is one
:class:`HostContext`, and only the router's side of the host writes it (the router, the answer
handlers of :mod:`~skills_core.host.answers`, the entry intake, the non-load reads, and the
:mod:`~skills_core.host.carrier`, which carries out what sessions ask for): the policy, the
approval store and the verified cache, the record of each connected origin (:class:`OriginRecord`:
what it declared, whether it is connected, the bytes fetched from it, its listing walk), the
outstanding requests by token, the open prompts by id and the prompt each session has open, and the
refreshing ``skills/get`` in flight per skill (at most one; VER-16). :meth:`HostContext.send` is the
only place a ``SendRequest`` is made, so every request has a token and a record the router can
dispatch its answer by; :meth:`HostContext.open_prompt` the only place a prompt id is given.

A session reads this state only through the read-only views of :mod:`~skills_core.host.intents`
(:class:`HostContext` and :class:`OriginRecord` are what the router passes as them) and writes none
of it.

The few effect builders several parts need (a refusal for a disconnected origin or a spent budget,
a cache failure, a refused reference, a frontmatter check) live here too, so each is written once.
Nothing here moves a load session's state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from ..entry import SkillEntry
from ..errors import (
    FrontmatterError,
    RemoteProtocolError,
    URIError,
    URIErrorKind,
    VerificationError,
    VerificationKind,
)
from ..frontmatter import compare_frontmatter, parse_frontmatter
from ..jsonvalue import JSONValue, thaw_json
from ..messages import ServerFeatures, with_meta
from .approvals import ApprovalStore
from .cache import VerifiedCache
from .codes import FailureSource, RefusalCode
from .effects import (
    Effect,
    ReferenceRejected,
    Refused,
    RequestFailed,
    ResponseDiscarded,
    SendRequest,
    VerificationFailed,
)
from .listing import ListingProgress
from .policy import HostPolicy
from .requests import Key, OpenPrompt, PendingRequest

__all__ = [
    "OriginRecord",
    "HostContext",
    "not_connected",
    "not_acting",
    "over_budget",
    "check_frontmatter",
    "cache_failure",
    "reference_error",
    "protocol_failed",
    "discarded",
]

#: How many frontmatter differences a verification failure spells out before summarising.
_SHOWN_DIFFERENCES: Final = 5


@final
@dataclass(slots=True, eq=False)
class OriginRecord:
    """One connected (or disconnected) origin.

    Attributes:
        label: The host-assigned label.
        features: What it declared at connect.
        meta: The ``_meta`` its modern requests carry (None for a legacy origin; CAP-10).
        connected: False after ``Host.disconnect``: nothing is sent to it.
        bytes_fetched: Skill-file bytes fetched from it, against the per-server budget (WG-04).
        listing: The ``skills/list`` walk in progress, if any.
    """

    label: str
    features: ServerFeatures
    meta: dict[str, JSONValue] | None
    connected: bool = True
    bytes_fetched: int = 0
    listing: ListingProgress | None = None

    def can_fetch(self, size: int, policy: HostPolicy) -> bool:
        """True when ``size`` more bytes stay within the per-server budget (WG-04)."""
        return self.bytes_fetched + size <= policy.per_server_budget_bytes


@final
class HostContext:
    """The host-wide state the router owns; see the module docstring.

    Attributes:
        policy: The policy in force.
        approvals: The approval store.
        cache: The verified cache.
        origins: The record of each origin, by label.
        pending: The outstanding requests, by token.
        prompts: The open prompts, by id.
        asked: The id of the approval prompt each load session has open, by skill.
        refreshing: The token of the refreshing ``skills/get`` in flight, by skill (VER-16).
    """

    __slots__ = (
        "_next_prompt",
        "_next_token",
        "approvals",
        "asked",
        "cache",
        "origins",
        "pending",
        "policy",
        "prompts",
        "refreshing",
    )

    def __init__(self, policy: HostPolicy, approvals: ApprovalStore, cache: VerifiedCache) -> None:
        """Start with no origins, requests or prompts."""
        self.policy = policy
        self.approvals = approvals
        self.cache = cache
        self.origins: dict[str, OriginRecord] = {}
        self.pending: dict[int, PendingRequest] = {}
        self.prompts: dict[int, OpenPrompt] = {}
        self.asked: dict[Key, int] = {}
        self.refreshing: dict[Key, int] = {}
        self._next_token = 1
        self._next_prompt = 1

    def send(
        self, server: OriginRecord, params: dict[str, JSONValue], request: PendingRequest
    ) -> SendRequest:
        """Allocate a token for ``request`` and return the ``SendRequest`` for ``server``."""
        token = self._next_token
        self._next_token += 1
        self.pending[token] = request
        return SendRequest(
            origin=server.label,
            token=token,
            method=request.method.value,
            params=with_meta(params, server.meta),
        )

    def open_prompt(self, prompt: OpenPrompt) -> int:
        """Record an open prompt and return its id."""
        prompt_id = self._next_prompt
        self._next_prompt += 1
        self.prompts[prompt_id] = prompt
        return prompt_id


def not_connected(origin: str, uri: str | None = None) -> Refused:
    """The refusal for a request to the disconnected server ``origin``."""
    return Refused(
        code=RefusalCode.NOT_CONNECTED,
        message=f"{origin!r} is disconnected",
        origin=origin,
        uri=uri,
    )


def over_budget(policy: HostPolicy, origin: str, uri: str) -> Refused:
    """The refusal for a fetch from ``origin`` past the per-server budget (WG-04)."""
    return Refused(
        code=RefusalCode.SERVER_BUDGET,
        message=f"{origin!r} has used its budget of {policy.per_server_budget_bytes} fetched "
        "bytes (WG-04)",
        origin=origin,
        uri=uri,
    )


def check_frontmatter(entry: SkillEntry, data: bytes, *, max_bytes: int) -> None:
    """Parse SKILL.md's frontmatter (at most ``max_bytes``) and compare it with the entry's
    (VER-10, VER-11).

    Raises:
        VerificationError: kind ``frontmatter``, when it cannot be read or differs.
    """
    try:
        parsed = parse_frontmatter(data, max_bytes=max_bytes)
    except FrontmatterError as exc:
        raise VerificationError(
            f"{entry.uri}: frontmatter mismatch: the SKILL.md frontmatter cannot be read "
            f"({exc.message})",
            kind=VerificationKind.FRONTMATTER,
            uri=entry.uri,
        ) from None
    differences = compare_frontmatter(parsed.data, entry.frontmatter)
    if differences:
        shown = "; ".join(str(d) for d in differences[:_SHOWN_DIFFERENCES])
        extra = len(differences) - _SHOWN_DIFFERENCES
        more = f" (and {extra} more)" if extra > 0 else ""
        raise VerificationError(
            f"{entry.uri}: frontmatter mismatch with the entry: {shown}{more}",
            kind=VerificationKind.FRONTMATTER,
            uri=entry.uri,
            expected=thaw_json(entry.frontmatter),
            actual=parsed.data,
        )


def not_acting(origin: str, uri: str) -> Refused:
    """The refusal for a call that needs an open, acting window on the skill."""
    return Refused(
        code=RefusalCode.NOT_ACTING,
        message=f"the host is not acting on {uri} from {origin!r}",
        origin=origin,
        uri=uri,
    )


def cache_failure(origin: str, skill_uri: str, error: VerificationError) -> VerificationFailed:
    """A cached copy no longer verified; it was discarded and is fetched again (CACHE-02)."""
    return VerificationFailed(
        origin=origin,
        uri=error.uri or skill_uri,
        skill_uri=skill_uri,
        error=error,
        source=FailureSource.CACHE,
        refreshing=False,
    )


def reference_error(origin: str, skill_uri: str, ref: str, exc: URIError) -> Effect:
    """A reference that does not resolve inside the skill (URI-19..URI-24, URI-21)."""
    if exc.kind is URIErrorKind.NOT_IN_SKILL:
        return Refused(
            code=RefusalCode.NOT_IN_SKILL,
            message=f"{exc.message} (read it with its own load, or as an ordinary resource)",
            origin=origin,
            uri=exc.value,
        )
    return ReferenceRejected(origin=origin, skill_uri=skill_uri, ref=ref, error=exc)


def protocol_failed(
    request: PendingRequest, exc: RemoteProtocolError | VerificationError
) -> RequestFailed:
    """A result the host could not use at all (malformed)."""
    return RequestFailed(
        origin=request.origin,
        method=request.method.value,
        uri=request.uri,
        code=None,
        message=exc.message,
        error=exc,
    )


def discarded(request: PendingRequest) -> ResponseDiscarded:
    """An answer to a request whose session has moved on since it was sent."""
    return ResponseDiscarded(
        origin=request.origin,
        uri=request.uri,
        message=f"the answer to {request.method.value} {request.uri} arrived after the skill "
        "changed or closed; it was not used",
    )
