"""The I/O-free client half of the asyncio and trio stdio adapters.

Theory of operation: :class:`ClientLoop` turns received bytes into :data:`ClientOutcome` values: a
pending request resolved or failed, a line to report, bytes to write back, or the connection given
up. The adapters differ only in how they read, write and wait. (The server half,
:class:`~skills_core.adapters._core.ServerStream`, lives apart, so that a server imports none of this.)

Client policy (DESIGN.md, the ``host`` command): a line that is not JSON is reported and skipped; a
message over the size cap, or anything else that is not JSON-RPC, gives the connection up (exit 2);
a request from the server is refused with -32601 (a modern server MUST NOT send requests); a
response nobody waits for is reported; a late answer to a cancelled request is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias, final

from skills_core.errors import (
    JsonRpcError,
    RemoteProtocolError,
    SkillsError,
    TransportError,
)
from skills_core.jsonrpc import (
    NEED_DATA,
    CancelRequested,
    ConnectionClosed,
    ErrorResponseReceived,
    InvalidMessage,
    InvalidResponse,
    JsonRpcConnection,
    JsonRpcErrorKind,
    LateResponse,
    NotificationReceived,
    RequestId,
    RequestReceived,
    ResponseReceived,
    UnexpectedResponse,
)
from skills_core.jsonvalue import JSONValue
from skills_core.spec import ErrorCode

__all__ = [
    "ClientLoop",
    "Resolved",
    "Failed",
    "Report",
    "Reply",
    "GiveUp",
    "ClientOutcome",
]


@final
@dataclass(frozen=True, slots=True)
class Resolved:
    """A pending request got its result."""

    request_id: RequestId
    result: dict[str, JSONValue]


@final
@dataclass(frozen=True, slots=True)
class Failed:
    """A pending request failed: an error response, a malformed response, or the end of stream."""

    request_id: RequestId
    error: SkillsError


@final
@dataclass(frozen=True, slots=True)
class Report:
    """Something worth a line on stderr that does not stop the connection."""

    message: str


@final
@dataclass(frozen=True, slots=True)
class Reply:
    """Bytes to write to the server (a refusal of a server-to-client request)."""

    data: bytes


@final
@dataclass(frozen=True, slots=True)
class GiveUp:
    """The server broke the protocol; every pending request fails with ``error``."""

    error: TransportError


#: What :meth:`ClientLoop.feed` produces.
ClientOutcome: TypeAlias = Resolved | Failed | Report | Reply | GiveUp


@final
class ClientLoop:
    """Client side: requests out, bytes from the server in, outcomes out."""

    __slots__ = ("_conn", "_label")

    def __init__(self, *, label: str, max_message_size: int | None = None) -> None:
        """Start a connection to the server the host calls ``label`` (used in messages)."""
        self._label = label
        self._conn = (
            JsonRpcConnection()
            if max_message_size is None
            else JsonRpcConnection(max_message_size=max_message_size)
        )

    @property
    def connection(self) -> JsonRpcConnection:
        """The underlying endpoint (for ``pending`` and sending notifications)."""
        return self._conn

    def request(self, method: str, params: Mapping[str, object] | None) -> tuple[RequestId, bytes]:
        """Return ``(id, bytes to write)`` for a new request."""
        return self._conn.send_request(method, params)

    def cancel(self, request_id: RequestId, reason: str) -> bytes:
        """Return the ``notifications/cancelled`` bytes for a pending request (``b""`` if none)."""
        if request_id not in self._conn.pending:
            return b""
        return self._conn.send_cancel(request_id, reason)

    def feed(self, data: bytes) -> list[ClientOutcome]:
        """Take bytes from the server (``b""`` at end of stream) and return what happened."""
        self._conn.receive_data(data)
        outcomes: list[ClientOutcome] = []
        while True:
            event = self._conn.next_event()
            if event is NEED_DATA:
                return outcomes
            if isinstance(event, ConnectionClosed):
                outcomes.extend(
                    Failed(request_id, self._closed(event, request_id))
                    for request_id, _ in event.failed
                )
                return outcomes
            outcome = self._outcome(event)
            if outcome is not None:
                outcomes.append(outcome)
                if isinstance(outcome, GiveUp):
                    return outcomes

    def _closed(self, event: ConnectionClosed, request_id: RequestId) -> TransportError:
        cause = event.error_for(request_id)
        return TransportError(f"server {self._label!r}: {cause.message}", kind="closed")

    def _outcome(self, event: object) -> ClientOutcome | None:
        label = self._label
        if isinstance(event, ResponseReceived):
            return Resolved(event.id, event.result)
        if isinstance(event, ErrorResponseReceived):
            return Failed(
                event.id,
                JsonRpcError(
                    f"server {label!r} answered {event.method} with error {int(event.code)}: "
                    f"{event.message}",
                    rpc_code=int(event.code),
                    method=event.method,
                    data=event.data,
                ),
            )
        if isinstance(event, InvalidResponse):
            return Failed(event.id, _protocol(label, event.error))
        if isinstance(event, InvalidMessage):
            if event.error.kind == JsonRpcErrorKind.PARSE_ERROR:
                return Report(
                    f"server {label!r} wrote a line that is not JSON-RPC; skipped it "
                    f"({event.error.message})"
                )
            return GiveUp(_protocol(label, event.error))
        if isinstance(event, RequestReceived):
            refusal = self._conn.send_error(
                event.id,
                ErrorCode.METHOD_NOT_FOUND,
                f"this client does not serve requests ({event.method})",
            )
            return Reply(refusal)
        if isinstance(event, UnexpectedResponse):
            return Report(f"server {label!r} sent a response for unknown request id {event.id!r}")
        # LateResponse, NotificationReceived, CancelRequested: nothing to do.
        assert isinstance(event, LateResponse | NotificationReceived | CancelRequested)
        return None


def _protocol(label: str, error: RemoteProtocolError) -> TransportError:
    return TransportError(f"server {label!r} broke JSON-RPC: {error.message}", kind="protocol")
