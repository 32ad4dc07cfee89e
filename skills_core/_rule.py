"""The :class:`Rule` value and the address of a rule's entry: what :mod:`skills_core.rules` is made of.

Split from :mod:`skills_core.rules` so that the rows of a family can live in a module of their own
(:mod:`skills_core._rules_server`); :mod:`skills_core.rules` re-exports everything here. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from .validation import Severity

__all__ = ["Rule", "RULES_URL", "help_uri"]

#: Where ``docs/rules.md`` is published: each rule's ``helpUri`` is this page and its code as the
#: anchor. ``skills-core validate --rules-url`` (which the GitHub Action sets to its own
#: repository and ref) puts another page in its place.
RULES_URL: Final = "https://github.com/skills-core/skills-core/blob/main/docs/rules.md"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """What a finding ``code`` means: the rule behind it.

    Attributes:
        code: The finding code (the SARIF rule id, the page's anchor).
        family: One of :data:`FAMILIES`.
        severity: The severity its findings have.
        summary: One line: what is wrong.
        help: What to do about it.
        why: Why the rule exists, naming the specification section or requirement behind it
            (requirement IDs such as ``FMT-01`` become links on the page).
        bad: A failing example (a ``SKILL.md`` excerpt, a file listing or JSON), or ``""``.
        good: The same example, fixed, or ``""``.
        silence: How to silence it, when more than ``--ignore CODE`` can be said.
    """

    code: str
    family: str
    severity: Severity
    summary: str
    help: str
    why: str = ""
    bad: str = ""
    good: str = ""
    silence: str = ""

    @property
    def name(self) -> str:
        """The rule's name in PascalCase, e.g. ``NameMismatch`` (SARIF ``name``)."""
        return "".join(part.capitalize() for part in self.code.split("-"))

    @property
    def help_uri(self) -> str:
        """The rule's entry in the published ``docs/rules.md`` (:func:`help_uri`)."""
        return help_uri(self.code)


def help_uri(code: str, page: str = RULES_URL) -> str:
    """The address of ``code``'s entry on ``page`` (the code is the entry's anchor)."""
    return f"{page}#{code}"
