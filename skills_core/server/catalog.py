"""The catalog: which skills a server publishes, built from a snapshot of files (no I/O).

Theory of operation
-------------------
A *source* (in memory, or the filesystem loader) describes each of its roots as a
:class:`RootSnapshot`: every file as ``(relative path, size, digest)``, with the bytes of each
``SKILL.md``, plus the problems met while walking (symbolic links and special files that were
refused). :class:`CatalogBuilder` turns the snapshots into a :class:`Catalog`:

1. **Skills.** Every folder that holds a file named exactly ``SKILL.md`` (case-sensitive, SIL-05) is
   a candidate skill, at any depth (URI-12). Its URI is ``<scheme>://<folder>/SKILL.md`` with each
   folder name percent-encoded (:mod:`skills_core.server.paths`): the folders above the skill are its
   organisational prefix (URI-08) and the last one is its name. A ``SKILL.md`` directly in a root has
   no folder name, so it cannot be published.
2. **Files.** A skill's manifest lists every file below its folder, itself first, the files of
   nested skills included (ENTRY-08, ENTRY-13); each file was hashed once by the source, however many
   skills it belongs to.
3. **Rules.** A candidate is published only when its frontmatter parses and validates (FMT-01,
   FMT-03; warnings are kept as findings), its ``name`` equals its folder name (URI-06), it is within
   the limits (512 files and 16 MiB, ENTRY-19: over-limit skills are not served), no two of its paths
   collide under case folding or Unicode normalisation (SIL-05, WG-06), and no other root or dynamic
   skill claims the same namespace. Anything else becomes an :class:`OmittedSkill` with a code and a
   one-line reason, and nothing of it is readable.
4. **Namespaces.** Two roots yielding the same skill URI, or one root's skill nested inside
   another root's, would make one URI name two different files: all the skills involved are
   omitted, never first-wins. Two skills that only share a *name* at different paths are both
   published; :meth:`Catalog.findings` adds a warning to each (ORG-10), computed on demand.
5. **Nesting.** Omission does not cascade. An omitted enclosing skill does not hide a valid nested
   skill (the nested one is published with its own files only), and an omitted nested skill stays
   part of its valid enclosing skill's files, as ordinary supporting content (spec, "Nested
   Skills").
6. **Dynamic skills** (:class:`DynamicSkill`) generate their files on demand: their entries carry
   ``"resources": "dynamic"`` (ENTRY-15, GET-08) and their frontmatter comes from parsing the
   ``SKILL.md`` they serve.

The published skills are sorted by URI, so a listing can page by keyset. Entries are built from
values this module produced itself (encoded URIs, computed digests, parsed frontmatter), so they skip
the full wire validation of :meth:`SkillEntry.from_json`; the tests check that every published entry
passes it anyway. The verdict on a ``SKILL.md`` is cached by digest and folder name only for skills
not kept as records (left out, or published with problems): a kept skill's frontmatter is in its
encoded entry, which a rescan judges afresh when only its other files changed (see
:meth:`CatalogBuilder.knows`). So a rescan re-parses only the ``SKILL.md`` files that changed, a
cold build's parse trees die with their skill, and a catalog holds no parsed frontmatter per skill.

**Skills that did not change are not built again.** A published skill that met no problem is
*made of* its files (the path below its folder, size and digest of each, in order: its *key*)
and its ``SKILL.md``'s frontmatter, whose digest is in the key; the scheme and limits are the
builder's. So the builder keeps each such skill with its key, and a later build (a rescan, a
re-check) whose snapshot gives a skill the same key returns the very same
:class:`PublishedSkill`. Across processes, a digest index keeps *skill records* (key, entry
encoded as JSON text, findings: :class:`~skills_core.server._rules.SkillRecord`,
:meth:`CatalogBuilder.records_for`, :meth:`CatalogBuilder.restore`): a skill whose key is its
record's is *restored*, a :class:`PublishedSkill` holding its URI, findings and encoded entry
whose entry and files are built only when first read (from the record's key and the frontmatter
in its encoded entry, validated afresh: a cold build from the same parts). ``manifest --json``
writes a restored entry as the record holds it and never builds it. A record is trusted as the
index is (the index's checksum, library version, scheme and limits are checked before any record
is offered); an encoded entry whose URI is not its skill's is not used, and one whose frontmatter
does not make the skill published is an error when the entry is built.

**Skills are kept encoded.** A skill built from a snapshot without problems is kept the same way
as a restored one: its entry is encoded once, as a digest index would record it, and the objects
are dropped; the entry and files are built again from the key and the encoded frontmatter when
first read. Listings decode the encoded entries (:mod:`skills_core.server._live`), so a large
catalog costs its encoded entries and keys (packed: a count, then per file its size and raw
digest, then the paths joined by NUL) rather than a tree of objects per skill.
"""

from __future__ import annotations

import bisect
import json
import operator
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Final, final

from ..digest import compute_digest
from ..entry import (
    DEFAULT_LIMITS,
    Limits,
    SkillEntry,
    unchecked_entry,
    unchecked_resource,
)
from ..errors import URIError
from ..jsonvalue import JSONValue, loads_strict
from ..spec import DYNAMIC, SKILL_MD
from ..uri import SkillURI
from ..validation import Finding
from ._rules import (
    Contender,
    PackedKey,
    ParsedSkillMd,
    SkillRecord,
    Verdict,
    ancestors,
    bad_path,
    conflict,
    find_conflicts,
    judge_parsed,
    pack_key,
    parse_skill_md,
    path_collision,
    path_of,
    refused,
    trusted_entry,
    unpack_key,
    warning,
)
from .index import DigestIndexError, IndexProblem
from .model import (
    DynamicSkill,
    OmitCode,
    OmittedSkill,
    PublishedSkill,
    RootSnapshot,
    SkippedEntry,
    SnapshotFile,
    SourceProblem,
    new_snapshot_file,
    restored_published_skill,
    skill_key,
)
from .paths import (
    DEFAULT_SCHEME,
    check_scheme,
    encode_folder,
    encode_segment,
    split_uri,
)

__all__ = ["Catalog", "CatalogBuilder", "record_digest"]

_SKILL_MD_SUFFIX: Final = "/" + SKILL_MD
_uri_of: Final = operator.attrgetter("uri")
#: A skill folder found in a snapshot: (root URI, folder, its SKILL.md, the files below it with
#: SKILL.md among them (or empty when it is the only one), the problems met below it or None).
_Found = tuple[str, str, SnapshotFile, Sequence[SnapshotFile], list[SourceProblem] | None]
#: Verdicts kept between scans, at most; past this the cache starts again (a bound, not a tuning).
_MAX_CACHED_VERDICTS: Final = 65_536
#: A file of a packed key: its size and raw digest; and the count of files before the rows.
_KEY_ROW: Final = struct.Struct("<Q32s")
_COUNT: Final = struct.Struct("<I")


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Catalog:
    """The skills a server publishes, and those it leaves out, at one moment.

    Attributes:
        skills: The published skills, sorted by URI, each URI once.
        omitted: The skills left out, with reasons, sorted by root and path.
        problems: Filesystem entries refused while walking (links, special files, unreadable).
        skipped: Entries the source passed over on purpose (hidden, excluded or ignored names).
    """

    skills: tuple[PublishedSkill, ...] = ()
    omitted: tuple[OmittedSkill, ...] = ()
    problems: tuple[SourceProblem, ...] = ()
    skipped: tuple[SkippedEntry, ...] = ()
    _index: Mapping[str, PublishedSkill] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _names: Mapping[str, tuple[str, ...]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        uris = list(map(_uri_of, self.skills))
        # Every URI is below the next one (any(a >= b) over the pairs, in C).
        if any(map(operator.ge, uris, uris[1:])):
            raise ValueError("Catalog.skills must be sorted by URI, each URI once")

    @classmethod
    def from_files(
        cls,
        files: Mapping[str, bytes],
        *,
        scheme: str = DEFAULT_SCHEME,
        limits: Limits = DEFAULT_LIMITS,
        dynamic: Iterable[DynamicSkill] = (),
    ) -> Catalog:
        """Build a catalog from one in-memory root, e.g. ``{"pdf-processing/SKILL.md": b"..."}``.

        Raises:
            ValueError: a path is not a clean relative path.
        """
        builder = CatalogBuilder(scheme=scheme, limits=limits)
        return builder.build([RootSnapshot.from_files(files)], dynamic=tuple(dynamic))

    def get(self, uri: str) -> PublishedSkill | None:
        """Return the published skill whose SKILL.md URI is exactly ``uri``, or None."""
        index = self._index
        if index is None:
            index = MappingProxyType({skill.uri: skill for skill in self.skills})
            object.__setattr__(self, "_index", index)
        return index.get(uri)

    @property
    def duplicate_names(self) -> Mapping[str, tuple[str, ...]]:
        """``{name: URIs}`` for every name that more than one published skill uses (ORG-10).

        Names SHOULD be unique within a listing; both skills are still published, and hosts tell
        them apart by path.
        """
        names = self._names
        if names is None:
            by_name: dict[str, list[str]] = {}
            for skill in self.skills:
                by_name.setdefault(skill.name, []).append(skill.uri)
            names = MappingProxyType(
                {name: tuple(uris) for name, uris in by_name.items() if len(uris) > 1}
            )
            object.__setattr__(self, "_names", names)
        return names

    def findings(self, skill: PublishedSkill) -> tuple[Finding, ...]:
        """Every warning about a published skill: its own, plus a shared name (ORG-10)."""
        sharing = (self._names or self.duplicate_names).get(skill.name)
        if sharing is None:
            return skill.findings
        others = [uri for uri in sharing if uri != skill.uri]
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        return (
            *skill.findings,
            warning(
                "/name",
                "duplicate-name",
                f"the name {skill.name!r} is also used by {shown}; hosts tell such skills "
                "apart by path (ORG-10)",
            ),
        )

    @property
    def entries(self) -> tuple[SkillEntry, ...]:
        """The published entries, in URI order."""
        return tuple(skill.entry for skill in self.skills)

    def manifest_json(self) -> list[dict[str, object]]:
        """The published entries as wire JSON, in URI order (what ``manifest --json`` prints)."""
        return [dict(skill.entry.to_json()) for skill in self.skills]


# --- building ------------------------------------------------------------------------------------


@final
class CatalogBuilder:
    """Turns snapshots into catalogs; keeps a cache of SKILL.md verdicts between builds.

    One builder belongs to one source. It holds no I/O and no clock: its state is the skills the
    last build published without problems (each kept encoded, with its key), the cache of
    verdicts keyed by ``(SKILL.md digest, folder name)``, which a full :meth:`build` prunes to
    those of skills it did not keep, and, when asked to keep them, the parsed SKILL.md files by
    digest (what a digest index stores: :meth:`learn`, :meth:`parsed_for`).
    """

    __slots__ = (
        "_old",
        "_parsed",
        "_previous",
        "_records",
        "_restorer",
        "_stored",
        "_verdicts",
        "limits",
        "new_records",
        "scheme",
    )

    def __init__(self, *, scheme: str = DEFAULT_SCHEME, limits: Limits = DEFAULT_LIMITS) -> None:
        """Build ``<scheme>://`` URIs and enforce ``limits`` (the spec's, by default).

        Raises:
            ValueError: ``scheme`` is not a URI scheme name.
        """
        self.scheme = check_scheme(scheme)
        self.limits = limits
        # What every skill kept encoded builds its entry with (model.Materialize).
        self._restorer = partial(_restore, (self.scheme, limits))
        self._verdicts: dict[tuple[str, str], Verdict] = {}
        self._old: dict[tuple[str, str], Verdict] = {}
        # Parsed SKILL.md files by digest, once learn() was called (a digest index needs them).
        self._parsed: dict[str, ParsedSkillMd] | None = None
        # Published skills without problems by (root, folder), with what they are made of: those
        # of the last build (and re-checks since), and those of the build before, during a build.
        # (Keys packed: see _files_key.)
        # (Per root, by folder: no tuple per skill; each skill holds its key, model.skill_key.)
        self._records: dict[int, dict[str, PublishedSkill]] = {}
        self._previous: dict[int, dict[str, PublishedSkill]] = {}
        # Records a digest index gave (restore()), until the next full build; and by the digest
        # of its SKILL.md, the encoded entry of one of them (whose frontmatter is that SKILL.md's:
        # an index keeps each frontmatter once).
        # Records a digest index gave (restore()), per root as given, until the next full build.
        self._stored: dict[int, Mapping[str, SkillRecord]] = {}
        #: Whether a build or re-check published a skill that was not restored or kept, since
        #: this was last set to False (a digest index then has a record to add).
        self.new_records = False

    # -- public -----------------------------------------------------------------------------------

    def build(
        self, roots: Sequence[RootSnapshot], *, dynamic: Sequence[DynamicSkill] = ()
    ) -> Catalog:
        """Build the catalog of every root (in order) and every dynamic skill."""
        self._old, self._verdicts = self._verdicts, {}
        self._previous, self._records = self._records, {}
        omitted: list[OmittedSkill] = []
        problems: list[SourceProblem] = []
        skipped: list[SkippedEntry] = []
        published: list[PublishedSkill] = []
        candidates: list[Contender] = []
        # One root and no dynamic skill: folders map to distinct, consistent URIs, so no skill
        # can conflict with another, and each is built as soon as it is found.
        alone = len(roots) == 1 and not dynamic
        for index, snapshot in enumerate(roots):
            problems.extend(snapshot.problems)
            skipped.extend(snapshot.skipped)
            for found in self._root_skills(index, snapshot, omitted):
                if alone:
                    result = self._build(index, found)
                    if type(result) is PublishedSkill:
                        published.append(result)
                    else:
                        omitted.append(result)
                    continue
                root_uri, folder, skill_md, files, owned = found
                candidates.append(
                    Contender((0, index), root_uri, index, folder, skill_md, files, owned)
                )
        for number, skill in enumerate(dynamic):
            candidates.append(
                Contender(
                    origin=(1, number), root_uri=SkillURI.parse(skill.uri).root, dynamic=skill
                )
            )
        find_conflicts(candidates)
        for candidate in candidates:
            if candidate.conflicts:
                omitted.append(conflict(candidate))
                continue
            if candidate.dynamic is not None:
                result = self.build_dynamic(candidate.dynamic)
            else:
                assert candidate.root is not None
                assert candidate.skill_md is not None
                result = self._build(
                    candidate.root,
                    (
                        candidate.root_uri,
                        candidate.folder,
                        candidate.skill_md,
                        candidate.files,
                        candidate.problems,
                    ),
                )
            if isinstance(result, OmittedSkill):
                omitted.append(result)
            else:
                published.append(result)
        self._old = {}
        self._previous = {}
        self._stored = {}
        published.sort(key=_uri_of)
        omitted.sort(key=lambda o: (o.root is None, o.root or 0, o.path))
        return Catalog(
            skills=tuple(published),
            omitted=tuple(omitted),
            problems=tuple(problems),
            skipped=tuple(skipped),
        )

    def build_skill(
        self, root: int, folder: str, snapshot: RootSnapshot
    ) -> PublishedSkill | OmittedSkill:
        """Build the one skill in ``folder`` of root ``root`` from a snapshot of that folder.

        ``snapshot`` holds the files below ``folder`` (paths relative to the root; anything else
        is ignored) and the problems met there. Cross-root collisions are the source's business.
        """
        files = sorted(snapshot.files, key=path_of)
        paths = [f.path for f in files]
        prefix = folder + "/"
        low = bisect.bisect_left(paths, prefix)
        high = bisect.bisect_left(paths, folder + "0")  # "0" follows "/"
        inside = files[low:high]
        skill_md = next((f for f in inside if f.path == prefix + SKILL_MD), None)
        if skill_md is None:  # the source checked that SKILL.md exists; it vanished since
            return OmittedSkill(
                root=root,
                path=folder,
                uri=None,
                code=OmitCode.REFUSED,
                reason="SKILL.md is no longer a readable regular file",
            )
        try:
            root_uri = f"{self.scheme}://{encode_folder(folder)}"
        except URIError as exc:
            return bad_path(root, folder, exc)
        owned = [p for p in snapshot.problems if p.path.startswith(prefix)] or None
        result = self._build(root, (root_uri, folder, skill_md, inside, owned))
        if len(self._verdicts) > _MAX_CACHED_VERDICTS:
            self._verdicts = {}
        return result

    def build_dynamic(self, skill: DynamicSkill) -> PublishedSkill | OmittedSkill:
        """Build the entry of a dynamic skill from the SKILL.md it serves now."""
        parsed = SkillURI.parse(skill.uri)
        data = skill.read(SKILL_MD)
        if data is None:
            return OmittedSkill(
                root=None,
                path=skill.uri,
                uri=skill.uri,
                code=OmitCode.UNAVAILABLE,
                reason="the dynamic skill returned no SKILL.md",
            )
        verdict = self._verdict(compute_digest(data), data, parsed.name)
        if verdict.frontmatter is None:
            assert verdict.code is not None
            return OmittedSkill(
                root=None, path=skill.uri, uri=skill.uri, code=verdict.code, reason=verdict.reason
            )
        return PublishedSkill(
            entry=trusted_entry(parsed, verdict.frontmatter, DYNAMIC),
            root=None,
            folder=parsed.skill_path,
            findings=verdict.findings,
            listed=skill.listed,
        )

    def knows(self, digest: str, name: str, *, root: int | None = None, folder: str = "") -> bool:
        """Whether the verdict on a SKILL.md with ``digest`` in a folder ``name`` needs no bytes.

        True when that verdict is cached, or the parsed SKILL.md of that digest is kept, or,
        given the skill's ``root`` and ``folder`` (as snapshots spell it), the skill kept there
        by the last build, or the record :meth:`restore` offered for it, had a SKILL.md of that
        digest (its frontmatter is in its encoded entry). A source may then snapshot that
        SKILL.md without its bytes (:class:`SnapshotFile` with ``data=None``) for the next
        :meth:`build` or :meth:`build_skill`.
        """
        if (self._parsed is not None and digest in self._parsed) or (
            digest,
            name,
        ) in self._verdicts:
            return True
        if root is None:
            return False
        kept = _kept(self._records, root, folder)
        if kept is not None:
            return _key_digest(kept[0]) == digest
        stored = self._stored.get(root)
        record = stored.get(folder) if stored is not None else None
        return record is not None and record_digest(record) == digest

    def learn(self, parsed: Mapping[str, ParsedSkillMd]) -> None:
        """Keep parsed SKILL.md files by digest from now on, starting with ``parsed``.

        Each value is what the frontmatter parser made of the SKILL.md with that digest: a JSON
        object, or the reason it has no frontmatter (a string beginning ``"SKILL.md "``). The
        caller (a digest index) vouches that it is; the rules of the catalog (name, validation)
        still run on it. A SKILL.md of a known digest needs no bytes (:meth:`knows`); every one
        parsed from now on is kept too, for :meth:`parsed_for`.
        """
        if self._parsed is None:
            self._parsed = {}
        self._parsed.update(parsed)

    def parsed_for(self, digests: Iterable[str]) -> dict[str, ParsedSkillMd]:
        """The kept parsed SKILL.md of each of ``digests`` known, forgetting every other one.

        A source calls it with the digest of every SKILL.md it still has, so what is kept stays
        bounded by the tree. Empty unless :meth:`learn` was called.
        """
        kept = self._parsed
        if kept is None:
            return {}
        wanted = {digest: kept[digest] for digest in digests if digest in kept}
        self._parsed = dict(wanted)
        return wanted

    def restore(self, root: int, records: Mapping[str, SkillRecord]) -> None:
        """Offer the next :meth:`build` the skills of root ``root`` as a digest index kept them.

        ``records`` is ``{skill folder: record}``, written by :meth:`records_for` of a builder
        of the same scheme and limits, and the same library version (the caller checks). A
        skill whose files are those of its record and that met no problem is then restored from
        it: a :class:`PublishedSkill` with its URI, findings and encoded entry, whose entry and
        files are built when first read (from the frontmatter in the encoded entry, validated
        afresh). The frontmatter of the SKILL.md in a record is known for its folder
        (:meth:`knows`). ``records`` is kept as given (nothing is made per record) until the
        next full build, which forgets it.
        """
        self._stored[root] = records

    def records_for(self, root: int) -> dict[str, SkillRecord]:
        """``{skill folder: record}`` for the skills of root ``root`` that the last build (and
        re-checks since) published without problems, to keep in a digest index.

        Encodes the entries not restored from a record. A record holds its SKILL.md's
        frontmatter (in the encoded entry): an index need not keep it again (see
        :func:`record_digest`).
        """
        records: dict[str, SkillRecord] = {}
        for folder, skill in self._records.get(root, {}).items():
            key = skill_key(skill)
            assert key is not None  # every skill kept was built or restored encoded
            encoded = skill.encoded_entry
            if encoded is None:  # entries hold Unicode text only: it encodes
                encoded = json.dumps(skill.entry.to_json(), ensure_ascii=False).encode()
            records[folder] = SkillRecord(PackedKey(key), encoded, skill.findings)
        return records

    def folder_of(self, uri: str) -> str | None:
        """Return the folder (raw names) a SKILL.md URI of this builder's scheme names, or None.

        None when the URI is of another scheme, is not ``.../SKILL.md`` with at least one folder,
        or is not in the canonical encoding (see :func:`skills_core.server.paths.split_uri`).
        """
        split = split_uri(uri)
        if split is None:
            return None
        scheme, names = split
        if scheme != self.scheme or len(names) < 2 or names[-1] != SKILL_MD:
            return None
        return "/".join(names[:-1])

    # -- internals --------------------------------------------------------------------------------

    def _root_skills(
        self, index: int, snapshot: RootSnapshot, omitted: list[OmittedSkill]
    ) -> Iterator[_Found]:
        """Yield each skill folder of a root; add the folders that cannot be skills to ``omitted``."""
        files = sorted(snapshot.files, key=path_of)
        paths = [f.path for f in files]
        # Each problem belongs to every skill folder above it.
        owned: dict[str, list[SourceProblem]] = {}
        for problem in snapshot.problems:
            for folder in ancestors(problem.path, 0):
                owned.setdefault(folder, []).append(problem)
        skill_folders: set[str] = set()  # only needed (and kept) when there are problems
        track = bool(snapshot.problems)
        scheme_prefix = self.scheme + "://"
        bisect_left = bisect.bisect_left
        for position, path in enumerate(paths):
            if not path.endswith(_SKILL_MD_SUFFIX):
                if path == SKILL_MD:
                    omitted.append(
                        OmittedSkill(
                            root=index,
                            path="",
                            uri=None,
                            code=OmitCode.TOP_LEVEL,
                            reason="SKILL.md sits directly in the root, so the skill has no "
                            "folder name; serve the folder that contains it instead",
                        )
                    )
                continue
            folder = path[: -len(_SKILL_MD_SUFFIX)]
            try:
                root_uri = scheme_prefix + encode_folder(folder)
            except URIError as exc:
                omitted.append(bad_path(index, folder, exc))
                continue
            prefix = folder + "/"
            if (position == 0 or not paths[position - 1].startswith(prefix)) and (
                position + 1 == len(paths) or not paths[position + 1].startswith(prefix)
            ):
                low, high = position, position + 1  # SKILL.md is the folder's only file
            else:
                low = bisect_left(paths, prefix, 0, position + 1)
                high = bisect_left(paths, folder + "0", position)
            if track:
                skill_folders.add(folder)
            yield (
                root_uri,
                folder,
                files[position],
                files[low:high] if high - low > 1 else (),
                owned.get(folder),
            )
        for problem in snapshot.problems:
            if problem.path.endswith(_SKILL_MD_SUFFIX) and problem.path[:-9] not in skill_folders:
                omitted.append(refused(index, problem))

    def _verdict(self, digest: str, data: bytes | None, name: str) -> Verdict:
        """The verdict on a dynamic skill's SKILL.md (never a record: cached)."""
        key = (digest, name)
        verdict = self._verdicts.get(key)
        if verdict is not None:
            return verdict
        verdict = self._old.get(key)
        if verdict is None:
            verdict = self._judge(digest, data, name)
        self._verdicts[key] = verdict
        return verdict

    def _judge(
        self,
        digest: str,
        data: bytes | None,
        name: str,
        records: Sequence[tuple[bytes, bytes | None]] = (),
    ) -> Verdict:
        """The verdict on a SKILL.md not cached: parsed from ``data``, or as kept by digest,
        or from the first of ``records`` (packed key and encoded entry: the skill kept at its
        place by the last build, the record offered for it) whose SKILL.md has that digest.

        Raises:
            DigestIndexError: no record holds this SKILL.md's frontmatter, or the one that
                should does not (an index written by another program: the source then starts
                cold).
        """
        kept = self._parsed
        if data is None:
            parsed = None if kept is None else kept.get(digest)
            for key, encoded_entry in records:
                if parsed is not None:
                    break
                if encoded_entry is not None and _key_digest(key) == digest:
                    parsed = recorded_frontmatter(encoded_entry)
            if parsed is None:
                raise DigestIndexError(
                    IndexProblem.MALFORMED,
                    "is malformed (a record's encoded entry is not its skill's entry)",
                )
        else:
            parsed = parse_skill_md(data)
            if kept is not None:
                kept[digest] = parsed
        return judge_parsed(parsed, name)

    def _stored_record(
        self, root: int, folder: str, root_uri: str
    ) -> tuple[bytes, bytes, tuple[Finding, ...]] | None:
        """The record :meth:`restore` offered for a skill: its packed key, encoded entry and
        findings; None when there is none, or its key is not one a file can have, or its encoded
        entry is not this skill's (a record of another catalog, an index written by hand: a
        cheap check; the rest is trusted as the index is)."""
        records = self._stored.get(root)
        record = records.get(folder) if records is not None else None
        if record is None:
            return None
        try:
            key = pack_key(record.key)
        except (struct.error, ValueError, TypeError):  # not a key a file can have
            return None
        if not record.encoded_entry.startswith(b'{"uri": "%s/SKILL.md", ' % root_uri.encode()):
            return None
        return key, record.encoded_entry, record.findings

    def _build(self, root: int, found: _Found) -> PublishedSkill | OmittedSkill:
        root_uri, folder, skill_md, files_below, problems = found
        kept = _kept(self._previous, root, folder) or _kept(self._records, root, folder)
        stored = self._stored_record(root, folder, root_uri)
        if problems is None:
            key = _files_key(folder, skill_md, files_below)
            if kept is not None and kept[0] == key:
                self._records.setdefault(root, {})[folder] = kept[1]
                return kept[1]
            if stored is not None and stored[0] == key:
                skill = restored_published_skill(
                    root_uri + _SKILL_MD_SUFFIX,
                    root,
                    folder,
                    findings=stored[2],
                    encoded_entry=stored[1],
                    make=(self._restorer, key),
                )
                self._records.setdefault(root, {})[folder] = skill
                return skill
        limits = self.limits
        if skill_md.size > limits.max_total_bytes:  # a source need not read (or hash) it at all
            return _over_limit(
                limits,
                root,
                folder,
                root_uri + _SKILL_MD_SUFFIX,
                files=len(files_below) or 1,
                total=sum(f.size for f in files_below) if files_below else skill_md.size,
            )
        digest = skill_md.digest
        name = folder.rpartition("/")[2]
        verdict_key = (digest, name)
        verdict = self._verdicts.get(verdict_key)
        parsed_here = False  # from its bytes, by this call
        if verdict is None:
            verdict = self._old.get(verdict_key)
            if verdict is None:
                parsed_here = skill_md.data is not None
                verdict = self._judge(
                    digest,
                    skill_md.data,
                    name,
                    [
                        *([] if kept is None else [(kept[0], kept[1].encoded_entry)]),
                        *([] if stored is None else [stored[:2]]),
                    ],
                )
        result = _publish(self.scheme, limits, root, found, verdict)
        if problems is not None or type(result) is not PublishedSkill:
            self._verdicts[verdict_key] = verdict  # no record holds it: cached
        else:
            # A skill kept as a record holds its frontmatter (in its encoded entry): its verdict
            # and the SKILL.md parsed here are not kept, so they die here, not at the end of the
            # build (a cold build's parse trees do not outlive their skill). What learn() gave
            # stays (parsed_for() decides).
            if parsed_here and self._parsed is not None:
                self._parsed.pop(digest, None)
            # Kept as a restored skill is: its entry encoded (what listings and a digest index
            # use), built again only when read (a few kilobytes of objects per skill otherwise).
            encoded = json.dumps(result.entry.to_json(), ensure_ascii=False).encode()
            result = restored_published_skill(
                result.uri,
                root,
                folder,
                findings=result.findings,
                encoded_entry=encoded,
                make=(self._restorer, key),
            )
            self._records.setdefault(root, {})[folder] = result
            self.new_records = True
        return result


def _kept(
    table: dict[int, dict[str, PublishedSkill]], root: int, folder: str
) -> tuple[bytes, PublishedSkill] | None:
    """The key and skill kept in ``table`` for ``folder`` of ``root``, or None."""
    skills = table.get(root)
    skill = skills.get(folder) if skills is not None else None
    if skill is None:
        return None
    key = skill_key(skill)
    return None if key is None else (key, skill)


def _files_key(folder: str, skill_md: SnapshotFile, files_below: Sequence[SnapshotFile]) -> bytes:
    """What a published skill is made of besides its SKILL.md's frontmatter: the path below the
    folder, size and digest of each of its files, in order, packed (see :class:`~._rules.PackedKey`)."""
    files = files_below or (skill_md,)
    start = len(folder) + 1
    fromhex = bytes.fromhex
    pack = _KEY_ROW.pack
    return b"".join(
        [
            _COUNT.pack(len(files)),
            *[pack(file.size, fromhex(file.digest[7:])) for file in files],
            "\0".join([file.path[start:] for file in files]).encode("utf-8", "surrogateescape"),
        ]
    )


def _key_digest(key: bytes) -> str | None:
    """The digest of the SKILL.md in a packed key (:class:`~._rules.PackedKey`), or None."""
    (count,) = _COUNT.unpack_from(key)
    end = _COUNT.size + _KEY_ROW.size * count
    paths = key[end:].split(b"\0")
    try:
        position = paths.index(b"SKILL.md")
    except ValueError:
        return None
    return (
        "sha256:"
        + key[
            _COUNT.size + _KEY_ROW.size * position + 8 : _COUNT.size
            + _KEY_ROW.size * (position + 1)
        ].hex()
    )


def _restore(
    settings: tuple[str, Limits],
    root: int,
    folder: str,
    key: bytes,
    encoded_entry: bytes,
) -> tuple[SkillEntry, Mapping[str, str]]:
    """The entry and files of a skill restored from a record: a cold build from the same parts.

    The files come from the record's key (the snapshot it was checked against), the frontmatter
    from the record's encoded entry, validated afresh; ``settings`` are the builder's scheme and
    limits.

    Raises:
        RuntimeError: the record says the skill is published, and it is not (a record that does
            not belong to this skill: a bug, or an index written by hand).
    """
    scheme, limits = settings
    parsed = recorded_frontmatter(encoded_entry)
    if parsed is None:
        raise RuntimeError(f"the digest index record of {folder!r} does not match the skill")
    prefix = folder + "/"
    files = [
        new_snapshot_file(prefix + str(path), int(size), str(digest), None)
        for path, size, digest in zip(*[iter(unpack_key(key))] * 3, strict=True)
    ]
    skill_md = next(f for f in files if f.path == prefix + SKILL_MD)
    found = (
        f"{scheme}://{encode_folder(folder)}",
        folder,
        skill_md,
        files if len(files) > 1 else (),
        None,
    )
    result = _publish(scheme, limits, root, found, judge_parsed(parsed, folder.rpartition("/")[2]))
    if type(result) is not PublishedSkill:
        raise RuntimeError(f"the digest index record of {folder!r} does not match the skill")
    return result.entry, result.files


def recorded_frontmatter(encoded_entry: bytes) -> dict[str, JSONValue] | None:
    """The frontmatter in an encoded entry, as the parser gives it (plain JSON), or None.

    An entry's frontmatter is the parsed SKILL.md's, frozen; as JSON text and back it is the
    same plain object again.
    """
    try:
        entry = loads_strict(encoded_entry)
    except ValueError:
        return None
    frontmatter = entry.get("frontmatter") if isinstance(entry, dict) else None
    return frontmatter if type(frontmatter) is dict else None


def record_digest(record: SkillRecord) -> str | None:
    """The digest of the SKILL.md a record holds the frontmatter of (in its key)."""
    key = record.key
    if isinstance(key, PackedKey):
        return _key_digest(key.packed)
    for position in range(0, len(key), 3):
        if key[position] == SKILL_MD:
            return str(key[position + 2])
    return None


def _over_limit(
    limits: Limits, root: int, folder: str, skill_uri: str, *, files: int, total: int
) -> OmittedSkill:
    return OmittedSkill(
        root=root,
        path=folder,
        uri=skill_uri,
        code=OmitCode.OVER_LIMIT,
        reason=f"the skill has {files} files and {total} bytes; the limits are "
        f"{limits.max_resources} files and {limits.max_total_bytes} bytes",
    )


def _publish(
    scheme: str, limits: Limits, root: int, found: _Found, verdict: Verdict
) -> PublishedSkill | OmittedSkill:
    """The skill ``found`` in root ``root`` with the verdict on its SKILL.md: published, or why
    not (its files, URIs, limits and path collisions are checked here)."""
    root_uri, folder, skill_md, files_below, problems = found
    skill_uri = root_uri + _SKILL_MD_SUFFIX
    frontmatter = verdict.frontmatter
    if frontmatter is None:
        assert verdict.code is not None
        return OmittedSkill(
            root=root, path=folder, uri=skill_uri, code=verdict.code, reason=verdict.reason
        )
    findings = verdict.findings
    if problems:
        findings = (
            *findings,
            *[
                warning("", str(problem.code), f"{problem.path}: {problem.reason}")
                for problem in problems
            ],
        )
    total = skill_md.size
    resources = [unchecked_resource(skill_uri, skill_md.digest, total)]
    files = {skill_uri: SKILL_MD}
    if len(files_below) > 1:
        start = len(folder) + 1
        bad_names: list[Finding] = []
        for file in files_below:
            if file is skill_md:
                continue
            relative = file.path[start:]
            try:
                uri = root_uri + "/" + "/".join([encode_segment(n) for n in relative.split("/")])
            except URIError as exc:
                bad_names.append(
                    warning(
                        "",
                        "bad-file-name",
                        f"{relative} is not served: its name cannot be a URI segment "
                        f"({exc.message})",
                        file=relative,
                    )
                )
                continue
            resources.append(unchecked_resource(uri, file.digest, file.size))
            files[uri] = relative
            total += file.size
        if bad_names:
            findings = (*findings, *bad_names)
    if len(resources) > limits.max_resources or total > limits.max_total_bytes:
        return _over_limit(limits, root, folder, skill_uri, files=len(resources), total=total)
    if len(files) > 1:
        collision = path_collision(files.values())
        if collision is not None:
            return OmittedSkill(
                root=root,
                path=folder,
                uri=skill_uri,
                code=OmitCode.PATH_COLLISION,
                reason=collision,
            )
    skill = SkillURI(skill_uri, scheme, root_uri[len(scheme) + 3 :])
    # trusted_entry(skill, frontmatter, tuple(resources)), without the dynamic case
    return PublishedSkill(
        entry=unchecked_entry(skill=skill, frontmatter=frontmatter, resources=tuple(resources)),
        root=root,
        folder=folder,
        files=MappingProxyType(files),
        findings=findings,
    )
