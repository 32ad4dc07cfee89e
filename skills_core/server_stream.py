"""The server side of a byte stream, without I/O: what the stdio adapters (and any socket) drive.

Theory of operation
-------------------
:class:`ServerStream` is everything a server loop decides that is not I/O, once. Received bytes
go in (:meth:`~ServerStream.receive_data`); :meth:`~ServerStream.next_output` answers buffered
requests, one at a time, through a :class:`Responder` (a
:class:`~skills_core.server.ServerConnection`), maps each answer straight to the bytes of its
response, and says what the loop must do next:

* ``bytes``: write them, then ask again;
* a :class:`PendingOutput`: an answer that needs blocking work (a large file to read and
  encode, or a :class:`Deferred` answer: one that waits for a catalog still loading); call its
  ``run()``, in a worker thread when the loop has other work, write the bytes it returns, then
  ask again (the answers made before it have been returned first);
* :data:`~skills_core.jsonrpc.NEED_DATA`: no complete request is buffered; read, then
  :meth:`~ServerStream.receive_data`;
* :data:`FINISHED`: the input has ended and every request is answered; stop.

:func:`serve_async` is that loop for an event loop, written once (``async``/``await`` only, no
event-loop primitive): the asyncio and trio stdio servers give it their reads, writes and worker
threads.

**Back-pressure.** Answers are written as they are made: ``next_output`` returns as soon as its
output reaches :data:`OUTPUT_BATCH` bytes (or one answer, when that is larger), and a loop reads
input only when told :data:`~skills_core.jsonrpc.NEED_DATA`. So a loop that writes before it asks
again (every loop here does, and a blocked write blocks the loop) holds at most one batch plus one
answer of unwritten output, and at most one message plus one read of unparsed input, however many
requests a client pipelines and however slowly it reads. The largest answer is a ``resources/read``
of a 16 MiB file: 22.4 MB of base64, made from the file's bytes through a few intermediate copies;
see the README for the measured peak.

Small answers are batched into one write (a burst of pipelined requests costs one read and a few
writes), but a batch never waits for input: when no complete request is buffered, what is ready
goes out.

Requests are answered synchronously, in order, so a ``notifications/cancelled`` always arrives too
late to matter to a request; it matters to a ``subscriptions/listen`` stream, which it ends (the
responder's ``cancel``). Other notifications (``notifications/initialized`` included) change
nothing for a skills server and responses are never expected (a server sends no requests): both
are dropped. Messages the endpoint refuses get the error reply it suggests.

**Changes pushed** (:mod:`skills_core.server.changes`). A ``subscriptions/listen`` request is
answered at once with its acknowledgement notification (the responder's ``listen``); its response
comes only when the stream ends. :meth:`ServerStream.push` makes the bytes of the notifications a
catalog change means for this client (none when it asked for nothing), and
:meth:`ServerStream.close` the responses that end its listen streams when the server shuts down.
The loop calls them between answers, from its timer: :class:`ChangeTimer` is that timer without
a clock (when to look next, and the bytes a look means), shared by the blocking loop
(:mod:`skills_core.adapters.blocking_stdio`) and :func:`serve_async`, which waits for input at
most until the next look. Only the waiting differs between them.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from typing import Final, Protocol, final

from .errors import LocalProtocolError
from .jsonrpc import (
    NEED_DATA,
    Answer,
    CancelRequested,
    ConnectionClosed,
    ErrorObject,
    InvalidMessage,
    JSONObject,
    JsonRpcConnection,
    NeedData,
    RequestId,
    RequestReceived,
)
from .server._subscriptions import LISTEN
from .server.changes import MIN_INTERVAL, ChangePacer, SkillChanges
from .server.handler import PendingRead, ServerConnection
from .spec import ErrorCode

__all__ = [
    "Responder",
    "ServerStream",
    "PendingOutput",
    "Deferred",
    "Finished",
    "FINISHED",
    "OUTPUT_BATCH",
    "DEFAULT_DEFER_READS_OVER",
    "serve_async",
    "ChangeTimer",
]

#: Bytes of small answers gathered into one write. One write per 64 KiB costs about 0.3 µs per
#: answer of 1 KB; larger batches gain nothing measurable and hold more memory.
OUTPUT_BATCH: Final = 1 << 16

#: Files the catalog lists as larger than this are read and encoded in a worker thread by the
#: asyncio and trio servers. A 256 KiB file takes about a millisecond to read and encode, longer
#: than a thread hop costs (tens of microseconds); below it, the hop would cost more than it saves.
DEFAULT_DEFER_READS_OVER: Final = 256 << 10

#: What a responder that raised answers (it must not raise; the loop survives if it does).
_INTERNAL_ERROR: Final = ErrorObject(code=ErrorCode.INTERNAL_ERROR, message="Internal error")


class Responder(Protocol):
    """The one request path a server stream serves: :class:`~skills_core.server.ServerConnection`.

    ``answer`` takes a request's method and params (the id is the stream's business) and returns
    a result object, an :class:`~skills_core.jsonrpc.EncodedResult` or an
    :class:`~skills_core.jsonrpc.ErrorObject`, or, for a file larger than ``defer_reads_over``, a
    :class:`~skills_core.server.PendingRead`. It must never raise. A responder may also have a
    ``received()`` method (a ``ServerConnection`` does): the stream calls it after each chunk it
    buffers (see :meth:`ServerStream.receive_data`).
    """

    def answer(
        self, method: str, params: JSONObject | None, *, defer_reads_over: int | None
    ) -> Answer | PendingRead | Deferred:
        """See :meth:`skills_core.server.ServerConnection.answer`."""
        ...


@final
class Deferred:
    """An answer a responder makes later, out of the stream's batch (a :class:`PendingOutput`).

    A responder returns one for a request it cannot answer yet without blocking (the catalog is
    still loading: :mod:`skills_core.adapters.loading`), so that the answers made before it go
    out first; ``make()`` then blocks until it can answer (and may itself return a
    :class:`~skills_core.server.PendingRead`, which is completed at once).
    """

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[], Answer | PendingRead]) -> None:
        """Answer with ``make()`` when the loop runs the :class:`PendingOutput`."""
        self._make = make

    def complete(self) -> Answer:
        """Make the answer (blocking)."""
        answer = self._make()
        return answer.complete() if type(answer) is PendingRead else answer


class Finished(enum.Enum):
    """Type of :data:`FINISHED`."""

    FINISHED = "FINISHED"


#: ``next_output()``: the input has ended and every request is answered.
FINISHED: Final = Finished.FINISHED


@final
class PendingOutput:
    """The response to one request, once blocking work is done: call :meth:`run` once."""

    __slots__ = ("_line", "_read", "_request_id")

    def __init__(
        self, stream: ServerStream, request_id: RequestId, read: PendingRead | Deferred
    ) -> None:
        """Made by :meth:`ServerStream.next_output` only."""
        self._line = stream._line
        self._request_id = request_id
        self._read = read

    def run(self) -> bytes:
        """Read and encode the answer (blocking) and return the bytes to write; never raises.

        Safe in a worker thread: it touches the source, pure encoders and nothing of the stream.
        """
        return self._line(self._request_id, self._read.complete())

    def __repr__(self) -> str:
        return f"<PendingOutput for request {self._request_id!r}: {self._read!r}>"


@final
class ServerStream:
    """The server side of one byte stream: bytes from the client in, what to write out."""

    __slots__ = (
        "_answer",
        "_check_keys",
        "_conn",
        "_defer",
        "_held",
        "_received",
        "_responder",
    )

    def __init__(
        self,
        responder: Responder,
        *,
        max_message_size: int | None = None,
        results_have_string_keys: bool = False,
        defer_reads_over: int | None = None,
    ) -> None:
        """Serve requests through ``responder``.

        Args:
            responder: The request path, normally a
                :class:`~skills_core.server.ServerConnection`.
            max_message_size: The endpoint's message cap; ``None`` keeps its default.
            results_have_string_keys: The responder's results use only string object keys (true
                of a :class:`~skills_core.server.SkillsServer`), so the endpoint may skip its key
                walk (see :meth:`~skills_core.jsonrpc.JsonRpcConnection.send_response`).
            defer_reads_over: Hand reads of files listed as larger than this many bytes back as
                :class:`PendingOutput` (loops with other work to do: see
                :data:`DEFAULT_DEFER_READS_OVER`); ``None`` answers every request inline.
        """
        self._answer = responder.answer
        self._responder = responder
        # A ServerConnection is told of each chunk (see receive_data); other responders are not.
        self._received: Callable[[], object] | None = getattr(responder, "received", None)
        self._check_keys = not results_have_string_keys
        self._defer = defer_reads_over
        self._held: PendingOutput | None = None
        self._conn = (
            JsonRpcConnection()
            if max_message_size is None
            else JsonRpcConnection(max_message_size=max_message_size)
        )

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes received from the client; ``b""`` means its input has ended.

        A responder with a ``received()`` method (a :class:`~skills_core.server.ServerConnection`)
        is told after each chunk: the requests buffered so far have all arrived, so it may answer
        reads among them from one look at a file made since (one look per file per chunk, not
        one per request; each answer still shows the file as it was after its request arrived).
        """
        self._conn.receive_data(data)
        if data and self._received is not None:
            self._received()

    def next_output(self) -> bytes | PendingOutput | NeedData | Finished:
        """Answer what is buffered, up to one batch of output, and say what to do next.

        Returns:
            Bytes to write, a :class:`PendingOutput` to run and write,
            :data:`~skills_core.jsonrpc.NEED_DATA` (read more) or :data:`FINISHED` (stop); see
            the module docstring. Write what it returns before calling it again.
        """
        held = self._held
        if held is not None:
            self._held = None
            return held
        conn = self._conn
        out: list[bytes] = []
        size = 0
        while True:
            event = conn.next_event()
            if type(event) is RequestReceived:
                listening = self._served(wait=True) if event.method == LISTEN else None
                if listening is not None:
                    line = self._listen(listening, event.id, event.params)
                    out.append(line)
                    size += len(line)
                    continue
                try:
                    answer = self._answer(event.method, event.params, defer_reads_over=self._defer)
                except Exception:  # noqa: BLE001 - a responder bug must not kill the stream
                    answer = _INTERNAL_ERROR
                if type(answer) is PendingRead or type(answer) is Deferred:
                    pending = PendingOutput(self, event.id, answer)
                    if not out:
                        return pending
                    self._held = pending  # after what is ready, to keep the order
                    break
                line = self._line(event.id, answer)
            elif type(event) is InvalidMessage:
                if event.reply is None:
                    continue
                line = event.reply
            elif event is NEED_DATA or type(event) is ConnectionClosed:
                if out:
                    break
                return NEED_DATA if event is NEED_DATA else FINISHED
            else:
                if type(event) is CancelRequested:
                    cancelled = self._served()
                    if cancelled is not None:
                        cancelled.subscriptions.cancel(event.request_id)
                continue  # notifications, cancellations, responses: see the module docstring
            out.append(line)
            size += len(line)
            if size >= OUTPUT_BATCH:
                break
        return out[0] if len(out) == 1 else b"".join(out)

    def _listen(
        self, connection: ServerConnection, request_id: RequestId, params: JSONObject | None
    ) -> bytes:
        ack = connection.listen(request_id, params)
        if type(ack) is ErrorObject:
            return self._line(request_id, ack)
        return self._notification(ack)

    def _notification(self, message: JSONObject) -> bytes:
        method = message["method"]
        params = message.get("params")
        assert isinstance(method, str)
        assert params is None or isinstance(params, dict)
        return self._conn.send_notification(method, params)

    def _served(self, *, wait: bool = False) -> ServerConnection | None:
        """The server connection behind the responder: the responder itself, or what its
        ``served(wait=...)`` returns (a connection to a server still loading its catalog: None
        until the catalog is loaded, unless ``wait``, then once it is, or None if the load
        failed); None for any other responder."""
        responder = self._responder
        if type(responder) is ServerConnection:
            return responder
        served = getattr(responder, "served", None)
        connection = served(wait=wait) if callable(served) else None
        return connection if type(connection) is ServerConnection else None

    def push(self, change: SkillChanges | None) -> bytes:
        """The notifications ``change`` means for this client, as bytes to write (maybe none)."""
        responder = self._served() if change is not None else None
        if responder is None or change is None:
            return b""
        messages = responder.subscriptions.messages(change)
        return b"".join(self._notification(message) for message in messages)

    def close(self) -> bytes:
        """The responses that end this client's listen streams (the server is shutting down)."""
        responder = self._served()
        if responder is None:
            return b""
        info = responder.server.options.server_info.to_json()
        ends = responder.subscriptions.close(info)
        return b"".join(self._line(listen_id, result) for listen_id, result in ends)

    def _line(self, request_id: RequestId, answer: Answer) -> bytes:
        """The response line for ``answer``; -32603 when it cannot be sent."""
        try:
            return self._conn.send_answer(request_id, answer, check_keys=self._check_keys)
        except LocalProtocolError:
            # A result over the message cap, or one that is not plain JSON (a responder bug):
            # the client still gets an answer to its request.
            return self._conn.send_error(
                request_id, ErrorCode.INTERNAL_ERROR, "Internal error: unencodable result"
            )


@final
class ChangeTimer:
    """A server stream's change timer, without a clock: when to look, and what a look writes.

    A loop asks :meth:`look` with the time now whenever it is about to wait for input, writes the
    bytes it returns (the notifications a change means for this client: PUSH-03, PUSH-04,
    PUSH-07), and waits for input at most :meth:`timeout` seconds. Looks are paced by a
    :class:`~skills_core.server.changes.ChangePacer` over the server's ``ttlMs`` (PUSH-05).

    The stream's responder is a :class:`~skills_core.server.ServerConnection`, or a connection to a
    server still loading its catalog (anything with ``served()``, such as
    :class:`~skills_core.adapters.loading.LoadingConnection`): until that one is loaded the timer
    only asks again every :data:`~skills_core.server.changes.MIN_INTERVAL` seconds whether it is.
    Any other responder is not watched (:attr:`watching` is False).

    Args:
        stream: The stream whose client is told of changes.
    """

    __slots__ = ("_connection", "_pacer", "_stream", "watching")

    def __init__(self, stream: ServerStream) -> None:
        self._stream = stream
        responder = stream._responder
        #: Whether the responder can be watched at all (else :meth:`timeout` is always None).
        self.watching = type(responder) is ServerConnection or callable(
            getattr(responder, "served", None)
        )
        self._connection: ServerConnection | None = None
        self._pacer: ChangePacer | None = None

    def look(self, now: float) -> bytes:
        """Look for a change if one is due at ``now``; the bytes to write (maybe none)."""
        if not self.watching:
            return b""
        pacer = self._pacer
        if pacer is None:
            connection = self._stream._served()  # None while a loading server's catalog loads
            if connection is None:
                return b""
            self._connection = connection
            self._pacer = pacer = ChangePacer(interval=connection.server.options.ttl_ms / 1000)
        if not pacer.look_due(now):
            return b""
        assert self._connection is not None
        server = self._connection.server
        if pacer.looked(now, moved=server.moved()):
            return self._stream.push(server.changes())
        return b""

    def timeout(self, now: float) -> float | None:
        """Seconds to wait for input before the next :meth:`look`; None: wait for input only."""
        if not self.watching:
            return None
        if self._pacer is None:
            return MIN_INTERVAL  # the catalog is loading: ask again soon
        return max(0.0, self._pacer.next_wakeup() - now)


async def serve_async(
    stream: ServerStream,
    *,
    receive: Callable[[], Awaitable[bytes]],
    send: Callable[[bytes], Awaitable[bool]],
    run_blocking: Callable[[Callable[[], bytes]], Awaitable[bytes]],
    timer: ChangeTimer | None = None,
    receive_within: Callable[[float], Awaitable[bytes | None]] | None = None,
    clock: Callable[[], float] | None = None,
) -> None:
    """Drive ``stream`` until its input ends or its client leaves: the server loop, once.

    Writes what :meth:`ServerStream.next_output` makes before asking again (the back-pressure of
    the module docstring), reads only when told :data:`~skills_core.jsonrpc.NEED_DATA`, and runs
    each :class:`PendingOutput` through ``run_blocking``. It does no I/O itself: it awaits the
    callables and nothing else, so it runs under any event loop.

    With a ``timer`` (and ``receive_within`` and ``clock``), it also keeps the change timer while
    it waits for input, as the blocking loop does: before each wait it writes what
    :meth:`ChangeTimer.look` makes, then waits for input at most :meth:`ChangeTimer.timeout`
    seconds.

    Args:
        stream: The server side of the connection.
        receive: Returns the next bytes from the client; ``b""`` once its input has ended.
        send: Writes all of the bytes; returns False when the client has gone (nothing is left to
            answer), True otherwise.
        run_blocking: Runs a blocking callable (a large read and its encoding) where the loop
            stays free, such as a worker thread, and returns what it returned.
        timer: The stream's change timer (:class:`ChangeTimer`), or None: no notifications.
        receive_within: Like ``receive``, waiting at most the seconds given; None when they
            passed with nothing received (a read under way is kept for the next call).
        clock: Monotonic seconds, for the timer.
    """
    timed: (
        tuple[ChangeTimer, Callable[[float], Awaitable[bytes | None]], Callable[[], float]] | None
    )
    timed = None
    if timer is not None and timer.watching:
        if receive_within is None or clock is None:
            raise ValueError("a change timer needs receive_within and clock")
        timed = (timer, receive_within, clock)
    while True:
        out = stream.next_output()
        if out is NEED_DATA:
            if timed is not None:
                timer, receive_within, clock = timed
                pushed = timer.look(clock())
                if pushed:
                    if not await send(pushed):
                        return
                    continue
                timeout = timer.timeout(clock())
                if timeout is not None:
                    data = await receive_within(timeout)
                    if data is not None:
                        stream.receive_data(data)
                    continue
            stream.receive_data(await receive())
            continue
        if out is FINISHED:
            return
        if isinstance(out, PendingOutput):
            out = await run_blocking(out.run)
        assert isinstance(out, bytes)
        if not await send(out):
            return
