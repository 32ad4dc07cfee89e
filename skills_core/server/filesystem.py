"""The server's only I/O: skills from folders on disk.

Theory of operation
-------------------
:class:`FilesystemSource` implements the primitives of :class:`~skills_core.server.source.TreeSource`
over real folders; everything else (which folders are skills, their URIs, entries and omissions)
is the pure catalog code.

**Nothing outside a root is ever reached.** Every walk and every read starts from a file
descriptor of the root (the folder it led to at the last look: see below) and goes down one name at a time
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

**Reads of a file read before** (:meth:`FilesystemSource.read_since`, what the server uses) start
from the file's own descriptor, held open since (a bounded number), once the kernel confirms that
it is still the file at that path below the root, reached without a link; otherwise they walk as
above (see :mod:`skills_core.server.open_files`). The bytes are read at every look: a stat
signature cannot prove them unchanged (a write through a shared writable mapping, ``mmap``, may
move neither the modification nor the change time), so the server compares the bytes themselves
before it reuses an answer made of them.

**A root that is itself a skill.** A root holding a regular ``SKILL.md`` when the source is made
(``serve ./my-skill``) is published as that skill: its files appear under the root folder's own
name (``skill://my-skill/...``), as if the root were a folder of a root above it, which is never
opened. Its skills' paths in snapshots, problems and omissions start with that name.

**What is skipped.** Names below a root are judged by a
:class:`~skills_core.server.selection.Selection`: always-ignored names (version-control metadata,
``__pycache__``, ``.DS_Store``), hidden names (unless ``include_hidden``) and ``exclude``
patterns; the module :mod:`skills_core.server.selection` says exactly what each means. A skipped
folder is not entered; what is skipped is reported as
:class:`~skills_core.server.model.SkippedEntry` values (the topmost entry only), and is neither
published nor readable nor listed.

**Each byte is read once per scan.** A full scan reads only the files inside skill folders (a
folder is known to be one when its listing holds ``SKILL.md``, before its files are read), each
once, hashing as it reads, and keeps only ``SKILL.md`` bytes. A file larger than the total-size
limit is not read at all: any skill containing it is over the limit anyway. Digests are cached by
stat signature ``(device, inode, size, mtime, ctime)``, each file's signature and digest kept
packed as the digest index's 72-byte row (:func:`~skills_core.server.index.pack_file`), the rows
of a folder's files in one record per folder with, given an index, the folder's signature and
listing (:func:`~skills_core.server.index.pack_folder`: one bytes object per folder, none per
file); a later scan or the re-check of one skill re-reads only files whose signature changed
(and an unchanged ``SKILL.md`` whose frontmatter the catalog builder no longer knows). A file
modified within a few seconds of being hashed could keep its signature through a second write
(timestamps are coarse), so such a "racy" entry is never trusted and gets re-hashed the next
time. A write that moves no timestamp and keeps the size (through a shared writable mapping,
``mmap``) is not seen: such a file keeps its old digest in listings and ``skills/get`` (reads
serve its bytes as they are) until its signature changes (``touch`` it).

**A warm start from a digest index** (``index=``; the format and the rules of trust are in
:mod:`skills_core.server.index`). The cache of digests, the folder listings, the skill
records and the parsed ``SKILL.md`` files are loaded from the index when the source is made, so
the first scan hashes and parses only what changed since the index was written, and restores
each unchanged skill from its record rather than building it (see
:mod:`skills_core.server.catalog`); after a full scan that changed anything, the index is
written again: to a new file in the same folder, then renamed over the old one, so a reader (or
another worker of the same server writing at the same moment) always finds one whole index. The
index is read like a served file (no link followed, no special file opened, in one read), and
only when this user alone could have written it (see :mod:`skills_core.server.index_file`); an
index that is missing, unreadable, corrupt, foreign, of another format, another user's or
writable by others is treated as absent, and one found unusable only during a scan (a record's
entry that is not its skill's) makes that scan start again without it. A file of another user's
at the index's path is never replaced: this source then keeps no index. What went wrong with it
is in :attr:`FilesystemSource.index_note`; it never fails the source (the index is an
optimisation: a file planted at its path can make starts cold, never stop the server).

With an index, each folder a walk lists is recorded with its signature (taken with ``fstat``
before it is listed, so a name added during the listing moves the signature past the record).
A full scan *replays* a folder whose signature (``fstatat`` without following a link) still
equals its record: the recorded names are judged as a listing's would be, and the files among
them are looked at through their paths below the root (one ``fstatat`` each, no ``open``), so an
unchanged tree costs one system call per folder and per file. A path looked up this way could
only pass through a folder swapped for a link since its own check; what it then finds is
trusted only when its signature (device and inode included) is the recorded one, so its digest
is right, and every byte served is read again at ``resources/read`` through descriptors that
follow no link. A file that must be read in a replayed folder is opened from a descriptor of
that folder, opened name by name from the root as usual. Re-checks of one skill always list.

**Skills added or removed while serving** (:meth:`FilesystemSource.poll`). Each full scan
records every skill folder's ``SKILL.md`` with its stat signature (kept as one SHA-256 of them
all, nothing per skill: :func:`~skills_core.server._walk.structure_digest`). When asked, at most once per
``max_age_ms`` (the server's ``ttlMs``), the source walks the folders again (one open folder per
level, no file opened, only each ``SKILL.md`` stat-ed; see :mod:`skills_core.server._walk`) and
re-scans, with its cache, only when that record differs: a skill folder appeared or vanished, or a
``SKILL.md`` changed. Changes to other files of a skill show in ``skills/get`` and reads at once,
and in listings after a re-scan (or at once, when a read or ``skills/get`` finds them: the server
then re-checks the skill).

**Roots are followed as the operator named them.** A root is kept as named (absolute,
links in its name not resolved) and resolved again (:func:`~skills_core.server._fileio.resolve_root`)
at every look: each poll that looks, each scan (``SIGHUP``, ``refresh()``), each re-check. A
``current`` link switched to another release (``ln -sfn`` and a rename; a Kubernetes ConfigMap's
``..data``), or a folder replaced under the same name, is served from its new folder from that
look on (reads too), and re-scanned at the next poll, so a switch shows in listings within
``ttlMs``. A root that is itself a skill is published under the name it was given, so a switch
keeps its URIs. Links are followed only in a root's own name, never below it.

**A failure never empties the catalog.** A root that cannot be looked at (gone, not a folder,
unreadable) fails the look: :meth:`~FilesystemSource.poll` answers None (the server keeps its
catalog), :meth:`~FilesystemSource.scan` and :meth:`~FilesystemSource.recheck` raise ``OSError``
(the server keeps its catalog; the request is ``-32603``). The ``log`` given is told once, with
the root's name, until the root can be looked at again, and once more then; the next look that
succeeds serves what the root holds. A look that cannot be completed for other reasons (out of
descriptors or memory) is no change either, and :attr:`FilesystemSource.poll_note` says why.
"""

from __future__ import annotations

import os
import stat
import struct
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Final, final

from .._version import __version__
from ..entry import DEFAULT_LIMITS, Limits
from ..spec import SKILL_MD
from ._fileio import FILE_FLAGS, Roots, log_warning, read_hashing, read_only, reason_of, stat_key
from ._walk import (
    DIR_FLAGS,
    NOT_SERVED,
    SPECIAL_REASON,
    SYMLINK_REASON,
    Frame,
    RefusedError,
    Walk,
    join,
    open_below,
    problem,
    skill_md_signatures,
    structure_digest,
)
from .catalog import Catalog, CatalogBuilder, record_digest
from .index import (
    SIGNATURE_ROW,
    DigestIndex,
    DigestIndexError,
    RootIndex,
    Signature,
    decode_index,
    encode_index,
    pack_file,
    pack_folder,
    unpack_folder,
)
from .index_file import (
    MAX_INDEX_BYTES,
    UntrustedFileError,
    check_replaceable,
    read_index_file,
    write_atomically,
)
from .model import (
    DynamicSkill,
    OmittedSkill,
    ProblemCode,
    PublishedSkill,
    RootSnapshot,
    SnapshotFile,
    new_snapshot_file,
)
from .open_files import HeldFiles
from .paths import DEFAULT_SCHEME
from .selection import DEFAULT_IGNORED_NAMES, Selection
from .source import TreeSource

__all__ = ["DEFAULT_IGNORED_NAMES", "MAX_INDEX_BYTES", "FilesystemSource"]

_FILE_FLAGS: Final = FILE_FLAGS
# Looked up at each call (tests replace them here to count or fail reads).
_read_fd = read_hashing
_read_only = read_only
_stat_key = stat_key


def _packed_key(st: os.stat_result) -> bytes | None:
    """The signature as the start of a file's row (:func:`~.index.pack_file`), or None when it
    does not fit the row's integers (such a file is never cached)."""
    try:
        return SIGNATURE_ROW.pack(*_stat_key(st))
    except struct.error:
        return None


_DIR_FLAGS: Final = DIR_FLAGS  # what tests/benchmarks/bench_catalog.py walks with
#: How long after its last change a file's stat key is trusted (timestamps are coarse: 2 s on FAT).
_RACY_NS: Final = 3_000_000_000


@final
class FilesystemSource(TreeSource):
    """Skills from folders on disk (the server's only I/O).

    Example:
        >>> source = FilesystemSource(["./skills"], exclude=["drafts/"])  # doctest: +SKIP
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
        include_hidden: bool = False,
        exclude: Iterable[str] = (),
        index: str | os.PathLike[str] | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        """Serve the skills found under ``roots`` (each followed as named: see the module).

        Args:
            roots: Folders to publish; a skill's URI is its path below its root. A root that
                holds a ``SKILL.md`` is itself published as a skill, under its folder's name.
            scheme: URI scheme of the published skills (``skill`` by default; URI-01).
            limits: Per-skill limits; over-limit skills are not served (ENTRY-19).
            dynamic: Dynamic skills served alongside.
            ignore: Names skipped everywhere, even with ``include_hidden``
                (:data:`DEFAULT_IGNORED_NAMES`).
            include_hidden: Publish hidden files and folders too (``.env``, ``notes.md~``; see
                :mod:`skills_core.server.selection`).
            exclude: Glob patterns of paths below a root not to publish (see
                :mod:`skills_core.server.selection` for how they match).
            index: A digest index file to start warm from and keep up to date (see
                :mod:`skills_core.server.index`); None for none.
            log: Called with one line for the operator when a root moves to another folder,
                cannot be read (the catalog served is kept), or can be read again; paths in it
                are raw (escape them where they are shown). None: a warning of the
                ``skills_core`` logger, escaped.

        Raises:
            NotADirectoryError: a root is not a folder.
            FileNotFoundError: a root does not exist.
            ValueError: ``scheme`` is not a scheme name, or an exclude pattern is not a glob.
        """
        super().__init__(scheme=scheme, limits=limits, dynamic=dynamic)
        self._selection = Selection(include_hidden=include_hidden, exclude=exclude, ignore=ignore)
        # Per root: its path as the operator named it, the folder it led to at the last look,
        # that folder's (device, inode), and its path as a prefix (lists updated in place).
        self._where = Roots(roots, log if log is not None else log_warning)
        self._named = self._where.named
        self._roots = self._where.resolved
        self._identities = self._where.identities
        self._prefixes = self._where.prefixes
        # Per root: the name it is published under when it is itself a skill folder, else "".
        self._mounts = [
            self._mount_name(n, r) for n, r in zip(self._named, self._roots, strict=True)
        ]
        # Per root: {folder path: its record}, in memory as in the index (index.pack_folder):
        # the row (signature and raw digest, 72 bytes) of each file of the folder whose signature
        # may be trusted (not racy), and, with a digest index, the folder's own signature and
        # listing when listed. One bytes object per folder, not objects per file. A full scan
        # starts a new dict holding only the folders it saw; a re-check of one skill updates the
        # current one.
        self._caches: list[dict[str, bytes]] = [{} for _ in self._roots]
        # Per root: the skill folders the last full scan saw (what poll() compares).
        # (As its digest: see _walk.structure_digest.)
        self._structures: list[bytes] = [structure_digest({}) for _ in self._roots]
        self._looked_ns = time.monotonic_ns()
        self._index_path = None if index is None else os.path.abspath(os.fspath(index))
        #: What went wrong with the digest index, if anything (for the operator; None when fine).
        self.index_note: str | None = None
        #: Why the last look for skills added or removed failed (see :meth:`poll`); None when
        #: it did not.
        self.poll_note: str | None = None
        # Whether the cache holds what the index file does not (then the next scan writes it).
        self._unsaved = False
        if self._index_path is not None:
            self._load_index(self._index_path)
        # The read path's: the files held open.
        self._held = HeldFiles()
        weakref.finalize(self, self._held.close)

    @property
    def roots(self) -> tuple[str, ...]:
        """The roots, resolved: the folders they led to at the last look."""
        return tuple(self._roots)

    @property
    def named_roots(self) -> tuple[str, ...]:
        """The roots as the operator named them (absolute; links in them not resolved)."""
        return tuple(self._named)

    @property
    def mounts(self) -> tuple[str, ...]:
        """Per root: the name it is published under when it is itself a skill folder, else ``""``.

        Paths in snapshots, problems and omissions of such a root start with that name.
        """
        return tuple(self._mounts)

    @property
    def index_path(self) -> str | None:
        """The digest index file, as an absolute path, or None."""
        return self._index_path

    def _mount_name(self, named: str, resolved: str) -> str:
        """The name of a root (as named) whose folder holds a regular, not skipped ``SKILL.md``;
        else ``""``."""
        name = os.path.basename(named)
        if not name or self._selection.skips_path(SKILL_MD, False):
            return ""
        try:
            st = os.lstat(os.path.join(resolved, SKILL_MD))
        except OSError:
            return ""
        return name if stat.S_ISREG(st.st_mode) else ""

    # -- paths below a root ----------------------------------------------------------------------

    def _local(self, root: int, path: str) -> str | None:
        """``path`` (as snapshots spell it) relative to the root folder itself, or None."""
        mount = self._mounts[root]
        if not mount:
            return path
        if path == mount:
            return ""
        if path.startswith(mount) and path[len(mount)] == "/":
            return path[len(mount) + 1 :]
        return None

    def _open_local(self, root: int, local: str) -> int | None:
        """Open the folder ``local`` below root ``root`` without following links; None if not one."""
        try:
            fd = os.open(self._roots[root], DIR_FLAGS)
        except OSError as exc:
            if exc.errno in NOT_SERVED:
                return None
            raise
        if not local:
            return fd
        try:
            return open_below(fd, local)
        except OSError as exc:
            if exc.errno in NOT_SERVED:
                return None
            raise
        finally:
            os.close(fd)

    def _open_dir(self, root: int, path: str) -> tuple[int, str] | None:
        """Open the servable folder ``path``: ``(descriptor, local path)``, or None."""
        local = self._local(root, path)
        if local is None or self._selection.skips_path(local, True):
            return None
        fd = self._open_local(root, local)
        return None if fd is None else (fd, local)

    # -- primitives -------------------------------------------------------------------------------

    def _root_count(self) -> int:
        return len(self._roots)

    def _is_skill_folder(self, root: int, folder: str) -> bool:
        local = self._local(root, folder)
        if local is None or self._selection.skips_path(join(local, SKILL_MD), False):
            return False
        fd = self._open_local(root, local)
        if fd is None:
            return False
        try:
            st = os.stat(SKILL_MD, dir_fd=fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno in NOT_SERVED:
                return False
            raise
        finally:
            os.close(fd)
        return stat.S_ISREG(st.st_mode)

    def _read_file(self, root: int, path: str) -> bytes | None:
        opened = self._open_file(root, path)
        if opened is None:
            return None
        fd = opened[0]
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > self._builder.limits.max_total_bytes:
                return None
            return _read_only(fd, st.st_size)
        finally:
            os.close(fd)

    def _open_file(self, root: int, path: str) -> tuple[int, str] | None:
        """Walk to the servable file ``path``: ``(descriptor, local path)``, or None.

        The descriptor may be anything but a link (a FIFO is opened without blocking): check it.
        """
        local = self._local(root, path)
        if not local or self._selection.skips_path(local, False):
            return None
        folder, _, name = local.rpartition("/")
        dir_fd = self._open_local(root, folder)
        if dir_fd is None:
            return None
        try:
            return os.open(name, _FILE_FLAGS, dir_fd=dir_fd), local
        except OSError as exc:
            if exc.errno in NOT_SERVED:
                return None
            raise
        finally:
            os.close(dir_fd)

    def read_since(
        self, skill: PublishedSkill, file_path: str, version: object | None
    ) -> tuple[bytes | None, Signature | None] | None:
        """Read a file as :meth:`read` does, from a descriptor held since an earlier read if any.

        The file is looked at and read now, every time. Its descriptor is held after a read (see
        :mod:`skills_core.server.open_files`: used again only while the kernel names it at the
        same path, so no link is followed and nothing outside the root is reached), which saves
        the walk from the root, not the read: no stat signature proves a file's bytes unchanged
        (a write through a shared writable mapping, ``mmap``, may move neither its modification
        nor its change time), so the caller compares the bytes.

        Args:
            skill: The skill, as for :meth:`read`.
            file_path: The file's path below the skill, as for :meth:`read`.
            version: What an earlier call returned with the bytes of this file; not used (the
                bytes are always read), kept for the server's interface.

        Returns:
            None where :meth:`read` returns None; else ``(bytes, None)``.

        Raises:
            OSError: an unexpected error (as :meth:`read`).
        """
        root = skill.root
        if root is None:  # a dynamic skill: read it the way it says
            data = self.read(skill, file_path)
            return None if data is None else (data, None)
        key = (root, f"{skill.folder}/{file_path}")
        limit = self._builder.limits.max_total_bytes
        held = self._held.current(key)
        if held is not None:
            fd, st = held
            if st.st_size > limit:
                self._held.drop(key)
                return None
            return _read_only(fd, st.st_size), None
        opened = self._open_file(root, key[1])
        if opened is None:
            return None
        fd, local = opened
        kept = False
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                return None
            data = _read_only(fd, st.st_size)
            kept = self._held.hold(key, fd, self._prefixes[root] + local)
        finally:
            if not kept:
                os.close(fd)
        return data, None

    def close(self) -> None:
        """Close the descriptors held for reads (see :meth:`read_since`); reads go on working.

        They are closed when the source is garbage-collected too; call this to close them at once.
        """
        self._held.close()

    def _list_dir(self, root: int, path: str) -> Sequence[tuple[str, bool]] | None:
        opened = self._open_dir(root, path)
        if opened is None:
            return None
        fd, local = opened
        skip = self._selection.skip
        children: list[tuple[str, bool]] = []
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if (is_dir or entry.is_file(follow_symlinks=False)) and skip(
                        local, entry.name, is_dir
                    ) is None:
                        children.append((entry.name, is_dir))
        finally:
            os.close(fd)
        return children

    def _snapshot(self, root: int, folder: str) -> RootSnapshot:
        full = not folder
        mount = self._mounts[root]
        opened = self._open_dir(root, folder or mount)
        if opened is None:
            if full:  # a root gone is no reason to serve nothing: fail the scan (see poll)
                raise self._where.gone(root)
            return RootSnapshot()
        fd, _ = opened
        old = self._caches[root]
        recording = self._index_path is not None
        walk = Walk(
            root=root,
            now=time.time_ns(),
            old=old,
            new={} if full else old,
            strip=len(mount) + 1 if mount else 0,
            start_fd=fd if full else -1,
            record=recording,
            replay=full and recording,
        )
        # Depth first, one open folder per level (None for a folder replayed from its record):
        # frames are (fd, path, in_skill, subfolders). The first frame's descriptor, the start
        # folder's, stays open to the end.
        stack: list[Frame] = []
        try:
            stack.append(self._enter_or_close(walk, fd, folder or mount, False))
            while stack:
                dir_fd, path, in_skill, pending = stack[-1]
                if not pending:
                    stack.pop()
                    if dir_fd is not None:
                        os.close(dir_fd)
                    continue
                name = pending.pop()
                frame = self._child(
                    walk, dir_fd, f"{path}/{name}" if path else name, name, in_skill
                )
                if frame is None:
                    continue
                if frame[3]:
                    stack.append(frame)
                elif frame[0] is not None:  # no subfolder to visit: done with it already
                    os.close(frame[0])
        finally:
            for frame in stack:
                if frame[0] is not None:
                    os.close(frame[0])
        if full:
            self._caches[root] = walk.new
            self._structures[root] = structure_digest(walk.skill_mds)
        self._unsaved = self._unsaved or walk.changed or len(walk.new) != len(old)
        return RootSnapshot(files=walk.files, problems=walk.problems, skipped=walk.skipped)

    def _child(
        self, walk: Walk, parent_fd: int | None, path: str, name: str, in_skill: bool
    ) -> Frame | None:
        """The frame of a subfolder: replayed from its record when its signature is unchanged,
        else opened (from its parent's descriptor, or down from the start folder's) and listed."""
        if walk.replay:
            record = walk.old.get(path)
            if record is not None:
                try:
                    st = (
                        os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
                        if parent_fd is not None
                        else os.stat(
                            path[walk.strip :], dir_fd=walk.start_fd, follow_symlinks=False
                        )
                    )
                except OSError:
                    pass  # listed for real below, which reports what is wrong
                else:
                    signature = _packed_key(st)
                    if signature is not None and record.startswith(signature):
                        _, listing, rows = unpack_folder(record)
                        if listing is not None:
                            return self._process(
                                walk,
                                None,
                                path,
                                in_skill,
                                listing,
                                signature=signature,
                                old=(record, rows),
                                replayed=True,
                            )
        try:
            child = (
                os.open(name, DIR_FLAGS, dir_fd=parent_fd)
                if parent_fd is not None
                else open_below(walk.start_fd, path[walk.strip :])
            )
        except OSError as exc:
            walk.problems.append(problem(walk.root, path, exc))
            return None
        return self._enter_or_close(walk, child, path, in_skill)

    def _enter_or_close(self, walk: Walk, fd: int, path: str, in_skill: bool) -> Frame:
        """:meth:`_enter`, closing ``fd`` if it fails (once on the stack, the walk closes it)."""
        try:
            return self._enter(walk, fd, path, in_skill)
        except BaseException:
            os.close(fd)
            raise

    def _enter(self, walk: Walk, fd: int, path: str, in_skill: bool) -> Frame:
        """List one open folder (or replay its record, when its signature is unchanged)."""
        signature: bytes | None = None
        record = walk.old.get(path)
        if walk.record:
            st = os.fstat(fd)
            signature = _packed_key(st)
            if (
                walk.replay
                and record is not None
                and signature is not None
                and record.startswith(signature)
            ):
                _, recorded, rows = unpack_folder(record)
                if recorded is not None:
                    return self._process(
                        walk,
                        fd,
                        path,
                        in_skill,
                        recorded,
                        signature=signature,
                        old=(record, rows),
                        replayed=True,
                    )
            mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
            if walk.now - (mtime if mtime > ctime else ctime) <= _RACY_NS:
                signature = None  # racy: listed again next time
        listing: list[str] = []
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        listing.append("d" + entry.name)
                    elif entry.is_file(follow_symlinks=False):
                        listing.append("f" + entry.name)
                    elif entry.is_symlink():
                        listing.append("l" + entry.name)
                    else:
                        listing.append("o" + entry.name)
        except OSError as exc:
            walk.problems.append(problem(walk.root, path, exc))
            if record is not None:  # nothing of it is kept: its files are not looked at
                walk.changed = True
                walk.new.pop(path, None)
            return fd, path, in_skill, []
        old = (record, unpack_folder(record)[2]) if record is not None else None
        return self._process(walk, fd, path, in_skill, listing, signature=signature, old=old)

    def _process(
        self,
        walk: Walk,
        fd: int | None,
        path: str,
        in_skill: bool,
        listing: Sequence[str],
        *,
        signature: bytes | None,
        old: tuple[bytes, dict[str, bytes]] | None,
        replayed: bool = False,
    ) -> Frame:
        """Judge the names of one folder's listing, snapshot its files if it is in a skill, keep
        the folder's record, and return its frame (``fd`` is None for a folder replayed from its
        record). ``signature`` is the folder's, to record with its listing (None: the listing is
        not recorded); ``old`` its record before and the file rows in it; ``replayed`` whether
        the listing is that record's (its signature unchanged)."""
        regular: list[str] = []
        folders: list[str] = []
        selection = self._selection
        skip = selection.skip
        local = path[walk.strip :]
        has_skill_md = False
        for item in listing:
            kind = item[0]
            name = item[1:]
            is_dir = kind == "d"
            code = skip(local, name, is_dir)
            if code is not None:
                walk.skip(path, name, code, selection.reason(code, local, name, is_dir))
            elif is_dir:
                folders.append(name)
            elif kind == "f":
                regular.append(name)
                if name == SKILL_MD:
                    has_skill_md = True
            elif kind == "l":
                walk.refuse(path, name, ProblemCode.SYMLINK, SYMLINK_REASON)
            else:
                walk.refuse(path, name, ProblemCode.SPECIAL_FILE, SPECIAL_REASON)
        in_skill = in_skill or has_skill_md
        rows: dict[str, bytes] = {}
        if in_skill:
            files = walk.files
            walk.rows = {} if old is None else old[1]
            walk.new_rows = rows
            for name in regular:
                try:
                    files.append(self._file(walk, fd, path, name))
                except RefusedError as refused:
                    walk.refuse(path, name, refused.code, refused.reason)
                except OSError as exc:
                    walk.problems.append(problem(walk.root, join(path, name), exc))
        if replayed and old is not None and rows == old[1]:
            walk.new[path] = old[0]  # the very record it had: a warm walk packs nothing
        elif signature is None and not rows:
            if old is not None:  # nothing of it to keep now
                walk.changed = True
                walk.new.pop(path, None)
        else:
            record = pack_folder(signature, None if signature is None else listing, rows)
            if old is not None and record == old[0]:
                record = old[0]
            else:
                walk.changed = True
            walk.new[path] = record
        folders.sort(reverse=True)
        return fd, path, in_skill, folders

    def _file(self, walk: Walk, dir_fd: int | None, folder: str, name: str) -> SnapshotFile:
        """Size and digest of one regular file (bytes too for SKILL.md), from the cache if valid.

        ``dir_fd`` is its folder's descriptor, or None when the folder was replayed: the file is
        then looked at through its path below the start folder, and opened (only when it must
        be read) from a descriptor of its folder opened for it.
        """
        path = f"{folder}/{name}" if folder else name
        keep = name == SKILL_MD
        cached = walk.rows.get(name)
        if cached is not None:
            st = (
                os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                if dir_fd is not None
                else os.stat(path[walk.strip :], dir_fd=walk.start_fd, follow_symlinks=False)
            )
            signature = _packed_key(st)
            if signature is not None and cached.startswith(signature):
                digest = "sha256:" + cached[40:].hex()
                # An unchanged SKILL.md need not be read either when its verdict is known.
                if not keep or self._builder.knows(
                    digest, folder.rpartition("/")[2], root=walk.root, folder=folder
                ):
                    walk.new_rows[name] = cached
                    if keep:
                        walk.skill_mds[path] = signature
                    return new_snapshot_file(path, st.st_size, digest, None)
        if dir_fd is not None:
            return self._read_file_at(walk, dir_fd, path, name, cached)
        opened = open_below(walk.start_fd, folder[walk.strip :])
        try:
            return self._read_file_at(walk, opened, path, name, cached)
        finally:
            os.close(opened)

    def _read_file_at(
        self, walk: Walk, dir_fd: int, path: str, name: str, cached: bytes | None
    ) -> SnapshotFile:
        """Read and hash the file ``name`` of the folder ``dir_fd`` (at ``path``); cache it."""
        keep = name == SKILL_MD
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise RefusedError(ProblemCode.SPECIAL_FILE, SPECIAL_REASON)
            if st.st_size > self._builder.limits.max_total_bytes:
                # Any skill holding this file is over the limit and never published: skip the hash.
                if keep:
                    walk.skill_mds[path] = _packed_key(st)
                return new_snapshot_file(path, st.st_size, "", None)
            size, digest, data = _read_fd(fd, st.st_size, keep)
        finally:
            os.close(fd)
        mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
        record = (
            pack_file(_stat_key(st), digest)
            if size == st.st_size and walk.now - (mtime if mtime > ctime else ctime) > _RACY_NS
            else None
        )
        if record is not None:
            walk.new_rows[name] = record
            if keep:
                walk.skill_mds[path] = record[:40]
        elif keep:  # racy: hashed again next time (and not kept in a re-checked cache either)
            walk.skill_mds[path] = None
        return new_snapshot_file(path, size, digest, data)

    # -- skills added or removed ------------------------------------------------------------------

    def poll(self, max_age_ms: int) -> Catalog | None:
        """Return a new :meth:`scan` when skills may have been added or removed, else None.

        At most once per ``max_age_ms``, each root is resolved again as named (a root switched to
        another folder is re-scanned there), the folders are walked (no file is opened; each
        ``SKILL.md`` is stat-ed) and compared with what the last full scan saw. A look or a
        re-scan that fails (a root gone or unreadable, out of descriptors or memory) changes
        nothing: None is returned (the server keeps its catalog), :attr:`poll_note` says why, the
        ``log`` is told once, and the next poll looks again.
        """
        try:
            catalog = super().poll(max_age_ms)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            if exc.filename is not None:
                reason = f"{exc.filename}: {reason}"
            self.poll_note = (
                f"skills added or removed could not be looked for ({reason}); the last "
                "catalog is kept and the folders are looked at again at the next poll"
            )
            return None
        return catalog

    def _changed(self, max_age_ms: int) -> bool:
        now = time.monotonic_ns()
        if now - self._looked_ns < max_age_ms * 1_000_000:
            return False
        self._looked_ns = now
        changed = self._follow()
        for root in range(len(self._roots)):  # every root: a failure anywhere raises (see poll)
            mount = self._mounts[root]
            opened = self._open_dir(root, mount)
            if opened is None:
                raise self._where.gone(root)
            found = skill_md_signatures(
                opened[0], mount, len(mount) + 1 if mount else 0, self._selection.skip
            )
            changed = changed or structure_digest(found) != self._structures[root]
        self.poll_note = None
        self._where.recovered()
        return changed

    def recheck(self, uri: str) -> PublishedSkill | OmittedSkill | None:
        """Return the skill at ``uri`` as it is now (see
        :meth:`~skills_core.server.source.TreeSource.recheck`), in its root as named now.

        A root found switched to another folder makes the next :meth:`poll` re-scan at once.

        Raises:
            OSError: a root cannot be resolved (gone, not a folder): the catalog is kept.
        """
        self._follow()
        return super().recheck(uri)

    def scan(self) -> Catalog:
        """Return the catalog of every root and dynamic skill (a full walk), each root resolved
        again as named first.

        With a digest index, writes the index afterwards when the scan found anything it did not
        hold (see :attr:`index_note` if that fails).

        Raises:
            OSError: a root is gone, not a folder or cannot be read; nothing is served empty for
                it (a server keeps the catalog it had).
        """
        self._looked_ns = time.monotonic_ns()
        self._follow()
        try:
            catalog = super().scan()
        except DigestIndexError as exc:  # found unusable only now: start again, cold
            assert self._index_path is not None
            self.index_note = (
                f"the digest index {self._index_path} was ignored and is rebuilt: {exc.reason}"
            )
            self._forget_index()
            catalog = super().scan()
        except OSError as exc:
            self._where.failed(exc)
            raise
        self._where.recovered()
        if self._index_path is not None:
            if self._builder.new_records:
                self._unsaved = True
                self._builder.new_records = False
            if self._unsaved:
                self._save_index(self._index_path)
        return catalog

    # -- roots followed as named --------------------------------------------------------------

    def _follow(self) -> bool:
        """Resolve every root again as named (see :class:`~skills_core.server._fileio.Roots`);
        True when one now leads to another folder: served from there on, re-scanned at the next
        :meth:`poll`. The file caches stay: their signatures hold the inode, so a file of the new
        folder is never taken for one of the old.

        Raises:
            OSError: a root cannot be resolved (logged once).
        """
        moved = self._where.follow()
        if moved:  # a descriptor held is of a file of the old folder: never read it again
            self._held.close()
        for root in moved:
            self._mounts[root] = self._mount_name(self._named[root], self._roots[root])
            self._unsaved = True
            self._stale = True
        return bool(moved)

    # -- the digest index -------------------------------------------------------------------------

    def _load_index(self, path: str) -> None:
        """Seed the caches from the index at ``path``; anything wrong leaves them empty."""
        self._builder.learn({})  # keep parsed SKILL.md files, to write them
        try:
            data = read_index_file(path)
            if data is None:  # none yet: the first scan writes it
                self._unsaved = True
                return
            index = decode_index(data)
        except (OSError, DigestIndexError) as exc:
            # Another user's file is left alone (and this source keeps no index); anything
            # else is replaced by a whole index of this user's, mode 0600.
            foreign = isinstance(exc, UntrustedFileError) and exc.foreign
            fate = "is not written" if foreign else "is rebuilt"
            self.index_note = f"the digest index {path} was ignored and {fate}: {reason_of(exc)}"
            self._unsaved = True
            return
        sections = {(r.path, r.device, r.inode, r.mount): r for r in index.roots}
        restorable: list[tuple[int, RootIndex]] = []
        for number, root in enumerate(self._roots):
            section = sections.get((root, *self._identities[number], self._mounts[number]))
            if section is None:
                self._unsaved = True  # a root the index does not know (or knows as another)
                continue
            self._caches[number] = dict(section.records or {})
            restorable.append((number, section))
        if index.library != __version__:
            self._unsaved = True  # another parser wrote it: parse again, and record anew
            return
        self._builder.learn(index.frontmatter)
        limits = self._builder.limits
        if (index.scheme, index.limits) != (
            self._builder.scheme,
            (limits.max_resources, limits.max_total_bytes),
        ):
            self._unsaved = True  # records of another catalog: built again, and recorded anew
            return
        for number, section in restorable:
            self._builder.restore(number, section.skills)

    def _forget_index(self) -> None:
        """Drop everything the digest index gave: the next scan hashes and parses everything."""
        self._caches = [{} for _ in self._roots]
        self._builder = CatalogBuilder(scheme=self._builder.scheme, limits=self._builder.limits)
        self._builder.learn({})
        self._unsaved = True

    def _save_index(self, path: str) -> None:
        """Write the trusted part of the caches, the skill records and the parsed SKILL.md files
        (each once: those of the records are in them), atomically."""
        sections: list[RootIndex] = []
        skill_mds: set[str] = set()
        in_records: set[str | None] = set()
        for number, root in enumerate(self._roots):
            folder_records = self._caches[number]
            for record in folder_records.values():
                if b"SKILL.md" in record:  # (a cheap look first: most folders hold none)
                    row = unpack_folder(record)[2].get(SKILL_MD)
                    if row is not None:
                        skill_mds.add("sha256:" + row[40:].hex())
            device, inode = self._identities[number]
            records = self._builder.records_for(number)
            in_records.update(map(record_digest, records.values()))
            sections.append(
                RootIndex(
                    path=root,
                    device=device,
                    inode=inode,
                    mount=self._mounts[number],
                    records=folder_records,
                    skills=records,
                )
            )
        limits = self._builder.limits
        index = DigestIndex(
            library=__version__,
            scheme=self._builder.scheme,
            limits=(limits.max_resources, limits.max_total_bytes),
            roots=tuple(sections),
            # (Those of the records are in them: the builder need not keep them either.)
            frontmatter=self._builder.parsed_for(skill_mds.difference(in_records)),
        )
        try:
            check_replaceable(path)  # before encoding: another user's file is left alone
            write_atomically(path, encode_index(index))
        except UntrustedFileError as exc:
            if self.index_note is None:
                self.index_note = f"the digest index {path} is not written: {reason_of(exc)}"
            return
        except OSError as exc:
            self.index_note = f"the digest index {path} could not be written: {reason_of(exc)}"
            return
        self._unsaved = False
