"""The I/O-free server half of the stdio adapters (blocking, asyncio and trio).

Theory of operation: an adapter is a loop that moves bytes between pipes and a
:class:`~skills_core.jsonrpc.JsonRpcConnection`. :class:`ServerLoop` is everything a server loop
decides that is not I/O, once: it turns received bytes into the bytes to write back, by passing
every request to a handler (a :class:`~skills_core.server.ServerConnection`, or any callable of the
shape of its ``handle``) and answering what JSON-RPC says to answer. The client half is in
:mod:`skills_core.adapters._client`, which a server never imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final, Protocol, TypeAlias, final

from skills_core.errors import LocalProtocolError
from skills_core.jsonrpc import (
    NEED_DATA,
    CancelRequested,
    ConnectionClosed,
    EncodedResult,
    InvalidMessage,
    JsonRpcConnection,
    NotificationReceived,
    RequestId,
    RequestReceived,
)
from skills_core.jsonvalue import JSONValue
from skills_core.spec import ErrorCode

__all__ = [
    "Handler",
    "Responder",
    "ServerLoop",
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
