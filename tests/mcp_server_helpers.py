"""What ``tests/peers/mcp_lowlevel_server.py`` publishes, shared with the tests that compare it.

The peer (an ``mcp`` low-level server given a catalog with ``add_skills``) and the tests build the
same :class:`SkillsServer` from the same folder with :func:`skills_server`: the same cursor key,
page size and server info, so that every answer can be computed in-process and compared.
"""

from __future__ import annotations

from typing import Final

from skills_core.messages import Implementation
from skills_core.server import SkillsServer, server_from_roots

NAME: Final = "skills-over-mcp"
VERSION: Final = "1.0"
CURSOR_KEY: Final = b"mcp-lowlevel-peer-cursor-key-000"
PAGE_SIZE: Final = 2
#: A resource of the SDK server itself (``--own-resources``), served beside the skills.
MEMO_URI: Final = "memo://note"
MEMO_TEXT: Final = "a resource of the SDK server itself"


def skills_server(root: str) -> SkillsServer:
    """The skills server the peer publishes for ``root``."""
    return server_from_roots(
        [root],
        cursor_key=CURSOR_KEY,
        page_size=PAGE_SIZE,
        server_info=Implementation(name=NAME, version=VERSION),
    )
