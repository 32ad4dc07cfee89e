"""Real HTTP clients against ``skills-core serve --http``, pinned in ``tests/node/package-lock.json``
and ``pyproject.toml``:

* the TypeScript SDK v2 (``@modelcontextprotocol/client`` 2.4.0): its ``SkillsClient`` over its
  ``StreamableHTTPClientTransport``, with version negotiation ``auto``, pinned to 2026-07-28, and
  legacy (2025-11-25 with a session): list every page, get each skill, read and verify every file
  (size, digest, SKILL.md frontmatter), list each skill's root directory, close the session
  (``tests/node/ts_skills_client.mjs``);
* the ``mcp`` 2.3.0 Python client (``streamable_http_client`` + ``ClientSession``), modern
  (``discover``) and legacy (``initialize``), on asyncio and trio;
* MCP Inspector 2.12.0's verifier (``--cli --verify --method skills/list``) in both eras: every
  skill verified, no conformance finding.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import anyio
import mcp_types as types
import pytest
from http_helpers import (
    INSPECTOR,
    NODE,
    NODE_DIR,
    Served,
    require_node_tools,
    run_node_tool,
    serving,
)
from interop_helpers import (
    EXTRA_FILES,
    NOTES_SKILL_MD,
    REFUNDS_GUIDE,
    REFUNDS_SKILL_MD,
    SKILLS_EXTENSION,
    write_files,
    write_spec_skill,
)
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pydantic import RootModel

from skills_core import spec_examples as ex

#: Every file served, by URI: what each client must read back, byte for byte.
FILES: Final = {
    **{f"skill://pdf-processing/{path}": data for path, data in ex.FILES.items()},
    "skill://acme/billing/refunds/SKILL.md": REFUNDS_SKILL_MD,
    "skill://acme/billing/refunds/references/GUIDE.md": REFUNDS_GUIDE,
    "skill://meeting-notes/SKILL.md": NOTES_SKILL_MD,
}
SKILLS: Final = sorted(uri for uri in FILES if uri.endswith("/SKILL.md"))
SESSION_ID: Final = re.compile(r"^[\x21-\x7E]+$")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("http-clients")
    write_spec_skill(root)
    write_files(root, EXTRA_FILES)
    with serving(root) as served:
        yield served


# --- the TypeScript SDK v2 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "negotiated"),
    [("auto", "2026-07-28"), ("pin", "2026-07-28"), ("legacy", "2025-11-25")],
)
def test_typescript_skills_client(server: Served, mode: str, negotiated: str) -> None:
    require_node_tools()
    result = run_node_tool([str(NODE), str(NODE_DIR / "ts_skills_client.mjs"), server.url, mode])
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout)
    assert seen["negotiated"] == negotiated
    assert seen["supported"] is True
    assert seen["directoryRead"] is True
    if negotiated == "2025-11-25":
        assert SESSION_ID.match(seen["sessionId"])  # HTTP-23
    else:
        assert seen["sessionId"] is None  # HTTP-20
        assert seen["ttlMs"] == 300_000
    assert [skill["uri"] for skill in seen["skills"]] == SKILLS
    files = {f["uri"]: f for skill in seen["skills"] for f in skill["files"]}
    assert {uri: f["bytes"] for uri, f in files.items()} == {
        uri: len(data) for uri, data in FILES.items()
    }
    assert all(f["verified"] for f in files.values())
    pdf = next(s for s in seen["skills"] if s["name"] == "pdf-processing")
    assert "skill://pdf-processing/templates" in pdf["directory"]


# --- the mcp 2.3.0 Python client ----------------------------------------------------------------


class RawResult(RootModel[dict[str, Any]]):
    """Any result object, as sent."""


async def _walk_with_mcp(url: str, modern: bool) -> tuple[str, dict[str, bytes], list[str]]:
    async with (
        streamable_http_client(url) as (read, write, *_),
        ClientSession(
            read,
            write,
            read_timeout_seconds=20,
            client_info=types.Implementation(name="skills-core-tests", version="0"),
            extensions={SKILLS_EXTENSION: {}},
        ) as session,
    ):
        if modern:
            discovered = await session.discover()
            version = discovered.supported_versions[0]
        else:
            version = (await session.initialize()).protocol_version
        request = types.Request[dict[str, Any], str](method="skills/list", params={})
        listing = (await session.send_request(request, RawResult)).root
        read_back: dict[str, bytes] = {}
        for skill in listing["skills"]:
            for resource in skill["resources"]:
                result = await session.read_resource(resource["uri"])
                (content,) = result.contents
                assert isinstance(content, types.TextResourceContents)
                read_back[resource["uri"]] = content.text.encode()
        return version, read_back, [skill["uri"] for skill in listing["skills"]]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("modern", [True, False], ids=["2026-07-28", "2025-11-25"])
def test_mcp_python_client(server: Served, modern: bool, backend: str) -> None:
    async def body() -> tuple[str, dict[str, bytes], list[str]]:
        return await _walk_with_mcp(server.url, modern)

    version, read_back, listed = anyio.run(body, backend=backend)
    assert version == ("2026-07-28" if modern else "2025-11-25")
    assert listed == SKILLS
    assert read_back == FILES


# --- MCP Inspector's verifier -------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_verify(server: Served, era: str, tmp_path: Path) -> None:
    """``mcp-inspector --cli --verify``: no conformance errors, every file verified."""
    require_node_tools()
    argv = [
        str(INSPECTOR),
        "--cli",
        "--verify",
        "--method",
        "skills/list",
        "--protocol-era",
        era,
        "--transport",
        "http",
        "--server-url",
        server.url,
    ]
    result = run_node_tool(argv, home=tmp_path)  # whatever it keeps goes to a temporary HOME
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    reports = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [report["uri"] for report in reports] == SKILLS
    for report in reports:
        assert report["ok"] is True
        assert report["outcome"] == "verified"
        assert report["conformance"] == []
        assert report["frontmatter"] == []
        assert {f["status"] for f in report["files"]} == {"verified"}
    verified = {f["uri"] for report in reports for f in report["files"]}
    assert verified == set(FILES)
