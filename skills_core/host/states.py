"""The load-session state machine: states, inputs, the transition table, and the machine itself.

Theory of operation
-------------------
Each skill the host loads or acts on, identified by ``(origin label, uri)``, has one load session
(:class:`~skills_core.host.session.LoadSession`) whose state is a :class:`LoadState`. Everything
that changes that state lives in this file: :data:`TRANSITIONS` maps each allowed
``(state, input)`` pair to the next state, and :class:`LoadStateMachine` is the only code that
applies it. The table knows nothing about messages, approvals or caches: the load session decides
*which* input happened, this module decides *where that leads*.

A pair that is not in the table is a bug in the host, not something a server, model or user can
cause: :meth:`LoadStateMachine.process_input` then moves the machine to :attr:`LoadState.ERROR`
and raises :class:`~skills_core.errors.LocalProtocolError`. A session in ERROR holds no window,
serves no read and refuses every load until it is closed (or its origin forgotten), the only two
inputs ERROR accepts. :func:`transition_diagram` renders the table as a Mermaid state diagram.

Inputs, in the order a load meets them:

* ``FETCH_ENTRY``: ``skills/get`` is sent because the entry is unknown (LIST-06), or to refresh it
  after SKILL.md failed verification (VER-09);
* ``ASK_APPROVAL``: a prompt bound to the manifest is shown (APR-01);
* ``READ_SKILL_MD``: an approval of the exact set exists, or was just given (SIL-34);
* ``OPEN_WINDOW``: SKILL.md verified (size, digest, frontmatter) and was delivered (VER-04);
* ``DECLINE`` / ``FAIL``: the load ends (policy, user, invalid entry / error, verification);
* ``SUSPEND``: an entry with another set arrived while acting; reads and execution wait (HELD-09);
* ``RESUME`` / ``MARK_STALE``: re-approved; SKILL.md unchanged (HELD-05) or changed (HELD-07);
* ``CLOSE``: the window closes (SKILL.md left context, re-approval refused, entry unusable), or a
  session in ERROR is cleared;
* ``ABANDON``: the origin was forgotten (``Host.forget``) while the session was open. A
  disconnect abandons nothing: requests in flight fail, and open windows stay (CACHE-05).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, final

from ..errors import LocalProtocolError

__all__ = [
    "LoadState",
    "LoadInput",
    "TRANSITIONS",
    "WINDOW_STATES",
    "LoadStateMachine",
    "transition_diagram",
]


class LoadState(enum.Enum):
    """Where one skill, ``(origin, uri)``, stands."""

    #: Nothing in progress, no window.
    IDLE = "idle"
    #: ``skills/get`` sent to learn (or re-learn after a failed load) the entry.
    AWAITING_ENTRY = "awaiting-entry"
    #: An approval prompt is out.
    AWAITING_APPROVAL = "awaiting-approval"
    #: ``resources/read`` of SKILL.md sent.
    READING_SKILL_MD = "reading-skill-md"
    #: The acting window is open on the held entry; reads are served.
    ACTING = "acting"
    #: A different set was observed; the approval is revoked and a prompt is out (HELD-09).
    REAPPROVAL = "reapproval"
    #: Re-approved, but SKILL.md changed: the copy in context is stale until reloaded (HELD-07).
    STALE = "stale"
    #: The host asked for a move the table does not allow (a bug); nothing is served until the
    #: session is closed or its origin forgotten.
    ERROR = "error"


class LoadInput(enum.Enum):
    """What moves a load session."""

    FETCH_ENTRY = "fetch-entry"
    ASK_APPROVAL = "ask-approval"
    READ_SKILL_MD = "read-skill-md"
    OPEN_WINDOW = "open-window"
    DECLINE = "decline"
    FAIL = "fail"
    SUSPEND = "suspend"
    RESUME = "resume"
    MARK_STALE = "mark-stale"
    CLOSE = "close"
    ABANDON = "abandon"


_S = LoadState
_I = LoadInput

#: Every allowed move, ``(state, input) -> next state``. A pair not listed leads to ERROR.
TRANSITIONS: Final[Mapping[tuple[LoadState, LoadInput], LoadState]] = MappingProxyType(
    {
        (_S.IDLE, _I.FETCH_ENTRY): _S.AWAITING_ENTRY,
        (_S.IDLE, _I.ASK_APPROVAL): _S.AWAITING_APPROVAL,
        (_S.IDLE, _I.READ_SKILL_MD): _S.READING_SKILL_MD,
        (_S.IDLE, _I.DECLINE): _S.IDLE,
        (_S.AWAITING_ENTRY, _I.ASK_APPROVAL): _S.AWAITING_APPROVAL,
        (_S.AWAITING_ENTRY, _I.READ_SKILL_MD): _S.READING_SKILL_MD,
        (_S.AWAITING_ENTRY, _I.DECLINE): _S.IDLE,
        (_S.AWAITING_ENTRY, _I.FAIL): _S.IDLE,
        (_S.AWAITING_ENTRY, _I.ABANDON): _S.IDLE,
        (_S.AWAITING_APPROVAL, _I.ASK_APPROVAL): _S.AWAITING_APPROVAL,
        (_S.AWAITING_APPROVAL, _I.READ_SKILL_MD): _S.READING_SKILL_MD,
        (_S.AWAITING_APPROVAL, _I.DECLINE): _S.IDLE,
        (_S.AWAITING_APPROVAL, _I.ABANDON): _S.IDLE,
        (_S.READING_SKILL_MD, _I.ASK_APPROVAL): _S.AWAITING_APPROVAL,
        (_S.READING_SKILL_MD, _I.READ_SKILL_MD): _S.READING_SKILL_MD,
        (_S.READING_SKILL_MD, _I.OPEN_WINDOW): _S.ACTING,
        (_S.READING_SKILL_MD, _I.FETCH_ENTRY): _S.AWAITING_ENTRY,
        (_S.READING_SKILL_MD, _I.DECLINE): _S.IDLE,
        (_S.READING_SKILL_MD, _I.FAIL): _S.IDLE,
        (_S.READING_SKILL_MD, _I.ABANDON): _S.IDLE,
        (_S.ACTING, _I.SUSPEND): _S.REAPPROVAL,
        (_S.ACTING, _I.CLOSE): _S.IDLE,
        (_S.ACTING, _I.ABANDON): _S.IDLE,
        (_S.REAPPROVAL, _I.SUSPEND): _S.REAPPROVAL,
        (_S.REAPPROVAL, _I.RESUME): _S.ACTING,
        (_S.REAPPROVAL, _I.MARK_STALE): _S.STALE,
        (_S.REAPPROVAL, _I.CLOSE): _S.IDLE,
        (_S.REAPPROVAL, _I.ABANDON): _S.IDLE,
        (_S.STALE, _I.SUSPEND): _S.REAPPROVAL,
        (_S.STALE, _I.READ_SKILL_MD): _S.READING_SKILL_MD,
        (_S.STALE, _I.DECLINE): _S.IDLE,
        (_S.STALE, _I.CLOSE): _S.IDLE,
        (_S.STALE, _I.ABANDON): _S.IDLE,
        (_S.ERROR, _I.CLOSE): _S.IDLE,
        (_S.ERROR, _I.ABANDON): _S.IDLE,
    }
)

#: States in which an acting window is open (the entry is held), suspended or not.
WINDOW_STATES: Final = frozenset({_S.ACTING, _S.REAPPROVAL, _S.STALE})


@final
class LoadStateMachine:
    """One load session's state, moved only through :data:`TRANSITIONS`.

    Attributes:
        state: The current state (IDLE when new).
    """

    __slots__ = ("state",)

    def __init__(self, state: LoadState = LoadState.IDLE) -> None:
        """Start in ``state``."""
        self.state = state

    def process_input(self, event: LoadInput) -> LoadState:
        """Apply one input and return the new state.

        Raises:
            LocalProtocolError: ``(state, event)`` is not in the table (kind
                ``"invalid-transition"``); the machine is now in ERROR.
            TypeError: ``event`` is not a :class:`LoadInput`.
        """
        if not isinstance(event, LoadInput):
            raise TypeError(f"a load session moves on a LoadInput, not {event!r}")
        target = TRANSITIONS.get((self.state, event))
        if target is None:
            raise self.fault(f"a load session in state {self.state.name} cannot take {event.name}")
        self.state = target
        return target

    def fault(self, problem: str) -> LocalProtocolError:
        """Move to ERROR and return the error to raise for ``problem`` (a bug in the host).

        Returns:
            A :class:`~skills_core.errors.LocalProtocolError` of kind ``"invalid-transition"``.
        """
        self.state = LoadState.ERROR
        return LocalProtocolError(
            f"{problem}; the session is now in ERROR and refuses everything until closed",
            kind="invalid-transition",
        )


def transition_diagram() -> str:
    """Return :data:`TRANSITIONS` as a Mermaid ``stateDiagram-v2``."""
    lines = ["stateDiagram-v2", "    [*] --> IDLE"]
    for (state, event), target in TRANSITIONS.items():
        lines.append(f"    {state.name} --> {target.name}: {event.name}")
    return "\n".join(lines) + "\n"
