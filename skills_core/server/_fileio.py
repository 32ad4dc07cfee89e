"""The folder source's system calls on one file or one root: how files are opened and read to
their end (hashing or not), their stat signatures, and a root resolved as the operator named it.

Theory of operation: files are opened with :data:`FILE_FLAGS` (never through a link, never
blocking on a FIFO, never inherited), checked with ``fstat`` by the caller, then read here until
a read returns nothing (one read in the common case: see :func:`read_hashing`).

A root is named by the operator (``/srv/skills/current``, which may be a link to
``releases/v2``, switched atomically at each deploy). :func:`resolve_root` resolves that name now:
the folder it leads to and that folder's identity (device, inode). The source resolves its roots
when made and again at each look (a poll at most once per ``ttlMs``, a scan, a re-check), so a root
switched to another folder, or a folder replaced under the same name, is served from its new
place; links are followed only here, in the name of a root itself, never below it.

Also the source's default log (:func:`log_warning`) and how it words why a digest index failed
(:func:`reason_of`).
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
from collections.abc import Callable, Sequence
from typing import Final, final

from ..display import display
from .index import DigestIndexError, Signature

__all__ = [
    "CHUNK",
    "FILE_FLAGS",
    "PROBE",
    "Roots",
    "log_warning",
    "read_hashing",
    "read_only",
    "reason_of",
    "resolve_root",
    "stat_key",
]

#: How files are opened: no link followed, no wait on a FIFO, not inherited by a child process.
FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: Read size for large files, and for the end-of-file probe after a small one.
CHUNK: Final = 1024 * 1024
PROBE: Final = 64 * 1024


def resolve_root(named: str) -> tuple[str, tuple[int, int]]:
    """The folder the root ``named`` leads to now (links in its name followed), and its
    ``(device, inode)``.

    Raises:
        FileNotFoundError: nothing is there (a link to a release moved away, say).
        NotADirectoryError: it is not a folder.
        OSError: it cannot be looked at (``PermissionError`` on a folder above it, say).
    """
    resolved = os.path.realpath(named)
    st = os.stat(resolved)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", named)
    return resolved, (st.st_dev, st.st_ino)


@final
class Roots:
    """A folder source's roots: as named, and where they led at the last look (lists kept in
    place, so the source may hold them), with what could not be looked at said once to ``log``.
    """

    __slots__ = ("_failing", "_log", "identities", "named", "prefixes", "resolved")

    def __init__(self, roots: Sequence[str | os.PathLike[str]], log: Callable[[str], None]) -> None:
        """Resolve each root now.

        Raises:
            OSError: as :func:`resolve_root`, naming the root as given.
        """
        self._log = log
        #: Per root that could not be looked at: why (said once, until it can be again).
        self._failing: dict[int, str] = {}
        #: Per root: as named (absolute, links not resolved), where it led, that folder's
        #: (device, inode), and that folder as a prefix (ending in ``/``).
        self.named: list[str] = []
        self.resolved: list[str] = []
        self.identities: list[tuple[int, int]] = []
        self.prefixes: list[str] = []
        for root in roots:
            named = os.path.abspath(os.fspath(root))
            try:
                resolved, identity = resolve_root(named)
            except OSError as exc:
                exc.filename = os.fspath(root)
                raise
            self.named.append(named)
            self.resolved.append(resolved)
            self.identities.append(identity)
            self.prefixes.append(_prefix(resolved))

    def follow(self) -> list[int]:
        """Resolve every root again; return those that now lead to another folder (said to the
        log, and recorded).

        Raises:
            OSError: a root cannot be resolved (said once; ``filename`` is the root as named).
        """
        moved: list[int] = []
        for root, named in enumerate(self.named):
            try:
                resolved, identity = resolve_root(named)
            except OSError as exc:
                exc.filename = named
                self.failed(exc, root)
                raise
            if resolved == self.resolved[root] and identity == self.identities[root]:
                continue
            self._log(f"root {named} now leads to {resolved}: its skills are served from there")
            self.resolved[root] = resolved
            self.identities[root] = identity
            self.prefixes[root] = _prefix(resolved)
            moved.append(root)
        return moved

    def gone(self, root: int) -> OSError:
        """The error of a root whose folder cannot be opened (said once)."""
        try:  # once more, for the reason
            os.close(os.open(self.resolved[root], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
            exc = OSError("cannot be opened as a folder")
        except OSError as found:
            exc = found
        exc.filename = self.named[root]
        self.failed(exc, root)
        return exc

    def failed(self, exc: OSError, root: int | None = None) -> None:
        """Say, once until it can be looked at again, that a root cannot be."""
        if root is None:
            root = self.named.index(exc.filename) if exc.filename in self.named else -1
        reason = f"{exc.filename}: {exc.strerror or exc}" if exc.filename else str(exc)
        if self._failing.get(root) == reason:
            return
        self._failing[root] = reason
        self._log(
            f"root cannot be read ({reason}); the catalog served is kept, and the root is "
            "looked at again at the next poll (within ttlMs) or reload"
        )

    def recovered(self) -> None:
        """Say that the roots that could not be looked at can be again."""
        if not self._failing:
            return
        failing, self._failing = self._failing, {}
        for root in sorted(failing):
            where = self.named[root] if 0 <= root < len(self.named) else "every root"
            self._log(f"root {where} can be read again: its skills are served")


def _prefix(path: str) -> str:
    return path if path.endswith("/") else path + "/"


def stat_key(st: os.stat_result) -> Signature:
    """The stat signature of a file: ``(device, inode, size, mtime, ctime)``."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_only(fd: int, size: int) -> bytes:
    """Read ``fd`` (a regular file) from its start to its end without hashing: serving needs only
    the bytes. Positioned reads, so a descriptor held from an earlier read needs no seek.

    The same end-of-file rule as :func:`read_hashing`: one read when it returns exactly the size
    ``fstat`` reported, otherwise read on until a read returns nothing.
    """
    request = (size if size < CHUNK else CHUNK) + 1
    first = os.pread(fd, request, 0)
    if len(first) < request and (not first or len(first) == size):
        return first
    parts = [first]
    offset = len(first)
    while chunk := os.pread(fd, CHUNK, offset):
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def read_hashing(fd: int, size: int, keep: bool) -> tuple[int, str, bytes | None]:
    """Read ``fd`` (a regular file) to the end, hashing as it goes; keep the bytes when ``keep``.

    ``size`` (from ``fstat``) only sizes the reads: the file may have changed since, and what is
    read is what is hashed and counted. A read that returns less than it asked for, but exactly
    the ``size`` bytes that ``fstat`` reported, has reached the end of a regular file (the common
    case, one read per file); any other short read is followed by one more, to make sure.
    """
    request = (size if size < CHUNK else CHUNK) + 1
    first = os.read(fd, request)
    if len(first) < request:
        tail = os.read(fd, PROBE) if first and len(first) != size else b""
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
        chunk = os.read(fd, CHUNK)
        if not chunk:
            break
        total += len(chunk)
        hasher.update(chunk)
        if keep:
            parts.append(chunk)
    return total, "sha256:" + hasher.hexdigest(), b"".join(parts) if keep else None


def log_warning(message: str) -> None:
    """A source's default ``log``: a warning of the ``skills_core`` logger, every character
    visible."""
    logging.getLogger("skills_core").warning("%s", display(message))


def reason_of(exc: OSError | DigestIndexError) -> str:
    """Why a digest index could not be used or written, in a few words."""
    if isinstance(exc, DigestIndexError):
        return exc.reason
    return exc.strerror or str(exc)
