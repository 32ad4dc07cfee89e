"""Server-sent events: an incremental ``text/event-stream`` parser, sans-IO and bounded.

Theory of operation: a Streamable HTTP server may answer a request with an event stream (MCP
Streamable HTTP, both eras): notifications about the request, then its response, each the
``data`` of one event. :class:`SseParser` takes the body in chunks of any size (so a test can
feed a stream whole and byte by byte) and returns the events each chunk completes, following the
WHATWG parsing rules: LF, CR and CRLF line ends (also when a CRLF is split across chunks), an
optional leading BOM, comment lines, ``data`` lines joined by ``\n``, ``event``/``id``/``retry``
fields; an event with empty data is a keep-alive and is skipped. Every line and every event's data
is bounded, so a hostile stream cannot grow memory without end; a ``retry`` value too large for
64 bits is ignored (as browsers do), never turned into a number of thousands of digits. Which event
answers which request is decided in :mod:`skills_core.http.client`; nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from ..errors import RemoteProtocolError
from ..jsonrpc import DEFAULT_MAX_MESSAGE_SIZE

__all__ = ["SseEvent", "SseParser"]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SseEvent:
    """One dispatched server-sent event.

    Attributes:
        event: The event type (``"message"`` unless an ``event:`` field said otherwise).
        data: The ``data:`` lines joined by ``\\n``, as bytes (a JSON-RPC message, for MCP).
        id: The last event id seen on the stream so far, or ``None``.
        retry: The last ``retry:`` value (milliseconds) seen so far, or ``None``.
    """

    event: str
    data: bytes
    id: str | None
    retry: int | None


_BOM: Final = b"\xef\xbb\xbf"
#: The largest ``retry`` value kept (milliseconds); a larger one is ignored, as browsers ignore a
#: value that does not fit their 64-bit integer.
_MAX_RETRY: Final = (1 << 64) - 1


@final
class SseParser:
    """An incremental ``text/event-stream`` parser (WHATWG HTML §9.2.6), bounded.

    Feed it the body in chunks of any size; it returns the events each chunk completes. An event
    is dispatched at the blank line that ends it; one with empty data is skipped (a keep-alive or
    a priming event), as are comment lines. At the end of the stream an unfinished event is
    discarded, as the standard says.

    Args:
        max_event_size: The largest ``data`` of one event (and the longest line), in bytes.

    Raises (from :meth:`feed`):
        RemoteProtocolError: kind ``sse-too-large`` when a line or an event's data passes the
            limit; kind ``sse-encoding`` when an ``event``/``id`` value is not UTF-8.
    """

    __slots__ = (
        "_buffer",
        "_data",
        "_data_size",
        "_event",
        "_id",
        "_limit",
        "_retry",
        "_scan",
        "_skip_lf",
        "_started",
    )

    def __init__(self, *, max_event_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._limit = max_event_size
        self._buffer = bytearray()
        self._scan = 0  # no line end before this offset of _buffer
        self._skip_lf = False  # the last line ended with CR: a LF next belongs to it
        self._started = False  # the optional BOM has been dealt with
        self._data: list[bytes] = []
        self._data_size = 0
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None

    def feed(self, data: bytes) -> list[SseEvent]:
        """Take the next chunk of the stream; return the events it completes, in order."""
        buffer = self._buffer
        buffer += data
        if not self._started:
            if len(buffer) < len(_BOM) and _BOM.startswith(buffer):
                return []  # could still be a BOM
            if buffer.startswith(_BOM):
                del buffer[: len(_BOM)]
            self._started = True
        events: list[SseEvent] = []
        start = 0
        while True:
            if self._skip_lf and start < len(buffer):
                if buffer[start] == 0x0A:
                    start += 1
                self._skip_lf = False
            scan = max(start, self._scan)
            lf = buffer.find(b"\n", scan)
            cr = buffer.find(b"\r", scan, lf if lf >= 0 else len(buffer))
            end = cr if cr >= 0 else lf
            if end < 0:
                break
            self._line(bytes(buffer[start:end]), events)
            self._skip_lf = end == cr
            start = end + 1
        del buffer[:start]
        self._scan = len(buffer)
        if len(buffer) > self._limit + 16:  # "data: " and friends fit in the 16
            raise RemoteProtocolError(
                f"an event-stream line is longer than {self._limit} bytes",
                kind="sse-too-large",
            )
        return events

    def _line(self, line: bytes, events: list[SseEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line[:1] == b":":
            return  # a comment (keep-alive)
        field, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if field == b"data":
            self._data_size += len(value) + (1 if self._data else 0)
            if self._data_size > self._limit:
                raise RemoteProtocolError(
                    f"an event's data is larger than {self._limit} bytes",
                    kind="sse-too-large",
                )
            self._data.append(value)
        elif field == b"event":
            self._event = _utf8(value, "event")
        elif field == b"id":
            if b"\0" not in value:
                self._id = _utf8(value, "id")
        elif field == b"retry" and value.isdigit() and len(value) <= len(str(_MAX_RETRY)):
            retry = int(value)
            if retry <= _MAX_RETRY:
                self._retry = retry
        # Any other field is ignored (WHATWG: "The field is ignored").

    def _dispatch(self, events: list[SseEvent]) -> None:
        data = b"\n".join(self._data)
        event = self._event or "message"
        self._data = []
        self._data_size = 0
        self._event = ""
        if data:
            events.append(SseEvent(event=event, data=data, id=self._id, retry=self._retry))


def _utf8(value: bytes, field: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise RemoteProtocolError(
            f"an event-stream {field!r} field is not UTF-8", kind="sse-encoding"
        ) from None
