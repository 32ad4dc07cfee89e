"""The server's only I/O: skills from folders on disk.

Theory of operation
-------------------
:class:`FilesystemSource` implements the primitives of :class:`~skills_core.server.source.TreeSource`
over real folders; everything else (which folders are skills, their URIs, entries and omissions)
is the pure catalog code.

**Nothing outside a root is ever reached.** Every walk and every read starts from a file
descriptor of the root (resolved once, when the source is made) and goes down one name at a time
with ``openat``-style calls that carry ``O_NOFOLLOW``: a symbolic link anywhere on the way, to a
file or a folder, makes the open fail instead of being followed (WG-09). Names are never ``.`` or
``..`` (the URI decoder refuses them, and directory listings never contain them). So the kernel,
not a string comparison of resolved paths, guarantees that every file opened is below the root,
and a folder swapped for a link between a check and a use (TOCTOU) is refused as well. Files are
opened with ``O_NONBLOCK`` and checked with ``fstat`` to be regular before a byte is read, so a FIFO
(which would block) or a device put in a file's place is never read; walks skip them without
opening them at all. Refused entries are reported as
:class:`~skills_core.server.catalog.SourceProblem` values (relative paths only, never an absolute
path or a link target).

**Each byte is read once per scan.** A full scan reads only the files inside skill folders (a
folder is known to be one when its listing holds ``SKILL.md``, before its files are read), each
once, hashing as it reads, and keeps only ``SKILL.md`` bytes. A file larger than the total-size
limit is not read at all: any skill containing it is over the limit anyway. Digests are cached by
``(device, inode, size, mtime, ctime)``; a later scan or the re-check of one skill re-reads only
files whose key changed (and an unchanged ``SKILL.md`` whose verdict the catalog builder no
longer holds). A file modified within a few seconds of being hashed could keep its key
through a second write (timestamps are coarse), so such a "racy" entry is never trusted and gets
re-hashed the next time.

**Ignored names.** VCS metadata, ``__pycache__`` and ``.DS_Store`` (:data:`DEFAULT_IGNORED_NAMES`)
are skipped everywhere, silently: they are neither published nor readable.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, final

from skills_core.entry import DEFAULT_LIMITS, Limits
from skills_core.server.model import (
    DynamicSkill,
    ProblemCode,
    RootSnapshot,
    SnapshotFile,
    SourceProblem,
    new_snapshot_file,
)
from skills_core.server.paths import DEFAULT_SCHEME
from skills_core.server.source import TreeSource
from skills_core.spec import SKILL_MD

__all__ = ["DEFAULT_IGNORED_NAMES", "FilesystemSource"]

#: Names skipped everywhere: version-control metadata, bytecode caches, Finder litter.
DEFAULT_IGNORED_NAMES: Final = frozenset({".git", ".hg", ".svn", "__pycache__", ".DS_Store"})

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: Errors that mean "not there, not a folder, a link, or not ours to read": the entry is not served.
_NOT_SERVED: Final = frozenset(
    {
        errno.ENOENT,
        errno.ENOTDIR,
        errno.ELOOP,
        errno.EISDIR,
        errno.EACCES,
        errno.EPERM,
        errno.EMLINK,
    }
)
#: Read size for large files, and for the end-of-file probe after a small one.
_CHUNK: Final = 1024 * 1024
_PROBE: Final = 64 * 1024
#: How long after its last change a file's stat key is trusted (timestamps are coarse: 2 s on FAT).
_RACY_NS: Final = 3_000_000_000


#: A digest cache entry: (stat key, digest, whether the key may be trusted).
_Cached = tuple[tuple[int, int, int, int, int], str, bool]


class _RefusedError(Exception):
    def __init__(self, code: ProblemCode, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def _stat_key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read_only(fd: int, size: int) -> bytes:
    """Read ``fd`` (a regular file) to the end without hashing: serving needs only the bytes.

    The same end-of-file rule as :func:`_read_fd`: one read when it returns exactly the size
    ``fstat`` reported, otherwise read on until a read returns nothing.
    """
    request = (size if size < _CHUNK else _CHUNK) + 1
    first = os.read(fd, request)
    if len(first) < request and (not first or len(first) == size):
        return first
    parts = [first]
    while chunk := os.read(fd, _CHUNK):
        parts.append(chunk)
    return b"".join(parts)


def _read_fd(fd: int, size: int, keep: bool) -> tuple[int, str, bytes | None]:
    """Read ``fd`` (a regular file) to the end, hashing as it goes; keep the bytes when ``keep``.

    ``size`` (from ``fstat``) only sizes the reads: the file may have changed since, and what is
    read is what is hashed and counted. A read that returns less than it asked for, but exactly
    the ``size`` bytes that ``fstat`` reported, has reached the end of a regular file (the common
    case, one read per file); any other short read is followed by one more, to make sure.
    """
    request = (size if size < _CHUNK else _CHUNK) + 1
    first = os.read(fd, request)
    if len(first) < request:
        tail = os.read(fd, _PROBE) if first and len(first) != size else b""
        if not tail:  # the common case: the whole file in one read
            return (
                len(first),
                "sha256:" + hashlib.sha256(first).hexdigest(),
                first if keep else None,
            )
        first += tail
    hasher = hashlib.sha256(first)
    parts = [first]
    total = len(first)
    while True:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            break
        total += len(chunk)
        hasher.update(chunk)
        if keep:
            parts.append(chunk)
    return total, "sha256:" + hasher.hexdigest(), b"".join(parts) if keep else None


_SYMLINK_REASON: Final = "is a symbolic link; links are never followed or served"
_SPECIAL_REASON: Final = "is not a regular file or folder (a FIFO, socket or device); never opened"


@final
class FilesystemSource(TreeSource):
    """Skills from folders on disk (the server's only I/O).

    Example:
        >>> source = FilesystemSource(["./skills"])  # doctest: +SKIP
        >>> catalog = source.scan()  # doctest: +SKIP
    """

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        *,
        scheme: str = DEFAULT_SCHEME,
        limits: Limits = DEFAULT_LIMITS,
        dynamic: Iterable[DynamicSkill] = (),
        ignore: Iterable[str] = DEFAULT_IGNORED_NAMES,
    ) -> None:
        """Serve the skills found under ``roots`` (each resolved once, now).

        Args:
            roots: Folders to publish; a skill's URI is its path below its root.
            scheme: URI scheme of the published skills (``skill`` by default; URI-01).
            limits: Per-skill limits; over-limit skills are not served (ENTRY-19).
            dynamic: Dynamic skills served alongside.
            ignore: Names skipped everywhere (:data:`DEFAULT_IGNORED_NAMES`).

        Raises:
            NotADirectoryError: a root is not a folder.
            FileNotFoundError: a root does not exist.
            ValueError: ``scheme`` is not a scheme name.
        """
        super().__init__(scheme=scheme, limits=limits, dynamic=dynamic)
        self._roots: list[str] = []
        for root in roots:
            resolved = os.path.realpath(os.fspath(root))
            if not stat.S_ISDIR(os.stat(resolved).st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a folder", os.fspath(root))
            self._roots.append(resolved)
        self._ignore = frozenset(ignore)
        # Per root: {path: digest cache entry}. A full scan starts a new dict holding only the
        # files it saw; a re-check of one skill updates the current one.
        self._caches: list[dict[str, _Cached]] = [{} for _ in self._roots]

    @property
    def roots(self) -> tuple[str, ...]:
        """The roots, resolved."""
        return tuple(self._roots)

    # -- opening, one name at a time --------------------------------------------------------------

    def _open_dir(self, root: int, path: str) -> int | None:
        """Open the folder ``path`` below root ``root`` without following links; None if not one."""
        names = path.split("/") if path else []
        if any(name in self._ignore for name in names):
            return None
        try:
            fd = os.open(self._roots[root], _DIR_FLAGS)
        except OSError as exc:
            if exc.errno in _NOT_SERVED:
                return None
            raise
        try:
            for name in names:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
        except OSError as exc:
            os.close(fd)
            if exc.errno in _NOT_SERVED:
                return None
            raise
        return fd

    # -- primitives -------------------------------------------------------------------------------

    def _root_count(self) -> int:
        return len(self._roots)

    def _is_skill_folder(self, root: int, folder: str) -> bool:
        fd = self._open_dir(root, folder)
        if fd is None:
            return False
        try:
            st = os.stat(SKILL_MD, dir_fd=fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno in _NOT_SERVED:
                return False
            raise
        finally:
            os.close(fd)
        return stat.S_ISREG(st.st_mode)

    def _read_file(self, root: int, path: str) -> bytes | None:
        folder, _, name = path.rpartition("/")
        if name in self._ignore:
            return None
        dir_fd = self._open_dir(root, folder)
        if dir_fd is None:
            return None
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in _NOT_SERVED:
                return None
            raise
        finally:
            os.close(dir_fd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > self._builder.limits.max_total_bytes:
                return None
            return _read_only(fd, st.st_size)
        finally:
            os.close(fd)

    def _list_dir(self, root: int, path: str) -> Sequence[tuple[str, bool]] | None:
        fd = self._open_dir(root, path)
        if fd is None:
            return None
        try:
            with os.scandir(fd) as entries:
                children = [
                    (entry.name, entry.is_dir(follow_symlinks=False))
                    for entry in entries
                    if entry.name not in self._ignore
                    and (
                        entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False)
                    )
                ]
        finally:
            os.close(fd)
        return children

    def _snapshot(self, root: int, folder: str) -> RootSnapshot:
        fd = self._open_dir(root, folder)
        if fd is None:
            return RootSnapshot()
        old = self._caches[root]
        walk = _Walk(root=root, now=time.time_ns(), old=old, new={} if not folder else old)
        # Depth first, one open folder per level: frames are (fd, path, in_skill, subfolders).
        stack: list[tuple[int, str, bool, list[str]]] = []
        try:
            stack.append(self._enter_or_close(walk, fd, folder, False))
            while stack:
                dir_fd, path, in_skill, pending = stack[-1]
                if not pending:
                    stack.pop()
                    os.close(dir_fd)
                    continue
                name = pending.pop()
                child_path = f"{path}/{name}" if path else name
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
                except OSError as exc:
                    walk.problems.append(_problem(root, child_path, exc))
                    continue
                stack.append(self._enter_or_close(walk, child, child_path, in_skill))
        finally:
            for frame in stack:
                os.close(frame[0])
        self._caches[root] = walk.new
        return RootSnapshot(files=walk.files, problems=walk.problems)

    def _enter_or_close(
        self, walk: _Walk, fd: int, path: str, in_skill: bool
    ) -> tuple[int, str, bool, list[str]]:
        """:meth:`_enter`, closing ``fd`` if it fails (once on the stack, the walk closes it)."""
        try:
            return self._enter(walk, fd, path, in_skill)
        except BaseException:
            os.close(fd)
            raise

    def _enter(
        self, walk: _Walk, fd: int, path: str, in_skill: bool
    ) -> tuple[int, str, bool, list[str]]:
        """List one open folder, read its files if it is in a skill; return its stack frame."""
        regular: list[os.DirEntry[str]] = []
        folders: list[str] = []
        ignore = self._ignore
        has_skill_md = False
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    name = entry.name
                    if name in ignore:
                        continue
                    if entry.is_file(follow_symlinks=False):
                        regular.append(entry)
                        if name == SKILL_MD:
                            has_skill_md = True
                    elif entry.is_dir(follow_symlinks=False):
                        folders.append(name)
                    elif entry.is_symlink():
                        walk.refuse(path, name, ProblemCode.SYMLINK, _SYMLINK_REASON)
                    else:
                        walk.refuse(path, name, ProblemCode.SPECIAL_FILE, _SPECIAL_REASON)
        except OSError as exc:
            walk.problems.append(_problem(walk.root, path, exc))
            return fd, path, in_skill, []
        in_skill = in_skill or has_skill_md
        if in_skill:
            files = walk.files
            for entry in regular:
                try:
                    files.append(self._file(walk, fd, entry, path))
                except _RefusedError as refused:
                    walk.refuse(path, entry.name, refused.code, refused.reason)
                except OSError as exc:
                    walk.problems.append(_problem(walk.root, _join(path, entry.name), exc))
        folders.sort(reverse=True)
        return fd, path, in_skill, folders

    def _file(self, walk: _Walk, dir_fd: int, entry: os.DirEntry[str], folder: str) -> SnapshotFile:
        """Size and digest of one regular file (bytes too for SKILL.md), from the cache if valid."""
        name = entry.name
        path = f"{folder}/{name}" if folder else name
        keep = name == SKILL_MD
        cached = walk.old.get(path)
        if cached is not None and cached[2]:
            st = entry.stat(follow_symlinks=False)
            # An unchanged SKILL.md need not be read either when its verdict is cached.
            if _stat_key(st) == cached[0] and (
                not keep or self._builder.knows(cached[1], folder.rpartition("/")[2])
            ):
                walk.new[path] = cached
                return new_snapshot_file(path, st.st_size, cached[1], None)
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _RefusedError(ProblemCode.SPECIAL_FILE, _SPECIAL_REASON)
            if st.st_size > self._builder.limits.max_total_bytes:
                # Any skill holding this file is over the limit and never published: skip the hash.
                return new_snapshot_file(path, st.st_size, "", None)
            size, digest, data = _read_fd(fd, st.st_size, keep)
        finally:
            os.close(fd)
        mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
        trusted = size == st.st_size and walk.now - (mtime if mtime > ctime else ctime) > _RACY_NS
        walk.new[path] = (_stat_key(st), digest, trusted)
        return new_snapshot_file(path, size, digest, data)


@dataclass(slots=True)
class _Walk:
    """What one snapshot accumulates."""

    root: int
    now: int
    old: dict[str, _Cached]
    new: dict[str, _Cached]
    files: list[SnapshotFile] = field(default_factory=list)
    problems: list[SourceProblem] = field(default_factory=list)

    def refuse(self, folder: str, name: str, code: ProblemCode, reason: str) -> None:
        self.problems.append(
            SourceProblem(root=self.root, path=_join(folder, name), code=code, reason=reason)
        )


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _problem(root: int, path: str, exc: OSError) -> SourceProblem:
    reason = os.strerror(exc.errno) if exc.errno is not None else "could not be read"
    return SourceProblem(
        root=root, path=path, code=ProblemCode.UNREADABLE, reason=f"could not be read ({reason})"
    )
