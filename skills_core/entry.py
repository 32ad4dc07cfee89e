"""Skill entries: the value objects of ``skills/list`` and ``skills/get``, and their validation.

Theory of operation
-------------------
A skill entry is ``{uri, frontmatter, resources}`` (spec, "Skill Entries"): the SKILL.md URI, the
verbatim frontmatter as JSON, and either the complete manifest of the skill's files (each with a
digest and a size) or the string ``"dynamic"``. The same shape and rules apply to both methods
(ENTRY-01, GET-06), so one validator serves both.

:meth:`SkillEntry.from_json` is the only way untrusted JSON becomes an entry. It checks every rule
and reports **every** problem it finds, each with a JSON pointer, in one
:class:`~skills_core.errors.InvalidEntryError`. An entry that is well-formed but exceeds the limits
(512 resources, 16 MiB, inclusive; spec "Limits") raises the subclass
:class:`~skills_core.errors.EntryOverLimitError` instead, so a host can tell "too large for me" from
"broken". Limits are checked from the entry alone, before any file is fetched (ENTRY-20), with sizes
summed as Python ints so no overflow can hide a total.

Rules checked (requirement IDs in brackets):

* ``uri`` is a valid SKILL.md URI [ENTRY-02, URI-02, URI-04, URI-07, SIL-27], with no query or
  fragment [SIL-03];
* ``frontmatter`` is an object with string ``name`` and ``description`` [ENTRY-03], ``name`` equals
  the final skill-path segment [ENTRY-05, URI-06], and all of it is plain JSON;
* ``resources`` is present and is ``"dynamic"`` or an array [ENTRY-06]; in the array each element
  is an object with a string ``uri`` inside the skill directory or equal to the SKILL.md URI
  [ENTRY-10], a well-formed ``digest`` [ENTRY-12] and an integer ``size`` in ``0..2**53-1``
  [ENTRY-11]; every ``uri`` appears once [ENTRY-08, SIL-04]; one of them is the entry's own ``uri``
  [ENTRY-09]; no two paths collide under case folding or NFC, or as both a file and a folder
  [SIL-05, WG-06]; a zero size goes only with the empty digest and the reverse [SIL-18].

Unknown fields, at entry level and on resources, are kept verbatim for :meth:`SkillEntry.to_json`
and otherwise ignored: nothing is fetched or trusted through them (VER-18).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias, final

from ._fast import new_blank, slot_setters
from .digest import EMPTY_DIGEST, is_valid_digest
from .errors import (
    EntryOverLimitError,
    EntryProblem,
    InvalidEntryError,
    URIError,
    URIErrorKind,
    quote_for_message,
)
from .jsonvalue import (
    FrozenJSON,
    JSONValue,
    escape_pointer_token,
    freeze_json,
    json_type_name,
    json_value_problems,
    loads_strict,
    thaw_json,
)
from .names import skill_name_problem
from .spec import DYNAMIC, MAX_RESOURCES, MAX_SAFE_INTEGER, MAX_TOTAL_BYTES
from .uri import SkillURI, percent_decode

__all__ = [
    "Limits",
    "DEFAULT_LIMITS",
    "SkillResource",
    "SkillEntry",
    "ResourceKey",
    "Resources",
]

#: ``(uri, digest, size)``: what an approval binds to for one file (docs/design.md#d7).
ResourceKey: TypeAlias = tuple[str, str, int]
#: An entry's ``resources``: the manifest, or ``"dynamic"``.
Resources: TypeAlias = "tuple[SkillResource, ...] | Literal['dynamic']"

_KNOWN_RESOURCE_KEYS: Final = frozenset({"uri", "digest", "size"})
_NO_EXTRA: Final[Mapping[str, Any]] = MappingProxyType({})
_KNOWN_ENTRY_KEYS: Final = frozenset({"uri", "frontmatter", "resources"})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Per-skill limits a host enforces from the entry alone (spec, "Limits").

    The defaults are the spec's: hosts MUST accept up to and including 512 resources and
    16,777,216 bytes (ENTRY-17) and MAY accept more (ENTRY-18), so the values may be raised but a
    conforming host never lowers them.

    Attributes:
        max_resources: Most entries in ``resources`` (SKILL.md included), inclusive.
        max_total_bytes: Largest sum of ``size`` over ``resources``, inclusive.
    """

    max_resources: int = MAX_RESOURCES
    max_total_bytes: int = MAX_TOTAL_BYTES

    def __post_init__(self) -> None:
        for name in ("max_resources", "max_total_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Limits.{name} must be a positive int, not {value!r}")


#: The spec's limits: 512 resources and 16 MiB per skill.
DEFAULT_LIMITS: Final = Limits()


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillResource:
    """One file of a skill: its URI, the SHA-256 digest of its raw bytes, and their length.

    Attributes:
        uri: Resource URI of the file (an exact string).
        digest: ``sha256:`` + 64 lowercase hex characters.
        size: Length of the raw bytes, ``0..2**53-1``.
        extra: Unknown fields from the wire, kept for :meth:`to_json` and otherwise ignored.
    """

    uri: str
    digest: str
    size: int
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        problems = _resource_field_problems(
            {"uri": self.uri, "digest": self.digest, "size": self.size}, ""
        )
        if problems:
            raise InvalidEntryError(tuple(problems))
        _check_plain_json(self.extra, "")
        object.__setattr__(self, "extra", freeze_json(self.extra))

    @property
    def key(self) -> ResourceKey:
        """``(uri, digest, size)``, the unit an approval binds to."""
        return (self.uri, self.digest, self.size)

    def to_json(self) -> dict[str, JSONValue]:
        """Return the wire form ``{"uri", "digest", "size", ...extra}``."""
        out: dict[str, JSONValue] = {"uri": self.uri, "digest": self.digest, "size": self.size}
        for key, value in self.extra.items():
            out[key] = thaw_json(value)
        return out


def _check_plain_json(value: object, pointer: str) -> None:
    problems = tuple(
        EntryProblem(code="not-json", pointer=where, message=message)
        for where, message in json_value_problems(value, pointer)
    )
    if problems:
        raise InvalidEntryError(problems)


def _resource_field_problems(item: Mapping[str, object], pointer: str) -> list[EntryProblem]:
    """Check the ``uri``/``digest``/``size`` fields of one resource (ENTRY-11, ENTRY-12, SIL-18)."""
    problems = [
        EntryProblem(
            code=f"missing-{key}", pointer=f"{pointer}/{key}", message=f"'{key}' is missing"
        )
        for key in ("uri", "digest", "size")
        if key not in item
    ]
    uri = item.get("uri", "")
    digest = item.get("digest")
    size = item.get("size")
    if not isinstance(uri, str):
        problems.append(
            EntryProblem(
                code="bad-resource-uri",
                pointer=f"{pointer}/uri",
                message=f"'uri' must be a string, not {json_type_name(uri)}",
            )
        )
    if "digest" in item and not is_valid_digest(digest):
        problems.append(
            EntryProblem(
                code="bad-digest",
                pointer=f"{pointer}/digest",
                message=f"'digest' {quote_for_message(digest)} is not 'sha256:' followed by 64 "
                "lowercase hex characters",
            )
        )
    if "size" not in item:
        return problems
    if isinstance(size, bool) or not isinstance(size, int):
        problems.append(
            EntryProblem(
                code="bad-size",
                pointer=f"{pointer}/size",
                message=f"'size' must be an integer number of bytes, not {json_type_name(size)} "
                f"{quote_for_message(size)}",
            )
        )
    elif size < 0 or size > MAX_SAFE_INTEGER:
        problems.append(
            EntryProblem(
                code="bad-size",
                pointer=f"{pointer}/size",
                message=f"'size' {size} is outside 0..{MAX_SAFE_INTEGER}",
            )
        )
    elif is_valid_digest(digest) and (size == 0) != (digest == EMPTY_DIGEST):
        problems.append(
            EntryProblem(
                code="size-digest-conflict",
                pointer=pointer,
                message=(
                    "'size' is 0 but 'digest' is not the digest of zero bytes"
                    if size == 0
                    else f"'digest' is the digest of zero bytes but 'size' is {size}"
                ),
            )
        )
    return problems


def _collision_key(file_path: str) -> str:
    """What a file path becomes on a case-insensitive, normalising filesystem (WG-06)."""
    if file_path.isascii() and "%" not in file_path:
        return file_path.lower()  # casefold and NFC are the identity on ASCII beyond lowercasing
    decoded = percent_decode(file_path)
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", decoded).casefold())


@final
@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SkillEntry:
    """One skill as ``skills/list`` and ``skills/get`` describe it.

    Build from the wire with :meth:`from_json`. The constructor validates structure too (not
    limits, which are a host policy: see :meth:`check_limits`), so no malformed entry can exist.

    Equality and hashing are on the exact wire content (canonical JSON), so ``True`` never equals
    ``1`` and a reordered ``resources`` array is a different entry; use :attr:`resource_set` to
    compare manifests as sets (SIL-19).

    Attributes:
        uri: The SKILL.md URI.
        frontmatter: The frontmatter, frozen (read-only mappings, tuples for arrays); any JSON
            object may be passed to the constructor.
        resources: The manifest as a tuple of :class:`SkillResource` (any sequence may be passed
            to the constructor), or ``"dynamic"``.
        extra: Unknown entry-level fields from the wire, kept for :meth:`to_json`.
    """

    uri: str
    frontmatter: Mapping[str, Any]
    resources: Sequence[SkillResource] | Literal["dynamic"]
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    _skill: SkillURI | None = field(default=None, init=False, repr=False)
    _canonical: str | None = field(default=None, init=False, repr=False)
    _index: Mapping[str, SkillResource] | None = field(default=None, init=False, repr=False)
    _set: frozenset[ResourceKey] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        resources: object = self.resources
        if isinstance(resources, Sequence) and not isinstance(resources, str):
            resources = tuple(resources)
            object.__setattr__(self, "resources", resources)
        wire = {
            "uri": self.uri,
            "frontmatter": self.frontmatter,
            "resources": (
                [r.to_json() if isinstance(r, SkillResource) else r for r in resources]
                if isinstance(resources, tuple)
                else resources
            ),
        }
        problems, skill = _entry_problems(wire, None)
        if isinstance(resources, tuple):
            for index, item in enumerate(resources):
                if not isinstance(item, SkillResource):
                    problems.append(
                        EntryProblem(
                            code="bad-resource",
                            pointer=f"/resources/{index}",
                            message=f"must be a SkillResource, not {type(item).__name__}",
                        )
                    )
        extra_problems = [
            EntryProblem(code="not-json", pointer=where, message=message)
            for where, message in json_value_problems(self.extra, "")
        ]
        problems.extend(extra_problems)
        if problems:
            raise InvalidEntryError(
                tuple(problems), uri=self.uri if isinstance(self.uri, str) else None
            )
        object.__setattr__(self, "_skill", skill)
        object.__setattr__(self, "frontmatter", freeze_json(self.frontmatter))
        object.__setattr__(self, "extra", freeze_json(self.extra))

    # -- construction from the wire -------------------------------------------------------------

    @classmethod
    def from_json(cls, obj: object, *, limits: Limits | None = DEFAULT_LIMITS) -> SkillEntry:
        """Validate a decoded JSON skill entry and return it as a value object.

        Args:
            obj: The decoded JSON (e.g. one element of ``result.skills``, or ``result.skill``).
            limits: Limits to enforce from the entry alone; ``None`` skips the limit check.

        Raises:
            InvalidEntryError: with every problem found, when the entry is malformed.
            EntryOverLimitError: when the entry is well-formed but exceeds ``limits``.
        """
        problems, skill = _entry_problems(obj, limits)
        uri = obj.get("uri") if isinstance(obj, dict) else None
        uri_text = uri if isinstance(uri, str) else None
        if problems:
            if all(p.over_limit for p in problems):
                raise EntryOverLimitError(tuple(problems), uri=uri_text)
            raise InvalidEntryError(tuple(problems), uri=uri_text)
        assert isinstance(obj, dict)
        assert skill is not None
        raw = obj["resources"]
        resources: tuple[SkillResource, ...] | Literal["dynamic"] = (
            DYNAMIC if raw == DYNAMIC else tuple(_trusted_resource(item) for item in raw)
        )
        extra = {k: v for k, v in obj.items() if k not in _KNOWN_ENTRY_KEYS}
        # skill.uri is obj["uri"] itself: SkillURI.parse keeps the string it was given.
        return unchecked_entry(
            skill=skill,
            frontmatter=freeze_json(obj["frontmatter"]),
            resources=resources,
            extra=freeze_json(extra),
        )

    @classmethod
    def from_json_text(
        cls, text: str | bytes, *, limits: Limits | None = DEFAULT_LIMITS
    ) -> SkillEntry:
        """Parse JSON text (rejecting duplicate keys, NaN and Infinity) and call :meth:`from_json`.

        Raises:
            InvalidEntryError: the text is not valid JSON, or the entry is malformed.
            EntryOverLimitError: the entry exceeds ``limits``.
        """
        return cls.from_json(_loads_strict(text), limits=limits)

    # -- views ------------------------------------------------------------------------------------

    @property
    def skill(self) -> SkillURI:
        """The parsed SKILL.md URI."""
        assert self._skill is not None
        return self._skill

    @property
    def name(self) -> str:
        """The skill name (``frontmatter.name``, equal to the URI's final skill-path segment)."""
        return self.skill.name

    @property
    def description(self) -> str:
        """``frontmatter.description``."""
        value = self.frontmatter["description"]
        assert isinstance(value, str)
        return value

    @property
    def root(self) -> str:
        """The skill's root directory URI (no trailing slash)."""
        return self.skill.root

    @property
    def is_dynamic(self) -> bool:
        """True when ``resources`` is ``"dynamic"``: no manifest, no content integrity."""
        return self.resources == DYNAMIC

    @property
    def resource_set(self) -> frozenset[ResourceKey]:
        """The manifest as a set of ``(uri, digest, size)``; what an approval binds to (APR-01).

        Raises:
            ValueError: the skill is dynamic and has no manifest.
        """
        if isinstance(self.resources, str):
            raise ValueError(f"{self.uri} is dynamic: it has no manifest to bind to")
        keys = self._set
        if keys is None:
            keys = frozenset(r.key for r in self.resources)
            object.__setattr__(self, "_set", keys)
        return keys

    @property
    def total_size(self) -> int:
        """Sum of ``size`` over the manifest (0 for a dynamic skill)."""
        if isinstance(self.resources, str):
            return 0
        return sum(r.size for r in self.resources)

    def resource(self, uri: str) -> SkillResource | None:
        """Return the manifest entry whose URI is exactly ``uri``, or None (always None if dynamic)."""
        if isinstance(self.resources, str):
            return None
        index = self._index
        if index is None:
            index = MappingProxyType({r.uri: r for r in self.resources})
            object.__setattr__(self, "_index", index)
        return index.get(uri)

    def check_limits(self, limits: Limits = DEFAULT_LIMITS) -> None:
        """Raise :class:`EntryOverLimitError` when the manifest exceeds ``limits`` (ENTRY-20)."""
        if isinstance(self.resources, str):
            return
        problems = _limit_problems(len(self.resources), self.total_size, limits)
        if problems:
            raise EntryOverLimitError(tuple(problems), uri=self.uri)

    def to_json(self) -> dict[str, JSONValue]:
        """Return the wire form; ``SkillEntry.from_json(e.to_json()) == e`` always holds."""
        out: dict[str, JSONValue] = {
            "uri": self.uri,
            "frontmatter": thaw_json(self.frontmatter),
            "resources": (
                DYNAMIC
                if isinstance(self.resources, str)
                else [r.to_json() for r in self.resources]
            ),
        }
        for key, value in self.extra.items():
            out[key] = thaw_json(value)
        return out

    @property
    def canonical_json(self) -> str:
        """The entry as canonical JSON text (sorted keys, no spaces): the basis of equality."""
        text = self._canonical
        if text is None:
            text = json.dumps(
                self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
            )
            object.__setattr__(self, "_canonical", text)
        return text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SkillEntry):
            return NotImplemented
        return self is other or self.canonical_json == other.canonical_json

    def __hash__(self) -> int:
        return hash(self.canonical_json)


# Entries and resources are built by the thousand from parts the package made or checked (what
# from_json checked, a catalog's digests and parsed frontmatter), so by trusted constructors
# (skills_core._fast): the constructors would check every part again. bench_catalog.py prints
# what the plain constructors would cost.
(
    _SET_ENTRY_URI,
    _SET_ENTRY_FRONTMATTER,
    _SET_ENTRY_RESOURCES,
    _SET_ENTRY_EXTRA,
    _SET_ENTRY_SKILL,
    _SET_ENTRY_CANONICAL,
    _SET_ENTRY_INDEX,
    _SET_ENTRY_SET,
) = slot_setters(
    SkillEntry, "uri", "frontmatter", "resources", "extra", "_skill", "_canonical", "_index", "_set"
)
_SET_RESOURCE_URI, _SET_RESOURCE_DIGEST, _SET_RESOURCE_SIZE, _SET_RESOURCE_EXTRA = slot_setters(
    SkillResource, "uri", "digest", "size", "extra"
)


def unchecked_entry(
    *,
    skill: SkillURI,
    frontmatter: FrozenJSON,
    resources: tuple[SkillResource, ...] | Literal["dynamic"],
    extra: FrozenJSON = _NO_EXTRA,
) -> SkillEntry:
    """The trusted constructor of an entry: no validation, for parts the package made or checked.

    Package-private (not exported): :meth:`SkillEntry.from_json` calls it once every rule has
    passed, and :mod:`skills_core.server` builds entries from URIs it encoded, digests it computed
    and frontmatter its own parser produced. Its tests check that every such entry equals
    ``SkillEntry.from_json(entry.to_json())``. Never call this on unchecked data from a peer.
    """
    entry: SkillEntry = new_blank(SkillEntry)
    _SET_ENTRY_URI(entry, skill.uri)
    _SET_ENTRY_FRONTMATTER(entry, frontmatter)
    _SET_ENTRY_RESOURCES(entry, resources)
    _SET_ENTRY_EXTRA(entry, extra)
    _SET_ENTRY_SKILL(entry, skill)
    _SET_ENTRY_CANONICAL(entry, None)
    _SET_ENTRY_INDEX(entry, None)
    _SET_ENTRY_SET(entry, None)
    return entry


def unchecked_resource(
    uri: str, digest: str, size: int, extra: FrozenJSON = _NO_EXTRA
) -> SkillResource:
    """The trusted constructor of a resource; see :func:`unchecked_entry`."""
    resource: SkillResource = new_blank(SkillResource)
    _SET_RESOURCE_URI(resource, uri)
    _SET_RESOURCE_DIGEST(resource, digest)
    _SET_RESOURCE_SIZE(resource, size)
    _SET_RESOURCE_EXTRA(resource, extra)
    return resource


def _trusted_resource(item: dict[str, Any]) -> SkillResource:
    """A resource from a wire item that :func:`_entry_problems` found valid."""
    if len(item) == 3:
        return unchecked_resource(item["uri"], item["digest"], item["size"])
    extra = {k: v for k, v in item.items() if k not in _KNOWN_RESOURCE_KEYS}
    return unchecked_resource(item["uri"], item["digest"], item["size"], freeze_json(extra))


def _limit_problems(count: int, total: int, limits: Limits) -> list[EntryProblem]:
    problems: list[EntryProblem] = []
    if count > limits.max_resources:
        problems.append(
            EntryProblem(
                code="too-many-resources",
                pointer="/resources",
                message=f"the skill has {count} files; the limit is {limits.max_resources}",
                over_limit=True,
            )
        )
    if total > limits.max_total_bytes:
        problems.append(
            EntryProblem(
                code="too-large",
                pointer="/resources",
                message=f"the skill's files total {total} bytes; the limit is "
                f"{limits.max_total_bytes} bytes",
                over_limit=True,
            )
        )
    return problems


def _entry_problems(
    obj: object, limits: Limits | None
) -> tuple[list[EntryProblem], SkillURI | None]:
    """Check every rule of a wire entry; return all problems and the parsed SKILL.md URI."""
    problems: list[EntryProblem] = []
    if not isinstance(obj, dict):
        problems.append(
            EntryProblem(
                code="not-an-object",
                pointer="",
                message=f"a skill entry must be a JSON object, not {json_type_name(obj)}",
            )
        )
        return problems, None

    skill: SkillURI | None = None
    uri = obj.get("uri")
    if "uri" not in obj:
        problems.append(
            EntryProblem(code="missing-uri", pointer="/uri", message="'uri' is missing")
        )
    elif not isinstance(uri, str):
        problems.append(
            EntryProblem(
                code="bad-uri",
                pointer="/uri",
                message=f"'uri' must be a string, not {json_type_name(uri)}",
            )
        )
    else:
        try:
            skill = SkillURI.parse(uri)
        except URIError as exc:
            problems.append(EntryProblem(code="bad-uri", pointer="/uri", message=exc.message))

    problems.extend(_frontmatter_problems(obj, skill))

    for key, value in obj.items():
        if key not in _KNOWN_ENTRY_KEYS:
            pointer = "/" + escape_pointer_token(str(key))
            problems.extend(
                EntryProblem(code="not-json", pointer=where, message=message)
                for where, message in json_value_problems(value, pointer)
            )

    if "resources" not in obj:
        problems.append(
            EntryProblem(
                code="missing-resources",
                pointer="/resources",
                message="'resources' is missing; it is required, as an array or \"dynamic\"",
            )
        )
        return problems, skill
    resources = obj["resources"]
    if resources == DYNAMIC and isinstance(resources, str):
        return problems, skill
    if not isinstance(resources, list):
        problems.append(
            EntryProblem(
                code="bad-resources",
                pointer="/resources",
                message=f"'resources' must be an array or the string \"dynamic\", not "
                f"{json_type_name(resources)} {quote_for_message(resources)}",
            )
        )
        return problems, skill

    problems.extend(_manifest_problems(resources, skill, limits))
    return problems, skill


def _frontmatter_problems(obj: dict[Any, Any], skill: SkillURI | None) -> list[EntryProblem]:
    problems: list[EntryProblem] = []
    if "frontmatter" not in obj:
        problems.append(
            EntryProblem(
                code="missing-frontmatter",
                pointer="/frontmatter",
                message="'frontmatter' is missing",
            )
        )
        return problems
    frontmatter = obj["frontmatter"]
    if not isinstance(frontmatter, dict | MappingProxyType):
        problems.append(
            EntryProblem(
                code="bad-frontmatter",
                pointer="/frontmatter",
                message=f"'frontmatter' must be an object, not {json_type_name(frontmatter)}",
            )
        )
        return problems
    problems.extend(
        EntryProblem(code="not-json", pointer=where, message=message)
        for where, message in json_value_problems(frontmatter, "/frontmatter")
    )
    for key in ("name", "description"):
        if key not in frontmatter:
            problems.append(
                EntryProblem(
                    code=f"{key}-missing",
                    pointer=f"/frontmatter/{key}",
                    message=f"frontmatter '{key}' is missing",
                )
            )
        elif not isinstance(frontmatter[key], str):
            problems.append(
                EntryProblem(
                    code=f"{key}-not-string",
                    pointer=f"/frontmatter/{key}",
                    message=f"frontmatter '{key}' must be a string, not "
                    f"{json_type_name(frontmatter[key])}",
                )
            )
    name = frontmatter.get("name")
    if isinstance(name, str):
        if skill is not None and name != skill.name:
            problems.append(
                EntryProblem(
                    code="name-mismatch",
                    pointer="/frontmatter/name",
                    message=f"frontmatter name {quote_for_message(name)} differs from "
                    f"{skill.name!r}, the last skill-path segment of the uri",
                )
            )
        elif skill is None:
            reason = skill_name_problem(name)
            if reason is not None:
                problems.append(
                    EntryProblem(code="name-invalid", pointer="/frontmatter/name", message=reason)
                )
    return problems


def _manifest_problems(
    resources: list[Any], skill: SkillURI | None, limits: Limits | None
) -> list[EntryProblem]:
    problems: list[EntryProblem] = []
    seen: dict[str, int] = {}
    collisions: dict[str, tuple[int, str]] = {}
    file_paths: list[tuple[int, str]] = []
    digest_sizes: dict[str, tuple[int, int]] = {}
    has_self = False
    total = 0
    for index, item in enumerate(resources):
        pointer = f"/resources/{index}"
        if not isinstance(item, dict):
            problems.append(
                EntryProblem(
                    code="bad-resource",
                    pointer=pointer,
                    message=f"each resource must be an object, not {json_type_name(item)}",
                )
            )
            continue
        size = item.get("size")
        digest = item.get("digest")
        sound = (
            type(size) is int
            and 0 <= size <= MAX_SAFE_INTEGER
            and is_valid_digest(digest)
            and (size == 0) == (digest == EMPTY_DIGEST)
            and type(item.get("uri")) is str
        )
        if not sound:
            # The slow path, only for resources that have something to report.
            problems.extend(_resource_field_problems(item, pointer))
        if len(item) > 3 or not sound:
            for key, value in item.items():
                if key not in _KNOWN_RESOURCE_KEYS:
                    problems.extend(
                        EntryProblem(code="not-json", pointer=where, message=message)
                        for where, message in json_value_problems(
                            value, f"{pointer}/{escape_pointer_token(str(key))}"
                        )
                    )
        if isinstance(size, int) and not isinstance(size, bool) and 0 <= size <= MAX_SAFE_INTEGER:
            total += size
            if is_valid_digest(digest):
                assert isinstance(digest, str)
                earlier = digest_sizes.setdefault(digest, (index, size))
                if earlier[1] != size:
                    problems.append(
                        EntryProblem(
                            code="size-digest-conflict",
                            pointer=f"{pointer}/size",
                            message=f"the same digest is listed with size {earlier[1]} at "
                            f"/resources/{earlier[0]} and with size {size} here",
                        )
                    )
        uri = item.get("uri")
        if not isinstance(uri, str):
            continue
        if uri in seen:
            problems.append(
                EntryProblem(
                    code="duplicate-uri",
                    pointer=f"{pointer}/uri",
                    message=f"{quote_for_message(uri)} is listed twice (first at "
                    f"/resources/{seen[uri]}); each file must appear exactly once",
                )
            )
            continue
        seen[uri] = index
        if skill is None:
            continue
        if uri == skill.uri:
            has_self = True
        try:
            file_path = skill.file_path_of(uri)
        except URIError as exc:
            problems.append(
                EntryProblem(
                    code=(
                        "outside-skill"
                        if exc.kind is URIErrorKind.NOT_IN_SKILL
                        else "bad-resource-uri"
                    ),
                    pointer=f"{pointer}/uri",
                    message=exc.message,
                )
            )
            continue
        key = _collision_key(file_path)
        first = collisions.get(key)
        if first is not None:
            problems.append(
                EntryProblem(
                    code="path-collision",
                    pointer=f"{pointer}/uri",
                    message=f"{quote_for_message(uri)} and {quote_for_message(first[1])} "
                    f"(/resources/{first[0]}) name the same file on a case-insensitive or "
                    "Unicode-normalising filesystem",
                )
            )
        else:
            collisions[key] = (index, uri)
            file_paths.append((index, key))
    if skill is not None and not has_self:
        problems.append(
            EntryProblem(
                code="missing-skill-md",
                pointer="/resources",
                message=f"'resources' does not list the entry's own uri {skill.uri}; the "
                "manifest must include SKILL.md",
            )
        )
    problems.extend(_file_directory_conflicts(file_paths, collisions))
    if limits is not None:
        problems.extend(_limit_problems(len(resources), total, limits))
    return problems


def _file_directory_conflicts(
    file_paths: list[tuple[int, str]], collisions: Mapping[str, tuple[int, str]]
) -> list[EntryProblem]:
    """Find a path that is a file and also a folder holding another listed file."""
    problems: list[EntryProblem] = []
    for index, key in file_paths:
        parts = key.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            clash = collisions.get(folder)
            if clash is not None:
                problems.append(
                    EntryProblem(
                        code="path-collision",
                        pointer=f"/resources/{index}/uri",
                        message=f"{quote_for_message(clash[1])} is listed as a file but is also "
                        "a folder of this resource",
                    )
                )
                break
    return problems


def _loads_strict(text: str | bytes) -> object:
    try:
        return loads_strict(text)
    except ValueError as exc:
        raise InvalidEntryError(
            (EntryProblem(code="bad-json", pointer="", message=f"not valid JSON: {exc}"),)
        ) from None
