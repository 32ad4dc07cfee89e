"""Carrying out what load sessions decide: the one place a session's intents change the stores.

Theory of operation
-------------------
A :class:`~skills_core.host.session.LoadSession` returns steps: effects for the caller and the
intents of :mod:`skills_core.host.intents` for the router, which owns the host-wide stores
(:class:`~skills_core.host.context.HostContext`). Every part of the router that calls a session
(the router itself, the answer handlers, the entry intake) hands what the session returned to the
:class:`Carrier`, at once, which carries the intents out in order, each through the one
handler its type has in :data:`INTENT_HANDLERS`, and returns the effects, with the effect an
intent makes in its place:

* a request record (``GetForLoad``, ``ReadSkillMd``, ``ReadFile``, ``ReadDirectory``) is sent: a
  token, the record kept under it, ``SendRequest`` (:meth:`HostContext.send`);
* ``Refresh``: a ``skills/get`` sent and remembered as the skill's refresh in flight;
* ``AskApproval``: a prompt id, the prompt recorded (and as the session's own), ``RequestApproval``;
* ``WithdrawPrompt``: the session's prompt closed, ``ApprovalWithdrawn``;
* ``RecordApproval``, ``KeepVerified``, ``Charge``, ``DiscardCached``: the approval store, the
  verified cache and the origin's budget written; no effect.

It also keeps the router's map of live sessions: a session is in it from :meth:`Carrier.open`
until a call leaves it IDLE (:meth:`Carrier.run`). A session that raises (a broken invariant leaves
it in ERROR) stays in it, to be cleared with ``Host.close``; the intents of the call that raised
are not carried out. Calls into a session's acting window never move its state, so their steps go
through :meth:`Carrier.carry_out` alone (the hot path: a file read and its answer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, final

from ..jsonvalue import JSONValue
from .context import HostContext, OriginRecord
from .effects import Effect, SendRequest
from .intents import (
    AskApproval,
    Charge,
    DiscardCached,
    KeepVerified,
    RecordApproval,
    Refresh,
    Step,
    WithdrawPrompt,
)
from .requests import (
    GetForLoad,
    GetRefresh,
    Key,
    ReadDirectory,
    ReadFile,
    ReadSkillMd,
    SessionRequest,
    SkillPrompt,
)
from .session import LoadSession
from .states import LoadState

__all__ = ["Carrier", "INTENT_HANDLERS"]


@final
class Carrier:
    """Carries out sessions' intents against the router's stores; see the module docstring."""

    __slots__ = ("_ctx", "_sessions")

    def __init__(self, ctx: HostContext, sessions: dict[Key, LoadSession]) -> None:
        """Write ``ctx``'s stores; keep ``sessions``, the router's map of live load sessions."""
        self._ctx = ctx
        self._sessions = sessions

    def open(self, server: OriginRecord, uri: str) -> LoadSession:
        """A new session of the skill ``uri`` of ``server``, kept until a call leaves it IDLE."""
        session = LoadSession(self._ctx, server, uri)
        self._sessions[session.key] = session
        return session

    def run(self, session: LoadSession, steps: list[Step]) -> list[Effect]:
        """Carry out what a call of ``session`` returned; drop the session if it is now IDLE."""
        effects = self.carry_out(steps)
        if session.state is LoadState.IDLE and self._sessions.get(session.key) is session:
            del self._sessions[session.key]
        return effects

    def carry_out(self, steps: list[Step]) -> list[Effect]:
        """Carry out the intents among ``steps``, in order; return the effects for the caller."""
        effects: list[Effect] = []
        for step in steps:
            if isinstance(step, Effect):
                effects.append(step)
                continue
            made = INTENT_HANDLERS[type(step)](self, step)
            if made is not None:
                effects.append(made)
        return effects

    # -- the handlers ---------------------------------------------------------------------------

    def _send(self, request: SessionRequest) -> SendRequest:
        ctx = self._ctx
        return ctx.send(ctx.origins[request.origin], {"uri": request.uri}, request)

    def _send_page(self, request: ReadDirectory) -> SendRequest:
        params: dict[str, JSONValue] = {"uri": request.uri}
        if request.cursor is not None:
            params["cursor"] = request.cursor
        ctx = self._ctx
        return ctx.send(ctx.origins[request.origin], params, request)

    def _refresh(self, intent: Refresh) -> SendRequest:
        ctx = self._ctx
        request = GetRefresh(origin=intent.origin, uri=intent.uri, failure_uri=intent.failure_uri)
        send = ctx.send(ctx.origins[intent.origin], {"uri": intent.uri}, request)
        ctx.refreshing[intent.origin, intent.uri] = send.token
        return send

    def _ask(self, intent: AskApproval) -> Effect:
        ctx = self._ctx
        key = (intent.origin, intent.uri)
        prompt_id = ctx.open_prompt(SkillPrompt(key=key, generation=intent.generation))
        ctx.asked[key] = prompt_id
        return intent.effect(prompt_id)

    def _withdraw(self, intent: WithdrawPrompt) -> Effect | None:
        ctx = self._ctx
        prompt_id = ctx.asked.pop((intent.origin, intent.uri), None)
        if prompt_id is None:
            return None
        ctx.prompts.pop(prompt_id, None)
        return intent.effect(prompt_id)

    def _record(self, intent: RecordApproval) -> None:
        self._ctx.approvals.grant(
            intent.origin,
            intent.uri,
            intent.resources,
            granted_fields=intent.granted_fields,
            allow_exec=intent.allow_exec,
        )

    def _keep(self, intent: KeepVerified) -> None:
        ctx = self._ctx
        data = intent.data
        ctx.origins[intent.origin].bytes_fetched += len(data)
        ctx.cache.put(intent.origin, intent.resource, data)

    def _charge(self, intent: Charge) -> None:
        self._ctx.origins[intent.origin].bytes_fetched += intent.size

    def _discard(self, intent: DiscardCached) -> None:
        self._ctx.cache.discard(intent.origin, intent.resource)


#: The handler of each kind of intent; it returns the effect the intent makes, if any.
INTENT_HANDLERS: Final[dict[type, Callable[[Carrier, Any], Effect | None]]] = {
    ReadFile: Carrier._send,
    KeepVerified: Carrier._keep,
    GetForLoad: Carrier._send,
    ReadSkillMd: Carrier._send,
    ReadDirectory: Carrier._send_page,
    Refresh: Carrier._refresh,
    AskApproval: Carrier._ask,
    WithdrawPrompt: Carrier._withdraw,
    RecordApproval: Carrier._record,
    Charge: Carrier._charge,
    DiscardCached: Carrier._discard,
}
