"""Folders walked without following a link: one opened below another name by name, and the look a
poll of the filesystem source takes (every servable ``SKILL.md`` and its stat signature).

Theory of operation: every folder is opened with ``O_NOFOLLOW`` from a descriptor of its parent
(:func:`open_below` goes down several names this way), so a link anywhere on the way fails the
open instead of being followed.

:meth:`~skills_core.server.filesystem.FilesystemSource.poll` asks, at most once per ``ttlMs``,
whether skills came or went, by comparing the ``SKILL.md`` files below a root (with their stat
signatures) to those the last full scan saw; :func:`skill_md_signatures` walks the folders to find
them, opening no file. The walk is depth first and holds one open folder per level, never one
per sibling (a root with more skill folders than the process may open descriptors would otherwise
run out of them). Names are judged as the full scan judges them (the same selection), and no link
is followed (``O_NOFOLLOW``, ``follow_symlinks=False``).

A folder that cannot be opened or listed is passed over, as the full scan passes over it (the
scan reports it, and serves nothing below it), so that the comparison shows only real changes.
Except when the process itself is out of descriptors or memory (:data:`EXHAUSTED`): then the look
says nothing about the tree, and raises rather than be taken for a change.

:class:`Walk` is what one snapshot of the folder source accumulates (files, problems, skipped
entries, the ``SKILL.md`` signatures a poll compares, the digest index's folder records).
"""

from __future__ import annotations

import errno
import hashlib
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from ..spec import SKILL_MD
from .index import SIGNATURE_ROW
from .model import ProblemCode, SkipCode, SkippedEntry, SnapshotFile, SourceProblem

__all__ = [
    "DIR_FLAGS",
    "EXHAUSTED",
    "NOT_SERVED",
    "SPECIAL_REASON",
    "SYMLINK_REASON",
    "Frame",
    "RefusedError",
    "Structure",
    "Walk",
    "join",
    "open_below",
    "problem",
    "skill_md_signatures",
    "structure_digest",
]

#: How folders are opened: never through a link, never inherited by a child process.
DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Errors that mean "not there, not a folder, a link, or not ours to read": the entry is not served.
NOT_SERVED: Final = frozenset(
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
#: Errors that say the process is out of descriptors or memory, not that a folder changed.
EXHAUSTED: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM})
#: Why a walk refuses a link, and a FIFO, socket or device, where it finds one.
SYMLINK_REASON: Final = "is a symbolic link; links are never followed or served"
SPECIAL_REASON: Final = "is not a regular file or folder (a FIFO, socket or device); never opened"


class RefusedError(Exception):
    """A file the walk found but refuses to read (``code`` and ``reason`` for its problem)."""

    def __init__(self, code: ProblemCode, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def open_below(fd: int, local: str) -> int:
    """Open the folder ``local`` (not empty) below the folder ``fd`` one name at a time,
    following no link; ``fd`` stays open.

    Raises:
        OSError: a name is missing, not a folder, or a link (``ELOOP``).
    """
    current = fd
    try:
        for name in local.split("/"):
            child = os.open(name, DIR_FLAGS, dir_fd=current)
            if current != fd:
                os.close(current)
            current = child
    except BaseException:
        if current != fd:
            os.close(current)
        raise
    return current


def skill_md_signatures(
    fd: int, path: str, strip: int, skip: Callable[[str, str, bool], SkipCode | None]
) -> dict[str, bytes | None]:
    """Every servable ``SKILL.md`` below the open folder ``fd`` (at ``path``), with its signature.

    Args:
        fd: The start folder's descriptor; closed before this returns or raises.
        path: Its path as snapshots spell it (``""`` for a root folder itself).
        strip: Characters to drop from a snapshot path to get the path below the root folder.
        skip: The selection's judge: ``skip(folder below the root, name, is_dir)``.

    Returns:
        ``{SKILL.md path: (device, inode, size, mtime_ns, ctime_ns)}``, each signature packed
        (:data:`~skills_core.server.index.SIGNATURE_ROW`: 40 bytes, not five integers).

    Raises:
        OSError: the process ran out of descriptors or memory (:data:`EXHAUSTED`): the look is
            incomplete, and nothing can be concluded from it.
    """
    look = _Look(strip, skip)
    try:
        first = look.folder(fd, path)
    except BaseException:
        os.close(fd)
        raise
    # (descriptor, path, subfolders still to visit): one frame, one open folder, per level.
    stack = [(fd, path, first)]
    try:
        while stack:
            current, folder, pending = stack[-1]
            if not pending:
                stack.pop()
                os.close(current)
                continue
            name = pending.pop()
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=current)
            except OSError as exc:
                if exc.errno in EXHAUSTED:
                    raise
                continue  # the full scan passes over it too (and reports it)
            child_path = f"{folder}/{name}" if folder else name
            try:
                subfolders = look.folder(child, child_path)
            except BaseException:
                os.close(child)
                raise
            stack.append((child, child_path, subfolders))
    finally:
        for current, _, _ in stack:
            os.close(current)
    return look.found


class _Look:
    """The ``SKILL.md`` files found so far, and how names are judged."""

    __slots__ = ("found", "skip", "strip")

    def __init__(self, strip: int, skip: Callable[[str, str, bool], SkipCode | None]) -> None:
        self.strip = strip
        self.skip = skip
        self.found: dict[str, bytes | None] = {}

    def folder(self, fd: int, path: str) -> list[str]:
        """The subfolders of the open folder ``fd`` to visit (last first); its ``SKILL.md``
        recorded."""
        local = path[self.strip :]
        folders: list[str] = []
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    try:
                        self.entry(entry, path, local, folders)
                    except OSError as exc:  # the entry went away meanwhile, say
                        if exc.errno in EXHAUSTED:
                            raise
        except OSError as exc:
            if exc.errno in EXHAUSTED:
                raise
            return []  # not listable: the full scan reports it, and serves nothing below it
        folders.sort(reverse=True)
        return folders

    def entry(self, entry: os.DirEntry[str], path: str, local: str, folders: list[str]) -> None:
        """Judge one listed name: a subfolder to visit, or a ``SKILL.md`` to record."""
        name = entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if self.skip(local, name, is_dir) is not None:
            return
        if is_dir:
            folders.append(name)
        elif name == SKILL_MD and entry.is_file(follow_symlinks=False):
            st = entry.stat(follow_symlinks=False)
            try:
                signature: bytes | None = SIGNATURE_ROW.pack(
                    st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns
                )
            except struct.error:  # past the row's integers: as the full scan records it
                signature = None
            self.found[f"{path}/{name}" if path else name] = signature


#: A folder on the walk's stack: (descriptor, or None when replayed; path; in a skill; the
#: subfolders still to visit, last first).
Frame = tuple[int | None, str, bool, list[str]]
#: What a poll looks at: {SKILL.md path: its signature, or None while it is racy}.
Structure = dict[str, bytes | None]


def structure_digest(found: Structure) -> bytes:
    """What a poll compares, kept instead of the structure itself (nothing per skill): the
    SHA-256 of every path, sorted, each followed by NUL (which no path holds) and its signature
    (``\\1`` and its 40 bytes) or ``\\0`` while it is racy. Equal digests, equal structures."""
    digest = hashlib.sha256()
    update = digest.update
    for path in sorted(found):
        signature = found[path]
        update(path.encode("utf-8", "surrogateescape"))
        update(b"\0\0" if signature is None else b"\0\1" + signature)
    return digest.digest()


@dataclass(slots=True)
class Walk:
    """What one snapshot accumulates."""

    root: int
    now: int
    #: Folder records (index.pack_folder) to replay and reuse rows from, and the ones this walk
    #: keeps (the same dict, for a re-check of one skill).
    old: dict[str, bytes]
    new: dict[str, bytes]
    #: Characters to drop from a snapshot path to get the path below the root folder itself.
    strip: int = 0
    #: The descriptor of the folder the walk starts from (the root folder, in a full scan).
    start_fd: int = -1
    #: Whether to record each folder's signature and listing (with a digest index) ...
    record: bool = False
    #: ... and to replay a folder whose signature is unchanged instead of listing it (full scans).
    replay: bool = False
    files: list[SnapshotFile] = field(default_factory=list)
    problems: list[SourceProblem] = field(default_factory=list)
    skipped: list[SkippedEntry] = field(default_factory=list)
    skill_mds: Structure = field(default_factory=dict)
    #: Whether a folder's record is not the one it had.
    changed: bool = False
    #: The file rows of the folder being snapshot: those of its record, and those kept now.
    rows: dict[str, bytes] = field(default_factory=dict)
    new_rows: dict[str, bytes] = field(default_factory=dict)

    def refuse(self, folder: str, name: str, code: ProblemCode, reason: str) -> None:
        self.problems.append(
            SourceProblem(root=self.root, path=join(folder, name), code=code, reason=reason)
        )

    def skip(self, folder: str, name: str, code: SkipCode, reason: str) -> None:
        self.skipped.append(
            SkippedEntry(root=self.root, path=join(folder, name), code=code, reason=reason)
        )


def join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def problem(root: int, path: str, exc: OSError) -> SourceProblem:
    reason = os.strerror(exc.errno) if exc.errno is not None else "could not be read"
    return SourceProblem(
        root=root, path=path, code=ProblemCode.UNREADABLE, reason=f"could not be read ({reason})"
    )
