"""The server side of the Skills extension: a catalog from folders, and sans-IO request handling.

Theory of operation
-------------------
A server author points a source at skills and wraps it in a server; a transport author feeds the
server's connections decoded JSON-RPC messages and sends back what they return::

    server = server_from_roots(["./skills"], cursor_key=os.urandom(32))
    connection = server.connection()
    response = connection.handle(request)        # a dict, or None for a notification

* :mod:`~skills_core.server.model` (pure): the value objects (published and omitted skills,
  snapshots, dynamic skills).
* :mod:`~skills_core.server.catalog` (pure): which folders are published skills, their entries,
  and why others are left out.
* :mod:`~skills_core.server.source` (pure): the :class:`SkillSource` protocol and
  :class:`MemorySource`.
* :mod:`~skills_core.server.filesystem`: :class:`FilesystemSource`, the server's only I/O.
* :mod:`~skills_core.server.handler` (pure): :class:`SkillsServer` and :class:`ServerConnection`.
* :mod:`~skills_core.server.paths`, :mod:`~skills_core.server.cursors`,
  :mod:`~skills_core.server.mime`: URI mapping, pagination cursors, MIME types.
"""

from __future__ import annotations

from skills_core.server.catalog import Catalog as Catalog
from skills_core.server.catalog import CatalogBuilder as CatalogBuilder
from skills_core.server.cursors import CursorCodec as CursorCodec
from skills_core.server.filesystem import DEFAULT_IGNORED_NAMES as DEFAULT_IGNORED_NAMES
from skills_core.server.filesystem import FilesystemSource as FilesystemSource
from skills_core.server.filesystem import server_from_roots as server_from_roots
from skills_core.server.handler import DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE
from skills_core.server.handler import DEFAULT_SERVER_INFO as DEFAULT_SERVER_INFO
from skills_core.server.handler import DEFAULT_TTL_MS as DEFAULT_TTL_MS
from skills_core.server.handler import ServerConnection as ServerConnection
from skills_core.server.handler import SkillsServer as SkillsServer
from skills_core.server.mime import mime_type_for as mime_type_for
from skills_core.server.model import DynamicSkill as DynamicSkill
from skills_core.server.model import OmitCode as OmitCode
from skills_core.server.model import OmittedSkill as OmittedSkill
from skills_core.server.model import ProblemCode as ProblemCode
from skills_core.server.model import PublishedSkill as PublishedSkill
from skills_core.server.model import RootSnapshot as RootSnapshot
from skills_core.server.model import SkipCode as SkipCode
from skills_core.server.model import SkippedEntry as SkippedEntry
from skills_core.server.model import SnapshotFile as SnapshotFile
from skills_core.server.model import SourceProblem as SourceProblem
from skills_core.server.paths import DEFAULT_SCHEME as DEFAULT_SCHEME
from skills_core.server.source import MemorySource as MemorySource
from skills_core.server.source import SkillSource as SkillSource
from skills_core.server.source import TreeSource as TreeSource

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
    "server_from_roots",
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_TTL_MS",
    "DEFAULT_SERVER_INFO",
    "DEFAULT_SCHEME",
    # helpers
    "CursorCodec",
    "mime_type_for",
]
