"""The one request path: ``answer(method, params)``, its read cache, deferred reads, and the stream.

``ServerStream`` writes, for any stream of messages, exactly the responses ``handle`` gives for
each message on its own; encoded results reused for unchanged files never hide an edit or
another era; a read deferred for a worker thread gives the bytes an inline read gives; and the
stream holds back-pressure: one batch of small answers, or one large answer, per ``next_output``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from server_helpers import KEY, legacy_request, request, spec_files
from test_server_hypothesis import messages

from skills_core.adapters import (
    FINISHED,
    OUTPUT_BATCH,
    PendingOutput,
    ServerStream,
)
from skills_core.errors import LocalProtocolError
from skills_core.jsonrpc import (
    NEED_DATA,
    EncodedResult,
    ErrorObject,
    JSONObject,
    JsonRpcConnection,
    JsonRpcErrorKind,
    encode_result,
)
from skills_core.messages import Era, complete_result, encode_resource_contents
from skills_core.server import (
    DEFAULT_SERVER_INFO,
    MemorySource,
    PendingRead,
    ServerOptions,
    SkillsServer,
    mime_type_for,
)

READ = "skill://pdf-processing/templates/invoice.md"
SKILL = "skill://pdf-processing/SKILL.md"
#: The params of a modern resources/read of READ.
READ_PARAMS = request("resources/read", {"uri": READ})["params"]
BIG = "skill://pdf-processing/big.md"


def make_server(files: dict[str, bytes] | None = None) -> SkillsServer:
    return SkillsServer(
        MemorySource(files or spec_files()), cursor_key=KEY, options=ServerOptions(page_size=1)
    )


def lines(*messages: object) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def answers(data: bytes) -> list[Any]:
    return [json.loads(line) for line in data.splitlines()]


def drain(stream: ServerStream, data: bytes = b"") -> bytes:
    """Feed ``data`` and collect everything the stream writes until it needs more input."""
    stream.receive_data(data)
    out: list[bytes] = []
    while True:
        step = stream.next_output()
        if step is NEED_DATA or step is FINISHED:
            return b"".join(out)
        out.append(step.run() if isinstance(step, PendingOutput) else step)


def written(data: bytes, files: dict[str, bytes] | None = None, **stream: Any) -> bytes:
    return drain(ServerStream(make_server(files).connection(), **stream), data)


# --- the stream writes what handle() answers ------------------------------------------------------


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages, min_size=1, max_size=8))
# Requirement rows: ERR-08
def test_the_stream_writes_what_handle_answers_ERR_08(batch: list[dict[str, Any]]) -> None:
    try:
        data = b"".join(json.dumps(m, allow_nan=False).encode() + b"\n" for m in batch)
    except ValueError:  # an infinite float: no JSON text to send
        assume(False)
    # Twice over: the second pass answers reads from the cache.
    out = written(data + data, results_have_string_keys=True)
    connection = make_server().connection()
    expected = [connection.handle(json.loads(json.dumps(m))) for m in batch + batch]
    assert answers(out) == [response for response in expected if response is not None]


@pytest.mark.parametrize("request_id", [0, 7, -3, 2**70, "a", "", 'q"\\', "\u2028x\x85"])
def test_repeated_reads_are_identical_and_carry_their_ids(request_id: object) -> None:
    data = lines(
        request("resources/read", {"uri": READ}, request_id=request_id),
        request("resources/read", {"uri": READ}, request_id=request_id),
        request("resources/read", {"uri": SKILL}, request_id=request_id),
    )
    out = written(data)
    first, _, third = answers(out)
    assert out.splitlines()[0] == out.splitlines()[1]
    assert first["id"] == request_id
    assert first["result"]["contents"][0]["uri"] == READ
    assert third["result"]["contents"][0]["uri"] == SKILL


def test_eras_are_cached_apart() -> None:
    """A legacy read after a modern one (and back) has each era's own shape."""
    data = lines(
        request("resources/read", {"uri": READ}, request_id=1),
        {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "x"}},
        legacy_request("resources/read", {"uri": READ}, request_id=3),
        request("resources/read", {"uri": READ}, request_id=4),
    )
    modern, _, legacy, modern_again = answers(written(data))
    assert modern["result"]["resultType"] == "complete"
    assert "resultType" not in legacy["result"]
    assert "ttlMs" not in legacy["result"]
    assert modern_again["result"] == modern["result"]


def test_read_errors_through_the_stream() -> None:
    data = lines(
        request("resources/read", {"uri": "skill://pdf-processing/nope.md"}),
        request("resources/read", {"uri": "skill://pdf-processing/templates"}),
        request("resources/read", {"uri": "skill://pdf-processing"}),
        request("resources/read", {}),
        {"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": READ}},
        {"jsonrpc": "2.0", "id": 10, "method": "resources/read"},
        request("skills/nope"),
    )
    codes = [a["error"]["code"] for a in answers(written(data))]
    assert codes == [-32602, -32602, -32602, -32602, -32602, -32602, -32601]


def test_answer_is_the_one_path_and_returns_values() -> None:
    server = make_server()
    read = server.answer("resources/read", READ_PARAMS)
    assert type(read) is EncodedResult
    assert server.answer("resources/read", READ_PARAMS) is read  # the cached encoding
    listing: Any = server.answer("skills/list", request("skills/list")["params"])
    assert isinstance(listing, dict)
    assert listing["skills"][0]["uri"] == SKILL
    assert server.answer("skills/get", {"uri": SKILL}) == ErrorObject(
        code=-32602,
        message="Missing required request _meta: io.modelcontextprotocol/protocolVersion and "
        "io.modelcontextprotocol/clientCapabilities (or send initialize first for a 2025-11-25 "
        "session)",
    )
    assert server.answer("ping", None, legacy_version="2025-11-25") == {}


@pytest.mark.parametrize("params", [[1], "x", 3])
def test_answer_called_with_params_that_are_not_an_object_is_invalid_params(
    params: object,
) -> None:
    answer = make_server().connection().answer("resources/read", params)  # type: ignore[call-overload]
    assert answer == ErrorObject(code=-32602, message="params must be an object (named parameters)")


# --- the negotiated state -----------------------------------------------------------------------


def test_initialize_through_answer_records_the_version() -> None:
    server = make_server()
    connection = server.connection()
    result = connection.answer("initialize", {"protocolVersion": "2025-06-18"})
    assert isinstance(result, dict)
    assert result["protocolVersion"] == connection.legacy_version == "2025-06-18"
    assert connection.answer("ping", None) == {}
    # A failed initialize records nothing; the server's own answer() never records anything.
    fresh = server.connection()
    assert type(fresh.answer("initialize", {})) is ErrorObject
    assert fresh.legacy_version is None
    assert isinstance(server.answer("initialize", {"protocolVersion": "2025-11-25"}), dict)
    assert type(server.answer("ping", None)) is ErrorObject


def test_a_connection_restored_in_a_legacy_state_serves_without_initialize() -> None:
    """What an HTTP transport does per request of a legacy session."""
    server = make_server()
    connection = server.connection(legacy_version="2025-11-25")
    assert connection.legacy
    read = connection.answer("resources/read", {"uri": READ})
    assert type(read) is EncodedResult
    assert "resultType" not in json.loads(read.json)
    assert server.connection().answer("resources/read", {"uri": READ}) == ErrorObject(
        code=-32602,
        message="Missing required request _meta: io.modelcontextprotocol/protocolVersion and "
        "io.modelcontextprotocol/clientCapabilities (or send initialize first for a 2025-11-25 "
        "session)",
    )


# --- the cache never hides a change ------------------------------------------------------------


def test_an_edited_file_is_served_as_it_is_now() -> None:
    server = make_server()
    stream = ServerStream(server.connection(), results_have_string_keys=True)
    before = answers(drain(stream, lines(request("resources/read", {"uri": READ}))))[0]
    source = server.source
    assert isinstance(source, MemorySource)
    source.write("pdf-processing/templates/invoice.md", b"# Edited\n")
    after = answers(drain(stream, lines(request("resources/read", {"uri": READ}))))[0]
    assert before["result"]["contents"][0]["text"] != "# Edited\n"
    assert after["result"]["contents"][0]["text"] == "# Edited\n"


def test_options_cannot_change_under_a_running_server() -> None:
    server = make_server()
    with pytest.raises(AttributeError):
        server.options = ServerOptions()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        server.options.page_size = 3  # type: ignore[misc]


def test_the_read_cache_is_bounded() -> None:
    """Files over 256 KiB are never cached; the cache holds at most 8 MiB of files and answers."""
    big = {f"pdf-processing/big/{i:02d}.md": bytes([65 + i % 26]) * (200 << 10) for i in range(60)}
    huge = {"pdf-processing/huge.md": b"h" * (300 << 10)}
    server = make_server({**spec_files(), **big, **huge})
    stream = ServerStream(server.connection(), results_have_string_keys=True)
    for path in [*big, *huge]:
        uri = "skill://" + path
        [answer] = answers(drain(stream, lines(request("resources/read", {"uri": uri}))))
        assert answer["result"]["contents"][0]["text"] == (big | huge)[path].decode()
    cache = server._reads
    assert cache._size <= 8 << 20
    assert cache._size == sum(len(c.data) + len(c.encoded) for c in cache.entries.values())
    cached = {uri for uri, _ in cache.entries}
    assert "skill://pdf-processing/huge.md" not in cached
    # Oldest out first: the last files read are the ones kept.
    assert "skill://pdf-processing/big/59.md" in cached
    assert "skill://pdf-processing/big/00.md" not in cached


# Requirement rows: ERR-04
def test_a_failure_inside_answer_is_internal_error_ERR_04(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = make_server()

    def broken(*args: object) -> bytes:
        raise RuntimeError("/secret/path exploded")

    monkeypatch.setattr(server.source, "read", broken)
    answer = server.connection().answer("resources/read", READ_PARAMS)
    assert answer == ErrorObject(code=-32603, message="Internal error")


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.binary(max_size=64)
    | st.text(
        alphabet=st.sampled_from(["a", "\n", "\x00", "\x85", "\u2028", "\u2029", "é", '"', "\\"]),
        max_size=40,
    ).map(str.encode),
    st.sampled_from(["f.md", "f.bin", "f.json", "F"]),
)
def test_any_file_content_reads_back_the_same_from_the_cache(content: bytes, name: str) -> None:
    """Text, blob, escapes and line separators: the answer is what the generic encoder writes
    (the content is spliced in), and the cached encoding is the file, every time."""
    files = {"s/SKILL.md": b"---\nname: s\ndescription: d\n---\n", f"s/{name}": content}
    read = request("resources/read", {"uri": f"skill://s/{name}"})
    out = written(lines(read, read, {**read, "id": "x"}), files)
    uri = f"skill://s/{name}"
    generic = complete_result(
        {"contents": [encode_resource_contents(uri, content, mime_type_for(name))]},
        era=Era.MODERN,
        cache=ServerOptions().cache_hint,
        server_info=DEFAULT_SERVER_INFO,
    )
    assert out.splitlines()[0] + b"\n" == JsonRpcConnection().send_response(1, generic)
    first, second, third = answers(out)
    assert first == second
    assert third["id"] == "x"
    item = first["result"]["contents"][0]
    got = item["text"].encode() if "text" in item else base64.b64decode(item["blob"])
    assert got == content


# --- deferred reads -------------------------------------------------------------------------------


def big_files(size: int = 300 << 10) -> dict[str, bytes]:
    return {**spec_files(), "pdf-processing/big.md": b"b" * size}


def test_a_large_listed_file_is_deferred_and_complete_gives_the_inline_bytes() -> None:
    server = make_server(big_files())
    params = request("resources/read", {"uri": BIG})["params"]
    pending = server.answer("resources/read", params, defer_reads_over=256 << 10)
    assert isinstance(pending, PendingRead)
    assert pending.uri == BIG
    assert repr(pending) == f"<PendingRead of {BIG!r}>"
    inline = server.answer("resources/read", params)
    done = pending.complete()
    assert type(done) is EncodedResult
    assert type(inline) is EncodedResult
    assert done.json == inline.json
    # Small files, files not listed and errors are answered at once.
    small = server.answer("resources/read", READ_PARAMS, defer_reads_over=256 << 10)
    assert type(small) is EncodedResult
    at_once = server.answer("resources/read", params, defer_reads_over=400 << 10)
    assert type(at_once) is EncodedResult
    assert at_once.json == inline.json
    missing = request("resources/read", {"uri": "skill://pdf-processing/nope.md"})["params"]
    assert type(server.answer("resources/read", missing, defer_reads_over=0)) is ErrorObject


def test_a_deferred_read_never_touches_the_cache() -> None:
    server = make_server(big_files(1000))
    params = request("resources/read", {"uri": BIG})["params"]
    pending = server.answer("resources/read", params, defer_reads_over=10)
    assert isinstance(pending, PendingRead)
    pending.complete()
    assert server._reads.entries == {}


def test_a_deferred_read_sees_the_file_as_it_is_when_completed() -> None:
    server = make_server(big_files())
    source = server.source
    assert isinstance(source, MemorySource)
    params = request("resources/read", {"uri": BIG})["params"]
    pending = server.answer("resources/read", params, defer_reads_over=1)
    assert isinstance(pending, PendingRead)
    source.delete("pdf-processing/big.md")
    assert pending.complete() == ErrorObject(
        code=-32602, message=f"No resource is served at {BIG}", data={"uri": BIG}
    )
    source.mkdir("pdf-processing/big.md")
    gone = pending.complete()
    assert type(gone) is ErrorObject
    assert "is a directory resource" in gone.message


# Requirement rows: ERR-04
def test_a_deferred_read_that_fails_is_internal_error_ERR_04(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = make_server(big_files())
    params = request("resources/read", {"uri": BIG})["params"]
    pending = server.answer("resources/read", params, defer_reads_over=1)
    assert isinstance(pending, PendingRead)

    def broken(*args: object) -> bytes:
        raise OSError(5, "Input/output error", "/secret/path")

    monkeypatch.setattr(server.source, "read", broken)
    assert pending.complete() == ErrorObject(code=-32603, message="Internal error")


def test_the_stream_keeps_the_order_around_a_deferred_read() -> None:
    stream = ServerStream(make_server(big_files()).connection(), defer_reads_over=256 << 10)
    stream.receive_data(
        lines(
            request("resources/read", {"uri": READ}, request_id=1),
            request("resources/read", {"uri": BIG}, request_id=2),
            request("ping", request_id=3),
        )
    )
    first = stream.next_output()
    assert isinstance(first, bytes)
    assert [a["id"] for a in answers(first)] == [1]
    second = stream.next_output()
    assert isinstance(second, PendingOutput)
    assert "big.md" in repr(second)
    [big] = answers(second.run())
    assert big["id"] == 2
    assert big["result"]["contents"][0]["text"] == "b" * (300 << 10)
    third = stream.next_output()
    assert isinstance(third, bytes)
    assert [a["id"] for a in answers(third)] == [3]
    assert stream.next_output() is NEED_DATA
    # A deferred read with nothing ready before it comes out at once.
    stream.receive_data(lines(request("resources/read", {"uri": BIG}, request_id=4)))
    fourth = stream.next_output()
    assert isinstance(fourth, PendingOutput)
    assert [a["id"] for a in answers(fourth.run())] == [4]
    assert stream.next_output() is NEED_DATA
    stream.receive_data(b"")
    assert stream.next_output() is FINISHED
    assert stream.next_output() is FINISHED


# --- back-pressure --------------------------------------------------------------------------------


def test_large_answers_come_out_one_at_a_time() -> None:
    """However many reads are buffered, one next_output() holds at most one large answer."""
    stream = ServerStream(make_server(big_files(100 << 10)).connection())
    stream.receive_data(
        b"".join(lines(request("resources/read", {"uri": BIG}, request_id=n)) for n in range(20))
    )
    for n in range(20):
        step = stream.next_output()
        assert isinstance(step, bytes)
        [answer] = answers(step)
        assert answer["id"] == n
    assert stream.next_output() is NEED_DATA


def test_small_answers_are_batched_up_to_the_batch_size() -> None:
    stream = ServerStream(make_server().connection())
    stream.receive_data(lines(*[request("ping", request_id=n) for n in range(2000)]))
    batches = []
    while isinstance(step := stream.next_output(), bytes):
        batches.append(step)
    assert step is NEED_DATA
    assert [a["id"] for batch in batches for a in answers(batch)] == list(range(2000))
    longest = max(len(line) + 1 for batch in batches for line in batch.splitlines())
    assert len(batches) > 1
    assert all(OUTPUT_BATCH <= len(batch) < OUTPUT_BATCH + longest for batch in batches[:-1])


# --- responders that misbehave, and what the stream never passes on -------------------------------


class Recording:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def answer(
        self, method: str, params: JSONObject | None, *, defer_reads_over: int | None
    ) -> Any:
        self.seen.append(method)
        if method == "boom":
            raise RuntimeError("boom")
        if method == "bad":
            return {"x": {1, 2}}
        if method == "none":
            return None
        return {}


def test_a_responder_that_raises_or_returns_junk_gets_32603_with_the_id() -> None:
    responder = Recording()
    out = drain(
        ServerStream(responder),
        lines(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
            {"jsonrpc": "2.0", "id": 5, "result": {}},
            request("boom", request_id="r1"),
            request("bad", request_id="r2"),
            request("none", request_id="r3"),
            request("ping", request_id="r4"),
        ),
    )
    assert responder.seen == ["boom", "bad", "none", "ping"]  # requests only
    assert answers(out) == [
        {"jsonrpc": "2.0", "id": "r1", "error": {"code": -32603, "message": "Internal error"}},
        {
            "jsonrpc": "2.0",
            "id": "r2",
            "error": {"code": -32603, "message": "Internal error: unencodable result"},
        },
        {
            "jsonrpc": "2.0",
            "id": "r3",
            "error": {"code": -32603, "message": "Internal error: unencodable result"},
        },
        {"jsonrpc": "2.0", "id": "r4", "result": {}},
    ]


def test_an_over_cap_read_becomes_internal_error() -> None:
    files = {**spec_files(), "pdf-processing/k.md": b"k" * 4000}
    stream = ServerStream(make_server(files).connection(), max_message_size=2048)
    [answer] = answers(
        drain(stream, lines(request("resources/read", {"uri": "skill://pdf-processing/k.md"})))
    )
    assert answer["error"] == {"code": -32603, "message": "Internal error: unencodable result"}


def test_the_stream_fed_byte_by_byte_writes_the_same() -> None:
    data = (
        lines(
            request("resources/read", {"uri": READ}, request_id=1),
            request("skills/list", request_id=2),
            {"jsonrpc": "2.0", "method": "x", "params": [1]},
        )
        + b"not json\n"
        + lines(request("resources/read", {"uri": READ}, request_id=3))
    )
    whole = written(data)
    stream = ServerStream(make_server().connection())
    pieces = b"".join(drain(stream, data[i : i + 1]) for i in range(len(data)))
    assert pieces == whole
    assert [a["id"] for a in answers(whole)] == [1, 2, None, 3]


# --- EncodedResult -------------------------------------------------------------------------------

RESULT = {"contents": [{"uri": READ, "text": 'a\u2028b\x85c "q" \\ é'}], "n": 1.5, "t": True}


@pytest.mark.parametrize("request_id", [0, 1, -1, 2**64, "", "id", '"', "\\", "\u2029", "é"])
def test_encoded_results_give_the_same_bytes(request_id: int | str) -> None:
    conn = JsonRpcConnection()
    encoded = encode_result(RESULT)
    assert conn.send_response(request_id, encoded) == conn.send_response(request_id, RESULT)
    assert (
        encoded.json + b"\n"
        == conn.send_response(request_id, RESULT).split(b',"result":', 1)[1].removesuffix(b"}\n")
        + b"\n"
    )
    assert len(encoded) == len(encoded.json)
    assert b"\xe2\x80\xa8" not in encoded.json  # U+2028 is escaped, as on the normal path
    assert repr(encoded) == f"<EncodedResult of {len(encoded)} bytes>"


def test_encoded_results_are_checked_like_results() -> None:
    with pytest.raises(TypeError):
        EncodedResult()
    with pytest.raises(LocalProtocolError) as info:
        encode_result({"x": float("nan")})
    assert info.value.kind is JsonRpcErrorKind.NOT_SERIALIZABLE
    with pytest.raises(LocalProtocolError) as info:
        encode_result({1: "x"})  # type: ignore[dict-item]
    assert info.value.kind is JsonRpcErrorKind.NOT_SERIALIZABLE
    with pytest.raises(LocalProtocolError) as info:
        encode_result([1])  # type: ignore[arg-type]
    assert info.value.kind is JsonRpcErrorKind.INVALID_ARGUMENT
    conn = JsonRpcConnection(max_message_size=1024)
    with pytest.raises(LocalProtocolError) as info:
        conn.send_response(1, encode_result({"x": "y" * 2000}))
    assert info.value.kind is JsonRpcErrorKind.MESSAGE_TOO_LARGE
    with pytest.raises(LocalProtocolError) as info:
        conn.send_response(True, encode_result({}))
    assert info.value.kind is JsonRpcErrorKind.INVALID_ARGUMENT
    with pytest.raises(LocalProtocolError) as info:
        conn.send_response(1, ErrorObject(code=1, message="m"))  # type: ignore[arg-type]
    assert info.value.kind is JsonRpcErrorKind.INVALID_ARGUMENT


def test_an_id_too_long_to_write_is_refused_the_same_way() -> None:
    """A 5,000-digit integer id is past Python's int-to-text limit: a typed error either way."""
    conn = JsonRpcConnection()
    huge = 10**5000  # Python 3.11 refuses int-to-text past 4,300 digits
    results: list[dict[str, object] | EncodedResult] = [{}, encode_result({})]
    for result in results:
        with pytest.raises(LocalProtocolError) as info:
            conn.send_response(huge, result)
        assert info.value.kind is JsonRpcErrorKind.NOT_SERIALIZABLE
