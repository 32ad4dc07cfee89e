"""What each answer does: one handler per kind of request for its result, one for its failure.

Theory of operation
-------------------
:meth:`Host.on_response <skills_core.host.router.Host.on_response>` finds the request a response
answers by its token and hands it here, through :data:`ON_RESULT` (a result) or, by way of
:meth:`Answers.failed`, :data:`ON_FAILURE` (an error response, or a request that could not
complete): each maps every record type of :mod:`skills_core.host.requests` to its one handler, a
table rather than an if-chain.

An answer for a load session goes to the session the request names (or its acting window) only
while that session is in the generation the request was made in; otherwise it is discarded
(``ResponseDiscarded``), never delivered. What the session decides is carried out at once
(:mod:`~skills_core.host.carrier`). Answers about entries (``skills/list`` pages, ``skills/get``)
go through the entry intake (:mod:`~skills_core.host.intake`); previews and ordinary reads through
:mod:`~skills_core.host.reads`.

Error codes -32602 (now) and -32002 (2025-11-25) mean "no such resource" (docs/protocol.md#changes): a
``skills/get`` answered so means "not a skill here" (ERR-07), a listed file so means the skill
changed (DIR-17).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, cast, final

from ..spec import ErrorCode
from .carrier import Carrier
from .context import HostContext, discarded
from .effects import Effect, NotASkill, RequestFailed, SkillConfirmed
from .intake import EntryIntake
from .reads import preview_read, take_preview, take_resource
from .requests import (
    GetConfirm,
    GetForLoad,
    GetPreview,
    GetRefresh,
    Key,
    ListPage,
    PendingRequest,
    ReadDirectory,
    ReadFile,
    ReadPreview,
    ReadResource,
    ReadSkillMd,
    SessionRequest,
)
from .session import LoadSession
from .window import ActingWindow

__all__ = ["Answers", "ON_RESULT", "ON_FAILURE", "NOT_FOUND_CODES"]

#: Error codes meaning "no such resource": -32602 now, -32002 in 2025-11-25 (docs/protocol.md#changes).
NOT_FOUND_CODES: Final = frozenset({ErrorCode.INVALID_PARAMS, ErrorCode.LEGACY_RESOURCE_NOT_FOUND})


@final
class Answers:
    """The handlers of answers, by the kind of request answered; see the module docstring."""

    __slots__ = ("_carrier", "_ctx", "_intake", "_sessions")

    def __init__(
        self,
        ctx: HostContext,
        sessions: Mapping[Key, LoadSession],
        intake: EntryIntake,
        carrier: Carrier,
    ) -> None:
        """Answer into ``ctx`` and the router's live ``sessions``, through ``intake``; what a
        session decides goes to ``carrier``."""
        self._ctx = ctx
        self._sessions = sessions
        self._intake = intake
        self._carrier = carrier

    def failed(self, token: int, code: int | None, message: str) -> list[Effect]:
        """The request under ``token`` failed (an error ``code``, or None): it is answered."""
        request = self._ctx.pending.pop(token)
        failed = RequestFailed(
            origin=request.origin,
            method=request.method.value,
            uri=request.uri,
            code=code,
            message=message,
        )
        return ON_FAILURE[type(request)](self, token, request, failed, code in NOT_FOUND_CODES)

    # -- skills/list ----------------------------------------------------------------------------

    def _on_list_page(self, token: int, request: ListPage, result: object) -> list[Effect]:
        server = self._ctx.origins[request.origin]  # forgetting an origin drops its requests
        return self._intake.take_page(server, request, result)

    def _list_failed(
        self, token: int, request: ListPage, failed: RequestFailed, not_found: bool
    ) -> list[Effect]:
        server = self._ctx.origins[request.origin]
        return [failed, self._intake.list_failed(server, request, failed.message)]

    # -- skills/get -----------------------------------------------------------------------------

    def _on_get_for_load(self, token: int, request: GetForLoad, result: object) -> list[Effect]:
        load = _current(request)
        effects, entry = self._intake.take_entry(token, request, result, load)
        if load is None:
            effects.append(discarded(request))
        elif entry is not None:
            effects.extend(self._carrier.run(load, load.on_entry(entry)))
        return effects

    def _on_get_refresh(self, token: int, request: GetRefresh, result: object) -> list[Effect]:
        effects, entry = self._intake.take_entry(token, request, result)
        session = self._sessions.get((request.origin, request.uri))
        if entry is not None and session is not None:
            effects.extend(self._carrier.carry_out(session.refreshed(request, entry)))
        return effects

    def _on_get_confirm(self, token: int, request: GetConfirm, result: object) -> list[Effect]:
        effects, entry = self._intake.take_entry(token, request, result)
        if entry is not None:
            effects.append(SkillConfirmed(origin=request.origin, uri=request.uri, entry=entry))
        return effects

    def _on_get_preview(self, token: int, request: GetPreview, result: object) -> list[Effect]:
        effects, entry = self._intake.take_entry(token, request, result)
        if entry is not None:
            server = self._ctx.origins[request.origin]
            effects.extend(preview_read(self._ctx, server, entry, request.ref))
        return effects

    def _get_failed(
        self,
        token: int,
        request: GetForLoad | GetRefresh | GetConfirm | GetPreview,
        failed: RequestFailed,
        not_found: bool,
    ) -> list[Effect]:
        origin, uri = request.origin, request.uri
        self._intake.refresh_answered(token, (origin, uri))
        load = _current(request) if isinstance(request, GetForLoad) else None
        if not not_found:
            effects: list[Effect] = [failed]
            if load is not None:
                effects.extend(self._carrier.run(load, load.entry_failed(failed.message)))
            return effects
        effects = [NotASkill(origin=origin, uri=uri, message=failed.message)]
        effects.extend(self._intake.not_a_skill(origin, uri))
        if isinstance(request, GetForLoad):
            if load is not None:
                effects.extend(self._carrier.run(load, load.entry_refused(None)))
        else:
            effects.extend(self._intake.unusable(origin, uri, None))
        return effects

    # -- resources/read and resources/directory/read --------------------------------------------

    def _on_skill_md(self, token: int, request: ReadSkillMd, result: object) -> list[Effect]:
        session = _current(request)
        if session is None:
            return [discarded(request)]
        return self._carrier.run(session, session.on_skill_md(request, result))

    def _on_file(self, token: int, request: ReadFile, result: object) -> list[Effect]:
        # The hot path of reading a skill (one answer per file): _current and the window, inlined.
        session = cast(LoadSession, request.session)  # the only kind of sender
        window = session.window
        if window is None or session.generation != request.generation:
            return [discarded(request)]
        return self._carrier.carry_out(window.on_file(request, result))

    def _on_directory(self, token: int, request: ReadDirectory, result: object) -> list[Effect]:
        window = _current_window(request)
        if window is None:
            return [discarded(request)]
        return self._carrier.carry_out(window.on_directory(request, result))

    def _skill_md_failed(
        self, token: int, request: ReadSkillMd, failed: RequestFailed, not_found: bool
    ) -> list[Effect]:
        session = _current(request)
        if session is None:
            return [discarded(request)]
        return self._carrier.run(
            session, session.skill_md_request_failed(request, failed, not_found)
        )

    def _file_failed(
        self, token: int, request: ReadFile, failed: RequestFailed, not_found: bool
    ) -> list[Effect]:
        window = _current_window(request)
        if window is None:
            return [discarded(request)]
        return self._carrier.carry_out(window.file_request_failed(request, failed, not_found))

    def _on_preview(self, token: int, request: ReadPreview, result: object) -> list[Effect]:
        return take_preview(self._ctx, request, result)

    def _on_resource(self, token: int, request: ReadResource, result: object) -> list[Effect]:
        return take_resource(self._ctx, request, result)

    def _only_failed(
        self, token: int, request: PendingRequest, failed: RequestFailed, not_found: bool
    ) -> list[Effect]:
        return [failed]


#: The handler of a result, by the kind of request it answers.
ON_RESULT: Final[
    dict[type[PendingRequest], Callable[[Answers, int, Any, object], list[Effect]]]
] = {
    ReadFile: Answers._on_file,
    ListPage: Answers._on_list_page,
    GetForLoad: Answers._on_get_for_load,
    GetRefresh: Answers._on_get_refresh,
    GetConfirm: Answers._on_get_confirm,
    GetPreview: Answers._on_get_preview,
    ReadSkillMd: Answers._on_skill_md,
    ReadPreview: Answers._on_preview,
    ReadResource: Answers._on_resource,
    ReadDirectory: Answers._on_directory,
}

#: The handler of a failure (error response, transport failure), by the kind of request.
ON_FAILURE: Final[
    dict[type[PendingRequest], Callable[[Answers, int, Any, RequestFailed, bool], list[Effect]]]
] = {
    ReadFile: Answers._file_failed,
    ListPage: Answers._list_failed,
    GetForLoad: Answers._get_failed,
    GetRefresh: Answers._get_failed,
    GetConfirm: Answers._get_failed,
    GetPreview: Answers._get_failed,
    ReadSkillMd: Answers._skill_md_failed,
    ReadPreview: Answers._only_failed,
    ReadResource: Answers._only_failed,
    ReadDirectory: Answers._only_failed,
}


def _current(request: SessionRequest) -> LoadSession | None:
    """The session that made ``request``, if it has not moved since (else the answer is stale)."""
    session = cast(LoadSession, request.session)  # the only kind of sender
    return session if session.generation == request.generation else None


def _current_window(request: ReadFile | ReadDirectory) -> ActingWindow | None:
    """The window that asked for ``request``, if its session has not moved since."""
    session = _current(request)
    return session.window if session is not None else None
