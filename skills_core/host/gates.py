"""Permission and execution gates for MCP-served skills.

Theory of operation
-------------------
A remote server that fills ``allowed-tools`` is asking for elevated access on the host, not stating
a fact about itself (spec, "No implicit permission grants"). Two gates keep such requests inert:

* **Permission-widening fields** (APR-08, APR-09, APR-12): a frontmatter field in the host's
  widening set (by default ``allowed-tools``, ``hooks``, ``permissions`` and ``scripts``: tool and
  filesystem grants and declarative execution) takes effect only when the user granted *that field*
  for *that skill* in its approval, which binds the grant to the manifest and revokes it with the
  approval (APR-02). Everything else in the frontmatter is data. Only the frontmatter of the skill
  the user approved counts: a nested SKILL.md read as a supporting file is never consulted
  (APR-05, APR-10), and a permission-like key in a resource's ``_meta`` is never read at all
  (WG-13, SEC-08).
* **Code execution while acting** (APR-11, APR-13, WG-08): while any acting window on an
  MCP-served skill is open, a host code-execution (or agent-config-writing, WG-11) tool call needs
  the skill's execution approval. :func:`exec_decision` aggregates the open windows: any suspended
  window (changed skill awaiting re-approval, or stale) denies; any window without execution
  approval requires a prompt; a dynamic skill always requires one (its content is unverifiable);
  with no window open the rule does not apply. Content served from the cache counts exactly the
  same (CACHE-05).

The host classifies its own tool calls; this module only answers "may this happen now".
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, final

from ..jsonvalue import JSONValue

__all__ = [
    "DEFAULT_WIDENING_FIELDS",
    "widening_fields",
    "ExecDecision",
    "WindowExecState",
    "ExecGateResult",
    "exec_decision",
    "SkillPermissions",
]

#: Frontmatter fields that widen what the model may do, or make the host run something: the Agent
#: Skills ``allowed-tools``, and the ``hooks``/``permissions``/``scripts`` fields some hosts parse.
DEFAULT_WIDENING_FIELDS: Final = frozenset({"allowed-tools", "hooks", "permissions", "scripts"})


def widening_fields(frontmatter: Mapping[str, object], fields: Iterable[str]) -> tuple[str, ...]:
    """Return the widening ``fields`` present in ``frontmatter``, sorted."""
    return tuple(sorted(name for name in set(fields) if name in frontmatter))


class ExecDecision(enum.StrEnum):
    """May host-side code execution happen now?"""

    #: Every open window's skill has execution approval.
    ALLOW = "allow"
    #: Ask the user first (per call): a window's skill lacks execution approval, or is dynamic.
    REQUIRE_APPROVAL = "require-approval"
    #: A window's skill changed and awaits re-approval or a reload (HELD-07, HELD-09).
    DENY = "deny"
    #: No MCP-served skill is being acted on; this gate does not apply (APR-13).
    NOT_APPLICABLE = "not-applicable"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class WindowExecState:
    """What the gate needs to know about one open acting window.

    Attributes:
        origin: Server label.
        uri: Skill URI.
        suspended: Reads and execution are suspended (re-approval or reload needed).
        dynamic: The skill is dynamic.
        exec_approved: The skill's approval includes code execution.
    """

    origin: str
    uri: str
    suspended: bool
    dynamic: bool
    exec_approved: bool


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ExecGateResult:
    """The gate's answer.

    Attributes:
        decision: See :class:`ExecDecision`.
        skills: ``(origin, uri)`` of the windows behind a DENY or REQUIRE_APPROVAL decision.
        message: One sentence naming them.
    """

    decision: ExecDecision
    skills: tuple[tuple[str, str], ...]
    message: str


def exec_decision(windows: Iterable[WindowExecState]) -> ExecGateResult:
    """Aggregate the open windows into one decision (APR-11, APR-13, WG-08)."""
    states = list(windows)
    if not states:
        return ExecGateResult(
            decision=ExecDecision.NOT_APPLICABLE,
            skills=(),
            message="no MCP-served skill is being acted on",
        )
    suspended = [(s.origin, s.uri) for s in states if s.suspended]
    if suspended:
        return ExecGateResult(
            decision=ExecDecision.DENY,
            skills=tuple(suspended),
            message="execution is suspended while these skills await re-approval or a reload: "
            + ", ".join(f"{o}:{u}" for o, u in suspended),
        )
    needing = [(s.origin, s.uri) for s in states if s.dynamic or not s.exec_approved]
    if needing:
        return ExecGateResult(
            decision=ExecDecision.REQUIRE_APPROVAL,
            skills=tuple(needing),
            message="code execution while acting on these MCP-served skills needs the user's "
            "approval: " + ", ".join(f"{o}:{u}" for o, u in needing),
        )
    return ExecGateResult(
        decision=ExecDecision.ALLOW,
        skills=(),
        message="every skill being acted on has execution approval",
    )


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillPermissions:
    """Which permission-widening frontmatter fields of an acting skill take effect (APR-08..10).

    Attributes:
        origin: Server label.
        uri: Skill URI.
        honoured: Granted fields and their values; everything else is ignored.
        ignored: Widening fields present but not granted.
        allow_exec: Code execution while acting was approved.
    """

    origin: str
    uri: str
    honoured: Mapping[str, JSONValue] = field(default_factory=lambda: MappingProxyType({}))
    ignored: tuple[str, ...] = ()
    allow_exec: bool = False

    @property
    def allowed_tools(self) -> JSONValue | None:
        """The ``allowed-tools`` value when granted, else None (ignored; APR-09)."""
        return self.honoured.get("allowed-tools")
