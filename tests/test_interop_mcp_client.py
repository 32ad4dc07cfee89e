"""Real peer: the mcp 2.3.0 Python client (``ClientSession`` over ``stdio_client``) drives ours.

``python -m skills_core serve`` runs as a child process on a temporary folder holding the spec's
pdf-processing skill (exact bytes), a nested skill (``acme/billing/refunds``) and a second
top-level skill (``meeting-notes``). The client speaks both eras:

* modern: ``await session.discover()``; every request carries the 2026-07-28 ``_meta`` (the client
  adds it), and the client validates ``resources/read`` results against the modern schema
  (``resultType``, ``ttlMs`` and ``cacheScope`` are required there);
* legacy: ``await session.initialize()`` (2025-11-25), no ``_meta``; empty params are omitted.

The skills methods go out as custom requests (``types.Request`` with a raw-dict result model),
which the client does not validate, so their results are the server's JSON as sent. For the one known
method among them, ``resources/read``, the client strips fields of later revisions from results in
legacy mode before we see them; to check the wire shape there, a tap on the transport's read
stream records every response's raw ``result`` before the session touches it.

As a third-party check of our entries, FastMCP's strict pydantic models for ``skills/list`` and
``skills/get`` are also used as the result types of typed requests.

Each test spawns its own server (start-up is ~0.2 s) and runs on asyncio and on trio (the mcp
client is anyio-based). ``stdio_client`` does not inherit the environment, so the child gets
``PYTHONPATH`` explicitly; its stderr goes to ``/dev/null`` (``errlog`` needs a real file).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

import anyio
import mcp_types as types
import pytest
from interop_helpers import (
    EXTRA_FILES,
    MODERN_VERSION,
    NOTES_SKILL_MD,
    REFUNDS_GUIDE,
    REFUNDS_SKILL_MD,
    REPO_ROOT,
    SKILLS_EXTENSION,
    sha256_digest,
    write_files,
    write_spec_skill,
)
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage
from pydantic import RootModel

from skills_core import spec_examples as ex


class RawResult(RootModel[dict[str, Any]]):
    """Any result object, kept as sent (the notes' ``TypeAdapter(dict)``, typed for mypy)."""


BACKENDS: Final = ["asyncio", "trio"]
TIMEOUT: Final = 20.0
TEMPLATES: Final = "skill://pdf-processing/templates"
MODERN_ONLY_FIELDS: Final = ("resultType", "ttlMs", "cacheScope")


@pytest.fixture(scope="module")
def skills_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-client") / "skills"
    write_spec_skill(root)
    write_files(root, EXTRA_FILES)
    return root


class TapStream:
    """A read stream between ``stdio_client`` and the session that records raw results by id."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.results: dict[int | str, dict[str, Any]] = {}

    def _record(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        if isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCResponse):
            self.results[item.message.id] = dict(item.message.result)
        return item

    async def receive(self) -> SessionMessage | Exception:
        return self._record(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


@asynccontextmanager
async def connect(root: Path, *options: str) -> AsyncIterator[tuple[ClientSession, TapStream]]:
    """Spawn our server on ``root`` and yield an mcp session (not yet discovered/initialized)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skills_core", "serve", *options, str(root)],
        # stdio_client does not inherit the environment: it passes HOME, PATH, ... plus this.
        env={"PYTHONPATH": str(REPO_ROOT)},
    )
    with open(os.devnull, "w") as errlog:  # needs a real fileno (any pytest capture mode)
        async with stdio_client(params, errlog=errlog) as (read, write):
            tap = TapStream(read)
            async with ClientSession(
                tap,
                write,
                read_timeout_seconds=TIMEOUT,
                client_info=types.Implementation(name="skills-core-tests", version="0"),
                extensions={SKILLS_EXTENSION: {}},
            ) as session:
                yield session, tap


async def custom(
    session: ClientSession, method: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Send ``method`` as a custom request; return the raw result dict."""
    request = types.Request[dict[str, Any], str](method=method, params=params or {})
    result = await session.send_request(request, RawResult)
    return result.root


def run(backend: str, body: Callable[[], Awaitable[None]]) -> None:
    anyio.run(body, backend=backend)


async def walk(session: ClientSession, method: str, key: str, **params: Any) -> list[Any]:
    """Follow ``nextCursor`` to the end (LIST-07, DIR-09); return all items and check each page."""
    items: list[Any] = []
    cursors: list[str] = []
    cursor: str | None = None
    while True:
        page = await custom(session, method, {**params, **({"cursor": cursor} if cursor else {})})
        items.extend(page[key])
        if "nextCursor" not in page:
            return items
        cursor = page["nextCursor"]
        assert isinstance(cursor, str)
        assert cursor not in cursors
        cursors.append(cursor)
        assert len(cursors) < 20


def entry_for(skill_dir: str, files: dict[str, bytes], name: str, description: str) -> Any:
    return {
        "uri": f"skill://{skill_dir}/SKILL.md",
        "frontmatter": {"name": name, "description": description},
        "resources": [
            {
                "uri": f"skill://{skill_dir}/{path}",
                "digest": sha256_digest(data),
                "size": len(data),
            }
            for path, data in files.items()
        ],
    }


REFUNDS_ENTRY: Final = entry_for(
    "acme/billing/refunds",
    {"SKILL.md": REFUNDS_SKILL_MD, "references/GUIDE.md": REFUNDS_GUIDE},
    "refunds",
    "Issue refunds for billing disputes",
)
NOTES_ENTRY: Final = entry_for(
    "meeting-notes", {"SKILL.md": NOTES_SKILL_MD}, "meeting-notes", "Summarise meeting transcripts"
)


def by_uri(entries: list[Any]) -> dict[str, Any]:
    return {entry["uri"]: entry for entry in entries}


def assert_modern(result: dict[str, Any]) -> None:
    """The result fields every modern skills result carries (LIST-03/09, GET-04/05, DIR-05)."""
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int)
    assert result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "skills-core"


# --- modern (server/discover) ----------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_modern_discover_declares_resources_and_the_extension(
    backend: str, skills_root: Path
) -> None:
    """CAP-01, CAP-05, CAP-07: the discover result as the mcp client parses it."""

    async def body() -> None:
        async with connect(skills_root) as (session, tap):
            result = await session.discover()
            assert session.protocol_version == MODERN_VERSION
            assert MODERN_VERSION in result.supported_versions
            assert result.result_type == "complete"
            caps = result.capabilities
            assert caps.resources is not None
            assert caps.extensions == {SKILLS_EXTENSION: {"directoryRead": True}}
            raw = tap.results[1]  # discover is the session's request 1
            # PUSH-01: changes are sent on subscriptions/listen streams
            assert raw["capabilities"]["resources"] == {"listChanged": True, "subscribe": True}
            assert raw["capabilities"]["extensions"] == {SKILLS_EXTENSION: {"directoryRead": True}}
            assert_modern(raw)

    run(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_modern_list_walks_the_cursor_and_entries_match_the_files(
    backend: str, skills_root: Path
) -> None:
    """LIST-01/03/07/08/09, URI-02, URI-12: one skill per page, every entry complete and exact."""

    async def body() -> None:
        async with connect(skills_root, "--page-size", "1") as (session, _):
            await session.discover()
            first = await custom(session, "skills/list")
            assert_modern(first)
            assert len(first["skills"]) == 1
            assert "nextCursor" in first
            entries = await walk(session, "skills/list", "skills")
            assert len(entries) == 3
            assert by_uri(entries) == {
                ex.SKILL_MD_URI: ex.entry_json(),
                REFUNDS_ENTRY["uri"]: REFUNDS_ENTRY,
                NOTES_ENTRY["uri"]: NOTES_ENTRY,
            }

    run(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_modern_get_and_read_give_the_spec_bytes(backend: str, skills_root: Path) -> None:
    """GET-01/04/05/06/09, VER-01, VER-05, VER-17: get, then read SKILL.md and invoice.md."""

    async def body() -> None:
        async with connect(skills_root) as (session, _):
            await session.discover()
            got = await custom(session, "skills/get", {"uri": ex.SKILL_MD_URI})
            assert_modern(got)
            assert got["skill"] == ex.entry_json()
            assert "nextCursor" not in got
            nested = await custom(session, "skills/get", {"uri": REFUNDS_ENTRY["uri"]})
            assert nested["skill"] == REFUNDS_ENTRY
            for path, data in (("SKILL.md", ex.SKILL_MD), ("templates/invoice.md", ex.INVOICE)):
                uri = f"skill://pdf-processing/{path}"
                read = await custom(session, "resources/read", {"uri": uri})
                assert_modern(read)
                [item] = read["contents"]
                assert item["uri"] == uri
                assert item["mimeType"] == "text/markdown"
                assert item["text"] == data.decode()
                size, digest = ex.EXPECTED[path]
                assert len(item["text"].encode()) == size
                assert sha256_digest(item["text"].encode()) == digest

    run(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_modern_directory_read(backend: str, skills_root: Path) -> None:
    """CAP-05, DIR-01/04/05/06/09: templates/ and the skill root, walked page by page."""

    async def body() -> None:
        async with connect(skills_root, "--page-size", "1") as (session, _):
            await session.discover()
            first = await custom(session, "resources/directory/read", {"uri": TEMPLATES})
            assert_modern(first)
            children = await walk(session, "resources/directory/read", "resources", uri=TEMPLATES)
            assert [(c["uri"], c["name"]) for c in children] == [
                (f"{TEMPLATES}/invoice.md", "invoice.md"),
                (f"{TEMPLATES}/purchase-order.md", "purchase-order.md"),
            ]
            assert all(c["mimeType"] == "text/markdown" for c in children)
            root = await walk(
                session, "resources/directory/read", "resources", uri="skill://pdf-processing"
            )
            kinds = {c["uri"]: c.get("mimeType") for c in root}
            assert kinds == {ex.SKILL_MD_URI: "text/markdown", TEMPLATES: "inode/directory"}
            assert all(not c["uri"].endswith("/") for c in root)  # DIR-02

    run(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_modern_errors_are_invalid_params(backend: str, skills_root: Path) -> None:
    """ERR-01, ERR-02, ERR-03, ERR-06, ERR-08: the client raises MCPError with -32602."""

    async def body() -> None:
        async with connect(skills_root) as (session, _):
            await session.discover()
            cases = [
                ("skills/get", "skill://nope/SKILL.md"),
                ("skills/get", "skill://pdf-processing/templates/invoice.md"),
                ("resources/read", "skill://pdf-processing/templates/nope.md"),
                ("resources/read", "skill://pdf-processing/../pdf-processing/SKILL.md"),
                ("resources/directory/read", ex.SKILL_MD_URI),
            ]
            for method, uri in cases:
                with pytest.raises(MCPError) as caught:
                    await custom(session, method, {"uri": uri})
                assert caught.value.code == -32602, (method, uri)
                assert str(caught.value)

    run(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_modern_typed_client_methods(backend: str, skills_root: Path) -> None:
    """CAP-09, VER-01: the client's own typed resources/read validates against the 2026 schema."""

    async def body() -> None:
        async with connect(skills_root) as (session, _):
            await session.discover()
            result = await session.read_resource(f"{TEMPLATES}/purchase-order.md")
            assert isinstance(result, types.ReadResourceResult)
            assert result.result_type == "complete"
            assert result.ttl_ms >= 0
            assert result.cache_scope in ("public", "private")
            [item] = result.contents
            assert isinstance(item, types.TextResourceContents)
            assert item.text.encode() == ex.PURCHASE_ORDER
            assert item.mime_type == "text/markdown"
            with pytest.raises(MCPError) as caught:
                await session.read_resource("skill://pdf-processing/missing.md")
            assert caught.value.code == -32602
            listing = await session.list_resources()  # validated against the 2026 schema
            assert isinstance(listing, types.ListResourcesResult)
            [skill_md] = [r for r in listing.resources if r.uri == ex.SKILL_MD_URI]
            assert skill_md.size == len(ex.SKILL_MD)
            assert skill_md.mime_type == "text/markdown"

    run(backend, body)


# --- legacy (initialize) ----------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_legacy_initialize_and_custom_requests(backend: str, skills_root: Path) -> None:
    """The 2025-11-25 handshake; the skills methods work with no ``_meta`` and legacy shapes.

    What can be asserted: for the custom methods the client hands back the raw result, so the
    absence of ``resultType``/``ttlMs``/``cacheScope`` (fields of later revisions) is checked
    directly; for ``resources/read`` the client strips those fields itself, so the tap's raw copy
    is checked instead.
    """

    async def body() -> None:
        async with connect(skills_root, "--page-size", "1") as (session, tap):
            init = await session.initialize()
            assert init.protocol_version == "2025-11-25"
            assert init.server_info.name == "skills-core"
            assert init.capabilities.resources is not None
            assert init.capabilities.extensions == {SKILLS_EXTENSION: {"directoryRead": True}}
            assert set(tap.results[1]) == {"protocolVersion", "capabilities", "serverInfo"}

            first = await custom(session, "skills/list")  # sent with no params at all
            assert not set(first) & {*MODERN_ONLY_FIELDS, "_meta"}
            entries = await walk(session, "skills/list", "skills")
            assert by_uri(entries) == {
                ex.SKILL_MD_URI: ex.entry_json(),
                REFUNDS_ENTRY["uri"]: REFUNDS_ENTRY,
                NOTES_ENTRY["uri"]: NOTES_ENTRY,
            }

            got = await custom(session, "skills/get", {"uri": ex.SKILL_MD_URI})
            assert got == {"skill": ex.entry_json()}

            read = await custom(session, "resources/read", {"uri": f"{TEMPLATES}/invoice.md"})
            [item] = read["contents"]
            assert item["text"].encode() == ex.INVOICE
            assert sha256_digest(item["text"].encode()) == ex.EXPECTED["templates/invoice.md"][1]
            raw = tap.results[max(k for k in tap.results if isinstance(k, int))]
            assert raw["contents"] == read["contents"]
            assert not set(raw) & {*MODERN_ONLY_FIELDS, "_meta"}

            children = await walk(session, "resources/directory/read", "resources", uri=TEMPLATES)
            assert [c["name"] for c in children] == ["invoice.md", "purchase-order.md"]
            page = await custom(session, "resources/directory/read", {"uri": TEMPLATES})
            assert not set(page) & {*MODERN_ONLY_FIELDS, "_meta"}

            typed = await session.read_resource(ex.SKILL_MD_URI)
            assert isinstance(typed, types.ReadResourceResult)
            [skill_md] = typed.contents
            assert isinstance(skill_md, types.TextResourceContents)
            assert skill_md.text.encode() == ex.SKILL_MD

            with pytest.raises(MCPError) as caught:
                await custom(session, "skills/get", {"uri": "skill://nope/SKILL.md"})
            assert caught.value.code == -32602

    run(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fastmcp_typed_models_accept_our_entries(backend: str, skills_root: Path) -> None:
    """A third-party check of our entries: FastMCP's strict pydantic models (``extra="forbid"``,
    digest pattern, name = last URI segment, SKILL.md listed, no repeated or escaping URI)."""
    from fastmcp.skills.models import (
        GetSkillParams,
        GetSkillRequest,
        GetSkillResult,
        ListSkillsParams,
        ListSkillsRequest,
        ListSkillsResult,
    )

    async def body() -> None:
        async with connect(skills_root, "--page-size", "1") as (session, _):
            await session.discover()
            uris: list[str] = []
            cursor: str | None = None
            while True:
                page = await session.send_request(
                    ListSkillsRequest(params=ListSkillsParams(cursor=cursor)), ListSkillsResult
                )
                uris.extend(skill.uri for skill in page.skills)
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert sorted(uris) == sorted(
                [ex.SKILL_MD_URI, REFUNDS_ENTRY["uri"], NOTES_ENTRY["uri"]]
            )
            got = await session.send_request(
                GetSkillRequest(params=GetSkillParams(uri=ex.SKILL_MD_URI)), GetSkillResult
            )
            resources = got.skill.resources
            assert not isinstance(resources, str)
            assert [(r.uri, r.size, r.digest) for r in resources] == [
                (f"skill://pdf-processing/{path}", *ex.EXPECTED[path]) for path in ex.FILES
            ]

    run(backend, body)
