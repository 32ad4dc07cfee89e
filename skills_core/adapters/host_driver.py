"""Drive a :class:`~skills_core.host.Host` over live connections: the effect pump and the handshake.

Theory of operation: the host is sans-IO; it returns effects. Something must carry out each
``SendRequest``, hand the answer back with ``on_response`` (or ``on_request_failed``), and carry out
what that returns in turn. :func:`carry_out` is that loop, written with plain ``async``/``await`` and
no event-loop primitive, so the same code runs under asyncio and trio: it only awaits the
``request`` method of the connections it is given (either adapter's ``StdioClient``, or anything of
the same shape). Requests run one at a time, in the order the host asked for them, and effects come
back in causal order: the effects a response produced come right after the request that caused them.

Everything that is not a request (approval prompts, deliveries, notices, failures) is returned to
the caller, who decides: a command line prints and exits, an agent runtime shows a dialog. Approving
is another host call whose effects go through :func:`carry_out` again.

:func:`handshake` opens a connection the way base-protocol.md §1.4 recommends on stdio: probe
``server/discover`` (modern), and fall back to ``initialize`` on any error or timeout (legacy).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, final

from skills_core._version import __version__
from skills_core.errors import JsonRpcError, SkillsError, TransportError
from skills_core.host.effects import Effect, SendRequest
from skills_core.host.router import Host
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


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class TransportFailure:
    """A request could not be carried out: the connection failed (not a protocol answer).

    Returned by :func:`carry_out` alongside the host's own ``RequestFailed`` effect, so that a
    caller can tell "the server said no" from "the server is gone" (exit code 2 in the CLI).
    """

    origin: str
    method: str
    error: TransportError


async def carry_out(
    host: Host,
    effects: Iterable[Effect],
    connections: Mapping[str, Requester],
    *,
    timeout: float | None,
) -> list[Effect | TransportFailure]:
    """Carry out every ``SendRequest`` among ``effects`` and return everything else, in order.

    Args:
        host: The host whose effects these are.
        effects: Effects returned by a host call.
        connections: The connection for each origin label.
        timeout: Seconds to wait for each answer (``None``: forever).

    Returns:
        Every effect that is not a ``SendRequest``, including those that answers produced, plus a
        :class:`TransportFailure` wherever a connection failed.
    """
    queue: deque[Effect] = deque(effects)
    out: list[Effect | TransportFailure] = []
    while queue:
        effect = queue.popleft()
        if not isinstance(effect, SendRequest):
            out.append(effect)
            continue
        produced = await _send(host, effect, connections, timeout, out)
        queue.extendleft(reversed(produced))
    return out


async def _send(
    host: Host,
    effect: SendRequest,
    connections: Mapping[str, Requester],
    timeout: float | None,
    out: list[Effect | TransportFailure],
) -> list[Effect]:
    connection = connections.get(effect.origin)
    if connection is None:
        return host.on_request_failed(
            effect.origin, effect.token, f"no connection to server {effect.origin!r}"
        )
    try:
        result = await connection.request(effect.method, effect.params, timeout=timeout)
    except JsonRpcError as exc:
        error: dict[str, object] = {"code": exc.rpc_code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        return host.on_response(effect.origin, effect.token, error=error)
    except TransportError as exc:
        out.append(TransportFailure(origin=effect.origin, method=effect.method, error=exc))
        return host.on_request_failed(effect.origin, effect.token, exc.message)
    return host.on_response(effect.origin, effect.token, result=result)


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
