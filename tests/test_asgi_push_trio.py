"""The ASGI app's change streams under trio (hypercorn's trio worker), in-process.

Driven by ``asgi_harness``'s scope and the app's own ``send``/``receive`` under ``trio.run``: a
2026-07-28 listen stream gets its acknowledgement, a change, and its result when the streams end
(PUSH-06, PUSH-07, PUSH-08), also when the ASGI server cancels the request; a legacy session's
GET stream whose client takes nothing holds at most :data:`MAX_QUEUED` events and is then ended
(PUSH-05); a client that leaves ends its stream and the worker's timer. The same streams through
a real ``hypercorn --worker-class trio`` are in ``test_live_async.py``. One case, the cancelled
listen stream, is run under asyncio too.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import trio
from asgi_harness import INITIALIZE, base_headers, call, modern_request, scope

from skills_core.adapters._asgi_push import MAX_QUEUED, end_all_streams
from skills_core.adapters.asgi import SkillsApp
from skills_core.server import ServerOptions, SkillChanges, server_from_roots

SUB_ID = "io.modelcontextprotocol/subscriptionId"
SESSION_KEY = b"s" * 32
#: Seconds any one step may take (the timer looks every 0.1 s here).
STEP = 20.0


def write_skill(root: Path, name: str, body: str = "body\n") -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}"
    )


def make_app(root: Path) -> SkillsApp:
    write_skill(root, "alpha")
    server = server_from_roots([root], cursor_key=b"c" * 32, options=ServerOptions(ttl_ms=0))
    return SkillsApp(server, session_key=SESSION_KEY)


class Exchange:
    """One request to the app under trio: its body, what it sent, and a client that can leave."""

    def __init__(self, body: bytes) -> None:
        self.body: bytes | None = body
        self.sent: list[dict[str, Any]] = []
        self.arrived = trio.Event()  # set at each message sent
        self.leave = trio.Event()
        self.gate: trio.Event | None = None  # while set to an unset event, sends block

    async def receive(self) -> MutableMapping[str, Any]:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.leave.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        gate = self.gate
        if gate is not None and message.get("body"):
            await gate.wait()
        self.sent.append(dict(message))
        self.arrived.set()
        self.arrived = trio.Event()

    async def until(self, count: int) -> None:
        """Wait until ``count`` messages were sent."""
        with trio.fail_after(STEP):
            while len(self.sent) < count:
                await self.arrived.wait()

    def events(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages of the event stream so far."""
        out = []
        for message in self.sent[1:]:
            for block in message.get("body", b"").split(b"\n\n"):
                if block.startswith(b"event: message\ndata: "):
                    out.append(json.loads(block.split(b"data: ", 1)[1]))
        return out

    @property
    def ended(self) -> bool:
        last = self.sent[-1]
        return last["type"] == "http.response.body" and not last.get("more_body", False)


def listen_exchange() -> tuple[list[tuple[str, str]], Exchange]:
    headers, body = modern_request(
        "subscriptions/listen", {"notifications": {"resourcesListChanged": True}}, request_id=9
    )
    return headers, Exchange(body)


def test_listen_stream_under_trio_push_06_push_07_push_08(tmp_path: Path) -> None:
    """Acknowledged (PUSH-06), a change tagged with the listen id (PUSH-07), and the listen
    result when the streams end (PUSH-08), then the end of the body."""
    app = make_app(tmp_path)
    headers, exchange = listen_exchange()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(app, scope("POST", "/mcp", headers), exchange.receive, exchange.send)
            await exchange.until(2)
            start = exchange.sent[0]
            assert (start["status"], dict(start["headers"])[b"content-type"]) == (
                200,
                b"text/event-stream",
            )
            assert exchange.events()[0]["method"] == "notifications/subscriptions/acknowledged"
            write_skill(tmp_path, "beta")
            await exchange.until(3)
            assert exchange.events()[1] == {
                "jsonrpc": "2.0",
                "method": "notifications/resources/list_changed",
                "params": {"_meta": {SUB_ID: 9}},
            }
            end_all_streams()
        assert exchange.ended
        result = exchange.events()[-1]
        assert result["id"] == 9
        assert result["result"]["resultType"] == "complete"
        assert result["result"]["_meta"][SUB_ID] == 9

    trio.run(main)


def test_cancelled_listen_stream_sends_its_result_first_under_trio_push_08(
    tmp_path: Path,
) -> None:
    """hypercorn cancels a request at its graceful timeout: the listen result goes out first."""
    app = make_app(tmp_path)
    headers, exchange = listen_exchange()

    async def main() -> None:
        with trio.CancelScope() as serving:

            async def cancel_once_acknowledged() -> None:
                await exchange.until(2)
                serving.cancel()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(cancel_once_acknowledged)
                await app(scope("POST", "/mcp", headers), exchange.receive, exchange.send)
        assert serving.cancelled_caught
        assert exchange.ended
        assert exchange.events()[-1]["result"]["resultType"] == "complete"

    trio.run(main)


def legacy_session(app: SkillsApp) -> str:
    answer = call(app, "POST", "/mcp", base_headers(), [INITIALIZE])
    session = answer.header("mcp-session-id")
    assert session is not None
    return session


def test_a_client_that_takes_nothing_holds_at_most_max_queued_events_push_05(
    tmp_path: Path,
) -> None:
    """A legacy GET stream whose client takes nothing: 100 changes queue at most MAX_QUEUED
    events, then the stream is ended; once the client reads, it gets them and the end."""
    app = make_app(tmp_path)
    headers = [*base_headers(), ("mcp-session-id", legacy_session(app))]
    headers = [(k, "text/event-stream" if k == "accept" else v) for k, v in headers]
    exchange = Exchange(b"")
    exchange.gate = trio.Event()
    change = SkillChanges(added=("skill://beta/SKILL.md",))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(app, scope("GET", "/mcp", headers), exchange.receive, exchange.send)
            await exchange.until(1)  # the head; the body waits for the gate
            hub = app._push
            with trio.fail_after(STEP):
                while not hub._streams:
                    await trio.sleep(0.01)
            stream = next(iter(hub._streams))
            for _ in range(100):
                hub._publish(change)
                assert len(stream.items) <= MAX_QUEUED + 1
            assert stream.ended
            gate = exchange.gate
            assert gate is not None
            gate.set()
        assert exchange.ended
        events = exchange.events()
        assert 0 < len(events) <= MAX_QUEUED
        assert {event["method"] for event in events} == {"notifications/resources/list_changed"}

    trio.run(main)


def test_a_client_that_leaves_ends_its_stream_and_the_timer_under_trio(tmp_path: Path) -> None:
    """http.disconnect ends the stream at once; with no stream left the worker's timer stops."""
    app = make_app(tmp_path)
    headers, exchange = listen_exchange()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(app, scope("POST", "/mcp", headers), exchange.receive, exchange.send)
            await exchange.until(2)
            hub = app._push
            assert hub._timing
            exchange.leave.set()
        assert not hub._streams
        with trio.fail_after(STEP):
            while hub._timing:
                await trio.sleep(0.05)

    trio.run(main)


def test_cancelled_listen_stream_sends_its_result_first_under_asyncio_push_08(
    tmp_path: Path,
) -> None:
    """The same under asyncio (hypercorn's asyncio worker cancels at its graceful timeout too)."""
    import asyncio

    app = make_app(tmp_path)
    headers, body = modern_request(
        "subscriptions/listen", {"notifications": {"resourcesListChanged": True}}, request_id=9
    )
    sent: list[dict[str, Any]] = []
    acknowledged = asyncio.Event()
    pending = [body]

    async def receive() -> MutableMapping[str, Any]:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))
        if len(sent) == 2:
            acknowledged.set()

    async def main() -> None:
        task = asyncio.ensure_future(app(scope("POST", "/mcp", headers), receive, send))
        await asyncio.wait_for(acknowledged.wait(), STEP)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=STEP)
        assert task in done
        assert task.cancelled()

    asyncio.run(main())
    assert not sent[-1].get("more_body", False)
    result = json.loads(sent[-2]["body"].split(b"data: ", 1)[1])
    assert result["id"] == 9
    assert result["result"]["resultType"] == "complete"
