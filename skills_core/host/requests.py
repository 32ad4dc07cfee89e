"""The host's outstanding requests and prompts: one small frozen record per kind.

Theory of operation
-------------------
Every ``SendRequest`` the host returns is remembered, under its token, as one of the records below
until its answer (or failure) comes back; the router (:mod:`skills_core.host.router`) dispatches the
answer through a table keyed by the record's type (:mod:`skills_core.host.answers`), so each kind
has exactly one handler for a result and one for a failure. A record holds only what its handler
needs: a request made for a load session (a :class:`SessionRequest`) names **the session** and its
**generation** at the time it was made, and its answer goes to that session only while it is still
in that generation (anything that moves the session bumps it), so an answer to a request made under
an entry that has since changed, or by a session since closed (a new session for the same skill is
another object), is discarded, never delivered. A read under the held entry (:class:`ReadFile`)
also names the entry's row it was sent for, which that generation guarantees is still the held one.

A load session never sends anything itself: the record of a request it wants sent is what it
returns, as an intent (:mod:`skills_core.host.intents`), and the router gives it its token.

Open prompts are records too: :class:`SkillPrompt` (an approval bound to the entry a session is
loading or proposing, in the session's generation when it was shown) and
:class:`CrossOriginPrompt` (one read from another server). Approving a prompt whose session has
moved on is refused, so an approval always binds to the manifest the prompt showed.

Private: the names may change at any time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, TypeAlias, final

from .._fast import new_blank, slot_setters
from ..entry import SkillEntry, SkillResource
from ..errors import quote_for_message
from ..messages import DirectoryChild
from ..spec import Method
from .framing import one_line
from .listing import ListingProgress
from .registry import ListingWalk

__all__ = [
    "Key",
    "PendingRequest",
    "Sender",
    "SessionRequest",
    "ListPage",
    "GetForLoad",
    "GetRefresh",
    "GetConfirm",
    "GetPreview",
    "ReadSkillMd",
    "ReadFile",
    "ReadPreview",
    "ReadResource",
    "ReadDirectory",
    "DirectoryWalk",
    "SkillPrompt",
    "CrossOriginPrompt",
    "OpenPrompt",
    "error_fields",
    "read_file",
]

#: ``(origin label, skill uri)``: the identity of a skill (ORG-01).
Key: TypeAlias = tuple[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingRequest:
    """What every outstanding request records.

    Attributes:
        origin: The label of the server it was sent to.
        uri: The URI it is about (``None`` for ``skills/list``).
    """

    method: ClassVar[Method]
    origin: str
    uri: str | None


class Sender(Protocol):
    """What a request keeps of the load session that made it (a
    :class:`~skills_core.host.session.LoadSession`; this module does not import that one, which
    imports it: the router, which knows both, takes the session back)."""

    @property
    def generation(self) -> int:
        """The session's generation now (a request is current while it equals its own)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRequest(PendingRequest):
    """A request a load session made; its answer is for that session in that generation only.

    Attributes:
        session: The session that made it.
        generation: The session's generation when it was made.
    """

    uri: str
    session: Sender = field(repr=False, compare=False)
    generation: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ListPage(PendingRequest):
    """A page of the ``skills/list`` walk ``listing``."""

    method: ClassVar[Method] = Method.SKILLS_LIST
    listing: ListingProgress


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class GetForLoad(SessionRequest):
    """``skills/get`` for a load session: the entry is unknown, or SKILL.md failed (VER-09)."""

    method: ClassVar[Method] = Method.SKILLS_GET


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class GetRefresh(PendingRequest):
    """``skills/get`` to refresh an entry (GET-07), after ``failure_uri`` failed, if it did."""

    method: ClassVar[Method] = Method.SKILLS_GET
    uri: str
    failure_uri: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class GetConfirm(PendingRequest):
    """``skills/get`` confirming an explicit reference (URI-16)."""

    method: ClassVar[Method] = Method.SKILLS_GET
    uri: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class GetPreview(PendingRequest):
    """``skills/get`` for a preview of a skill not in the registry; ``ref`` is the file."""

    method: ClassVar[Method] = Method.SKILLS_GET
    uri: str
    ref: str | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReadSkillMd(SessionRequest):
    """``resources/read`` of the SKILL.md of ``entry``, which the session is loading."""

    method: ClassVar[Method] = Method.RESOURCES_READ
    entry: SkillEntry


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReadFile(SessionRequest):
    """``resources/read`` of a file of the held entry of ``skill_uri`` (HELD-03).

    Attributes:
        resource: The held entry's row for ``uri`` (None for a dynamic skill, which has none).
    """

    method: ClassVar[Method] = Method.RESOURCES_READ
    skill_uri: str
    resource: SkillResource | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReadPreview(PendingRequest):
    """``resources/read`` for a preview (SEC-05): verified against ``entry``, shown to the user."""

    method: ClassVar[Method] = Method.RESOURCES_READ
    uri: str
    entry: SkillEntry
    resource: SkillResource | None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReadResource(PendingRequest):
    """An ordinary ``resources/read`` outside any skill (VER-02)."""

    method: ClassVar[Method] = Method.RESOURCES_READ
    uri: str


@final
@dataclass(slots=True, eq=False)
class DirectoryWalk:
    """What a paginated directory read has gathered so far (mutable, owned by one request)."""

    walk: ListingWalk
    children: list[DirectoryChild] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ReadDirectory(SessionRequest):
    """A page of ``resources/directory/read`` of a directory of the held entry of ``skill_uri``.

    Attributes:
        gathered: What the pages before this one gathered (shared by every page of the read).
        cursor: The cursor this page is asked for with (None for the first page).
    """

    method: ClassVar[Method] = Method.RESOURCES_DIRECTORY_READ
    skill_uri: str
    gathered: DirectoryWalk
    cursor: str | None = None


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillPrompt:
    """An approval prompt for the session ``key``, shown in its ``generation`` (the router also
    keeps, per session, the id of the prompt it has open: ``HostContext.asked``)."""

    key: Key
    generation: int


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class CrossOriginPrompt:
    """A prompt for one read of ``uri`` from ``to_origin``, driven by the skill ``key`` (ORG-09)."""

    key: Key
    to_origin: str
    uri: str


#: An open prompt.
OpenPrompt: TypeAlias = SkillPrompt | CrossOriginPrompt


# A supporting file's read is the host's hot path (one per file, up to 512 per skill), so its record
# is built by a trusted constructor (skills_core._fast); bench_host_verify.py prints what the
# plain constructor would cost there.
_SET_ORIGIN, _SET_URI, _SET_SESSION, _SET_GENERATION, _SET_SKILL_URI, _SET_RESOURCE = slot_setters(
    ReadFile, "origin", "uri", "session", "generation", "skill_uri", "resource"
)


def read_file(
    origin: str, uri: str, session: Sender, skill_uri: str, resource: SkillResource | None
) -> ReadFile:
    """``ReadFile(origin=origin, uri=uri, session=session, generation=session.generation, ...)``:
    the trusted constructor of the read of ``uri`` in the session's generation now.

    Only for a read the acting window checked: ``uri`` resolved inside the skill and is listed in
    the held entry as ``resource`` (or the skill is dynamic and ``resource`` is None).
    """
    request: ReadFile = new_blank(ReadFile)
    _SET_ORIGIN(request, origin)
    _SET_URI(request, uri)
    _SET_SESSION(request, session)
    _SET_GENERATION(request, session.generation)
    _SET_SKILL_URI(request, skill_uri)
    _SET_RESOURCE(request, resource)
    return request


def error_fields(error: object) -> tuple[int | None, str]:
    """``(code, message)`` of a JSON-RPC error object; tolerant of malformed ones."""
    if not isinstance(error, Mapping):
        return None, f"malformed error response {quote_for_message(error)}"
    code = error.get("code")
    message = error.get("message")
    code_value = code if isinstance(code, int) and not isinstance(code, bool) else None
    text = message if isinstance(message, str) else "error without a message"
    prefix = f"error {code_value}: " if code_value is not None else "error: "
    return code_value, prefix + one_line(text, 300)
