"""Helpers shared by the frontmatter tests (imported as ``frontmatter_helpers``; not a conftest).

* :func:`strict_equal` compares Python values with their JSON types: ``True != 1``, ``1 != 1.0``,
  ``-0.0 != 0.0``, and mapping key order counts (our parser promises document order).
* :func:`corpus_files` lists the real-world SKILL.md corpus.
* :func:`fm` wraps YAML text in ``---`` delimiters, and :func:`load` parses such a document.
"""

from __future__ import annotations

import math
from pathlib import Path

from skills_core.frontmatter import parse_frontmatter
from skills_core.jsonvalue import JSONValue

#: ``shared/corpus`` next to the repository checkout (it exists here and in CI).
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
CORPUS_FILES = CORPUS / "skill-md"


def corpus_files() -> list[Path]:
    """Every corpus SKILL.md, in a stable order."""
    return sorted(CORPUS_FILES.rglob("SKILL.md"))


def strict_equal(a: object, b: object) -> bool:
    """Equality on exact Python types (so on JSON types), keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        assert isinstance(b, float)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b


def fm(yaml_text: str) -> str:
    """A SKILL.md whose frontmatter is ``yaml_text`` (which must end with a line feed)."""
    return f"---\n{yaml_text}---\nbody\n"


def load(yaml_text: str) -> dict[str, JSONValue]:
    """Parse ``yaml_text`` as a SKILL.md frontmatter and return the data."""
    return parse_frontmatter(fm(yaml_text)).data
