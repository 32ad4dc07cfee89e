"""skills_core: a sans-IO implementation of the MCP Skills extension (``io.modelcontextprotocol/skills``).

The package takes bytes and decoded JSON in and gives value objects, events, effects and bytes out;
it never opens a socket, reads a clock, or touches the disk, except in the modules that exist to do
so: the server's folder source (``server/filesystem.py`` and its walk, digest index and held
files), the host's cache store, the folder functions of the validation engine, the object-store
and git sources (``sources/s3.py``, ``sources/git.py``), ``adapters/`` (stdio, Streamable HTTP,
the ``mcp`` SDK) and the command line. A test keeps that list.

Start with:

* :class:`SkillEntry` -- validate a skill entry from ``skills/list`` or ``skills/get``;
* :func:`resolve_reference` -- resolve a relative reference in a skill, refusing escapes;
* :func:`compute_digest`, :func:`verify_bytes`, :class:`DigestVerifier` -- size-then-digest checks;
* :func:`parse_frontmatter`, :func:`compare_frontmatter`, :func:`validate_skill_md` -- SKILL.md;
* :func:`validate_folder`, :func:`validate_entries`, :func:`build_entry`, :func:`compare_entries`
  (:mod:`skills_core.check`) -- the validation engine, for CI and tooling (SARIF and GitHub
  annotations in :mod:`skills_core.ci`);
* :class:`SkillsServer` (:mod:`skills_core.server`) -- publish folders of skills;
* :class:`Host` (:mod:`skills_core.host`) -- load MCP-served skills safely; :func:`pump` and
  :func:`pump_async` carry out its requests over your ``send(method, params)``;
* :class:`JsonRpcConnection` (:mod:`skills_core.jsonrpc`) -- newline-delimited JSON-RPC framing;
* :mod:`skills_core.adapters` -- the transports: stdio under asyncio, trio or blocking, Streamable
  HTTP (an ASGI app and a client), the ``mcp`` SDK.

Every error is a :class:`SkillsError` with a stable ``kind``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports
from ._version import __version__ as __version__
from .digest import EMPTY_DIGEST as EMPTY_DIGEST
from .digest import DigestVerifier as DigestVerifier
from .digest import check_digest as check_digest
from .digest import compute_digest as compute_digest
from .digest import is_valid_digest as is_valid_digest
from .digest import verify_bytes as verify_bytes
from .entry import DEFAULT_LIMITS as DEFAULT_LIMITS
from .entry import Limits as Limits
from .entry import ResourceKey as ResourceKey
from .entry import SkillEntry as SkillEntry
from .entry import SkillResource as SkillResource
from .errors import DigestFormatError as DigestFormatError
from .errors import EntryOverLimitError as EntryOverLimitError
from .errors import EntryProblem as EntryProblem
from .errors import FrontmatterError as FrontmatterError
from .errors import InvalidEntryError as InvalidEntryError
from .errors import JsonRpcError as JsonRpcError
from .errors import LocalProtocolError as LocalProtocolError
from .errors import ProtocolError as ProtocolError
from .errors import RemoteProtocolError as RemoteProtocolError
from .errors import SkillsError as SkillsError
from .errors import TransportError as TransportError
from .errors import URIError as URIError
from .errors import URIErrorKind as URIErrorKind
from .errors import VerificationError as VerificationError
from .errors import VerificationKind as VerificationKind
from .jsonvalue import ABSENT as ABSENT
from .jsonvalue import JSONValue as JSONValue
from .names import is_valid_skill_name as is_valid_skill_name
from .spec import EXTENSION_ID as EXTENSION_ID
from .spec import ErrorCode as ErrorCode
from .spec import Method as Method
from .uri import SkillURI as SkillURI
from .uri import encode_path_segment as encode_path_segment
from .uri import is_skill_md_uri as is_skill_md_uri
from .uri import parse_skill_uri as parse_skill_uri
from .uri import resolve_directory_reference as resolve_directory_reference
from .uri import resolve_reference as resolve_reference
from .uri import skill_root as skill_root

if TYPE_CHECKING:
    from .check import ChangeKind as ChangeKind
    from .check import EntryComparison as EntryComparison
    from .check import FieldChange as FieldChange
    from .check import FileChange as FileChange
    from .check import SkillReport as SkillReport
    from .check import ValidationReport as ValidationReport
    from .check import build_entry as build_entry
    from .check import compare_entries as compare_entries
    from .check import validate_entries as validate_entries
    from .check import validate_folder as validate_folder
    from .frontmatter import FieldLocation as FieldLocation
    from .frontmatter import FrontmatterDifference as FrontmatterDifference
    from .frontmatter import ParsedFrontmatter as ParsedFrontmatter
    from .frontmatter import compare_frontmatter as compare_frontmatter
    from .frontmatter import parse_frontmatter as parse_frontmatter
    from .host.approvals import ApprovalStore as ApprovalStore
    from .host.policy import HostPolicy as HostPolicy
    from .host.pump import TransportFailure as TransportFailure
    from .host.pump import pump as pump
    from .host.pump import pump_async as pump_async
    from .host.router import Host as Host
    from .jsonrpc import NEED_DATA as NEED_DATA
    from .jsonrpc import JsonRpcConnection as JsonRpcConnection
    from .messages import Era as Era
    from .messages import Implementation as Implementation
    from .server.catalog import Catalog as Catalog
    from .server.handler import ServerConnection as ServerConnection
    from .server.handler import SkillsServer as SkillsServer
    from .server.source import MemorySource as MemorySource
    from .validation import Finding as Finding
    from .validation import Severity as Severity
    from .validation import lint_portability as lint_portability
    from .validation import validate_frontmatter as validate_frontmatter
    from .validation import validate_skill_md as validate_skill_md

# Names from the heavier subsystems load on first use (PEP 562), so that ``import skills_core``
# and a ``skills-core serve`` start-up pay only for what they use.
_LAZY: dict[str, str] = {
    "ChangeKind": ".check",
    "EntryComparison": ".check",
    "FieldChange": ".check",
    "FileChange": ".check",
    "SkillReport": ".check",
    "ValidationReport": ".check",
    "build_entry": ".check",
    "compare_entries": ".check",
    "validate_entries": ".check",
    "validate_folder": ".check",
    "FieldLocation": ".frontmatter",
    "FrontmatterDifference": ".frontmatter",
    "ParsedFrontmatter": ".frontmatter",
    "compare_frontmatter": ".frontmatter",
    "parse_frontmatter": ".frontmatter",
    "ApprovalStore": ".host.approvals",
    "Host": ".host.router",
    "HostPolicy": ".host.policy",
    "TransportFailure": ".host.pump",
    "pump": ".host.pump",
    "pump_async": ".host.pump",
    "NEED_DATA": ".jsonrpc",
    "JsonRpcConnection": ".jsonrpc",
    "Era": ".messages",
    "Implementation": ".messages",
    "Catalog": ".server.catalog",
    "ServerConnection": ".server.handler",
    "SkillsServer": ".server.handler",
    "MemorySource": ".server.source",
    "Finding": ".validation",
    "Severity": ".validation",
    "lint_portability": ".validation",
    "validate_frontmatter": ".validation",
    "validate_skill_md": ".validation",
}


if not TYPE_CHECKING:  # type checkers see the imports above; a typo stays a type error
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)


__all__ = [
    "__version__",
    # errors
    "SkillsError",
    "URIError",
    "URIErrorKind",
    "DigestFormatError",
    "VerificationError",
    "VerificationKind",
    "EntryProblem",
    "InvalidEntryError",
    "EntryOverLimitError",
    "FrontmatterError",
    "ProtocolError",
    "LocalProtocolError",
    "RemoteProtocolError",
    "JsonRpcError",
    "TransportError",
    # constants
    "EXTENSION_ID",
    "ErrorCode",
    "Method",
    # URIs
    "SkillURI",
    "parse_skill_uri",
    "is_skill_md_uri",
    "skill_root",
    "resolve_reference",
    "resolve_directory_reference",
    "encode_path_segment",
    "is_valid_skill_name",
    # digests
    "EMPTY_DIGEST",
    "compute_digest",
    "is_valid_digest",
    "check_digest",
    "verify_bytes",
    "DigestVerifier",
    # entries
    "JSONValue",
    "Limits",
    "DEFAULT_LIMITS",
    "ResourceKey",
    "SkillResource",
    "SkillEntry",
    # frontmatter and validation
    "ABSENT",
    "ParsedFrontmatter",
    "FrontmatterDifference",
    "parse_frontmatter",
    "compare_frontmatter",
    "Finding",
    "Severity",
    "validate_frontmatter",
    "validate_skill_md",
    "lint_portability",
    "FieldLocation",
    # the validation engine (more in skills_core.check and skills_core.ci)
    "validate_folder",
    "validate_entries",
    "build_entry",
    "compare_entries",
    "ValidationReport",
    "SkillReport",
    "EntryComparison",
    "FieldChange",
    "FileChange",
    "ChangeKind",
    # server (more in skills_core.server)
    "Catalog",
    "MemorySource",
    "SkillsServer",
    "ServerConnection",
    # host (more in skills_core.host)
    "Host",
    "HostPolicy",
    "ApprovalStore",
    "Era",
    "Implementation",
    "pump",
    "pump_async",
    "TransportFailure",
    # JSON-RPC (more in skills_core.jsonrpc)
    "JsonRpcConnection",
    "NEED_DATA",
]
