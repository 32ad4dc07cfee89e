"""Constants of the Skills extension and of the MCP base protocol it stands on.

Theory of operation: every literal that the wire or the specification fixes lives here, once, with
the section of the Skills extension (numbered as in docs/requirements.md) or of the base
protocol (docs/protocol.md) it comes from. Nothing in this module does anything; the rest of
the package imports these names instead of repeating strings.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = [
    "EXTENSION_ID",
    "DIRECTORY_READ_SETTING",
    "MODERN_PROTOCOL_VERSION",
    "LEGACY_PROTOCOL_VERSION",
    "SUPPORTED_MODERN_VERSIONS",
    "SUPPORTED_LEGACY_VERSIONS",
    "META_PROTOCOL_VERSION",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_SERVER_INFO",
    "RESERVED_RESOURCE_META_PREFIX",
    "RESERVED_FRONTMATTER_METADATA_PREFIX",
    "Method",
    "ErrorCode",
    "MAX_RESOURCES",
    "MAX_TOTAL_BYTES",
    "MAX_SAFE_INTEGER",
    "SKILL_MD",
    "SKILL_MD_MIME_TYPE",
    "DIRECTORY_MIME_TYPE",
    "DYNAMIC",
    "DIGEST_PREFIX",
    "NAME_MAX_LENGTH",
]

#: The extension identifier (spec, "Extension Identifier"; reserved label, FMT-15).
EXTENSION_ID: Final = "io.modelcontextprotocol/skills"

#: The one extension setting the spec defines; only JSON ``true`` enables it (CAP-02, SIL-15).
DIRECTORY_READ_SETTING: Final = "directoryRead"

#: The base revision the extension is specified against (spec, "Protocol Revision").
MODERN_PROTOCOL_VERSION: Final = "2026-07-28"
#: The initialize-based revision that legacy clients still speak (docs/protocol.md#legacy).
LEGACY_PROTOCOL_VERSION: Final = "2025-11-25"
#: Stateless revisions this library serves, newest first.
SUPPORTED_MODERN_VERSIONS: Final = (MODERN_PROTOCOL_VERSION,)
#: Legacy revisions this library accepts in ``initialize``, newest first.
SUPPORTED_LEGACY_VERSIONS: Final = (LEGACY_PROTOCOL_VERSION, "2025-06-18", "2025-03-26")

#: Required request ``_meta`` keys of the modern revision (docs/protocol.md#request-meta).
META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
#: Result ``_meta`` key carrying the server's Implementation object.
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"

#: Resource ``_meta`` key prefix reserved for this extension (spec, "Reservations"; FMT-16).
RESERVED_RESOURCE_META_PREFIX: Final = "io.modelcontextprotocol.skills/"
#: Frontmatter ``metadata`` key prefix reserved for MCP extensions (spec, "Frontmatter"; FMT-12).
RESERVED_FRONTMATTER_METADATA_PREFIX: Final = "io.modelcontextprotocol/"


class Method(enum.StrEnum):
    """JSON-RPC method names this library speaks."""

    #: Modern discovery (docs/protocol.md#discover).
    SERVER_DISCOVER = "server/discover"
    #: Legacy handshake (docs/protocol.md#legacy).
    INITIALIZE = "initialize"
    NOTIFICATIONS_INITIALIZED = "notifications/initialized"
    PING = "ping"
    NOTIFICATIONS_CANCELLED = "notifications/cancelled"
    #: Base Resources methods.
    RESOURCES_LIST = "resources/list"
    RESOURCES_READ = "resources/read"
    RESOURCES_TEMPLATES_LIST = "resources/templates/list"
    #: Defined by this extension (spec, "Reservations"; FMT-14).
    RESOURCES_DIRECTORY_READ = "resources/directory/read"
    SKILLS_LIST = "skills/list"
    SKILLS_GET = "skills/get"


class ErrorCode(enum.IntEnum):
    """JSON-RPC error codes (docs/protocol.md#changes, docs/protocol.md#envelope).

    Bands: -32700..-32600 are JSON-RPC's own; -32000..-32019 are legacy or implementation-defined
    and new code SHOULD NOT emit them; -32020..-32099 are reserved for MCP.
    """

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    HEADER_MISMATCH = -32020
    MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    #: The 2025-11-25 resource-not-found code; clients SHOULD still accept it, servers never emit it.
    LEGACY_RESOURCE_NOT_FOUND = -32002


#: Resources per skill, SKILL.md included, inclusive (spec, "Limits"; ENTRY-17).
MAX_RESOURCES: Final = 512
#: Sum of ``size`` over a skill's resources, inclusive: 16 MiB (spec, "Limits"; ENTRY-17).
MAX_TOTAL_BYTES: Final = 16 * 1024 * 1024
#: Largest integer every JSON peer represents exactly (2**53 - 1); the ceiling for ``size`` (ENTRY-11).
MAX_SAFE_INTEGER: Final = 2**53 - 1

#: The literal, case-sensitive file name of a skill's instructions (URI-04, SIL-05).
SKILL_MD: Final = "SKILL.md"
#: mimeType of SKILL.md resources (FMT-07).
SKILL_MD_MIME_TYPE: Final = "text/markdown"
#: mimeType of directory resources (spec, "Directory Resources"; DIR-01).
DIRECTORY_MIME_TYPE: Final = "inode/directory"
#: The ``resources`` value of a skill whose files have no stable digests (ENTRY-06, ENTRY-15).
DYNAMIC: Final = "dynamic"
#: Digest format prefix (spec, "Integrity and Verification"; ENTRY-12).
DIGEST_PREFIX: Final = "sha256:"
#: Longest skill name the Agent Skills rules allow (URI-07).
NAME_MAX_LENGTH: Final = 64
