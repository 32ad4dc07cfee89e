"""The rules that decide what a folder publishes (internal to :mod:`skills_core.server.catalog`).

Theory of operation
-------------------
Small pure functions the catalog builder composes: the verdict on one SKILL.md (parse, name,
validation), path collisions under case folding and normalisation (SIL-05, WG-06), namespace
conflicts between roots and dynamic skills, the omission records, and the construction of entries
from values built here (which therefore skip full wire validation; see ``trusted_entry``).
"""

from __future__ import annotations

import operator
import struct
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from sys import intern
from types import MappingProxyType
from typing import Final, NamedTuple, final, overload

from ..entry import SkillEntry, SkillResource, unchecked_entry
from ..errors import FrontmatterError, URIError
from ..frontmatter import frontmatter_data
from ..jsonvalue import FrozenJSON, JSONValue
from ..names import is_valid_skill_name
from ..spec import DYNAMIC, SKILL_MD
from ..uri import SkillURI
from ..validation import Finding, Severity, validate_frontmatter
from .model import (
    DynamicSkill,
    OmitCode,
    OmittedSkill,
    SnapshotFile,
    SourceProblem,
)

__all__ = [
    "Verdict",
    "Contender",
    "EMPTY",
    "path_of",
    "trusted_entry",
    "warning",
    "ancestors",
    "ParsedSkillMd",
    "PackedKey",
    "SkillKey",
    "SkillRecord",
    "pack_key",
    "unpack_key",
    "parse_skill_md",
    "judge_parsed",
    "path_collision",
    "find_conflicts",
    "conflict",
    "bad_path",
    "refused",
]

_SKILL_MD_SUFFIX: Final = "/" + SKILL_MD


class Verdict(NamedTuple):
    """What one SKILL.md (by digest) in one folder (by name) amounts to.

    A named tuple: a catalog builder makes one per distinct SKILL.md, and a tuple is the
    cheapest read-only record to make.
    """

    frontmatter: FrozenJSON | None
    findings: tuple[Finding, ...] = ()
    code: OmitCode | None = None
    reason: str = ""


@dataclass(slots=True)
class Contender:
    """A skill folder (or dynamic skill) contending for its URI, before the builder's verdict.

    Two contenders for one URI (from two roots, or a root and a dynamic skill) are a namespace
    conflict; ``origin`` orders them, ``conflicts`` collects what they collided with.
    """

    origin: tuple[int, int]  # (0, root index) or (1, dynamic index)
    root_uri: str
    root: int | None = None
    folder: str = ""
    skill_md: SnapshotFile | None = None
    files: Sequence[SnapshotFile] = ()
    problems: list[SourceProblem] | None = None
    dynamic: DynamicSkill | None = None
    conflicts: list[str] | None = None


path_of: Final = operator.attrgetter("path")
#: The ``extra`` of every entry and resource built here: nothing (shared, read-only).
EMPTY: Final[Mapping[str, FrozenJSON]] = MappingProxyType({})


def collision_key(path: str) -> str:
    """What a path becomes on a case-insensitive, normalising filesystem (SIL-05, WG-06)."""
    if path.isascii():
        return path.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())


def trusted_entry(
    skill: SkillURI, frontmatter: FrozenJSON, resources: tuple[SkillResource, ...] | str
) -> SkillEntry:
    """Build an entry from values this module made and checked itself (see the module docstring).

    Every input is valid by construction: the URI comes from :func:`encode_folder` and a name that
    passed :func:`is_valid_skill_name`, digests from :func:`compute_digest`, sizes from byte
    lengths, the frontmatter from the YAML parser (plain JSON by construction) with ``name`` equal
    to the folder name and a string ``description``, and path collisions were checked here.
    Re-validating all of that costs more than parsing the frontmatter, so this skips it.
    """
    return unchecked_entry(
        skill=skill,
        frontmatter=frontmatter,
        resources=DYNAMIC if isinstance(resources, str) else resources,
    )


def warning(field: str, code: str, message: str, *, file: str | None = None) -> Finding:
    """A finding of severity warning about a published skill (a refused file, a bad name)."""
    return Finding(severity=Severity.WARNING, field=field, code=code, message=message, file=file)


def ancestors(uri_or_path: str, start: int) -> Iterable[str]:
    """Yield every proper ``/``-prefix of ``uri_or_path`` that ends after ``start``."""
    index = uri_or_path.find("/", start)
    while index != -1:
        yield uri_or_path[:index]
        index = uri_or_path.find("/", index + 1)


#: The containers the YAML parser produces; everything else it produces is a scalar.
_CONTAINERS: Final = (dict, list)


def freeze_parsed(value: dict[str, JSONValue] | list[JSONValue]) -> FrozenJSON:
    """:func:`~skills_core.jsonvalue.freeze_json` for the parser's output, which holds only
    ``dict``, ``list`` and scalars: the same result, without testing each value against every
    kind of container.
    """
    if type(value) is dict:
        return MappingProxyType(
            {  # keys interned: every skill repeats "name" and "description"
                intern(key): freeze_parsed(child) if isinstance(child, _CONTAINERS) else child
                for key, child in value.items()
            }
        )
    return tuple(
        [freeze_parsed(child) if isinstance(child, _CONTAINERS) else child for child in value]
    )


#: What a published skill is made of besides its SKILL.md's frontmatter: for each of its files in
#: path order, the path below the skill folder, the size and the digest (one flat list, as JSON
#: gives it back).
SkillKey = list[str | int]

#: A packed key's count of files, and the row of each (its size and raw digest).
_KEY_COUNT: Final = struct.Struct("<I")
_KEY_ROW: Final = struct.Struct("<Q32s")


def pack_key(key: Sequence[str | int]) -> bytes:
    """A key packed (see :class:`PackedKey`).

    Raises:
        struct.error: a size does not fit 64 bits.
        ValueError: a digest is not ``sha256:`` and 64 hex digits, or a path holds a NUL.
    """
    if isinstance(key, PackedKey):
        return key.packed
    paths = [str(path) for path in key[::3]]
    digests = [bytes.fromhex(str(digest)[7:]) for digest in key[2::3]]
    if any(len(digest) != 32 for digest in digests) or any("\0" in path for path in paths):
        raise ValueError("not a key a file can have")
    return b"".join(
        [
            _KEY_COUNT.pack(len(paths)),
            *map(_KEY_ROW.pack, key[1::3], digests),
            "\0".join(paths).encode("utf-8", "surrogateescape"),
        ]
    )


def unpack_key(packed: bytes) -> SkillKey:
    """The list form of a packed key (see :class:`PackedKey`)."""
    (count,) = _KEY_COUNT.unpack_from(packed)
    end = _KEY_COUNT.size + _KEY_ROW.size * count
    paths = packed[end:].decode("utf-8", "surrogateescape").split("\0")
    out: SkillKey = []
    for path, (size, digest) in zip(
        paths, _KEY_ROW.iter_unpack(packed[_KEY_COUNT.size : end]), strict=True
    ):
        out += (path, size, "sha256:" + digest.hex())
    return out


@final
class PackedKey(Sequence[str | int]):
    """A :data:`SkillKey` packed: the count of files (``<I``), a row per file (``<Q32s``: size
    and raw digest), then the paths joined by NUL (UTF-8, as ``surrogateescape`` writes names
    that are not): how a catalog builder keeps a skill's key and a digest index reads it, with
    no object per file. Read as the list it stands for (unpacked the first time it is read so);
    equal to that list.
    """

    __slots__ = ("_list", "packed")

    def __init__(self, packed: bytes) -> None:
        """Wrap a packed key (:func:`pack_key`)."""
        self.packed = packed
        self._list: SkillKey | None = None

    def _unpacked(self) -> SkillKey:
        if self._list is None:
            self._list = unpack_key(self.packed)
        return self._list

    @overload
    def __getitem__(self, index: int) -> str | int: ...

    @overload
    def __getitem__(self, index: slice) -> SkillKey: ...

    def __getitem__(self, index: int | slice) -> str | int | SkillKey:
        return self._unpacked()[index]

    def __len__(self) -> int:
        return 3 * int(_KEY_COUNT.unpack_from(self.packed)[0])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedKey):
            return self.packed == other.packed
        if isinstance(other, list):
            return self._unpacked() == other
        return NotImplemented

    def __hash__(self) -> int:
        """Never: a list's stand-in is not hashable either."""
        raise TypeError("unhashable type: 'PackedKey'")

    def __repr__(self) -> str:
        return f"PackedKey({self._unpacked()!r})"


class SkillRecord(NamedTuple):
    """A published skill as a digest index keeps it, to restore it without building it.

    Valid for the skill of that folder (in a root of the same scheme and limits, by the same
    library version) whose files are exactly ``key``: its entry then is ``encoded_entry`` and its
    findings ``findings``, which a cold build would make again from the same parts.
    """

    key: SkillKey | PackedKey
    #: ``json.dumps(entry.to_json(), ensure_ascii=False)``, UTF-8.
    encoded_entry: bytes
    findings: tuple[Finding, ...]


#: What one SKILL.md amounts to before its folder is known: its frontmatter as the parser gives it
#: (a JSON object), or, when it has none the parser accepts, the reason (a string).
ParsedSkillMd = dict[str, JSONValue] | str


def parse_skill_md(data: bytes) -> ParsedSkillMd:
    """Parse one SKILL.md's frontmatter: the object, or why there is none (``"SKILL.md ..."``)."""
    try:
        return frontmatter_data(data)
    except FrontmatterError as exc:
        return f"SKILL.md {exc.message}"


def judge_parsed(parsed: ParsedSkillMd, name: str) -> Verdict:
    """Validate one parsed SKILL.md (see :func:`parse_skill_md`) for a folder called ``name``."""
    if isinstance(parsed, str):
        return Verdict(None, code=OmitCode.FRONTMATTER, reason=parsed)
    frontmatter = parsed
    declared = frontmatter.get("name")
    if declared != name and isinstance(declared, str):
        return Verdict(
            None,
            code=OmitCode.NAME_MISMATCH,
            reason=f"the frontmatter name {declared!r} differs from the folder name {name!r}; "
            "they must be equal",
        )
    findings = validate_frontmatter(frontmatter, directory_name=name)
    if (
        not findings
        and is_valid_skill_name(declared)
        and isinstance(frontmatter.get("description"), str)
    ):
        return Verdict(freeze_parsed(frontmatter))  # the common case, as below with no findings
    errors = [f.message for f in findings if f.severity == Severity.ERROR] if findings else []
    if not errors and not is_valid_skill_name(declared):
        errors.append(f"the skill name {declared!r} breaks the naming rules")
    if not errors and not isinstance(frontmatter.get("description"), str):
        errors.append("the frontmatter has no string 'description'")
    if errors:
        return Verdict(None, code=OmitCode.INVALID, reason="; ".join(errors))
    warnings = tuple([f for f in findings if f.severity != Severity.ERROR]) if findings else ()
    return Verdict(freeze_parsed(frontmatter), findings=warnings)


def path_collision(paths: Iterable[str]) -> str | None:
    seen: dict[str, str] = {}
    for path in paths:
        key = collision_key(path)
        earlier = seen.setdefault(key, path)
        if earlier != path:
            return (
                f"{earlier} and {path} name the same file on a case-insensitive or "
                "Unicode-normalising filesystem"
            )
    for key, path in seen.items():
        for folder in ancestors(key, 0):
            clash = seen.get(folder)
            if clash is not None:
                return f"{clash} is a file, but also a folder of {path} on a case-insensitive filesystem"
    return None


def find_conflicts(candidates: Sequence[Contender]) -> None:
    """Mark candidates whose namespace another origin shares or encloses (module docstring, 4)."""
    if len({candidate.origin for candidate in candidates}) < 2:
        return  # one root and no dynamic skill: folders map to distinct, consistent URIs
    owners: dict[str, list[Contender]] = {}
    for candidate in candidates:
        owners.setdefault(candidate.root_uri, []).append(candidate)
    for candidate in candidates:
        start = candidate.root_uri.index("://") + 3
        for prefix in (*ancestors(candidate.root_uri, start), candidate.root_uri):
            for other in owners.get(prefix, ()):
                if other.origin == candidate.origin:
                    continue
                if prefix == candidate.root_uri:
                    add_conflict(candidate, f"{origin_name(other)} has the same skill path")
                else:
                    add_conflict(
                        candidate, f"{origin_name(other)} has an enclosing skill ({prefix})"
                    )
                    add_conflict(
                        other,
                        f"{origin_name(candidate)} has a skill inside it ({candidate.root_uri})",
                    )


def add_conflict(candidate: Contender, reason: str) -> None:
    if candidate.conflicts is None:
        candidate.conflicts = []
    candidate.conflicts.append(reason)


def origin_name(candidate: Contender) -> str:
    kind, number = candidate.origin
    return f"root {number}" if kind == 0 else "a dynamic skill"


def conflict(candidate: Contender) -> OmittedSkill:
    uri = candidate.root_uri + _SKILL_MD_SUFFIX
    assert candidate.conflicts is not None
    reason = "; ".join(dict.fromkeys(candidate.conflicts))
    if candidate.dynamic is not None:
        return OmittedSkill(
            root=None,
            path=candidate.dynamic.uri,
            uri=candidate.dynamic.uri,
            code=OmitCode.URI_COLLISION,
            reason=f"{reason}; neither is served",
        )
    return OmittedSkill(
        root=candidate.root,
        path=candidate.folder,
        uri=uri,
        code=OmitCode.URI_COLLISION,
        reason=f"{reason}; neither is served",
    )


def bad_path(root: int, folder: str, exc: URIError) -> OmittedSkill:
    return OmittedSkill(
        root=root,
        path=folder,
        uri=None,
        code=OmitCode.BAD_PATH,
        reason=f"the folder path cannot be a skill URI: {exc.message}",
    )


def refused(root: int, problem: SourceProblem) -> OmittedSkill:
    return OmittedSkill(
        root=root,
        path=problem.path[: -len(_SKILL_MD_SUFFIX)],
        uri=None,
        code=OmitCode.REFUSED,
        reason=f"SKILL.md was refused: {problem.reason}",
    )
