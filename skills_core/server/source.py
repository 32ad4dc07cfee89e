"""Where a server's skills come from: the :class:`SkillSource` protocol (public API), and two
ready-made bases for it.

Theory of operation
-------------------
A :class:`~skills_core.server.handler.SkillsServer` reads skills through one object, its
*source*, and never touches storage itself. A source is any object with the five methods of
:class:`SkillSource` (a structural protocol: no base class is needed). This library has four:
:class:`MemorySource`, :class:`~skills_core.server.filesystem.FilesystemSource`, and for object
stores and git repositories :class:`~skills_core.sources.store.StoreSource`. Write your own for
storage of another kind (a database, a CMS), preferably on :class:`TreeSource` (below).

**What each method must do.**

* :meth:`~SkillSource.scan`: the whole catalog (a :class:`~skills_core.server.catalog.Catalog`:
  the published skills sorted by URI, and those left out with a reason). Called once when the
  server is made and on every ``refresh()``.
* :meth:`~SkillSource.poll`: a new catalog when skills may have been added or removed since the
  last one returned, else None. Called at the start of every ``skills/list`` and
  ``resources/list`` with the server's ``ttlMs``: a skill added or removed must show up in
  listings within that time, and it must be cheap when nothing changed (the filesystem source
  looks at most once per ``ttlMs``, at the folders and each ``SKILL.md``'s stat signature only;
  the store source only swaps in a catalog its own thread checked).
* :meth:`~SkillSource.recheck`: one skill *as it is now*, for ``skills/get`` (the spec's
  ``credit-note.md`` flow: a file added to a served folder shows in the next ``skills/get``
  without a full scan). The answer replaces that skill in later listings too.
* :meth:`~SkillSource.read`: one file's bytes now, for ``resources/read``; None for a missing
  file, a folder, or anything the source will not serve.
* :meth:`~SkillSource.list_directory`: one folder's direct children now, for
  ``resources/directory/read``; None when it is not a folder.

A source may also have ``read_blocks(skill, file_path) -> bool``, True when :meth:`read` would
wait on a network (the store source: bytes not in its memory). A server driven by an event loop
then reads that file in a worker thread whatever its size.

**What the server guarantees a source.** Paths are decoded and clean: raw names, ``/``-separated,
relative to the skill's folder (``""`` is the folder itself), no empty, ``.`` or ``..`` segment.
The handler decodes client URIs with :mod:`skills_core.server.paths`, so anything that does not
decode canonically never reaches the source, and a ``skill`` passed to :meth:`read` and
:meth:`list_directory` is one the source itself returned (from :meth:`scan`, :meth:`poll` or
:meth:`recheck`). A catalog returned is served whole: listings never mix two of them. An
exception a method raises is never shown to a client: the request it served is answered
``-32603`` (Internal error) and the server carries on with the catalog it had (an exception
from the first :meth:`scan` propagates out of the server's constructor).

**Threads.** The server calls :meth:`scan`, :meth:`poll`, :meth:`recheck` and ``read_blocks``
from the thread (or event loop) that drives it, one call at a time. :meth:`read` and
:meth:`list_directory` may also be called from worker threads, at the same time as each other
and as the calls above: an ASGI server, and the asyncio and trio adapters, read large files
(and, with ``read_blocks``, slow ones) in a worker thread (a
:class:`~skills_core.server.handler.PendingRead`). A source must allow that: keep what those two
use safe to share (a connection per thread, or one behind a lock). The sources of this library
do.

**Building one.** :class:`TreeSource` implements all five methods on top of six small
primitives per root (snapshot a folder, test for a skill folder, read a file, list a folder,
count roots, tell whether skill folders changed) and the pure
:class:`~skills_core.server.catalog.CatalogBuilder`, which applies every rule a folder gets
(names, limits, the Agent Skills rules on the frontmatter, file names, path collisions, nested
skills): such a source cannot publish anything ``skills-core validate`` would refuse. It adds
dynamic skills. Its ``_read_file`` and ``_list_dir`` primitives are what :meth:`read` and
:meth:`list_directory` call, from worker threads too. :class:`MemorySource` implements the
primitives over ``{path: bytes}`` dictionaries (tests, embedding, generated catalogs), with no
clock and no randomness; :class:`~skills_core.server.filesystem.FilesystemSource` implements them
over real folders; ``examples/custom_source.py`` over SQLite.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, final

from ..entry import DEFAULT_LIMITS, Limits
from ..errors import URIError
from ..spec import SKILL_MD
from ..uri import SkillURI
from .catalog import Catalog, CatalogBuilder
from .model import (
    DynamicSkill,
    OmitCode,
    OmittedSkill,
    PublishedSkill,
    RootSnapshot,
    SnapshotFile,
    check_relative_path,
)
from .paths import DEFAULT_SCHEME, encode_segment, split_uri

__all__ = ["SkillSource", "TreeSource", "MemorySource"]

_SKILL_MD_SUFFIX = "/" + SKILL_MD


class SkillSource(Protocol):
    """What the request handler needs from a store of skills (public API; see the module
    docstring for what the server guarantees and which methods may run in worker threads)."""

    def scan(self) -> Catalog:
        """Return the catalog of every skill, as the files are now.

        Called when the server is made and on ``refresh()``, from the thread that drives the
        server. The published skills are sorted by URI; every skill not published is in
        ``omitted`` with a code and a reason.
        """
        ...

    def poll(self, max_age_ms: int) -> Catalog | None:
        """Return a new catalog (a :meth:`scan`) when skills may have been added or removed.

        Return None when nothing changed, or when the last look is younger than ``max_age_ms``
        (a source may look less often, never more: it is asked on every listing request, from
        the thread that drives the server, so it must be cheap when nothing changed).
        """
        ...

    def recheck(self, uri: str) -> PublishedSkill | OmittedSkill | None:
        """Return the skill whose SKILL.md URI is ``uri`` as it is now, looking at that skill only.

        Returns None when no folder (or dynamic skill) claims ``uri``. Called for ``skills/get``
        from the thread that drives the server; the answer replaces the skill in listings.
        """
        ...

    def read(self, skill: PublishedSkill, file_path: str) -> bytes | None:
        """Return the current bytes of ``file_path`` (relative to the skill, raw names), or None.

        None covers a missing file, a directory, and anything the source refuses to serve.
        ``skill`` is one this source returned; ``file_path`` is clean. May be called from worker
        threads, concurrently with any other method.
        """
        ...

    def list_directory(
        self, skill: PublishedSkill, dir_path: str
    ) -> Sequence[tuple[str, bool]] | None:
        """Return ``(name, is_dir)`` for each servable direct child of ``dir_path``, sorted by name.

        ``dir_path`` is relative to the skill (``""`` is its root). None when it is not a folder.
        May be called from worker threads, concurrently with any other method (a read that
        found nothing asks whether the path is a folder).
        """
        ...


class TreeSource(ABC):
    """A :class:`SkillSource` over roots of folders, plus dynamic skills.

    Subclasses implement the primitives (methods starting with ``_``); this class does the rest.
    Paths given to the primitives are relative to a root, ``/``-separated, raw and clean
    (``""`` is the root itself).
    """

    def __init__(
        self,
        *,
        scheme: str = DEFAULT_SCHEME,
        limits: Limits = DEFAULT_LIMITS,
        dynamic: Iterable[DynamicSkill] = (),
    ) -> None:
        """Publish ``<scheme>://`` URIs, enforce ``limits`` and serve ``dynamic`` skills too.

        Raises:
            ValueError: ``scheme`` is not a scheme name, or a dynamic skill is added twice.
            URIError: a dynamic skill's URI is not a valid SKILL.md URI.
        """
        self._builder = CatalogBuilder(scheme=scheme, limits=limits)
        self._dynamic: dict[str, DynamicSkill] = {}
        self._collisions: dict[str, OmittedSkill] = {}
        # Set by every change this object knows of (dynamic skills, in-memory edits); the next
        # poll() then re-scans whatever the primitives say.
        self._stale = False
        for skill in dynamic:
            self.add_dynamic(skill)

    @property
    def scheme(self) -> str:
        """The URI scheme of the skills found in the roots."""
        return self._builder.scheme

    def add_dynamic(self, skill: DynamicSkill) -> None:
        """Serve ``skill`` from the next :meth:`scan` on (or at once, through :meth:`recheck`).

        Raises:
            URIError: its URI is not a valid SKILL.md URI.
            ValueError: its URI is not canonical (see :mod:`skills_core.server.paths`), or a
                dynamic skill with that URI is already registered.
        """
        SkillURI.parse(skill.uri)
        if split_uri(skill.uri) is None:
            raise ValueError(
                f"{skill.uri} is not in canonical form (percent-encode with uppercase hex only "
                "what a path segment cannot carry, and ':' and '@' in the first segment)"
            )
        if skill.uri in self._dynamic:
            raise ValueError(f"a dynamic skill is already registered at {skill.uri}")
        self._dynamic[skill.uri] = skill
        self._stale = True

    def remove_dynamic(self, uri: str) -> None:
        """Stop serving the dynamic skill at ``uri``.

        Raises:
            KeyError: no dynamic skill is registered at ``uri``.
        """
        del self._dynamic[uri]
        self._stale = True

    # -- primitives -----------------------------------------------------------------------------

    @abstractmethod
    def _root_count(self) -> int:
        """How many roots there are."""

    @abstractmethod
    def _snapshot(self, root: int, folder: str) -> RootSnapshot:
        """Snapshot every file below ``folder`` (``""``: the whole root), paths relative to the root.

        Files below folders that hold a ``SKILL.md`` need digests (and SKILL.md files their
        bytes); files elsewhere may be left out.
        """

    @abstractmethod
    def _is_skill_folder(self, root: int, folder: str) -> bool:
        """Whether ``folder/SKILL.md`` is a servable regular file."""

    @abstractmethod
    def _read_file(self, root: int, path: str) -> bytes | None:
        """The bytes of the servable regular file at ``path``, or None.

        Called by :meth:`read`, so from worker threads too (see the module docstring).
        """

    @abstractmethod
    def _list_dir(self, root: int, path: str) -> Sequence[tuple[str, bool]] | None:
        """The servable regular files and folders directly in ``path``, or None if not a folder.

        Called by :meth:`list_directory`, so from worker threads too (see the module docstring).
        """

    @abstractmethod
    def _changed(self, max_age_ms: int) -> bool:
        """Whether skill folders may have appeared, vanished or changed their SKILL.md since the
        last :meth:`scan` (False when the last look is younger than ``max_age_ms``)."""

    # -- SkillSource ----------------------------------------------------------------------------

    def scan(self) -> Catalog:
        """Return the catalog of every root and dynamic skill (a full walk)."""
        self._stale = False
        snapshots = [self._snapshot(index, "") for index in range(self._root_count())]
        catalog = self._builder.build(snapshots, dynamic=tuple(self._dynamic.values()))
        # Collisions found by a full walk (a skill inside another root's skill, say) stand until
        # the next scan: a re-check of one skill cannot see everything below it elsewhere.
        self._collisions = {
            o.uri: o for o in catalog.omitted if o.code is OmitCode.URI_COLLISION and o.uri
        }
        return catalog

    def poll(self, max_age_ms: int) -> Catalog | None:
        """Return a new :meth:`scan` when skills may have been added or removed, else None.

        Known changes (dynamic skills added or removed, in-memory edits) re-scan at once; folders
        are looked at as the source's ``_changed`` primitive decides (see :class:`SkillSource`).
        """
        if self._stale or self._changed(max_age_ms):
            return self.scan()
        return None

    def recheck(self, uri: str) -> PublishedSkill | OmittedSkill | None:
        """Return the skill at ``uri`` as it is now; walks that skill's folder only.

        Besides the skill itself, it looks for the same folder in other roots, for skills of
        other roots enclosing it, and for dynamic skills sharing its namespace (any of which
        leaves it out, as in a full scan), and remembers the collisions the last scan found.
        """
        known = self._collisions.get(uri)
        if known is not None:
            return known
        dynamic = self._dynamic.get(uri)
        if dynamic is not None:
            conflicts = self._conflicts(uri, origin=None)
            if conflicts:
                return _collision(None, uri, uri, conflicts)
            return self._builder.build_dynamic(dynamic)
        folder = self._builder.folder_of(uri)
        if folder is None:
            return None
        origins = [i for i in range(self._root_count()) if self._is_skill_folder(i, folder)]
        if not origins:
            return None
        root = origins[0]
        conflicts = [f"root {index} has the same skill path" for index in origins[1:]]
        conflicts += self._conflicts(uri, origin=root)
        if conflicts:
            return _collision(root, folder, uri, conflicts)
        return self._builder.build_skill(root, folder, self._snapshot(root, folder))

    def _conflicts(self, uri: str, *, origin: int | None) -> list[str]:
        """Skills of other origins whose namespace encloses ``uri``'s, or (dynamic) overlaps it."""
        conflicts: list[str] = []
        root_uri = uri[: -len(_SKILL_MD_SUFFIX)]
        for other in self._dynamic:
            other_root = other[: -len(_SKILL_MD_SUFFIX)]
            if other != uri and (
                (root_uri + "/").startswith(other_root + "/")
                or (other_root + "/").startswith(root_uri + "/")
            ):
                conflicts.append(f"a dynamic skill overlaps it ({other})")
        folder = self._builder.folder_of(uri)
        if folder is None:
            return conflicts
        names = folder.split("/")
        for depth in range(1, len(names) + (origin is None)):
            ancestor = "/".join(names[:depth])
            conflicts.extend(
                f"root {index} has an enclosing skill ({ancestor})"
                if depth < len(names)
                else f"root {index} has the same skill path"
                for index in range(self._root_count())
                if index != origin and self._is_skill_folder(index, ancestor)
            )
        return conflicts

    def read(self, skill: PublishedSkill, file_path: str) -> bytes | None:
        """Return the current bytes of one file of ``skill``, or None."""
        if skill.root is None:
            dynamic = self._dynamic.get(skill.uri)
            return None if dynamic is None else dynamic.read(file_path)
        return self._read_file(skill.root, f"{skill.folder}/{file_path}")

    def list_directory(
        self, skill: PublishedSkill, dir_path: str
    ) -> Sequence[tuple[str, bool]] | None:
        """Return the servable children of one folder of ``skill``, sorted by name, or None."""
        if skill.root is None:
            dynamic = self._dynamic.get(skill.uri)
            children = None if dynamic is None else dynamic.list_directory(dir_path)
        else:
            path = f"{skill.folder}/{dir_path}" if dir_path else skill.folder
            children = self._list_dir(skill.root, path)
        if children is None:
            return None
        return sorted((name, is_dir) for name, is_dir in children if _nameable(name))


def _collision(root: int | None, path: str, uri: str, conflicts: list[str]) -> OmittedSkill:
    return OmittedSkill(
        root=root,
        path=path,
        uri=uri,
        code=OmitCode.URI_COLLISION,
        reason="; ".join(conflicts) + "; neither is served",
    )


def _is_skill_md(path: str) -> bool:
    return path == SKILL_MD or path.endswith(_SKILL_MD_SUFFIX)


def _nameable(name: str) -> bool:
    """Whether a child can be named by a URI (others are never listed or served)."""
    try:
        encode_segment(name)
    except URIError:
        return False
    return True


@final
class MemorySource(TreeSource):
    """A mutable in-memory tree of skills: for tests, embedding, and generated catalogs.

    Each root is a ``{relative path: bytes}`` mapping; folders exist when a file is below them or
    when made with :meth:`mkdir`, as on a filesystem. Edits show up in ``skills/get``,
    ``resources/read`` and directory reads at once. A skill added or removed (a ``SKILL.md``
    written or deleted) shows up in listings from the next ``skills/list`` or ``resources/list``
    on, as with :class:`~skills_core.server.filesystem.FilesystemSource` (:meth:`poll` re-scans
    then; no clock is involved); other edits show in listings after ``refresh()``.

    Example:
        >>> source = MemorySource({"hello/SKILL.md": b"---\\nname: hello\\ndescription: Hi\\n---\\n"})
        >>> [s.uri for s in source.scan().skills]
        ['skill://hello/SKILL.md']
    """

    def __init__(
        self,
        *roots: Mapping[str, bytes],
        scheme: str = DEFAULT_SCHEME,
        limits: Limits = DEFAULT_LIMITS,
        dynamic: Iterable[DynamicSkill] = (),
    ) -> None:
        """Start with one root per mapping given (one empty root when none is).

        Raises:
            ValueError: a path is not clean, or is both a file and a folder.
        """
        super().__init__(scheme=scheme, limits=limits, dynamic=dynamic)
        self._files: list[dict[str, SnapshotFile]] = []
        self._bytes: list[dict[str, bytes]] = []
        self._children: list[dict[str, dict[str, bool]]] = []
        for files in roots or ({},):
            self._files.append({})
            self._bytes.append({})
            self._children.append({"": {}})
            for path, data in files.items():
                self.write(path, data, root=len(self._files) - 1)

    # -- editing --------------------------------------------------------------------------------

    def write(self, path: str, data: bytes, *, root: int = 0) -> None:
        """Create or replace the file at ``path`` (folders above it are made as needed).

        Raises:
            ValueError: ``path`` is not clean, or it or a folder above it is the other kind.
            IndexError: no such root.
        """
        check_relative_path(path)
        children = self._children[root]
        if path in children:
            raise ValueError(f"{path!r} is a folder")
        self._make_parents(root, path)
        data = bytes(data)
        self._files[root][path] = SnapshotFile.of(path, data)
        self._bytes[root][path] = data
        self._stale = self._stale or _is_skill_md(path)

    def mkdir(self, path: str, *, root: int = 0) -> None:
        """Make an (empty) folder at ``path`` and the folders above it.

        Raises:
            ValueError: ``path`` is not clean, or it or a folder above it is a file.
            IndexError: no such root.
        """
        check_relative_path(path)
        if path in self._files[root]:
            raise ValueError(f"{path!r} is a file")
        self._make_parents(root, path)
        parent, _, name = path.rpartition("/")
        self._children[root][parent][name] = True
        self._children[root].setdefault(path, {})

    def delete(self, path: str, *, root: int = 0) -> None:
        """Delete the file at ``path``, or the folder at ``path`` with everything in it.

        Raises:
            KeyError: nothing is at ``path``.
            ValueError: ``path`` is not clean.
            IndexError: no such root.
        """
        check_relative_path(path)
        files, children = self._files[root], self._children[root]
        parent, _, name = path.rpartition("/")
        if path in files:
            gone_files = [path]
        elif path in children:
            prefix = path + "/"
            gone_files = [p for p in files if p.startswith(prefix)]
            for gone in [p for p in children if p == path or p.startswith(prefix)]:
                del children[gone]
        else:
            raise KeyError(path)
        for gone in gone_files:
            del files[gone]
            del self._bytes[root][gone]
        del children[parent][name]
        self._stale = self._stale or any(map(_is_skill_md, gone_files))

    def _make_parents(self, root: int, path: str) -> None:
        files, children = self._files[root], self._children[root]
        parent = ""
        for name in path.split("/")[:-1]:
            folder = f"{parent}/{name}" if parent else name
            if folder in files:
                raise ValueError(f"{folder!r} is a file")
            children[parent][name] = True
            children.setdefault(folder, {})
            parent = folder
        parent, _, name = path.rpartition("/")
        children[parent].setdefault(name, False)

    # -- primitives -----------------------------------------------------------------------------

    def _root_count(self) -> int:
        return len(self._files)

    def _snapshot(self, root: int, folder: str) -> RootSnapshot:
        files = self._files[root]
        if not folder:
            return RootSnapshot(files=list(files.values()))
        prefix = folder + "/"
        return RootSnapshot(files=[f for path, f in files.items() if path.startswith(prefix)])

    def _is_skill_folder(self, root: int, folder: str) -> bool:
        return folder + _SKILL_MD_SUFFIX in self._files[root]

    def _read_file(self, root: int, path: str) -> bytes | None:
        return self._bytes[root].get(path)

    def _list_dir(self, root: int, path: str) -> Sequence[tuple[str, bool]] | None:
        children = self._children[root].get(path)
        return None if children is None else list(children.items())

    def _changed(self, max_age_ms: int) -> bool:
        return False  # writing or deleting a SKILL.md sets _stale
