"""Property tests of the JSON-RPC endpoint.

* Any byte stream, split anywhere, gives only events (no exception, no hang), the same events
  whether fed whole, in random chunks or one byte at a time, and a bounded buffer.
* Every suggested reply is itself a valid, in-limit JSON-RPC error response.
* Whatever ``send_*`` accepts, the endpoint reads back unchanged; whatever it refuses is a
  LocalProtocolError.
* Request/response bookkeeping matches a model under any interleaving of sends, cancellations
  and responses.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import event as statistic
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from skills_core.errors import LocalProtocolError, RemoteProtocolError
from skills_core.jsonrpc import (
    NEED_DATA,
    CancelRequested,
    ConnectionClosed,
    ErrorResponseReceived,
    Event,
    InvalidMessage,
    InvalidResponse,
    JsonRpcConnection,
    JsonRpcEvent,
    LateResponse,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    UnmatchedResponse,
)

SMALL = 1024


def drain(conn: JsonRpcConnection) -> list[JsonRpcEvent]:
    events: list[JsonRpcEvent] = []
    # Each call consumes a line or returns; more calls than bytes buffered would mean a hang.
    for _ in range(len(conn._buffer) + 3):
        event = conn.next_event()
        if event is NEED_DATA:
            return events
        assert isinstance(event, Event)
        events.append(event)
        if isinstance(event, ConnectionClosed):
            return events
    raise AssertionError("next_event() did not settle")


def run(wire: bytes, cuts: list[int], *, max_size: int, requests: int = 0) -> list[JsonRpcEvent]:
    """Feed ``wire`` cut at ``cuts``, draining after each chunk, then end the stream."""
    conn = JsonRpcConnection(max_message_size=max_size)
    for n in range(requests):
        conn.send_request(f"m{n}")
    events: list[JsonRpcEvent] = []
    start = 0
    for end in [*sorted(set(cuts)), len(wire)]:
        chunk = wire[start:end]
        start = max(start, end)
        if chunk:
            conn.receive_data(chunk)
            # The oversized-line rule: never more than the limit plus the last chunk.
            assert len(conn._buffer) <= max_size + len(chunk)
            events += drain(conn)
    conn.receive_data(b"")
    events += drain(conn)
    assert isinstance(events[-1], ConnectionClosed)
    assert sum(isinstance(e, ConnectionClosed) for e in events) == 1
    assert conn.pending == {}
    return events


def comparable(event: JsonRpcEvent) -> object:
    if isinstance(event, InvalidMessage | InvalidResponse):
        error = event.error
        assert type(error) is RemoteProtocolError
        extra = event.reply if isinstance(event, InvalidMessage) else (event.id, event.method)
        return (type(event).__name__, error.kind, error.rpc_code, error.message, extra)
    return event


def note_kind(happened: JsonRpcEvent) -> None:
    """Hypothesis statistics (--hypothesis-show-statistics): which events the streams reach."""
    if isinstance(happened, InvalidMessage | InvalidResponse):
        statistic(f"{type(happened).__name__}: {happened.error.kind}")
    else:
        statistic(type(happened).__name__)


def check_reply(event: JsonRpcEvent, max_size: int) -> None:
    """A suggested reply is a valid error response that a peer endpoint accepts."""
    if not isinstance(event, InvalidMessage) or event.reply is None:
        return
    assert event.reply.endswith(b"\n")
    assert b"\n" not in event.reply[:-1]
    assert len(event.reply) <= max_size + 1
    peer = JsonRpcConnection(max_message_size=max_size)
    peer.receive_data(event.reply)
    answer = peer.next_event()
    assert isinstance(answer, UnmatchedResponse)
    assert answer.error is not None
    assert answer.error["code"] == event.error.rpc_code
    assert answer.error["message"] == event.error.message


@st.composite
def cut_points(draw: st.DrawFn, wire: bytes) -> list[int]:
    return draw(st.lists(st.integers(0, len(wire)), max_size=20))


SIZES = st.sampled_from([SMALL, 4096, 32 * 1024 * 1024])


@settings(deadline=None, max_examples=300)
@given(data=st.data(), wire=st.binary(max_size=3000), max_size=SIZES)
def test_arbitrary_bytes_give_the_same_events_however_split(
    data: st.DataObject, wire: bytes, max_size: int
) -> None:
    whole = run(wire, [], max_size=max_size)
    split = run(wire, data.draw(cut_points(wire)), max_size=max_size)
    assert [comparable(e) for e in whole] == [comparable(e) for e in split]
    assert len(whole) <= wire.count(b"\n") + 3
    for event in whole:
        check_reply(event, max_size)


# --- plausible streams: JSON-RPC-shaped lines, some broken --------------------------------------

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
GOOD_IDS = st.one_of(st.integers(0, 8), st.text(max_size=3))
METHODS = st.sampled_from(["ping", "skills/list", "notifications/cancelled", ""])
PARAMS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3)
ERRORS = st.fixed_dictionaries(
    {"code": st.integers(-32800, 10), "message": st.text(max_size=5)},
    optional={"data": JSON_VALUES},
)


@st.composite
def message_objects(draw: st.DrawFn) -> bytes:
    """Mostly well-formed messages of every shape, some with one member broken or dropped."""
    shape = draw(st.sampled_from(["request", "notification", "cancel", "result", "error", "mixed"]))
    obj: dict[str, object] = {"jsonrpc": "2.0"}
    if shape == "request":
        obj |= {"id": draw(GOOD_IDS), "method": draw(METHODS)}
        if draw(st.booleans()):
            obj["params"] = draw(PARAMS)
    elif shape == "notification":
        obj |= {"method": draw(METHODS)}
        if draw(st.booleans()):
            obj["params"] = draw(PARAMS)
    elif shape == "cancel":
        cancel: dict[str, object] = {"requestId": draw(GOOD_IDS)}
        if draw(st.booleans()):
            cancel["reason"] = draw(st.text(max_size=5))
        obj |= {"method": "notifications/cancelled", "params": cancel}
    elif shape == "result":
        obj |= {"id": draw(GOOD_IDS), "result": draw(PARAMS)}
    elif shape == "error":
        obj |= {"id": draw(st.one_of(GOOD_IDS, st.none())), "error": draw(ERRORS)}
    else:
        members = {
            "jsonrpc": st.sampled_from(["2.0", "1.0", 2]),
            "id": st.one_of(GOOD_IDS, st.none(), st.booleans(), st.floats(allow_nan=False)),
            "method": st.one_of(METHODS, JSON_SCALARS),
            "params": JSON_VALUES,
            "result": JSON_VALUES,
            "error": st.one_of(ERRORS, JSON_VALUES),
        }
        obj = draw(st.fixed_dictionaries({}, optional=members))
    if obj and draw(st.integers(0, 5)) == 0:
        key = draw(st.sampled_from(sorted(obj)))
        if draw(st.booleans()):
            del obj[key]
        else:
            obj[key] = draw(JSON_VALUES)
    return json.dumps(obj, ensure_ascii=draw(st.booleans())).encode()


NASTY_LINES = st.sampled_from(
    [
        b"",
        b"   ",
        b"[]",
        b"[1]",
        b"NaN",
        b'{"a":1,"a":1}',
        b'"\\ud800"',
        b"[" * 3000,
        b"\xff\xfe",
        b"\xef\xbb\xbf{}",
        b"1e999",
        b'{"jsonrpc":"2.0","method":"x"',
        b" " * 1100,
        b"x" * 5000,
    ]
)
LINES = st.one_of(
    # one_of picks each branch equally often: weight the JSON-RPC-shaped lines.
    message_objects(),
    message_objects(),
    message_objects(),
    message_objects(),
    JSON_VALUES.map(lambda v: json.dumps(v).encode()),
    NASTY_LINES,
    st.binary(max_size=40).filter(lambda b: b"\n" not in b),
)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(LINES, max_size=12))
    endings = [draw(st.sampled_from([b"\n", b"\r\n", b"\n\n"])) for _ in lines]
    wire = b"".join(line + ending for line, ending in zip(lines, endings, strict=True))
    return wire if draw(st.booleans()) else wire.rstrip(b"\n")


@settings(deadline=None, max_examples=300)
@given(data=st.data(), wire=streams(), max_size=SIZES, requests=st.integers(2, 8))
def test_plausible_streams_give_the_same_events_however_split(
    data: st.DataObject, wire: bytes, max_size: int, requests: int
) -> None:
    whole = run(wire, [], max_size=max_size, requests=requests)
    split = run(wire, data.draw(cut_points(wire)), max_size=max_size, requests=requests)
    assert [comparable(e) for e in whole] == [comparable(e) for e in split]
    answered: set[int | str] = set()
    for event in whole:
        note_kind(event)
        check_reply(event, max_size)
        if isinstance(event, RequestReceived | CancelRequested):
            request_id = event.id if isinstance(event, RequestReceived) else event.request_id
            assert isinstance(request_id, str | int)
            assert not isinstance(request_id, bool)
        if isinstance(event, RequestReceived | NotificationReceived):
            assert event.params is None or isinstance(event.params, dict)
        if isinstance(event, ResponseReceived | ErrorResponseReceived | InvalidResponse):
            # Each pending request is settled at most once, and only requests we sent are.
            assert event.id not in answered
            answered.add(event.id)
            assert event.method == f"m{int(event.id) - 1}"
    closed = whole[-1]
    assert isinstance(closed, ConnectionClosed)
    assert {request_id for request_id, _ in closed.failed} | answered == set(range(1, requests + 1))


# --- sending: accepted values round-trip, refused ones are local errors -------------------------

ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=10)
SEND_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=10,
)


@settings(deadline=None, max_examples=300)
@given(params=st.dictionaries(ANY_TEXT, SEND_VALUES, max_size=4), method=ANY_TEXT)
def test_what_send_accepts_reads_back_unchanged(params: dict[str, Any], method: str) -> None:
    client = JsonRpcConnection(max_message_size=4096)
    try:
        request_id, data = client.send_request(method, params)
    except LocalProtocolError as error:
        refused: str | None = error.kind
    else:
        refused = None
    statistic(f"refused: {refused}")
    if refused is not None:
        assert refused in {"not-serializable", "message-too-large"}
        assert client.pending == {}
        return
    assert data.endswith(b"\n")
    assert b"\n" not in data[:-1]
    assert len(data) <= 4097
    server = JsonRpcConnection(max_message_size=4096)
    server.receive_data(data)
    assert server.next_event() == RequestReceived(id=request_id, method=method, params=params)
    reply = server.send_response(request_id, params)
    client.receive_data(reply)
    assert client.next_event() == ResponseReceived(id=request_id, method=method, result=params)


# --- bookkeeping: a model of pending and cancelled requests -------------------------------------


class Bookkeeping(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.conn = JsonRpcConnection()
        self.pending: dict[int, str] = {}
        self.cancelled: dict[int, str] = {}
        self.sent = 0

    @rule(method=st.sampled_from(["a", "b", "skills/get"]))
    def send(self, method: str) -> None:
        request_id, _ = self.conn.send_request(method)
        self.sent += 1
        assert request_id == self.sent
        self.pending[request_id] = method

    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        if not self.pending:
            return
        request_id = data.draw(st.sampled_from(sorted(self.pending)))
        self.conn.send_cancel(request_id)
        self.cancelled[request_id] = self.pending.pop(request_id)

    @rule(request_id=st.integers(0, 12), kind=st.sampled_from(["result", "error", "broken"]))
    def respond(self, request_id: int, kind: str) -> None:
        body: dict[str, object]
        if kind == "result":
            body = {"result": {"n": request_id}}
        elif kind == "error":
            body = {"error": {"code": -32603, "message": "e"}}
        else:
            body = {"result": "not an object"}
        self.conn.receive_data(
            json.dumps({"jsonrpc": "2.0", "id": request_id, **body}).encode() + b"\n"
        )
        (event,) = drain(self.conn)
        if request_id in self.pending:
            method = self.pending.pop(request_id)
            expected: type[Event] = {
                "result": ResponseReceived,
                "error": ErrorResponseReceived,
                "broken": InvalidResponse,
            }[kind]
            assert type(event) is expected
            assert isinstance(event, ResponseReceived | ErrorResponseReceived | InvalidResponse)
            assert event.method == method
        elif kind == "broken":
            assert isinstance(event, InvalidMessage)
            assert event.reply is None
        elif request_id in self.cancelled:
            assert event == LateResponse(
                id=request_id,
                method=self.cancelled.pop(request_id),
                result=body.get("result"),  # type: ignore[arg-type]
                error=body.get("error"),  # type: ignore[arg-type]
            )
        else:
            assert isinstance(event, UnmatchedResponse)

    @invariant()
    def pending_matches(self) -> None:
        assert dict(self.conn.pending) == self.pending

    def teardown(self) -> None:
        self.conn.receive_data(b"")
        (closed,) = drain(self.conn)
        assert closed == ConnectionClosed(failed=tuple(self.pending.items()), truncated=False)


TestBookkeeping = Bookkeeping.TestCase
TestBookkeeping.settings = settings(deadline=None, max_examples=100, stateful_step_count=30)
