"""Names a package exports but loads on first use (PEP 562): the one helper both packages share.

``skills_core`` and ``skills_core.server`` each keep a table ``{name: module}`` of the names that
come from heavier modules, each module named relative to the package (``".check"``) so that a copy
vendored under another name loads its own modules. They import those names under
``TYPE_CHECKING`` (so type checkers see what runs; ``tests/test_api.py`` checks that the table, the
imports and ``__all__`` agree), and install the module-level ``__getattr__`` and ``__dir__`` this
helper makes. A name is imported from its module the first time it is asked for, then kept in the
package's namespace.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: MutableMapping[str, object], table: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose ``table`` names load on first use.

    Args:
        namespace: The package's ``globals()``; its ``__all__`` is read when ``dir()`` is asked.
        table: Each lazily exported name, with the module it comes from, relative to the package
            (``".check"``).
    """
    package = namespace["__name__"]
    assert isinstance(package, str)

    def get_attribute(name: str) -> object:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def listing() -> list[str]:
        exported = namespace["__all__"]
        assert isinstance(exported, list)
        return sorted(exported)

    return get_attribute, listing
