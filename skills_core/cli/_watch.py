"""``skills-core host ... watch``: report each server's skill changes until interrupted.

Theory of operation: after the usual start (spawn or connect, handshake, one listing of every
server), each connection's notifications go to a :class:`~skills_core.host.watch.ChangeWatch`
(2025-11-25 servers send them unasked, over HTTP on the session's GET stream, which the command
opens; on a 2026-07-28 connection the command first opens a ``subscriptions/listen`` stream
asking for ``resourcesListChanged``). A notification is only a
hint: the watch re-lists that server (at most once per ``--relist-interval`` seconds, whatever
the number of notifications), verifies the listing as any other, confirms with ``skills/get`` the
skills it no longer lists, and the command prints one line per skill added, removed or changed
(``--json``: one JSON object per line), every server string through :mod:`skills_core.display`.
Nothing is loaded: a new skill still needs ``load`` and its approval, and a changed skill's
approval does not cover its new files (approvals bind to the exact manifest).

A server that offers no notification stream (a 2026-07-28 server that answers
``subscriptions/listen`` with ``-32601``, a 2025-11-25 HTTP server without a GET stream) is
re-listed every ``--poll-interval`` seconds instead (default 30), said once on stderr; with
``--poll-interval 0`` it is an error (exit 2).

It runs until interrupted (Ctrl-C, SIGTERM: exit 0) or until a server's connection ends (exit 2,
named on stderr).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Final, Protocol, cast

from ..display import display
from ..errors import JsonRpcError, TransportError
from ..host.effects import Effect
from ..host.pump import Pumped
from ..host.router import Host
from ..host.watch import ChangeWatch, SkillsChanged
from ..jsonvalue import JSONValue
from ..messages import Era
from ..spec import ErrorCode
from ._common import EXIT_CONNECTION

__all__ = ["watch_changes"]

#: Seconds between two checks that every connection is still up, when nothing else happens.
_ALIVE_CHECK: Final = 1.0


class _Listening(Protocol):
    pushes_unasked: bool

    def watch_notifications(
        self, callback: Callable[[str, dict[str, JSONValue] | None], None] | None
    ) -> None: ...

    @property
    def alive(self) -> bool: ...

    async def listen(
        self, notifications: Mapping[str, object], *, timeout: float | None
    ) -> dict[str, JSONValue]: ...


async def watch_changes(
    host: Host,
    connections: Mapping[str, object],
    pump: Callable[[list[Effect]], Awaitable[list[Pumped]]],
    *,
    interval: float,
    poll_every: float,
    timeout: float,
    as_json: bool,
    fail: Callable[[int, str], None],
) -> None:
    """Watch every connection until interrupted or one ends (``fail`` records why)."""
    loop = asyncio.get_running_loop()
    watch = ChangeWatch(host, interval=interval)
    wake = asyncio.Event()
    listening: dict[str, _Listening] = {}

    def poll_instead(label: str, why: str) -> bool:
        if not poll_every > 0:
            fail(EXIT_CONNECTION, f"{why}; --poll-interval 0 asks for notifications")
            return False
        watch.poll(label, poll_every, loop.time())
        sys.stderr.write(
            f"skills-core: {display(why)}: re-listing it every {poll_every:g} s instead\n"
        )
        return True

    for label, connection in connections.items():
        if not hasattr(connection, "watch_notifications"):
            why = f"server {label!r}: this transport cannot receive notifications"
            if not poll_instead(label, why):
                return
            continue
        client = cast("_Listening", connection)

        def heard(method: str, params: object, label: str = label) -> None:
            if watch.notified(label, method):
                wake.set()

        client.watch_notifications(heard)
        listening[label] = client
        if host.era(label) is Era.MODERN or not client.pushes_unasked:
            try:
                await client.listen({"resourcesListChanged": True}, timeout=timeout)
            except (JsonRpcError, TransportError) as exc:
                refused = (
                    isinstance(exc, JsonRpcError) and exc.rpc_code == ErrorCode.METHOD_NOT_FOUND
                ) or (isinstance(exc, TransportError) and exc.kind == "http-status")
                if not refused:
                    fail(EXIT_CONNECTION, f"{exc} (subscriptions/listen)")
                    return
                why = f"server {label!r} offers no notification stream"
                if not poll_instead(label, why):
                    return
                if not client.alive:  # the HTTP client's liveness is its stream's: none here
                    del listening[label]
    stop = asyncio.Event()
    with _stopping(loop, stop, wake):
        sys.stderr.write(f"skills-core: watching {len(connections)} server(s); Ctrl-C ends\n")
        sys.stderr.flush()
        while not stop.is_set():
            for origin in watch.due(loop.time()):
                pumped = await pump(watch.begin(origin, loop.time()))
                confirmations = watch.listed(origin, pumped)
                if confirmations:
                    await pump(confirmations)
                change = watch.end(origin)
                if change is not None:
                    _print(change, as_json=as_json)
            for label, client in listening.items():
                if not client.alive:
                    fail(EXIT_CONNECTION, f"server {label!r}: the connection ended")
                    return
            wake.clear()
            due = watch.next_wakeup()
            wait = _ALIVE_CHECK if due is None else min(_ALIVE_CHECK, max(0.0, due - loop.time()))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), wait)


@contextlib.contextmanager
def _stopping(
    loop: asyncio.AbstractEventLoop, stop: asyncio.Event, wake: asyncio.Event
) -> Iterator[None]:
    def on_signal() -> None:
        stop.set()
        wake.set()

    installed: list[signal.Signals] = []
    for number in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(number, on_signal)
            installed.append(number)
    try:
        yield
    finally:
        for number in installed:
            loop.remove_signal_handler(number)


def _print(change: SkillsChanged, *, as_json: bool) -> None:
    rows = [
        *(("added", uri) for uri in change.added),
        *(("removed", uri) for uri in change.removed),
        *(("changed", uri) for uri in change.changed),
    ]
    out = sys.stdout
    for kind, uri in rows:
        if as_json:
            record = {"server": change.origin, "change": kind, "uri": uri}
            out.write(json.dumps(record, ensure_ascii=True) + "\n")
        else:
            out.write(f"{display(change.origin)}: {kind} {display(uri)}\n")
    out.flush()
