"""The host's modules keep to their jobs: sizes, private names, and what a load session may import.

* No module of ``skills_core/host`` reaches 1,000 lines (the router was split by job: the answer
  handlers live in ``answers``, the carrying out of sessions' intents in ``carrier``).
* No private name (leading underscore) is imported from one module into another: a name two
  modules share is a public name of its module (which may itself be private, like ``_fast``).
* A load session and its window see the router's state only through the read-only views of
  ``intents``: they import neither :class:`~skills_core.host.context.HostContext` nor
  :class:`~skills_core.host.context.OriginRecord`, nor any module of the router's side.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HOST = Path(__file__).resolve().parents[1] / "skills_core" / "host"
MODULES = sorted(HOST.glob("*.py"))

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


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_host_module_reaches_a_thousand_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines < 1000, f"{path.name} has {lines} lines"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_private_name_is_imported_across_modules(path: Path) -> None:
    private = [f"{m}.{n}" for m, n in imports_from(path) if n.startswith("_")]
    assert private == [], f"{path.name} imports private names {private}"


@pytest.mark.parametrize("name", ["session", "window", "intents", "states", "requests"])
def test_a_session_imports_nothing_of_the_router_side(name: str) -> None:
    found = imports_from(HOST / f"{name}.py")
    modules = {m.lstrip(".") for m, _ in found if m.startswith(".") and not m.startswith("..")}
    assert not modules & ROUTER_SIDE, (name, modules & ROUTER_SIDE)
    names = {n for m, n in found if m == ".context"}
    assert not names & {"HostContext", "OriginRecord"}, (name, names)
