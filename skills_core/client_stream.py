"""The client side of a JSON-RPC byte stream to a server, without I/O, and its bounded reports.

Theory of operation: :class:`ClientStream` turns received bytes into :data:`ClientOutcome` values: a
pending request resolved or failed, a line to report, bytes to write back, or the connection given
up. The stdio client (:mod:`skills_core.adapters.stdio`) reads, writes and waits around it.
(The server side, :class:`~skills_core.server_stream.ServerStream`, lives apart, so that a server
imports none of this.)

Client policy (the ``host`` command, docs/design.md#command-line): a line that is not JSON is
reported and skipped; a message over the size cap, or anything else that is not JSON-RPC, gives the
connection up (exit 2); a request from the server is refused with -32601 (a modern server MUST NOT
send requests); a response nobody waits for is reported; a late answer to a cancelled request is
dropped.

Noise stays bounded: of each kind of report, the first :data:`REPORTS_SHOWN` are given, the rest
counted, and :meth:`ClientStream.summaries` says how many there were in all (a server writing
endless junk lines costs a few lines of output, not one per junk line). The counting is
:class:`ReportCounter`, which the HTTP client uses too for what it skips on response streams, so
every transport bounds a server's noise the same way.

:class:`StderrLines` bounds what the server writes on its stderr: it splits the bytes into lines,
each cut after :data:`STDERR_LINE_BYTES` bytes and decoded leniently, and keeps the last
:data:`STDERR_TAIL` for a failure report. The text stays the server's: whoever shows it passes it
through :func:`skills_core.display.display_line`.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias, final

from .errors import (
    JsonRpcError,
    RemoteProtocolError,
    SkillsError,
    TransportError,
)
from .jsonrpc import (
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
    UnmatchedResponse,
)
from .jsonvalue import JSONValue
from .spec import ErrorCode

__all__ = [
    "REPORTS_SHOWN",
    "ERROR_MESSAGE_SHOWN",
    "STDERR_LINE_BYTES",
    "STDERR_TAIL",
    "ClientStream",
    "ReportCounter",
    "StderrLines",
    "Resolved",
    "Failed",
    "Report",
    "Reply",
    "GiveUp",
    "Notified",
    "ClientOutcome",
]


#: Reports of one kind given per connection; later ones are counted (see ClientStream.summaries).
REPORTS_SHOWN: Final = 3
#: Characters of a server's error message put into ours (the whole text stays in ``rpc_message``).
ERROR_MESSAGE_SHOWN: Final = 300
#: Bytes of one stderr line kept; the rest of a longer line is dropped (its length is counted).
#: 4 KiB holds any log line a person reads; it bounds the memory a line without an end can take.
STDERR_LINE_BYTES: Final = 4096
#: The last lines of a server's stderr kept for a failure report.
STDERR_TAIL: Final = 10


class _ReportKind(enum.Enum):
    NOT_JSON = "lines that are not JSON-RPC"
    UNKNOWN_RESPONSE = "responses to no request"


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
class ReportCounter:
    """Bounded reports of one connection: of each kind, the first :data:`REPORTS_SHOWN`, then a count.

    Args:
        label: The server's label (named in the summaries).
    """

    __slots__ = ("_counts", "_label")

    def __init__(self, *, label: str) -> None:
        self._label = label
        self._counts: dict[str, int] = {}

    def report(self, kind: str, message: str) -> Report | None:
        """Count one report of ``kind``; return it while it is among the first shown, else None.

        Args:
            kind: What is reported, in the plural, as the summary names it (``"lines that are not
                JSON-RPC"``).
            message: The line to give (already bounded in length by whoever wrote it).

        Returns:
            The report to give, the last one shown saying that more are counted; ``None`` after.
        """
        count = self._counts.get(kind, 0) + 1
        self._counts[kind] = count
        if count < REPORTS_SHOWN:
            return Report(message)
        if count == REPORTS_SHOWN:
            return Report(f"{message}; more like this are counted, not reported")
        return None

    def summaries(self) -> list[Report]:
        """One report per kind of which more than :data:`REPORTS_SHOWN` were counted."""
        return [
            Report(
                f"server {self._label!r} sent {count:,} {kind} in all; "
                f"the first {REPORTS_SHOWN} were reported"
            )
            for kind, count in self._counts.items()
            if count > REPORTS_SHOWN
        ]


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


@final
@dataclass(frozen=True, slots=True)
class Notified:
    """The server sent a notification (a change notification, a listen stream's ack or end).

    ``params`` is the server's JSON: a hint to act on, never data to trust.
    """

    method: str
    params: dict[str, JSONValue] | None


#: What :meth:`ClientStream.feed` produces.
ClientOutcome: TypeAlias = Resolved | Failed | Report | Reply | GiveUp | Notified


@final
class ClientStream:
    """Client side: requests out, bytes from the server in, outcomes out."""

    __slots__ = ("_conn", "_label", "_reports")

    def __init__(self, *, label: str, max_message_size: int | None = None) -> None:
        """Start a connection to the server the host calls ``label`` (used in messages)."""
        self._label = label
        self._reports = ReportCounter(label=label)
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

    def summaries(self) -> list[Report]:
        """One report per kind of which more than :data:`REPORTS_SHOWN` were counted."""
        return self._reports.summaries()

    def _report(self, kind: _ReportKind, message: str) -> Report | None:
        return self._reports.report(kind.value, message)

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
                    f"{_cut(event.message, ERROR_MESSAGE_SHOWN)}",
                    rpc_code=int(event.code),
                    method=event.method,
                    data=event.data,
                    rpc_message=event.message,
                ),
            )
        if isinstance(event, InvalidResponse):
            return Failed(event.id, _protocol(label, event.error))
        if isinstance(event, InvalidMessage):
            if event.error.kind == JsonRpcErrorKind.PARSE_ERROR:
                return self._report(
                    _ReportKind.NOT_JSON,
                    f"server {label!r} wrote a line that is not JSON-RPC; skipped it "
                    f"({event.error.message})",
                )
            return GiveUp(_protocol(label, event.error))
        if isinstance(event, RequestReceived):
            refusal = self._conn.send_error(
                event.id,
                ErrorCode.METHOD_NOT_FOUND,
                f"this client does not serve requests ({event.method})",
            )
            return Reply(refusal)
        if isinstance(event, UnmatchedResponse):
            return self._report(
                _ReportKind.UNKNOWN_RESPONSE,
                f"server {label!r} sent a response for unknown request id {event.id!r}",
            )
        if isinstance(event, NotificationReceived):
            return Notified(event.method, event.params)
        if isinstance(event, CancelRequested):  # a server ends a listen stream this way
            return Notified("notifications/cancelled", {"requestId": event.request_id})
        # LateResponse: nothing to do.
        assert isinstance(event, LateResponse)
        return None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _protocol(label: str, error: RemoteProtocolError) -> TransportError:
    return TransportError(f"server {label!r} broke JSON-RPC: {error.message}", kind="protocol")


@final
class StderrLines:
    """A server's stderr, as lines: each bounded in length, the last few kept.

    Feed it what the server writes; it returns the complete lines (text decoded from UTF-8 with
    replacement, without the line end), and keeps the last of them in :attr:`tail`.
    """

    __slots__ = ("_cut", "_partial", "_tail")

    def __init__(self) -> None:
        """Start with nothing written."""
        self._partial = bytearray()
        self._cut = 0
        self._tail: deque[str] = deque(maxlen=STDERR_TAIL)

    @property
    def tail(self) -> tuple[str, ...]:
        """The last :data:`STDERR_TAIL` lines (a line still without its end is not among them)."""
        return tuple(self._tail)

    def feed(self, data: bytes) -> list[str]:
        """Take bytes from the server's stderr (``b""`` at its end); return its complete lines."""
        out: list[str] = []
        if not data:
            if self._partial or self._cut:
                self._line(out)
            return out
        start = 0
        while True:
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            room = STDERR_LINE_BYTES - len(self._partial)
            if len(piece) > room:
                self._cut += len(piece) - room
                piece = piece[:room]
            self._partial += piece
            if end < 0:
                return out
            self._line(out)
            start = end + 1

    def _line(self, out: list[str]) -> None:
        raw = bytes(self._partial).removesuffix(b"\r")
        text = raw.decode("utf-8", errors="replace")
        if self._cut:
            text += f" [{self._cut:,} more bytes]"
        self._partial.clear()
        self._cut = 0
        self._tail.append(text)
        out.append(text)
