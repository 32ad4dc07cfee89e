"""Our catalog served by an ``mcp`` 2.3.0 low-level ``Server`` (``skills_core.adapters.mcp_server``).

``tests/peers/mcp_lowlevel_server.py`` is an SDK server given a folder's catalog with
``add_skills``. The same catalog is built in-process (same cursor key, page size and server info)
and asked the same requests, so every answer the SDK server writes can be compared with ours:

* byte for byte: each response line the SDK server writes equals the line our JSON-RPC endpoint
  encodes for our core's answer (``skills/list`` with its cursors, ``skills/get``, text and blob
  ``resources/read``, ``resources/directory/read``, ``resources/list``, and the errors: ``-32602``
  with ``data.uri`` for an unknown skill or file and a reference that escapes, a bad cursor), in
  the modern era (each request with its ``_meta``) and in the legacy era (after ``initialize``,
  also at ``2024-11-05``, which the SDK accepts: the 2025-11-25 shapes);
* the extension is declared in ``server/discover`` and, in the legacy era, in ``initialize``,
  where the SDK alone would drop it (CAP-01, CAP-05);
* real clients: the mcp ``ClientSession`` with our host (``mcp_sdk.connect`` in both eras, and a
  session that negotiated ``2024-11-05``) lists, loads, reads and lists a directory, every
  delivery verified against the entry, errors with their codes and no traceback on stderr; our
  own stdio client's handshake lands in the modern era and does the same;
* an SDK server with resources of its own keeps serving them beside the skills;
* a large read waits in a worker thread while the SDK's event loop answers another request.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import anyio
import mcp_server_helpers as peer
import mcp_types as types
import pytest
from interop_helpers import (
    EXTRA_FILES,
    MODERN_META,
    PEERS,
    REPO_ROOT,
    child_env,
    new_host,
    only,
    pump,
    write_files,
    write_spec_skill,
)
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage
from server_helpers import skill_md

from skills_core import spec_examples as ex
from skills_core.adapters.asyncio_stdio import open_stdio_client
from skills_core.adapters.mcp_sdk import SessionRequester, client_extensions, connect
from skills_core.adapters.mcp_server import add_skills
from skills_core.errors import JsonRpcError
from skills_core.host import DeliverToModel, DirectoryListing, Effect, Host, RequestApproval
from skills_core.host.driver import handshake
from skills_core.host.pump import Pumped, TransportFailure, pump_async
from skills_core.jsonrpc import JsonRpcConnection
from skills_core.messages import Era
from skills_core.server import SkillsServer
from skills_core.spec import EXTENSION_ID

PEER: Final = PEERS / "mcp_lowlevel_server.py"
LABEL: Final = "sdk"
SKILL: Final = ex.SKILL_MD_URI
DATA_FILES: Final = {
    "data-files/SKILL.md": b"---\nname: data-files\ndescription: Text and binary files\n---\n\n# D\n",
    "data-files/raw.bin": bytes(range(256)),
    "data-files/caf\u00e9.txt": "caf\u00e9 cr\u00e8me\n".encode(),
    # JSON leaves U+2028 unescaped; our encoder escapes it (a line separator to some tools).
    "data-files/separator.md": "one\u2028two\n".encode(),
}
INITIALIZE: Final[dict[str, Any]] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "tests", "version": "0"},
}


@pytest.fixture(scope="module")
def skills_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-lowlevel") / "skills"
    write_spec_skill(root)
    write_files(root, EXTRA_FILES)
    write_files(root, DATA_FILES)
    return root


def requests(era: Era) -> Iterator[tuple[str, dict[str, Any]]]:
    """The requests compared, without ``_meta`` (added for the modern era)."""
    yield "skills/list", {}
    yield "skills/get", {"uri": SKILL}
    yield "skills/get", {"uri": "skill://acme/billing/refunds/SKILL.md"}
    yield "skills/get", {"uri": "skill://no-such-skill/SKILL.md"}
    yield "skills/get", {"uri": "skill://pdf-processing/templates/invoice.md"}
    yield "resources/read", {"uri": SKILL}
    yield "resources/read", {"uri": "skill://data-files/raw.bin"}
    yield "resources/read", {"uri": "skill://data-files/caf%C3%A9.txt"}
    yield "resources/read", {"uri": "skill://pdf-processing/missing.md"}
    yield "resources/read", {"uri": "skill://pdf-processing/../secret"}
    yield "resources/directory/read", {"uri": "skill://pdf-processing"}
    yield "resources/directory/read", {"uri": "skill://pdf-processing/templates"}
    yield "resources/directory/read", {"uri": "skill://pdf-processing/SKILL.md"}
    yield "resources/list", {}
    yield "resources/templates/list", {}
    yield "skills/list", {"cursor": "not-a-cursor"}


def with_meta(era: Era, params: dict[str, Any]) -> dict[str, Any]:
    return {**params, "_meta": MODERN_META} if era is Era.MODERN else params


def exchange(argv: list[str], messages: list[dict[str, Any]]) -> dict[int, bytes]:
    """Write ``messages`` to the server process; return each response line by id (stdin stays open
    until every request is answered: the SDK cancels requests in flight when its input ends)."""
    wanted = {m["id"] for m in messages if "id" in m}
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    assert process.stdin is not None
    assert process.stdout is not None
    lines: dict[int, bytes] = {}
    try:
        for message in messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            if message.get("method") == "initialize":  # answered before anything else
                line = process.stdout.readline()
                lines[json.loads(line)["id"]] = line
        while set(lines) != wanted:
            line = process.stdout.readline()
            assert line, f"the server ended with {sorted(wanted - set(lines))} unanswered"
            lines[json.loads(line)["id"]] = line
    finally:
        process.stdin.close()
        process.wait(timeout=30)
        process.stdout.close()
    return lines


def exchange_in_process(
    root: Path, messages: list[dict[str, Any]], **build: bool
) -> dict[int, bytes]:
    """The same through memory streams; each line as the SDK's stdio transport writes it
    (``mcp/server/stdio.py``: ``model_dump_json(by_alias=True, exclude_unset=True)``)."""
    server = peer.build(str(root), **build)
    wanted = {m["id"] for m in messages if "id" in m}
    lines: dict[int, bytes] = {}

    async def body() -> None:
        c2s_send, c2s_recv = anyio.create_memory_object_stream[SessionMessage | Exception](64)
        s2c_send, s2c_recv = anyio.create_memory_object_stream[SessionMessage](64)
        with c2s_send, c2s_recv, s2c_send, s2c_recv:
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    server.run, c2s_recv, s2c_send, server.create_initialization_options()
                )
                for message in messages:
                    parsed = types.jsonrpc_message_adapter.validate_python(message)
                    await c2s_send.send(SessionMessage(message=parsed))
                while set(lines) != wanted:
                    out = (await s2c_recv.receive()).message
                    line = out.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    lines[json.loads(line)["id"]] = line.encode()
                tg.cancel_scope.cancel()

    anyio.run(body)
    return lines


def our_line(response: dict[str, Any] | None) -> bytes:
    """The bytes our JSON-RPC endpoint writes for ``response`` (our core's answer)."""
    assert response is not None
    endpoint = JsonRpcConnection()
    if "error" in response:
        error = response["error"]
        return endpoint.send_error(
            response["id"], error["code"], error["message"], error.get("data")
        )
    return endpoint.send_response(response["id"], response["result"])


def initialize(version: str) -> dict[str, Any]:
    """An ``initialize`` request offering ``version``."""
    params = {**INITIALIZE, "protocolVersion": version}
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


@pytest.mark.parametrize("transport", ["stdio", "in-process"])
@pytest.mark.parametrize("offered", [None, "2025-11-25", "2024-11-05"])
def test_every_answer_is_ours_byte_for_byte(
    skills_root: Path, offered: str | None, transport: str
) -> None:
    """Modern (no handshake) and legacy; a ``2024-11-05`` client, which the SDK accepts, gets the
    2025-11-25 shapes, the answers our core gives the legacy era."""
    era = Era.MODERN if offered is None else Era.LEGACY
    messages: list[dict[str, Any]] = []
    if offered is not None:
        messages += [
            initialize(offered),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
    for number, (method, params) in enumerate(requests(era), start=1):
        messages.append(
            {"jsonrpc": "2.0", "id": number, "method": method, "params": with_meta(era, params)}
        )
    # The second page of skills/list, with the cursor our core issues for the first (a cursor is
    # bound to the method and the key, not to the era).
    ours = peer.skills_server(str(skills_root)).connection()
    first: Any = ours.handle(
        {"jsonrpc": "2.0", "id": 0, "method": "skills/list", "params": {"_meta": MODERN_META}}
    )
    cursor = first["result"]["nextCursor"]
    messages.append(
        {
            "jsonrpc": "2.0",
            "id": 99,
            "method": "skills/list",
            "params": with_meta(era, {"cursor": cursor}),
        }
    )
    if transport == "stdio":
        lines = exchange([sys.executable, str(PEER), str(skills_root)], messages)
    else:
        lines = exchange_in_process(skills_root, messages)

    compared = 0
    for message in messages:
        expected: Any = ours.handle(message)
        if "id" not in message:
            continue
        if message["method"] == "initialize":  # the SDK's own, with the extension put back
            theirs = json.loads(lines[0])["result"]
            assert theirs["protocolVersion"] == offered  # the SDK agrees to the version offered
            assert theirs["capabilities"]["extensions"] == {EXTENSION_ID: {"directoryRead": True}}
            assert theirs["serverInfo"] == {"name": peer.NAME, "version": peer.VERSION}
            continue
        assert lines[message["id"]] == our_line(expected), message
        compared += 1
    assert compared == 17
    # The errors among them: -32602 with the URI in data (ERR-03, ERR-07), and the bad cursor.
    errors = {
        message_id: json.loads(line)["error"]
        for message_id, line in lines.items()
        if b'"error"' in line
    }
    assert sorted(errors) == [4, 5, 9, 10, 13, 16]
    assert {error["code"] for error in errors.values()} == {-32602}
    assert errors[4]["data"] == {"uri": "skill://no-such-skill/SKILL.md"}
    assert errors[9]["data"] == {"uri": "skill://pdf-processing/missing.md"}


def test_where_the_sdk_encodes_differently_the_values_are_still_ours(skills_root: Path) -> None:
    """The one byte difference: U+2028 in a string is raw in the SDK's JSON, escaped in ours."""
    uri = "skill://data-files/separator.md"
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resources/read",
        "params": {"uri": uri, "_meta": MODERN_META},
    }
    line = exchange([sys.executable, str(PEER), str(skills_root)], [message])[1]
    expected: Any = peer.skills_server(str(skills_root)).connection().handle(message)
    assert json.loads(line) == expected
    assert line != our_line(expected)
    assert line.replace("\u2028".encode(), b"\\u2028") == our_line(expected)


def test_a_legacy_request_before_initialize_gets_our_answer(skills_root: Path) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "skills/list"}
    line = exchange_in_process(skills_root, [message])[1]
    expected: Any = peer.skills_server(str(skills_root)).connection().handle(message)
    assert expected["error"]["code"] == -32602
    assert line == our_line(expected)


def test_without_directory_read_the_method_is_not_found_as_ours_says_err_05(
    skills_root: Path,
) -> None:
    meta = {"_meta": MODERN_META}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": meta},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "resources/directory/read",
            "params": {"uri": "skill://pdf-processing", **meta},
        },
    ]
    lines = exchange_in_process(skills_root, messages, directory_read=False)
    result = json.loads(lines[1])["result"]
    assert result["capabilities"]["extensions"] == {EXTENSION_ID: {}}
    ours = peer.skills_server(str(skills_root), directory_read=False).connection()
    assert lines[2] == our_line(ours.handle(messages[1]))
    assert json.loads(lines[2])["error"]["code"] == -32601


def test_discover_declares_the_extension(skills_root: Path) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {"_meta": MODERN_META},
    }
    result = json.loads(exchange_in_process(skills_root, [message])[1])["result"]
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["capabilities"]["extensions"] == {EXTENSION_ID: {"directoryRead": True}}
    assert "resources" in result["capabilities"]


# --- real clients ---------------------------------------------------------------------------------


def react(host: Host) -> Any:
    def approve(item: Pumped) -> list[Effect] | None:
        return host.approve(item.prompt_id) if isinstance(item, RequestApproval) else None

    return approve


async def negotiate(session: ClientSession, version: str) -> None:
    """The handshake ``session.initialize()`` does, offering ``version`` instead of the SDK's
    newest (``ClientSession`` has no setting for it)."""
    result = await session.send_request(
        types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=version,
                capabilities=types.ClientCapabilities(extensions=client_extensions()),
                client_info=types.Implementation(name="tests", version="0"),
            )
        ),
        types.InitializeResult,
    )
    assert result.protocol_version == version
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())


@pytest.mark.parametrize("offered", [None, "2025-11-25", "2024-11-05"])
def test_our_host_over_the_mcp_client_session(
    skills_root: Path, offered: str | None, tmp_path: Path
) -> None:
    """The real ``mcp`` 2.3.0 client in each era: modern, legacy as the SDK negotiates it, and
    legacy at ``2024-11-05`` (which the SDK server accepts): the skills methods answer, errors
    keep their codes, and the server writes no traceback."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(PEER), str(skills_root)],
        env={"PYTHONPATH": str(REPO_ROOT)},
    )
    stderr = tmp_path / "server-stderr.txt"

    async def body() -> None:
        with open(stderr, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(
                    read, write, read_timeout_seconds=20, extensions=client_extensions()
                ) as session,
            ):
                host = Host()
                if offered == "2024-11-05":
                    await negotiate(session, offered)
                era = Era.MODERN if offered is None else Era.LEGACY
                await connect(host, LABEL, session, era=era)
                assert session.protocol_version == (offered or "2026-07-28")
                senders = {LABEL: SessionRequester(session, origin=LABEL)}
                with pytest.raises(JsonRpcError) as refused:
                    await senders[LABEL]("skills/get", {"uri": "skill://no-such/SKILL.md"})
                assert refused.value.rpc_code == -32602
                assert refused.value.data == {"uri": "skill://no-such/SKILL.md"}
                out = await pump_async(host, host.list_skills(LABEL), senders)
                assert len(host.catalog(LABEL)) == 4
                out += await pump_async(
                    host, host.load(LABEL, SKILL), senders, on_effect=react(host)
                )
                out += await pump_async(
                    host, host.read(LABEL, SKILL, "templates/invoice.md"), senders
                )
                out += await pump_async(host, host.list_dir(LABEL, SKILL, "templates"), senders)
        assert not [i for i in out if isinstance(i, TransportFailure)]
        delivered = [i for i in out if isinstance(i, DeliverToModel)]
        assert [d.content for d in delivered] == [
            ex.FILES["SKILL.md"],
            ex.FILES["templates/invoice.md"],
        ]
        assert all(d.verified for d in delivered)
        listing = only(out, DirectoryListing)
        assert not listing.from_manifest
        assert [c.name for c in listing.children] == ["invoice.md", "purchase-order.md"]

    anyio.run(body, backend="asyncio")
    assert "Traceback" not in stderr.read_text()


def test_our_own_stdio_client_and_handshake(skills_root: Path) -> None:
    async def body() -> None:
        argv = [sys.executable, str(PEER), str(skills_root)]
        async with open_stdio_client(argv, label=LABEL, env=child_env(), stderr=-3) as client:
            host = new_host()
            await handshake(host, LABEL, client, timeout=20)
            features = host.features(LABEL)
            assert features is not None
            assert features.directory_read
            connections = {LABEL: client}
            await pump(host, host.list_skills(LABEL), connections, timeout=20)
            out = await pump(
                host, host.load(LABEL, "skill://data-files/SKILL.md"), connections, timeout=20
            )
            prompt = only(out, RequestApproval)
            out = await pump(host, host.approve(prompt.prompt_id), connections, timeout=20)
            assert only(out, DeliverToModel).content == DATA_FILES["data-files/SKILL.md"]
            out = await pump(
                host,
                host.read(LABEL, "skill://data-files/SKILL.md", "raw.bin"),
                connections,
                timeout=20,
            )
            assert only(out, DeliverToModel).content == bytes(range(256))

    anyio.run(body, backend="asyncio")


def test_the_server_s_own_resources_still_work(skills_root: Path) -> None:
    def read(number: int, uri: str) -> dict[str, Any]:
        params = {"uri": uri, "_meta": MODERN_META}
        return {"jsonrpc": "2.0", "id": number, "method": "resources/read", "params": params}

    messages = [
        read(1, peer.MEMO_URI),
        read(2, SKILL),
        read(3, "skill://pdf-processing/missing.md"),
        {"jsonrpc": "2.0", "id": 4, "method": "resources/list", "params": {"_meta": MODERN_META}},
    ]
    lines = exchange_in_process(skills_root, messages, own_resources=True)
    memo = json.loads(lines[1])["result"]["contents"][0]
    assert (memo["uri"], memo["text"]) == (peer.MEMO_URI, peer.MEMO_TEXT)
    ours = peer.skills_server(str(skills_root)).connection()
    assert lines[2] == our_line(ours.handle(messages[1]))
    assert lines[3] == our_line(ours.handle(messages[2]))  # -32602 with data.uri (ERR-03)
    listed = json.loads(lines[4])["result"]["resources"]
    assert [r["uri"] for r in listed] == [peer.MEMO_URI]  # the server's own listing stays its own


# --- a large read leaves the SDK's event loop serving ---------------------------------------------


def test_a_large_read_leaves_the_sdk_event_loop_serving() -> None:
    """A read over ``DEFAULT_DEFER_READS_OVER`` is read in a worker thread: while it waits (on an
    Event the test sets only after), another request is answered; small reads stay on the loop."""
    big = b"b" * (300 << 10)
    source = peer.GatedSource(
        {"s/SKILL.md": skill_md("s"), "s/big.md": big, "s/small.md": b"small"}, gated="big.md"
    )
    server = Server(peer.NAME, version=peer.VERSION)
    add_skills(server, SkillsServer(source, cursor_key=peer.CURSOR_KEY))
    loop_thread = threading.current_thread().name

    def read(number: int, name: str) -> SessionMessage:
        params = {"uri": f"skill://s/{name}", "_meta": MODERN_META}
        message = {"jsonrpc": "2.0", "id": number, "method": "resources/read", "params": params}
        return SessionMessage(message=types.jsonrpc_message_adapter.validate_python(message))

    async def body() -> list[dict[str, Any]]:
        c2s_send, c2s_recv = anyio.create_memory_object_stream[SessionMessage | Exception](8)
        s2c_send, s2c_recv = anyio.create_memory_object_stream[SessionMessage](8)
        answers: list[dict[str, Any]] = []

        async def answer() -> dict[str, Any]:
            with anyio.fail_after(60):  # a generous bound: a broken loop fails, never hangs
                out = (await s2c_recv.receive()).message
            line = out.model_dump_json(by_alias=True, exclude_unset=True)
            parsed: dict[str, Any] = json.loads(line)
            return parsed

        with c2s_send, c2s_recv, s2c_send, s2c_recv:
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    server.run, c2s_recv, s2c_send, server.create_initialization_options()
                )
                await c2s_send.send(read(1, "big.md"))
                assert await anyio.to_thread.run_sync(source.started.wait, 30)
                await c2s_send.send(read(2, "small.md"))
                answers.append(await answer())  # the small read, while the large one waits
                source.release.set()
                answers.append(await answer())
                tg.cancel_scope.cancel()
        return answers

    small, large = anyio.run(body)
    assert small["id"] == 2
    assert small["result"]["contents"][0]["text"] == "small"
    assert large["id"] == 1
    assert large["result"]["contents"][0]["text"].encode() == big
    assert source.threads["big.md"] != loop_thread
    assert source.threads["small.md"] == loop_thread
