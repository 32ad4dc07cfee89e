"""Changes pushed to the ``mcp`` 2.3 Python client: its ``message_handler`` against ``serve``.

On 2025-11-25 (``initialize``) the client gets ``notifications/resources/list_changed`` unasked,
and ``notifications/resources/updated`` for the URI it subscribed to
(``session.subscribe_resource``), as the SDK's own typed notifications.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from interop_helpers import REPO_ROOT
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning


def write_skill(root: Path, name: str, body: str = "body\n") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}"
    )


def test_mcp_client_notification_handler_gets_list_changed_and_updated_push_03_push_04(
    tmp_path: Path,
) -> None:
    """PUSH-03, PUSH-04 with the mcp SDK client over stdio (legacy)."""
    write_skill(tmp_path, "alpha")
    seen: list[Any] = []
    arrived: anyio.Event | None = None  # made inside the event loop below

    async def main() -> None:
        nonlocal arrived
        arrived = anyio.Event()
        got = arrived

        async def handler(message: Any) -> None:
            if isinstance(message, Exception):
                return
            seen.append(message)
            if isinstance(message, types.ResourceUpdatedNotification):
                got.set()

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "skills_core", "serve", "--ttl-ms", "300", str(tmp_path)],
            env={"PYTHONPATH": str(REPO_ROOT)},
        )
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, message_handler=handler) as session,
            ):
                result = await session.initialize()
                assert result.capabilities.resources is not None
                assert result.capabilities.resources.list_changed is True  # PUSH-01
                assert result.capabilities.resources.subscribe is True
                with warnings.catch_warnings():  # deprecated as of 2026-07-28, not on 2025-11-25
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await session.subscribe_resource("skill://alpha/SKILL.md")
                write_skill(tmp_path, "alpha", "edited\n")
                with anyio.fail_after(10):
                    await got.wait()

    anyio.run(main)
    kinds = [type(message).__name__ for message in seen]
    assert "ResourceListChangedNotification" in kinds
    updated = [m for m in seen if isinstance(m, types.ResourceUpdatedNotification)]
    assert updated[0].params.uri == "skill://alpha/SKILL.md"
