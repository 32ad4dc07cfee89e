"""Files read before, kept open and checked at every use: how a read skips the walk (Linux).

Theory of operation
-------------------
:class:`~skills_core.server.filesystem.FilesystemSource` reaches a file by walking to it from its
root, one name at a time, never following a link: an ``open`` per folder on the way and one for
the file, an ``fstat``, a ``read`` and as many ``close`` calls (ten system calls for a file two
folders down). :class:`HeldFiles` keeps the descriptors such walks ended at, a bounded number
(oldest out first), so that the next read of the same file can start from its descriptor.

**A held descriptor is used only after the kernel confirms where it is.** Before each use,
:meth:`HeldFiles.current` asks for the path of the open file (``readlink`` of ``N`` in the folder
``/proc/self/fd``, held open; one system call): the kernel builds it from the file's own name and
the real folders that hold it now, up to the file system's root, so no link can appear in it, and
a file whose name is gone ends in ``" (deleted)"``. The descriptor is used only when that path is
exactly the one it was held for (the root's resolved path and the file's path below it) and
``fstat`` still counts a link to it. Then it *is* the file a walk would open now, inside its root,
reached without a link. Anything else (a folder on the way renamed, moved out of the root or
swapped for a link; the file replaced by another, renamed or deleted) gives another path: the
descriptor is closed and the caller walks again. So a folder renamed away never keeps serving its
old place: the first read after the rename sees the new path and walks (and finds nothing where
it was). Whether the bytes changed is the caller's question: the file is read at every use
(:meth:`~skills_core.server.filesystem.FilesystemSource.read_since`) and its bytes compared.

A descriptor is held only if the kernel names it, right after the walk that opened it, by the path
the walk took; where that is not so (no ``/proc``, as on macOS; a root whose resolved path the
kernel spells otherwise, under a bind mount) nothing is held and every read walks, as before.

What the kernel's answer cannot see: a file system mounted over a folder on the way after the file
was held (the descriptor keeps naming the covered path). Mounting needs privilege, and the file
served is the one that was legitimately at that path when the walk opened it.

In a child made by ``fork``, the folder ``/proc/self/fd`` held by the parent still shows the
parent's descriptors: every :class:`HeldFiles` closes it in the child (``os.register_at_fork``)
and opens the child's own when next asked.

Thread safety: one thread at a time (the server's); deferred reads in worker threads walk.
"""

from __future__ import annotations

import os
import weakref
from typing import Final, final

__all__ = ["MAX_HELD_FILES", "HeldFiles"]

#: Descriptors held at most per source: the hot files of a server, not its catalog. Each is an
#: open file of the process (the usual limit is 1,024); a file read less often than this many
#: others is walked to again, which costs what every read cost before.
MAX_HELD_FILES: Final = 64

#: (root number, path as snapshots spell it): what a file is held under.
Key = tuple[int, str]


_PROC_FDS: Final = "/proc/self/fd"
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


@final
class HeldFiles:
    """Open descriptors of regular files by key, each with the path it must still be at."""

    __slots__ = ("__weakref__", "_files", "_limit", "_proc")

    def __init__(self, limit: int = MAX_HELD_FILES) -> None:
        """Hold at most ``limit`` descriptors."""
        self._limit = limit
        # key -> (descriptor, its name in /proc/self/fd, the path it must be at); oldest first.
        self._files: dict[Key, tuple[int, str, str]] = {}
        # /proc/self/fd, opened at the first hold; None before, after a fork, or without /proc.
        self._proc: int | None = None
        _EVERY.add(self)

    def __len__(self) -> int:
        """How many descriptors are held."""
        return len(self._files)

    def current(self, key: Key) -> tuple[int, os.stat_result] | None:
        """The held descriptor of ``key`` and its ``fstat`` now, if it is still at its path.

        Otherwise the descriptor (if any) is closed and forgotten, and None is returned: walk.
        """
        held = self._files.get(key)
        if held is None:
            return None
        fd, name, path = held
        try:
            if os.readlink(name, dir_fd=self._proc_fds()) == path:
                st = os.fstat(fd)
                if st.st_nlink:
                    return fd, st
        except OSError:
            pass
        self.drop(key)
        return None

    def hold(self, key: Key, fd: int, path: str) -> bool:
        """Take over ``fd``, just opened by a walk to ``path``, if the kernel names it so.

        Returns:
            True when it is held (this object closes it from now on); False when it is not, and
            the caller keeps it (and closes it).
        """
        name = str(fd)
        try:
            if os.readlink(name, dir_fd=self._proc_fds()) != path:
                return False
        except OSError:  # no /proc
            return False
        self.drop(key)
        files = self._files
        while len(files) >= self._limit:
            self.drop(next(iter(files)))
        files[key] = (fd, name, path)
        return True

    def drop(self, key: Key) -> None:
        """Close and forget the descriptor held for ``key``, if any."""
        held = self._files.pop(key, None)
        if held is not None:
            os.close(held[0])

    def close(self) -> None:
        """Close every held descriptor (and ``/proc/self/fd``)."""
        while self._files:
            self.drop(next(iter(self._files)))
        self._forked()

    def _proc_fds(self) -> int:
        """The descriptor of ``/proc/self/fd``, opened now if need be.

        Raises:
            OSError: there is no ``/proc``.
        """
        proc = self._proc
        if proc is None:
            proc = self._proc = os.open(_PROC_FDS, _DIR_FLAGS)
        return proc

    def _forked(self) -> None:
        """Close ``/proc/self/fd`` (in a child, it is the parent's); it is opened again when needed."""
        proc, self._proc = self._proc, None
        if proc is not None:
            os.close(proc)


#: Every HeldFiles alive, for the fork handler.
_EVERY: Final[weakref.WeakSet[HeldFiles]] = weakref.WeakSet()


def _after_fork_in_child() -> None:  # pragma: no cover - runs in a forked child (tested there)
    for held in list(_EVERY):
        held._forked()


if hasattr(os, "register_at_fork"):  # pragma: no branch - POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)
