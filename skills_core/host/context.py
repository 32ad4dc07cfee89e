"""What the host's router and its load sessions share.

Theory of operation
-------------------
:class:`~skills_core.host.router.Host` routes calls and answers; each skill being loaded or acted
on has a :class:`~skills_core.host.session.LoadSession`. Both work on one :class:`HostContext`:
the policy, the approval store and the verified cache, the record of each connected origin
(:class:`OriginRecord`: what it declared, whether it is connected, the bytes fetched from it, its
listing walk), the outstanding requests by token, the open prompts by id, the refreshing
``skills/get`` in flight per skill (at most one; VER-16), and the host-wide generation counter.
:meth:`HostContext.send` is the only place a ``SendRequest`` is made, so every request has a token
and a record the router can dispatch its answer by.

The few effect builders both sides need (a refusal for a disconnected origin or a spent budget, a
cache failure, a refused reference, a frontmatter check) live here too, so each is written once.
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
    """The state the router and the load sessions share; see the module docstring."""

    __slots__ = (
        "_generation",
        "_next_prompt",
        "_next_token",
        "approvals",
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
        self.refreshing: dict[Key, int] = {}
        self._next_token = 1
        self._next_prompt = 1
        self._generation = 0

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

    def next_generation(self) -> int:
        """A generation no session has had: one counter for the whole host, so a session closed
        and opened again never reuses one, and an answer to a request of the old session cannot
        pass for the new one."""
        self._generation += 1
        return self._generation

    def over_budget(self, server: OriginRecord, uri: str) -> Refused:
        """The refusal for a fetch past the per-server budget (WG-04)."""
        return Refused(
            code=RefusalCode.SERVER_BUDGET,
            message=f"{server.label!r} has used its budget of "
            f"{self.policy.per_server_budget_bytes} fetched bytes (WG-04)",
            origin=server.label,
            uri=uri,
        )

    def check_frontmatter(self, entry: SkillEntry, data: bytes) -> None:
        """Parse SKILL.md's frontmatter and compare it with the entry's (VER-10, VER-11).

        Raises:
            VerificationError: kind ``frontmatter``, when it cannot be read or differs.
        """
        try:
            parsed = parse_frontmatter(data, max_bytes=self.policy.max_frontmatter_bytes)
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


def not_connected(server: OriginRecord, uri: str | None = None) -> Refused:
    """The refusal for a request to a disconnected server."""
    return Refused(
        code=RefusalCode.NOT_CONNECTED,
        message=f"{server.label!r} is disconnected",
        origin=server.label,
        uri=uri,
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
