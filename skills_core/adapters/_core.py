"""The I/O-free half of the stdio adapters, shared by the asyncio and trio loops.

Theory of operation: an adapter is a loop that moves bytes between pipes and a
:class:`~skills_core.jsonrpc.JsonRpcConnection`. Everything such a loop decides that is not I/O
lives here, once, so the asyncio and trio adapters differ only in how they read, write and wait:

* :class:`ServerLoop` turns received bytes into the bytes to write back, by passing every request to
  a handler (a :class:`~skills_core.server.ServerConnection`'s ``handle``, or any callable of the same
  shape) and answering what JSON-RPC says to answer.
* :class:`ClientLoop` turns received bytes into :data:`ClientOutcome` values: a pending request
  resolved or failed, a line to report, bytes to write back, or the connection given up.

Client policy (DESIGN.md, the ``host`` command): a line that is not JSON is reported and skipped; a
message over the size cap, or anything else that is not JSON-RPC, gives the connection up (exit 2);
a request from the server is refused with -32601 (a modern server MUST NOT send requests); a
response nobody waits for is reported; a late answer to a cancelled request is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Protocol, TypeAlias, final

from skills_core.errors import (
    JsonRpcError,
    LocalProtocolError,
    RemoteProtocolError,
    SkillsError,
    TransportError,
)
from skills_core.jsonrpc import (
    NEED_DATA,
    CancelRequested,
    ConnectionClosed,
    EncodedResult,
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
    "Handler",
    "Responder",
    "ServerLoop",
    "ClientLoop",
    "Resolved",
    "Failed",
    "Report",
    "Reply",
    "GiveUp",
    "ClientOutcome",
]

#: A server's request handler: a JSON-RPC message object in, the response object out (``None``
#: for notifications). It must never raise; :class:`ServerLoop` answers -32603 if it does.
Handler: TypeAlias = Callable[[dict[str, JSONValue]], Mapping[str, object] | None]


class Responder(Protocol):
    """A server connection that can also answer requests whose envelope was checked already.

    :class:`~skills_core.server.ServerConnection` is one. Given one, :class:`ServerLoop` hands
    each request's id, method and params to :meth:`answer_request` (no message object is rebuilt,
    and a result encoded before is reused), and notifications to :meth:`handle`.
    """

    def handle(self, message: dict[str, JSONValue]) -> Mapping[str, object] | None:
        """As a :data:`Handler`."""

    def answer_request(
        self, request_id: RequestId, method: str, params: dict[str, JSONValue] | None
    ) -> Mapping[str, object] | EncodedResult:
        """A response object, or the encoded result of a success; never raises."""


#: What a handler that raised answers (the request's id is the loop's to send).
_INTERNAL_ERROR: Final[Mapping[str, object]] = MappingProxyType(
    {
        "error": MappingProxyType(
            {"code": int(ErrorCode.INTERNAL_ERROR), "message": "Internal error"}
        )
    }
)


@final
class ServerLoop:
    """Server side: bytes from the client in, bytes for the client out."""

    __slots__ = ("_answer_request", "_check_keys", "_conn", "_handle")

    def __init__(
        self,
        handle: Handler | Responder,
        *,
        max_message_size: int | None = None,
        results_have_string_keys: bool = False,
    ) -> None:
        """Serve requests through ``handle``.

        Args:
            handle: The request handler (see :data:`Handler`), or a :class:`Responder` such as a
                :class:`~skills_core.server.ServerConnection` (the faster way).
            max_message_size: The endpoint's message cap; ``None`` keeps its default.
            results_have_string_keys: The handler's results use only string object keys (true of
                a :class:`~skills_core.server.SkillsServer`), so the endpoint may skip its key walk
                (see :meth:`~skills_core.jsonrpc.JsonRpcConnection.send_response`).
        """
        if callable(handle):
            self._handle: Handler = handle
            self._answer_request: Callable[..., Mapping[str, object] | EncodedResult] | None = None
        else:
            self._handle = handle.handle
            self._answer_request = handle.answer_request
        self._check_keys = not results_have_string_keys
        self._conn = (
            JsonRpcConnection()
            if max_message_size is None
            else JsonRpcConnection(max_message_size=max_message_size)
        )

    def feed(self, data: bytes) -> tuple[bytes, bool]:
        """Take received bytes (``b""`` at end of input); return ``(bytes to write, finished)``.

        ``finished`` is True once the client's input has ended and every message was answered.
        """
        self._conn.receive_data(data)
        out: list[bytes] = []
        while True:
            event = self._conn.next_event()
            if event is NEED_DATA:
                return b"".join(out), False
            if isinstance(event, ConnectionClosed):
                return b"".join(out), True
            reply = self._answer(event)
            if reply:
                out.append(reply)

    def _answer(self, event: object) -> bytes | None:
        if type(event) is RequestReceived and self._answer_request is not None:
            try:
                answer = self._answer_request(event.id, event.method, event.params)
            except Exception:  # noqa: BLE001 - as in _call
                answer = _INTERNAL_ERROR
            return self._send(event.id, answer)
        if isinstance(event, RequestReceived):
            message: dict[str, JSONValue] = {
                "jsonrpc": "2.0",
                "id": event.id,
                "method": event.method,
            }
            if event.params is not None:
                message["params"] = event.params
            return self._respond(event.id, message)
        if isinstance(event, NotificationReceived | CancelRequested):
            # Requests are answered synchronously, so a cancellation always arrives too late;
            # other notifications go to the handler, which answers none of them.
            if isinstance(event, NotificationReceived):
                note: dict[str, JSONValue] = {"jsonrpc": "2.0", "method": event.method}
                if event.params is not None:
                    note["params"] = event.params
                self._call(note)
            return None
        if isinstance(event, InvalidMessage):
            return event.reply
        # Responses: a server sends no requests, so none can be expected; drop them.
        return None

    def _call(self, message: dict[str, JSONValue]) -> Mapping[str, object] | None:
        try:
            return self._handle(message)
        except Exception:  # noqa: BLE001 - a handler bug must not kill the connection
            return _INTERNAL_ERROR

    def _respond(self, request_id: RequestId, message: dict[str, JSONValue]) -> bytes:
        return self._send(request_id, self._call(message))

    def _send(
        self, request_id: RequestId, response: Mapping[str, object] | EncodedResult | None
    ) -> bytes:
        if response is None:
            return self._conn.send_error(
                request_id, ErrorCode.INTERNAL_ERROR, "Internal error: no response"
            )
        if type(response) is EncodedResult:
            try:
                return self._conn.send_response(request_id, response)
            except LocalProtocolError:  # over the message cap
                return self._conn.send_error(
                    request_id, ErrorCode.INTERNAL_ERROR, "Internal error: unencodable result"
                )
        assert isinstance(response, Mapping)
        result = response.get("result")
        if isinstance(result, Mapping):
            try:
                return self._conn.send_response(request_id, result, check_keys=self._check_keys)
            except LocalProtocolError:  # a handler bug: a result that is not plain JSON
                return self._conn.send_error(
                    request_id, ErrorCode.INTERNAL_ERROR, "Internal error: unencodable result"
                )
        error = response.get("error")
        if isinstance(error, Mapping):
            code = error.get("code")
            text = error.get("message")
            return self._conn.send_error(
                request_id,
                code if isinstance(code, int) else int(ErrorCode.INTERNAL_ERROR),
                text if isinstance(text, str) else "Internal error",
                error.get("data"),
            )
        return self._conn.send_error(request_id, ErrorCode.INTERNAL_ERROR, "Internal error")


# --- client side ------------------------------------------------------------------------------


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
