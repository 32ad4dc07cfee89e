"""The client half of skills_core.http: headers, answers, URLs, eras, SSE (docs/requirements.md#http-client).

Every wire fixture is fed whole and one byte at a time; parsers and classifiers get hypothesis.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skills_core.errors import JsonRpcError, LocalProtocolError, RemoteProtocolError, TransportError
from skills_core.http.client import (
    Answered,
    BodyKind,
    Disposition,
    Failed,
    HttpStatusError,
    LegacySession,
    Noted,
    NoteKind,
    ReaderEvent,
    ResponseReader,
    bad_answer,
    check_session_id,
    message_headers,
    response_disposition,
    session_headers,
    status_error,
)
from skills_core.http.eras import (
    EraCache,
    ProbeVerdict,
    classify_probe,
    supported_version,
    with_protocol_version,
)
from skills_core.http.headers import (
    ACCEPT,
    check_custom_header,
    decode_header_value,
    encode_header_value,
)
from skills_core.http.sse import SseEvent, SseParser
from skills_core.http.urls import MAX_REDIRECTS, check_url, origin_of, redirect_target
from skills_core.jsonrpc import JsonRpcConnection, NotificationReceived
from skills_core.messages import Era, Implementation, request_meta

META = request_meta(Implementation(name="t", version="1"))


# --- header values (T26 value encoding) --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("skill://pdf-processing/SKILL.md", "skill://pdf-processing/SKILL.md"),
        ("resources/read", "resources/read"),
        ("tab\tinside", "=?base64?dGFiCWluc2lkZQ==?="),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("", "=?base64??="),
    ],
)
def test_header_value_encoding_matches_the_spec_table(value: str, encoded: str) -> None:
    """HTTP-31: Mcp-Name carries non-ASCII, controls, edge spaces and look-alikes as base64."""
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value


@given(st.text())
def test_header_values_round_trip_and_are_always_safe_ascii(value: str) -> None:
    try:
        encoded = encode_header_value(value)
    except LocalProtocolError:
        assert any(0xD800 <= ord(c) <= 0xDFFF for c in value)
        return
    assert all(" " <= c <= "~" for c in encoded)
    assert encoded == encoded.strip(" \t")
    assert encoded
    assert decode_header_value(encoded) == value


@pytest.mark.parametrize(
    "bad", ["=?base64?SGVsbG8?=", "=?base64?SGV%%G8=?=", "=?base64?/w==?=", "=?base64?SGVsbG9=?="]
)
def test_malformed_sentinels_are_refused(bad: str) -> None:
    assert decode_header_value(bad) is None


# --- headers of a POST -------------------------------------------------------------------------


def test_modern_request_headers_mirror_the_body() -> None:
    """HTTP-30, HTTP-31: Accept both types; version, method and name headers equal the body."""
    params = {"uri": "skill://acme/ünïcode/SKILL.md", "_meta": META}
    headers = dict(message_headers("resources/read", params, session=None))
    assert headers["Content-Type"] == "application/json"
    assert headers["Accept"] == ACCEPT == "application/json, text/event-stream"
    assert headers["MCP-Protocol-Version"] == "2026-07-28"
    assert headers["Mcp-Method"] == "resources/read"
    assert decode_header_value(headers["Mcp-Name"]) == params["uri"]
    assert headers["Mcp-Name"].startswith("=?base64?")


def test_modern_headers_never_carry_a_session_and_skills_methods_have_no_name() -> None:
    """HTTP-12 (client side), HTTP-20: no Mcp-Name for skills/*; no Mcp-Session-Id when modern."""
    session = LegacySession(protocol_version="2025-11-25", session_id="abc")
    headers = dict(
        message_headers("skills/get", {"uri": "skill://a/SKILL.md", "_meta": META}, session=session)
    )
    assert "Mcp-Name" not in headers
    assert "Mcp-Session-Id" not in headers
    assert headers["MCP-Protocol-Version"] == "2026-07-28"


def test_legacy_headers_carry_the_negotiated_version_and_session() -> None:
    """HTTP-37: the session id and negotiated version on every request; no modern headers."""
    session = LegacySession(protocol_version="2025-06-18", session_id="s-1")
    headers = dict(message_headers("skills/list", {}, session=session))
    assert headers["MCP-Protocol-Version"] == "2025-06-18"
    assert headers["Mcp-Session-Id"] == "s-1"
    assert "Mcp-Method" not in headers
    assert dict(session_headers(LegacySession(protocol_version="2025-11-25", session_id=None))) == {
        "MCP-Protocol-Version": "2025-11-25"
    }
    # initialize, before any session: neither header
    assert dict(message_headers("initialize", {"protocolVersion": "2025-11-25"}, session=None)) == {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
    }


@pytest.mark.parametrize("name", ["Authorization", "X-Api-Key", "x-tenant"])
def test_custom_headers_pass(name: str) -> None:
    assert check_custom_header(name, "  Bearer abc  ") == (name, "Bearer abc")


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("Mcp-Session-Id", "x", "set by the transport"),
        ("mcp-protocol-version", "x", "set by the transport"),
        ("Content-Length", "1", "set by the transport"),
        ("Host", "evil", "set by the transport"),
        ("Bad Name", "x", "not a valid HTTP field name"),
        ("", "x", "not a valid HTTP field name"),
        ("X-Token", "secret\r\nX-Injected: 1", "line break"),
        ("X-Token", "sécret", "non-ASCII"),
    ],
)
def test_reserved_or_malformed_custom_headers_are_refused_without_their_value(
    name: str, value: str, why: str
) -> None:
    """HTTP-40: reserved headers are not overridable; values never appear in a message."""
    with pytest.raises(LocalProtocolError, match=why) as info:
        check_custom_header(name, value)
    assert value.strip() not in info.value.message or not value.strip()


@pytest.mark.parametrize("good", ["a", "0b2f-e1", "!~" * 10])
def test_session_ids_of_visible_ascii_are_kept(good: str) -> None:
    assert check_session_id(good, label="s") == good


@pytest.mark.parametrize("bad", ["", "with space", "tab\there", "é", "x" * 1025])
def test_other_session_ids_are_protocol_errors(bad: str) -> None:
    """HTTP-23: a session id is visible ASCII 0x21-0x7E."""
    with pytest.raises(TransportError) as info:
        check_session_id(bad, label="s")
    assert info.value.kind == "protocol"


# --- response heads ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "content_type", "expects", "disposition"),
    [
        (200, "application/json", True, Disposition.READ_JSON),
        (200, "Application/JSON; charset=utf-8", True, Disposition.READ_JSON),
        (200, "text/event-stream", True, Disposition.READ_SSE),
        (201, "text/event-stream;charset=utf-8", True, Disposition.READ_SSE),
        (202, None, True, Disposition.BAD_ANSWER),
        (204, "application/json", True, Disposition.BAD_ANSWER),
        (200, "text/html", True, Disposition.BAD_ANSWER),
        (200, None, True, Disposition.BAD_ANSWER),
        (202, None, False, Disposition.ACCEPTED),
        (200, "text/html", False, Disposition.ACCEPTED),
        (307, None, True, Disposition.REDIRECT),
        (301, None, False, Disposition.REDIRECT),
        (400, "application/json", True, Disposition.READ_ERROR),
        (404, None, False, Disposition.READ_ERROR),
        (503, "text/html", True, Disposition.READ_ERROR),
        (101, None, True, Disposition.READ_ERROR),
    ],
)
def test_response_disposition(
    status: int, content_type: str | None, expects: bool, disposition: Disposition
) -> None:
    """HTTP-33: JSON or SSE for a request; 202 for a request and other types are errors."""
    assert response_disposition(status, content_type, expects_response=expects) is disposition


def test_bad_answers_name_what_was_wrong() -> None:
    error = bad_answer(202, None, method="skills/list", label="s")
    assert error.kind == "protocol"
    assert "HTTP 202 and no response" in error.message
    assert "text/html" in bad_answer(200, "text/html", method="m", label="s").message


# --- SSE -----------------------------------------------------------------------------------------


def feed_all(parser: SseParser, data: bytes, *, bytewise: bool) -> list[SseEvent]:
    if not bytewise:
        return parser.feed(data)
    return [event for i in range(len(data)) for event in parser.feed(data[i : i + 1])]


SSE_CASES = [
    (b"data: {}\n\n", [("message", b"{}")]),
    (b"data: {}\r\n\r\n", [("message", b"{}")]),
    (b"data: {}\r\rdata: []\r\r", [("message", b"{}"), ("message", b"[]")]),
    (b"\xef\xbb\xbfdata:x\n\n", [("message", b"x")]),
    (b": ping\n\ndata: a\ndata:b\n\n", [("message", b"a\nb")]),
    (b"event: message\nid: 7\nretry: 10\ndata: x\n\n", [("message", b"x")]),
    (b"event: endpoint\ndata: /x\n\n", [("endpoint", b"/x")]),
    (b"data:\n\nid: prime\ndata: \n\n", []),  # empty data: keep-alive / priming, skipped
    (b"data: cut short", []),  # unfinished at the end: discarded
    (b"data  : x\nfoo: bar\ndata\n\n", [("message", b"")][:0]),  # unknown fields ignored
    (b"data: a\r\n\ndata: b\n\r\n", [("message", b"a"), ("message", b"b")]),
]


@pytest.mark.parametrize(("stream", "expected"), SSE_CASES)
@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
def test_sse_parser(stream: bytes, expected: list[tuple[str, bytes]], bytewise: bool) -> None:
    """HTTP-33: LF/CR/CRLF, BOM, comments, multi-line data, empty events skipped."""
    events = feed_all(SseParser(), stream, bytewise=bytewise)
    assert [(e.event, e.data) for e in events] == expected


def test_sse_parser_keeps_id_and_retry() -> None:
    [event] = SseParser().feed(b"id: e-1\nretry: 1500\ndata: {}\n\n")
    assert (event.id, event.retry) == ("e-1", 1500)


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        (b"18446744073709551615", 18446744073709551615),  # the largest 64-bit value
        (b"18446744073709551616", 1500),  # one more: ignored, the earlier value stays
        (b"9" * 5000, 1500),  # past Python's 4,300-digit limit of int(): ignored, no ValueError
        (b"00000000000000000000001", 1500),  # more digits than 64 bits ever need
    ],
)
@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
def test_a_retry_too_large_for_64_bits_is_ignored(value: bytes, kept: int, bytewise: bool) -> None:
    stream = b"retry: 1500\nretry: " + value + b"\ndata: {}\n\n"
    [event] = feed_all(SseParser(), stream, bytewise=bytewise)
    assert event.retry == kept


@given(st.text("0123456789", min_size=1, max_size=6000))
def test_any_retry_of_digits_is_a_number_or_ignored(digits: str) -> None:
    [event] = SseParser().feed(b"retry: " + digits.encode() + b"\ndata: x\n\n")
    assert event.retry is None or event.retry == int(digits) < 1 << 64


@given(
    st.lists(
        st.binary(max_size=40).filter(lambda b: b"\r" not in b and b"\n" not in b), max_size=6
    ),
    st.sampled_from([b"\n", b"\r", b"\r\n"]),
    st.lists(st.integers(min_value=0, max_value=60), max_size=8),
)
def test_sse_chunking_never_changes_the_events(
    datas: list[bytes], eol: bytes, cuts: list[int]
) -> None:
    stream = b"".join(b"data:" + d + eol + eol for d in datas)
    whole = SseParser().feed(stream)
    parser = SseParser()
    pieces, last = [], 0
    for cut in sorted(min(c, len(stream)) for c in cuts):
        pieces.append(stream[last:cut])
        last = cut
    pieces.append(stream[last:])
    chunked = [event for piece in pieces for event in parser.feed(piece)]
    assert chunked == whole
    values = [d.removeprefix(b" ") for d in datas]  # one space after the colon is not data
    assert [e.data for e in whole] == [v for v in values if v]


@given(st.binary(max_size=300))
def test_sse_parser_only_raises_typed_errors(junk: bytes) -> None:
    kind = None
    try:
        SseParser(max_event_size=64).feed(junk)
    except RemoteProtocolError as exc:
        kind = exc.kind
    assert kind in (None, "sse-too-large", "sse-encoding")


def test_sse_bounds_an_event_and_a_line() -> None:
    with pytest.raises(RemoteProtocolError, match="data is larger"):
        SseParser(max_event_size=10).feed(b"data: 123456\ndata: 78901\n")
    parser = SseParser(max_event_size=10)
    parser.feed(b"data: 0123456789")  # no line end ever comes: 16 bytes held
    with pytest.raises(RemoteProtocolError, match="line is longer"):
        parser.feed(b"0123456789!")  # 27 bytes: past 10 + 16


# --- response bodies ---------------------------------------------------------------------------


def new_request(conn: JsonRpcConnection, method: str = "skills/list") -> int:
    request_id, _ = conn.send_request(method, {})
    return request_id


def read(kind: BodyKind, body: bytes, *, bytewise: bool, max_size: int = 4096) -> list[ReaderEvent]:
    conn = JsonRpcConnection(max_message_size=max_size)
    request_id = new_request(conn)
    reader = ResponseReader(conn, request_id, method="skills/list", kind=kind, label="s")
    chunks: Iterator[bytes] = (
        (body[i : i + 1] for i in range(len(body))) if bytewise else iter([body])
    )
    out: list[ReaderEvent] = []
    for chunk in chunks:
        out.extend(reader.feed(chunk))
        if reader.done:
            return out
    return out + reader.end()


RESULT = b'{"jsonrpc":"2.0","id":1,"result":{"skills":[]}}'


@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
@pytest.mark.parametrize(
    "body",
    [RESULT, b'{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "result": {"skills": []}\n}\n'],
    ids=["compact", "pretty"],
)
def test_a_json_body_answers_the_request(body: bytes, bytewise: bool) -> None:
    assert read(BodyKind.JSON, body, bytewise=bytewise) == [Answered(result={"skills": []})]


@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
def test_an_sse_body_delivers_notifications_and_stops_at_the_response(bytewise: bool) -> None:
    """HTTP-33: notifications first, then the response; nothing after it is read."""
    note = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}'
    stream = (
        b": keep-alive\n\nevent: message\ndata: " + note + b"\n\n"
        b'data: {"jsonrpc":"2.0","id":"s","method":"sampling/createMessage"}\n\n'
        b"data: " + RESULT + b"\n\ndata: this is never read\n\n"
    )
    events = read(BodyKind.SSE, stream, bytewise=bytewise)
    assert events == [
        NotificationReceived(method="notifications/progress", params={"progress": 1}),
        Noted(
            kind=NoteKind.REQUEST,
            message="ignored a request ('sampling/createMessage') sent on a response stream",
        ),
        Answered(result={"skills": []}),
    ]


@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
def test_what_is_skipped_is_noted_by_kind_in_a_bounded_line(bytewise: bool) -> None:
    """Each skipped thing is a Noted of its kind (a client counts them); server text is cut."""
    long = "x" * 100_000
    stream = (
        (
            f"event: {long}\ndata: {{}}\n\n"
            f'data: {{"jsonrpc":"2.0","id":"r","method":"{long}"}}\n\n'
            f'data: {{"jsonrpc":"2.0","id":"{long}","result":{{}}}}\n\n'
            'data: {"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"m"}}\n\n'
        ).encode()
        + b"data: "
        + RESULT
        + b"\n\n"
    )
    events = read(BodyKind.SSE, stream, bytewise=bytewise, max_size=1 << 20)
    assert events[-1] == Answered(result={"skills": []})
    notes = events[:-1]
    assert all(isinstance(n, Noted) for n in notes), notes
    assert [n.kind for n in notes if isinstance(n, Noted)] == [
        NoteKind.OTHER_EVENT,
        NoteKind.REQUEST,
        NoteKind.OTHER_RESPONSE,
        NoteKind.OTHER_RESPONSE,
    ]
    messages = [n.message for n in notes if isinstance(n, Noted)]
    assert messages[0] == f"skipped an event of type '{'x' * 56}..."
    assert messages[3] == "ignored a response to another request (9)"
    assert all(len(m) < 120 for m in messages), messages


@pytest.mark.parametrize(
    ("kind", "body", "kind_of_error", "text"),
    [
        (BodyKind.JSON, b"not json", "protocol", "not valid JSON"),
        (BodyKind.JSON, b'{"a":\n"b\nc"}', "protocol", "not JSON"),
        (
            BodyKind.JSON,
            b'{"jsonrpc":"2.0","method":"notifications/x"}',
            "protocol",
            "not its response",
        ),
        (BodyKind.JSON, b'{"jsonrpc":"2.0","id":9,"result":{}}', "protocol", "not its response"),
        (BodyKind.JSON, b'[{"jsonrpc":"2.0","id":1,"result":{}}]', "protocol", "batch"),
        (BodyKind.JSON, b'{"jsonrpc":"2.0","id":1,"result":7}', "protocol", "broke JSON-RPC"),
        (BodyKind.JSON, b"x" * 5000, "protocol", "larger than 4096"),
        (BodyKind.SSE, b"data: " + RESULT, "closed", "before sending its response"),
        (BodyKind.SSE, b"data: nope\n\n", "protocol", "broke JSON-RPC"),
        (BodyKind.SSE, b"data: " + b"x" * 5000, "protocol", "longer than 4096"),
        (BodyKind.SSE, b": ping\n\n" * 1100, "protocol", "more than 8192 bytes"),
        (BodyKind.SSE, b"event: \xff\ndata: x\n\n", "protocol", "not UTF-8"),
        (BodyKind.JSON, b"[" * 1500 + b"\n" + b"]" * 1500, "protocol", "JSON nested too deeply"),
        (
            BodyKind.SSE,
            b"data: " + b"[" * 1500 + b"\ndata: " + b"]" * 1500 + b"\n\n",
            "protocol",
            "JSON nested too deeply",
        ),
    ],
)
@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
def test_broken_bodies_fail_the_request_with_a_typed_error(
    kind: BodyKind, body: bytes, kind_of_error: str, text: str, bytewise: bool
) -> None:
    """A hostile server's body ends in a TransportError, as over stdio (bounded: 2x the cap)."""
    events = read(kind, body, bytewise=bytewise)
    failures = [e for e in events if isinstance(e, Failed)]
    assert len(failures) == 1, events
    error = failures[0].error
    assert isinstance(error, TransportError)
    assert error.kind == kind_of_error
    assert text in error.message


def test_an_error_response_and_an_id_null_error_answer_the_request() -> None:
    """HTTP-34: an id-null error is re-keyed to the request."""
    for body in (
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown skill"}}',
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"unknown skill"}}',
    ):
        [event] = read(BodyKind.JSON, body, bytewise=False)
        assert isinstance(event, Failed)
        assert isinstance(event.error, JsonRpcError)
        assert event.error.rpc_code == -32602
        assert "unknown skill" in event.error.message


@given(st.binary(max_size=200), st.sampled_from(list(BodyKind)))
def test_any_body_ends_in_exactly_one_answer_or_failure(body: bytes, kind: BodyKind) -> None:
    events = read(kind, body, bytewise=False, max_size=1024)
    final = [e for e in events if isinstance(e, Answered | Failed)]
    assert len(final) == 1
    if isinstance(final[0], Failed):
        assert isinstance(final[0].error, TransportError | JsonRpcError)


# --- status errors -------------------------------------------------------------------------------


def test_status_errors_surface_json_rpc_bodies() -> None:
    """HTTP-34: a 4xx body holding a JSON-RPC error is that error (id null re-keyed)."""
    conn = JsonRpcConnection()
    new_request(conn)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32022, "message": "no", "data": {"supported": ["x"]}},
        }
    ).encode()
    error = status_error(
        400, body, connection=conn, content_type="application/json", method="m", label="s"
    )
    assert isinstance(error, JsonRpcError)
    assert (error.rpc_code, error.data) == (-32022, {"supported": ["x"]})
    assert "HTTP 400 and error -32022: no" in error.message


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"", None),
        (b"<html>gone</html>", "text/html"),
        (b"{not json", "application/json"),
        (b'{"error":"x"}', "application/json"),
        (b"[" * 30_000 + b"\n" + b"]" * 30_000, "application/json"),
    ],
)
def test_status_errors_without_json_rpc_are_http_status_errors(
    body: bytes, content_type: str | None
) -> None:
    error = status_error(
        404,
        body,
        connection=JsonRpcConnection(),
        content_type=content_type,
        method="m",
        label="s",
        reason="Not Found",
    )
    assert isinstance(error, HttpStatusError)
    assert error.status == 404
    assert error.kind == "http-status"
    assert "HTTP 404 Not Found" in error.message
    assert len(error.message) < 300


def test_a_long_reason_phrase_is_cut() -> None:
    error = status_error(
        400,
        b"",
        connection=JsonRpcConnection(),
        content_type=None,
        method="m",
        label="s",
        reason="R" * 100_000,
    )
    assert error.message == f"server 's' answered m with HTTP 400 {'R' * 57}..."


# --- redirects and origins ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("http://Example.com/mcp", "http://example.com:80"),
        ("https://example.com:443/x?y#z", "https://example.com:443"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://[::1]:9/mcp", "http://[::1]:9"),
        ("http://h:0/mcp", "http://h:0"),  # port 0 is not the default port
    ],
)
def test_origins(url: str, origin: str) -> None:
    assert origin_of(url) == origin


@pytest.mark.parametrize(
    "bad",
    [
        "ftp://x/",
        "/mcp",
        "http://",
        "http://h:99999/",
        "skill://a/b",
        "http://h/a\tb",  # httpx2 refuses every ASCII control in a URL
        "http://h/\x7f",
        "http://h/" + "a" * 65_536,  # httpx2's length limit
    ],
)
def test_urls_that_are_not_http_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - several causes, one type
        check_url(bad)


def test_credentials_in_urls_are_refused_without_repeating_them() -> None:
    """HTTP-40: credentials never in the URL."""
    with pytest.raises(ValueError, match="credentials") as info:
        check_url("https://user:hunter2@example.com/mcp")
    assert "hunter2" not in str(info.value)


def test_same_origin_307_and_308_are_followed() -> None:
    """HTTP-41: 307/308 keep method and body; relative Locations resolve."""
    assert (
        redirect_target("http://h:1/mcp", 307, "/v2/mcp", hops=0, label="s") == "http://h:1/v2/mcp"
    )
    assert (
        redirect_target("http://h/mcp", 308, "http://H:80/x", hops=MAX_REDIRECTS - 1, label="s")
        == "http://H:80/x"
    )


@pytest.mark.parametrize(
    ("status", "location", "hops", "text"),
    [
        (307, "http://evil.example/mcp", 0, "another origin ('http://evil.example:80')"),
        (308, "https://h/mcp", 0, "another origin"),
        (307, "http://h:2/mcp", 0, "another origin"),
        (307, "file:///etc/passwd", 0, "not http(s)"),
        (301, "/x", 0, "turn the POST into a GET"),
        (302, "/x", 0, "turn the POST into a GET"),
        (303, "/x", 0, "turn the POST into a GET"),
        (300, "/x", 0, "does not follow"),
        (307, None, 0, "without a Location"),
        (307, "/x", MAX_REDIRECTS, "more than 5 times"),
        (307, "/mcp\x7f", 0, "Location is not a URL"),
        (307, "/a\tb", 0, "Location is not a URL"),
        (307, "http://[::1:P/mcp", 0, "Location is not a URL"),
        (307, "http://h:99999/mcp", 0, "Location is not a URL"),
        (307, "http://h:8x/mcp", 0, "Location is not a URL"),
        (307, "/" + "a" * 65_536, 0, "Location is not a URL"),
        (307, "a" * 65_530, 0, "Location is not a URL"),  # a target longer than 65,536
        (307, "http://h:0/mcp", 0, "another origin ('http://h:0')"),
        (308, "http://user:pw@h/mcp", 0, "with credentials in it"),
        (308, "http://evil\\@h/mcp", 0, "with credentials in it"),
    ],
)
def test_other_redirects_are_refused(
    status: int, location: str | None, hops: int, text: str
) -> None:
    """HTTP-41: never another origin (so no credential crosses), never 301/302/303 for a POST."""
    with pytest.raises(TransportError, match=re.escape(text)) as info:
        redirect_target("http://h/mcp?token=secret", status, location, hops=hops, label="s")
    assert info.value.kind == "redirect"
    assert "secret" not in info.value.message


# --- eras ----------------------------------------------------------------------------------------


def test_supported_version_picks_ours() -> None:
    """HTTP-35."""
    assert supported_version({"supported": ["2099-01-01", "2026-07-28"]}) == "2026-07-28"
    assert supported_version({"supported": ["2025-11-25"]}) is None
    assert supported_version({"supported": "2026-07-28"}) is None
    assert supported_version(None) is None
    params = with_protocol_version({"uri": "u", "_meta": META}, "2099-01-01")
    assert params["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2099-01-01"  # type: ignore[index]
    assert META["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"  # the original is intact


def rpc(code: int, data: object = None) -> JsonRpcError:
    return JsonRpcError("x", rpc_code=code, method="server/discover", data=data)


@pytest.mark.parametrize(
    ("status", "result", "error", "verdict"),
    [
        (200, {"supportedVersions": ["2026-07-28"], "capabilities": {}}, None, ProbeVerdict.MODERN),
        (200, {"supportedVersions": ["2099-01-01"]}, None, ProbeVerdict.LEGACY),
        (200, {"nothing": 1}, None, ProbeVerdict.LEGACY),
        (200, None, rpc(-32601), ProbeVerdict.LEGACY),
        (400, None, rpc(-32600), ProbeVerdict.LEGACY),
        (404, None, rpc(-32001), ProbeVerdict.LEGACY),
        (400, None, rpc(-32022, {"supported": ["2025-11-25"]}), ProbeVerdict.LEGACY),
        (400, None, rpc(-32022, {"supported": ["2026-07-28"]}), ProbeVerdict.ERROR),
        (400, None, rpc(-32022, {"supported": ["2099-01-01"]}), ProbeVerdict.ERROR),
        (400, None, rpc(-32022, {}), ProbeVerdict.LEGACY),
        (400, None, HttpStatusError("x", status=400), ProbeVerdict.LEGACY),
        (404, None, HttpStatusError("x", status=404), ProbeVerdict.LEGACY),
        (405, None, HttpStatusError("x", status=405), ProbeVerdict.LEGACY),
        (401, None, HttpStatusError("x", status=401), ProbeVerdict.ERROR),
        (403, None, rpc(-32601), ProbeVerdict.ERROR),
        (500, None, rpc(-32603), ProbeVerdict.ERROR),
        (502, None, HttpStatusError("x", status=502), ProbeVerdict.ERROR),
        (406, None, HttpStatusError("x", status=406), ProbeVerdict.ERROR),
        (200, None, TransportError("x", kind="protocol"), ProbeVerdict.ERROR),
    ],
)
def test_classify_probe(
    status: int, result: dict[str, object] | None, error: Exception | None, verdict: ProbeVerdict
) -> None:
    """HTTP-36: result or -32022 -> modern; 400/404/405 bodies -> legacy; 401/403/5xx -> error."""
    assert classify_probe(status, result=result, error=error) is verdict  # type: ignore[arg-type]


def test_era_cache_is_per_origin() -> None:
    """HTTP-36: the verdict is cached per origin, not per URL."""
    cache = EraCache([("http://h:8000/mcp", Era.LEGACY)])
    assert cache.get("http://H:8000/other") is Era.LEGACY
    assert cache.get("http://h:8001/mcp") is None
    cache.put("https://h/mcp", Era.MODERN)
    assert cache.get("https://h:443/") is Era.MODERN


def test_base64_payload_is_standard_base64() -> None:
    value = "ä" * 50
    encoded = encode_header_value(value)
    assert base64.b64decode(encoded[9:-2]).decode() == value


@pytest.mark.parametrize(
    ("adapter", "loaded"),
    [
        (
            "skills_core.adapters.asgi",
            ["headers", "logs", "metrics", "options", "probes", "server", "session"],
        ),
        ("skills_core.adapters.http_client", ["client", "eras", "headers", "sse", "urls"]),
    ],
)
def test_each_half_of_the_http_package_loads_without_the_other(
    adapter: str, loaded: list[str]
) -> None:
    """skills_core.http exports every name lazily: the server app loads no client module, the
    client no server module (headers are shared)."""
    code = (
        f"import json, sys, {adapter}; "
        "print(json.dumps(sorted(m.rpartition('.')[2] for m in sys.modules "
        "if m.startswith('skills_core.http.'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == loaded
