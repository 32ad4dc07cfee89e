"""skills_core: a sans-IO implementation of the MCP Skills extension (``io.modelcontextprotocol/skills``).

The package takes bytes and decoded JSON in and gives value objects, events, effects and bytes out;
it never opens a socket, reads a clock, or touches the disk, except in the two small modules that
exist to do so (the server's filesystem loader and the host's cache store) and in the stdio adapters.

Start with:

* :class:`SkillEntry` -- validate a skill entry from ``skills/list`` or ``skills/get``;
* :func:`resolve_reference` -- resolve a relative reference in a skill, refusing escapes;
* :func:`compute_digest`, :func:`verify_bytes`, :class:`DigestVerifier` -- size-then-digest checks.

Every error is a :class:`SkillsError` with a stable ``kind``.
"""

from __future__ import annotations

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
from skills_core.errors import LocalProtocolError as LocalProtocolError
from skills_core.errors import ProtocolError as ProtocolError
from skills_core.errors import RemoteProtocolError as RemoteProtocolError
from skills_core.errors import SkillsError as SkillsError
from skills_core.errors import URIError as URIError
from skills_core.errors import URIErrorKind as URIErrorKind
from skills_core.errors import VerificationError as VerificationError
from skills_core.errors import VerificationKind as VerificationKind
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
]
