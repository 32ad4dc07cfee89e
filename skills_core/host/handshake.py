"""The handshake, sans-IO: which request opens a connection to a server, and what its answer means.

Theory of operation
-------------------
Before a host asks a server for anything it learns what the server speaks (docs/protocol.md#discover,
CAP-01): in the modern era (2026-07-28) with ``server/discover`` (stateless; the request carries
``_meta`` like every modern request), in the legacy era (2025-11-25) with ``initialize``, followed
by the notification ``notifications/initialized``. Which era to try first, and when to fall back,
is a transport's business (stdio: probe ``server/discover``, fall back on an error or a timeout;
HTTP: the status codes decide, docs/requirements.md#http-client rule 6). What each request looks
like and what its answer means is not, and lives here once, so that no transport builds ``_meta`` or
reads a ``supportedVersions`` list by itself:

* :func:`handshake_request` gives the ``(method, params)`` of either request;
* :func:`outcome_of` reads the answer into a :class:`Negotiated` (the era, the protocol version
  agreed on, the server's capabilities), or raises :class:`~skills_core.errors.RemoteProtocolError`
  when a ``server/discover`` result names no modern version this library speaks (a stdio transport
  then falls back to ``initialize``) or a result is not an object.

:meth:`Host.handshake_request <skills_core.host.router.Host.handshake_request>` and
:meth:`Host.on_handshake <skills_core.host.router.Host.on_handshake>` wrap these for a host: ask
it for the request, send it, hand it the answer, and the server is connected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from ..errors import RemoteProtocolError, quote_for_message
from ..jsonvalue import JSONValue
from ..messages import Era, Implementation, client_capabilities, request_meta
from ..spec import (
    LEGACY_PROTOCOL_VERSION,
    SUPPORTED_LEGACY_VERSIONS,
    SUPPORTED_MODERN_VERSIONS,
    Method,
)

__all__ = ["Negotiated", "INITIALIZED_NOTIFICATION", "handshake_request", "outcome_of"]

#: What a legacy client sends once ``initialize`` was answered (docs/protocol.md#discover).
INITIALIZED_NOTIFICATION: Final = Method.NOTIFICATIONS_INITIALIZED.value


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Negotiated:
    """The outcome of a handshake: what :meth:`Host.connect` needs.

    Attributes:
        era: The era the server speaks.
        protocol_version: The protocol version agreed on.
        capabilities: The server's ``capabilities`` (from ``server/discover`` or ``initialize``).
    """

    era: Era
    protocol_version: str
    capabilities: JSONValue


def handshake_request(
    client_info: Implementation, era: Era = Era.MODERN
) -> tuple[str, dict[str, JSONValue]]:
    """Return the ``(method, params)`` that opens a connection in ``era``.

    Modern: ``server/discover`` with the request ``_meta`` (protocol version, client capabilities
    declaring the Skills extension, client info). Legacy: ``initialize`` asking for 2025-11-25; once
    it is answered, send :data:`INITIALIZED_NOTIFICATION` (no params).
    """
    if era is Era.MODERN:
        return Method.SERVER_DISCOVER.value, {"_meta": request_meta(client_info)}
    return Method.INITIALIZE.value, {
        "protocolVersion": LEGACY_PROTOCOL_VERSION,
        "capabilities": client_capabilities(),
        "clientInfo": client_info.to_json(),
    }


def outcome_of(era: Era, result: object) -> Negotiated:
    """Read the answer to :func:`handshake_request` of ``era``.

    Modern: the first version of ours that ``supportedVersions`` lists is the one spoken. Legacy:
    the server's ``protocolVersion``, when it is one we speak, else the one we asked for (a server
    answering with an unknown revision is still spoken to in 2025-11-25 terms).

    Raises:
        RemoteProtocolError: the result is not an object (``kind="bad-handshake"``), or a
            ``server/discover`` result names no modern version we speak
            (``kind="no-common-version"``; a transport that probes falls back to ``initialize``).
    """
    if not isinstance(result, dict):
        raise RemoteProtocolError(
            f"the answer to the handshake is not an object: {quote_for_message(result)}",
            kind="bad-handshake",
        )
    capabilities = result.get("capabilities")
    if era is Era.MODERN:
        versions = result.get("supportedVersions")
        spoken = [
            v for v in SUPPORTED_MODERN_VERSIONS if isinstance(versions, list) and v in versions
        ]
        if not spoken:
            raise RemoteProtocolError(
                f"the server speaks none of the modern versions {list(SUPPORTED_MODERN_VERSIONS)} "
                f"(it lists {quote_for_message(versions)})",
                kind="no-common-version",
            )
        return Negotiated(era=Era.MODERN, protocol_version=spoken[0], capabilities=capabilities)
    version = result.get("protocolVersion")
    agreed = (
        version
        if isinstance(version, str) and version in SUPPORTED_LEGACY_VERSIONS
        else LEGACY_PROTOCOL_VERSION
    )
    return Negotiated(era=Era.LEGACY, protocol_version=agreed, capabilities=capabilities)
