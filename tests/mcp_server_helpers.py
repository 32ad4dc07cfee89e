"""What ``tests/peers/mcp_lowlevel_server.py`` publishes, shared with the tests that compare it.

The peer and the in-process tests build the same SDK server with :func:`build` (an ``mcp``
low-level server given a catalog with ``add_skills``), and the same :class:`SkillsServer` with
:func:`skills_server` (the same cursor key, page size and server info), so that every answer can be
computed by our core alone and compared.
"""

from __future__ import annotations

from typing import Any, Final

import mcp_types as types
from mcp.server.lowlevel import Server

from skills_core.adapters.mcp_server import add_skills
from skills_core.messages import Implementation
from skills_core.server import ServerOptions, SkillsServer, server_from_roots

NAME: Final = "skills-over-mcp"
VERSION: Final = "1.0"
CURSOR_KEY: Final = b"mcp-lowlevel-peer-cursor-key-000"
PAGE_SIZE: Final = 2
#: A resource of the SDK server itself (``--own-resources``), served beside the skills.
MEMO_URI: Final = "memo://note"
MEMO_TEXT: Final = "a resource of the SDK server itself"


def skills_server(root: str, *, directory_read: bool = True) -> SkillsServer:
    """The skills server the peer publishes for ``root``."""
    options = ServerOptions(
        directory_read=directory_read,
        page_size=PAGE_SIZE,
        server_info=Implementation(name=NAME, version=VERSION),
    )
    return server_from_roots([root], cursor_key=CURSOR_KEY, options=options)


async def list_memo(ctx: Any, params: Any) -> types.ListResourcesResult:
    """The SDK server's own ``resources/list``."""
    return types.ListResourcesResult(resources=[types.Resource(uri=MEMO_URI, name="note")])


async def read_memo(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    """The SDK server's own ``resources/read``."""
    if str(params.uri) != MEMO_URI:
        raise ValueError("unknown resource")
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=MEMO_URI, text=MEMO_TEXT, mime_type="text/plain")]
    )


def build(root: str, *, own_resources: bool = False, directory_read: bool = True) -> Server[Any]:
    """The SDK server publishing ``root``'s skills (and, if asked, a resource of its own first)."""
    server: Server[Any]
    if own_resources:
        server = Server(
            NAME, version=VERSION, on_list_resources=list_memo, on_read_resource=read_memo
        )
    else:
        server = Server(NAME, version=VERSION)
    add_skills(server, skills_server(root, directory_read=directory_read))
    return server
