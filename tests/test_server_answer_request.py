"""The fast path: ``ServerConnection.answer_request``, encoded results and the read cache.

``ServerLoop`` given a connection (a ``Responder``) must write byte for byte what it writes given
the connection's ``handle``, for any stream of messages; encoded results reused for unchanged files
must never hide an edit, a new server info or another era.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from server_helpers import KEY, legacy_request, request, spec_files
from test_server_hypothesis import messages

from skills_core.adapters._core import ServerLoop
from skills_core.errors import LocalProtocolError
from skills_core.jsonrpc import EncodedResult, JsonRpcConnection, JsonRpcErrorKind, encode_result
from skills_core.messages import Implementation
from skills_core.server import MemorySource, SkillsServer

READ = "skill://pdf-processing/templates/invoice.md"
SKILL = "skill://pdf-processing/SKILL.md"
#: The params of a modern resources/read of READ.
READ_PARAMS = request("resources/read", {"uri": READ})["params"]


def make_server(files: dict[str, bytes] | None = None) -> SkillsServer:
    return SkillsServer(MemorySource(files or spec_files()), cursor_key=KEY, page_size=1)


def lines(*messages: object) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def answers(data: bytes) -> list[Any]:
    return [json.loads(line) for line in data.splitlines()]


def both(data: bytes, files: dict[str, bytes] | None = None) -> tuple[bytes, bytes]:
    """What a loop around a connection and one around its ``handle`` write for ``data``."""
    fast = ServerLoop(make_server(files).connection(), results_have_string_keys=True)
    slow = ServerLoop(make_server(files).connection().handle)
    return fast.feed(data)[0], slow.feed(data)[0]


# --- equivalence -------------------------------------------------------------------------------


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages, min_size=1, max_size=8))
# Requirement rows: ERR-08
def test_responder_loop_writes_what_the_handler_loop_writes_ERR_08(
    batch: list[dict[str, Any]],
) -> None:
    try:
        data = b"".join(json.dumps(m, allow_nan=False).encode() + b"\n" for m in batch)
    except ValueError:  # an infinite float: no JSON text to send
        assume(False)
    # Twice over: the second pass answers reads from the cache.
    fast, slow = both(data + data)
    assert fast == slow


@pytest.mark.parametrize("request_id", [0, 7, -3, 2**70, "a", "", 'q"\\', "\u2028x\x85"])
def test_repeated_reads_are_identical_to_the_handler_path(request_id: object) -> None:
    data = lines(
        request("resources/read", {"uri": READ}, request_id=request_id),
        request("resources/read", {"uri": READ}, request_id=request_id),
        request("resources/read", {"uri": SKILL}, request_id=request_id),
    )
    fast, slow = both(data)
    assert fast == slow
    first, second, third = answers(fast)
    assert first == second
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
    fast, slow = both(data)
    assert fast == slow
    modern, _, legacy, modern_again = answers(fast)
    assert modern["result"]["resultType"] == "complete"
    assert "resultType" not in legacy["result"]
    assert "ttlMs" not in legacy["result"]
    assert modern_again["result"] == modern["result"]


def test_errors_through_the_fast_path_match() -> None:
    data = lines(
        request("resources/read", {"uri": "skill://pdf-processing/nope.md"}),
        request("resources/read", {"uri": "skill://pdf-processing/templates"}),
        request("resources/read", {}),
        {"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": READ}},
        {"jsonrpc": "2.0", "id": 10, "method": "resources/read"},
        request("skills/nope"),
    )
    fast, slow = both(data)
    assert fast == slow
    codes = [a["error"]["code"] for a in answers(fast)]
    assert codes == [-32602, -32602, -32602, -32602, -32602, -32601]


# --- the cache never hides a change ------------------------------------------------------------


def test_an_edited_file_is_served_as_it_is_now() -> None:
    server = make_server()
    loop = ServerLoop(server.connection(), results_have_string_keys=True)
    before = answers(loop.feed(lines(request("resources/read", {"uri": READ})))[0])[0]
    source = server.source
    assert isinstance(source, MemorySource)
    source.write("pdf-processing/templates/invoice.md", b"# Edited\n")
    after = answers(loop.feed(lines(request("resources/read", {"uri": READ})))[0])[0]
    assert before["result"]["contents"][0]["text"] != "# Edited\n"
    assert after["result"]["contents"][0]["text"] == "# Edited\n"


def test_a_new_server_info_is_not_hidden_by_the_cache() -> None:
    server = make_server()
    loop = ServerLoop(server.connection(), results_have_string_keys=True)
    loop.feed(lines(request("resources/read", {"uri": READ})))
    server.server_info = Implementation(name="renamed", version="2")
    [after] = answers(loop.feed(lines(request("resources/read", {"uri": READ})))[0])
    assert after["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "renamed"


def test_the_read_cache_is_bounded() -> None:
    """Files over 256 KiB are never cached; the cache holds at most 8 MiB of files and answers."""
    big = {f"pdf-processing/big/{i:02d}.md": bytes([65 + i % 26]) * (200 << 10) for i in range(60)}
    huge = {"pdf-processing/huge.md": b"h" * (300 << 10)}
    server = make_server({**spec_files(), **big, **huge})
    loop = ServerLoop(server.connection(), results_have_string_keys=True)
    for path in [*big, *huge]:
        uri = "skill://" + path
        [answer] = answers(loop.feed(lines(request("resources/read", {"uri": uri})))[0])
        assert answer["result"]["contents"][0]["text"] == (big | huge)[path].decode()
    cache = server._reads
    assert cache._size <= 8 << 20
    assert cache._size == sum(
        len(data) + len(encoded) for data, _, encoded in cache._entries.values()
    )
    cached = {uri for uri, _ in cache._entries}
    assert "skill://pdf-processing/huge.md" not in cached
    # Oldest out first: the last files read are the ones kept.
    assert "skill://pdf-processing/big/59.md" in cached
    assert "skill://pdf-processing/big/00.md" not in cached


def test_a_responder_that_raises_gets_internal_error_with_the_id() -> None:
    class Broken:
        def handle(self, message: dict[str, Any]) -> None:
            return None

        def answer_request(self, request_id: object, method: str, params: object) -> Any:
            raise RuntimeError("boom")

    out, _ = ServerLoop(Broken()).feed(lines(request("ping", request_id="r1")))
    [answer] = answers(out)
    assert answer == {
        "jsonrpc": "2.0",
        "id": "r1",
        "error": {"code": -32603, "message": "Internal error"},
    }


def test_notifications_still_reach_handle_through_a_responder() -> None:
    seen: list[str] = []

    class Recording:
        def handle(self, message: dict[str, Any]) -> None:
            seen.append(message["method"])

        def answer_request(self, request_id: object, method: str, params: object) -> Any:
            return {"jsonrpc": "2.0", "id": request_id, "result": {}}

    out, _ = ServerLoop(Recording()).feed(
        lines({"jsonrpc": "2.0", "method": "notifications/initialized"}, request("ping"))
    )
    assert seen == ["notifications/initialized"]
    assert answers(out) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


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


def test_an_over_cap_cached_read_becomes_internal_error() -> None:
    server = make_server({**spec_files(), "pdf-processing/k.md": b"k" * 4000})
    loop = ServerLoop(server.connection(), max_message_size=2048, results_have_string_keys=True)
    [answer] = answers(
        loop.feed(lines(request("resources/read", {"uri": "skill://pdf-processing/k.md"})))[0]
    )
    assert answer["error"] == {"code": -32603, "message": "Internal error: unencodable result"}


def test_the_fast_path_fed_byte_by_byte_writes_the_same() -> None:
    data = lines(
        request("resources/read", {"uri": READ}, request_id=1),
        request("skills/list", request_id=2),
        request("resources/read", {"uri": READ}, request_id=3),
    )
    whole = ServerLoop(make_server().connection()).feed(data)[0]
    loop = ServerLoop(make_server().connection())
    pieces = b"".join(loop.feed(data[i : i + 1])[0] for i in range(len(data)))
    assert pieces == whole
    assert [a["id"] for a in answers(whole)] == [1, 2, 3]


def test_answer_request_called_directly_with_bad_params_is_invalid_params() -> None:
    connection = make_server().connection()
    for params in ([1], "x", 3):
        answer = connection.answer_request(5, "resources/read", params)  # type: ignore[arg-type]
        assert answer == {
            "jsonrpc": "2.0",
            "id": 5,
            "error": {"code": -32602, "message": "params must be an object (named parameters)"},
        }


# Requirement rows: ERR-04
def test_a_failure_inside_answer_request_is_internal_error_ERR_04(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = make_server()

    def broken(*args: object) -> bytes:
        raise RuntimeError("/secret/path exploded")

    monkeypatch.setattr(server.source, "read", broken)
    answer = server.connection().answer_request(3, "resources/read", READ_PARAMS)
    assert answer == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32603, "message": "Internal error"},
    }


def test_a_result_that_cannot_be_pre_encoded_goes_the_normal_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If encode_result ever refused a result, the answer is the plain response, encoded as usual."""
    import skills_core.server.handler as handler_module

    def refuse(result: object, *, check_keys: bool = True) -> EncodedResult:
        raise LocalProtocolError("no", kind=JsonRpcErrorKind.NOT_SERIALIZABLE)

    monkeypatch.setattr(handler_module, "encode_result", refuse)
    data = lines(request("resources/read", {"uri": READ}), request("resources/read", {"uri": READ}))
    fast, slow = both(data)
    assert fast == slow
    assert [a["result"]["contents"][0]["uri"] for a in answers(fast)] == [READ, READ]
    server = make_server()
    answer = server.connection().answer_request(4, "resources/read", READ_PARAMS)
    assert isinstance(answer, dict)
    assert answer["id"] == 4
    assert server._reads._entries == {}


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.binary(max_size=64)
    | st.text(
        alphabet=st.sampled_from(["a", "\n", "\x00", "\x85", "\u2028", "\u2029", "é", '"', "\\"]),
        max_size=40,
    ).map(str.encode),
    st.sampled_from(["f.md", "f.bin", "f.json", "F"]),
)
def test_any_file_content_gives_the_same_bytes_both_ways(content: bytes, name: str) -> None:
    """Text, blob, escapes and line separators: the cached encoding is the normal encoding."""
    files = {"s/SKILL.md": b"---\nname: s\ndescription: d\n---\n", f"s/{name}": content}
    read = request("resources/read", {"uri": f"skill://s/{name}"})
    data = lines(read, read, {**read, "id": "x"})
    fast, slow = both(data, files)
    assert fast == slow
    first, second, third = answers(fast)
    assert first == second
    assert third["id"] == "x"


def test_an_id_too_long_to_write_is_refused_the_same_way() -> None:
    """A 5,000-digit integer id is past Python's int-to-text limit: a typed error either way."""
    conn = JsonRpcConnection()
    huge = 10**5000  # Python 3.11 refuses int-to-text past 4,300 digits
    results: list[dict[str, object] | EncodedResult] = [{}, encode_result({})]
    for result in results:
        with pytest.raises(LocalProtocolError) as info:
            conn.send_response(huge, result)
        assert info.value.kind is JsonRpcErrorKind.NOT_SERIALIZABLE
