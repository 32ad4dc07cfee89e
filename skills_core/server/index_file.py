"""The digest index's file: read it without ever blocking or following a link, write it atomically.

Theory of operation: the index (:mod:`skills_core.server.index`, pure) is bytes in a file that
several workers of one server share and that a hostile or careless hand may have replaced.
Reading opens it with ``O_NOFOLLOW | O_NONBLOCK`` and checks, on the open descriptor, that it is a
regular file of at most :data:`MAX_INDEX_BYTES` before reading it in one go (a file that changed
meanwhile fails the index's own checksum). Writing goes to a new file beside it (``O_EXCL``, mode
0600) renamed over it, so readers see the old index or the new one, never a part, and whatever
stands at the path (a link included) is replaced, never written through. The only I/O of the
index; :class:`~skills_core.server.filesystem.FilesystemSource` decides when.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import Final

__all__ = ["MAX_INDEX_BYTES", "read_index_file", "write_atomically"]

#: An index larger than this is not read (treated as absent): about 2 million files.
MAX_INDEX_BYTES: Final = 256 * 1024 * 1024

_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FILE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def read_index_file(path: str) -> bytes | None:
    """The bytes of a regular file at ``path``, None if there is none; never blocks or follows.

    Raises:
        OSError: it cannot be read, is a link or not a regular file, or is too large.
    """
    try:
        fd = os.open(path, _FILE_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, "it is a symbolic link (never followed)") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file")
        if st.st_size > MAX_INDEX_BYTES:
            raise OSError(errno.EFBIG, f"it is larger than {MAX_INDEX_BYTES} bytes")
        # One read of the whole file (it is read once, and may be megabytes): a file that
        # changed meanwhile fails its checksum.
        return os.read(fd, st.st_size + 1)
    finally:
        os.close(fd)


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to a new file beside ``path`` and rename it over ``path``.

    Readers see the old file or the new one, never a part; concurrent writers each rename a
    whole file of their own (the last one stays). Whatever is at ``path`` (a link included) is
    replaced, never written through.

    Raises:
        OSError: the folder cannot be written, or ``path`` is a folder.
    """
    folder, name = os.path.split(path)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    fd = os.open(temporary, _NEW_FILE_FLAGS, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
