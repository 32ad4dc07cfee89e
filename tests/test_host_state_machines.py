"""The load-session state machine, every ``(state, input)`` pair (as h2's ``test_state_machines``).

A pair in :data:`TRANSITIONS` moves the machine to its target; any other pair raises
:class:`~skills_core.errors.LocalProtocolError` and leaves the machine in ERROR, never a bare
``KeyError`` or a half-moved state. Through the host: a session asked for a move the table lacks
(simulated by removing a pair) ends in ERROR, refuses loads and reads, discards answers to its old
requests, and is cleared by ``Host.close``; before the fix the same call raised ``KeyError`` after
the prompt had been consumed.
"""

from __future__ import annotations

import itertools
from types import MappingProxyType

import pytest
from host_helpers import example_harness, of, one
from hypothesis import given
from hypothesis import strategies as st

from skills_core import spec_examples as ex
from skills_core.errors import LocalProtocolError
from skills_core.host import (
    TRANSITIONS,
    DeliverToModel,
    LoadInput,
    LoadState,
    LoadStateMachine,
    RefusalCode,
    Refused,
    RequestApproval,
    SendRequest,
)
from skills_core.host import states as states_module
from skills_core.host.session import LoadSession
from skills_core.host.states import WINDOW_STATES

L = ex.ORIGIN_LABEL
URI = ex.SKILL_MD_URI
PAIRS = list(itertools.product(LoadState, LoadInput))


def check_one_pair(state: LoadState, event: LoadInput) -> None:
    machine = LoadStateMachine(state)
    target = TRANSITIONS.get((state, event))
    if target is None:
        with pytest.raises(LocalProtocolError) as caught:
            machine.process_input(event)
        assert caught.value.kind == "invalid-transition"
        assert state.name in caught.value.message
        assert event.name in caught.value.message
        assert machine.state is LoadState.ERROR
    else:
        assert machine.process_input(event) is target
        assert machine.state is target


@given(state=st.sampled_from(LoadState), event=st.sampled_from(LoadInput))
def test_state_transitions(state: LoadState, event: LoadInput) -> None:
    check_one_pair(state, event)


@pytest.mark.parametrize(("state", "event"), PAIRS, ids=lambda v: v.name)
def test_every_pair_moves_or_errors(state: LoadState, event: LoadInput) -> None:
    check_one_pair(state, event)


def test_the_table_is_closed_and_error_only_clears() -> None:
    # Every target is a state, IDLE is reachable from everywhere, ERROR is reachable only by a
    # missing pair and leaves only by CLOSE or ABANDON, to IDLE.
    assert set(TRANSITIONS.values()) <= set(LoadState)
    assert LoadState.ERROR not in TRANSITIONS.values()
    assert {e for (s, e) in TRANSITIONS if s is LoadState.ERROR} == {
        LoadInput.CLOSE,
        LoadInput.ABANDON,
    }
    assert TRANSITIONS[LoadState.ERROR, LoadInput.CLOSE] is LoadState.IDLE
    assert TRANSITIONS[LoadState.ERROR, LoadInput.ABANDON] is LoadState.IDLE
    assert {LoadState.ACTING, LoadState.REAPPROVAL, LoadState.STALE} == WINDOW_STATES


def test_the_machine_takes_only_inputs() -> None:
    machine = LoadStateMachine()
    with pytest.raises(TypeError):
        machine.process_input("close")  # type: ignore[arg-type]
    assert machine.state is LoadState.IDLE


@given(events=st.lists(st.sampled_from(LoadInput), max_size=30))
def test_any_sequence_ends_in_a_known_state(events: list[LoadInput]) -> None:
    machine = LoadStateMachine()
    for event in events:
        before = machine.state
        try:
            machine.process_input(event)
        except LocalProtocolError:
            assert (before, event) not in TRANSITIONS
            assert machine.state is LoadState.ERROR
        else:
            assert machine.state is TRANSITIONS[before, event]


def test_a_missing_pair_leaves_the_session_in_error_not_half_moved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    # Simulate a host bug: the table lacks the move that approving needs.
    table = dict(TRANSITIONS)
    del table[LoadState.AWAITING_APPROVAL, LoadInput.READ_SKILL_MD]
    monkeypatch.setattr(states_module, "TRANSITIONS", MappingProxyType(table))
    with pytest.raises(LocalProtocolError, match="AWAITING_APPROVAL cannot take READ_SKILL_MD"):
        h.host.approve(prompt.prompt_id)
    monkeypatch.undo()
    assert h.host.state(L, URI) is LoadState.ERROR
    view = h.host.window(L, URI)
    assert view is not None
    assert view.held is None
    assert h.host.windows() == ()
    assert h.host.pending_requests == 0  # nothing was sent for the failed move
    # The session refuses everything until it is closed...
    assert one(h.host.load(L, URI), Refused).code is RefusalCode.SESSION_FAILED
    assert one(h.host.read(L, URI, "templates/invoice.md"), Refused).code is RefusalCode.NOT_ACTING
    assert one(h.host.approve(prompt.prompt_id), Refused).code is RefusalCode.UNKNOWN_PROMPT
    assert h.host.exec_gate().decision.value == "not-applicable"
    assert not h.host.permissions(L, URI).honoured
    # ... which clears it, and the skill loads again.
    assert h.host.close(L, URI) == []
    assert h.host.state(L, URI) is LoadState.IDLE
    assert one(h.load(L, URI), DeliverToModel).verified


def test_an_answer_to_a_session_that_failed_is_discarded(monkeypatch: pytest.MonkeyPatch) -> None:
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    send = one(h.host.approve(prompt.prompt_id), SendRequest)
    table = dict(TRANSITIONS)
    del table[LoadState.READING_SKILL_MD, LoadInput.OPEN_WINDOW]
    monkeypatch.setattr(states_module, "TRANSITIONS", MappingProxyType(table))
    kind, payload = h.servers[L].handle(send.method, dict(send.params))
    assert kind == "result"
    with pytest.raises(LocalProtocolError):
        h.host.on_response(L, send.token, result=payload)
    monkeypatch.undo()
    assert h.host.state(L, URI) is LoadState.ERROR
    # Nothing was delivered, and forgetting the origin clears the session too.
    effects = h.host.forget(L)
    assert not of(effects, DeliverToModel)
    assert h.host.state(L, URI) is LoadState.IDLE


def test_a_session_faults_on_a_broken_invariant() -> None:
    """The session's own consistency checks raise the same typed error and leave ERROR (these
    tests reach into the router's sessions to break an invariant on purpose)."""
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    session = h.host._sessions[L, URI]
    assert isinstance(session, LoadSession)
    session.loading = None  # break the invariant "a prompt is about an entry"
    with pytest.raises(LocalProtocolError, match="without an entry to approve"):
        h.host.approve(prompt.prompt_id)
    assert h.host.state(L, URI) is LoadState.ERROR
    assert h.host.pending_requests == 0


def test_a_prompt_answered_into_a_fault_is_not_withdrawn_when_the_session_is_cleared() -> None:
    """The router closes a skill's prompt as it hands the answer to the session: when the session
    then breaks, clearing it withdraws nothing (that prompt is no longer open)."""
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    h.host._sessions[L, URI].loading = None  # break "a prompt is about an entry"
    with pytest.raises(LocalProtocolError, match="without an entry to approve"):
        h.host.approve(prompt.prompt_id)
    assert not h.host.is_prompt_open(prompt.prompt_id)
    assert h.host.close(L, URI) == []
    assert h.host.state(L, URI) is LoadState.IDLE


def test_a_fault_while_a_listing_is_taken_ends_the_walk_and_the_prompt() -> None:
    """A session that breaks while a listing page is taken raises, and leaves nothing stuck: the
    walk ends (a new listing is accepted) and its open prompt no longer approves anything."""
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    h.host._sessions[L, URI].loading = None  # break "a load in progress has its entry"
    h.servers[L].skills[URI].files["templates/new.md"] = b"new\n"
    send = one(h.host.list_skills(L), SendRequest)
    kind, payload = h.servers[L].handle(send.method, dict(send.params))
    assert kind == "result"
    with pytest.raises(LocalProtocolError, match="a load in progress without its entry"):
        h.host.on_response(L, send.token, result=payload)
    assert h.host.state(L, URI) is LoadState.ERROR
    assert one(h.host.approve(prompt.prompt_id), Refused).code is RefusalCode.UNKNOWN_PROMPT
    assert one(h.host.list_skills(L), SendRequest)  # not LISTING_IN_PROGRESS
    # An ERROR session ignores what later listings say about its skill.
    assert h.host.registry.get(L, URI) is not None
    del h.servers[L].skills[URI]
    h.run(h.host.refresh(L, URI))
    assert h.host.state(L, URI) is LoadState.ERROR


def test_a_window_state_without_a_window_faults() -> None:
    h = example_harness()
    h.load(L, URI)
    h.host._sessions[L, URI].window = None
    with pytest.raises(LocalProtocolError, match="a window state without a window"):
        h.host.read(L, URI, "templates/invoice.md")
    assert h.host.state(L, URI) is LoadState.ERROR
    assert h.host.windows() == ()
