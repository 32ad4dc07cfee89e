"""Files read before, kept open and checked at every use: how a read skips the walk (Linux).

Theory of operation
-------------------
:class:`~skills_core.server.filesystem.FilesystemSource` reaches a file by walking to it from its
root, one name at a time, never following a link: an ``open`` per folder on the way and one for
the file, an ``fstat``, a ``read`` and as many ``close`` calls (ten system calls for a file two
folders down). :class:`HeldFiles` keeps the descriptors such walks ended at, a bounded number
(oldest out first), so that the next read of the same file can start from its descriptor.

**A held descriptor is used only after the kernel confirms where it is.** Before each use,
:meth:`HeldFiles.current` asks for the path of the open file (``readlink`` of
``/proc/self/fd/N``, one system call): the kernel builds it from the file's own name and the real
folders that hold it now, up to the file system's root, so no link can appear in it, and a file
whose name is gone ends in ``" (deleted)"``. The descriptor is used only when that path is exactly
the one it was held for (the root's resolved path and the file's path below it) and ``fstat``
still counts a link to it. Then it *is* the file a walk would open now, inside its root, reached
without a link. Anything else (a folder on the way renamed, moved out of the root or swapped for a
link; the file replaced by another, renamed or deleted) gives another path: the descriptor is
closed and the caller walks again. So a folder renamed away never keeps serving its old place:
the first read after the rename sees the new path and walks (and finds nothing where it was).

A descriptor is held only if the kernel names it, right after the walk that opened it, by the path
the walk took; where that is not so (no ``/proc``, as on macOS; a root whose resolved path the
kernel spells otherwise, under a bind mount) nothing is held and every read walks, as before.

What the kernel's answer cannot see: a file system mounted over a folder on the way after the file
was held (the descriptor keeps naming the covered path). Mounting needs privilege, and the file
served is the one that was legitimately at that path when the walk opened it.

Thread safety: one thread at a time (the server's); deferred reads in worker threads walk.
"""

from __future__ import annotations

import os
from typing import Final, final

__all__ = ["MAX_HELD_FILES", "HeldFiles"]

#: Descriptors held at most per source: the hot files of a server, not its catalog. Each is an
#: open file of the process (the usual limit is 1,024); a file read less often than this many
#: others is walked to again, which costs what every read cost before.
MAX_HELD_FILES: Final = 64

#: (root number, path as snapshots spell it): what a file is held under.
Key = tuple[int, str]


@final
class HeldFiles:
    """Open descriptors of regular files by key, each with the path it must still be at."""

    __slots__ = ("_files", "_limit")

    def __init__(self, limit: int = MAX_HELD_FILES) -> None:
        """Hold at most ``limit`` descriptors."""
        self._limit = limit
        # key -> (descriptor, its /proc link, the path it must be at); oldest first.
        self._files: dict[Key, tuple[int, str, str]] = {}

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
        fd, link, path = held
        try:
            if os.readlink(link) == path:
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
        link = f"/proc/self/fd/{fd}"
        try:
            if os.readlink(link) != path:
                return False
        except OSError:  # no /proc
            return False
        self.drop(key)
        files = self._files
        while len(files) >= self._limit:
            self.drop(next(iter(files)))
        files[key] = (fd, link, path)
        return True

    def drop(self, key: Key) -> None:
        """Close and forget the descriptor held for ``key``, if any."""
        held = self._files.pop(key, None)
        if held is not None:
            os.close(held[0])

    def close(self) -> None:
        """Close every held descriptor."""
        while self._files:
            self.drop(next(iter(self._files)))
