"""The public effect pump (``skills_core.host.pump``): blocking and async forms, one behaviour.

The pump runs a real :class:`Host` against the scripted fake servers of ``host_helpers`` through
``send(method, params)`` requesters that answer from the fake server, raise ``JsonRpcError`` for
its error answers, or raise ``TransportError`` (a timeout, a closed connection) where a script
says so. What is checked:

* the output equals the reference harness's (``Harness.run``, the tests' own depth-first loop)
  without its ``SendRequest`` items: causal order, prompts answered through ``on_effect``;
* the blocking form, the async form under asyncio and the async form under trio give the same
  output for the same script, for any schedule of failures (hypothesis), and after every run the
  host is waiting for nothing;
* transport failures are surfaced as such (a ``TransportFailure`` with the error's kind, and the
  host's own failure effect), distinct from "the server said no" (a ``JsonRpcError`` reaches the
  host as an error response: ``-32602`` to ``skills/get`` is ``NotASkill``, ERR-07);
* a request to an origin without a requester is never sent; a bug or a cancellation in a
  requester propagates, and the host is told every unanswered request failed (it can load again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any, Final, TypeVar

import pytest
import trio
from host_helpers import FakeServer, Harness, skill_md, strip_meta
from hypothesis import given, settings
from hypothesis import strategies as st

import skills_core
from skills_core.errors import JsonRpcError, LocalProtocolError, TransportError
from skills_core.host import (
    DeliverToModel,
    Effect,
    Host,
    HostPolicy,
    LoadFailed,
    LoadState,
    NotASkill,
    Notice,
    NoticeCode,
    NoticeLevel,
    RefusalCode,
    Refused,
    RequestApproval,
    RequestFailed,
    SendRequest,
    SkillLoaded,
)
from skills_core.host.pump import (
    AsyncSend,
    EffectRun,
    Pumped,
    Send,
    TransportFailure,
    pump,
    pump_async,
)
from skills_core.jsonvalue import JSONValue

T = TypeVar("T")

A: Final = "alpha"
B: Final = "beta"
#: What a scripted requester does with the n-th request: answer it, or fail in transport.
OUTCOMES: Final = ("ok", "timeout", "closed")


def of(items: list[Any], kind: type[T]) -> list[T]:
    return [i for i in items if isinstance(i, kind)]


def one(items: list[Any], kind: type[T]) -> T:
    found = of(items, kind)
    assert len(found) == 1, (kind.__name__, items)
    return found[0]


def kinds(items: list[Any]) -> list[str]:
    return [type(i).__name__ for i in items]


def servers() -> dict[str, FakeServer]:
    """Two origins, each with two skills (one with a supporting file); pages of one entry."""
    out: dict[str, FakeServer] = {}
    for label in (A, B):
        server = FakeServer(page_size=1)
        server.add(
            f"{label}-one",
            {"SKILL.md": skill_md(f"{label}-one"), "references/GUIDE.md": b"# guide\n"},
        )
        server.add(f"{label}-two")
        out[label] = server
    return out


def new_host(fakes: dict[str, FakeServer]) -> Host:
    host = Host(policy=HostPolicy())
    for label, server in fakes.items():
        host.connect(label, server.capabilities())
    return host


def answer(server: FakeServer, method: str, params: dict[str, JSONValue]) -> dict[str, JSONValue]:
    """The fake server's answer as a requester gives it: a result, or a raised JsonRpcError."""
    kind, payload = server.handle(method, strip_meta(params))
    if kind == "error":
        raise JsonRpcError(
            payload["message"], rpc_code=payload["code"], method=method, data=payload.get("data")
        )
    result: dict[str, JSONValue] = payload
    return result


class Script:
    """Requesters over fake servers that follow one schedule of outcomes, shared by all origins."""

    def __init__(self, fakes: dict[str, FakeServer], schedule: list[str]) -> None:
        self.fakes = fakes
        self.schedule: Iterator[str] = iter(schedule)
        self.sent: list[tuple[str, str]] = []

    def outcome(
        self, origin: str, method: str, params: dict[str, JSONValue]
    ) -> dict[str, JSONValue]:
        self.sent.append((origin, method))
        step = next(self.schedule, "ok")
        if step == "timeout":
            raise TransportError(f"server {origin!r}: {method} timed out", kind="timeout")
        if step == "closed":
            raise TransportError(f"server {origin!r} closed the connection", kind="closed")
        return answer(self.fakes[origin], method, params)

    def senders(self) -> dict[str, Send]:
        return {
            label: (lambda m, p, o=label: self.outcome(o, m, p))  # type: ignore[misc]
            for label in self.fakes
        }

    def async_senders(self) -> dict[str, AsyncSend]:
        def make(origin: str) -> AsyncSend:
            async def send(method: str, params: dict[str, JSONValue]) -> dict[str, JSONValue]:
                return self.outcome(origin, method, params)

            return send

        return {label: make(label) for label in self.fakes}


def approve_all(host: Host) -> Callable[[Pumped], list[Effect] | None]:
    """An ``on_effect`` callback that approves every approval prompt."""

    def react(item: Pumped) -> list[Effect] | None:
        if isinstance(item, RequestApproval):
            return host.approve(item.prompt_id)
        return None

    return react


#: The host calls of one session: list both origins at once (two paged walks, so the answers of
#: one come before the other's first request in causal order), load a skill, read its file...
Session = list[Callable[[Host], list[Effect]]]
SESSION: Final[Session] = [
    lambda h: [*h.list_skills(A), *h.list_skills(B)],
    lambda h: h.load(A, f"skill://{A}-one/SKILL.md"),
    lambda h: h.read(A, f"skill://{A}-one/SKILL.md", "references/GUIDE.md"),
    lambda h: h.get_skill(B, "skill://nothing-here/SKILL.md"),
    lambda h: h.load(B, f"skill://{B}-two/SKILL.md"),
]


def normal(items: list[Pumped]) -> list[object]:
    """Output made comparable: a TransportFailure's error compared by kind and message."""
    return [
        (type(i).__name__, i.origin, i.method, i.error.kind, str(i.error))
        if isinstance(i, TransportFailure)
        else i
        for i in items
    ]


def run_blocking(schedule: list[str]) -> tuple[list[object], Host, int]:
    """The session through the blocking pump: its output, the host, and how many requests went."""
    fakes = servers()
    host = new_host(fakes)
    script = Script(fakes, schedule)
    out: list[Pumped] = []
    for call in SESSION:
        out.extend(pump(host, call(host), script.senders(), on_effect=approve_all(host)))
    return normal(out), host, len(script.sent)


async def _run_async(schedule: list[str]) -> tuple[list[object], Host]:
    fakes = servers()
    host = new_host(fakes)
    script = Script(fakes, schedule)
    out: list[Pumped] = []
    react = approve_all(host)

    async def on_effect(item: Pumped) -> list[Effect] | None:  # an awaitable answer
        return react(item)

    for call in SESSION:
        out.extend(await pump_async(host, call(host), script.async_senders(), on_effect=on_effect))
    return normal(out), host


def run_asyncio(schedule: list[str]) -> tuple[list[object], Host]:
    return asyncio.run(_run_async(schedule))


def run_trio(schedule: list[str]) -> tuple[list[object], Host]:
    return trio.run(_run_async, schedule)


# --- one behaviour, two forms -----------------------------------------------------------------


def test_the_output_is_the_reference_harness_output_without_requests() -> None:
    """Causal order: what the harness sees, minus the requests it answered (VER-12: no extras)."""
    fakes = servers()
    harness = Harness(host=new_host(fakes))
    harness.servers.update(fakes)
    expected: list[Effect] = []
    for call in SESSION:
        expected.extend(
            e
            for e in harness.run(call(harness.host), approve=True)
            if not isinstance(e, SendRequest)
        )
    got, host, _ = run_blocking([])
    assert got == expected
    assert host.pending_requests == 0
    assert "SkillLoaded" in kinds(expected)
    assert one(expected, NotASkill).uri == "skill://nothing-here/SKILL.md"  # ERR-07


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(OUTCOMES), max_size=14))
def test_blocking_asyncio_and_trio_give_the_same_output(schedule: list[str]) -> None:
    blocking, host, sent = run_blocking(schedule)
    assert run_asyncio(schedule)[0] == blocking
    assert run_trio(schedule)[0] == blocking
    assert host.pending_requests == 0
    # Every transport failure of a request that went out is surfaced once, with its kind, and
    # the host reported a failure right after it (causal order); no failure is invented.
    failures = [i for i in blocking if isinstance(i, tuple)]
    assert [f[3] for f in failures] == [s for s in schedule[:sent] if s != "ok"]
    for index, item in enumerate(blocking):
        if isinstance(item, tuple):
            follower = blocking[index + 1]
            assert isinstance(follower, RequestFailed | LoadFailed), follower


def test_a_timeout_is_a_transport_failure_not_an_answer() -> None:
    fakes = servers()
    host = new_host(fakes)
    script = Script(fakes, ["timeout"])
    out = pump(host, host.list_skills(A), script.senders())
    failure = out[0]
    assert isinstance(failure, TransportFailure)
    assert (failure.origin, failure.method, failure.error.kind) == (A, "skills/list", "timeout")
    failed = one(out, RequestFailed)
    assert failed.code is None  # not a JSON-RPC answer
    assert "timed out" in failed.message
    assert host.registry.get(A, f"skill://{A}-one/SKILL.md") is None


def test_a_json_rpc_error_reaches_the_host_as_the_server_s_answer() -> None:
    """-32602 to skills/get: the server says "not a skill" (ERR-07); no TransportFailure."""
    fakes = servers()
    host = new_host(fakes)
    out = pump(host, host.get_skill(A, "skill://nope/SKILL.md"), Script(fakes, []).senders())
    assert not [i for i in out if isinstance(i, TransportFailure)]
    assert one(out, NotASkill).uri == "skill://nope/SKILL.md"


def test_error_data_is_handed_to_the_host() -> None:
    seen: list[object] = []
    fakes = servers()
    host = new_host(fakes)

    def send(method: str, params: dict[str, JSONValue]) -> dict[str, JSONValue]:
        raise JsonRpcError("no", rpc_code=-32602, method=method, data={"uri": "skill://x/y"})

    original = host.on_response

    def spy(origin: str, token: int, **kw: Any) -> list[Effect]:
        seen.append(kw.get("error"))
        return original(origin, token, **kw)

    host.on_response = spy  # type: ignore[method-assign]
    pump(host, host.list_skills(A), {A: send})
    assert seen == [{"code": -32602, "message": "no", "data": {"uri": "skill://x/y"}}]


def test_an_origin_without_a_requester_is_never_sent_to() -> None:
    fakes = servers()
    host = new_host(fakes)
    script = Script(fakes, [])
    senders = script.senders()
    del senders[B]
    out = pump(host, [*host.list_skills(A), *host.list_skills(B)], senders)
    assert {origin for origin, _ in script.sent} == {A}
    failure = one(out, TransportFailure)
    assert (failure.origin, failure.error.kind) == (B, "closed")
    assert "no connection to server 'beta'" in str(failure.error)
    assert host.pending_requests == 0


def test_on_effect_sees_every_output_item_in_order_and_its_answers_run_next() -> None:
    fakes = servers()
    host = new_host(fakes)
    pump(host, host.list_skills(A), Script(fakes, []).senders())
    pump(host, host.list_skills(A), Script(fakes, []).senders())
    seen: list[Pumped] = []

    def react(item: Pumped) -> list[Effect] | None:
        seen.append(item)
        return host.approve(item.prompt_id) if isinstance(item, RequestApproval) else None

    out = pump(
        host,
        host.load(A, f"skill://{A}-one/SKILL.md"),
        Script(fakes, []).senders(),
        on_effect=react,
    )
    assert seen == out
    assert kinds(out).index("RequestApproval") < kinds(out).index("DeliverToModel")
    assert one(out, DeliverToModel).content == skill_md(f"{A}-one")
    assert host.state(A, f"skill://{A}-one/SKILL.md") is LoadState.ACTING


def test_on_effect_is_handed_transport_failures_before_what_the_host_made_of_them() -> None:
    """A caller that reacts as items come (the command line) must see a dead connection too."""
    fakes = servers()
    host = new_host(fakes)
    seen: list[Pumped] = []

    def react(item: Pumped) -> None:
        seen.append(item)

    out = pump(host, host.list_skills(A), Script(fakes, ["timeout"]).senders(), on_effect=react)
    assert seen == out
    assert isinstance(seen[0], TransportFailure)
    assert isinstance(seen[1], RequestFailed)


def test_without_a_callback_prompts_are_returned_unanswered_and_said_to_be() -> None:
    """A prompt left open at the end of a run is returned, followed by a warning saying so."""
    fakes = servers()
    host = new_host(fakes)
    script = Script(fakes, [])
    pump(host, host.list_skills(A), script.senders())
    out = pump(host, host.load(A, f"skill://{A}-one/SKILL.md"), script.senders())
    assert kinds(out) == ["RequestApproval", "Notice"]
    prompt, notice = out
    assert isinstance(prompt, RequestApproval)
    assert isinstance(notice, Notice)
    assert notice.code is NoticeCode.PROMPT_UNANSWERED
    assert notice.level is NoticeLevel.WARNING
    assert (notice.origin, notice.uri) == (A, prompt.uri)
    assert f"host.approve({prompt.prompt_id})" in notice.message
    assert script.sent[-1] == (A, "skills/list")  # nothing fetched before approval (VER-12)
    # Answered later, the prompt carries on as usual, and nothing more is said about it.
    later = pump(host, host.approve(prompt.prompt_id), script.senders())
    assert "SkillLoaded" in kinds(later)
    assert "Notice" not in kinds(later)


@pytest.mark.parametrize("flavour", ["blocking", "asyncio"])
def test_a_callback_that_does_not_recognise_the_prompt_is_told_so(flavour: str) -> None:
    """The mixed-copies failure: the callback's isinstance check never matches, so it answers
    nothing; the run ends with the prompt open and says so, to the callback and in the output."""
    fakes = servers()
    host = new_host(fakes)
    script = Script(fakes, [])
    pump(host, host.list_skills(A), script.senders())
    seen: list[Pumped] = []

    def on_effect(item: Pumped) -> None:
        seen.append(item)

    async def on_effect_async(item: Pumped) -> None:
        seen.append(item)

    effects = host.load(A, f"skill://{A}-one/SKILL.md")
    if flavour == "blocking":
        out = pump(host, effects, script.senders(), on_effect=on_effect)
    else:
        out = asyncio.run(
            pump_async(host, effects, script.async_senders(), on_effect=on_effect_async)
        )
    assert kinds(out) == kinds(seen) == ["RequestApproval", "Notice"]
    notice = out[-1]
    assert isinstance(notice, Notice)
    assert notice.code is NoticeCode.PROMPT_UNANSWERED


def test_a_prompt_answered_by_the_callback_is_not_reported() -> None:
    fakes = servers()
    host = new_host(fakes)
    script = Script(fakes, [])
    pump(host, host.list_skills(A), script.senders())
    out = pump(
        host,
        host.load(A, f"skill://{A}-one/SKILL.md"),
        script.senders(),
        on_effect=approve_all(host),
    )
    assert "SkillLoaded" in kinds(out)
    assert not [e for e in out if isinstance(e, Notice)]


@pytest.mark.parametrize(
    ("returned", "said"),
    [
        (True, "on_effect returned bool"),
        (False, "on_effect returned bool"),
        (3, "on_effect returned int"),
        ("approve", "an iterable holding str"),
        ([None], "an iterable holding NoneType"),
    ],
)
def test_a_callback_that_returns_something_else_than_effects_is_a_clear_type_error(
    returned: object, said: str
) -> None:
    fakes = servers()
    host = new_host(fakes)
    script = Script(fakes, [])
    pump(host, host.list_skills(A), script.senders())

    def on_effect(item: Pumped) -> Any:
        return returned

    with pytest.raises(TypeError, match=said) as caught:
        pump(host, host.load(A, f"skill://{A}-one/SKILL.md"), script.senders(), on_effect=on_effect)
    assert "None or an iterable of effects" in str(caught.value)
    assert host.pending_requests == 0


def test_a_callback_that_returns_a_single_effect_is_told_to_return_a_list() -> None:
    fakes = servers()
    host = new_host(fakes)
    script = Script(fakes, [])
    pump(host, host.list_skills(A), script.senders())

    def on_effect(item: Pumped) -> Any:
        return item  # an effect, not an iterable of them

    with pytest.raises(TypeError, match="on_effect returned RequestApproval"):
        pump(host, host.load(A, f"skill://{A}-one/SKILL.md"), script.senders(), on_effect=on_effect)


# --- failures that are not answers --------------------------------------------------------------


def listed_host() -> tuple[Host, dict[str, FakeServer]]:
    fakes = servers()
    host = new_host(fakes)
    for label in fakes:
        pump(host, host.list_skills(label), Script(fakes, []).senders())
    return host, fakes


def test_a_bug_in_a_requester_propagates_and_leaves_the_host_waiting_for_nothing() -> None:
    host, fakes = listed_host()
    uri = f"skill://{A}-one/SKILL.md"

    def broken(method: str, params: dict[str, JSONValue]) -> dict[str, JSONValue]:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        pump(host, host.load(A, uri), {A: broken}, on_effect=approve_all(host))
    assert host.pending_requests == 0
    out = pump(host, host.load(A, uri), Script(fakes, []).senders(), on_effect=approve_all(host))
    assert not of(out, Refused), out  # not LOAD_IN_PROGRESS: the host is not wedged
    assert one(out, SkillLoaded).uri == uri


def test_a_bug_in_the_callback_fails_the_queued_requests() -> None:
    fakes = servers()
    host = new_host(fakes)
    effects = [*host.list_skills(A), *host.list_skills(B)]

    def react(item: Pumped) -> None:
        raise RuntimeError("callback bug")

    with pytest.raises(RuntimeError):
        pump(host, effects, Script(fakes, []).senders(), on_effect=react)
    assert host.pending_requests == 0
    again = pump(host, host.list_skills(B), Script(fakes, []).senders())
    assert not [
        e for e in again if isinstance(e, Refused) and e.code is RefusalCode.LISTING_IN_PROGRESS
    ]


def test_cancelling_the_async_pump_under_trio_fails_the_request_in_flight() -> None:
    host, _ = listed_host()
    uri = f"skill://{A}-one/SKILL.md"

    async def main() -> None:
        with trio.CancelScope() as scope:

            async def hang(method: str, params: dict[str, JSONValue]) -> dict[str, JSONValue]:
                scope.cancel()
                await trio.sleep_forever()
                raise AssertionError("unreachable")

            await pump_async(host, host.load(A, uri), {A: hang}, on_effect=approve_all(host))
        assert scope.cancelled_caught

    trio.run(main)
    assert host.pending_requests == 0


def test_cancelling_the_async_pump_under_asyncio_fails_the_request_in_flight() -> None:
    host, _ = listed_host()

    async def hang(method: str, params: dict[str, JSONValue]) -> dict[str, JSONValue]:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(0)
        raise AssertionError("unreachable")

    async def main() -> None:
        with pytest.raises(asyncio.CancelledError):
            await pump_async(host, [*host.list_skills(A), *host.list_skills(B)], {A: hang, B: hang})

    asyncio.run(main())
    assert host.pending_requests == 0


def test_effect_run_refuses_steps_out_of_order() -> None:
    fakes = servers()
    host = new_host(fakes)
    run = EffectRun(host, host.list_skills(A), {A})
    request = run.next()
    assert isinstance(request, SendRequest)
    with pytest.raises(LocalProtocolError, match="settle the skills/list request"):
        run.next()
    other = SendRequest(origin=A, token=999, method="skills/list", params={})
    with pytest.raises(LocalProtocolError, match="not the one in flight"):
        run.settle(other, {})
    run.settle(request, answer(fakes[A], request.method, request.params))
    assert run.next() is not None


def test_the_pump_is_exported_from_the_top_level() -> None:
    assert skills_core.pump is pump
    assert skills_core.pump_async is pump_async
    assert skills_core.TransportFailure is TransportFailure
    assert skills_core.TransportError is TransportError
    assert skills_core.JsonRpcError is JsonRpcError
