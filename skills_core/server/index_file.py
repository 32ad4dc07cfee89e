"""The digest index's file: read it only if this user alone could have written it, without ever
blocking or following a link; write it atomically, never over another user's file.

Theory of operation: the index (:mod:`skills_core.server.index`, pure) is bytes in a file that
several workers of one server share and that a hostile or careless hand may have replaced. Reading
opens it with ``O_NOFOLLOW | O_NONBLOCK`` and checks, on the open descriptor, before a byte is read,
what ssh checks of its keys: that it belongs to the user running the process (or to root) and that
neither its group nor others may write it (:func:`open_private_file`, which the cursor key file of
``serve --http`` goes through too, following links: a Kubernetes secret is one); then that it is a
regular file of at most :data:`MAX_INDEX_BYTES`, read in one go (a file that changed meanwhile fails
the index's own checksum). A file pre-created in a shared folder such as ``/tmp`` by another user,
or left writable by others, is refused with the reason and the fix. Writing goes to a new file
beside it (``O_EXCL``, mode 0600) renamed over it, so readers see the old index or the new one,
never a part, and whatever of this user's stands at the path (a link included) is replaced, never
written through; anything at the path that belongs to another user is left alone. The only I/O of
the index; :class:`~skills_core.server.filesystem.FilesystemSource` decides when.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import Final

__all__ = [
    "MAX_INDEX_BYTES",
    "UntrustedFileError",
    "check_replaceable",
    "open_private_file",
    "read_index_file",
    "write_atomically",
]

#: An index larger than this is not read (treated as absent): about 2 million files.
MAX_INDEX_BYTES: Final = 256 * 1024 * 1024

_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_LINKED_FILE_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FILE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class UntrustedFileError(PermissionError):
    """A file refused before a byte of it is read: someone else could have written it.

    ``filename`` is the file; ``strerror`` says why and how to fix it (``chmod 600 FILE``).

    Attributes:
        foreign: It belongs to another user: not this user's to replace either.
    """

    def __init__(self, path: str, reason: str, *, foreign: bool) -> None:
        super().__init__(errno.EACCES, reason, path)
        self.foreign = foreign


def open_private_file(path: str, *, follow_links: bool = False) -> tuple[int, os.stat_result]:
    """Open ``path`` for reading if only this user could have written it: ``(fd, its fstat)``.

    The checks ssh makes of its keys, on the open descriptor: it belongs to the effective user of
    this process or to root (who can write anything anyway), and neither its group nor others may
    write it. The open never blocks (a FIFO opens at once and is refused as not a regular file).
    The caller reads and closes the descriptor.

    Args:
        path: The file.
        follow_links: Follow a symbolic link (a Kubernetes secret volume is made of them); the
            checks then apply to the file it leads to. Otherwise a link is refused.

    Raises:
        FileNotFoundError: there is nothing at ``path``.
        UntrustedFileError: it belongs to another user, or its group or others may write it.
        OSError: it is a symbolic link (unless followed), not a regular file, or cannot be opened.
    """
    try:
        fd = os.open(path, _LINKED_FILE_FLAGS if follow_links else _FILE_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise OSError(exc.errno, "it is a symbolic link (never followed)", path) from None
        raise
    try:
        st = os.fstat(fd)
        user = os.geteuid()
        if st.st_uid not in (user, 0):
            raise UntrustedFileError(path, _foreign(st.st_uid, user), foreign=True)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file (a FIFO, socket or device)", path)
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o022:
            who = {0o020: "its group", 0o002: "others"}.get(mode & 0o022, "its group and others")
            raise UntrustedFileError(
                path,
                f"{who} may write it (mode {mode:04o}), so anyone could have: `chmod 600 {path}`",
                foreign=False,
            )
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _foreign(owner: int, user: int) -> str:
    return (
        f"it belongs to user id {owner}, not to this user (id {user}), so that user could have "
        "written it: remove it, or use a file of this user's"
    )


def read_index_file(path: str) -> bytes | None:
    """The bytes of the index at ``path``, None if there is none; never blocks or follows.

    Raises:
        UntrustedFileError: another user owns it, or its group or others may write it.
        OSError: it cannot be read, is a link or not a regular file, or is too large.
    """
    try:
        fd, st = open_private_file(path)
    except FileNotFoundError:
        return None
    try:
        if st.st_size > MAX_INDEX_BYTES:
            raise OSError(errno.EFBIG, f"it is larger than {MAX_INDEX_BYTES} bytes")
        # One read of the whole file (it is read once, and may be megabytes): a file that
        # changed meanwhile fails its checksum.
        return os.read(fd, st.st_size + 1)
    finally:
        os.close(fd)


def check_replaceable(path: str) -> None:
    """Check that nothing at ``path`` belongs to another user (then it may be replaced).

    Raises:
        UntrustedFileError: something at ``path`` belongs to another user.
        OSError: ``path`` cannot be looked at.
    """
    try:
        owner = os.lstat(path).st_uid
    except FileNotFoundError:
        return
    user = os.geteuid()
    if owner != user:
        raise UntrustedFileError(path, _foreign(owner, user) + "; it is left alone", foreign=True)


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to a new file beside ``path`` and rename it over ``path``.

    Readers see the old file or the new one, never a part; concurrent writers each rename a
    whole file of their own (the last one stays). Whatever of this user's is at ``path`` (a link
    included) is replaced, never written through; what belongs to another user is left alone.

    Raises:
        UntrustedFileError: something at ``path`` belongs to another user.
        OSError: the folder cannot be written, or ``path`` is a folder.
    """
    check_replaceable(path)
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
