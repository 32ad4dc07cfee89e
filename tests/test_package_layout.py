"""The package keeps one way to do each thing: private names stay home, objects are built one way.

* No private name (leading underscore, not a dunder) is imported from one module of
  ``skills_core`` into another, nor read off another module (``module._name``): a name two modules
  share is a public name of its module, kept out of ``__all__`` when it is not user API, or a
  public name of a private module (like ``_fast.slot_setters``), as h11 shares
  ``_util.LocalProtocolError``.
* No object has its class assigned (``obj.__class__ = ...``): a value object is built by its
  constructor, a classmethod parser or a trusted constructor of :mod:`skills_core._fast`, and
  nothing else.
* No module reaches 1,000 lines but the YAML parser.

Every module of the package is checked, adapters included.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "skills_core"
#: Modules allowed past 1,000 lines.
LONG = {"_yaml.py"}


def package_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_package_module(name: str) -> bool:
    """Whether the dotted ``name`` is a module of this package (a file or a folder of it)."""
    base = ROOT.joinpath(*name.split("."))
    return name.startswith("skills_core.") and (
        base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()
    )


def private_uses(source: str, module: str, *, package: bool = False) -> list[str]:
    """Every private name the code ``source`` of ``module`` (a package's ``__init__`` when
    ``package``) imports from another module, or reads off a module of this package."""
    tree = ast.parse(source)
    here = module if package else module.rpartition(".")[0]
    found: list[str] = []
    modules: set[str] = set()  # local names bound to modules of the package
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            written = "." * node.level + (node.module or "")
            origin = importlib.util.resolve_name(written, here)
            for alias in node.names:
                if is_private(alias.name):
                    found.append(f"from {written} import {alias.name}")
                if is_package_module(f"{origin}.{alias.name}"):
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules.update(alias.asname or alias.name for alias in node.names if alias.asname)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and is_private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            found.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
    return found


def class_assignments(source: str) -> list[int]:
    """The lines where the code ``source`` assigns an object's ``__class__``."""
    tree = ast.parse(source)
    lines = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        lines += [
            t.lineno for t in targets if isinstance(t, ast.Attribute) and t.attr == "__class__"
        ]
        if (
            isinstance(node, ast.Call)
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)  # bytes constants too (python -bb)
            and node.args[1].value == "__class__"
        ):
            lines.append(node.lineno)  # setattr(obj, "__class__", ...), object.__setattr__(...)
    return lines


@pytest.mark.parametrize("path", package_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_private_name_is_imported_across_modules(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    found = private_uses(source, module_name(path), package=path.name == "__init__.py")
    assert found == [], f"{path.relative_to(PACKAGE)} uses private names of other modules"


@pytest.mark.parametrize("path", package_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_object_has_its_class_assigned(path: Path) -> None:
    found = class_assignments(path.read_text(encoding="utf-8"))
    assert found == [], f"{path.relative_to(PACKAGE)} assigns __class__"


@pytest.mark.parametrize("path", package_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_module_reaches_a_thousand_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines < 1000 or path.name in LONG, f"{path.relative_to(PACKAGE)} has {lines} lines"


def test_the_checks_see_what_they_look_for() -> None:
    """Each check fails on what it forbids (code written for the purpose, as if in the host)."""
    source = (
        "from __future__ import annotations\n"
        "from . import cache\n"
        "from ..entry import _NO_EXTRA, SkillEntry\n"
        "from .._fast import new_blank\n"
        "import skills_core.uri as uri\n"
        "x = cache._MISS\n"
        "y = cache.CacheLookup\n"
        "z = uri._fail\n"
        "class A: pass\n"
        "a = A()\n"
        "a.__class__ = A\n"
        "object.__setattr__(a, '__class__', A)\n"
        "print(__name__.__class__, SkillEntry, new_blank, x, y, z, a._b)\n"
    )
    assert private_uses(source, "skills_core.host.sample") == [
        "from ..entry import _NO_EXTRA",
        "cache._MISS (line 6)",
        "uri._fail (line 8)",
    ]
    assert private_uses("from .entry import unchecked_entry\n", "skills_core", package=True) == []
    assert class_assignments(source) == [11, 12]
