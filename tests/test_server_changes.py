"""Changes pushed by the server, without I/O: the change value, the pacer, each client's messages.

The folders are real (the filesystem source watches them); everything else is in-process.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from skills_core.adapters import ServerStream
from skills_core.jsonrpc import ErrorObject
from skills_core.jsonvalue import JSONValue
from skills_core.server import (
    ChangePacer,
    ServerOptions,
    SkillChanges,
    SkillsServer,
    server_from_roots,
)
from skills_core.server.changes import DEFAULT_WINDOW, MIN_INTERVAL

SUB_ID = "io.modelcontextprotocol/subscriptionId"
META: dict[str, JSONValue] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
INIT: dict[str, JSONValue] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


def write_skill(root: Path, name: str, body: str = "body\n") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}"
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_skill(tmp_path, "alpha")
    return tmp_path


def serve(root: Path) -> SkillsServer:
    return server_from_roots([root], cursor_key=b"k" * 32, options=ServerOptions(ttl_ms=0))


def lines(data: bytes) -> list[dict[str, object]]:
    return [json.loads(line) for line in data.splitlines()]


def test_capabilities_declare_list_changed_and_subscribe_push_01(root: Path) -> None:
    """PUSH-01: both eras see resources.listChanged and resources.subscribe."""
    server = serve(root)
    assert server.capabilities()["resources"] == {"listChanged": True, "subscribe": True}
    result = server.answer("initialize", INIT)
    assert isinstance(result, dict)
    assert result["capabilities"] == server.capabilities()


def test_change_value_added_changed_removed_push_02(root: Path) -> None:
    """PUSH-02: the change names skills added, changed and removed, and only real changes."""
    server = serve(root)
    assert server.changes() is None
    write_skill(root, "beta")
    change = server.changes()
    assert change == SkillChanges(
        added=("skill://beta/SKILL.md",), resources=("skill://beta/SKILL.md",)
    )
    assert server.changes() is None  # reported once
    (root / "alpha" / "SKILL.md").write_text(
        "---\nname: alpha\ndescription: The alpha skill.\n---\nnew body\n"
    )
    change = server.changes()
    assert change is not None
    assert change.changed == ("skill://alpha/SKILL.md",)
    assert not change.added
    shutil.rmtree(root / "beta")
    change = server.changes()
    assert change is not None
    assert change.removed == ("skill://beta/SKILL.md",)
    assert change.to_json()["removed"] == ["skill://beta/SKILL.md"]


def test_no_change_for_a_rescan_with_equal_entries_push_02(root: Path) -> None:
    """PUSH-02: a refresh or a touch that changes no entry is no change; add+remove is none."""
    server = serve(root)
    server.refresh()
    assert server.changes() is None
    write_skill(root, "gamma")
    assert server.moved()
    shutil.rmtree(root / "gamma")
    assert server.changes() is None


def test_the_change_announced_is_the_folder_after_the_window_push_05(root: Path) -> None:
    """PUSH-05: the look that first sees a change may catch a file half written; what is
    announced when the window is over is the folder as it is then, not as that look found it,
    though it comes within ``ttlMs`` of that look (which re-scans nothing by itself)."""
    server = server_from_roots([root], cursor_key=b"k" * 32, options=ServerOptions(ttl_ms=2_000))
    assert server.changes() is None
    folder = root / "beta"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: beta\n")  # half written: no skill yet
    time.sleep(2.1)  # past ttlMs: the next look re-scans, and sees the half-written file
    server.moved()
    assert "skill://beta/SKILL.md" not in json.dumps(server.answer("skills/list", {"_meta": META}))
    write_skill(root, "beta")  # the writer finishes within the window
    change = server.changes()  # well within ttlMs of the look
    assert change is not None
    assert change.added == ("skill://beta/SKILL.md",)
    assert "skill://beta/SKILL.md" in json.dumps(server.answer("skills/list", {"_meta": META}))


def test_pacer_holds_a_change_for_the_window_and_spaces_announcements_push_05() -> None:
    """PUSH-05: looks once per interval, announces after the window, at most once per interval."""
    pacer = ChangePacer(interval=1.0)
    assert pacer.look_due(0.0)
    assert not pacer.looked(0.0, moved=False)
    assert not pacer.look_due(0.5)
    assert pacer.next_wakeup() == 1.0
    assert pacer.look_due(1.0)
    assert not pacer.looked(1.0, moved=True)  # held for the window
    assert pacer.next_wakeup() == pytest.approx(1.0 + DEFAULT_WINDOW)
    assert pacer.looked(1.0 + DEFAULT_WINDOW, moved=True)
    # another change at once: not before an interval since the last announcement
    assert not pacer.looked(1.3, moved=True)
    assert pacer.next_wakeup() == pytest.approx(2.0 + DEFAULT_WINDOW)
    assert pacer.looked(2.0 + DEFAULT_WINDOW, moved=False)
    assert ChangePacer(interval=0).interval == MIN_INTERVAL
    with pytest.raises(ValueError, match="non-negative"):
        ChangePacer(interval=-1)


def test_legacy_stream_gets_list_changed_and_updated_push_03_push_04(root: Path) -> None:
    """PUSH-03, PUSH-04: list_changed after initialize; updated for subscribed URIs only."""
    server = serve(root)
    stream = ServerStream(server.connection())
    write_skill(root, "beta")
    assert stream.push(server.changes()) == b""  # not initialized: nothing asked
    stream.receive_data(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}).encode()
        + b"\n"
        + json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "resources/subscribe",
                "params": {"uri": "skill://alpha/SKILL.md"},
            }
        ).encode()
        + b"\n"
    )
    out = stream.next_output()
    assert isinstance(out, bytes)
    assert lines(out)[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    (root / "alpha" / "SKILL.md").write_text(
        "---\nname: alpha\ndescription: The alpha skill.\n---\nedited\n"
    )
    write_skill(root, "gamma")
    sent = lines(stream.push(server.changes()))
    assert sent == [
        {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"},
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "skill://alpha/SKILL.md"},
        },
    ]
    stream.receive_data(
        b'{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe",'
        b'"params":{"uri":"skill://alpha/SKILL.md"}}\n'
    )
    assert isinstance(stream.next_output(), bytes)
    (root / "alpha" / "SKILL.md").write_text(
        "---\nname: alpha\ndescription: The alpha skill.\n---\nagain\n"
    )
    assert [m["method"] for m in lines(stream.push(server.changes()))] == [
        "notifications/resources/list_changed"
    ]


def test_subscribe_is_legacy_only(root: Path) -> None:
    """resources/subscribe does not exist in 2026-07-28: -32601."""
    connection = serve(root).connection()
    answer = connection.answer("resources/subscribe", {"_meta": META, "uri": "skill://a/SKILL.md"})
    assert isinstance(answer, ErrorObject)
    assert answer.code == -32601


def test_listen_acknowledges_tags_and_ends_push_06_push_07_push_08(root: Path) -> None:
    """PUSH-06..PUSH-08: ack with the honored filter, tagged changes, the graceful end."""
    server = serve(root)
    stream = ServerStream(server.connection())
    request = {
        "jsonrpc": "2.0",
        "id": "listen:0",
        "method": "subscriptions/listen",
        "params": {
            "_meta": META,
            "notifications": {
                "resourcesListChanged": True,
                "toolsListChanged": True,
                "resourceSubscriptions": ["skill://alpha/SKILL.md"],
            },
        },
    }
    stream.receive_data(json.dumps(request).encode() + b"\n")
    out = stream.next_output()
    assert isinstance(out, bytes)
    assert lines(out) == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {SUB_ID: "listen:0"},
                "notifications": {
                    "resourcesListChanged": True,
                    "resourceSubscriptions": ["skill://alpha/SKILL.md"],
                },
            },
        }
    ]
    (root / "alpha" / "SKILL.md").write_text(
        "---\nname: alpha\ndescription: The alpha skill.\n---\nedited\n"
    )
    assert lines(stream.push(server.changes())) == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/list_changed",
            "params": {"_meta": {SUB_ID: "listen:0"}},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "skill://alpha/SKILL.md", "_meta": {SUB_ID: "listen:0"}},
        },
    ]
    (end,) = lines(stream.close())
    assert end["id"] == "listen:0"
    result = end["result"]
    assert isinstance(result, dict)
    assert result["resultType"] == "complete"
    meta = result["_meta"]
    assert isinstance(meta, dict)
    assert meta[SUB_ID] == "listen:0"
    assert stream.close() == b""


def test_cancelled_listen_gets_nothing_more_push_08(root: Path) -> None:
    """PUSH-08: notifications/cancelled naming the listen id ends it, silently."""
    server = serve(root)
    stream = ServerStream(server.connection())
    stream.receive_data(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "subscriptions/listen",
                "params": {"_meta": META, "notifications": {"resourcesListChanged": True}},
            }
        ).encode()
        + b'\n{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}\n'
    )
    assert isinstance(stream.next_output(), bytes)
    assert stream.next_output() is not None
    write_skill(root, "beta")
    assert stream.push(server.changes()) == b""
    assert stream.close() == b""


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"notifications": {"resourcesListChanged": True}}, -32602),  # no _meta: not modern
        ({"_meta": META}, -32602),
        ({"_meta": META, "notifications": {"resourceSubscriptions": "x"}}, -32602),
    ],
)
def test_listen_refusals(root: Path, params: dict[str, object], code: int) -> None:
    answer = serve(root).connection().listen(1, params)  # type: ignore[arg-type]
    assert isinstance(answer, ErrorObject)
    assert answer.code == code


def test_listen_limit(root: Path) -> None:
    connection = serve(root).connection()
    params = {"_meta": META, "notifications": {"resourcesListChanged": True}}
    for n in range(16):
        assert isinstance(connection.listen(n, params), dict)  # type: ignore[arg-type]
    refused = connection.listen(99, params)  # type: ignore[arg-type]
    assert isinstance(refused, ErrorObject)
    assert refused.code == -32603


def test_tracking_changes_builds_no_entry_and_sees_a_recheck_push_02(root: Path) -> None:
    """PUSH-02 at scale: the server remembers what it reported without building the entry of
    any skill (skills are kept encoded); a skill re-checked by ``skills/get`` (the live catalog
    changed in place) is reported, and the map reported before is not changed under it."""
    write_skill(root, "beta")
    write_skill(root, "gamma")
    server = serve(root)
    skills = server.catalog.skills
    assert [skill._entry for skill in skills] == [None, None, None]
    assert server.changes() is None
    assert [skill._entry for skill in skills] == [None, None, None]
    (root / "beta" / "SKILL.md").write_text(
        "---\nname: beta\ndescription: The new beta skill.\n---\nbody\n"
    )
    got = server.answer("skills/get", {"_meta": META, "uri": "skill://beta/SKILL.md"})
    assert isinstance(got, dict)
    change = server.changes()
    assert change is not None
    assert change.changed == ("skill://beta/SKILL.md",)
    assert change.resources == ("skill://beta/SKILL.md",)
    assert (change.added, change.removed) == ((), ())
    assert skills[0]._entry is None  # alpha, the same object both times: never compared
    assert server.changes() is None
