"""The validation engine: skill folders or skill entries in, reports out; entries built and compared.

Theory of operation
===================

Four public functions serve the tools that check skills outside MCP (CI, editors, publishing
scripts) and the ``skills-core validate`` and ``diff`` commands:

* :func:`validate_folder` applies to a folder exactly what ``skills-core serve`` applies to it and
  says why, as :class:`~skills_core.validation.Finding` values, each with its file and, where the
  source has one, its line and column;
* :func:`validate_entries` applies to JSON skill entries (a captured ``skills/list`` or
  ``skills/get`` answer, whole JSON-RPC response included) what a host applies, **and** the same
  Agent Skills rules as :func:`validate_folder`, so that the two modes agree: an entry the server
  would build for a folder gets the error codes the folder gets;
* :func:`build_entry` gives the entry ``serve`` publishes for a skill folder;
* :func:`compare_entries` says what changed between two entries: frontmatter field by field,
  files added, removed and changed, with their sizes.

**Folders.** A path is read the way ``serve PATH`` reads it: :class:`FilesystemSource` (the class
``serve`` uses) walks it, refusing links and special files, and its catalog decides which skill
folders are published. The walk runs with a raised total-size limit, so that a skill over the
limits still gets its entry built and its counts reported with the same codes as an entry that
is over them (``too-many-resources``, ``too-large``); ``serve``'s own limits are then applied to
that entry. For every skill folder, published or not, the report holds:

* the findings of :func:`~skills_core.validation.validate_skill_md` on its ``SKILL.md`` (parse
  errors, Agent Skills rules, the portability lint), placed at their line and column;
* the rules of the wire entry (:meth:`SkillEntry.from_json`, limits included) on the entry the
  server builds, as for :func:`validate_entries`;
* what the catalog says beyond those: file names that cannot be URIs, a name other skills share
  (ORG-10), path collisions, a folder name that cannot be a URI, a refused ``SKILL.md``;
* the links, special files and unreadable entries the walk refused below it (each reported once,
  in the innermost skill that holds it; those outside every skill are the report's own);
* a note (``hidden-file``) for each hidden file or folder the walk passed over in it, and a
  warning (``secret-file``) for each file whose name looks like a secret
  (:func:`~skills_core.server.selection.looks_secret`), published or passed over (hidden or
  excluded; nothing below a folder passed over is looked at);
* for a published skill, what :func:`~skills_core.validation.lint_body` finds in its body:
  links to files the skill does not publish, links a host refuses to resolve, and a SKILL.md
  over 500 lines.

A skill is valid when it has no error; ``serve`` publishes exactly the valid ones (a differential
test checks this). Where ``serve`` stops early, so does the report: a skill whose frontmatter
breaks a rule, or whose paths collide, gets no entry from the catalog, so the entry's own rules
(the limits) are reported for it once that is fixed. For everything else the two modes agree
code for code. The ``SKILL.md`` of a published skill is read through the source, as ``serve``
reads it; that of a skill the catalog leaves out is opened here without following a link
(``O_NOFOLLOW``, non-blocking, regular files only, at most the frontmatter's size limit).

A path that is itself a skill folder is scanned as a root, as ``serve`` would. While the source
reports such a root as ``top-level`` (a ``SKILL.md`` with no folder name), that one skill is
re-checked from its parent folder instead (:meth:`FilesystemSource.recheck`).

**Entries.** :func:`entries_in` finds the entries of a JSON document; each is checked by
:meth:`SkillEntry.from_json` with the limits, and its frontmatter, when it is an object, by
:func:`~skills_core.validation.validate_frontmatter` with the URI's last segment as the directory
name, and files whose names look like secrets draw ``secret-file``. The entry problems those
rules restate (``name-missing``, ``description-not-string``...)
have the same codes and are given once, with the Agent Skills rules' messages. Names shared by
several entries of one document draw ``duplicate-name``, as in a catalog.

**Paths.** A finding's ``file`` is a path the caller can open: the folder given, joined with the
path below it (``skills/pdf/SKILL.md``), or the entries file. Names are kept exactly as the
filesystem gives them (lone surrogates for bytes that are not UTF-8); every JSON form here is
strict UTF-8 (:func:`~skills_core.validation.strict_utf8`, with ``*_hex`` fields for the bytes).

This module does I/O: the folder functions read skill folders (listed as such in
``tests/test_api.py``). Entries and comparisons are pure.
"""

from __future__ import annotations

import enum
import errno
import os
import stat
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, Protocol, TypeVar, cast, final

from ._file_findings import published_findings, published_secrets, skipped_findings
from .entry import DEFAULT_LIMITS, Limits, SkillEntry
from .errors import EntryProblem, InvalidEntryError, JsonRpcError, URIError
from .frontmatter import ABSENT, DEFAULT_MAX_BYTES, compare_frontmatter
from .jsonvalue import FrozenJSON, JSONValue, thaw_json
from .server.catalog import Catalog
from .server.filesystem import DEFAULT_IGNORED_NAMES, FilesystemSource
from .server.model import (
    OmitCode,
    OmittedSkill,
    PublishedSkill,
    SkippedEntry,
    SourceProblem,
)
from .spec import SKILL_MD
from .uri import SkillURI
from .validation import (
    Finding,
    Severity,
    place_in_skill_md,
    raw_bytes,
    strict_utf8,
    validate_frontmatter,
    validate_skill_md,
)

__all__ = [
    "SubjectKind",
    "SkillReport",
    "ValidationReport",
    "validate_folder",
    "validate_entries",
    "entries_in",
    "build_entry",
    "ChangeKind",
    "FieldChange",
    "FileChange",
    "EntryComparison",
    "compare_entries",
]

#: The total-size limit of the walk: files up to this size are hashed, so a skill over the real
#: limit still gets an entry (and its true counts). A file larger than this is not read at all,
#: as ``serve`` reads none over its limit; its skill is reported ``too-large`` from the walk.
_WALK_MAX_BYTES: Final = 256 * 1024 * 1024
#: How much of an unpublished skill's SKILL.md is read: enough for the largest frontmatter.
_SKILL_MD_READ: Final = DEFAULT_MAX_BYTES + 64 * 1024
#: Catalog warnings this module reports itself, with a place: the walk's refusals (from the
#: catalog's problem list) and the Agent Skills warnings (from validate_skill_md).
_REPORTED_HERE: Final = frozenset({"symlink", "special-file", "unreadable"})
#: Entry problems that restate an Agent Skills rule on ``name`` or ``description``: the rule's
#: finding is kept instead (it is the one folder mode gives).
_RESTATED: Final = frozenset(
    {
        "name-missing",
        "name-not-string",
        "name-invalid",
        "name-mismatch",
        "description-missing",
        "description-not-string",
    }
)
#: Omissions whose reason the SKILL.md findings already give.
_FRONTMATTER_OMISSIONS: Final = frozenset(
    {OmitCode.FRONTMATTER, OmitCode.INVALID, OmitCode.NAME_MISMATCH}
)


class _HasPath(Protocol):
    @property
    def path(self) -> str: ...


_Entry = TypeVar("_Entry", bound=_HasPath)


class SubjectKind(enum.StrEnum):
    """What a :class:`SkillReport` is about."""

    #: A skill folder on disk.
    FOLDER = "folder"
    #: A JSON skill entry.
    ENTRY = "entry"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SkillReport:
    """What validation found about one skill.

    Attributes:
        kind: A folder, or an entry.
        path: The skill folder (the path given, joined with the folder below it), or the file
            the entry came from.
        index: The entry's position in its document (``None`` for a folder).
        uri: The SKILL.md URI, when the subject has one.
        entry: The entry ``serve`` publishes for the folder, or the entry a host accepts (with
            the limits); ``None`` when it would not. Set from the rules alone: ignoring codes
            later (:meth:`ValidationReport.without`) does not change it.
        findings: Every finding, errors, warnings and notes, in the order found.
        ignored_errors: The codes of the errors :meth:`ValidationReport.without` removed, in
            order, each once: the skill stays invalid (an ignored error silences its message,
            never the reason ``serve`` or a host refuses the skill).
    """

    kind: SubjectKind
    path: str
    index: int | None = None
    uri: str | None = None
    entry: SkillEntry | None = None
    findings: tuple[Finding, ...] = ()
    ignored_errors: tuple[str, ...] = ()

    @property
    def errors(self) -> tuple[Finding, ...]:
        """The findings of severity error."""
        return tuple(f for f in self.findings if f.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        """The findings of severity warning."""
        return tuple(f for f in self.findings if f.severity is Severity.WARNING)

    @property
    def notes(self) -> tuple[Finding, ...]:
        """The findings of severity note."""
        return tuple(f for f in self.findings if f.severity is Severity.NOTE)

    @property
    def valid(self) -> bool:
        """True when no finding is an error and no error was ignored."""
        return not self.ignored_errors and all(
            f.severity is not Severity.ERROR for f in self.findings
        )

    def to_json(self) -> dict[str, JSONValue]:
        """The report as a JSON object, strict UTF-8 (``path_hex`` for a path that is not)."""
        out: dict[str, JSONValue] = {"kind": str(self.kind), "path": strict_utf8(self.path)}
        if out["path"] != self.path:
            out["path_hex"] = raw_bytes(self.path).hex()
        if self.index is not None:
            out["index"] = self.index
        if self.uri is not None:
            out["uri"] = strict_utf8(self.uri)
        out["valid"] = self.valid
        out["accepted"] = self.entry is not None
        entry = self.entry
        if entry is not None and not entry.is_dynamic:
            out["files"] = len(entry.resources)
            out["bytes"] = entry.total_size
        out["findings"] = [f.to_json() for f in self.findings]
        if self.ignored_errors:
            out["ignored_errors"] = list(self.ignored_errors)
        return out


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ValidationReport:
    """The findings of one validation: per skill, and about the tree outside every skill.

    Attributes:
        skills: One report per skill folder or entry, in path (or document) order.
        findings: Findings about no skill: links, special files and unreadable entries refused
            outside every skill folder.
        ignored: How many findings :meth:`without` removed.
    """

    skills: tuple[SkillReport, ...] = ()
    findings: tuple[Finding, ...] = ()
    ignored: int = 0

    def all_findings(self) -> Iterator[tuple[SkillReport | None, Finding]]:
        """Every finding with the skill it belongs to (``None`` for the tree's own)."""
        for finding in self.findings:
            yield None, finding
        for skill in self.skills:
            for finding in skill.findings:
                yield skill, finding

    @property
    def error_count(self) -> int:
        """How many findings are errors."""
        return sum(f.severity is Severity.ERROR for _, f in self.all_findings())

    @property
    def warning_count(self) -> int:
        """How many findings are warnings."""
        return sum(f.severity is Severity.WARNING for _, f in self.all_findings())

    @property
    def note_count(self) -> int:
        """How many findings are notes."""
        return sum(f.severity is Severity.NOTE for _, f in self.all_findings())

    @property
    def valid(self) -> bool:
        """True when no finding is an error and every skill is valid (none had an error that
        :meth:`without` removed)."""
        return self.error_count == 0 and all(s.valid for s in self.skills)

    def passes(self, *, strict: bool = False) -> bool:
        """True when there is no error (and, when ``strict``, no warning either); notes never
        fail."""
        return self.valid and not (strict and self.warning_count)

    def without(self, codes: Collection[str]) -> ValidationReport:
        """The same report without the findings whose code is in ``codes`` (counted as ignored).

        A skill that loses an error this way keeps its verdict: its code is recorded in
        :attr:`SkillReport.ignored_errors` and the skill stays invalid.
        """
        if not codes:
            return self
        dropped = sum(f.code in codes for _, f in self.all_findings())
        return ValidationReport(
            skills=tuple(_without(s, codes) for s in self.skills),
            findings=tuple(f for f in self.findings if f.code not in codes),
            ignored=self.ignored + dropped,
        )

    @classmethod
    def merge(cls, reports: Iterable[ValidationReport]) -> ValidationReport:
        """One report holding the skills and findings of ``reports``, in order."""
        skills: list[SkillReport] = []
        findings: list[Finding] = []
        ignored = 0
        for report in reports:
            skills.extend(report.skills)
            findings.extend(report.findings)
            ignored += report.ignored
        return cls(skills=tuple(skills), findings=tuple(findings), ignored=ignored)

    def summary(self) -> dict[str, int]:
        """Counts: ``skills``, ``valid``, ``invalid``, ``errors``, ``warnings``, ``notes``,
        ``ignored``."""
        valid = sum(s.valid for s in self.skills)
        return {
            "skills": len(self.skills),
            "valid": valid,
            "invalid": len(self.skills) - valid,
            "errors": self.error_count,
            "warnings": self.warning_count,
            "notes": self.note_count,
            "ignored": self.ignored,
        }

    def to_json(self, *, strict: bool = False) -> dict[str, JSONValue]:
        """The report as a JSON object: ``valid`` (under ``strict``), ``summary``, ``results``
        (one per skill, :meth:`SkillReport.to_json`) and ``findings`` (the tree's own)."""
        summary: dict[str, JSONValue] = {**self.summary()}
        return {
            "valid": self.passes(strict=strict),
            "strict": strict,
            "summary": summary,
            "results": [skill.to_json() for skill in self.skills],
            "findings": [f.to_json() for f in self.findings],
        }


def _without(skill: SkillReport, codes: Collection[str]) -> SkillReport:
    """``skill`` less the findings whose code is in ``codes``, remembering ignored errors."""
    kept: list[Finding] = []
    ignored = list(skill.ignored_errors)
    for finding in skill.findings:
        if finding.code not in codes:
            kept.append(finding)
        elif finding.severity is Severity.ERROR and finding.code not in ignored:
            ignored.append(finding.code)
    return replace(skill, findings=tuple(kept), ignored_errors=tuple(ignored))


# --- folders ----------------------------------------------------------------------------------


def validate_folder(
    path: str | os.PathLike[str],
    *,
    limits: Limits = DEFAULT_LIMITS,
    ignore: Iterable[str] = DEFAULT_IGNORED_NAMES,
    include_hidden: bool = False,
    exclude: Iterable[str] = (),
) -> ValidationReport:
    """Validate a skill folder, its ``SKILL.md``, or a folder of skills, as ``serve`` reads it.

    Args:
        path: A skill folder, the ``SKILL.md`` in one, or a folder holding skill folders at any
            depth (as ``serve ROOT`` takes it).
        limits: The per-skill limits ``serve`` enforces (the spec's by default).
        ignore: Names the walk skips everywhere, as for :class:`FilesystemSource`.
        include_hidden: Walk hidden files and folders too, as ``serve --include-hidden`` does.
        exclude: Globs of paths to leave out, as ``serve --exclude`` takes them.

    Returns:
        One :class:`SkillReport` per skill folder found (none when there is none), sorted by
        path, and the findings about the tree outside every skill.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        NotADirectoryError: ``path`` is a file other than a ``SKILL.md``.
        OSError: ``path`` cannot be read.
    """
    given = os.fspath(path)
    root = given
    if os.path.basename(given) == SKILL_MD and not os.path.isdir(given):
        os.lstat(given)  # a SKILL.md that is not there is not its folder
        root = os.path.dirname(given) or os.curdir
    if not stat.S_ISDIR(os.stat(root).st_mode):
        raise NotADirectoryError(
            errno.ENOTDIR, "not a folder of skills, a skill folder or its SKILL.md", given
        )
    walk_limits = Limits(
        max_resources=2**31 - 1, max_total_bytes=max(limits.max_total_bytes, _WALK_MAX_BYTES)
    )
    source = FilesystemSource(
        [root], limits=walk_limits, ignore=ignore, include_hidden=include_hidden, exclude=exclude
    )
    # A root that is itself a skill folder is published under its own name: its paths in the
    # catalog start with that name (the source's "mount"), which is the root folder on disk.
    mount = source.mounts[0]
    catalog = source.scan()
    found: list[tuple[str, PublishedSkill | OmittedSkill]] = [
        (skill.folder, skill) for skill in catalog.skills
    ]
    found.extend((omitted.path, omitted) for omitted in catalog.omitted)
    found.sort(key=lambda item: item[0])
    folders = [folder for folder, _ in found]
    problems = _by_skill(catalog.problems, folders)
    skipped = _by_skill(catalog.skipped, folders)
    skills = [
        _folder_report(
            _Place(root, mount),
            folder,
            source=source,
            verdict=verdict,
            catalog=catalog,
            problems=problems.get(folder, ()),
            skipped=skipped.get(folder, ()),
            limits=limits,
        )
        for folder, verdict in found
    ]
    return ValidationReport(
        skills=tuple(skills),
        findings=tuple(_problem_finding(_Place(root, mount), p) for p in problems.get(None, ())),
    )


def build_entry(
    path: str | os.PathLike[str],
    *,
    limits: Limits = DEFAULT_LIMITS,
    ignore: Iterable[str] = DEFAULT_IGNORED_NAMES,
    include_hidden: bool = False,
    exclude: Iterable[str] = (),
) -> SkillEntry:
    """Return the entry ``serve`` publishes for the skill folder at ``path``.

    Args:
        path: A skill folder, or its ``SKILL.md``.
        limits: The per-skill limits ``serve`` enforces.
        ignore: Names the walk skips everywhere, as for :class:`FilesystemSource`.
        include_hidden: Publish hidden files and folders too, as ``serve --include-hidden`` does.
        exclude: Globs of paths to leave out, as ``serve --exclude`` takes them.

    Raises:
        InvalidEntryError: ``serve`` would not publish the skill; ``problems`` holds every error
            (with its file and line in the message), each with its code and field.
        FileNotFoundError: ``path`` does not exist, or holds no ``SKILL.md``.
        NotADirectoryError: ``path`` is a file other than a ``SKILL.md``.
        OSError: ``path`` cannot be read.
    """
    report = validate_folder(
        path, limits=limits, ignore=ignore, include_hidden=include_hidden, exclude=exclude
    )
    given = os.fspath(path)
    top = os.path.dirname(given) if os.path.basename(given) == SKILL_MD else given
    skill = next((s for s in report.skills if s.path == top), None)
    if skill is None:
        raise FileNotFoundError(errno.ENOENT, "not a skill folder (no SKILL.md in it)", given)
    if skill.entry is not None:
        return skill.entry
    raise InvalidEntryError(
        tuple(
            EntryProblem(code=f.code, pointer=f.field, message=_placed_message(f))
            for f in skill.errors
        ),
        uri=skill.uri,
    )


def _placed_message(finding: Finding) -> str:
    return f"{finding.place}: {finding.message}" if finding.place else finding.message


def _by_skill(problems: Iterable[_Entry], folders: Sequence[str]) -> dict[str | None, list[_Entry]]:
    """Each refused or skipped entry under the innermost skill folder that holds it (``None``:
    no skill)."""
    by_skill: dict[str | None, list[_Entry]] = {}
    inside = sorted(folders, key=len, reverse=True)
    for problem in problems:
        owner = next(
            (f for f in inside if not f or problem.path.startswith(f + "/")),
            None,
        )
        by_skill.setdefault(owner, []).append(problem)
    return by_skill


@final
@dataclass(frozen=True, slots=True)
class _Place:
    """Where catalog paths are on disk: the root given, and the name it is mounted under."""

    root: str
    mount: str

    def path(self, relative: str) -> str:
        """The path on disk of ``relative`` (a catalog path: a folder or file below the root)."""
        if self.mount:
            if relative == self.mount:
                relative = ""
            elif relative.startswith(self.mount + "/"):
                relative = relative[len(self.mount) + 1 :]
        return os.path.join(self.root, *relative.split("/")) if relative else self.root


def _problem_finding(place: _Place, problem: SourceProblem) -> Finding:
    return Finding(
        severity=Severity.WARNING,
        field="",
        code=str(problem.code),
        message=problem.reason,
        file=place.path(problem.path),
    )


def _folder_report(
    place: _Place,
    folder: str,
    *,
    source: FilesystemSource,
    verdict: PublishedSkill | OmittedSkill,
    catalog: Catalog,
    problems: Sequence[SourceProblem],
    skipped: Sequence[SkippedEntry],
    limits: Limits,
) -> SkillReport:
    path = place.path(folder)
    skill_md_path = os.path.join(path, SKILL_MD)
    findings: list[Finding] = []
    skill_md: bytes | None = None
    if isinstance(verdict, PublishedSkill):
        skill_md = source.read(verdict, SKILL_MD)
    elif verdict.code is not OmitCode.REFUSED:
        skill_md = _read_skill_md(skill_md_path)
    if skill_md is not None:
        name = folder.rpartition("/")[2] or os.path.basename(os.path.realpath(place.root))
        findings += _in_file(validate_skill_md(skill_md, directory_name=name), path)
    entry: SkillEntry | None = None
    if isinstance(verdict, PublishedSkill):
        entry = verdict.entry
        findings += [
            replace(f, file=skill_md_path) for f in _entry_rules(entry.to_json(), limits)[0]
        ]
        seen = {(f.code, f.field) for f in findings}
        extra = [
            f
            for f in catalog.findings(verdict)
            if f.code not in _REPORTED_HERE and (f.code, f.field) not in seen
        ]
        if skill_md is not None:
            extra = list(place_in_skill_md(extra, skill_md))
        findings += _in_file(extra, path)
        findings += published_findings(
            lambda relative: os.path.join(path, *relative.split("/")), verdict, skill_md
        )
    else:
        findings += _omission_findings(verdict, findings, skill_md_path, path)
    refused_skill_md = f"{folder}/{SKILL_MD}" if folder else SKILL_MD
    findings += [
        _problem_finding(place, p)
        for p in problems
        if not (isinstance(verdict, OmittedSkill) and p.path == refused_skill_md)
    ]
    findings += skipped_findings(place.path, skipped)
    valid = all(f.severity is not Severity.ERROR for f in findings)
    # In file and document order; a finding without a place first in its file.
    findings.sort(key=lambda f: (f.file or "", f.line or 0, f.column or 0))
    return SkillReport(
        kind=SubjectKind.FOLDER,
        path=path,
        uri=verdict.uri,
        entry=entry if valid else None,
        findings=tuple(findings),
    )


def _in_file(findings: Iterable[Finding], folder: str) -> list[Finding]:
    """``findings`` with their ``file`` (relative to the skill folder) made a path under it."""
    return [
        replace(f, file=os.path.join(folder, *f.file.split("/"))) if f.file is not None else f
        for f in findings
    ]


def _omission_findings(
    omitted: OmittedSkill, findings: Sequence[Finding], skill_md_path: str, path: str
) -> list[Finding]:
    """The error that says why the catalog leaves a skill out, unless the findings say it."""
    if omitted.code in _FRONTMATTER_OMISSIONS and any(
        f.severity is Severity.ERROR for f in findings
    ):
        return []
    code = "too-large" if omitted.code is OmitCode.OVER_LIMIT else str(omitted.code)
    file = path if omitted.code is OmitCode.BAD_PATH else skill_md_path
    return [
        Finding(severity=Severity.ERROR, field="", code=code, message=omitted.reason, file=file)
    ]


def _read_skill_md(path: str) -> bytes | None:
    """The start of the regular file at ``path``, never through a link and never blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        parts: list[bytes] = []
        size = 0
        while size < _SKILL_MD_READ and (chunk := os.read(fd, _SKILL_MD_READ - size)):
            parts.append(chunk)
            size += len(chunk)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


# --- entries --------------------------------------------------------------------------------


def entries_in(document: object) -> list[object]:
    """The skill entries a JSON document holds, to be validated one by one.

    Accepted: a JSON-RPC response (its ``result`` is used), a ``skills/list`` result
    (``{"skills": [...]}``), a ``skills/get`` result (``{"skill": {...}}``), a list of entries,
    or one entry. Anything else is taken as one entry (and found invalid).

    Raises:
        JsonRpcError: ``document`` is a JSON-RPC error response.
    """
    if isinstance(document, dict) and "jsonrpc" in document and "uri" not in document:
        error = document.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            raise JsonRpcError(
                f"the response is a JSON-RPC error, not a result: {error.get('message')!r} "
                f"(code {code!r})",
                rpc_code=code if type(code) is int else 0,
                method="",
                data=error.get("data"),
            )
        if "result" in document:
            document = document["result"]
    if isinstance(document, dict) and "uri" not in document:
        if "skills" in document:
            document = document["skills"]
        elif "skill" in document:
            document = [document["skill"]]
    return list(document) if isinstance(document, list) else [document]


def validate_entries(
    document: object, *, source: str = "<entries>", limits: Limits = DEFAULT_LIMITS
) -> ValidationReport:
    """Validate the skill entries of a JSON document as a host does, plus the Agent Skills rules.

    Args:
        document: Decoded JSON (see :func:`entries_in` for the shapes accepted).
        source: Where the document came from (a file name): each finding's ``file``.
        limits: The limits a host enforces (the spec's by default).

    Returns:
        One :class:`SkillReport` per entry, in document order.

    Raises:
        JsonRpcError: ``document`` is a JSON-RPC error response.
    """
    items = entries_in(document)
    names: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        frontmatter = item.get("frontmatter") if isinstance(item, dict) else None
        name = frontmatter.get("name") if isinstance(frontmatter, dict) else None
        if isinstance(name, str):
            names.setdefault(name, []).append(index)
    skills: list[SkillReport] = []
    for index, item in enumerate(items):
        findings, entry = _entry_rules(item, limits)
        if entry is not None:
            findings += published_secrets(entry)
        frontmatter = item.get("frontmatter") if isinstance(item, dict) else None
        uri = item.get("uri") if isinstance(item, dict) else None
        if isinstance(frontmatter, dict):
            directory = _uri_name(uri)
            findings += [
                replace(f, field="/frontmatter" + f.field)
                for f in validate_frontmatter(frontmatter, directory_name=directory)
            ]
            findings += _shared_name(frontmatter.get("name"), index, names, items)
        if any(f.severity is Severity.ERROR for f in findings):
            entry = None  # a host would take it, but an Agent Skills rule fails
        skills.append(
            SkillReport(
                kind=SubjectKind.ENTRY,
                path=source,
                index=index,
                uri=uri if isinstance(uri, str) else None,
                entry=entry,
                findings=tuple(replace(f, file=source) for f in findings),
            )
        )
    return ValidationReport(skills=tuple(skills))


def _uri_name(uri: object) -> str | None:
    """The skill name a SKILL.md URI gives (its last skill-path segment), or None if invalid."""
    if not isinstance(uri, str):
        return None
    try:
        return SkillURI.parse(uri).name
    except URIError:
        return None


def _entry_rules(item: object, limits: Limits) -> tuple[list[Finding], SkillEntry | None]:
    """The wire rules of an entry (limits included), less what the Agent Skills rules restate;
    and the entry, when it passes them."""
    try:
        return [], SkillEntry.from_json(item, limits=limits)
    except InvalidEntryError as exc:
        restated = isinstance(item, dict) and isinstance(item.get("frontmatter"), dict)
        findings = [
            Finding(severity=Severity.ERROR, field=p.pointer, code=p.code, message=p.message)
            for p in exc.problems
            if not (restated and p.code in _RESTATED)
        ]
        return findings, None


def _shared_name(
    name: object, index: int, names: Mapping[str, list[int]], items: Sequence[object]
) -> list[Finding]:
    """``duplicate-name`` when other entries of the document use ``name`` too (ORG-10)."""
    if not isinstance(name, str) or len(names.get(name, ())) < 2:
        return []
    others = [
        item.get("uri") if isinstance(item, dict) else None
        for other, item in ((k, items[k]) for k in names[name])
        if other != index
    ]
    shown = ", ".join(str(uri) for uri in others[:3])
    if len(others) > 3:
        shown += f" and {len(others) - 3} more"
    return [
        Finding(
            severity=Severity.WARNING,
            field="/frontmatter/name",
            code="duplicate-name",
            message=f"the name {name!r} is also used by {shown}; hosts tell such skills apart by "
            "path (ORG-10)",
        )
    ]


# --- comparison -----------------------------------------------------------------------------


class ChangeKind(enum.StrEnum):
    """How a field or a file changed from the old entry to the new one."""

    #: Only in the new entry.
    ADDED = "added"
    #: Only in the old entry.
    REMOVED = "removed"
    #: In both, with another value (or other bytes).
    CHANGED = "changed"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class FieldChange:
    """One frontmatter member that differs between two entries.

    Attributes:
        pointer: JSON pointer into the frontmatter (``"/description"``, ``"/metadata/author"``).
        change: Added, removed or changed.
        old: The old value (frozen JSON), or :data:`~skills_core.frontmatter.ABSENT`.
        new: The new value (frozen JSON), or :data:`~skills_core.frontmatter.ABSENT`.
    """

    pointer: str
    change: ChangeKind
    old: object
    new: object

    def to_json(self) -> dict[str, JSONValue]:
        """``pointer``, ``change``, and ``old`` / ``new`` when present."""
        out: dict[str, JSONValue] = {"pointer": self.pointer, "change": str(self.change)}
        if self.old is not ABSENT:
            out["old"] = thaw_json(cast(FrozenJSON, self.old))  # an entry's frontmatter value
        if self.new is not ABSENT:
            out["new"] = thaw_json(cast(FrozenJSON, self.new))
        return out


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """One file that differs between two entries' manifests.

    Attributes:
        path: The file's path below the skill root, as its URI spells it (``templates/a.md``).
        change: Added, removed, or changed (another digest or size).
        old_size: Its size in the old manifest (``None`` when added).
        new_size: Its size in the new manifest (``None`` when removed).
        old_digest: Its digest in the old manifest (``None`` when added).
        new_digest: Its digest in the new manifest (``None`` when removed).
    """

    path: str
    change: ChangeKind
    old_size: int | None = None
    new_size: int | None = None
    old_digest: str | None = None
    new_digest: str | None = None

    def to_json(self) -> dict[str, JSONValue]:
        """``path``, ``change``, then the sizes and digests each side has."""
        out: dict[str, JSONValue] = {"path": self.path, "change": str(self.change)}
        for key in ("old_size", "new_size", "old_digest", "new_digest"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class EntryComparison:
    """What changed from one skill entry to another (:func:`compare_entries`).

    Attributes:
        old_uri: The old entry's SKILL.md URI.
        new_uri: The new entry's SKILL.md URI.
        frontmatter: The members that differ, old entry's order first (then members only the
            new one has).
        files: The files that differ, by path.
        old_dynamic: The old entry's ``resources`` is ``"dynamic"`` (no manifest to compare).
        new_dynamic: The new entry's ``resources`` is ``"dynamic"``.
    """

    old_uri: str
    new_uri: str
    frontmatter: tuple[FieldChange, ...] = ()
    files: tuple[FileChange, ...] = ()
    old_dynamic: bool = False
    new_dynamic: bool = False

    @property
    def same(self) -> bool:
        """True when URI, frontmatter and manifest are equal (JSON data model for values)."""
        return (
            self.old_uri == self.new_uri
            and not self.frontmatter
            and not self.files
            and self.old_dynamic == self.new_dynamic
        )

    def to_json(self) -> dict[str, JSONValue]:
        """The comparison as a JSON object (strict UTF-8: entries hold no lone surrogates)."""
        out: dict[str, JSONValue] = {
            "old_uri": self.old_uri,
            "new_uri": self.new_uri,
            "same": self.same,
            "frontmatter": [change.to_json() for change in self.frontmatter],
            "files": [change.to_json() for change in self.files],
        }
        if self.old_dynamic or self.new_dynamic:
            out["old_dynamic"] = self.old_dynamic
            out["new_dynamic"] = self.new_dynamic
        return out


def compare_entries(old: SkillEntry, new: SkillEntry) -> EntryComparison:
    """Compare two entries: frontmatter field by field, and their manifests file by file.

    Values compare on the JSON data model, as hosts compare frontmatter (``1 == 1.0``, ``true``
    is not ``1``, ``null`` is not absent). Files are matched by their path below the skill root,
    so a skill that moved (another URI) still compares file by file.

    Args:
        old: The entry before.
        new: The entry after.

    Returns:
        Every difference; :attr:`EntryComparison.same` when there is none.
    """
    fields = []
    for difference in compare_frontmatter(old.frontmatter, new.frontmatter):
        if difference.parsed is ABSENT:
            change = ChangeKind.ADDED
        elif difference.published is ABSENT:
            change = ChangeKind.REMOVED
        else:
            change = ChangeKind.CHANGED
        fields.append(
            FieldChange(
                pointer=difference.pointer,
                change=change,
                old=difference.parsed,
                new=difference.published,
            )
        )
    before = _manifest(old)
    after = _manifest(new)
    files: list[FileChange] = []
    for path in sorted(before.keys() | after.keys()):
        was = before.get(path)
        now = after.get(path)
        if was == now:
            continue
        change = (
            ChangeKind.ADDED
            if was is None
            else ChangeKind.REMOVED
            if now is None
            else ChangeKind.CHANGED
        )
        files.append(
            FileChange(
                path=path,
                change=change,
                old_size=None if was is None else was[1],
                new_size=None if now is None else now[1],
                old_digest=None if was is None else was[0],
                new_digest=None if now is None else now[0],
            )
        )
    return EntryComparison(
        old_uri=old.uri,
        new_uri=new.uri,
        frontmatter=tuple(fields),
        files=tuple(files),
        old_dynamic=old.is_dynamic,
        new_dynamic=new.is_dynamic,
    )


def _manifest(entry: SkillEntry) -> dict[str, tuple[str, int]]:
    """``{path below the skill root: (digest, size)}`` of an entry (empty when dynamic)."""
    if isinstance(entry.resources, str):
        return {}
    skill = entry.skill
    return {
        (SKILL_MD if r.uri == entry.uri else skill.file_path_of(r.uri)): (r.digest, r.size)
        for r in entry.resources
    }
