"""The ceiling of any ASGI app under a given uvicorn: prepared bytes for every request.

For ``uvicorn bare_asgi:app --app-dir tests/peers`` with ``BENCH_BODY_FILE`` naming a file that
holds the response body (our server's own answer to the benchmark's request, captured first).
The app reads the request body (as every real app must) and answers with those bytes, no parsing,
no validation: nothing an ASGI app does per request can be cheaper.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

_BODY = Path(os.environ["BENCH_BODY_FILE"]).read_bytes()
_START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(_BODY))],
}
_RESPONSE = {"type": "http.response.body", "body": _BODY}

Message = MutableMapping[str, Any]


async def app(
    scope: Message,
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    """Answer every HTTP request with the prepared body."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body", False):
        pass
    await send(_START)
    await send(_RESPONSE)
