"""skills_core: a sans-IO implementation of the MCP Skills extension (``io.modelcontextprotocol/skills``).

The package takes bytes and decoded JSON in and gives value objects, events, effects and bytes out;
it never opens a socket, reads a clock, or touches the disk, except in the two small modules that
exist to do so (the server's filesystem loader and the host's cache store) and in the stdio adapters.

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
* :mod:`skills_core.adapters` -- asyncio and trio stdio loops.

Every error is a :class:`SkillsError` with a stable ``kind``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skills_core._lazy import lazy_exports
from skills_core._version import __version__ as __version__
from skills_core.digest import EMPTY_DIGEST as EMPTY_DIGEST
from skills_core.digest import DigestVerifier as DigestVerifier
from skills_core.digest import check_digest as check_digest
from skills_core.digest import compute_digest as compute_digest
from skills_core.digest import is_valid_digest as is_valid_digest
from skills_core.digest import verify_bytes as verify_bytes
from skills_core.entry import DEFAULT_LIMITS as DEFAULT_LIMITS
from skills_core.entry import Limits as Limits
from skills_core.entry import ResourceKey as ResourceKey
from skills_core.entry import SkillEntry as SkillEntry
from skills_core.entry import SkillResource as SkillResource
from skills_core.errors import DigestFormatError as DigestFormatError
from skills_core.errors import EntryOverLimitError as EntryOverLimitError
from skills_core.errors import EntryProblem as EntryProblem
from skills_core.errors import FrontmatterError as FrontmatterError
from skills_core.errors import InvalidEntryError as InvalidEntryError
from skills_core.errors import JsonRpcError as JsonRpcError
from skills_core.errors import LocalProtocolError as LocalProtocolError
from skills_core.errors import ProtocolError as ProtocolError
from skills_core.errors import RemoteProtocolError as RemoteProtocolError
from skills_core.errors import SkillsError as SkillsError
from skills_core.errors import TransportError as TransportError
from skills_core.errors import URIError as URIError
from skills_core.errors import URIErrorKind as URIErrorKind
from skills_core.errors import VerificationError as VerificationError
from skills_core.errors import VerificationKind as VerificationKind
from skills_core.jsonvalue import ABSENT as ABSENT
from skills_core.jsonvalue import JSONValue as JSONValue
from skills_core.names import is_valid_skill_name as is_valid_skill_name
from skills_core.spec import EXTENSION_ID as EXTENSION_ID
from skills_core.spec import ErrorCode as ErrorCode
from skills_core.spec import Method as Method
from skills_core.uri import SkillURI as SkillURI
from skills_core.uri import encode_path_segment as encode_path_segment
from skills_core.uri import is_skill_md_uri as is_skill_md_uri
from skills_core.uri import parse_skill_uri as parse_skill_uri
from skills_core.uri import resolve_directory_reference as resolve_directory_reference
from skills_core.uri import resolve_reference as resolve_reference
from skills_core.uri import skill_root as skill_root

if TYPE_CHECKING:
    from skills_core.check import ChangeKind as ChangeKind
    from skills_core.check import EntryComparison as EntryComparison
    from skills_core.check import FieldChange as FieldChange
    from skills_core.check import FileChange as FileChange
    from skills_core.check import SkillReport as SkillReport
    from skills_core.check import ValidationReport as ValidationReport
    from skills_core.check import build_entry as build_entry
    from skills_core.check import compare_entries as compare_entries
    from skills_core.check import validate_entries as validate_entries
    from skills_core.check import validate_folder as validate_folder
    from skills_core.frontmatter import FieldLocation as FieldLocation
    from skills_core.frontmatter import FrontmatterDifference as FrontmatterDifference
    from skills_core.frontmatter import ParsedFrontmatter as ParsedFrontmatter
    from skills_core.frontmatter import compare_frontmatter as compare_frontmatter
    from skills_core.frontmatter import parse_frontmatter as parse_frontmatter
    from skills_core.host.approvals import ApprovalStore as ApprovalStore
    from skills_core.host.policy import HostPolicy as HostPolicy
    from skills_core.host.pump import TransportFailure as TransportFailure
    from skills_core.host.pump import pump as pump
    from skills_core.host.pump import pump_async as pump_async
    from skills_core.host.router import Host as Host
    from skills_core.jsonrpc import NEED_DATA as NEED_DATA
    from skills_core.jsonrpc import JsonRpcConnection as JsonRpcConnection
    from skills_core.messages import Era as Era
    from skills_core.messages import Implementation as Implementation
    from skills_core.server.catalog import Catalog as Catalog
    from skills_core.server.handler import ServerConnection as ServerConnection
    from skills_core.server.handler import SkillsServer as SkillsServer
    from skills_core.server.source import MemorySource as MemorySource
    from skills_core.validation import Finding as Finding
    from skills_core.validation import Severity as Severity
    from skills_core.validation import lint_portability as lint_portability
    from skills_core.validation import validate_frontmatter as validate_frontmatter
    from skills_core.validation import validate_skill_md as validate_skill_md

# Names from the heavier subsystems load on first use (PEP 562), so that ``import skills_core``
# and a ``skills-core serve`` start-up pay only for what they use.
_LAZY: dict[str, str] = {
    "ChangeKind": "skills_core.check",
    "EntryComparison": "skills_core.check",
    "FieldChange": "skills_core.check",
    "FileChange": "skills_core.check",
    "SkillReport": "skills_core.check",
    "ValidationReport": "skills_core.check",
    "build_entry": "skills_core.check",
    "compare_entries": "skills_core.check",
    "validate_entries": "skills_core.check",
    "validate_folder": "skills_core.check",
    "FieldLocation": "skills_core.frontmatter",
    "FrontmatterDifference": "skills_core.frontmatter",
    "ParsedFrontmatter": "skills_core.frontmatter",
    "compare_frontmatter": "skills_core.frontmatter",
    "parse_frontmatter": "skills_core.frontmatter",
    "ApprovalStore": "skills_core.host.approvals",
    "Host": "skills_core.host.router",
    "HostPolicy": "skills_core.host.policy",
    "TransportFailure": "skills_core.host.pump",
    "pump": "skills_core.host.pump",
    "pump_async": "skills_core.host.pump",
    "NEED_DATA": "skills_core.jsonrpc",
    "JsonRpcConnection": "skills_core.jsonrpc",
    "Era": "skills_core.messages",
    "Implementation": "skills_core.messages",
    "Catalog": "skills_core.server.catalog",
    "ServerConnection": "skills_core.server.handler",
    "SkillsServer": "skills_core.server.handler",
    "MemorySource": "skills_core.server.source",
    "Finding": "skills_core.validation",
    "Severity": "skills_core.validation",
    "lint_portability": "skills_core.validation",
    "validate_frontmatter": "skills_core.validation",
    "validate_skill_md": "skills_core.validation",
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
