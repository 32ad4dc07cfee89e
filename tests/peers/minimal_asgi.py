"""The least a real skills app does per read, under a given uvicorn: for the HTTP benchmark.

For ``uvicorn minimal_asgi:app --app-dir tests/peers`` with ``BENCH_BODY_FILE`` naming a file that
holds the response body (as for ``bare_asgi.py``) and ``BENCH_FILE`` the file the request reads.
Beyond the bare app, it does only what no skills server can skip: it decodes the request body
with ``json.loads`` (no strictness: duplicate keys, NaN, lone surrogates all pass), takes the
request's ``uri`` and ``_meta``, and looks at the file (one ``readlink`` of its descriptor, held
open, and one ``fstat``), then answers with the prepared bytes. No header is checked, nothing is
encoded. The gap between this app and the bare one is the floor of that work under uvicorn.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

_BODY = Path(os.environ["BENCH_BODY_FILE"]).read_bytes()
_FILE = os.open(os.environ["BENCH_FILE"], os.O_RDONLY | os.O_CLOEXEC)
_PROC = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
_NAME = str(_FILE)
_LENGTH = b"%d" % len(_BODY)

Message = MutableMapping[str, Any]


async def app(
    scope: Message,
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    """Decode the request, look at the file, answer with the prepared body."""
    if scope["type"] != "http":
        return
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    params = json.loads(b"".join(chunks))["params"]
    _ = params["uri"], params["_meta"]
    os.readlink(_NAME, dir_fd=_PROC)
    os.fstat(_FILE)
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", _LENGTH)],
        }
    )
    await send({"type": "http.response.body", "body": _BODY})
