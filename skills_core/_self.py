"""How the package names itself: its import name, and how to run this copy in a new process.

The package may be installed as ``skills_core`` or vendored under another name
(``myagent._vendor.skills_core``). Nothing in it spells its own name: imports are relative, the
lazy-export tables are resolved against the package, and the commands that start a copy of it
(``demo`` starting ``serve``, ``serve --http`` naming the app for uvicorn's workers) ask here.
Nothing here reads the disk or the environment: the caller passes its environment in.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Final

__all__ = ["PACKAGE", "module_name", "python_m", "python_m_env"]

#: The import name of this package (``skills_core``, or the name it is vendored under).
PACKAGE: Final = __name__.rpartition(".")[0]


def _import_root() -> str:
    """The folder that holds the outermost package of PACKAGE: what must be on sys.path."""
    # os.path rather than pathlib: ``serve`` imports this, and pathlib costs milliseconds at start.
    folder = os.path.realpath(__file__)
    for _ in range(PACKAGE.count(".") + 2):  # this file, then each package around it
        folder = os.path.dirname(folder)
    return folder


def module_name(relative: str) -> str:
    """The absolute import name of one of the package's modules (``module_name("adapters.asgi")``)."""
    return f"{PACKAGE}.{relative}"


def python_m(*args: str) -> list[str]:
    """The command line ``python -m PACKAGE ARGS...`` with this interpreter."""
    return [sys.executable, "-m", PACKAGE, *args]


def python_m_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with ``PYTHONPATH`` led by the folder this copy of the package imports from.

    A child started with :func:`python_m` under this environment runs this very copy, not another
    one that happens to be installed under the same name.
    """
    child = dict(env)
    rest = child.get("PYTHONPATH", "")
    child["PYTHONPATH"] = _import_root() + (os.pathsep + rest if rest else "")
    return child
