"""The sans-IO JSON-RPC endpoint: framing, limits, classification, matching, sending.

Every wire fixture in ``FIXTURES`` is fed whole and one byte at a time (draining after each byte)
and must give the expected events, identically (docs/design.md#how-we-know).
"""

from __future__ import annotations

import enum
import json
import math
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pytest

from skills_core.errors import LocalProtocolError, RemoteProtocolError
from skills_core.jsonrpc import (
    DEFAULT_MAX_MESSAGE_SIZE,
    MAX_REMEMBERED_CANCELLATIONS,
    NEED_DATA,
    CancelRequested,
    ConnectionClosed,
    ErrorResponseReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    JSONObject,
    JsonRpcConnection,
    JsonRpcErrorKind,
    JsonRpcEvent,
    LateResponse,
    NeedData,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    UnmatchedResponse,
)
from skills_core.spec import MAX_TOTAL_BYTES, ErrorCode, Method

K = JsonRpcErrorKind

# --- helpers ---------------------------------------------------------------------------------


def drain(conn: JsonRpcConnection) -> list[JsonRpcEvent]:
    """Every event available now; stops at NEED_DATA or at the first ConnectionClosed."""
    events: list[JsonRpcEvent] = []
    while True:
        event = conn.next_event()
        if event is NEED_DATA:
            return events
        events.append(event)
        if isinstance(event, ConnectionClosed):
            return events


def make_connection(
    requests: Sequence[str] = (), cancel: Sequence[int] = (), max_size: int | None = None
) -> JsonRpcConnection:
    conn = JsonRpcConnection() if max_size is None else JsonRpcConnection(max_message_size=max_size)
    for method in requests:
        conn.send_request(method)
    for request_id in cancel:
        conn.send_cancel(request_id)
    return conn


def feed_whole(conn: JsonRpcConnection, wire: bytes, *, eof: bool = True) -> list[JsonRpcEvent]:
    if wire:  # b"" would mean end of stream
        conn.receive_data(wire)
    events = drain(conn)
    if eof:
        conn.receive_data(b"")
        events += drain(conn)
    return events


def feed_bytewise(conn: JsonRpcConnection, wire: bytes, *, eof: bool = True) -> list[JsonRpcEvent]:
    events: list[JsonRpcEvent] = []
    for index in range(len(wire)):
        conn.receive_data(wire[index : index + 1])
        events += drain(conn)
    if eof:
        conn.receive_data(b"")
        events += drain(conn)
    return events


@dataclass(frozen=True)
class Invalid:
    """What an InvalidMessage is compared by in the fixture table."""

    kind: str
    code: int
    reply: object  # the reply bytes, or an AnyReply matcher, or None


@dataclass(frozen=True)
class Failed:
    """What an InvalidResponse is compared by in the fixture table."""

    id: int | str
    method: str
    kind: str = K.INVALID_RESPONSE


def norm(event: JsonRpcEvent) -> object:
    if isinstance(event, InvalidMessage):
        return Invalid(event.error.kind, event.error.rpc_code, event.reply)
    if isinstance(event, InvalidResponse):
        return Failed(event.id, event.method, event.error.kind)
    return event


def full(event: JsonRpcEvent) -> object:
    """Like norm, but keeps the error message too (for whole-versus-split identity)."""
    if isinstance(event, InvalidMessage | InvalidResponse):
        error = event.error
        return (type(event).__name__, norm(event), type(error), error.message)
    return event


class AnyReply:
    """Matches an error reply with the given id and code, whatever its message."""

    def __init__(self, request_id: int | str | None, code: int) -> None:
        self.request_id = request_id
        self.code = code

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, bytes) or not other.endswith(b"\n"):
            return False
        message = json.loads(other)
        return (
            set(message) == {"jsonrpc", "id", "error"}
            and message["jsonrpc"] == "2.0"
            and message["id"] == self.request_id
            and type(message["id"]) is type(self.request_id)
            and set(message["error"]) == {"code", "message"}
            and message["error"]["code"] == self.code
            and isinstance(message["error"]["message"], str)
        )

    def __hash__(self) -> int:  # pragma: no cover - never hashed
        return hash((self.request_id, self.code))

    def __repr__(self) -> str:
        return f"AnyReply({self.request_id!r}, {self.code})"


def invalid(
    kind: str, code: int, request_id: int | str | None = None, *, answered: bool = True
) -> Invalid:
    return Invalid(kind, code, AnyReply(request_id, code) if answered else None)


def closed(*failed: tuple[int | str, str], truncated: bool = False) -> ConnectionClosed:
    return ConnectionClosed(failed=tuple(failed), truncated=truncated)


PARSE = ErrorCode.PARSE_ERROR
INVALID = ErrorCode.INVALID_REQUEST
PARAMS = ErrorCode.INVALID_PARAMS


def rpc(**members: Any) -> bytes:
    """One compact JSON-RPC line with ``"jsonrpc": "2.0"`` first."""
    return json.dumps({"jsonrpc": "2.0", **members}, separators=(",", ":")).encode() + b"\n"


# --- the fixture table -----------------------------------------------------------------------


@dataclass(frozen=True)
class Fixture:
    name: str
    wire: bytes
    expected: list[object]
    requests: tuple[str, ...] = ()
    cancel: tuple[int, ...] = ()
    max_size: int | None = None


SMALL = 1024
DEEP = b"[" * 5000 + b"]" * 5000

FIXTURES: list[Fixture] = [
    # requests, notifications, cancellation
    Fixture(
        "request-int-id",
        rpc(id=1, method="skills/list", params={"cursor": "c"}),
        [RequestReceived(id=1, method="skills/list", params={"cursor": "c"}), closed()],
    ),
    Fixture(
        "request-string-id-no-params",
        rpc(id="req-7", method="server/discover"),
        [RequestReceived(id="req-7", method="server/discover", params=None), closed()],
    ),
    Fixture(
        "request-empty-params-and-zero-id",
        rpc(id=0, method="ping", params={}),
        [RequestReceived(id=0, method="ping", params={}), closed()],
    ),
    Fixture(
        "request-negative-and-huge-int-id",
        rpc(id=-5, method="a") + rpc(id=2**70, method="b"),
        [
            RequestReceived(id=-5, method="a", params=None),
            RequestReceived(id=2**70, method="b", params=None),
            closed(),
        ],
    ),
    Fixture(
        "request-extra-members-ignored",
        rpc(id=1, method="x", extra=True, params={"a": [1, 2.5, None, True, "s"]}),
        [RequestReceived(id=1, method="x", params={"a": [1, 2.5, None, True, "s"]}), closed()],
    ),
    Fixture(
        "notification",
        rpc(method="notifications/initialized"),
        [NotificationReceived(method="notifications/initialized", params=None), closed()],
    ),
    Fixture(
        "notification-with-params",
        rpc(method="notifications/message", params={"level": "info"}),
        [NotificationReceived(method="notifications/message", params={"level": "info"}), closed()],
    ),
    Fixture(
        "cancel",
        rpc(method="notifications/cancelled", params={"requestId": "r-1", "reason": "user"}),
        [CancelRequested(request_id="r-1", reason="user"), closed()],
    ),
    Fixture(
        "cancel-int-id-no-reason",
        rpc(method="notifications/cancelled", params={"requestId": 3, "_meta": {}}),
        [CancelRequested(request_id=3, reason=None), closed()],
    ),
    Fixture(
        "cancel-malformed",
        rpc(method="notifications/cancelled")
        + rpc(method="notifications/cancelled", params={})
        + rpc(method="notifications/cancelled", params={"requestId": True})
        + rpc(method="notifications/cancelled", params={"requestId": 1.5})
        + rpc(method="notifications/cancelled", params={"requestId": 1, "reason": None})
        + rpc(method="notifications/cancelled", params={"requestId": 1, "reason": 5})
        + rpc(method="notifications/cancelled", params=[1]),
        [invalid(K.INVALID_PARAMS, PARAMS, answered=False)] * 7 + [closed()],
    ),
    Fixture(
        "cancelled-as-a-request-is-a-request",
        rpc(id=9, method="notifications/cancelled", params={"requestId": 1}),
        [
            RequestReceived(id=9, method="notifications/cancelled", params={"requestId": 1}),
            closed(),
        ],
    ),
    # responses
    Fixture(
        "response",
        rpc(id=1, result={"resultType": "complete"}),
        [ResponseReceived(id=1, method="skills/get", result={"resultType": "complete"}), closed()],
        requests=("skills/get",),
    ),
    Fixture(
        "error-response-known-code",
        rpc(id=1, error={"code": -32602, "message": "no such skill", "data": {"uri": "u"}}),
        [
            ErrorResponseReceived(
                id=1, method="skills/get", code=PARAMS, message="no such skill", data={"uri": "u"}
            ),
            closed(),
        ],
        requests=("skills/get",),
    ),
    Fixture(
        "error-response-unknown-code-no-data",
        rpc(id=1, error={"code": 7, "message": "odd"}),
        [ErrorResponseReceived(id=1, method="m", code=7, message="odd", data=None), closed()],
        requests=("m",),
    ),
    Fixture(
        "responses-out-of-order-and-one-pending-at-eof",
        rpc(id=3, result={}) + rpc(id=1, result={"n": 1}),
        [
            ResponseReceived(id=3, method="c", result={}),
            ResponseReceived(id=1, method="a", result={"n": 1}),
            closed((2, "b")),
        ],
        requests=("a", "b", "c"),
    ),
    Fixture(
        "response-twice",
        rpc(id=1, result={}) + rpc(id=1, result={}),
        [
            ResponseReceived(id=1, method="a", result={}),
            UnmatchedResponse(id=1, result={}, error=None),
            closed(),
        ],
        requests=("a",),
    ),
    Fixture(
        "unexpected-response-unknown-id",
        rpc(id=99, result={}) + rpc(id="1", result={}),
        [
            UnmatchedResponse(id=99, result={}, error=None),
            UnmatchedResponse(id="1", result={}, error=None),
            closed((1, "a")),
        ],
        requests=("a",),
    ),
    Fixture(
        "error-response-id-null-and-absent",
        rpc(id=None, error={"code": -32700, "message": "Parse error"})
        + rpc(error={"code": -32600, "message": "Invalid"}),
        [
            UnmatchedResponse(
                id=None, result=None, error={"code": -32700, "message": "Parse error"}
            ),
            UnmatchedResponse(id=None, result=None, error={"code": -32600, "message": "Invalid"}),
            closed((1, "a")),
        ],
        requests=("a",),
    ),
    Fixture(
        "late-response-after-cancel",
        rpc(id=1, result={"late": True}) + rpc(id=2, error={"code": 1, "message": "x"}),
        [
            LateResponse(id=1, method="a", result={"late": True}, error=None),
            LateResponse(id=2, method="b", result=None, error={"code": 1, "message": "x"}),
            closed(),
        ],
        requests=("a", "b"),
        cancel=(1, 2),
    ),
    Fixture(
        "late-response-is-late-only-once",
        rpc(id=1, result={}) + rpc(id=1, result={}),
        [
            LateResponse(id=1, method="a", result={}, error=None),
            UnmatchedResponse(id=1, result={}, error=None),
            closed(),
        ],
        requests=("a",),
        cancel=(1,),
    ),
    Fixture(
        "invalid-responses-for-a-pending-request-fail-it",
        rpc(id=1, result="pong")
        + rpc(id=2, result={}, error={"code": 1, "message": "m"})
        + rpc(id=3, error={"code": True, "message": "m"})
        + rpc(id=4, error={"message": "m"})
        + rpc(id=5, error={"code": 1})
        + rpc(id=6, error={"code": 1, "message": 2})
        + rpc(id=7, error="boom")
        + b'{"jsonrpc":"1.0","id":8,"result":{}}\n'
        + b'{"id":9,"result":{}}\n',
        [Failed(n, f"m{n}") for n in range(1, 10)] + [closed()],
        requests=tuple(f"m{n}" for n in range(1, 10)),
    ),
    Fixture(
        "invalid-responses-matching-nothing-are-reported-unanswered",
        rpc(id=5, result=[])
        + rpc(id=None, result={})
        + rpc(result={})
        + rpc(id=True, result={})
        + rpc(id=1.0, result={})
        + rpc(id={"a": 1}, error={"code": 1, "message": "m"})
        + rpc(id=99, error=None),
        [invalid(K.INVALID_RESPONSE, INVALID, answered=False)] * 7 + [closed((1, "a"))],
        requests=("a",),
    ),
    Fixture(
        "invalid-response-for-a-cancelled-request",
        rpc(id=1, result=5),
        [invalid(K.INVALID_RESPONSE, INVALID, answered=False), closed()],
        requests=("a",),
        cancel=(1,),
    ),
    # not JSON-RPC
    Fixture(
        "batch",
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]\n[]\n',
        [invalid(K.BATCH, INVALID), invalid(K.BATCH, INVALID), closed()],
    ),
    Fixture(
        "not-an-object",
        b'42\n"text"\nnull\ntrue\n-0.5\n',
        [invalid(K.INVALID_REQUEST, INVALID)] * 5 + [closed()],
    ),
    Fixture(
        "no-method-result-or-error",
        rpc(id=4) + rpc(id=None) + rpc(id=1.5) + b"{}\n",
        [
            invalid(K.INVALID_REQUEST, INVALID, 4),
            invalid(K.INVALID_REQUEST, INVALID),
            invalid(K.INVALID_REQUEST, INVALID),
            invalid(K.INVALID_REQUEST, INVALID),
            closed(),
        ],
    ),
    Fixture(
        "wrong-or-missing-jsonrpc-version",
        b'{"jsonrpc":"1.0","id":1,"method":"a"}\n'
        b'{"id":"s","method":"a"}\n'
        b'{"jsonrpc":2.0,"method":"n"}\n'
        b'{"jsonrpc":"2.0 ","id":true,"method":"a"}\n',
        [
            invalid(K.INVALID_REQUEST, INVALID, 1),
            invalid(K.INVALID_REQUEST, INVALID, "s"),
            invalid(K.INVALID_REQUEST, INVALID),
            invalid(K.INVALID_REQUEST, INVALID),
            closed(),
        ],
    ),
    Fixture(
        "method-not-a-string",
        rpc(id=1, method=5) + rpc(method=None) + rpc(id="x", method=["a"]),
        [
            invalid(K.INVALID_REQUEST, INVALID, 1),
            invalid(K.INVALID_REQUEST, INVALID),
            invalid(K.INVALID_REQUEST, INVALID, "x"),
            closed(),
        ],
    ),
    Fixture(
        "bad-request-ids",
        rpc(id=None, method="a")
        + rpc(id=True, method="a")
        + rpc(id=False, method="a")
        + rpc(id=1.0, method="a")
        + rpc(id=1.5, method="a")
        + rpc(id=[1], method="a")
        + rpc(id={}, method="a"),
        [invalid(K.INVALID_REQUEST, INVALID)] * 7 + [closed()],
    ),
    Fixture(
        "params-not-an-object",
        rpc(id=1, method="a", params="bar")
        + rpc(id=2, method="a", params=None)
        + rpc(id=3, method="a", params=7)
        + rpc(id=4, method="a", params=[1, 2])
        + rpc(method="n", params="bar")
        + rpc(method="n", params=[1]),
        [
            invalid(K.INVALID_REQUEST, INVALID, 1),
            invalid(K.INVALID_REQUEST, INVALID, 2),
            invalid(K.INVALID_REQUEST, INVALID, 3),
            invalid(K.INVALID_PARAMS, PARAMS, 4),
            invalid(K.INVALID_REQUEST, INVALID),
            invalid(K.INVALID_PARAMS, PARAMS, answered=False),
            closed(),
        ],
    ),
    # not JSON
    Fixture(
        "malformed-json",
        b'{"jsonrpc":\n{"jsonrpc":"2.0","id":1,"method":"a"} x\n{\'a\':1}\n{"a":1,}\n',
        [invalid(K.PARSE_ERROR, PARSE)] * 4 + [closed()],
    ),
    Fixture(
        "invalid-utf8",
        b'{"jsonrpc":"2.0","id":1,"method":"\xff"}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"\xed\xa0\x80"}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xaf"}\n',
        [invalid(K.PARSE_ERROR, PARSE)] * 3 + [closed()],
    ),
    Fixture(
        "utf8-bom",
        b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"a"}\n',
        [invalid(K.PARSE_ERROR, PARSE), closed()],
    ),
    Fixture(
        "nan-and-infinities",
        b'{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":NaN}}\n'
        b"Infinity\n-Infinity\n"
        b'{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":1e400}}\n'
        b"-1E+999\n",
        [invalid(K.PARSE_ERROR, PARSE)] * 5 + [closed()],
    ),
    Fixture(
        "duplicate-keys",
        b'{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"a","params":{"p":{"k":1,"k":1}}}\n',
        [invalid(K.PARSE_ERROR, PARSE)] * 2 + [closed()],
    ),
    Fixture(
        "deeply-nested-arrays",
        DEEP + b"\n" + b'{"jsonrpc":"2.0","id":1,"method":"a","params":{"p":' + DEEP + b"}}\n",
        [invalid(K.PARSE_ERROR, PARSE)] * 2 + [closed()],
    ),
    Fixture(
        "moderately-nested-arrays-are-fine",
        b'{"jsonrpc":"2.0","id":1,"method":"a","params":{"p":' + b"[" * 200 + b"]" * 200 + b"}}\n",
        [
            RequestReceived(id=1, method="a", params={"p": json.loads("[" * 200 + "]" * 200)}),
            closed(),
        ],
    ),
    Fixture(
        "integer-with-too-many-digits",
        b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"a"}\n',
        [invalid(K.PARSE_ERROR, PARSE), closed()],
    ),
    Fixture(
        "raw-control-character-in-string",
        b'{"jsonrpc":"2.0","id":1,"method":"a\tb"}\n',
        [invalid(K.PARSE_ERROR, PARSE), closed()],
    ),
    Fixture(
        "unpaired-surrogate-escapes",
        b'{"jsonrpc":"2.0","id":1,"method":"a\\ud800"}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"a","params":{"\\uDC00":1}}\n'
        b'{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":[1,null,"\\ude00\\ud83d"]}}\n',
        [invalid(K.PARSE_ERROR, PARSE)] * 3 + [closed()],
    ),
    Fixture(
        "surrogate-pair-escape-is-one-character",
        b'{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":[1,"\\ud83d\\ude00"],"y":"\\\\ud800"}}\n',
        [
            RequestReceived(id=1, method="a", params={"x": [1, "\U0001f600"], "y": "\\ud800"}),
            closed(),
        ],
    ),
    Fixture(
        "non-ascii-and-escaped-separators",
        '{"jsonrpc":"2.0","id":"é","method":"a","params":{"t":"日本\u2028\\u2029\\n"}}\n'.encode(),
        [RequestReceived(id="é", method="a", params={"t": "日本\u2028\u2029\n"}), closed()],
    ),
    # framing
    Fixture(
        "crlf-lines",
        rpc(id=1, method="a")[:-1] + b"\r\n" + rpc(method="n")[:-1] + b"\r\n",
        [
            RequestReceived(id=1, method="a", params=None),
            NotificationReceived(method="n", params=None),
            closed(),
        ],
    ),
    Fixture(
        "blank-and-padded-lines",
        b"\n\n   \n\t\r\n\r\n" + b'  {"jsonrpc":"2.0","method":"n"}\t \r\n' + b"\n",
        [NotificationReceived(method="n", params=None), closed()],
    ),
    Fixture(
        "a-lone-cr-does-not-end-a-line",
        b'{"jsonrpc":"2.0","method":"a"}\r{"jsonrpc":"2.0","method":"b"}\n',
        [invalid(K.PARSE_ERROR, PARSE), closed()],
    ),
    Fixture(
        "other-line-breaks-inside-a-line",
        b'{"jsonrpc":"2.0","method":"a"}\x0c\n',
        [invalid(K.PARSE_ERROR, PARSE), closed()],
    ),
    Fixture(
        "final-line-without-newline-is-accepted",
        rpc(id=1, method="a") + rpc(id=2, method="b")[:-1],
        [
            RequestReceived(id=1, method="a", params=None),
            RequestReceived(id=2, method="b", params=None),
            closed(),
        ],
    ),
    Fixture(
        "final-invalid-line-without-newline-is-still-classified",
        b"[1]  ",
        [invalid(K.BATCH, INVALID), closed()],
    ),
    Fixture(
        "final-blank-tail",
        rpc(method="n") + b"  \r",
        [NotificationReceived(method="n", params=None), closed()],
    ),
    Fixture(
        "truncated-final-line",
        rpc(method="n") + b'{"jsonrpc":"2.0","id":1,"meth',
        [NotificationReceived(method="n", params=None), closed(truncated=True)],
    ),
    Fixture(
        "truncated-inside-a-utf8-character",
        b'{"jsonrpc":"2.0","id":1,"method":"\xc3',
        [closed((1, "a"), truncated=True)],
        requests=("a",),
    ),
    Fixture(
        "empty-stream",
        b"",
        [closed()],
    ),
    # size limit (a small one, so that fixtures stay small)
    Fixture(
        "oversized-line-then-resync",
        b'{"jsonrpc":"2.0","method":"' + b"x" * 2000 + b'"}\n' + rpc(id=1, method="after"),
        [
            invalid(K.MESSAGE_TOO_LARGE, INVALID),
            RequestReceived(id=1, method="after", params=None),
            closed(),
        ],
        max_size=SMALL,
    ),
    Fixture(
        "oversized-whitespace-line",
        b" " * 1500 + b"\n" + rpc(method="n"),
        [
            invalid(K.MESSAGE_TOO_LARGE, INVALID),
            NotificationReceived(method="n", params=None),
            closed(),
        ],
        max_size=SMALL,
    ),
    Fixture(
        "oversized-line-that-never-ends",
        rpc(method="before") + b"y" * 5000,
        [
            NotificationReceived(method="before", params=None),
            invalid(K.MESSAGE_TOO_LARGE, INVALID),
            closed((1, "a"), truncated=True),
        ],
        requests=("a",),
        max_size=SMALL,
    ),
    Fixture(
        "oversized-lines-back-to-back",
        b"z" * 1025 + b"\n" + b"z" * 3000 + b"\n" + b"z" * 1025 + b"\n" + rpc(method="n"),
        [invalid(K.MESSAGE_TOO_LARGE, INVALID)] * 3
        + [NotificationReceived(method="n", params=None), closed()],
        max_size=SMALL,
    ),
    Fixture(
        "line-of-exactly-the-maximum-is-accepted",
        b'{"jsonrpc":"2.0","method":"n"}' + b" " * (SMALL - 30) + b"\n",
        [NotificationReceived(method="n", params=None), closed()],
        max_size=SMALL,
    ),
    Fixture(
        "one-byte-over-the-maximum-with-cr",
        b'{"jsonrpc":"2.0","method":"n"}' + b" " * (SMALL - 30) + b"\r\n",
        [invalid(K.MESSAGE_TOO_LARGE, INVALID), closed()],
        max_size=SMALL,
    ),
    Fixture(
        "final-line-of-exactly-the-maximum",
        b'{"jsonrpc":"2.0","method":"n"}' + b" " * (SMALL - 30),
        [NotificationReceived(method="n", params=None), closed()],
        max_size=SMALL,
    ),
    Fixture(
        "reply-to-an-id-near-the-limit-falls-back-to-null",
        rpc(id="i" * 950, method="a", params=[1]),
        [invalid(K.INVALID_PARAMS, PARAMS, None), closed()],
        max_size=SMALL,
    ),
]


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
@pytest.mark.parametrize("feed", [feed_whole, feed_bytewise], ids=["whole", "bytewise"])
def test_fixture(
    fixture: Fixture, feed: Callable[[JsonRpcConnection, bytes], list[JsonRpcEvent]]
) -> None:
    conn = make_connection(fixture.requests, fixture.cancel, fixture.max_size)
    events = feed(conn, fixture.wire)
    assert [norm(e) for e in events] == fixture.expected
    assert conn.pending == {}


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_fixture_whole_and_bytewise_are_identical(fixture: Fixture) -> None:
    whole = feed_whole(
        make_connection(fixture.requests, fixture.cancel, fixture.max_size), fixture.wire
    )
    split = feed_bytewise(
        make_connection(fixture.requests, fixture.cancel, fixture.max_size), fixture.wire
    )
    assert [full(e) for e in whole] == [full(e) for e in split]
    for event in whole:
        if isinstance(event, InvalidMessage | InvalidResponse):
            assert isinstance(event.error, RemoteProtocolError)
            assert event.error.message  # a sentence, never empty
            assert len(event.error.message) < 400


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_fixture_without_eof_holds_back_only_the_last_line(fixture: Fixture) -> None:
    """Before the end of stream, everything but an unterminated last line is available."""
    conn = make_connection(fixture.requests, fixture.cancel, fixture.max_size)
    events = feed_whole(conn, fixture.wire, eof=False)
    assert conn.next_event() is NEED_DATA
    assert not any(isinstance(e, ConnectionClosed) for e in events)
    conn.receive_data(b"")
    assert [norm(e) for e in events + drain(conn)] == fixture.expected


# --- error messages: specific, and quoting what was wrong ------------------------------------


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b"{", "not valid JSON"),
        (b'"\xff"', "not valid UTF-8"),
        (b'{"a":1,"a":2}', "duplicate object key 'a'"),
        (b"[NaN]", "NaN is not a JSON number"),
        (b"[-Infinity]", "-Infinity is not a JSON number"),
        (b"[1e400]", "out of range"),
        (DEEP, "nested too deeply"),
        (b"[" + b"1" * 5000 + b"]", "not valid JSON"),
        (b'["\\udfff"]', "unpaired UTF-16 surrogate"),
        (b"[]", "batches"),
        (b"7", "not a number"),
        (b'{"jsonrpc":"2.0"}', "must have a 'method', a 'result' or an 'error'"),
        (b'{"id":1,"method":"a"}', '"jsonrpc": "2.0"'),
        (b'{"jsonrpc":"1.0","id":1,"method":"a"}', "not '1.0'"),
        (b'{"jsonrpc":["2.0"],"id":1,"method":"a"}', "'jsonrpc' must be \"2.0\", not an array"),
        (b'{"jsonrpc":"' + b"9" * 1000 + b'","id":1,"method":"a"}', "'999999"),
        (b'{"jsonrpc":"2.0","id":1,"method":1}', "'method' must be a string, not a number"),
        (b'{"jsonrpc":"2.0","id":null,"method":"a"}', "not null"),
        (b'{"jsonrpc":"2.0","id":true,"method":"a"}', "not a boolean"),
        (b'{"jsonrpc":"2.0","id":[],"method":"a"}', "not an array"),
        (b'{"jsonrpc":"2.0","id":{},"method":"a"}', "not an object"),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"a","params":"s"}',
            "'params' must be an object, not a string",
        ),
        (b'{"jsonrpc":"2.0","id":1,"method":"skills/get","params":[]}', "'skills/get' takes named"),
        (
            b'{"jsonrpc":"2.0","method":"notifications/cancelled"}',
            "'params.requestId' must be a string or an integer, not missing",
        ),
        (
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":1}}',
            "'params.reason' must be a string when present, not a number",
        ),
        (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{}}', "both 'result' and 'error'"),
        (b'{"jsonrpc":"2.0","id":1.5,"result":{}}', "string, an integer or null, not a number"),
        (b'{"jsonrpc":"2.0","result":{}}', "must have a string or integer 'id'"),
        (b'{"jsonrpc":"2.0","id":1,"result":null}', "every MCP result is"),
        (b'{"jsonrpc":"2.0","id":1,"error":[]}', "'error' must be an object, not an array"),
        (
            b'{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}',
            "'error.code' must be an integer, not missing",
        ),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}', "not a string"),
        (
            b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":null}}',
            "'error.message' must be a string, not null",
        ),
    ],
)
def test_error_messages_say_what_is_wrong(line: bytes, words: str) -> None:
    conn = JsonRpcConnection()
    conn.receive_data(line + b"\n")
    event = conn.next_event()
    assert isinstance(event, InvalidMessage)
    assert words in event.error.message
    if event.reply is not None:
        assert json.loads(event.reply)["error"]["message"] == event.error.message


def test_error_messages_quote_peer_data_briefly() -> None:
    conn = JsonRpcConnection()
    key = "k" * 10_000
    conn.receive_data(
        json.dumps({"jsonrpc": "2.0", "method": "m" * 10_000, "params": [1]}).encode() + b"\n"
    )
    conn.receive_data(("{" + f'"{key}":1,"{key}":2' + "}\n").encode())
    for _ in range(2):
        event = conn.next_event()
        assert isinstance(event, InvalidMessage)
        assert len(event.error.message) < 200
        assert event.error.message.count("...") == 1


@pytest.mark.parametrize("where", ["jsonrpc", "id", "method", "params", "result", "error"])
def test_values_nested_up_to_the_recursion_limit_never_escape_as_exceptions(where: str) -> None:
    """Whatever depth json accepts, classification never recurses into it (no RecursionError)."""
    conn = JsonRpcConnection()
    for depth in range(600, 1100, 7):
        nested = "[" * depth + "]" * depth
        members = {"jsonrpc": '"2.0"', "id": "1", "method": '"m"', where: nested}
        line = "{" + ",".join(f'"{k}":{v}' for k, v in members.items()) + "}\n"
        conn.receive_data(line.encode())
        event = conn.next_event()
        assert isinstance(event, InvalidMessage | RequestReceived), event
        repr(event.reply if isinstance(event, InvalidMessage) else event.id)


def test_invalid_message_reply_is_exact() -> None:
    conn = JsonRpcConnection()
    conn.receive_data(b'{"jsonrpc":"2.0","id":"q","method":"a","params":[]}\n')
    event = conn.next_event()
    assert isinstance(event, InvalidMessage)
    assert event.reply == (
        b'{"jsonrpc":"2.0","id":"q","error":{"code":-32602,'
        b'"message":"\'a\' takes named parameters (an object), not an array"}}\n'
    )
    assert event.error.rpc_code == ErrorCode.INVALID_PARAMS
    assert event.error.kind == "invalid-params"


def test_parse_error_reply_has_id_null() -> None:
    conn = JsonRpcConnection()
    conn.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"a"\n')
    event = conn.next_event()
    assert isinstance(event, InvalidMessage)
    assert event.reply is not None
    message = json.loads(event.reply)
    assert message["id"] is None
    assert message["error"]["code"] == -32700
    assert message["error"]["message"].startswith("the message is not valid JSON")


def test_error_response_code_is_an_error_code_member_when_known() -> None:
    conn = make_connection(["a", "b"])
    conn.receive_data(
        rpc(id=1, error={"code": -32022, "message": "v"})
        + rpc(id=2, error={"code": -1, "message": "v"})
    )
    first, second = drain(conn)
    assert isinstance(first, ErrorResponseReceived)
    assert first.code is ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
    assert isinstance(second, ErrorResponseReceived)
    assert type(second.code) is int
    assert second.code == -1


# --- end of stream ---------------------------------------------------------------------------


def test_connection_closed_fails_pending_requests_in_order_with_clear_errors() -> None:
    conn = make_connection(["skills/list", "skills/get", "resources/read"])
    conn.receive_data(rpc(id=2, result={}))
    conn.receive_data(b'{"jsonrpc":"2.0","id":1,"res')
    conn.receive_data(b"")
    events = drain(conn)
    assert events[0] == ResponseReceived(id=2, method="skills/get", result={})
    end = events[-1]
    assert end == closed((1, "skills/list"), (3, "resources/read"), truncated=True)
    assert isinstance(end, ConnectionClosed)
    error = end.error_for(3)
    assert isinstance(error, RemoteProtocolError)
    assert error.kind == "connection-closed"
    assert str(error) == (
        "the peer closed the connection before answering request 3 (resources/read); "
        "its last message was cut off"
    )
    assert end.error_for("zz").message == (
        "the peer closed the connection before answering request 'zz'; its last message was cut off"
    )
    assert conn.pending == {}


def test_clean_close_error_message() -> None:
    conn = make_connection(["ping"])
    conn.receive_data(b"")
    (end,) = drain(conn)
    assert isinstance(end, ConnectionClosed)
    assert (
        end.error_for(1).message
        == "the peer closed the connection before answering request 1 (ping)"
    )


def test_connection_closed_is_returned_again_and_again() -> None:
    conn = make_connection(["a"])
    conn.receive_data(b"")
    first = conn.next_event()
    assert isinstance(first, ConnectionClosed)
    assert conn.next_event() is first
    assert conn.next_event() is first
    conn.receive_data(b"")  # harmless
    assert conn.next_event() is first


def test_data_after_end_of_stream_is_refused() -> None:
    conn = JsonRpcConnection()
    conn.receive_data(b'{"jsonrpc":"2.0"')
    conn.receive_data(b"")
    with pytest.raises(LocalProtocolError) as info:
        conn.receive_data(b"}\n")
    assert info.value.kind == "closed"
    drain(conn)
    with pytest.raises(LocalProtocolError):
        conn.receive_data(b"x")


def test_requests_are_refused_after_end_of_stream_but_replies_are_not() -> None:
    conn = JsonRpcConnection()
    conn.receive_data(rpc(id=1, method="a"))
    conn.receive_data(b"")
    with pytest.raises(LocalProtocolError) as info:
        conn.send_request("b")
    assert info.value.kind == "closed"
    # A server still answers what it read before stdin closed (docs/protocol.md#stdio: the client
    # waits for exit).
    (request, end) = drain(conn)
    assert isinstance(request, RequestReceived)
    assert conn.send_response(request.id, {}) == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    assert conn.send_notification("n") == b'{"jsonrpc":"2.0","method":"n"}\n'
    assert end == closed()


def test_pending_requests_can_still_be_cancelled_before_close_is_reported() -> None:
    conn = make_connection(["a", "b"])
    conn.receive_data(b"")
    conn.send_cancel(1)
    assert drain(conn) == [closed((2, "b"))]


# --- sending ---------------------------------------------------------------------------------


def test_send_request_allocates_increasing_integer_ids_and_records_pending() -> None:
    conn = JsonRpcConnection()
    first = conn.send_request(Method.SKILLS_LIST, {"_meta": {}})
    second = conn.send_request("resources/read", {"uri": "skill://a/SKILL.md"})
    third = conn.send_request("ping")
    assert first == (1, b'{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"_meta":{}}}\n')
    assert second == (
        2,
        b'{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"skill://a/SKILL.md"}}\n',
    )
    assert third == (3, b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
    assert dict(conn.pending) == {1: "skills/list", 2: "resources/read", 3: "ping"}
    assert type(conn.pending[1]) is str  # the StrEnum member is stored as its plain value


def test_pending_is_a_live_read_only_view() -> None:
    conn = JsonRpcConnection()
    view = conn.pending
    conn.send_request("a")
    assert dict(view) == {1: "a"}
    with pytest.raises(TypeError):
        view[2] = "b"  # type: ignore[index]
    conn.receive_data(rpc(id=1, result={}))
    drain(conn)
    assert dict(view) == {}


def test_a_failed_send_request_uses_up_no_id() -> None:
    conn = JsonRpcConnection()
    with pytest.raises(LocalProtocolError):
        conn.send_request("a", {"x": float("nan")})
    with pytest.raises(LocalProtocolError):
        conn.send_request("a", {"x": {1, 2}})
    conn_small = JsonRpcConnection(max_message_size=SMALL)
    with pytest.raises(LocalProtocolError):
        conn_small.send_request("a", {"x": "y" * SMALL})
    assert conn_small.pending == {}
    assert conn_small.send_request("a")[0] == 1
    assert conn.pending == {}
    assert conn.send_request("a")[0] == 1


def test_send_notification_response_and_error() -> None:
    conn = JsonRpcConnection()
    assert conn.send_notification("notifications/initialized") == (
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    )
    assert (
        conn.send_notification("n", {"a": [1, 2]})
        == b'{"jsonrpc":"2.0","method":"n","params":{"a":[1,2]}}\n'
    )
    assert conn.send_response("r", {"resultType": "complete"}) == (
        b'{"jsonrpc":"2.0","id":"r","result":{"resultType":"complete"}}\n'
    )
    assert conn.send_error(4, ErrorCode.METHOD_NOT_FOUND, "no such method") == (
        b'{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no such method"}}\n'
    )
    assert conn.send_error(None, -32700, "bad", {"supported": ["2026-07-28"]}) == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad",'
        b'"data":{"supported":["2026-07-28"]}}}\n'
    )


def test_send_cancel_builds_the_notification_and_stops_pending() -> None:
    conn = make_connection(["a", "b"])
    assert conn.send_cancel(1) == (
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}\n'
    )
    assert conn.send_cancel(2, "timed out") == (
        b'{"jsonrpc":"2.0","method":"notifications/cancelled",'
        b'"params":{"requestId":2,"reason":"timed out"}}\n'
    )
    assert conn.pending == {}
    with pytest.raises(LocalProtocolError) as info:
        conn.send_cancel(1)
    assert info.value.kind == "not-pending"
    with pytest.raises(LocalProtocolError):
        conn.send_cancel(77)


def test_cancellations_remembered_are_bounded() -> None:
    conn = make_connection(["m"] * (MAX_REMEMBERED_CANCELLATIONS + 1))
    for request_id in range(1, MAX_REMEMBERED_CANCELLATIONS + 2):
        conn.send_cancel(request_id)
    conn.receive_data(rpc(id=1, result={}) + rpc(id=2, result={}))
    first, second = drain(conn)
    assert first == UnmatchedResponse(id=1, result={}, error=None)  # forgotten: the oldest
    assert second == LateResponse(id=2, method="m", result={}, error=None)


class Color(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class OldStyle(str, enum.Enum):  # noqa: UP042 - the case under test
    LIST = "skills/list"


def test_method_names_are_sent_and_recorded_as_their_plain_value() -> None:
    conn = JsonRpcConnection()
    for method in (Method.SKILLS_LIST, OldStyle.LIST):
        request_id, data = conn.send_request(method)
        assert json.loads(data)["method"] == "skills/list"
        assert type(conn.pending[request_id]) is str
        assert conn.pending[request_id] == "skills/list"
    assert conn.send_notification(OldStyle.LIST) == b'{"jsonrpc":"2.0","method":"skills/list"}\n'


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ((1, "a", None), b'[1,"a",null]'),
        (MappingProxyType({"k": True}), b'{"k":true}'),
        ({Color.RED: Level.HIGH}, b'{"red":3}'),
        (Color.RED, b'"red"'),
        (-0.0, b"-0.0"),
        (1.5e300, b"1.5e+300"),
        ('é\u2028\u2029\x85\x00"\\\n', '"é\\u2028\\u2029\\u0085\\u0000\\"\\\\\\n"'.encode()),
        ("\U0001f600", '"\U0001f600"'.encode()),
    ],
)
def test_values_that_are_json(value: object, encoded: bytes) -> None:
    data = JsonRpcConnection().send_notification("n", {"v": value})
    assert data == b'{"jsonrpc":"2.0","method":"n","params":{"v":' + encoded + b"}}\n"
    assert b"\n" not in data[:-1]


def _circular() -> list[object]:
    loop: list[object] = []
    loop.append(loop)
    return loop


def _deep() -> list[object]:
    value: list[object] = []
    for _ in range(100_000):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (float("nan"), "nan is not a JSON number"),
        (float("inf"), "inf is not a JSON number"),
        (float("-inf"), "-inf is not a JSON number"),
        ({1: "a"}, "object key 1 is int, not str"),
        ({None: "a"}, "object key None is NoneType"),
        ({(1, 2): "a"}, "is tuple"),
        ({"a", "b"}, "a Python set is not a JSON value"),
        (b"bytes", "a Python bytes is not a JSON value"),
        (object(), "a Python object is not a JSON value"),
        ("\ud800", "lone surrogate"),
        ({"\udfff": 1}, "lone surrogate"),
        pytest.param(10**5000, "Exceeds the limit", id="huge-int"),
        (_circular(), "nested too deeply, or contains itself"),
        (_deep(), "nested too deeply"),
    ],
)
def test_values_that_are_not_json_are_refused(value: object, words: str) -> None:
    conn = JsonRpcConnection()
    for send in (
        lambda: conn.send_request("a", {"v": value}),
        lambda: conn.send_notification("a", {"v": value}),
        lambda: conn.send_response(1, {"v": value}),
        lambda: conn.send_error(1, 1, "m", {"v": value}),
    ):
        with pytest.raises(LocalProtocolError) as info:
            send()
        assert info.value.kind == "not-serializable"
        assert words in info.value.message
    assert conn.pending == {}


def test_messages_over_the_maximum_are_refused_on_send() -> None:
    conn = JsonRpcConnection(max_message_size=SMALL)
    envelope = len(b'{"jsonrpc":"2.0","method":"n","params":{"v":""}}')
    assert len(conn.send_notification("n", {"v": "x" * (SMALL - envelope)})) == SMALL + 1
    with pytest.raises(LocalProtocolError) as info:
        conn.send_notification("n", {"v": "x" * (SMALL - envelope + 1)})
    assert info.value.kind == "message-too-large"
    assert str(info.value) == f"cannot send a message of {SMALL + 1} bytes: the maximum is {SMALL}"
    # Multi-byte characters count as bytes, not characters.
    with pytest.raises(LocalProtocolError):
        conn.send_notification("n", {"v": "é" * (SMALL // 2)})


@pytest.mark.parametrize(
    ("send", "words"),
    [
        (lambda c: c.send_request(1), "a method name must be a str, not int"),
        (lambda c: c.send_request("a", [1, 2]), "params must be a mapping"),
        (lambda c: c.send_request("a", "p"), "params must be a mapping"),
        (lambda c: c.send_notification(None), "a method name must be a str"),
        (lambda c: c.send_notification("a", (1,)), "params must be a mapping"),
        (lambda c: c.send_response(True, {}), "a request id must be a str or an int, not bool"),
        (lambda c: c.send_response(1.0, {}), "not float"),
        (lambda c: c.send_response(None, {}), "not NoneType"),
        (lambda c: c.send_response(1, "pong"), "a result must be a mapping"),
        (lambda c: c.send_response(1, None), "a result must be a mapping"),
        (lambda c: c.send_error(False, 1, "m"), "a request id must be a str or an int"),
        (lambda c: c.send_error(1, True, "m"), "an error code must be an int, not bool"),
        (lambda c: c.send_error(1, 1.0, "m"), "an error code must be an int, not float"),
        (lambda c: c.send_error(1, 1, None), "an error message must be a str"),
        (lambda c: c.send_cancel(True), "a request id must be a str or an int"),
        (lambda c: c.send_cancel(1, 5), "a reason must be a str, not int"),
    ],
)
def test_wrong_argument_types_are_local_errors(send: Callable[[Any], object], words: str) -> None:
    conn = make_connection(["a"])
    with pytest.raises(LocalProtocolError) as info:
        send(conn)
    assert info.value.kind == "invalid-argument"
    assert words in info.value.message
    assert dict(conn.pending) == {1: "a"}


def test_what_we_send_our_parser_reads_back() -> None:
    client = JsonRpcConnection()
    server = JsonRpcConnection()
    params: JSONObject = {
        "uri": "skill://a/SKILL.md",
        "n": [1, -2.5, None, True, {"x": "é\u2028"}],
        "e": "",
    }
    request_id, data = client.send_request("resources/read", params)
    server.receive_data(data)
    (request,) = drain(server)
    assert request == RequestReceived(id=request_id, method="resources/read", params=params)
    client.receive_data(server.send_response(request.id, {"contents": []}))
    assert drain(client) == [
        ResponseReceived(id=1, method="resources/read", result={"contents": []})
    ]
    request_id, data = client.send_request("skills/get")
    server.receive_data(data)
    (request,) = drain(server)
    assert isinstance(request, RequestReceived)
    client.receive_data(
        server.send_error(request.id, ErrorCode.INVALID_PARAMS, "nope", {"uri": "u"})
    )
    assert drain(client) == [
        ErrorResponseReceived(
            id=2, method="skills/get", code=PARAMS, message="nope", data={"uri": "u"}
        )
    ]
    client.receive_data(server.send_notification("notifications/message", {"m": 1}))
    server.receive_data(client.send_cancel(client.send_request("x")[0], "bye"))
    assert drain(client) == [NotificationReceived(method="notifications/message", params={"m": 1})]
    assert drain(server)[-1] == CancelRequested(request_id=3, reason="bye")


def test_a_16_mib_file_as_base64_fits_the_default_limit() -> None:
    """The issue's sizing requirement: the largest resources/read result the extension allows."""
    blob = "QUJD" * (math.ceil(MAX_TOTAL_BYTES / 3))
    assert len(blob) == 22_369_624
    result = {
        "resultType": "complete",
        "contents": [
            {"uri": "skill://a/big.bin", "mimeType": "application/octet-stream", "blob": blob}
        ],
        "ttlMs": 0,
        "cacheScope": "private",
    }
    server = JsonRpcConnection()
    data = server.send_response(1, result)
    assert len(data) < DEFAULT_MAX_MESSAGE_SIZE
    client = make_connection(["resources/read"])
    chunk = 64 * 1024
    events: list[JsonRpcEvent] = []
    for start in range(0, len(data), chunk):
        client.receive_data(data[start : start + chunk])
        events += drain(client)
    (event,) = events
    assert isinstance(event, ResponseReceived)
    contents = event.result["contents"]
    assert isinstance(contents, list)
    assert isinstance(contents[0], dict)
    assert contents[0]["blob"] == blob


# --- buffering: bounded memory, linear scanning ----------------------------------------------


class CountingBuffer(bytearray):
    """A receive buffer that counts the bytes its newline searches look at."""

    scanned = 0

    def find(self, sub: Any, start: Any = 0, end: Any = None) -> int:
        stop = len(self) if end is None else end
        index = super().find(sub, start, stop)
        self.scanned += (index + 1 if index >= 0 else stop) - start
        return index


def test_newline_scanning_is_incremental() -> None:
    """A line arriving in 2,000 chunks is scanned about once, not 2,000 times (not O(n^2))."""
    conn = JsonRpcConnection()
    counter = CountingBuffer()
    conn._buffer = counter  # the one test that reaches inside: the cost is not observable
    line = rpc(method="n", params={"blob": "A" * 2_000_000})
    chunk = len(line) // 2_000 + 1
    events: list[JsonRpcEvent] = []
    for start in range(0, len(line), chunk):
        conn.receive_data(line[start : start + chunk])
        events += drain(conn)
    assert len(events) == 1
    assert isinstance(events[0], NotificationReceived)
    assert counter.scanned <= len(line) + 2_000  # quadratic would be about 2,000 x 1 MB
    assert conn._buffer is counter  # consumed in place, never replaced


def test_many_small_messages_in_one_chunk_are_scanned_once() -> None:
    conn = JsonRpcConnection()
    counter = CountingBuffer()
    conn._buffer = counter
    wire = b"".join(rpc(id=n, method="ping") for n in range(5_000))
    conn.receive_data(wire)
    events = drain(conn)
    assert len(events) == 5_000
    assert counter.scanned <= len(wire)


def _peak_while_feeding(
    conn: JsonRpcConnection, chunks: Sequence[bytes], *, drain_each: bool
) -> tuple[int, list[JsonRpcEvent]]:
    events: list[JsonRpcEvent] = []
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        for chunk in chunks:
            conn.receive_data(chunk)
            if drain_each:
                events += drain(conn)
        events += drain(conn)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, events


def test_a_100_mb_line_never_grows_the_buffer_past_the_limit_plus_a_chunk() -> None:
    limit = 1024 * 1024
    chunk = b"x" * (64 * 1024)
    chunks = [b'{"jsonrpc":"2.0","method":"n","params":{"p":"'] + [chunk] * 1600
    chunks += [b'"}}\n' + rpc(method="after")]
    conn = JsonRpcConnection(max_message_size=limit)
    peak, events = _peak_while_feeding(conn, chunks, drain_each=True)
    assert [norm(e) for e in events] == [
        invalid(K.MESSAGE_TOO_LARGE, INVALID),
        NotificationReceived(method="after", params=None),
    ]
    assert peak < 2 * (limit + len(chunk))  # bytearray over-allocates by at most 1/8


def test_the_rest_of_an_oversized_line_is_dropped_even_without_next_event_calls() -> None:
    limit = 1024 * 1024
    chunk = b"x" * (64 * 1024)
    conn = JsonRpcConnection(max_message_size=limit)
    conn.receive_data(chunk * 17)
    assert [norm(e) for e in drain(conn)] == [invalid(K.MESSAGE_TOO_LARGE, INVALID)]
    peak, events = _peak_while_feeding(
        conn, [chunk] * 1600 + [b"\n" + rpc(method="a")], drain_each=False
    )
    assert events == [NotificationReceived(method="a", params=None)]
    assert peak < 4 * len(chunk)


# --- configuration, events, sentinel ---------------------------------------------------------


def test_max_message_size_is_configurable_and_checked() -> None:
    assert JsonRpcConnection().max_message_size == DEFAULT_MAX_MESSAGE_SIZE == 33_554_432
    assert JsonRpcConnection(max_message_size=1024).max_message_size == 1024
    with pytest.raises(ValueError, match="at least 1024"):
        JsonRpcConnection(max_message_size=1023)
    with pytest.raises(TypeError):
        JsonRpcConnection(max_message_size=True)
    with pytest.raises(TypeError):
        JsonRpcConnection(max_message_size=2.0**20)  # type: ignore[arg-type]


def test_need_data_is_an_enum_sentinel() -> None:
    conn = JsonRpcConnection()
    assert conn.next_event() is NEED_DATA
    assert isinstance(NEED_DATA, NeedData)
    assert repr(NEED_DATA) == "<NeedData.NEED_DATA: 'NEED_DATA'>"
    conn.receive_data(b'{"jsonrpc":"2.0",')
    assert conn.next_event() is NEED_DATA
    assert conn.next_event() is NEED_DATA


def test_events_are_frozen_slotted_values() -> None:
    event = RequestReceived(id=1, method="a", params=None)
    assert isinstance(event, Event)
    assert not hasattr(event, "__dict__")
    with pytest.raises(AttributeError):
        event.method = "b"  # type: ignore[misc]
    assert event == RequestReceived(id=1, method="a", params=None)
    assert hash(event) == hash(RequestReceived(id=1, method="a", params=None))
    with pytest.raises(TypeError):
        RequestReceived(1, "a", None)  # type: ignore[call-arg]


def test_events_match_exhaustively() -> None:
    def describe(event: JsonRpcEvent) -> str:
        match event:
            case RequestReceived(method=method):
                return f"request {method}"
            case NotificationReceived(method=method):
                return f"notification {method}"
            case CancelRequested(request_id=request_id):
                return f"cancel {request_id}"
            case ResponseReceived(id=request_id):
                return f"result {request_id}"
            case ErrorResponseReceived(code=code):
                return f"error {code}"
            case InvalidResponse(error=error):
                return error.kind
            case LateResponse(method=method):
                return f"late {method}"
            case UnmatchedResponse(id=request_id):
                return f"unexpected {request_id}"
            case InvalidMessage(error=error):
                return error.kind
            case ConnectionClosed(truncated=truncated):
                return f"closed {truncated}"

    conn = make_connection(["a", "b"], cancel=[2])
    conn.receive_data(rpc(id=1, result={}) + rpc(id=2, result={}) + b"[]\n" + rpc(method="n"))
    conn.receive_data(b"")
    assert [describe(e) for e in drain(conn)] == [
        "result 1",
        "late b",
        "batch",
        "notification n",
        "closed False",
    ]


def test_send_response_without_the_key_walk_still_refuses_non_json() -> None:
    conn = JsonRpcConnection()
    assert conn.send_response(1, {"a": [1, "x"]}, check_keys=False) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"a":[1,"x"]}}\n'
    )
    for bad in ({"x": {1, 2}}, {"x": float("nan")}, {"x": "\ud800"}, {"x": b"y"}):
        with pytest.raises(LocalProtocolError):
            conn.send_response(1, bad, check_keys=False)
    with pytest.raises(LocalProtocolError, match="not str"):
        conn.send_response(1, {"x": {1: "a"}})  # the default walk refuses non-string keys


def test_the_fast_request_constructor_builds_the_dataclass() -> None:
    """The endpoint builds RequestReceived through its slots; it must be the same object."""
    from skills_core._jsonrpc_events import new_request
    from skills_core.jsonvalue import JSONValue

    choices: list[dict[str, JSONValue] | None] = [None, {"a": [1]}]
    for params in choices:
        fast = new_request("x", "m", params)
        slow = RequestReceived(id="x", method="m", params=params)
        assert type(fast) is RequestReceived
        assert fast == slow
        assert repr(fast) == repr(slow)
    with pytest.raises(AttributeError):
        fast.id = 2  # type: ignore[misc]
