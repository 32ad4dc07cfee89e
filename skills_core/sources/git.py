"""Skills from a commit of a local git repository, through the ``git`` command.

Theory of operation
-------------------
``git:PATH[@REF]`` serves what ``serve`` would serve from a checkout of the commit ``REF``
names (``HEAD`` by default) in the repository at ``PATH``, bare or not. Nothing is checked out:

* the commit is ``git rev-parse --verify REF^{commit}``;
* its tree is ``git ls-tree -r -z --full-tree -l``: every path with its mode, object id and size.
  It is judged as a folder's walk judges names (:class:`~skills_core.server.selection.Selection`:
  ignored, hidden and excluded names skipped), symbolic links (mode ``120000``) and submodules
  (a commit in the tree) are refused as a folder's links and special files are, and the files
  below each skill folder become the snapshot the catalog builder checks by the folder rules;
* file bytes come from one long-lived ``git cat-file --batch`` process, by object id.

**Digests are kept by object id**: a blob's SHA-256 is computed the first time the blob is met,
so a new commit costs reading only the blobs that changed (and each ``SKILL.md`` whose verdict
the builder does not know). Every read is still checked against the SHA-256 its entry publishes
before it is served (:class:`~skills_core.sources.store.StoreSource`).

**A moving ref** is resolved again by a refresher thread every ``interval`` seconds; a new commit
is snapshotted and checked in that thread, and swapped in whole at the next listing. The ref is
the truth: when an operator moves it back, the replica follows it (each commit the replica moves
to gets the next local generation). Remote repositories are the operator's ``git fetch`` (a cron
line, or a ``post-receive`` hook on the repository the replicas read).

Why the ``git`` command rather than a library: it is on every machine that has repositories, it
reads every object format, pack and extension the repository's own git wrote (a library lags
behind: SHA-256 repositories, partial clones, new index and pack formats), and two commands cover
what is needed. ``cat-file --batch`` keeps the cost of a read to one round trip on a pipe.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Iterable
from typing import IO, Final, final

from ..digest import compute_digest
from ..server.catalog import CatalogBuilder
from ..server.model import (
    ProblemCode,
    RootSnapshot,
    SkippedEntry,
    SnapshotFile,
    SourceProblem,
)
from ..server.selection import DEFAULT_IGNORED_NAMES, Selection
from ..spec import SKILL_MD
from ._background import CachingFetcher, Refresher, refresh_interval
from .store import BlobError, StoreSource, StoreState, state_from_snapshot
from .urls import GitURL

__all__ = ["GitError", "GitRepository", "open_git_source"]

_SKILL_MD_SUFFIX: Final = "/" + SKILL_MD
_SYMLINK_REASON: Final = "is a symbolic link; links are never followed or served"
_SUBMODULE_REASON: Final = "is a submodule (another repository's commit); never served"
#: Seconds any one git command may take before it is reported as failed.
_TIMEOUT: Final = 60.0


class GitError(Exception):
    """The repository cannot be read: not a repository, no such ref, or git failed.

    Attributes:
        message: One line for people.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@final
class GitRepository:
    """A local repository, read through ``git`` (see the module docstring).

    Args:
        path: The repository (a working tree or a bare repository).

    Raises:
        GitError: ``git`` is not installed, or ``path`` is not a repository.
    """

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self._batch: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        if not os.path.isdir(self.path):
            raise GitError(f"{path}: no such folder")
        self._git("rev-parse", "--git-dir")

    def _git(self, *args: str) -> bytes:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        try:
            done = subprocess.run(  # noqa: S603 - fixed arguments, no shell
                ["git", "-C", self.path, *args],  # noqa: S607 - git from PATH, as its users run it
                capture_output=True,
                timeout=_TIMEOUT,
                env=env,
                check=False,
            )
        except FileNotFoundError:
            raise GitError("git: the git command is not installed") from None
        except subprocess.TimeoutExpired:
            raise GitError(f"{self.path}: git {args[0]} took over {_TIMEOUT:.0f} s") from None
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = lines[0] if lines else f"exit status {done.returncode}"
            raise GitError(f"{self.path}: git {args[0]} failed: {detail[:300]}")
        return done.stdout

    def resolve(self, ref: str) -> str:
        """The commit id ``ref`` names now.

        Raises:
            GitError: it names no commit.
        """
        try:
            out = self._git("rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
        except GitError:
            raise GitError(f"{self.path}: {ref!r} names no commit") from None
        return out.decode("ascii").strip()

    def tree(self, commit: str) -> list[tuple[str, str, str, int, str]]:
        """``(mode, type, object id, size, path)`` of every entry of ``commit``'s tree."""
        out = self._git("ls-tree", "-r", "-z", "--full-tree", "-l", commit)
        entries = []
        for item in out.split(b"\0"):
            if not item:
                continue
            head, _, raw_path = item.partition(b"\t")
            mode, kind, oid, size = head.decode("ascii").split()
            path = raw_path.decode("utf-8", "surrogateescape")
            entries.append((mode, kind, oid, int(size) if size.isdigit() else -1, path))
        return entries

    def read(self, oid: str) -> bytes:
        """The bytes of the blob ``oid`` (one long-lived ``git cat-file --batch``).

        Raises:
            GitError: git failed, or there is no such blob.
        """
        with self._lock:
            for attempt in range(2):
                batch = self._batch
                if batch is None or batch.poll() is not None:
                    batch = self._batch = self._start_batch()
                assert batch.stdin is not None
                assert batch.stdout is not None
                try:
                    batch.stdin.write(oid.encode("ascii") + b"\n")
                    batch.stdin.flush()
                    header = batch.stdout.readline().split()
                    if len(header) != 3 or header[1] != b"blob":
                        raise GitError(f"{self.path}: no blob {oid}")
                    return _read_exactly(batch.stdout, int(header[2]) + 1)[:-1]
                except (OSError, ValueError):
                    self._stop_batch()
                    if attempt:
                        raise GitError(f"{self.path}: git cat-file failed") from None
            raise AssertionError("unreachable")

    def _start_batch(self) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(  # noqa: S603 - fixed arguments, no shell
                ["git", "-C", self.path, "cat-file", "--batch"],  # noqa: S607
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            )
        except OSError as exc:
            raise GitError(f"{self.path}: cannot start git cat-file ({exc.strerror})") from None

    def _stop_batch(self) -> None:
        batch, self._batch = self._batch, None
        if batch is not None:
            for pipe in (batch.stdin, batch.stdout):
                if pipe is not None:
                    pipe.close()
            batch.kill()
            batch.wait()

    def close(self) -> None:
        """Stop the ``cat-file`` process."""
        with self._lock:
            self._stop_batch()


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks = []
    while size > 0:
        chunk = stream.read(size)
        if not chunk:
            raise ValueError("git cat-file ended early")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


@final
class _Commits:
    """Snapshots of commits, with digests kept by object id (the refresher's and the reader's)."""

    def __init__(
        self,
        repository: GitRepository,
        url: GitURL,
        selection: Selection,
        builder: CatalogBuilder,
        log: Callable[[str], None],
    ) -> None:
        self.repository = repository
        self.url = url
        self.selection = selection
        self.builder = builder
        self.log = log
        self.digests: dict[str, str] = {}  # blob id -> sha256 digest
        self.blobs: dict[str, str] = {}  # sha256 digest -> blob id (current and previous)
        self.commit: str | None = None
        self.generation = 0
        self.failing: str | None = None
        self.source: StoreSource | None = None

    def state(self, commit: str) -> StoreState:
        snapshot, blobs = self._snapshot(commit)
        self.blobs = {**self.blobs, **blobs} if len(self.blobs) < 4 * len(blobs) + 1024 else blobs
        self.generation += 1
        self.commit = commit
        return state_from_snapshot(
            snapshot,
            self.builder,
            generation=self.generation,
            label=f"commit {commit[:12]} of {self.url}",
        )

    def _snapshot(self, commit: str) -> tuple[RootSnapshot, dict[str, str]]:
        entries = self.repository.tree(commit)
        skipped: list[SkippedEntry] = []
        problems: list[SourceProblem] = []
        kept: list[tuple[str, str, int, str]] = []  # (mode, oid, size, path)
        skipped_dirs: set[str] = set()
        for mode, kind, oid, size, path in entries:
            if self._skipped(path, kind == "tree", skipped, skipped_dirs):
                continue
            if kind == "commit":
                problems.append(
                    SourceProblem(
                        root=0, path=path, code=ProblemCode.SPECIAL_FILE, reason=_SUBMODULE_REASON
                    )
                )
            elif mode == "120000":
                problems.append(
                    SourceProblem(
                        root=0, path=path, code=ProblemCode.SYMLINK, reason=_SYMLINK_REASON
                    )
                )
            elif kind == "blob":
                kept.append((mode, oid, size, path))
        skill_folders = {
            path[: -len(_SKILL_MD_SUFFIX)]
            for _, _, _, path in kept
            if path.endswith(_SKILL_MD_SUFFIX)
        }
        files: list[SnapshotFile] = []
        blobs: dict[str, str] = {}
        digests = self.digests
        for _, oid, size, path in kept:
            if not _inside(path, skill_folders):
                continue
            is_skill_md = path.endswith(_SKILL_MD_SUFFIX)
            digest = digests.get(oid)
            data: bytes | None = None
            if (
                digest is None
                or (
                    is_skill_md
                    and not self.builder.knows(
                        digest,
                        path[: -len(_SKILL_MD_SUFFIX)].rpartition("/")[2],
                        root=0,  # the one root this source builds
                        folder=path[: -len(_SKILL_MD_SUFFIX)],
                    )
                )
            ):
                data = self.repository.read(oid)
                digest = digests[oid] = compute_digest(data)
            files.append(SnapshotFile(path, size, digest, data if is_skill_md else None))
            blobs[digest] = oid
        return RootSnapshot(files=files, problems=problems, skipped=skipped), blobs

    def _skipped(
        self, path: str, is_dir: bool, skipped: list[SkippedEntry], skipped_dirs: set[str]
    ) -> bool:
        names = path.split("/")
        folder = ""
        for depth, name in enumerate(names, 1):
            here = f"{folder}/{name}" if folder else name
            if here in skipped_dirs:
                return True
            last = depth == len(names)
            code = self.selection.skip(folder, name, is_dir or not last)
            if code is not None:
                skipped.append(
                    SkippedEntry(
                        root=0,
                        path=here,
                        code=code,
                        reason=self.selection.reason(code, folder, name, is_dir or not last),
                    )
                )
                if not last:
                    skipped_dirs.add(here)
                return True
            folder = here
        return False

    def check(self) -> None:
        """Resolve the ref again; offer the new commit's state (the refresher's thread)."""
        try:
            commit = self.repository.resolve(self.url.ref)
            if commit == self.commit:
                if self.failing is not None:
                    self.log(f"{self.url} resolves again")
                    self.failing = None
                return
            state = self.state(commit)
        except GitError as exc:
            if self.failing is None:
                self.log(f"{exc.message}; still serving commit {(self.commit or '')[:12]}")
            self.failing = exc.message
            return
        self.failing = None
        assert self.source is not None
        self.source.offer(state)

    def fetch(self, digest: str, size: int) -> bytes:
        oid = self.blobs.get(digest)
        if oid is None:
            raise BlobError(f"{self.url}", f"no blob of {self.url} has the digest {digest}")
        try:
            return self.repository.read(oid)
        except GitError as exc:
            raise BlobError(f"blob {oid} of {self.url}", exc.message) from None

    def describe(self, digest: str) -> str:
        return f"blob {self.blobs.get(digest, '?')} of {self.url}"


def _inside(path: str, folders: set[str]) -> bool:
    """Whether ``path`` is below one of ``folders``."""
    index = path.find("/")
    while index != -1:
        if path[:index] in folders:
            return True
        index = path.find("/", index + 1)
    return False


def open_git_source(
    url: GitURL,
    *,
    include_hidden: bool = False,
    exclude: Iterable[str] = (),
    ignore: Iterable[str] = DEFAULT_IGNORED_NAMES,
    ttl_ms: int = 300_000,
    refresh: bool = True,
    log: Callable[[str], None] = lambda message: None,
) -> StoreSource:
    """A source serving the skills of the commit ``url`` names, following its ref.

    Args:
        url: The repository and the ref.
        include_hidden, exclude, ignore: What is published, as for a folder
            (:class:`~skills_core.server.selection.Selection`).
        ttl_ms: The server's ``ttlMs``: the ref is resolved again within it.
        refresh: Follow the ref in a background thread (stopped by ``close()``).
        log: Where to say what the operator should know.

    Raises:
        GitError: the repository or the ref cannot be read.
        ValueError: an exclude pattern is not a glob.
    """
    repository = GitRepository(url.path)
    selection = Selection(include_hidden=include_hidden, exclude=exclude, ignore=ignore)
    commits = _Commits(repository, url, selection, CatalogBuilder(), log)
    state = commits.state(repository.resolve(url.ref))
    fetcher = CachingFetcher(commits.fetch, commits.describe)
    refresher: Refresher | None = None
    if refresh:
        refresher = Refresher(
            commits.check, refresh_interval(ttl_ms), name=f"skills-core {url}", log=log
        )

    def close() -> None:
        if refresher is not None:
            refresher.close()
        repository.close()

    source = StoreSource(state, fetcher, log=log, close=close)
    commits.source = source
    if refresher is not None:
        refresher.start()
    return source
