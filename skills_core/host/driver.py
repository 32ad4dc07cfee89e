"""Drive a :class:`~skills_core.host.Host` over live connections: the handshake, and the pump over them.

Theory of operation: the loop that carries out a host's requests is
:func:`skills_core.host.pump.pump_async` (sans-IO, no event-loop primitive). This module, sans-IO
as well (it awaits the connections it is given, and does nothing else), adapts the connections the
adapters give (``StdioClient``, ``HttpClient``, or anything with the :class:`Requester` shape) to
that pump's requester protocol: :func:`carry_out` turns each connection's
``request(method, params, timeout=...)`` into a ``send(method, params)`` and runs the pump.
Everything that is not a request (approval prompts, deliveries, notices, failures) comes back to
the caller in causal order, with a :class:`~skills_core.host.pump.TransportFailure` wherever a
connection failed; approving is another host call whose effects go through :func:`carry_out` again.

:func:`handshake` opens a connection the way docs/protocol.md#discover recommends on stdio: probe
``server/discover`` (modern), and fall back to ``initialize`` on any error or timeout (legacy), or
speak only the era the caller pins. A connection that settles its era itself (a
:class:`Negotiator`, such as the HTTP client, whose era signals are HTTP statuses) is asked to, and
the host is connected with what it found.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Mapping
from typing import Final, Protocol, runtime_checkable

from ..errors import JsonRpcError, RemoteProtocolError, SkillsError, TransportError
from ..jsonvalue import JSONValue
from ..messages import Era, Implementation
from .effects import Effect
from .handshake import INITIALIZED_NOTIFICATION, Negotiated
from .pump import AsyncSend, Pumped, TransportFailure, pump_async
from .router import DEFAULT_CLIENT_INFO, Host

__all__ = [
    "Requester",
    "Negotiator",
    "Negotiated",
    "TransportFailure",
    "carry_out",
    "handshake",
    "CLIENT_INFO",
]

#: How this library introduces itself in ``clientInfo`` (the host's default).
CLIENT_INFO: Final = DEFAULT_CLIENT_INFO


class Requester(Protocol):
    """A connection that can send a request and await its result (both adapters' ``StdioClient``)."""

    async def request(
        self, method: str, params: Mapping[str, object] | None = None, *, timeout: float | None
    ) -> dict[str, JSONValue]:
        """Send a request; return its result or raise JsonRpcError / TransportError."""

    async def notify(self, method: str, params: Mapping[str, object] | None = None) -> None:
        """Send a notification."""


@runtime_checkable
class Negotiator(Requester, Protocol):
    """A requester that settles the era itself (the HTTP client: its signals are HTTP statuses)."""

    async def negotiate(
        self, *, client_info: Implementation, timeout: float | None, era: Era | None
    ) -> Negotiated:
        """Find the era (or use ``era``), handshake, and return the outcome.

        Raises:
            TransportError: the connection failed, or the server does not speak ``era``.
            JsonRpcError: the server refused the handshake.
        """


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
    client_info: Implementation | None = None,
    era: Era | None = None,
) -> list[Effect]:
    """Discover a server's capabilities and connect it to ``host`` under ``origin``.

    The requests and the reading of their answers are the host's
    (:meth:`~skills_core.host.router.Host.handshake_request`,
    :meth:`~skills_core.host.router.Host.on_handshake`); this is the stdio policy around them.
    With ``era`` unset, tries ``server/discover`` first (modern, stateless); on an error answer, a
    result that names no modern version we speak, or a timeout, falls back to ``initialize``
    followed by ``notifications/initialized`` (legacy). With ``era`` set, speaks only that era.
    Nothing else is sent (VER-12). A :class:`Negotiator` connection negotiates by its own rules.

    Args:
        client_info: Only for a :class:`Negotiator`: how to introduce ourselves (default: the
            host's own client info).

    Raises:
        TransportError: the server failed during both attempts (or the pinned one), or does not
            speak the pinned era.
        JsonRpcError: the server refused ``initialize`` (or, pinned modern, ``server/discover``).
        RemoteProtocolError: the server answered the handshake with something unusable.
    """
    if isinstance(connection, Negotiator):
        outcome = await connection.negotiate(
            client_info=client_info or host.client_info, timeout=timeout, era=era
        )
        return host.connect(
            origin,
            outcome.capabilities,
            era=outcome.era,
            protocol_version=outcome.protocol_version,
        )
    if era is not Era.LEGACY:
        method, params = host.handshake_request(Era.MODERN)
        try:
            result = await connection.request(method, params, timeout=timeout)
            return host.on_handshake(origin, Era.MODERN, result)
        except (JsonRpcError, TransportError, RemoteProtocolError) as exc:
            unanswered = isinstance(exc, TransportError) and exc.kind != "timeout"
            if era is Era.MODERN or unanswered:
                raise
    method, params = host.handshake_request(Era.LEGACY)
    result = await connection.request(method, params, timeout=timeout)
    with contextlib.suppress(SkillsError):  # the next request reports a dead connection
        await connection.notify(INITIALIZED_NOTIFICATION)
    return host.on_handshake(origin, Era.LEGACY, result)
