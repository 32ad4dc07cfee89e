"""Value objects of the server catalog: skills published and omitted, snapshots, dynamic skills.

Theory of operation
-------------------
These are the nouns the catalog builder (:mod:`skills_core.server.catalog`), the sources
(:mod:`skills_core.server.source`, :mod:`skills_core.server.filesystem`) and the request handler
share. A source describes a root as a :class:`RootSnapshot` of :class:`SnapshotFile` values plus
:class:`SourceProblem` values for what it refused and :class:`SkippedEntry` values for what its
options told it to pass over (hidden files, exclude patterns); the builder turns snapshots into
:class:`PublishedSkill` and :class:`OmittedSkill` values; a :class:`DynamicSkill` is a skill whose
files a program generates. All are frozen; none does anything but hold data, except
:meth:`SnapshotFile.of` and :meth:`RootSnapshot.from_files`, which hash in-memory bytes, and a
:class:`PublishedSkill` kept *encoded* (restored from a digest index record, or built from a
snapshot without problems: what a folder source's skills are), which holds its entry as JSON text
and builds its entry and files the first time they are read (a frozen value all the same:
compared, hashed and printed as a dataclass of its attributes would be). A catalog of 100,000
skills holds 100,000 short byte strings this way instead of a few kilobytes of objects each.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass
from types import MappingProxyType
from typing import Final, final

from .._fast import new_blank, slot_setters
from ..digest import compute_digest
from ..entry import SkillEntry
from ..spec import SKILL_MD
from ..validation import Finding

__all__ = [
    "OmitCode",
    "ProblemCode",
    "SourceProblem",
    "SkipCode",
    "SkippedEntry",
    "SnapshotFile",
    "RootSnapshot",
    "PublishedSkill",
    "OmittedSkill",
    "DynamicSkill",
    "check_relative_path",
]

_SKILL_MD_SUFFIX: Final = "/" + SKILL_MD


class OmitCode(enum.StrEnum):
    """Why a folder with a ``SKILL.md`` is not published."""

    #: ``SKILL.md`` sits directly in a root, so the skill has no folder name.
    TOP_LEVEL = "top-level"
    #: A folder name cannot be a URI path segment (control character, backslash, bad encoding).
    BAD_PATH = "bad-path"
    #: ``SKILL.md`` itself was refused (a symbolic link, a special file, unreadable).
    REFUSED = "refused"
    #: ``SKILL.md`` has no well-formed YAML frontmatter (FMT-03).
    FRONTMATTER = "frontmatter"
    #: The frontmatter breaks the Agent Skills rules (FMT-01).
    INVALID = "invalid"
    #: ``name`` differs from the folder name (URI-06).
    NAME_MISMATCH = "name-mismatch"
    #: More than 512 files or 16 MiB (ENTRY-19).
    OVER_LIMIT = "over-limit"
    #: Two of the skill's paths are one file on a case-insensitive or normalising filesystem.
    PATH_COLLISION = "path-collision"
    #: Another root or dynamic skill claims the same URI, or one enclosing or inside it.
    URI_COLLISION = "uri-collision"
    #: A dynamic skill did not produce its ``SKILL.md``.
    UNAVAILABLE = "unavailable"


class ProblemCode(enum.StrEnum):
    """Why a filesystem entry was refused while walking a root."""

    #: A symbolic link, to a file or a folder (WG-09): never followed, never served.
    SYMLINK = "symlink"
    #: A FIFO, socket or device: never opened.
    SPECIAL_FILE = "special-file"
    #: The entry could not be read (permissions, or it vanished mid-walk).
    UNREADABLE = "unreadable"


class SkipCode(enum.StrEnum):
    """Why a source passed over a file or folder on purpose (see :mod:`skills_core.server.selection`)."""

    #: A name skipped everywhere, whatever the options: version-control metadata and caches.
    IGNORED = "ignored"
    #: A hidden name (a leading ``.``, or an editor's backup or autosave file).
    HIDDEN = "hidden"
    #: Matched by an exclude pattern.
    EXCLUDED = "excluded"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedEntry:
    """A file or folder a source did not publish because its options say so (not a problem).

    Only the topmost skipped entry is reported: nothing below a skipped folder is looked at.

    Attributes:
        root: Index of the root it was found in.
        path: Its path relative to the root, ``/``-separated, raw names.
        code: Which rule skipped it.
        reason: One line for people (names the rule or the pattern).
    """

    root: int
    path: str
    code: SkipCode
    reason: str


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SourceProblem:
    """A filesystem entry that a source refused to serve.

    Attributes:
        root: Index of the root it was found in.
        path: Its path relative to the root, ``/``-separated, raw names.
        code: What was wrong.
        reason: One line for people, with no absolute path in it.
    """

    root: int
    path: str
    code: ProblemCode
    reason: str


@final
@dataclass(frozen=True, slots=True)
class SnapshotFile:
    """One regular file of a root, as a source saw it.

    Attributes:
        path: Relative to the root, ``/``-separated, raw (not URI-encoded) names.
        size: Length of its bytes.
        digest: ``sha256:`` digest of its bytes.
        data: The bytes, required for files named ``SKILL.md`` (their frontmatter is parsed)
            unless the builder already knows the verdict on them
            (:meth:`~skills_core.server.catalog.CatalogBuilder.knows`); optional for others.
    """

    path: str
    size: int
    digest: str
    data: bytes | None = None

    @classmethod
    def of(cls, path: str, data: bytes) -> SnapshotFile:
        """Describe ``data`` at ``path``, keeping the bytes only when it is a ``SKILL.md``."""
        keep = path == SKILL_MD or path.endswith(_SKILL_MD_SUFFIX)
        return cls(path, len(data), compute_digest(data), data if keep else None)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class RootSnapshot:
    """Everything a source saw in one root (or in one folder of it, for a recheck).

    Attributes:
        files: The regular files, in any order.
        problems: Entries that were refused while walking.
        skipped: Entries passed over on purpose (hidden, excluded, ignored names).
    """

    files: Sequence[SnapshotFile] = ()
    problems: Sequence[SourceProblem] = ()
    skipped: Sequence[SkippedEntry] = ()

    @classmethod
    def from_files(cls, files: Mapping[str, bytes]) -> RootSnapshot:
        """Snapshot an in-memory tree ``{relative path: bytes}``.

        Raises:
            ValueError: a path is not a clean relative path (see :func:`check_relative_path`).
        """
        return cls(
            files=[SnapshotFile.of(check_relative_path(path), data) for path, data in files.items()]
        )


def check_relative_path(path: str) -> str:
    """Return ``path`` when it is a clean relative POSIX path of raw names.

    Raises:
        ValueError: ``path`` is empty, absolute, or has an empty, ``.`` or ``..`` segment, or a NUL.
    """
    if not isinstance(path, str) or not path:
        raise ValueError(f"{path!r} is not a relative path")
    for name in path.split("/"):
        if name in ("", ".", "..") or "\0" in name:
            raise ValueError(f"{path!r} is not a clean relative path (empty, '.', '..' or NUL)")
    return path


#: How a skill restored from a digest index record builds its entry and files on first use:
#: ``make()``, or ``(restore, key)`` called as ``restore(root, folder, key, encoded_entry)`` with
#: the skill's own attributes (one function per builder, shared by its skills: a catalog builder's
#: form, a few dozen bytes a skill).
Materialize = (
    Callable[[], tuple[SkillEntry, Mapping[str, str]]]
    | tuple[Callable[[int, str, bytes, bytes], tuple[SkillEntry, Mapping[str, str]]], bytes]
)
_NO_FILES: Final[Mapping[str, str]] = MappingProxyType({})


@final
class PublishedSkill:
    """A skill the server serves.

    A frozen value, compared, hashed and printed as a dataclass of the attributes below would
    be. A catalog builder restoring a skill from a digest index record (see
    :mod:`skills_core.server.catalog`) makes it with its URI, findings and encoded entry only;
    :attr:`entry` and :attr:`files` are then built the first time either is read, from the same
    snapshot and parsed frontmatter a cold build uses, so they are what a cold build makes.

    Attributes:
        entry: Its entry, exactly as ``skills/list`` and ``skills/get`` send it.
        root: Index of the root it comes from; ``None`` for a dynamic skill.
        folder: Its folder relative to the root (raw names); for a dynamic skill, its skill path.
        files: ``{resource URI: file path relative to the skill folder}`` for every file in the
            manifest (empty for a dynamic skill).
        findings: Warnings about the skill (validation warnings, refused files, duplicate names).
        listed: Whether ``skills/list`` shows it; ``skills/get`` answers either way (GET-03).
        uri: The SKILL.md URI (``entry.uri``).
        name: The skill name, the last segment of its skill path (``entry.name``).
        encoded_entry: The entry's wire JSON (``entry.to_json()``) as UTF-8 JSON text, when the
            builder has it without building the entry; else None. A catalog builder's skills
            (built, or restored from a digest index record) hold exactly what
            ``json.dumps(entry.to_json(), ensure_ascii=False).encode()`` writes; a store
            replica's skills hold their published catalog's own text of the entry (the same
            JSON value, in its canonical encoding: keys sorted, no spaces).
    """

    __slots__ = (
        "_entry",
        "_files",
        "_make",
        "encoded_entry",
        "findings",
        "folder",
        "listed",
        "root",
        "uri",
    )

    _entry: SkillEntry | None
    _files: Mapping[str, str] | None
    _make: Materialize | None
    encoded_entry: bytes | None
    findings: tuple[Finding, ...]
    folder: str
    listed: bool
    root: int | None
    uri: str

    def __init__(
        self,
        *,
        entry: SkillEntry,
        root: int | None,
        folder: str,
        files: Mapping[str, str] = _NO_FILES,
        findings: tuple[Finding, ...] = (),
        listed: bool = True,
    ) -> None:
        """Record the attributes above (``uri`` and ``name`` are the entry's; ``encoded_entry``
        None)."""
        _fill(self, (entry, files, None, None, findings, folder, listed, root, entry.uri))

    @property
    def entry(self) -> SkillEntry:
        """Its entry, exactly as ``skills/list`` and ``skills/get`` send it."""
        entry = self._entry
        if entry is None:
            entry = self._materialize()[0]
        return entry

    @property
    def files(self) -> Mapping[str, str]:
        """``{resource URI: file path relative to the skill folder}`` (empty when dynamic)."""
        files = self._files
        if files is None:
            files = self._materialize()[1]
        return files

    def _materialize(self) -> tuple[SkillEntry, Mapping[str, str]]:
        make = self._make
        assert make is not None, "a PublishedSkill without an entry has a way to build it"
        if type(make) is tuple:
            assert self.root is not None
            assert self.encoded_entry is not None
            restore, key = make
            entry, files = restore(self.root, self.folder, key, self.encoded_entry)
        else:
            assert callable(make)
            entry, files = make()
        _SET_SKILL_ENTRY(self, entry)
        _SET_SKILL_FILES(self, files)
        if type(make) is not tuple:  # (a builder's key stays: what the skill is made of)
            _SET_SKILL_MAKE(self, None)
        return entry, files

    @property
    def name(self) -> str:
        """The skill name, the last segment of its skill path (``entry.name``): taken from
        :attr:`uri` when asked (nothing kept per skill)."""
        return self.uri[: -len(_SKILL_MD_SUFFIX)].rpartition("/")[2]

    @property
    def root_uri(self) -> str:
        """The skill's root directory URI (``entry.root``)."""
        return self.uri[: -len(_SKILL_MD_SUFFIX)]

    @property
    def is_dynamic(self) -> bool:
        """True for a skill whose files are generated (``"resources": "dynamic"``)."""
        return self.root is None

    def _fields(self) -> tuple[object, ...]:
        return (self.entry, self.root, self.folder, self.files, self.findings, self.listed)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not PublishedSkill:
            return NotImplemented
        assert isinstance(other, PublishedSkill)
        return self is other or self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"PublishedSkill(entry={self.entry!r}, root={self.root!r}, folder={self.folder!r}, "
            f"files={self.files!r}, findings={self.findings!r}, listed={self.listed!r})"
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class OmittedSkill:
    """A folder with a ``SKILL.md`` (or a dynamic skill) that is not published, and why.

    Attributes:
        root: Index of the root; ``None`` for a dynamic skill.
        path: The folder relative to the root (raw names), or a dynamic skill's URI.
        uri: The SKILL.md URI it would have had, when it has one.
        code: Stable machine-readable reason.
        reason: One line for people (the ``manifest`` command prints it).
    """

    root: int | None
    path: str
    uri: str | None
    code: OmitCode
    reason: str


class DynamicSkill(ABC):
    """A skill whose files are generated on demand, so no stable digests exist (ENTRY-15).

    Its entry carries ``"resources": "dynamic"`` in both ``skills/list`` and ``skills/get``
    (GET-08); its frontmatter is parsed from what :meth:`read` returns for ``SKILL.md``, each time
    the skill is (re)checked. Paths given to :meth:`read` and :meth:`list_directory` are relative
    to the skill root, ``/``-separated, decoded (raw names), and never contain empty, ``.`` or
    ``..`` segments.
    """

    @property
    @abstractmethod
    def uri(self) -> str:
        """The skill's SKILL.md URI, any scheme (URI-13), e.g. ``skill://reports/daily/SKILL.md``."""

    @property
    def listed(self) -> bool:
        """Whether ``skills/list`` shows the skill (default True); ``skills/get`` always answers."""
        return True

    @abstractmethod
    def read(self, file_path: str) -> bytes | None:
        """Return the current bytes of ``file_path`` (``"SKILL.md"`` included), or None if absent."""

    @abstractmethod
    def list_directory(self, dir_path: str) -> Sequence[tuple[str, bool]] | None:
        """Return the direct children of ``dir_path`` (``""`` is the root) as ``(name, is_dir)``.

        Return None when ``dir_path`` is not a directory of the skill.
        """


# A scan makes a SnapshotFile per file, by a trusted constructor (skills_core._fast);
# bench_catalog.py and bench_warm_start.py print what the plain constructor would cost (a warm
# walk does little else per file). A PublishedSkill's slots are set through their setters by its
# constructor, by restored_published_skill and when materialised.
_SET_FILE_PATH, _SET_FILE_SIZE, _SET_FILE_DIGEST, _SET_FILE_DATA = slot_setters(
    SnapshotFile, "path", "size", "digest", "data"
)
(
    _SET_SKILL_ENTRY,
    _SET_SKILL_FILES,
    _SET_SKILL_MAKE,
    _SET_SKILL_ENCODED,
    _SET_SKILL_FINDINGS,
    _SET_SKILL_FOLDER,
    _SET_SKILL_LISTED,
    _SET_SKILL_ROOT,
    _SET_SKILL_URI,
) = slot_setters(
    PublishedSkill,
    "_entry",
    "_files",
    "_make",
    "encoded_entry",
    "findings",
    "folder",
    "listed",
    "root",
    "uri",
)


def new_snapshot_file(path: str, size: int, digest: str, data: bytes | None) -> SnapshotFile:
    """``SnapshotFile(path, size, digest, data)``: the trusted constructor (package-private), for
    a source's own stat, size and digest of a file it read."""
    file: SnapshotFile = new_blank(SnapshotFile)
    _SET_FILE_PATH(file, path)
    _SET_FILE_SIZE(file, size)
    _SET_FILE_DIGEST(file, digest)
    _SET_FILE_DATA(file, data)
    return file


def restored_published_skill(
    uri: str,
    root: int,
    folder: str,
    *,
    findings: tuple[Finding, ...],
    encoded_entry: bytes,
    make: Materialize,
) -> PublishedSkill:
    """A skill restored from a digest index record: ``make`` builds its entry and files when
    first needed. The trusted constructor (package-private) of that state, which the constructor
    does not take (see :class:`PublishedSkill`)."""
    skill: PublishedSkill = new_blank(PublishedSkill)
    _fill(skill, (None, None, make, encoded_entry, findings, folder, True, root, uri))
    return skill


def skill_key(skill: PublishedSkill) -> bytes | None:
    """The packed key of a skill a catalog builder kept encoded (package-private): what it is
    made of (see :mod:`skills_core.server.catalog`); None for any other skill."""
    make = skill._make
    return make[1] if type(make) is tuple else None


def _fill(
    skill: PublishedSkill,
    slots: tuple[
        SkillEntry | None,
        Mapping[str, str] | None,
        Materialize | None,
        bytes | None,
        tuple[Finding, ...],
        str,
        bool,
        int | None,
        str,
    ],
) -> None:
    """Set every slot of a new ``skill``: entry, files, make, encoded entry, findings, folder,
    listed, root and URI (the name is read from the URI)."""
    entry, files, make, encoded, findings, folder, listed, root, uri = slots
    _SET_SKILL_ENTRY(skill, entry)
    _SET_SKILL_FILES(skill, files)
    _SET_SKILL_MAKE(skill, make)
    _SET_SKILL_ENCODED(skill, encoded)
    _SET_SKILL_FINDINGS(skill, findings)
    _SET_SKILL_FOLDER(skill, folder)
    _SET_SKILL_LISTED(skill, listed)
    _SET_SKILL_ROOT(skill, root)
    _SET_SKILL_URI(skill, uri)
