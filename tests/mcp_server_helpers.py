"""What ``tests/peers/mcp_lowlevel_server.py`` publishes, shared with the tests that compare it.

The peer and the in-process tests build the same SDK server with :func:`build` (an ``mcp``
low-level server given a catalog with ``add_skills``), and the same :class:`SkillsServer` with
:func:`skills_server` (the same cursor key, page size and server info), so that every answer can be
computed by our core alone and compared. :class:`GatedSource` is a source whose read of one file
waits for the test to let it go.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import mcp_types as types
from mcp.server.lowlevel import Server

from skills_core.adapters.mcp_server import add_skills
from skills_core.messages import Implementation
from skills_core.server import MemorySource, ServerOptions, SkillsServer, server_from_roots

NAME: Final = "skills-over-mcp"
VERSION: Final = "1.0"
CURSOR_KEY: Final = b"mcp-lowlevel-peer-cursor-key-000"
PAGE_SIZE: Final = 2
#: A resource of the SDK server itself (``--own-resources``), served beside the skills.
MEMO_URI: Final = "memo://note"
MEMO_TEXT: Final = "a resource of the SDK server itself"


def skills_server(
    root: str, *, directory_read: bool = True, ttl_ms: int | None = None
) -> SkillsServer:
    """The skills server the peer publishes for ``root`` (``ttl_ms``: the default when None)."""
    extra: dict[str, Any] = {} if ttl_ms is None else {"ttl_ms": ttl_ms}
    options = ServerOptions(
        **extra,
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


def build(
    root: str,
    *,
    own_resources: bool = False,
    directory_read: bool = True,
    ttl_ms: int | None = None,
) -> Server[Any]:
    """The SDK server publishing ``root``'s skills (and, if asked, a resource of its own first)."""
    server: Server[Any]
    if own_resources:
        server = Server(
            NAME, version=VERSION, on_list_resources=list_memo, on_read_resource=read_memo
        )
    else:
        server = Server(NAME, version=VERSION)
    add_skills(server, skills_server(root, directory_read=directory_read, ttl_ms=ttl_ms))
    return server


class GatedSource:
    """A :class:`MemorySource` whose read of ``gated`` (a path in its skill) waits for ``release``.

    ``started`` is set when that read begins; ``threads`` names the thread each path was last read
    on. On the event loop's own thread the wait would hold the loop that is to release it, so it
    gives up after 10 s and the read fails (an internal error answer) instead of hanging the test.
    """

    def __init__(self, files: dict[str, bytes], gated: str) -> None:
        self.inner = MemorySource(files)
        self.gated = gated
        self.started = threading.Event()
        self.release = threading.Event()
        self.threads: dict[str, str] = {}

    def scan(self) -> Any:
        return self.inner.scan()

    def recheck(self, uri: str) -> Any:
        return self.inner.recheck(uri)

    def list_directory(self, skill: Any, dir_path: str) -> Any:
        return self.inner.list_directory(skill, dir_path)

    def poll(self, max_age_ms: int) -> Any:
        return self.inner.poll(max_age_ms)

    def read(self, skill: Any, file_path: str) -> bytes | None:
        self.threads[file_path] = threading.current_thread().name
        if file_path == self.gated:
            self.started.set()
            if not self.release.wait(timeout=10):
                raise RuntimeError("the event loop did not run while a large file was read")
        return self.inner.read(skill, file_path)


@contextlib.contextmanager
def http_peer(root: Path, *, ttl_ms: int) -> Iterator[str]:
    """``tests/peers/mcp_lowlevel_server.py ROOT --http PORT`` (uvicorn) for the block; yields its
    URL."""
    import socket

    from http_helpers import free_port, stop
    from interop_helpers import child_env

    peer = Path(__file__).resolve().parent / "peers" / "mcp_lowlevel_server.py"
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(peer), str(root), "--ttl-ms", str(ttl_ms), "--http", str(port)],
        env=child_env({}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port)).close()
                break
            assert time.monotonic() < deadline, "the SDK server did not start"
            assert process.poll() is None, "the SDK server ended"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)
