"""Run a :class:`~skills_core.host.Host` over the official ``mcp`` Python SDK's ``ClientSession``.

For a host that already talks to its servers through ``mcp`` (2.3.x): this module needs it
(``pip install 'mcp>=2.3,<2.4'``, or the ``mcp`` extra of an installed skills-core), and
:mod:`skills_core` never imports it.

Theory of operation
-------------------
The host is sans-IO and :func:`skills_core.host.pump.pump_async` carries out its requests over
any ``send(method, params)``. :class:`SessionRequester` is that ``send`` for one ``ClientSession``:

* a request goes out through ``session.send_request`` as a custom ``mcp_types.Request`` (the
  skills methods are not in the SDK's vocabulary) with a raw-dict result model, so the result
  comes back as the server's JSON. In the modern era the session stamps the request ``_meta``
  itself (protocol version, its ``clientInfo``, its capabilities; docs/protocol.md#request-meta, CAP-10)
  over the one the host built; in the legacy era the host sends none. Build the session with
  ``extensions=client_extensions()`` so that those capabilities declare the Skills extension;
* the SDK raises one exception type, ``MCPError``, for three different things, and the requester
  tells them apart: the SDK's own read timeout (code ``-32001``, message ``Request '<method>'
  timed out``) becomes ``TransportError(kind="timeout")``; the SDK's own "connection closed"
  (code ``-32000``, message ``Connection closed``, no data: the server died, closed its output,
  or the session was closed) becomes ``TransportError(kind="closed")``; every other ``MCPError``
  is the server's JSON-RPC error answer and becomes :class:`~skills_core.errors.JsonRpcError` with
  its code, message and data. A server can send those two codes itself (``-32000`` is the
  generic "server error" of many implementations): only the SDK's exact shape counts as a
  transport failure. A result the SDK refuses (it validates results of methods it knows, such as
  ``resources/read``, against the negotiated revision) is ``TransportError(kind="protocol")``;
  the transport's own errors (a failed write, an OS error) are ``TransportError(kind="closed")``.

:func:`connect` negotiates the era the way docs/protocol.md#discover recommends when the session has
not yet done so (``server/discover`` first, ``initialize`` on an error answer, a timeout or no
common modern version) or takes the one the session already negotiated (``session.discover()``,
``session.initialize()``, or ``mcp.Client(mode=...)``), and connects the host's origin with the
capabilities and era the session holds.
"""

from __future__ import annotations

from typing import Any, Final, final

try:
    import anyio
    import mcp_types
    from mcp import ClientSession
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    from pydantic import RootModel, ValidationError
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without site-packages
    raise ImportError(
        "skills_core.adapters.mcp_sdk needs the official MCP Python SDK: "
        "pip install 'mcp>=2.3,<2.4' (or, where skills-core itself is installed, "
        "pip install 'skills-core[mcp]')"
    ) from exc

from ..errors import JsonRpcError, LocalProtocolError, TransportError
from ..host.effects import Effect
from ..host.router import Host
from ..jsonvalue import JSONValue
from ..messages import Era
from ..spec import EXTENSION_ID, SUPPORTED_MODERN_VERSIONS

__all__ = ["SessionRequester", "client_extensions", "connect"]

#: What the SDK's dispatcher raises when the connection is gone (mcp 2.3.0,
#: ``mcp/shared/jsonrpc_dispatcher.py``: ``_CLOSED_OUTCOME`` and the closed-send paths).
_SDK_CLOSED_MESSAGE: Final = "Connection closed"
#: Errors of the transport under the session: the stream is gone.
_STREAM_ERRORS: Final = (
    OSError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
)


class _RawResult(RootModel[dict[str, Any]]):
    """Any result object, as the server sent it (the SDK validates nothing more)."""


def client_extensions() -> dict[str, dict[str, Any]]:
    """Return the ``extensions`` argument for ``ClientSession`` that declares the Skills extension.

    The session puts it in its capabilities: in ``initialize`` (legacy) and in every modern
    request's ``_meta`` (docs/design.md#d2; no server may require it, SIL-28).
    """
    return {EXTENSION_ID: {}}


def _sdk_timeout(exc: MCPError, method: str) -> bool:
    return (
        exc.code == REQUEST_TIMEOUT
        and exc.message == f"Request {method!r} timed out"
        and exc.data is None
    )


def _sdk_closed(exc: MCPError) -> bool:
    return exc.code == CONNECTION_CLOSED and exc.message == _SDK_CLOSED_MESSAGE and exc.data is None


def _translate(exc: Exception, origin: str, method: str) -> JsonRpcError | TransportError:
    """The skills_core error for what ``session.send_request`` or a handshake raised."""
    if isinstance(exc, MCPError):
        if _sdk_timeout(exc, method):
            return TransportError(
                f"server {origin!r} did not answer {method} in time", kind="timeout"
            )
        if _sdk_closed(exc):
            return TransportError(
                f"server {origin!r}: the connection is closed ({method} got no answer)",
                kind="closed",
            )
        return JsonRpcError(
            f"server {origin!r} answered {method} with error {exc.code}: {exc.message}",
            rpc_code=exc.code,
            method=method,
            data=exc.data,
        )
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]  # a ValidationError has at least one
        where = "/".join(str(part) for part in first["loc"]) or "(the result)"
        return TransportError(
            f"server {origin!r} sent a {method} result the mcp SDK refused "
            f"({exc.error_count()} problem(s), first at {where}: {first['type']})",
            kind="protocol",
        )
    if isinstance(exc, RuntimeError):  # a handshake: no common revision (or a session not entered)
        return TransportError(f"server {origin!r}: {method} failed: {exc}", kind="protocol")
    if isinstance(exc, TimeoutError):  # the transport's own bounded write (before the request)
        return TransportError(
            f"server {origin!r}: {method} could not be sent in time", kind="timeout"
        )
    return TransportError(
        f"server {origin!r}: the connection failed ({type(exc).__name__}; {method} got no answer)",
        kind="closed",
    )


#: What a requester translates; anything else propagates (a bug, a cancellation).
_TRANSLATED: Final = (MCPError, ValidationError, *_STREAM_ERRORS)
#: What the handshake translates: the SDK raises RuntimeError when the server names no revision
#: it speaks.
_HANDSHAKE_ERRORS: Final = (*_TRANSLATED, RuntimeError)


@final
class SessionRequester:
    """The pump's ``send(method, params)`` over one ``mcp`` ``ClientSession``.

    Use one per origin: ``pump_async(host, effects, {label: SessionRequester(session,
    origin=label)})``. The session must be entered (``async with``) and negotiated (see
    :func:`connect`).

    Attributes:
        session: The SDK session requests go through.
        origin: The host's label for the server (used in error messages).
        timeout: Seconds to wait for each answer; ``None`` uses the session's
            ``read_timeout_seconds`` (which may be ``None``: wait forever).
    """

    __slots__ = ("origin", "session", "timeout")

    def __init__(
        self, session: ClientSession, *, origin: str, timeout: float | None = None
    ) -> None:
        """Send through ``session`` for the origin labelled ``origin``."""
        self.session = session
        self.origin = origin
        self.timeout = timeout

    async def __call__(self, method: str, params: dict[str, JSONValue]) -> dict[str, JSONValue]:
        """Send one request; return its result.

        Raises:
            JsonRpcError: the server answered with a JSON-RPC error.
            TransportError: no usable answer: timeout (kind ``timeout``), the connection is gone
                (``closed``), or the SDK refused the result (``protocol``).
        """
        request = mcp_types.Request[dict[str, Any], str](method=method, params=params)
        try:
            result = await self.session.send_request(
                request, _RawResult, request_read_timeout_seconds=self.timeout
            )
        except _TRANSLATED as exc:
            raise _translate(exc, self.origin, method) from None
        raw: dict[str, JSONValue] = result.root
        return raw


async def connect(
    host: Host, origin: str, session: ClientSession, *, era: Era | None = None
) -> list[Effect]:
    """Connect ``host``'s origin ``origin`` to the server behind ``session``.

    If the session has not negotiated yet, this does: ``era=Era.MODERN`` sends ``server/discover``,
    ``era=Era.LEGACY`` sends ``initialize`` (then ``notifications/initialized``), and ``None``
    (the default) tries ``server/discover`` and falls back to ``initialize`` on an error answer, a
    timeout, an unusable result or no common modern version (docs/protocol.md#discover). Nothing else
    is sent (VER-12). Then the host records the server's capabilities in the session's era.

    Args:
        host: The host.
        origin: The host-assigned label for this server.
        session: An entered ``ClientSession`` (build it with ``extensions=client_extensions()``).
        era: The era to negotiate, or None for the probe with fallback.

    Returns:
        What ``Host.connect`` returned (``Connected``, and notices about the capabilities).

    Raises:
        TransportError: the connection failed during the handshake.
        JsonRpcError: the server refused the handshake.
        LocalProtocolError: the session already negotiated another era than ``era``, or a modern
            revision skills_core does not speak.
    """
    if session.protocol_version is None:
        await _negotiate(session, origin, era)
    version = session.protocol_version
    capabilities = session.server_capabilities
    assert version is not None  # both are set by a successful handshake
    assert capabilities is not None
    negotiated = Era.MODERN if version in MODERN_PROTOCOL_VERSIONS else Era.LEGACY
    if era is not None and era is not negotiated:
        raise LocalProtocolError(
            f"the session for {origin!r} already speaks {version} ({negotiated.value}), "
            f"not the {era.value} era asked for",
            kind="era-mismatch",
        )
    if negotiated is Era.MODERN and version not in SUPPORTED_MODERN_VERSIONS:
        raise LocalProtocolError(
            f"the session for {origin!r} negotiated {version}, which skills_core does not speak "
            f"(it speaks {', '.join(SUPPORTED_MODERN_VERSIONS)})",
            kind="unsupported-version",
        )
    declared = capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)
    if negotiated is Era.LEGACY:
        return host.connect(origin, declared, era=Era.LEGACY)
    return host.connect(origin, declared, era=Era.MODERN, protocol_version=version)


async def _negotiate(session: ClientSession, origin: str, era: Era | None) -> None:
    if era is not Era.LEGACY:
        try:
            await session.discover()
        except _HANDSHAKE_ERRORS as exc:
            error = _translate(exc, origin, "server/discover")
            if era is Era.MODERN or error.kind == "closed":
                raise error from None
        else:
            return
    try:
        await session.initialize()
    except _HANDSHAKE_ERRORS as exc:
        raise _translate(exc, origin, "initialize") from None
