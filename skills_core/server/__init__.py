"""The server side of the Skills extension: a catalog from folders, and sans-IO request handling.

Theory of operation
-------------------
A server author points a source at skills and wraps it in a server; a transport author reads
each request with its own framing and hands the request's method and params to the server's one
request path, then sends what comes back under the request's id::

    server = server_from_roots(["./skills"], cursor_key=os.urandom(32))
    connection = server.connection()               # one per client (or per HTTP request)
    answer = connection.answer(method, params)     # a result, an EncodedResult or an ErrorObject
    data = endpoint.send_answer(request_id, answer)

* :mod:`~skills_core.server.model` (pure): the value objects (published and omitted skills,
  snapshots, dynamic skills).
* :mod:`~skills_core.server.catalog` (pure): which folders are published skills, their entries,
  and why others are left out.
* :mod:`~skills_core.server.source` (pure): the :class:`SkillSource` protocol and
  :class:`MemorySource`.
* :mod:`~skills_core.server.filesystem`: :class:`FilesystemSource`, the server's only I/O.
* :mod:`~skills_core.server.options` (pure): :class:`ServerOptions`, the settings.
* :mod:`~skills_core.server.handler` (pure): :class:`SkillsServer` and :class:`ServerConnection`,
  the one request path.
* :mod:`~skills_core.server.paths`, :mod:`~skills_core.server.cursors`,
  :mod:`~skills_core.server.mime`: URI mapping, pagination cursors, MIME types.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from .._lazy import lazy_exports
from ..entry import DEFAULT_LIMITS, Limits
from .catalog import Catalog as Catalog
from .catalog import CatalogBuilder as CatalogBuilder
from .filesystem import DEFAULT_IGNORED_NAMES as DEFAULT_IGNORED_NAMES
from .filesystem import FilesystemSource as FilesystemSource
from .model import DynamicSkill as DynamicSkill
from .model import OmitCode as OmitCode
from .model import OmittedSkill as OmittedSkill
from .model import ProblemCode as ProblemCode
from .model import PublishedSkill as PublishedSkill
from .model import RootSnapshot as RootSnapshot
from .model import SkipCode as SkipCode
from .model import SkippedEntry as SkippedEntry
from .model import SnapshotFile as SnapshotFile
from .model import SourceProblem as SourceProblem
from .paths import DEFAULT_SCHEME as DEFAULT_SCHEME
from .source import MemorySource as MemorySource
from .source import SkillSource as SkillSource
from .source import TreeSource as TreeSource

if TYPE_CHECKING:
    from .changes import ChangePacer as ChangePacer
    from .changes import SkillChanges as SkillChanges
    from .cursors import CursorCodec as CursorCodec
    from .handler import PendingRead as PendingRead
    from .handler import ServerConnection as ServerConnection
    from .handler import SkillsServer as SkillsServer
    from .mime import mime_type_for as mime_type_for
    from .options import DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE
    from .options import DEFAULT_SERVER_INFO as DEFAULT_SERVER_INFO
    from .options import DEFAULT_TTL_MS as DEFAULT_TTL_MS
    from .options import ServerOptions as ServerOptions

# The request handler and its settings load on first use (PEP 562), so that a command that needs
# only the catalog and the filesystem source (``manifest``, ``validate``) does not import them.
_LAZY: dict[str, str] = {
    "SkillChanges": ".changes",
    "ChangePacer": ".changes",
    "CursorCodec": ".cursors",
    "PendingRead": ".handler",
    "ServerConnection": ".handler",
    "SkillsServer": ".handler",
    "mime_type_for": ".mime",
    "DEFAULT_PAGE_SIZE": ".options",
    "DEFAULT_SERVER_INFO": ".options",
    "DEFAULT_TTL_MS": ".options",
    "ServerOptions": ".options",
}


if not TYPE_CHECKING:  # type checkers see the imports above; a typo stays a type error
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)


__all__ = [
    # catalog
    "Catalog",
    "CatalogBuilder",
    "DynamicSkill",
    "OmitCode",
    "OmittedSkill",
    "ProblemCode",
    "PublishedSkill",
    "RootSnapshot",
    "SnapshotFile",
    "SourceProblem",
    "SkipCode",
    "SkippedEntry",
    # sources
    "SkillSource",
    "TreeSource",
    "MemorySource",
    "FilesystemSource",
    "DEFAULT_IGNORED_NAMES",
    # handling
    "SkillsServer",
    "ServerConnection",
    "ServerOptions",
    "PendingRead",
    "server_from_roots",
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_TTL_MS",
    "DEFAULT_SERVER_INFO",
    "DEFAULT_SCHEME",
    # changes pushed
    "SkillChanges",
    "ChangePacer",
    # helpers
    "CursorCodec",
    "mime_type_for",
]


class _PathLike(Protocol):
    """A path object (``os.PathLike[str]``, such as a ``pathlib.Path``), named without ``os``."""

    def __fspath__(self) -> str:
        """The path as a string."""
        ...


def server_from_roots(
    roots: Sequence[str | _PathLike],
    *,
    cursor_key: bytes,
    options: ServerOptions | None = None,
    scheme: str = DEFAULT_SCHEME,
    limits: Limits = DEFAULT_LIMITS,
    ignore: Iterable[str] = DEFAULT_IGNORED_NAMES,
    include_hidden: bool = False,
    exclude: Iterable[str] = (),
    index: str | _PathLike | None = None,
    log: Callable[[str], None] | None = None,
) -> SkillsServer:
    """Return a :class:`SkillsServer` publishing every skill under ``roots`` (what ``serve`` runs).

    Args:
        roots: Folders to publish, or skill folders themselves (see :class:`FilesystemSource`).
        cursor_key: Secret for pagination cursors, at least 16 bytes.
        options: The server's settings; the defaults when ``None``.
        scheme: URI scheme of the published skills.
        limits: Per-skill limits; over-limit skills are not served.
        ignore: Names skipped everywhere.
        include_hidden: Publish hidden files and folders too
            (:mod:`skills_core.server.selection` says what "hidden" means).
        exclude: Globs of paths not to publish (see :mod:`skills_core.server.selection`).
        index: A digest index file to start warm from (see :mod:`skills_core.server.index`).
        log: Where the source tells the operator that a root moved, cannot be read (the catalog
            is kept) or can be again; by default the ``skills_core`` logger (see
            :class:`FilesystemSource`).

    Raises:
        NotADirectoryError: a root is not a folder.
        FileNotFoundError: a root does not exist.
        ValueError: a setting is out of range, or an exclude pattern is not a glob.
    """
    from .handler import SkillsServer  # noqa: PLC0415 (loaded on first use)

    source = FilesystemSource(
        roots,
        scheme=scheme,
        limits=limits,
        ignore=ignore,
        include_hidden=include_hidden,
        exclude=exclude,
        index=index,
        log=log,
    )
    return SkillsServer(source, cursor_key=cursor_key, options=options)
