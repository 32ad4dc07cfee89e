"""Fast construction of frozen, slotted value objects that package code made or checked itself.

Theory of operation
-------------------
A frozen dataclass's ``__init__`` parses keyword arguments, then sets each field through
``object.__setattr__`` (its own ``__setattr__`` refuses). That is the right constructor for
anything built from a peer's data, because ``__post_init__`` or the classmethod parsers validate
there. A few objects, though, are built by the thousand from parts the package made or checked
itself: entries and resources of a catalog (from digests it computed and frontmatter its parser
produced), snapshot files, parsed URIs, request events, encoded results, deliveries of verified
files. For those, validating again or paying for keyword parsing is pure cost, and this module is
the one documented way around it. Two techniques, both building exactly the object the
dataclass constructor builds (equal, same repr and hash, still frozen: each builder's test in
``tests/test_fast_constructors.py`` checks that):

* :func:`slot_setters` gives the ``__set__`` of the slot descriptors of named fields, so a builder
  is ``obj = new_blank(cls)`` followed by one call per field (about half the cost of the
  constructor). A misspelt or renamed field fails when the module is imported, not later.
* :func:`unfrozen_twin` gives a class with the same slots and bases but no frozen ``__setattr__``:
  a builder fills an instance of the twin with plain attribute stores and then sets its
  ``__class__`` to the real class (CPython allows it between classes of identical layout). A third
  of the constructor's cost, for the hottest builder (a verified file's delivery).

Package-private: a builder that uses either must only ever receive data the package made or
checked (its docstring says where the check happened).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["new_blank", "slot_setters", "unfrozen_twin"]

#: An instance of a class with no ``__init__`` run (its slots unset until a builder sets them).
new_blank: Final = object.__new__


def slot_setters(cls: type, *names: str) -> tuple[Callable[[Any, Any], None], ...]:
    """The slot descriptors' setters of the fields ``names`` of ``cls``, in that order.

    Raises:
        TypeError: a name is not a slot of ``cls`` itself.
    """
    setters = []
    for name in names:
        descriptor = cls.__dict__.get(name)
        if descriptor is None or not hasattr(descriptor, "__set__"):
            raise TypeError(f"{cls.__name__} has no slot {name!r}")
        setters.append(descriptor.__set__)
    return tuple(setters)


def unfrozen_twin(cls: type) -> type:
    """A class with the slot layout of ``cls`` (a frozen slotted dataclass) and none of its checks.

    Instances of the twin take plain attribute stores; set ``instance.__class__ = cls`` once every
    slot is filled. The twin derives from ``cls``'s base, so it has the same layout.

    Raises:
        TypeError: ``cls`` is not a slotted class with a single base.
    """
    slots = cls.__dict__.get("__slots__")
    if slots is None or len(cls.__bases__) != 1:
        raise TypeError(f"{cls.__name__} is not a slotted class with one base")
    return type(f"_Unfrozen{cls.__name__}", cls.__bases__, {"__slots__": tuple(slots)})
