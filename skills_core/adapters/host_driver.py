"""Drive a :class:`~skills_core.host.Host` over live connections: the handshake, and the pump over them.

Theory of operation: the loop that carries out a host's requests is
:func:`skills_core.host.pump.pump_async` (sans-IO, no event-loop primitive). This module adapts the
connections the stdio adapters give (``StdioClient``, or anything with the :class:`Requester`
shape) to that pump's requester protocol: :func:`carry_out` turns each connection's
``request(method, params, timeout=...)`` into a ``send(method, params)`` and runs the pump.
Everything that is not a request (approval prompts, deliveries, notices, failures) comes back to
the caller in causal order, with a :class:`~skills_core.host.pump.TransportFailure` wherever a
connection failed; approving is another host call whose effects go through :func:`carry_out` again.

:func:`handshake` opens a connection the way base-protocol.md §1.4 recommends on stdio: probe
``server/discover`` (modern), and fall back to ``initialize`` on any error or timeout (legacy).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Mapping
from typing import Protocol

from skills_core._version import __version__
from skills_core.errors import JsonRpcError, SkillsError, TransportError
from skills_core.host.effects import Effect
from skills_core.host.machine import Host
from skills_core.host.pump import AsyncSend, Pumped, TransportFailure, pump_async
from skills_core.jsonvalue import JSONValue
from skills_core.messages import Era, Implementation, client_capabilities, request_meta
from skills_core.spec import LEGACY_PROTOCOL_VERSION, SUPPORTED_MODERN_VERSIONS, Method

__all__ = ["Requester", "TransportFailure", "carry_out", "handshake", "CLIENT_INFO"]

#: How this library introduces itself in ``clientInfo``.
CLIENT_INFO = Implementation(name="skills-core", version=__version__)


class Requester(Protocol):
    """A connection that can send a request and await its result (both adapters' ``StdioClient``)."""

    async def request(
        self, method: str, params: Mapping[str, object] | None = None, *, timeout: float | None
    ) -> dict[str, JSONValue]:
        """Send a request; return its result or raise JsonRpcError / TransportError."""

    async def notify(self, method: str, params: Mapping[str, object] | None = None) -> None:
        """Send a notification."""


async def carry_out(
    host: Host,
    effects: Iterable[Effect],
    connections: Mapping[str, Requester],
    *,
    timeout: float | None,
) -> list[Pumped]:
    """Carry out every ``SendRequest`` among ``effects`` and return everything else, in order.

    A thin wrapper over :func:`skills_core.host.pump.pump_async`.

    Args:
        host: The host whose effects these are.
        effects: Effects returned by a host call.
        connections: The connection for each origin label.
        timeout: Seconds to wait for each answer (``None``: forever).

    Returns:
        Every effect that is not a ``SendRequest``, including those that answers produced, plus a
        :class:`TransportFailure` wherever a connection failed (or an origin had none).
    """
    senders: dict[str, AsyncSend] = {
        label: functools.partial(connection.request, timeout=timeout)
        for label, connection in connections.items()
    }
    return await pump_async(host, effects, senders)


async def handshake(
    host: Host,
    origin: str,
    connection: Requester,
    *,
    timeout: float | None,
    client_info: Implementation = CLIENT_INFO,
) -> list[Effect]:
    """Discover a server's capabilities and connect it to ``host`` under ``origin``.

    Tries ``server/discover`` first (modern, stateless); on an error answer, a result that names
    no modern version we speak, or a timeout, falls back to ``initialize`` followed by
    ``notifications/initialized`` (legacy). Nothing else is sent (VER-12).

    Raises:
        TransportError: the server failed during both attempts.
        JsonRpcError: the server refused ``initialize`` too.
    """
    meta = request_meta(client_info)
    try:
        result = await connection.request(Method.SERVER_DISCOVER, {"_meta": meta}, timeout=timeout)
    except (JsonRpcError, TransportError) as exc:
        if isinstance(exc, TransportError) and exc.kind != "timeout":
            raise
        result = None
    if result is not None:
        versions = result.get("supportedVersions")
        spoken = [
            v for v in SUPPORTED_MODERN_VERSIONS if isinstance(versions, list) and v in versions
        ]
        if spoken:
            return host.connect(
                origin, result.get("capabilities"), era=Era.MODERN, protocol_version=spoken[0]
            )
    params: dict[str, JSONValue] = {
        "protocolVersion": LEGACY_PROTOCOL_VERSION,
        "capabilities": client_capabilities(),
        "clientInfo": client_info.to_json(),
    }
    result = await connection.request(Method.INITIALIZE, params, timeout=timeout)
    with contextlib.suppress(SkillsError):  # the next request reports a dead connection
        await connection.notify(Method.NOTIFICATIONS_INITIALIZED)
    return host.connect(origin, result.get("capabilities"), era=Era.LEGACY)
