"""Trusted constructors: the one way package code builds a value object without its constructor.

Theory of operation
-------------------
A value object is built by its constructor (the dataclass ``__init__``, whose ``__post_init__``
checks the fields where they need checking) or, from a peer's data, by a classmethod parser
(``SkillEntry.from_json``, ``SkillURI.parse``, ...) that checks everything and then builds. A few
are built in great numbers, on hot paths, from parts the package made or checked itself: a
catalog's entries and resources (from digests it computed and frontmatter its parser produced),
the request events of an endpoint, the records, intents and deliveries of a host's file reads.
For those, and only where a benchmark shows that the constructor costs a noticeable share of the
path (each benchmark in ``tests/benchmarks`` prints "plain constructor vs trusted constructor"
for the ones on its path), there is one other way, a **trusted constructor**:

* a module-level function beside the class, which takes every field and documents where its
  inputs were checked;
* it makes an instance with no ``__init__`` run (:data:`new_blank`) and sets every slot through
  its descriptor's setter, looked up once, when the module is imported, with :func:`slot_setters`;
* :func:`slot_setters` refuses (at import) a name that is not a slot of the class or of a base,
  and a list that leaves a slot out, so a builder cannot forget a field the class gains.

The object is the one the constructor builds (equal, same repr and hash, same type, still frozen:
``tests/test_fast_constructors.py`` checks each trusted constructor against the plain one), less
``__post_init__``: a caller passes every value in its final form (frozen JSON, tuples). Two build
what no public constructor may: an ``EncodedResult`` (its ``__init__`` refuses, so that only
``encode_result`` makes one) and a ``PublishedSkill`` restored from a digest index record (its
entry built on first use). A frozen object that caches what it computes (a lazy attribute) sets
it with ``object.__setattr__`` or its slot's setter; that is memoisation, not construction.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MemberDescriptorType
from typing import Any, Final

__all__ = ["new_blank", "slot_setters"]

#: An instance of a class with no ``__init__`` run (its slots unset until a builder sets them).
new_blank: Final = object.__new__


def _slots_of(cls: type) -> set[str]:
    """Every slot an instance of ``cls`` has (those of its bases included)."""
    slots: set[str] = set()
    for klass in cls.__mro__:
        declared = klass.__dict__.get("__slots__", ())
        slots.update((declared,) if isinstance(declared, str) else declared)
    slots.discard("__weakref__")
    slots.discard("__dict__")
    return slots


def slot_setters(cls: type, *names: str) -> tuple[Callable[[Any, Any], None], ...]:
    """The setters of the slot descriptors of ``cls`` named ``names``, in that order.

    ``names`` must be every slot of ``cls`` (its bases' included), each once: a trusted
    constructor sets them all.

    Raises:
        TypeError: a name is not a slot of ``cls`` or of a base, a slot is named twice, or a slot
            of ``cls`` is not named.
    """
    slots = _slots_of(cls)
    setters = []
    for name in names:
        # The attribute an instance's lookup finds: a slot's descriptor, unless a subclass hid it.
        found = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
        if name not in slots or not isinstance(found, MemberDescriptorType):
            raise TypeError(f"{cls.__name__} has no slot {name!r}")
        setters.append(found.__set__)
    if len(set(names)) != len(names):
        raise TypeError(f"a slot of {cls.__name__} is named twice in {names!r}")
    missing = slots - set(names)
    if missing:
        raise TypeError(f"{cls.__name__}'s slots {sorted(missing)!r} are not named")
    return tuple(setters)
