"""The host's side of changes pushed: re-list on a hint, verify, report, and never widen approval.

In-process: our host against our server (real folders), the pump between them, both eras.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skills_core.errors import JsonRpcError
from skills_core.host import ChangeWatch, Host, SkillsChanged
from skills_core.host.driver import CLIENT_INFO
from skills_core.host.effects import (
    DeliverToModel,
    Effect,
    Refused,
    RequestApproval,
    SkillChanged,
)
from skills_core.host.pump import pump
from skills_core.host.states import LoadState
from skills_core.jsonvalue import JSONValue
from skills_core.messages import Era
from skills_core.server import ServerConnection, ServerOptions, server_from_roots
from skills_core.server.handler import SkillsServer

SKILL = "skill://alpha/SKILL.md"


def write_skill(root: Path, name: str, body: str = "body\n") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}"
    )


class Peer:
    """Our host connected to our server in-process, in one era."""

    def __init__(self, root: Path, era: Era) -> None:
        self.server: SkillsServer = server_from_roots(
            [root], cursor_key=b"k" * 32, options=ServerOptions(ttl_ms=0)
        )
        self.connection: ServerConnection = self.server.connection()
        self.host = Host(client_info=CLIENT_INFO)
        self.ids = 0
        method, params = self.host.handshake_request(era)
        result = self.send(method, params)
        self.host.on_handshake("s", era, result)
        if era is Era.MODERN:
            listen: dict[str, JSONValue] = {
                **params,
                "notifications": {"resourcesListChanged": True},
            }
            ack = self.connection.listen("listen:0", listen)
            assert isinstance(ack, dict)
        self.watch = ChangeWatch(self.host, interval=0)
        self.approve = True

    def send(self, method: str, params: dict[str, Any] | None) -> dict[str, JSONValue]:
        self.ids += 1
        response = self.connection.handle(
            {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params or {}}
        )
        assert response is not None
        if "error" in response:
            error = response["error"]
            assert isinstance(error, dict)
            code = error["code"]
            assert isinstance(code, int)
            raise JsonRpcError(str(error["message"]), rpc_code=code, method=method)
        result = response["result"]
        assert isinstance(result, dict)
        return result

    def react(self, effect: object) -> list[Effect] | None:
        if isinstance(effect, RequestApproval) and self.approve:
            return self.host.approve(effect.prompt_id)
        return None

    def run(self, effects: list[Effect]) -> list[object]:
        return list(pump(self.host, effects, {"s": self.send}, on_effect=self.react))

    def notified(self) -> tuple[SkillsChanged | None, list[object]]:
        """Push the server's change to the host as its transport would, and re-list."""
        change = self.server.changes()
        assert change is not None
        for message in self.connection.subscriptions.messages(change):
            method = message["method"]
            assert isinstance(method, str)
            self.watch.notified("s", method)
        (origin,) = self.watch.due(0.0)
        out = self.run(self.watch.begin(origin, 0.0))
        out += self.run(self.watch.listed(origin, out))
        return self.watch.end(origin), out


@pytest.fixture(params=[Era.LEGACY, Era.MODERN], ids=["2025-11-25", "2026-07-28"])
def peer(request: pytest.FixtureRequest, tmp_path: Path) -> Peer:
    write_skill(tmp_path, "alpha")
    p = Peer(tmp_path, request.param)
    p.run(p.host.list_skills("s"))
    p.root = tmp_path  # type: ignore[attr-defined]
    return p


def test_hint_relists_and_reports_added_changed_removed_push_09(peer: Peer) -> None:
    """PUSH-09: a notification makes a re-list; added, changed and removed are reported."""
    root: Path = peer.root  # type: ignore[attr-defined]
    write_skill(root, "beta")
    change, _ = peer.notified()
    assert change == SkillsChanged(origin="s", added=("skill://beta/SKILL.md",))
    write_skill(root, "beta", "edited\n")
    change, _ = peer.notified()
    assert change is not None
    assert change.changed == ("skill://beta/SKILL.md",)
    shutil.rmtree(root / "beta")
    change, _ = peer.notified()
    assert change is not None
    assert change.removed == ("skill://beta/SKILL.md",)
    assert peer.host.registry.get("s", "skill://beta/SKILL.md") is None
    assert peer.host.windows() == ()  # nothing was loaded on the way


def test_changed_approved_skill_needs_approval_again_push_10(peer: Peer) -> None:
    """PUSH-10: an acting skill whose entry changed is suspended until approved again."""
    root: Path = peer.root  # type: ignore[attr-defined]
    out = peer.run(peer.host.load("s", SKILL))
    assert any(isinstance(e, DeliverToModel) for e in out)
    assert peer.host.state("s", SKILL) is LoadState.ACTING
    write_skill(root, "alpha", "new instructions\n")
    peer.approve = False
    change, out = peer.notified()
    assert change is not None
    assert change.changed == (SKILL,)
    changed = [e for e in out if isinstance(e, SkillChanged)]
    assert changed
    assert changed[0].requires_reapproval
    prompts = [e for e in out if isinstance(e, RequestApproval)]
    assert prompts  # asked again, not approved
    assert not any(isinstance(e, DeliverToModel) for e in out)  # no new bytes reached the model
    refused = peer.run(peer.host.read("s", SKILL, "SKILL.md"))
    assert any(isinstance(e, Refused) for e in refused)
    assert not any(isinstance(e, DeliverToModel) for e in refused)


def test_removed_loaded_skill_is_unloaded_push_10(peer: Peer) -> None:
    """PUSH-10: a skill gone from the server is unloaded."""
    root: Path = peer.root  # type: ignore[attr-defined]
    peer.run(peer.host.load("s", SKILL))
    assert peer.host.state("s", SKILL) is LoadState.ACTING
    shutil.rmtree(root / "alpha")
    change, _ = peer.notified()
    assert change is not None
    assert change.removed == (SKILL,)
    assert peer.host.state("s", SKILL) is not LoadState.ACTING
    refused = peer.run(peer.host.read("s", SKILL, "SKILL.md"))
    assert not any(isinstance(e, DeliverToModel) for e in refused)


def test_flood_costs_one_relist_per_interval_push_11(tmp_path: Path) -> None:
    """PUSH-11: 100,000 notifications make one re-list per interval, not 100,000."""
    write_skill(tmp_path, "alpha")
    peer = Peer(tmp_path, Era.LEGACY)
    watch = ChangeWatch(peer.host, interval=1.0)
    for _ in range(100_000):
        watch.notified("s", "notifications/resources/list_changed")
    assert watch.notifications == 100_000
    assert watch.due(0.0) == ["s"]
    watch.begin("s", 0.0)
    watch.notified("s", "notifications/resources/updated")
    assert watch.due(0.5) == []  # running, and within the interval
    watch.end("s")
    assert watch.due(0.5) == []
    assert watch.next_wakeup() == 1.0
    assert watch.due(1.0) == ["s"]
    assert not watch.notified("s", "notifications/message")


def test_a_server_that_sends_nothing_is_relisted_on_a_timer_push_09(tmp_path: Path) -> None:
    """A server with no notification stream is polled: re-listed every ``every`` seconds (never
    more often than the interval), with the same verification and report as a hinted re-list;
    a hint in between is taken at the interval, not the period."""
    write_skill(tmp_path, "alpha")
    peer = Peer(tmp_path, Era.LEGACY)
    peer.run(peer.host.list_skills("s"))
    watch = ChangeWatch(peer.host, interval=1.0)
    with pytest.raises(ValueError, match="positive"):
        watch.poll("s", 0, 0.0)
    watch.poll("s", 10.0, 100.0)
    assert watch.due(105.0) == []
    assert watch.next_wakeup() == 110.0
    write_skill(tmp_path, "beta")
    assert watch.due(110.0) == ["s"]
    out = peer.run(watch.begin("s", 110.0))
    assert watch.due(111.0) == []  # running
    peer.run(watch.listed("s", out))
    change = watch.end("s")
    assert change is not None
    assert change.added == ("skill://beta/SKILL.md",)
    assert watch.next_wakeup() == 120.0
    watch.notified("s", "notifications/resources/list_changed")
    assert watch.due(110.5) == []
    assert watch.due(111.0) == ["s"]  # a hint waits for the interval only
    fast = ChangeWatch(peer.host, interval=5.0)
    fast.poll("t", 0.5, 0.0)
    assert fast.next_wakeup() == 5.0  # never more often than the interval


def test_a_server_flooding_notifications_costs_bounded_relists_and_output_push_11(
    tmp_path: Path,
) -> None:
    """PUSH-11 end to end: 100,000 notifications and more; re-lists at most one per interval."""
    countfile = tmp_path / "lists"
    peer = Path(__file__).parent / "peers" / "flood_server.py"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skills_core",
            "host",
            "--protocol-era",
            "legacy",
            "--server",
            f"s={sys.executable} {peer} {countfile}",
            "watch",
            "--json",
            "--relist-interval",
            "0.5",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        time.sleep(8)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err[-2000:]
    relists = int(countfile.read_text()) - 1  # the first listing is the start-up one
    assert 1 <= relists <= 8 / 0.5 + 2
    lines = out.splitlines()
    assert 1 <= len(lines) <= relists  # one line per change found, never one per notification
    assert len(err) < 2000
