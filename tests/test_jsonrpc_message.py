"""One message on its own: ``parse_message`` (HTTP bodies) and ``classify_message`` (dicts).

docs/requirements.md#http-ladder rows 8-10 and HTTP-07: a body that is not JSON is -32700, id null; a batch,
a posted response, a bad envelope or an id null is -32600; a notification gets no reply. The
verdicts are the newline endpoint's own checks: a hypothesis test feeds the same bytes to both and
requires the same event for everything but responses (a stream reports those; a body refuses
them). Also: answers to send (``ErrorObject``, ``send_answer``).
"""

from __future__ import annotations

import json
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_jsonrpc_hypothesis import LINES, SIZES, comparable

import skills_core._jsonrpc_encode as encode_module
from skills_core._jsonrpc_encode import encode_spliced
from skills_core.errors import LocalProtocolError
from skills_core.jsonrpc import (
    NEED_DATA,
    Answer,
    CancelRequested,
    ErrorObject,
    InvalidMessage,
    InvalidResponse,
    JsonRpcConnection,
    JsonRpcErrorKind,
    JsonRpcEvent,
    LateResponse,
    NotificationReceived,
    ReceivedMessage,
    RequestReceived,
    ResponseReceived,
    UnmatchedResponse,
    classify_message,
    encode_result,
    parse_message,
)


def reply_of(verdict: ReceivedMessage) -> dict[str, Any]:
    assert isinstance(verdict, InvalidMessage)
    assert verdict.reply is not None
    assert verdict.reply.endswith(b"\n")
    reply: dict[str, Any] = json.loads(verdict.reply)
    assert reply["error"]["code"] == verdict.error.rpc_code
    assert reply["error"]["message"] == verdict.error.message
    return reply


# --- the table of docs/requirements.md#http-ladder rows 8-10 -----------------------------------

REQUEST = b'{"jsonrpc":"2.0","id":7,"method":"skills/list","params":{"cursor":null}}'


def test_a_request_body_is_a_request() -> None:
    assert parse_message(REQUEST) == RequestReceived(
        id=7, method="skills/list", params={"cursor": None}
    )


def test_a_pretty_printed_body_with_line_breaks_is_fine() -> None:
    body = json.dumps(json.loads(REQUEST), indent=2).encode() + b"\r\n"
    assert b"\n" in body.strip()
    assert parse_message(body) == parse_message(REQUEST)
    assert parse_message(bytearray(body)) == parse_message(REQUEST)


# Requirement rows: HTTP-07
def test_a_notification_body_gets_no_reply_HTTP_07() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') == (
        NotificationReceived(method="notifications/initialized", params=None)
    )
    assert parse_message(
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}'
    ) == CancelRequested(request_id="a", reason=None)
    # A broken notification is never answered (JSON-RPC §4.1), even in a body.
    verdict = parse_message(b'{"jsonrpc":"2.0","method":"notifications/x","params":[1]}')
    assert isinstance(verdict, InvalidMessage)
    assert verdict.reply is None
    assert verdict.error.rpc_code == -32602


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b"", "empty"),
        (b" \r\n\t ", "empty"),
        (b"{", "not valid JSON"),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"} x', "Extra data"),
        (b"\xff", "not valid UTF-8"),
        (b"NaN", "not a JSON number"),
        (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', "duplicate object key 'id'"),
        (b'{"jsonrpc":"2.0","id":1,"method":"\\ud800"}', "surrogate"),
        (b"[" * 5000, "nested too deeply"),
        (b"1e999", "out of range"),
    ],
)
# Requirement rows: HTTP-07
def test_bad_json_is_parse_error_with_id_null_HTTP_07(body: bytes, kind: str) -> None:
    verdict = parse_message(body)
    reply = reply_of(verdict)
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700
    assert kind in reply["error"]["message"]
    assert isinstance(verdict, InvalidMessage)
    assert verdict.error.kind is JsonRpcErrorKind.PARSE_ERROR


@pytest.mark.parametrize(
    ("message", "reply_id", "kind"),
    [
        ([], None, JsonRpcErrorKind.BATCH),
        ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], None, JsonRpcErrorKind.BATCH),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, None, JsonRpcErrorKind.UNEXPECTED_RESPONSE),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "m"}},
            None,
            JsonRpcErrorKind.UNEXPECTED_RESPONSE,
        ),
        ({"jsonrpc": "2.0", "id": 1, "result": 5}, None, JsonRpcErrorKind.UNEXPECTED_RESPONSE),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, JsonRpcErrorKind.INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None, JsonRpcErrorKind.INVALID_REQUEST),
        ({"jsonrpc": "1.0", "id": 3, "method": "ping"}, 3, JsonRpcErrorKind.INVALID_REQUEST),
        ({"id": "q", "method": "ping"}, "q", JsonRpcErrorKind.INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": 4, "method": 4}, 4, JsonRpcErrorKind.INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": 4, "method": "m", "params": 1}, 4, "invalid-request"),
        ({"jsonrpc": "2.0", "id": 4}, 4, JsonRpcErrorKind.INVALID_REQUEST),
        ("ping", None, JsonRpcErrorKind.INVALID_REQUEST),
        (None, None, JsonRpcErrorKind.INVALID_REQUEST),
    ],
)
# Requirement rows: HTTP-07
def test_batches_responses_and_bad_envelopes_are_32600_HTTP_07(
    message: object, reply_id: object, kind: str
) -> None:
    body = json.dumps(message).encode()
    for verdict in (parse_message(body), classify_message(message)):
        reply = reply_of(verdict)
        assert reply["error"]["code"] == -32600
        assert reply["id"] == reply_id
        assert isinstance(verdict, InvalidMessage)
        assert verdict.error.kind == kind


def test_array_params_on_a_request_are_32602_with_its_id() -> None:
    reply = reply_of(parse_message(b'{"jsonrpc":"2.0","id":"r","method":"m","params":[]}'))
    assert (reply["id"], reply["error"]["code"]) == ("r", -32602)


def test_a_body_over_the_limit_is_refused_before_parsing() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"' + b"y" * 2000 + b'"}}'
    verdict = parse_message(body, max_message_size=1024)
    reply = reply_of(verdict)
    assert isinstance(verdict, InvalidMessage)
    assert verdict.error.kind is JsonRpcErrorKind.MESSAGE_TOO_LARGE
    assert (reply["id"], reply["error"]["code"]) == (None, -32600)
    assert isinstance(parse_message(body), RequestReceived)


def test_a_reply_stays_within_the_limit_even_for_a_huge_id() -> None:
    huge_id = "i" * 1000
    verdict = classify_message({"jsonrpc": "1.0", "id": huge_id, "method": "m"})
    assert reply_of(verdict)["id"] == huge_id
    verdict = classify_message(
        {"jsonrpc": "1.0", "id": huge_id, "method": "m"}, max_message_size=1024
    )
    assert reply_of(verdict)["id"] is None


@pytest.mark.parametrize(("size", "error"), [(1023, ValueError), (True, TypeError)])
def test_the_limit_is_checked(size: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        parse_message(REQUEST, max_message_size=size)
    with pytest.raises(error):
        classify_message({}, max_message_size=size)


# --- the same verdict as the newline endpoint ----------------------------------------------------


def as_one_line(line: bytes, max_size: int) -> JsonRpcEvent | None:
    """The endpoint's event for ``line`` (no newline in it) as a stream of one line."""
    conn = JsonRpcConnection(max_message_size=max_size)
    conn.receive_data(line + b"\n")
    event = conn.next_event()
    return None if event is NEED_DATA else event


@settings(deadline=None, max_examples=500)
@given(line=LINES | st.binary(max_size=200).filter(lambda b: b"\n" not in b), max_size=SIZES)
# Requirement rows: HTTP-07
def test_a_body_gets_the_verdict_the_same_line_gets_HTTP_07(line: bytes, max_size: int) -> None:
    verdict = parse_message(line, max_message_size=max_size)
    event = as_one_line(line, max_size)
    if event is None:  # a blank line: a stream skips it, a body is empty
        assert line.strip(b" \t\r") == b""
        assert isinstance(verdict, InvalidMessage)
        assert verdict.error.kind is JsonRpcErrorKind.PARSE_ERROR
        return
    if isinstance(event, UnmatchedResponse | LateResponse | ResponseReceived | InvalidResponse) or (
        isinstance(event, InvalidMessage) and event.error.kind is JsonRpcErrorKind.INVALID_RESPONSE
    ):
        # A response: a stream reports it, a body refuses it.
        assert reply_of(verdict)["id"] is None
        assert isinstance(verdict, InvalidMessage)
        assert verdict.error.kind is JsonRpcErrorKind.UNEXPECTED_RESPONSE
        return
    assert comparable(verdict) == comparable(event)
    if isinstance(verdict, RequestReceived | NotificationReceived | CancelRequested):
        # And a dict holder gets the same verdict for the decoded value.
        assert classify_message(json.loads(line), max_message_size=max_size) == verdict


# --- answers to send -----------------------------------------------------------------------------


def test_send_answer_maps_each_kind_of_answer() -> None:
    conn = JsonRpcConnection()
    result = {"skills": [], "n": 1}
    assert conn.send_answer(3, result) == conn.send_response(3, result)
    encoded = encode_result(result)
    assert conn.send_answer("a", encoded) == conn.send_response("a", result)
    error = ErrorObject(code=-32602, message="No skill", data={"uri": "x"})
    assert conn.send_answer(3, error) == conn.send_error(3, -32602, "No skill", {"uri": "x"})
    assert json.loads(conn.send_answer(3, error)) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32602, "message": "No skill", "data": {"uri": "x"}},
    }
    assert ErrorObject(code=1, message="m").to_json() == {"code": 1, "message": "m"}


@pytest.mark.parametrize("answer", [None, [1], "text", 5])
def test_send_answer_refuses_what_is_not_an_answer(answer: Any) -> None:
    with pytest.raises(LocalProtocolError) as info:
        JsonRpcConnection().send_answer(1, answer)
    assert info.value.kind is JsonRpcErrorKind.INVALID_ARGUMENT


def test_send_answer_checks_the_id_and_the_size() -> None:
    conn = JsonRpcConnection(max_message_size=1024)
    answers: list[Answer] = [{}, encode_result({}), ErrorObject(code=1, message="m")]
    for answer in answers:
        with pytest.raises(LocalProtocolError) as info:
            conn.send_answer(True, answer)
        assert info.value.kind is JsonRpcErrorKind.INVALID_ARGUMENT
    for big in ({"x": "y" * 2000}, encode_result({"x": "y" * 2000})):
        with pytest.raises(LocalProtocolError) as info:
            conn.send_answer(1, big)
        assert info.value.kind is JsonRpcErrorKind.MESSAGE_TOO_LARGE
    # Exactly at the limit is fine, one byte more is not: the newline is not counted.
    fill = 1024 - len(conn.send_answer(1, {"x": ""})) + 1
    assert len(conn.send_answer(1, encode_result({"x": "y" * fill}))) == 1025
    with pytest.raises(LocalProtocolError):
        conn.send_answer(1, encode_result({"x": "y" * (fill + 1)}))


@pytest.mark.parametrize(
    "fields", [{"code": "1", "message": "m"}, {"code": True, "message": "m"}, {"code": 1}]
)
def test_error_objects_check_their_fields(fields: dict[str, Any]) -> None:
    fields.setdefault("message", 5)
    with pytest.raises(LocalProtocolError) as info:
        ErrorObject(**fields)
    assert info.value.kind is JsonRpcErrorKind.INVALID_ARGUMENT


# --- a large string spliced into a result (what every resources/read answer is) ------------------

JSON_TEXT = st.text(
    alphabet=st.sampled_from(["a", "é", '"', "\\", "\n", "\x00", "\x85", "\u2028", "\u2029", "😀"]),
    max_size=30,
)


@settings(deadline=None, max_examples=300)
@given(
    value=JSON_TEXT,
    other=JSON_TEXT,
    member=st.sampled_from(["text", "blob", 'a"b']),
    step=st.sampled_from([1, 2, 3, 7, 1 << 18]),
)
def test_a_spliced_result_is_the_encoded_result(
    value: str, other: str, member: str, step: int
) -> None:
    """Whatever the content and however it is cut into steps, the bytes are encode_result's."""
    holder: dict[str, Any] = {"uri": f'{other}"{member}":""', member: value, "z": other}
    result = {"contents": [holder], "_meta": {"k": f'"{member}":""'}}
    expected = encode_result(json.loads(json.dumps(result)))
    with patch.object(encode_module, "_SPLICE_STEP", step):
        spliced = encode_spliced(result, holder, member)
    assert spliced.json == expected.json
    assert holder[member] == ""  # taken out, so that the caller holds no copy


@pytest.mark.parametrize(
    ("holder", "twice"),
    [({"text": 5}, False), ({"blob": "x"}, False), ({"text": "x"}, True)],
)
def test_a_splice_needs_exactly_one_string_member(holder: dict[str, Any], twice: bool) -> None:
    result: dict[str, Any] = {"contents": [holder]}
    if twice:
        result["again"] = {"text": ""}
    with pytest.raises(LocalProtocolError) as info:
        encode_spliced(result, holder, "text")
    assert info.value.kind is JsonRpcErrorKind.NOT_SERIALIZABLE
    lone: dict[str, Any] = {"text": "\ud800"}
    with pytest.raises(LocalProtocolError, match="surrogate"):
        encode_spliced({"h": lone}, lone, "text")
