"""The disk cache store: the host's only I/O module.

Theory of operation
-------------------
:class:`DiskCacheStore` keeps verified skill files under one directory, at the paths of
:func:`skills_core.host.cache.cache_relpath` (origin label and URI encoded, content-addressed by
digest). It implements :class:`skills_core.host.cache.CacheStore`; it never verifies anything
itself, because :class:`~skills_core.host.cache.VerifiedCache` re-hashes every file it returns
against the current entry (CACHE-02 option (ii)). Everything here is defence in depth on top:

* **Outside every skill-discovery path** (CACHE-04): the constructor refuses a cache directory
  inside, equal to, or containing any discovery path given, comparing both the paths as written
  (made absolute, ``..`` collapsed) and with symlinks resolved, case-folded, so a symlink, a ``..``
  or a case variant cannot smuggle the cache into a place where filesystem skills are discovered.
  Content here is MCP content for every purpose (CACHE-05, CACHE-06).
* **Only the host writes** (CACHE-02 option (i)): directories are created mode 0700 and files
  0600; on POSIX a cache directory owned by another user is refused and a group- or
  world-accessible one is tightened.
* **Never modified in place**: a file is written to a fresh temporary name in its directory,
  flushed with ``fsync``, then renamed over the final name with :func:`os.replace`, and the
  directory is synced. A reader sees the old file or the new one, never a mixture.
* **Symlinks are never followed** inside the cache: on platforms with ``dir_fd`` support every
  component is opened relative to its parent with ``O_NOFOLLOW`` (and ``O_DIRECTORY``), and a
  cached file must be a regular file; elsewhere each component is checked with :func:`os.lstat`.
* **Bounded reads**: :meth:`DiskCacheStore.get` reads at most ``max_size + 1`` bytes, so a planted
  huge file costs no more than the entry allows.
* **Nothing blocks**: every open is non-blocking (``O_NONBLOCK``), and a file's type is checked
  with ``fstat`` before a byte is read, so a FIFO, a device or a socket planted where a cached file
  belongs is a miss at once, never a read that waits for a writer.

I/O errors never escape: a failed read is a miss, a failed write is recorded in
:attr:`DiskCacheStore.last_error` and otherwise ignored (the cache is an optimisation).
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterable, Iterator
from typing import Final, final

from ..errors import SkillsError
from .cache import (
    CACHE_LAYOUT_VERSION,
    CacheLocation,
    cache_relpath,
    origin_component,
    parse_cache_relpath,
)

__all__ = ["CacheLocationError", "DiskCacheStore"]

# Whether os.open/os.mkdir/os.replace accept dir_fd here (POSIX); tests may force the fallback.
_HAVE_DIR_FD: bool = (
    os.open in os.supports_dir_fd
    and os.mkdir in os.supports_dir_fd
    and hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
)
_O_BINARY: Final = getattr(os, "O_BINARY", 0)
_O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
#: Opening a FIFO for reading blocks until a writer comes, unless the open is non-blocking.
_O_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_READ_CHUNK: Final = 1 << 20


class CacheLocationError(SkillsError, ValueError):
    """The cache directory is unusable: inside or around a skill-discovery path, not a directory,
    or owned by someone else.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="cache-location")


def _forms(path: str) -> set[str]:
    """The path as written (absolute, normalised) and with symlinks resolved, case-folded."""
    absolute = os.path.normpath(os.path.abspath(path))
    real = os.path.realpath(path)
    return {os.path.normcase(p).casefold() for p in (absolute, real)}


def _inside(child: str, parent: str) -> bool:
    if child == parent:
        return True
    prefix = parent if parent.endswith(os.sep) else parent + os.sep
    return child.startswith(prefix)


@final
class DiskCacheStore:
    """A :class:`~skills_core.host.cache.CacheStore` on disk; see the module docstring."""

    __slots__ = ("last_error", "root")

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        discovery_paths: Iterable[str | os.PathLike[str]] = (),
    ) -> None:
        """Open (creating if needed) the cache at ``directory``.

        Args:
            directory: The cache directory.
            discovery_paths: Every directory where the host discovers filesystem skills.

        Raises:
            CacheLocationError: ``directory`` is inside, equal to, or contains a discovery path
                (also via symlinks, ``..`` or case variants; CACHE-04), is not a directory, or is
                owned by another user.
        """
        directory = os.fspath(directory)
        cache_forms = _forms(directory)
        for path in discovery_paths:
            discovery = os.fspath(path)
            for a in cache_forms:
                for b in _forms(discovery):
                    if _inside(a, b) or _inside(b, a):
                        raise CacheLocationError(
                            f"the cache directory {directory!r} overlaps the skill-discovery path "
                            f"{discovery!r}; MCP content must be cached outside every discovery "
                            "path (CACHE-04)"
                        )
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise CacheLocationError(
                f"cannot create the cache directory {directory!r}: {exc}"
            ) from None
        # makedirs succeeded, so this is a directory (an existing file raises FileExistsError).
        self.root = os.path.realpath(directory)
        info = os.stat(self.root)
        getuid = getattr(os, "getuid", None)
        if getuid is not None:
            if info.st_uid != getuid():
                raise CacheLocationError(
                    f"the cache directory {directory!r} belongs to another user; only the host "
                    "may write to it"
                )
            if info.st_mode & 0o077:
                os.chmod(self.root, 0o700)
        self.last_error: OSError | None = None

    # -- path plumbing ----------------------------------------------------------------------------

    def _dir_fd(self, parts: list[str], *, create: bool) -> int | None:
        """Open the directory ``parts`` below the root without following symlinks."""
        fd = os.open(self.root, os.O_RDONLY | _O_DIRECTORY | _O_NONBLOCK)
        try:
            for part in parts:
                flags = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_NONBLOCK
                try:
                    child = os.open(part, flags, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        os.close(fd)
                        return None
                    os.mkdir(part, 0o700, dir_fd=fd)
                    child = os.open(part, flags, dir_fd=fd)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _checked_dir(self, parts: list[str], *, create: bool) -> str | None:
        """Portable fallback: walk ``parts`` refusing symlinks and non-directories with lstat."""
        path = self.root
        for part in parts:
            path = os.path.join(path, part)
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                if not create:
                    return None
                os.mkdir(path, 0o700)
                info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode):
                raise OSError(errno.ELOOP, "not a plain directory", path)
        return path

    # -- CacheStore -------------------------------------------------------------------------------

    def get(self, origin: str, uri: str, digest: str, *, max_size: int) -> bytes | None:
        """Return at most ``max_size + 1`` bytes of the cached file, or None (never follows links)."""
        parts = cache_relpath(origin, uri, digest).split("/")
        try:
            return self._read(parts, max_size + 1)
        except OSError:
            return None

    def _read(self, parts: list[str], limit: int) -> bytes | None:
        if _HAVE_DIR_FD:
            dir_fd = self._dir_fd(parts[:-1], create=False)
            if dir_fd is None:
                return None
            try:
                fd = os.open(parts[-1], os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK, dir_fd=dir_fd)
            finally:
                os.close(dir_fd)
        else:
            directory = self._checked_dir(parts[:-1], create=False)
            if directory is None:
                return None
            path = os.path.join(directory, parts[-1])
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return None
            fd = os.open(path, os.O_RDONLY | _O_BINARY | _O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            chunks: list[bytes] = []
            remaining = limit
            while remaining > 0:
                chunk = os.read(fd, min(remaining, _READ_CHUNK))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def put(self, origin: str, uri: str, digest: str, data: bytes) -> None:
        """Write ``data`` atomically (temporary file, fsync, rename); errors are recorded only."""
        parts = cache_relpath(origin, uri, digest).split("/")
        try:
            self._write(parts, data)
        except OSError as exc:
            self.last_error = exc

    def _write(self, parts: list[str], data: bytes) -> None:
        temp = f".tmp-{secrets.token_hex(8)}"
        if _HAVE_DIR_FD:
            dir_fd = self._dir_fd(parts[:-1], create=True)
            assert dir_fd is not None
            try:
                fd = os.open(
                    temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o600, dir_fd=dir_fd
                )
                try:
                    self._write_all(fd, data)
                finally:
                    os.close(fd)
                try:
                    os.replace(temp, parts[-1], src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                except OSError:
                    os.unlink(temp, dir_fd=dir_fd)
                    raise
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
            return
        directory = self._checked_dir(parts[:-1], create=True)
        assert directory is not None
        temp_path = os.path.join(directory, temp)
        fd = os.open(temp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o600)
        try:
            self._write_all(fd, data)
        finally:
            os.close(fd)
        try:
            os.replace(temp_path, os.path.join(directory, parts[-1]))
        except OSError:
            os.unlink(temp_path)
            raise

    @staticmethod
    def _write_all(fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)

    def discard(self, origin: str, uri: str, digest: str) -> None:
        """Remove the cached file, if any (never following links)."""
        parts = cache_relpath(origin, uri, digest).split("/")
        try:
            if _HAVE_DIR_FD:
                dir_fd = self._dir_fd(parts[:-1], create=False)
                if dir_fd is None:
                    return
                try:
                    os.unlink(parts[-1], dir_fd=dir_fd)
                finally:
                    os.close(dir_fd)
            else:
                directory = self._checked_dir(parts[:-1], create=False)
                if directory is not None:
                    os.unlink(os.path.join(directory, parts[-1]))
        except OSError as exc:
            self.last_error = exc

    def forget_origin(self, origin: str) -> None:
        """Remove everything cached for ``origin`` (CACHE-07)."""
        path = os.path.join(self.root, CACHE_LAYOUT_VERSION, origin_component(origin))
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        try:
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except OSError as exc:
            self.last_error = exc

    # -- inspection -------------------------------------------------------------------------------

    def locations(self) -> Iterator[CacheLocation]:
        """Yield what every cached file's path says (origin, URI key, digest); never follows links."""
        base = os.path.join(self.root, CACHE_LAYOUT_VERSION)
        for current, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(current, d))]
            for name in files:
                rel = os.path.relpath(os.path.join(current, name), self.root)
                try:
                    yield parse_cache_relpath(rel.replace(os.sep, "/"))
                except ValueError:
                    continue
