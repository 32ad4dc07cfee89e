"""The host's modules keep to their jobs: what a load session may import.

A load session and its window see the router's state only through the read-only views of
``intents``: they import neither :class:`~skills_core.host.context.HostContext` nor
:class:`~skills_core.host.context.OriginRecord`, nor any module of the router's side (the answer
handlers live in ``answers``, the carrying out of sessions' intents in ``carrier``). Sizes and
private names are checked for the whole package, host included, in ``test_package_layout.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HOST = Path(__file__).resolve().parents[1] / "skills_core" / "host"

#: Modules of the router's side, which a session never imports.
ROUTER_SIDE = {"router", "answers", "carrier", "intake", "reads"}


def imports_from(path: Path) -> list[tuple[str, str]]:
    """``(module, name)`` of every ``from X import name`` in ``path``, relative ones as written."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            module = "." * node.level + (node.module or "")
            found.extend((module, alias.name) for alias in node.names)
    return found


@pytest.mark.parametrize("name", ["session", "window", "intents", "states", "requests"])
def test_a_session_imports_nothing_of_the_router_side(name: str) -> None:
    found = imports_from(HOST / f"{name}.py")
    modules = {m.lstrip(".") for m, _ in found if m.startswith(".") and not m.startswith("..")}
    assert not modules & ROUTER_SIDE, (name, modules & ROUTER_SIDE)
    names = {n for m, n in found if m == ".context"}
    assert not names & {"HostContext", "OriginRecord"}, (name, names)
