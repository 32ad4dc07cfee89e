"""A source over stored snapshots of skills, served by digest and verified (pure, no I/O).

Theory of operation
-------------------
An object store or a git repository holds skills as *states*: a set of files, each known by
path, size and digest, of which one state is current (a catalog document's generation, a
commit). :class:`StoreSource` serves one state at a time through the
:class:`~skills_core.server.source.SkillSource` protocol, and reads file bytes through a
:class:`BlobFetcher`, a small protocol an adapter implements over its store (S3 GETs, ``git
cat-file``). The I/O lives in the adapters (:mod:`skills_core.sources.s3`,
:mod:`skills_core.sources.git`); this module decides.

**The same rules as a folder.** A state's catalog is made by the
:class:`~skills_core.server.catalog.CatalogBuilder` a folder's is made by: :class:`CatalogChecker`
turns each record of a catalog document into the files it names (paths decoded from the entry's
canonical URIs, sizes, digests) and its SKILL.md's frontmatter, and the builder applies every rule
(names, limits, the Agent Skills rules on the frontmatter, file names, path collisions, nested
skills). A skill is published only when the builder publishes it *and* makes exactly the entry
the record holds; anything else is left out with a reason, as a folder's omitted skills are (a
nested SKILL.md with no record of its own too: its bytes were never seen). The builder keeps its
verdicts by SKILL.md digest from one document to the next, and starts again when a document
says something else about a digest, so a replica's check of a document is always what a fresh
replica makes of it. A record whose shape is wrong (a URI outside its skill, a size that is
not a whole number, two records that disagree about one file) makes the whole document
unreadable: it was not made by a publisher of this format.

**Lone skills are judged one record at a time.** Most records stand alone: no other record's
skill folder is above or below theirs and no file of theirs but their SKILL.md is a SKILL.md, so
what the builder makes of them depends on their record only (its files are exactly the
record's). For such a record the checker applies the builder's rules itself, in the builder's
order and with the builder's own functions (the verdict on the frontmatter for the folder name,
:func:`~skills_core.server._rules.judge_parsed`; the limits; path collisions; the canonical
encoding of every URI; the members of the entry and of each resource; SKILL.md first and the
other files by path): a record that passes is published as the builder would publish it, and
every other record, with every record above or below it, goes through the builder as above, so
every skill left out is left out with the builder's code and reason. A skill published this way
is kept *encoded* (:class:`~skills_core.server.model.PublishedSkill`): its entry as JSON text,
the document's own (so nothing is encoded again), from which listings are answered; its entry
and files are built the first time a request needs them (``skills/get``, a read). A record whose
entry text is that of a skill the previous check published is that skill (the outcome is a
function of the entry), so a new generation re-judges only what changed. The tests hold
documents edited in each way the rules and the record shapes name to what the builder alone
makes of them.

**Nothing unverified is served.** :meth:`StoreSource.read` fetches a file by the digest its entry
publishes and checks the size and SHA-256 of the bytes before returning them; bytes that do not
match are never returned: the read raises :class:`BlobError` (the handler answers
``-32603``), and the source's ``log`` is told which object it was. A fetch that fails (the store
unreachable) does the same. Directory reads and ``skills/get`` answer from the state alone.

**Swapping states.** An adapter's refresher (a thread it owns) makes each new state off the
request path and hands it over with :meth:`StoreSource.offer`; :meth:`StoreSource.poll`, asked on
listings, only swaps in what was offered, whole: a listing never mixes two states, and
``skills/get`` answers from the state the listings use. A state whose generation is not greater
than the one served is refused and logged, so a replica never goes back to a catalog older than
one it has served.

**Reads that would wait.** :meth:`StoreSource.read_blocks` says whether a read would wait on the
store (its bytes are not in the fetcher's cache); the request handler then hands the read to a
worker thread (a :class:`~skills_core.server.handler.PendingRead`) when its caller runs an event
loop.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final, Protocol, cast, final

from ..digest import compute_digest, is_valid_digest
from ..entry import Limits, SkillEntry, unchecked_entry, unchecked_resource
from ..names import is_valid_skill_name
from ..server._rules import ParsedSkillMd, freeze_parsed, judge_parsed
from ..server._rules import path_collision as _path_collision
from ..server.catalog import Catalog, CatalogBuilder
from ..server.model import (
    OmitCode,
    OmittedSkill,
    PublishedSkill,
    RootSnapshot,
    SnapshotFile,
    restored_published_skill,
)
from ..server.paths import decode_segment, encode_segment, split_uri
from ..spec import SKILL_MD
from ..uri import MAX_URI_LENGTH, SkillURI
from ..validation import Finding, validate_frontmatter
from .published import CatalogDocument, CatalogError, paused_gc

__all__ = [
    "BlobFetcher",
    "BlobError",
    "StoreState",
    "StoreSource",
    "CatalogChecker",
    "state_from_snapshot",
]

_SKILL_MD_SUFFIX: Final = "/" + SKILL_MD


class BlobError(Exception):
    """A file's bytes could not be served: the store failed, or they do not match their digest.

    Attributes:
        key: The object that was read (``s3://bucket/prefix/blobs/sha256/...``, a git blob), for
            the operator; never sent to a client.
        reason: One line for people.
    """

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


class BlobFetcher(Protocol):
    """How a :class:`StoreSource` reads file bytes: by digest, from wherever the adapter keeps them.

    Called from the request handler's thread and from worker threads at once: an implementation
    must allow that.
    """

    def fetch(self, digest: str, size: int) -> bytes:
        """Return the bytes stored for ``digest`` (the caller checks them against it).

        Raises:
            BlobError: they cannot be read now.
        """
        ...

    def cached(self, digest: str) -> bool:
        """Whether :meth:`fetch` would answer without waiting on the store."""
        ...

    def describe(self, digest: str) -> str:
        """Where the bytes of ``digest`` are kept, for a log line (no secret in it)."""
        ...


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class StoreState:
    """One state of a store: its catalog, and what directory reads need beyond it.

    Attributes:
        generation: Orders states: a source never serves one whose generation is not greater
            than the one it serves.
        label: What it is, for people (``generation 7``, ``commit 1a2b3c4``).
        catalog: The skills published in it, and those left out.
        dirs: ``{skill URI: folders of the skill that hold no file}``, relative to the skill.
    """

    generation: int
    label: str
    catalog: Catalog
    dirs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def _ignore(message: str) -> None:
    """The default ``log``: say nothing."""


@final
class StoreSource:
    """A :class:`~skills_core.server.source.SkillSource` over the states of a store (see the
    module docstring).

    Args:
        state: The state to serve first.
        fetcher: Reads file bytes by digest.
        log: Called with one line for the operator when something goes wrong (a blob that
            does not match its digest, a state refused); never with a secret.
        close: Called once by :meth:`close` (an adapter stops its refresher there).
    """

    __slots__ = ("_close", "_fetcher", "_judged", "_log", "_offered", "_served", "_trees")

    def __init__(
        self,
        state: StoreState,
        fetcher: BlobFetcher,
        *,
        log: Callable[[str], None] = _ignore,
        close: Callable[[], None] | None = None,
    ) -> None:
        self._served = state
        self._offered = state
        self._judged = state
        self._fetcher = fetcher
        self._log = log
        self._close = close
        # {skill URI: {folder path: {name: is folder}}}, made on first directory read
        self._trees: dict[str, dict[str, dict[str, bool]]] = {}

    @property
    def state(self) -> StoreState:
        """The state served (the last one :meth:`scan` or :meth:`poll` returned the catalog of)."""
        return self._served

    @property
    def scheme(self) -> str:
        """The URI scheme of the skills served (that of the first skill, else ``skill``)."""
        skills = self._served.catalog.skills
        return skills[0].uri.partition("://")[0] if skills else "skill"

    def offer(self, state: StoreState) -> None:
        """Hand over a newer state, to be served from the next :meth:`poll` on (any thread)."""
        self._offered = state

    def close(self) -> None:
        """Stop whatever the adapter runs for this source (its refresher); idempotent."""
        close, self._close = self._close, None
        if close is not None:
            close()

    # -- SkillSource ------------------------------------------------------------------------------

    def scan(self) -> Catalog:
        """Return the catalog of the newest state offered (swapped in now if it is newer)."""
        self._swap()
        return self._served.catalog

    def poll(self, max_age_ms: int) -> Catalog | None:
        """Return the catalog of a newer state offered since the last call, else None.

        The state was made off the request path; this only swaps it in (``max_age_ms`` is the
        adapter's business: its refresher looks at the store more often than that).
        """
        return self._served.catalog if self._swap() else None

    def _swap(self) -> bool:
        offered = self._offered
        if offered is self._judged:
            return False
        self._judged = offered
        served = self._served
        if offered.generation <= served.generation:
            self._log(
                f"refused {offered.label}: it is not newer than {served.label}, which is served "
                "(a replica never goes back to an older catalog)"
            )
            return False
        self._served = offered
        self._trees = {}
        return True

    def recheck(self, uri: str) -> PublishedSkill | OmittedSkill | None:
        """Return the skill at ``uri`` in the state served (a state never changes)."""
        catalog = self._served.catalog
        skill = catalog.get(uri)
        if skill is not None:
            return skill
        for omitted in catalog.omitted:
            if omitted.uri == uri:
                return omitted
        return None

    def _resource(self, skill: PublishedSkill, file_path: str) -> tuple[str, int] | None:
        """The digest and size ``skill``'s entry publishes for ``file_path``, or None."""
        try:
            uri = skill.root_uri + "/" + "/".join([encode_segment(n) for n in file_path.split("/")])
        except Exception:  # noqa: BLE001 - a name no URI can carry is no file of the entry
            return None
        resource = skill.entry.resource(uri)
        return None if resource is None else (resource.digest, resource.size)

    def read(self, skill: PublishedSkill, file_path: str) -> bytes | None:
        """Return the bytes of one file of ``skill``, checked against its published digest.

        Returns None when the entry lists no such file (a folder, or nothing).

        Raises:
            BlobError: the bytes cannot be read, or do not match the digest (logged).
        """
        found = self._resource(skill, file_path)
        if found is None:
            return None
        digest, size = found
        fetcher = self._fetcher
        try:
            data = fetcher.fetch(digest, size)
        except BlobError as exc:
            self._log(f"cannot read {exc.key}: {exc.reason}")
            raise
        if len(data) != size or compute_digest(data) != digest:
            key = fetcher.describe(digest)
            reason = (
                f"holds {len(data)} bytes, not the {size} published"
                if len(data) != size
                else "does not match its digest"
            )
            self._log(f"refused {key}: it {reason} (replaced or damaged in the store?)")
            raise BlobError(key, reason)
        return data

    def read_blocks(self, skill: PublishedSkill, file_path: str) -> bool:
        """Whether :meth:`read` would wait on the store (the handler then defers it)."""
        found = self._resource(skill, file_path)
        return found is not None and not self._fetcher.cached(found[0])

    def list_directory(
        self, skill: PublishedSkill, dir_path: str
    ) -> Sequence[tuple[str, bool]] | None:
        """Return the children of one folder of ``skill``, sorted by name, or None."""
        tree = self._trees.get(skill.uri)
        if tree is None:
            tree = _tree(skill.files.values(), self._served.dirs.get(skill.uri, ()))
            self._trees[skill.uri] = tree
        children = tree.get(dir_path)
        return None if children is None else sorted(children.items())


def _tree(files: Iterable[str], dirs: Iterable[str]) -> dict[str, dict[str, bool]]:
    """``{folder: {name: is folder}}`` of the folders that hold ``files`` and of ``dirs``."""
    tree: dict[str, dict[str, bool]] = {"": {}}
    for path, is_dir in [*((f, False) for f in files), *((d, True) for d in dirs)]:
        parent = ""
        names = path.split("/")
        for depth, name in enumerate(names, 1):
            last = depth == len(names)
            tree.setdefault(parent, {})[name] = is_dir or not last
            parent = f"{parent}/{name}" if parent else name
            if not last or is_dir:
                tree.setdefault(parent, {})
    return tree


# --- making states -------------------------------------------------------------------------------


def state_from_snapshot(
    snapshot: RootSnapshot,
    builder: CatalogBuilder,
    *,
    generation: int,
    label: str,
) -> StoreState:
    """The state of one root's snapshot (a git commit's tree), by the folder rules."""
    return StoreState(generation=generation, label=label, catalog=builder.build([snapshot]))


@final
class CatalogChecker:
    """Checks catalog documents by the folder rules and makes their states (module docstring).

    One belongs to one replica: it keeps the builder's verdicts between documents, so a new
    generation re-judges only the SKILL.md files that changed.

    Args:
        builder: The builder to check with (its scheme and limits); a new one by default.
    """

    __slots__ = ("_builder", "_kept", "_learned", "_make")

    def __init__(self, builder: CatalogBuilder | None = None) -> None:
        self._builder = builder if builder is not None else CatalogBuilder()
        # What the last check taught the builder: {SKILL.md digest: frontmatter, or the reason
        # it is not published} (see _built()).
        self._learned: dict[str, ParsedSkillMd] = {}
        # The skills the last check published without the builder, by URI (see _quick()).
        self._kept: dict[str, PublishedSkill] = {}
        # How those skills build their entry and files when first read (one for all of them).
        self._make = (_entry_of, self._builder.scheme.encode())

    def state(self, document: CatalogDocument, *, label: str | None = None) -> StoreState:
        """Check ``document`` and make its state (label: ``generation N`` by default).

        Raises:
            CatalogError: a record's shape is wrong (see the module docstring).
        """
        builder = self._builder
        if document.scheme != builder.scheme:
            raise CatalogError(
                f"the catalog publishes {document.scheme}:// URIs; this replica serves "
                f"{builder.scheme}://"
            )
        with paused_gc():
            quick = self._quick(document)
            if quick.others:
                built, built_dirs = self._built(
                    replace(document, skills=quick.others, _entries=None), quick.known
                )
            else:
                built = Catalog(omitted=tuple(_publisher_omitted(document.omitted)))
                built_dirs = {}
            published = quick.published
            if built.skills:
                published = sorted([*published, *built.skills], key=_uri_of)
            elif any(map(operator.ge, quick.uris, quick.uris[1:])):
                published.sort(key=_uri_of)
            catalog = Catalog(
                skills=tuple(published),
                omitted=built.omitted,
                problems=built.problems,
                skipped=built.skipped,
            )
        return StoreState(
            generation=document.generation,
            label=label or f"generation {document.generation}",
            catalog=catalog,
            dirs={**quick.dirs, **built_dirs},
        )

    def _quick(self, document: CatalogDocument) -> _Quick:
        """Check the records the folder rules judge one by one, without the builder.

        A record is *quick* when its skill's outcome depends on its record alone and is to be
        published as stated: no other record's skill folder is above or below its own, no file
        of it but its own is a SKILL.md (no nested skill), its entry and resources have exactly
        the members the builder makes, its URIs are canonical and its resources in the builder's
        order (SKILL.md first, then by path), and the rules pass: the frontmatter's verdict for
        its folder name (:func:`~skills_core.server._rules.judge_parsed`, the builder's), the
        limits, and no path collision. Such a skill is published as the builder would publish
        it, kept encoded (its entry text, the document's own when it has it), its entry and
        files built when first read (:func:`_entry_of`). Every other record is left to the
        builder (``others``), with the frontmatter every quick record gives its SKILL.md
        (``known``: a nested SKILL.md of the same bytes is judged by it, and two records may not
        give one SKILL.md two frontmatters).

        A quick skill whose entry text is that of a skill the last check published is that
        skill (the outcome is a function of the entry; the scheme and limits are the checker's).

        Raises:
            CatalogError: two records are for one URI, or give one SKILL.md two frontmatters.
        """
        builder = self._builder
        limits = builder.limits
        prefix = builder.scheme + "://"
        plain_uri = _plain_skill_uri(builder.scheme)
        records = document.skills
        texts = document._entries
        if texts is None or len(texts) != len(records):
            texts = [None] * len(records)
        kept = self._kept
        make = self._make
        folders: dict[str, int] = {}  # folder of every record read so far -> its position
        candidates: list[tuple[int, PublishedSkill]] = []
        known: dict[str, Any] = {}
        verdicts: dict[tuple[str, str], tuple[Finding, ...] | None] = {}
        others: set[int] = set()
        dirs: dict[str, tuple[str, ...]] = {}
        for position, record in enumerate(records):
            entry = record.get("entry")
            if type(entry) is not dict:
                others.add(position)  # the builder's check refuses the document
                continue
            uri = entry.get("uri")
            if type(uri) is not str:
                others.add(position)  # the builder's check refuses the document
                continue
            match = plain_uri.fullmatch(uri) if len(uri) <= MAX_URI_LENGTH else None
            if match is not None and "." not in match.group(1):
                folder = match.group(1)
            else:
                split = split_uri(uri)
                if (
                    split is None
                    or not uri.startswith(prefix)
                    or len(split[1]) < 2
                    or split[1][-1] != SKILL_MD
                ):
                    others.add(position)  # the builder's check refuses the document
                    continue
                folder = "/".join(split[1][:-1])
            if folder in folders:
                raise CatalogError(f"two records of the catalog are for {uri}")
            folders[folder] = position  # every record's, for the nesting below
            if entry.keys() != _ENTRY_KEYS:
                others.add(position)
                continue
            text = texts[position]
            encoded = text.encode() if text is not None else None
            frontmatter = entry["frontmatter"]
            extra = record.get("dirs")
            if extra is not None and (type(extra) is not list or not all(map(_clean, extra))):
                others.add(position)
                continue
            old = kept.get(uri)
            if old is not None and encoded is not None and old.encoded_entry == encoded:
                # The entry the last check published as it is: the same outcome.
                skill_md = _quick_skill_md(entry["resources"], uri)
                findings = old.findings
            else:
                old = None
                found = _quick_files(entry["resources"], uri, limits)
                if found is None or found[1] or type(frontmatter) is not dict:
                    others.add(position)  # not as the builder makes it, or a nested SKILL.md
                    continue
                skill_md = found[0]
                name = folder.rpartition("/")[2]
                key = (skill_md, name)
                if key in verdicts:  # one SKILL.md in folders of one name: one verdict
                    judged = verdicts[key]
                else:
                    judged = verdicts[key] = _judged(frontmatter, name)
                if judged is None:  # not published: the builder says why
                    others.add(position)
                    continue
                findings = judged
                if encoded is None:
                    encoded = json.dumps(entry, ensure_ascii=False).encode()
            if skill_md is None:  # cannot be: the entry was published as it is
                others.add(position)
                continue
            stated = known.setdefault(skill_md, frontmatter)
            if stated is not frontmatter and stated != frontmatter:
                raise CatalogError(f"two records give one SKILL.md two frontmatters ({uri})")
            candidates.append(
                (
                    position,
                    old
                    or restored_published_skill(
                        uri, 0, folder, findings=findings, encoded_entry=encoded, make=make
                    ),
                )
            )
            if extra:
                dirs[uri] = tuple(extra)
        # A record whose folder is above or below another's: both are the builder's.
        above: set[str] = set()
        for folder in folders:
            slash = folder.find("/")
            while slash != -1:
                above.add(folder[:slash])
                slash = folder.find("/", slash + 1)
        for outer in above.intersection(folders):
            others.add(folders[outer])
            others.update(
                position for folder, position in folders.items() if folder.startswith(outer + "/")
            )
        published: list[PublishedSkill] = []
        if others:
            for position, skill in candidates:
                if position in others:
                    dirs.pop(skill.uri, None)
                else:
                    published.append(skill)
        else:
            published = [skill for _, skill in candidates]
        uris = [skill.uri for skill in published]
        self._kept = dict(zip(uris, published, strict=True))
        return _Quick(
            published=published,
            uris=uris,
            dirs=dirs,
            others=[records[position] for position in sorted(others)],
            known=known,
        )

    def _built(
        self, document: CatalogDocument, known: Mapping[str, Any]
    ) -> tuple[Catalog, dict[str, tuple[str, ...]]]:
        """Check ``document``'s records by building their catalog with the builder (see the
        module docstring), ``known`` being the frontmatter other records give their SKILL.md.

        Raises:
            CatalogError: a record's shape is wrong (see the module docstring).
        """
        builder = self._builder
        records, files, learned, dirs = _read_records(document, known)
        # The builder keeps its verdicts by SKILL.md digest between checks: one made from what
        # an earlier document said about a digest is not kept when this one says otherwise. So
        # every published entry's frontmatter is the one its record states (frozen), and only
        # the files remain to be compared below.
        old = self._learned
        if old and any(old.get(digest, parsed) != parsed for digest, parsed in learned.items()):
            builder = self._builder = CatalogBuilder(scheme=builder.scheme, limits=builder.limits)
        self._learned = learned
        builder.learn(learned)
        snapshot = RootSnapshot(
            files=[SnapshotFile(path, size, digest) for path, (size, digest) in files]
        )
        built = builder.build([snapshot])
        builder.parsed_for(learned)  # keep what is still used
        published: list[PublishedSkill] = []
        omitted = [o for o in built.omitted if o.reason != _UNPUBLISHED]
        said = {item.get("uri") for item in document.omitted}  # the publisher's own reasons
        omitted += [
            replace(o, code=OmitCode.REFUSED)
            for o in built.omitted
            if o.reason == _UNPUBLISHED and o.uri not in said
        ]
        for skill in built.skills:
            record = records.get(skill.uri)
            if record is None:  # a SKILL.md with no record, whose bytes another record states
                if skill.uri not in said:
                    omitted.append(
                        OmittedSkill(
                            root=skill.root,
                            path=skill.folder,
                            uri=skill.uri,
                            code=OmitCode.REFUSED,
                            reason=_UNPUBLISHED,
                        )
                    )
                continue
            if not _same_files(skill, record):
                omitted.append(
                    OmittedSkill(
                        root=skill.root,
                        path=skill.folder,
                        uri=skill.uri,
                        code=OmitCode.INVALID,
                        reason="the published entry is not the entry its files and frontmatter "
                        "make (published by another version, or edited by hand)",
                    )
                )
            else:
                published.append(skill)
        omitted.extend(_publisher_omitted(document.omitted))
        catalog = Catalog(
            skills=tuple(published),
            omitted=tuple(omitted),
            problems=built.problems,
            skipped=built.skipped,
        )
        served = {skill.uri for skill in published}
        return catalog, {uri: extra for uri, extra in dirs.items() if uri in served}


@final
@dataclass(frozen=True, slots=True)
class _Quick:
    """What :meth:`CatalogChecker._quick` found: the skills it published (in record order, and
    their URIs), their empty folders, the records left to the builder, and the frontmatter the
    quick records give their SKILL.md by digest."""

    published: list[PublishedSkill]
    uris: list[str]
    dirs: dict[str, tuple[str, ...]]
    others: list[Mapping[str, Any]]
    known: dict[str, Any]


_uri_of: Final = operator.attrgetter("uri")
_PLAIN_URIS: dict[str, re.Pattern[str]] = {}


def _plain_skill_uri(scheme: str) -> re.Pattern[str]:
    """``<scheme>://<folder>/SKILL.md`` whose folder's every name is its own encoding (group 1;
    names with a ``.`` are looked at by :func:`~skills_core.server.paths.split_uri`)."""
    pattern = _PLAIN_URIS.get(scheme)
    if pattern is None:
        pattern = _PLAIN_URIS[scheme] = re.compile(
            re.escape(scheme + "://")
            + r"([A-Za-z0-9\-_~!$&'()*+,;=]+(?:/[A-Za-z0-9\-_~!$&'()*+,;=:@]+)*)/SKILL\.md"
        )
    return pattern


def _quick_skill_md(resources: object, uri: str) -> str | None:
    """The digest of the SKILL.md an entry's first resource is, if it is (else None)."""
    if type(resources) is not list or not resources:
        return None
    first = resources[0]
    if type(first) is not dict or first.get("uri") != uri:
        return None
    digest = first.get("digest")
    return digest if is_valid_digest(digest) else None


def _quick_files(resources: object, uri: str, limits: Limits) -> tuple[str, bool] | None:
    """``(SKILL.md digest, whether another file is a SKILL.md)`` of a quick record's resources,
    or None when they are not as the builder makes them for the skill of ``uri`` alone: each
    exactly ``uri``, ``digest`` and ``size``, URIs canonical and inside the skill, SKILL.md first
    and then by path, within the limits, no two paths colliding (see
    :meth:`CatalogChecker._quick`)."""
    if type(resources) is not list or not resources or len(resources) > limits.max_resources:
        return None
    digest = _DIGEST_RE.fullmatch  # is_valid_digest() of a string
    first = resources[0]
    if type(first) is not dict or first.keys() != _RESOURCE_KEYS or first["uri"] != uri:
        return None
    skill_md, total = first["digest"], first["size"]
    if type(total) is not int or total < 0 or type(skill_md) is not str or not digest(skill_md):
        return None
    if len(resources) == 1:
        return (skill_md, False) if total <= limits.max_total_bytes else None
    root = uri[: -len(SKILL_MD)]
    start = len(root)
    paths = [SKILL_MD]
    previous = ""
    nested = False
    plain = _PLAIN_PATH_RE.fullmatch
    for resource in resources[1:]:
        if type(resource) is not dict or resource.keys() != _RESOURCE_KEYS:
            return None
        file_uri, size = resource["uri"], resource["size"]
        file_digest = resource["digest"]
        if type(size) is not int or size < 0 or type(file_digest) is not str:
            return None
        if not digest(file_digest):
            return None
        total += size
        if type(file_uri) is not str or not file_uri.startswith(root):
            return None
        below = file_uri[start:]
        if plain(below) is None or below[0] == "." or "/." in below:
            names = [decode_segment(segment) for segment in below.split("/")]
            if None in names:
                return None
            below = "/".join(cast("list[str]", names))
        if below <= previous or below == SKILL_MD:
            return None
        nested = nested or below.endswith(_SKILL_MD_SUFFIX)
        previous = below
        paths.append(below)
    if total > limits.max_total_bytes or (
        _may_collide(paths) and _path_collision(paths) is not None
    ):
        return None
    return skill_md, nested


def _may_collide(paths: list[str]) -> bool:
    """False when no two of ``paths`` can name one file on a case-insensitive, normalising
    filesystem (all ASCII, distinct when lowercased, none lowercased a folder of another: what
    :func:`~skills_core.server._rules.path_collision` looks for, whose key of an ASCII path is
    the path lowercased); True leaves the answer to path_collision."""
    text = "\0".join(paths)
    if not text.isascii():
        return True
    keys = text.lower().split("\0")
    seen = set(keys)
    if len(seen) != len(keys):
        return True
    for key in keys:
        slash = key.find("/")
        while slash != -1:
            if key[:slash] in seen:
                return True
            slash = key.find("/", slash + 1)
    return False


def _judged(frontmatter: dict[str, Any], name: str) -> tuple[Finding, ...] | None:
    """The findings of the builder's verdict on ``frontmatter`` in a folder called ``name``
    (:func:`~skills_core.server._rules.judge_parsed`), or None when it would not publish it.

    The common case is judge_parsed's own first one (the same calls), without making the frozen
    frontmatter (the skill is kept encoded); any other case goes to judge_parsed."""
    if frontmatter.get("name") == name:
        findings = validate_frontmatter(frontmatter, directory_name=name)
        if (
            not findings
            and is_valid_skill_name(name)
            and isinstance(frontmatter.get("description"), str)
        ):
            return ()
    verdict = judge_parsed(frontmatter, name)
    return None if verdict.frontmatter is None else verdict.findings


def _entry_of(
    root: int, folder: str, scheme: bytes, encoded_entry: bytes
) -> tuple[SkillEntry, Mapping[str, str]]:
    """The entry and files of a skill :meth:`CatalogChecker._quick` published: what the
    builder makes of it, from the entry text it checked (``scheme`` is the checker's)."""
    entry = json.loads(encoded_entry)
    uri: str = entry["uri"]
    name = scheme.decode()
    root_uri = uri[: -len(_SKILL_MD_SUFFIX)]
    resources = tuple(
        [unchecked_resource(r["uri"], r["digest"], r["size"]) for r in entry["resources"]]
    )
    start = len(root_uri) + 1
    files = {uri: SKILL_MD}
    for resource in resources[1:]:
        below = resource.uri[start:]
        files[resource.uri] = "/".join(
            [cast("str", decode_segment(segment)) for segment in below.split("/")]
        )
    skill = SkillURI(uri, name, root_uri[len(name) + 3 :])
    made = unchecked_entry(
        skill=skill, frontmatter=freeze_parsed(entry["frontmatter"]), resources=resources
    )
    return made, MappingProxyType(files)


#: What a nested SKILL.md without a record of its own is judged to be.
_UNPUBLISHED: Final = "SKILL.md is not published in the catalog (the publisher left it out)"
#: The members of an entry and of a resource as the builder makes them (no ``extra``).
_ENTRY_KEYS: Final = frozenset(("uri", "frontmatter", "resources"))
_RESOURCE_KEYS: Final = frozenset(("uri", "digest", "size"))
#: A resource URI's path below its skill whose every segment is its own encoding (no ``%``,
#: only characters a segment carries raw; ``.`` and ``..`` segments are looked at separately).
#: A digest as :func:`~skills_core.digest.is_valid_digest` accepts it.
_DIGEST_RE: Final = re.compile(r"sha256:[0-9a-f]{64}")
_PLAIN_PATH_RE: Final = re.compile(
    r"[A-Za-z0-9\-._~!$&'()*+,;=:@]+(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@]+)*"
)


@final
@dataclass(frozen=True, slots=True)
class _Record:
    """One record as read: its resources in order (``(uri, digest, size)`` each), and whether
    its entry and resources have exactly the members the builder makes."""

    resources: tuple[tuple[str, str, int], ...]
    plain: bool


def _same_files(skill: PublishedSkill, record: _Record) -> bool:
    """Whether the entry the builder made for ``skill`` is the record's.

    The URI is the record's (the builder found the skill by it) and so is the frontmatter (see
    :meth:`CatalogChecker.state`); this compares the rest: the members, and every resource in
    order.
    """
    if not record.plain:
        return False
    resources = skill.entry.resources
    stated = record.resources
    if isinstance(resources, str) or len(resources) != len(stated):
        return False
    for resource, (uri, digest, size) in zip(resources, stated, strict=True):
        if resource.uri != uri or resource.digest != digest or resource.size != size:
            return False
    return True


def _read_records(
    document: CatalogDocument,
    elsewhere: Mapping[str, ParsedSkillMd] | None = None,
) -> tuple[
    dict[str, _Record],
    list[tuple[str, tuple[int, str]]],
    dict[str, ParsedSkillMd],
    dict[str, tuple[str, ...]],
]:
    """Read a document's records, or raise CatalogError.

    Returns:
        ``(records by SKILL.md URI, (path, (size, digest)) of every file, what the builder is to
        learn by SKILL.md digest, empty folders by URI)``. The builder learns each record's
        frontmatter, and "not published" for a SKILL.md below a published skill that has no
        record of its own (a nested skill the publisher left out): never a verdict from bytes
        nobody has seen. ``elsewhere`` is what other records (not in ``document``) give their
        SKILL.md: a nested SKILL.md of the same bytes is judged by it, and a record may not give
        one another frontmatter.
    """
    elsewhere = elsewhere or {}
    files: dict[str, tuple[int, str]] = {}
    learned: dict[str, ParsedSkillMd] = {}
    records: dict[str, _Record] = {}
    dirs: dict[str, tuple[str, ...]] = {}
    nested: list[str] = []  # digests of every SKILL.md among the files
    prefix = document.scheme + "://"
    for record in document.skills:
        entry = record.get("entry")
        if not isinstance(entry, dict):
            raise CatalogError("a record of the catalog has no entry object")
        uri, folder = _skill_folder(entry.get("uri"), prefix)
        if uri in records:
            raise CatalogError(f"two records of the catalog are for {uri}")
        root = uri[: -len(_SKILL_MD_SUFFIX)] + "/"
        resources = entry.get("resources")
        if not isinstance(resources, list):
            raise CatalogError(f"the entry of {uri} has no list of resources")
        skill_md_path = folder + _SKILL_MD_SUFFIX
        skill_md: str | None = None
        plain = entry.keys() == _ENTRY_KEYS
        stated: list[tuple[str, str, int]] = []
        for resource in resources:
            path, size, digest = _resource(resource, root, folder, uri)
            stated.append((resource["uri"], digest, size))
            plain = plain and resource.keys() == _RESOURCE_KEYS
            known = files.setdefault(path, (size, digest))
            if known[0] != size or known[1] != digest:
                raise CatalogError(f"two records of the catalog disagree about {path}")
            if path.endswith(_SKILL_MD_SUFFIX):
                nested.append(digest)
                if path == skill_md_path:
                    skill_md = digest
        frontmatter = entry.get("frontmatter")
        if skill_md is None or not isinstance(frontmatter, dict):
            raise CatalogError(f"the entry of {uri} has no SKILL.md or no frontmatter object")
        if (
            learned.setdefault(skill_md, frontmatter) != frontmatter
            or elsewhere.get(skill_md, frontmatter) != frontmatter
        ):
            raise CatalogError(f"two records give one SKILL.md two frontmatters ({uri})")
        records[uri] = _Record(tuple(stated), plain)
        extra = record.get("dirs", [])
        if not isinstance(extra, list) or not all(_clean(d) for d in extra):
            raise CatalogError(f"the folders listed for {uri} are not clean relative paths")
        if extra:
            dirs[uri] = tuple(extra)
    for digest in nested:
        learned.setdefault(digest, elsewhere.get(digest, _UNPUBLISHED))
    return records, list(files.items()), learned, dirs


def _skill_folder(uri: object, prefix: str) -> tuple[str, str]:
    """``(uri, folder)`` of a record's SKILL.md URI, or CatalogError."""
    split = split_uri(uri) if isinstance(uri, str) else None
    if (
        split is None
        or not isinstance(uri, str)
        or not uri.startswith(prefix)
        or len(split[1]) < 2
        or split[1][-1] != SKILL_MD
    ):
        raise CatalogError(f"a record's entry URI is not a canonical SKILL.md URI: {uri!r:.200}")
    return uri, "/".join(split[1][:-1])


def _resource(resource: object, root: str, folder: str, uri: str) -> tuple[str, int, str]:
    """``(path, size, digest)`` of one resource of the entry of ``uri``, or CatalogError."""
    if not isinstance(resource, dict):
        raise CatalogError(f"a resource of {uri} is not an object")
    file_uri, size, digest = resource.get("uri"), resource.get("size"), resource.get("digest")
    if (
        not isinstance(file_uri, str)
        or not file_uri.startswith(root)
        or type(size) is not int
        or size < 0
        or not is_valid_digest(digest)
    ):
        raise CatalogError(f"a resource of {uri} is not a URI inside it with a size and a digest")
    assert isinstance(digest, str)
    below = file_uri[len(root) :]
    # The common case: every segment is its own encoding, as decode_segment() would find.
    if (
        _PLAIN_PATH_RE.fullmatch(below) is not None
        and not below.startswith(".")
        and "/." not in below
    ):
        return f"{folder}/{below}", size, digest
    names = []
    for segment in below.split("/"):
        name = decode_segment(segment)
        if name is None:
            raise CatalogError(f"a resource URI of {uri} is not canonical: {file_uri!r:.200}")
        names.append(name)
    return folder + "/" + "/".join(names), size, digest


def _clean(path: object) -> bool:
    return (
        isinstance(path, str)
        and bool(path)
        and all(name not in ("", ".", "..") and "\0" not in name for name in path.split("/"))
    )


def _publisher_omitted(items: Sequence[Mapping[str, Any]]) -> list[OmittedSkill]:
    """The document's ``omitted`` list as omitted skills (items of another shape are ignored)."""
    out: list[OmittedSkill] = []
    codes = {str(code): code for code in OmitCode}
    for item in items:
        path, uri, code, reason = (item.get(k) for k in ("path", "uri", "code", "reason"))
        if (
            isinstance(path, str)
            and (uri is None or isinstance(uri, str))
            and isinstance(code, str)
            and code in codes
            and isinstance(reason, str)
        ):
            out.append(OmittedSkill(root=0, path=path, uri=uri, code=codes[code], reason=reason))
    return out
