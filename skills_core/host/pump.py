"""The effect pump: carry out a :class:`~skills_core.host.router.Host`'s requests over any transport.

Theory of operation
-------------------
The host is sans-IO: every call returns effects, and a :class:`~skills_core.host.effects.SendRequest`
among them is something the caller must send and answer with ``Host.on_response`` (or
``Host.on_request_failed``), which returns more effects, and so on. The pump is that loop, written
once and offered in two forms: :func:`pump` (blocking) and :func:`pump_async` (``async``/``await``
only, no event-loop primitive, so it runs under asyncio, trio and anyio alike).

Neither form does I/O. The caller gives, per origin label, a ``send(method, params)`` callable that
does it (the *requester protocol*):

* it returns the JSON-RPC ``result`` object of the answer (decoded JSON);
* it raises :class:`~skills_core.errors.JsonRpcError` when the server answered with a JSON-RPC error
  ("the server said no": the pump hands the error object to ``Host.on_response``, so that, for
  example, ``-32602`` to ``skills/get`` means "not a skill");
* it raises :class:`~skills_core.errors.TransportError` when there is no answer: the connection
  could not start or died, the request timed out (``kind="timeout"``), or the answer could not be
  used (``kind="protocol"``). The pump tells the host the request failed and records a
  :class:`TransportFailure` in its output, so a caller can tell "the server said no" from "the
  server is gone";
* anything else it raises is a bug (or a cancellation) and propagates; before it does, the pump
  tells the host that the request in flight and every request still queued failed, so the host is
  never left waiting for answers that cannot come.

Requests go out one at a time, in the order the host asked for them, and the output is in causal
order: the effects an answer (or a callback) produced come right after the request (or effect) that
caused them, before anything queued later. Everything that is not a request (approval prompts,
deliveries, notices, failures) is returned, and, when an ``on_effect`` callback is given, handed to
it as it comes; the callback may return more effects to carry out at once (how a command line
answers an approval prompt: it returns ``host.approve(prompt.prompt_id)``). It must return None or
an iterable of effects: anything else (a bool, an effect on its own) is a ``TypeError`` that says
so. An approval prompt the run output and nobody answered by its end is never left silent: the run
then outputs a :class:`~skills_core.host.effects.Notice` (code ``prompt-unanswered``, a warning)
for it, naming the calls that answer it, so a callback that failed to recognise the prompt (or a
caller who passed none) sees why nothing was loaded.

:class:`EffectRun` is the loop's state, shared by both forms; they differ only in whether they
``await`` the requester and the callback.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias, final

from ..errors import JsonRpcError, LocalProtocolError, TransportError
from ..jsonvalue import JSONValue
from .codes import NoticeCode, NoticeLevel
from .effects import (
    Effect,
    Notice,
    RequestApproval,
    RequestCrossOriginApproval,
    SendRequest,
)
from .router import Host

__all__ = [
    "TransportFailure",
    "Pumped",
    "Send",
    "AsyncSend",
    "OnEffect",
    "AsyncOnEffect",
    "EffectRun",
    "pump",
    "pump_async",
]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TransportFailure:
    """A request could not be carried out: the connection failed (not a protocol answer).

    Output by the pump beside the host's own ``RequestFailed`` (or ``LoadFailed``...) effect, so
    that a caller can tell "the server said no" from "the server is gone" (exit code 2 in the
    command line).

    Attributes:
        origin: The label of the server the request was for.
        method: The request's method.
        error: What went wrong; ``error.kind`` is ``"closed"``, ``"timeout"``, ``"protocol"`` or
            ``"spawn-failed"``.
    """

    origin: str
    method: str
    error: TransportError


#: What the pump outputs: every effect that is not a request, and the transport failures.
Pumped: TypeAlias = Effect | TransportFailure

#: Blocking requester: ``send(method, params)`` returns the ``result`` object or raises
#: ``JsonRpcError`` / ``TransportError`` (see the module docstring).
Send: TypeAlias = Callable[[str, dict[str, JSONValue]], dict[str, JSONValue]]

#: Asynchronous requester: the same, awaited.
AsyncSend: TypeAlias = Callable[[str, dict[str, JSONValue]], Awaitable[dict[str, JSONValue]]]

#: Called with each output as it comes; returns effects to carry out next (or None).
OnEffect: TypeAlias = Callable[[Pumped], Iterable[Effect] | None]

#: The same for :func:`pump_async`; it may also return an awaitable of them.
AsyncOnEffect: TypeAlias = Callable[
    [Pumped], Iterable[Effect] | Awaitable[Iterable[Effect] | None] | None
]


_BAD_REACTION: Final = (
    "on_effect returned {}: it must return None or an iterable of effects "
    "(such as the list host.approve(prompt.prompt_id) returns)"
)


@final
class EffectRun:
    """The state of one pump run: a queue of effects in causal order, and the output so far.

    Both :func:`pump` and :func:`pump_async` drive one of these; a transport with a loop of its
    own (callbacks, a thread pool, a UI event queue) can drive it the same way:

    * :meth:`next` gives the next thing to do: a ``SendRequest`` to send, answered with
      :meth:`settle`; or an output item, optionally followed by :meth:`react` with the effects a
      callback returned for it; ``None`` when the run is over. A request to an origin that is not
      in ``origins`` is settled at once as a :class:`TransportFailure` of kind ``"closed"``;
    * :meth:`abandon` fails every request not yet settled, when the run is given up.

    Attributes:
        output: Everything output so far, in causal order.
    """

    __slots__ = ("_asked", "_host", "_in_flight", "_origins", "_queue", "output")

    def __init__(self, host: Host, effects: Iterable[Effect], origins: Collection[str]) -> None:
        """Start a run over ``effects`` (as a host call returned them).

        Args:
            host: The host whose effects these are.
            effects: What a host call returned.
            origins: The origin labels the caller can send to.
        """
        self._host = host
        self._origins = origins
        self._queue: deque[Pumped] = deque(effects)
        self._in_flight: SendRequest | None = None
        self._asked: list[RequestApproval | RequestCrossOriginApproval] = []
        self.output: list[Pumped] = []

    def next(self) -> SendRequest | Pumped | None:
        """Return the next request to send or item output, or None when nothing is left.

        Raises:
            LocalProtocolError: the request returned last was not settled.
        """
        if self._in_flight is not None:
            raise LocalProtocolError(
                f"settle the {self._in_flight.method} request before taking the next step",
                kind="pump-misuse",
            )
        queue = self._queue
        if not queue and self._asked:
            queue.extend(self._unanswered())
        while queue:
            effect = queue.popleft()
            if not isinstance(effect, SendRequest):
                if isinstance(effect, (RequestApproval, RequestCrossOriginApproval)):
                    self._asked.append(effect)
                self.output.append(effect)
                return effect
            self._in_flight = effect
            if effect.origin in self._origins:
                return effect
            self.settle(
                effect,
                TransportError(
                    f"no connection to server {effect.origin!r}: {effect.method} not sent",
                    kind="closed",
                ),
            )
        return None

    def settle(
        self, request: SendRequest, answer: dict[str, JSONValue] | JsonRpcError | TransportError
    ) -> None:
        """Hand the host the answer to ``request``: its result, the server's error, or a failure.

        Raises:
            LocalProtocolError: ``request`` is not the request in flight.
        """
        if request is not self._in_flight:
            raise LocalProtocolError(
                f"the {request.method} request is not the one in flight", kind="pump-misuse"
            )
        self._in_flight = None
        host = self._host
        if isinstance(answer, JsonRpcError):
            error: dict[str, object] = {"code": answer.rpc_code, "message": answer.rpc_message}
            if answer.data is not None:
                error["data"] = answer.data
            produced = host.on_response(request.origin, request.token, error=error)
        elif isinstance(answer, TransportError):
            failure = TransportFailure(origin=request.origin, method=request.method, error=answer)
            produced = host.on_request_failed(request.origin, request.token, str(answer))
            # Output (and handed to a callback) first, then what the host made of it.
            self._queue.extendleft(reversed([failure, *produced]))
            return
        else:
            produced = host.on_response(request.origin, request.token, result=answer)
        self._queue.extendleft(reversed(produced))

    def react(self, effects: Iterable[Effect] | None) -> None:
        """Carry out ``effects`` (a callback's answer to the item just output) next.

        Raises:
            TypeError: ``effects`` is neither None nor an iterable of effects.
        """
        if effects is None:
            return
        if isinstance(effects, Effect) or not isinstance(effects, Iterable):
            raise TypeError(_BAD_REACTION.format(type(effects).__name__))
        items = list(effects)
        for item in items:
            if not isinstance(item, Effect):
                raise TypeError(_BAD_REACTION.format(f"an iterable holding {type(item).__name__}"))
        self._queue.extendleft(reversed(items))

    def _unanswered(self) -> list[Notice]:
        """A warning for each prompt this run output that is still open; forgets them all."""
        asked, self._asked = self._asked, []
        notices = []
        for prompt in asked:
            if not self._host.is_prompt_open(prompt.prompt_id):
                continue
            origin = prompt.origin if isinstance(prompt, RequestApproval) else prompt.to_origin
            notices.append(
                Notice(
                    level=NoticeLevel.WARNING,
                    code=NoticeCode.PROMPT_UNANSWERED,
                    message=(
                        f"approval prompt {prompt.prompt_id} for {prompt.uri} from {origin!r} "
                        f"is unanswered, so nothing it guards was done: answer it with "
                        f"host.approve({prompt.prompt_id}) or host.deny({prompt.prompt_id}) "
                        "and carry out the effects that returns"
                    ),
                    origin=origin,
                    uri=prompt.uri,
                )
            )
        return notices

    def abandon(self, reason: str) -> None:
        """Tell the host that the request in flight and every queued request failed (``reason``).

        What the host answers is dropped: the run is over.
        """
        pending = [self._in_flight] if self._in_flight is not None else []
        pending.extend(e for e in self._queue if isinstance(e, SendRequest))
        self._in_flight = None
        self._queue.clear()
        for request in pending:
            self._host.on_request_failed(request.origin, request.token, reason)


def pump(
    host: Host,
    effects: Iterable[Effect],
    senders: Mapping[str, Send],
    *,
    on_effect: OnEffect | None = None,
) -> list[Pumped]:
    """Carry out every request among ``effects`` (and those their answers cause); return the rest.

    Args:
        host: The host whose effects these are.
        effects: What a host call returned.
        senders: The requester of each origin label (see the module docstring). A request to an
            origin without one fails as a :class:`TransportFailure` of kind ``"closed"``.
        on_effect: Called with each output item as it comes; the effects it returns are carried
            out next, in causal order.

    Returns:
        Every effect that is not a ``SendRequest``, and a :class:`TransportFailure` wherever a
        request got no answer, in causal order.

    Raises:
        BaseException: whatever a requester or the callback raised other than ``JsonRpcError``
            and ``TransportError``; the host is told every unanswered request failed first.
    """
    run = EffectRun(host, effects, senders.keys())
    try:
        while (step := run.next()) is not None:
            if isinstance(step, SendRequest):
                answer: dict[str, JSONValue] | JsonRpcError | TransportError
                try:
                    answer = senders[step.origin](step.method, step.params)
                except (JsonRpcError, TransportError) as exc:
                    answer = exc
                run.settle(step, answer)
            elif on_effect is not None:
                run.react(on_effect(step))
    except BaseException as exc:
        run.abandon(f"the request was abandoned ({type(exc).__name__})")
        raise
    return run.output


async def pump_async(
    host: Host,
    effects: Iterable[Effect],
    senders: Mapping[str, AsyncSend],
    *,
    on_effect: AsyncOnEffect | None = None,
) -> list[Pumped]:
    """:func:`pump` for asynchronous requesters: the same loop and output, awaited.

    Uses no event-loop primitive, so it runs under asyncio, trio or anyio. Cancelled while a
    request is in flight, it tells the host that request (and every queued one) failed, then lets
    the cancellation through.

    Args:
        host: The host whose effects these are.
        effects: What a host call returned.
        senders: The asynchronous requester of each origin label.
        on_effect: As for :func:`pump`; it may also return an awaitable of the effects.

    Returns:
        As for :func:`pump`.

    Raises:
        BaseException: as for :func:`pump`, cancellation included.
    """
    run = EffectRun(host, effects, senders.keys())
    try:
        while (step := run.next()) is not None:
            if isinstance(step, SendRequest):
                answer: dict[str, JSONValue] | JsonRpcError | TransportError
                try:
                    answer = await senders[step.origin](step.method, step.params)
                except (JsonRpcError, TransportError) as exc:
                    answer = exc
                run.settle(step, answer)
            elif on_effect is not None:
                reaction = on_effect(step)
                if inspect.isawaitable(reaction):
                    reaction = await reaction
                run.react(reaction)
    except BaseException as exc:
        run.abandon(f"the request was abandoned ({type(exc).__name__})")
        raise
    return run.output
