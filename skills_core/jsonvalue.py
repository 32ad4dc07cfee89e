"""JSON values: the type, a strict checker, and deep freezing for value objects.

Theory of operation: frontmatter and unknown entry fields are arbitrary JSON. Value objects in this
library are immutable, so JSON taken into one is *frozen* (objects become read-only mappings, arrays
become tuples) and *thawed* back into fresh ``dict``/``list`` values on the way out. Before freezing,
:func:`json_value_problems` checks that a value really is JSON: string keys, finite numbers, no
tuples or sets or bytes, no lone surrogates (which no UTF-8 SKILL.md can contain), and a bounded
depth. The walk is iterative, so hostile depth gives a problem report, never a ``RecursionError``.

:data:`ABSENT` is the library's one "no value here" sentinel, distinct from ``None`` (JSON
``null``): a member one side of a frontmatter comparison lacks, or the half of a JSON-RPC response
(``result`` or ``error``) the peer did not send.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Final, TypeAlias

__all__ = [
    "ABSENT",
    "AbsentType",
    "JSONValue",
    "FrozenJSON",
    "MAX_JSON_DEPTH",
    "json_value_problems",
    "freeze_json",
    "thaw_json",
    "escape_pointer_token",
    "json_type_name",
    "loads_strict",
]


class AbsentType(enum.Enum):
    """The type of :data:`ABSENT` (an enum, so that ``Literal[ABSENT]`` narrows in type checks)."""

    ABSENT = "ABSENT"

    def __repr__(self) -> str:
        return "ABSENT"


#: "No value here", distinct from ``None`` (JSON ``null``).
ABSENT: Final = AbsentType.ABSENT

#: A JSON value as :func:`json.loads` returns it.
JSONValue: TypeAlias = "dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None"
#: A frozen JSON value: read-only mappings and tuples instead of dicts and lists.
FrozenJSON: TypeAlias = (
    "Mapping[str, FrozenJSON] | tuple[FrozenJSON, ...] | str | int | float | bool | None"
)

#: Deepest nesting accepted in values taken into value objects. The frontmatter parser caps YAML
#: nesting lower than this; real frontmatter nests at most 5 levels (corpus/README.md).
MAX_JSON_DEPTH: Final = 100


def escape_pointer_token(token: str) -> str:
    """Escape one JSON pointer reference token (RFC 6901 §3: ``~`` → ``~0``, ``/`` → ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def _string_problem(value: str) -> str | None:
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "string contains a lone surrogate, which is not valid Unicode text"
    return None


def json_value_problems(
    value: object, pointer: str = "", *, max_depth: int = MAX_JSON_DEPTH
) -> Iterator[tuple[str, str]]:
    """Yield ``(json_pointer, message)`` for every place where ``value`` is not plain JSON.

    Accepted: ``dict`` with ``str`` keys, ``list``, ``str``, ``int``, finite ``float``, ``bool`` and
    ``None`` (read-only mappings and tuples are accepted too, so frozen values re-check cleanly).
    """
    stack: list[tuple[object, str, int]] = [(value, pointer, 0)]
    while stack:
        item, where, depth = stack.pop()
        if item is None or isinstance(item, bool | int):
            continue
        if isinstance(item, str):
            problem = _string_problem(item)
            if problem is not None:
                yield where, problem
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                yield where, f"{item!r} is not a JSON number"
            continue
        if depth >= max_depth:
            yield where, f"nested deeper than {max_depth} levels"
            continue
        if isinstance(item, dict | MappingProxyType):
            children: list[tuple[object, str, int]] = []
            for key, child in item.items():
                if not isinstance(key, str):
                    yield where, f"object key {key!r} is not a string"
                    continue
                problem = _string_problem(key)
                if problem is not None:
                    yield where, f"object key: {problem}"
                    continue
                children.append((child, f"{where}/{escape_pointer_token(key)}", depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, list | tuple):
            stack.extend(
                (child, f"{where}/{index}", depth + 1)
                for index, child in reversed(list(enumerate(item)))
            )
        else:
            yield where, f"a {type(item).__name__} is not a JSON value"


def freeze_json(value: object) -> FrozenJSON:
    """Return a deep, read-only copy of a JSON value (check it first with json_value_problems).

    Raises:
        ValueError: ``value`` nests too deeply to copy (deeper than the interpreter's recursion
            limit; :func:`json_value_problems` reports anything past :data:`MAX_JSON_DEPTH`).
    """
    try:
        return _freeze(value)
    except RecursionError:
        raise ValueError("JSON value is nested too deeply to freeze") from None


def _freeze(value: object) -> FrozenJSON:
    if isinstance(value, dict | MappingProxyType):
        return MappingProxyType({key: _freeze(child) for key, child in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(child) for child in value)
    if value is None or isinstance(value, str | int | float):
        return value
    raise ValueError(f"a {type(value).__name__} is not a JSON value")


def thaw_json(value: FrozenJSON) -> JSONValue:
    """Return a fresh, mutable ``dict``/``list`` copy of a frozen JSON value.

    Raises:
        ValueError: ``value`` nests too deeply to copy (see :func:`freeze_json`).
    """
    try:
        return _thaw(value)
    except RecursionError:
        raise ValueError("JSON value is nested too deeply to thaw") from None


def _thaw(value: FrozenJSON) -> JSONValue:
    if isinstance(value, Mapping):
        return {key: _thaw(child) for key, child in value.items()}
    if isinstance(value, tuple):
        return [_thaw(child) for child in value]
    return value


def json_type_name(value: object) -> str:
    """Name the JSON type of ``value`` for a message: ``"a string"``, ``"an array"``, ``"null"``...

    Read-only mappings and tuples (frozen JSON) are named as objects and arrays; anything that is
    not JSON at all is named by its Python type.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate object key {key!r}")
            seen.add(key)
    return out


def _no_constants(token: str) -> Any:
    raise ValueError(f"{token} is not a JSON number")


def strict_scanner() -> Callable[[str, int], tuple[JSONValue, int]]:
    """The parser of :func:`loads_strict`, one value at a time (package-private, not in
    ``__all__``): ``scan(text, index)`` returns the JSON value that starts at ``text[index]``
    and the index just after it.

    It refuses what :func:`loads_strict` refuses (a duplicate key, ``NaN``, ``Infinity``) with a
    ValueError; it raises StopIteration when no value starts at ``index``, and RecursionError
    past the interpreter's nesting limit (the caller turns both into its own error).
    """
    decoder = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constants)
    # the decoder's own entry point (C), which its __init__ sets (the stubs do not declare it)
    scan: Callable[[str, int], tuple[JSONValue, int]] = vars(decoder)["scan_once"]
    return scan


def loads_strict(text: str | bytes) -> JSONValue:
    """Parse JSON text, refusing what RFC 8259 allows parsers to read differently.

    Duplicate object keys (a hidden second value) and ``NaN``/``Infinity`` (not JSON numbers) are
    refused; so is nesting deeper than the interpreter allows.

    Raises:
        ValueError: the text is not valid JSON or has one of the above; the message says which.
    """
    try:
        value: JSONValue = json.loads(
            text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constants
        )
    except RecursionError:
        raise ValueError("JSON value is nested too deeply") from None
    return value
