"""The ASGI app in-process: every row of docs/requirements.md#http-ladder and
docs/requirements.md#http-legacy, sessions, security.

Driven by ``asgi_harness`` (a scope, receive and send, no server), so each case is exact: status,
JSON-RPC code, id, headers. The same cases through a real uvicorn are in ``test_http_uvicorn.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import MutableMapping
from dataclasses import replace
from typing import Any

import pytest
from asgi_harness import (
    INITIALIZE,
    LEGACY,
    META,
    MODERN,
    Response,
    acall,
    base_headers,
    call,
    legacy_body,
    modern_request,
    replace_header,
    scope,
)
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import CountingSource

from skills_core import spec_examples as ex
from skills_core.adapters.asgi import AppConfig, HttpOptions, SkillsApp, derive_key
from skills_core.errors import LocalProtocolError
from skills_core.http.headers import decode_header_value, encode_header_value
from skills_core.http.session import SessionCodec
from skills_core.server import ServerOptions
from skills_core.server.handler import SkillsServer

SESSION_KEY = b"s" * 32
SKILL_MD_URI = "skill://pdf-processing/SKILL.md"
FILES = {f"pdf-processing/{path}": data for path, data in ex.FILES.items()}


def make_app(options: HttpOptions | None = None, **server_settings: Any) -> SkillsApp:
    server = SkillsServer.from_files(
        FILES, cursor_key=b"c" * 32, options=ServerOptions(**server_settings)
    )
    return SkillsApp(server, session_key=SESSION_KEY, options=options)


@pytest.fixture(scope="module")
def app() -> SkillsApp:
    return make_app()


def post(app: SkillsApp, headers: list[tuple[str, str]], body: bytes, **kw: Any) -> Response:
    return call(app, "POST", "/mcp", headers, [body], **kw)


# --- modern: the happy path ----------------------------------------------------------------


def test_modern_request_is_answered_with_json_and_no_session(app: SkillsApp) -> None:
    """HTTP-17, HTTP-20, HTTP-21: discover answers 200 JSON; no Mcp-Session-Id on modern traffic."""
    headers, body = modern_request("server/discover", request_id="d-1")
    response = post(app, [*headers, ("mcp-session-id", "ignored")], body)
    assert response.status == 200
    message = response.json()
    assert message["id"] == "d-1"
    assert message["result"]["supportedVersions"] == [MODERN]
    assert "io.modelcontextprotocol/serverInfo" in message["result"]["_meta"]
    assert response.header("mcp-session-id") is None


def test_modern_read_whole_and_byte_by_byte(app: SkillsApp) -> None:
    """A body split into 1-byte chunks gets the same answer as the whole body."""
    headers, body = modern_request("resources/read", {"uri": SKILL_MD_URI})
    whole = post(app, headers, body)
    split = call(app, "POST", "/mcp", headers, [bytes([b]) for b in body])
    assert whole.status == split.status == 200
    assert whole.body == split.body
    assert whole.json()["result"]["contents"][0]["text"] == ex.SKILL_MD.decode()


def test_pretty_printed_body_is_one_message(app: SkillsApp) -> None:
    """Newlines are JSON whitespace in a body (one message per POST, not per line)."""
    headers, body = modern_request("skills/list")
    pretty = json.dumps(json.loads(body), indent=2).encode()
    assert b"\n" in pretty
    assert post(app, headers, pretty).json()["result"]["skills"][0]["uri"] == SKILL_MD_URI


def test_mcp_name_in_base64_form_is_decoded(app: SkillsApp) -> None:
    """HTTP-12: the =?base64?...?= form is decoded before comparing."""
    headers, body = modern_request("resources/read", {"uri": SKILL_MD_URI})
    forced = "=?base64?" + __import__("base64").b64encode(SKILL_MD_URI.encode()).decode() + "?="
    response = post(app, replace_header(headers, "mcp-name", forced), body)
    assert response.status == 200
    assert "result" in response.json()


def test_whitespace_around_routing_headers_is_trimmed(app: SkillsApp) -> None:
    headers, body = modern_request("skills/list")
    response = post(app, replace_header(headers, "mcp-method", "  skills/list\t"), body)
    assert response.status == 200


def test_mcp_name_is_not_required_for_skills_methods(app: SkillsApp) -> None:
    """HTTP-12: Mcp-Name is undefined for skills/* and resources/directory/read."""
    for method, params in (
        ("skills/get", {"uri": SKILL_MD_URI}),
        ("resources/directory/read", {"uri": "skill://pdf-processing"}),
    ):
        headers, body = modern_request(method, params)
        assert all(k != "mcp-name" for k, _ in headers)
        response = post(app, headers, body)
        assert response.status == 200, response.body
        assert "result" in response.json()


# --- docs/requirements.md#http-ladder, row by row ------------------------------------------


def _discover() -> tuple[list[tuple[str, str]], bytes]:
    return modern_request("server/discover", request_id=7)


def _read() -> tuple[list[tuple[str, str]], bytes]:
    return modern_request("resources/read", {"uri": SKILL_MD_URI}, request_id=7)


def _meta_without(key: str) -> dict[str, Any]:
    return {k: v for k, v in META.items() if k != key}


# (id, headers, body, status, JSON-RPC code or None, id echoed)
ROWS: list[tuple[str, list[tuple[str, str]], bytes, int, int | None, Any]] = []


def _row(  # noqa: PLR0917
    name: str,
    headers: list[tuple[str, str]],
    body: bytes,
    status: int,
    code: int | None = None,
    echoed: Any = "absent",
) -> None:
    ROWS.append((name, headers, body, status, code, echoed))


_h, _b = _discover()
# row 2: Host (HTTP-04)
_row("2-host-evil", replace_header(_h, "host", "evil.example.com"), _b, 421)
_row("2-host-missing", replace_header(_h, "host", None), _b, 421)
_row("2-host-twice", [*_h, ("host", "127.0.0.1:8000")], _b, 421)
_row("2-host-loopback-any-port", replace_header(_h, "host", "localhost:1"), _b, 200)
_row("2-host-ipv6", replace_header(_h, "host", "[::1]:9"), _b, 200)
# row 3: Origin (HTTP-03)
_row("3-origin-evil", [*_h, ("origin", "http://evil.example.com")], _b, 403)
_row("3-origin-null", [*_h, ("origin", "null")], _b, 403)
_row("3-origin-https-loopback", [*_h, ("origin", "https://localhost:3000")], _b, 403)
_row("3-origin-loopback", [*_h, ("origin", "http://localhost:3000")], _b, 200)
# row 4: declared size (HTTP-05)
_row("4-declared-too-large", [*_h, ("content-length", str(5 << 20))], _b, 413)
_row("4-length-not-a-number", [*_h, ("content-length", "12x")], _b, 400)
# row 6: Content-Type (HTTP-06)
_row("6-text-plain", replace_header(_h, "content-type", "text/plain"), _b, 415)
_row("6-missing", replace_header(_h, "content-type", None), _b, 415)
_row(
    "6-json-with-charset",
    replace_header(_h, "content-type", "Application/JSON; charset=utf-8"),
    _b,
    200,
)
_row("6-twice", [*_h, ("content-type", "application/json")], _b, 415)
# row 7: Accept (HTTP-06)
_row("7-json-only", replace_header(_h, "accept", "application/json"), _b, 406)
_row("7-sse-only", replace_header(_h, "accept", "text/event-stream"), _b, 406)
_row("7-html", replace_header(_h, "accept", "text/html"), _b, 406)
_row("7-star", replace_header(_h, "accept", "*/*"), _b, 200)
_row("7-wildcards", replace_header(_h, "accept", "application/*;q=0.9, text/*"), _b, 200)
_row("7-absent", replace_header(_h, "accept", None), _b, 200)
_row(
    "7-two-lines",
    [*replace_header(_h, "accept", "application/json"), ("accept", "text/event-stream")],
    _b,
    200,
)
# row 8: JSON (HTTP-07)
_row("8-bad-json", _h, b'{"jsonrpc":"2.0",', 400, -32700, None)
_row("8-not-utf8", _h, b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', 400, -32700, None)
_row("8-empty-body", _h, b"", 400, -32700, None)
_row("8-blank-body", _h, b" \r\n\t ", 400, -32700, None)
_row("8-two-messages", _h, _b + b"\n" + _b, 400, -32700, None)
_row("8-raw-newline-in-string", _h, b'{"jsonrpc":"2.0","id":1,"method":"a\nb"}', 400, -32700, None)
_row("8-duplicate-key", _h, b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', 400, -32700, None)
# row 9: envelope (HTTP-07)
_row("9-batch", _h, b"[" + _b + b"]", 400, -32600, None)
_row("9-response", _h, b'{"jsonrpc":"2.0","id":1,"result":{}}', 400, -32600, None)
_row("9-id-null", _h, b'{"jsonrpc":"2.0","id":null,"method":"server/discover"}', 400, -32600, None)
_row("9-not-an-object", _h, b'"hello"', 400, -32600, None)
# row 10: notifications (HTTP-08)
_row("10-notification", _h, legacy_body("notifications/message", {"_meta": META}, None), 202)
_row(
    "10-cancel",
    _h,
    legacy_body("notifications/cancelled", {"requestId": 1, "_meta": META}, None),
    202,
)
_row(
    "10-bad-cancel",
    _h,
    legacy_body("notifications/cancelled", {"_meta": META}, None),
    400,
    -32602,
    None,
)
# row 11: _meta (HTTP-09)
_row(
    "11-meta-missing",
    _h,
    json.dumps({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {}}).encode(),
    400,
    -32602,
    7,
)
for _key in (
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
):
    _mh, _mb = modern_request("server/discover", request_id=7, meta=_meta_without(_key))
    _row(f"11-meta-lacks-{_key.rpartition('/')[2]}", _mh, _mb, 400, -32602, 7)
_mh, _mb = modern_request(
    "server/discover", request_id=7, meta=_meta_without("io.modelcontextprotocol/clientInfo")
)
_row("11-client-info-optional", _mh, _mb, 200, None, 7)
_row(
    "11-params-missing",
    _h,
    json.dumps({"jsonrpc": "2.0", "id": 7, "method": "server/discover"}).encode(),
    400,
    -32602,
    7,
)
# Without the version header, a _meta holding the version's key is modern whatever the value
# (messages.request_era): refused as modern, not sent to the legacy rungs (no session: -32600).
_mh, _mb = modern_request(
    "server/discover", request_id=7, meta={**META, "io.modelcontextprotocol/protocolVersion": 5}
)
_row(
    "11-meta-version-not-a-string",
    replace_header(_mh, "mcp-protocol-version", None),
    _mb,
    400,
    -32602,
    7,
)
# row 12: version header (HTTP-10); checked before the version itself (CF)
_row(
    "12-version-header-missing",
    replace_header(_h, "mcp-protocol-version", None),
    _b,
    400,
    -32020,
    7,
)
_vh, _vb = modern_request(
    "server/discover",
    request_id=7,
    meta={**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"},
)
_row("12-header-2026-body-v999", _vh, _vb, 400, -32020, 7)
# row 13: Mcp-Method (HTTP-11)
_row("13-method-missing", replace_header(_h, "mcp-method", None), _b, 400, -32020, 7)
_row("13-method-other", replace_header(_h, "mcp-method", "skills/list"), _b, 400, -32020, 7)
_row("13-method-case", replace_header(_h, "mcp-method", "SERVER/DISCOVER"), _b, 400, -32020, 7)
# row 14: Mcp-Name (HTTP-12)
_rh, _rb = _read()
_row("14-name-missing", replace_header(_rh, "mcp-name", None), _rb, 400, -32020, 7)
_row("14-name-other", replace_header(_rh, "mcp-name", "skill://x/SKILL.md"), _rb, 400, -32020, 7)
_row("14-name-bad-base64", replace_header(_rh, "mcp-name", "=?base64?%%%?="), _rb, 400, -32020, 7)
_row(
    "14-name-encoded-form-of-other",
    replace_header(_rh, "mcp-name", "=?base64?eA==?="),
    _rb,
    400,
    -32020,
    7,
)
_row("14-name-read-ok", _rh, _rb, 200, None, 7)
# row 15: repeated routing headers
_row("15-method-twice", [*_h, ("mcp-method", "server/discover")], _b, 400, -32020, 7)
_row("15-version-twice", [*_h, ("mcp-protocol-version", MODERN)], _b, 400, -32020, 7)
_row("15-name-twice", [*_rh, ("mcp-name", SKILL_MD_URI)], _rb, 400, -32020, 7)
# row 16: unsupported version (HTTP-13)
_row("16-v999", replace_header(_vh, "mcp-protocol-version", "v999.0.0"), _vb, 400, -32022, 7)
# row 17: methods the modern era has not (HTTP-14)
for _method in (
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/list",
    "prompts/list",
    "unknown/method",
):
    _uh, _ub = modern_request(_method, request_id=7)
    _row(f"17-{_method}", _uh, _ub, 404, -32601, 7)
# row 19: a handler's params error is answered in-band
_gh, _gb = modern_request("skills/get", {"uri": "skill://nope/SKILL.md"}, request_id=7)
_row("19-unknown-skill", _gh, _gb, 200, -32602, 7)
_nh, _nb = modern_request("resources/read", {"uri": "skill://nope/x.md"}, request_id=7)
_row("19-unknown-resource", _nh, _nb, 200, -32602, 7)


@pytest.mark.parametrize(
    ("headers", "body", "status", "code", "echoed"),
    [pytest.param(*row[1:], id=row[0]) for row in ROWS],
)
def test_modern_validation_table(  # noqa: PLR0917
    app: SkillsApp,
    headers: list[tuple[str, str]],
    body: bytes,
    status: int,
    code: int | None,
    echoed: Any,
) -> None:
    """docs/requirements.md#http-ladder rows 2-19 (HTTP-03..HTTP-16): status, code, echoed id."""
    response = post(app, headers, body)
    assert response.status == status, response.body
    if status == 202:
        assert response.body == b""
        return
    if response.header("content-type") != "application/json":
        assert code is None
        assert response.body.endswith(b"\n")
        return
    message = response.json()
    assert response.error_code == code, message
    if echoed != "absent":
        assert message["id"] == echoed  # HTTP-16
    if code is not None:
        assert not -32099 <= code <= -32023  # never an undefined code of MCP's band
        assert code != -32002


@pytest.mark.parametrize("method", ["server/discover", "skills/list", "resources/read"])
def test_no_client_capability_is_ever_required_HTTP_15(app: SkillsApp, method: str) -> None:
    """HTTP-15: -32021 answers a request whose needed client capability is undeclared. A skills
    server needs none (SIL-28: not even the extension's declaration), so it never sends -32021:
    a client declaring nothing at all is answered."""
    params = {"uri": f"{SKILL_MD_URI}"} if method == "resources/read" else None
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {}}
    headers, body = modern_request(method, params, meta=meta)
    response = post(app, headers, body)
    assert response.status == 200, response.body
    assert "result" in response.json()


def test_authorization_is_never_echoed_or_forwarded_HTTP_42(app: SkillsApp) -> None:
    """HTTP-42: a client's token is the embedding app's business; the app never echoes it in a
    response (nor has anywhere to forward it: a skills server calls no other server)."""
    token = "Bearer s3cr3t-t0ken"
    for method in ("server/discover", "skills/list", "nope/unknown"):
        headers, body = modern_request(method)
        response = post(app, [*headers, ("authorization", token)], body)
        assert b"s3cr3t" not in response.body
        assert all(b"s3cr3t" not in value for _, value in response.headers)


def test_unsupported_version_data(app: SkillsApp) -> None:
    """HTTP-13: -32022 carries supported and requested."""
    headers, body = modern_request(
        "server/discover", meta={**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    )
    response = post(app, replace_header(headers, "mcp-protocol-version", "v999.0.0"), body)
    assert response.json()["error"]["data"] == {"supported": [MODERN], "requested": "v999.0.0"}


def test_unknown_resource_error_has_uri_data(app: SkillsApp) -> None:
    """sep-2164: -32602 with data.uri, never empty contents."""
    headers, body = modern_request("resources/read", {"uri": "skill://nope/x.md"})
    assert post(app, headers, body).json()["error"]["data"] == {"uri": "skill://nope/x.md"}


def test_undeclared_directory_read_is_404() -> None:
    """HTTP-14: resources/directory/read is not a method of a server that does not declare it."""
    app = make_app(directory_read=False)
    headers, body = modern_request("resources/directory/read", {"uri": "skill://pdf-processing"})
    response = post(app, headers, body)
    assert response.status == 404
    assert response.error_code == -32601


@pytest.mark.parametrize(
    ("method", "status", "allow"),
    [("GET", 405, "POST"), ("PUT", 405, "POST"), ("PATCH", 405, "POST"), ("HEAD", 405, "POST")],
)
def test_modern_non_post_is_405(app: SkillsApp, method: str, status: int, allow: str) -> None:
    """HTTP-02: non-POST on modern traffic is 405 with Allow."""
    headers = [*base_headers(), ("mcp-protocol-version", MODERN)]
    response = call(app, method, "/mcp", headers)
    assert response.status == status
    assert response.header("allow") == allow


@pytest.mark.parametrize("path", ["/", "/mcp/", "/MCP", "/mcp/x", "/other"])
def test_other_paths_are_404(app: SkillsApp, path: str) -> None:
    """HTTP-01."""
    headers, body = _discover()
    assert call(app, "POST", path, headers, [body]).status == 404


def test_root_path_of_a_mount_is_honoured() -> None:
    app = make_app(HttpOptions(path="/skills"))
    headers, body = _discover()
    assert call(app, "POST", "/api/skills", headers, [body], root_path="/api").status == 200
    assert call(app, "POST", "/skills", headers, [body]).status == 200
    assert call(app, "POST", "/api/mcp", headers, [body], root_path="/api").status == 404


# --- legacy (2025-11-25) -----------------------------------------------------------------------

SESSION_ID = re.compile(r"^[\x21-\x7E]+$")


def legacy_headers(
    session: str | None = None, version: str | None = LEGACY
) -> list[tuple[str, str]]:
    headers = base_headers()
    if version is not None:
        headers.append(("mcp-protocol-version", version))
    if session is not None:
        headers.append(("mcp-session-id", session))
    return headers


def open_session(app: SkillsApp, *, with_version_header: bool = False) -> str:
    response = post(
        app, legacy_headers(version=LEGACY if with_version_header else None), INITIALIZE
    )
    assert response.status == 200
    assert response.json()["result"]["protocolVersion"] == LEGACY
    session = response.header("mcp-session-id")
    assert session is not None
    return session


def test_legacy_session_lifecycle(app: SkillsApp) -> None:
    """HTTP-23, HTTP-29: initialize mints a visible-ASCII id; initialized is 202; answers in-band."""
    session = open_session(app)
    assert SESSION_ID.match(session)
    assert open_session(app) != session  # unpredictable: a new nonce each time
    assert (
        post(
            app, legacy_headers(session), legacy_body("notifications/initialized", None, None)
        ).status
        == 202
    )
    listed = post(app, legacy_headers(session), legacy_body("skills/list"))
    assert listed.status == 200
    result = listed.json()["result"]
    assert result["skills"][0]["uri"] == SKILL_MD_URI
    assert "resultType" not in result  # the legacy shape
    assert listed.header("mcp-session-id") is None
    error = post(
        app, legacy_headers(session), legacy_body("skills/get", {"uri": "skill://x/SKILL.md"})
    )
    assert error.status == 200  # HTTP-29: handler errors in-band
    assert error.error_code == -32602
    ping = post(app, legacy_headers(session, version=None), legacy_body("ping"))
    assert ping.json()["result"] == {}


def test_initialize_with_version_header_is_legacy(app: SkillsApp) -> None:
    """docs/requirements.md#http-client rule 7: initialize is accepted with or without
    MCP-Protocol-Version."""
    assert SESSION_ID.match(open_session(app, with_version_header=True))


def test_legacy_request_without_session_is_400(app: SkillsApp) -> None:
    """HTTP-24."""
    response = post(app, legacy_headers(), legacy_body("skills/list", request_id=3))
    assert response.status == 400
    assert response.json()["id"] == 3
    assert (
        post(app, legacy_headers(), legacy_body("notifications/initialized", None, None)).status
        == 400
    )


@pytest.mark.parametrize(
    "session",
    [
        "nope",
        "A" * 70,
        SessionCodec(b"x" * 32).mint(LEGACY, expires=2**40, nonce=b"n" * 16),  # another key
        SessionCodec(SESSION_KEY).mint(LEGACY, expires=1, nonce=b"n" * 16),  # expired
        SessionCodec(SESSION_KEY).mint(LEGACY, expires=2**40, nonce=b"n" * 16, principal="eve"),
    ],
    ids=["garbage", "shaped", "other-key", "expired", "other-principal"],
)
def test_unknown_session_is_404(app: SkillsApp, session: str) -> None:
    """HTTP-25: unknown, forged, expired or another principal's session id -> 404."""
    response = post(app, legacy_headers(session), legacy_body("skills/list"))
    assert response.status == 404


def test_tampered_session_is_404(app: SkillsApp) -> None:
    session = open_session(app)
    for index in range(len(session)):
        other = "B" if session[index] != "B" else "C"
        tampered = session[:index] + other + session[index + 1 :]
        assert post(app, legacy_headers(tampered), legacy_body("ping")).status == 404


def test_second_initialize_on_live_session_is_400(app: SkillsApp) -> None:
    session = open_session(app)
    response = post(app, legacy_headers(session), INITIALIZE)
    assert response.status == 400
    assert response.error_code == -32600


def test_legacy_version_header_must_be_the_sessions(app: SkillsApp) -> None:
    """HTTP-28: a bad MCP-Protocol-Version on legacy traffic is 400."""
    session = open_session(app)
    assert post(app, legacy_headers(session, "2025-06-18"), legacy_body("ping")).status == 400
    unsupported = post(app, legacy_headers(session, "2024-11-05"), legacy_body("ping"))
    assert unsupported.status == 400
    assert unsupported.error_code == -32022
    twice = [*legacy_headers(session), ("mcp-session-id", session)]
    assert post(app, twice, legacy_body("ping")).status == 400


def test_negotiated_older_version_is_kept() -> None:
    app = make_app()
    body = legacy_body("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    response = post(app, legacy_headers(version=None), body)
    assert response.json()["result"]["protocolVersion"] == "2025-06-18"
    session = response.header("mcp-session-id")
    assert session is not None
    assert post(app, legacy_headers(session, "2025-06-18"), legacy_body("ping")).status == 200
    assert post(app, legacy_headers(session, LEGACY), legacy_body("ping")).status == 400


def test_failed_initialize_opens_no_session(app: SkillsApp) -> None:
    response = post(app, legacy_headers(version=None), legacy_body("initialize", {}))
    assert response.status == 200
    assert response.error_code == -32602
    assert response.header("mcp-session-id") is None


def test_legacy_get_and_delete(app: SkillsApp) -> None:
    """HTTP-27: a session's GET is its event stream (PUSH-03; 406 without an SSE Accept, 404 for an
    unknown session, 405 without one); HTTP-26: DELETE is 405."""
    session = open_session(app)
    sse = replace_header(legacy_headers(session), "accept", "text/event-stream")
    sent: list[dict[str, Any]] = []

    async def stream() -> None:
        async def receive() -> dict[str, Any]:
            await asyncio.sleep(0.05)
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(dict(message))

        await app(scope("GET", "/mcp", sse), receive, send)

    asyncio.run(stream())
    assert sent[0]["status"] == 200
    assert (b"content-type", b"text/event-stream") in sent[0]["headers"]
    unknown = replace_header(sse, "mcp-session-id", "no-such-session")
    assert call(app, "GET", "/mcp", unknown).status == 404
    assert (
        call(app, "GET", "/mcp", [*base_headers(), ("accept", "text/event-stream")]).status == 405
    )
    html = replace_header(legacy_headers(session), "accept", "text/html")
    assert call(app, "GET", "/mcp", html).status == 406
    delete = call(app, "DELETE", "/mcp", legacy_headers(session))
    assert delete.status == 405
    assert delete.header("allow") == "POST"
    # The session is untouched: DELETE was refused, not half-done.
    assert post(app, legacy_headers(session), legacy_body("ping")).status == 200


def test_sessions_cross_apps_sharing_the_key() -> None:
    """Scale-out in-process: a session opened on one app works on another with the same key."""
    first, second = make_app(), make_app()
    session = open_session(first)
    assert post(second, legacy_headers(session), legacy_body("skills/list")).status == 200
    other = SkillsApp(first.server, session_key=b"o" * 32)
    assert post(other, legacy_headers(session), legacy_body("skills/list")).status == 404


def test_sessions_bound_to_the_principal() -> None:
    """docs/requirements.md#http-security, HTTP-42: sessions are not authentication: a session
    opened by one principal is unknown to another (404), and to a caller the embedding app did not
    authenticate."""
    app = make_app(HttpOptions(principal=lambda scope: scope.get("user")))

    def as_user(user: str | None, headers: list[tuple[str, str]], body: bytes) -> Response:
        return call(app, "POST", "/mcp", headers, [body], extra_scope={"user": user})

    session = as_user("alice", legacy_headers(version=None), INITIALIZE).header("mcp-session-id")
    assert session is not None
    assert as_user("alice", legacy_headers(session), legacy_body("ping")).status == 200
    assert as_user("bob", legacy_headers(session), legacy_body("ping")).status == 404
    assert as_user(None, legacy_headers(session), legacy_body("ping")).status == 404


def test_modern_body_without_header_routes_modern(app: SkillsApp) -> None:
    """docs/requirements.md#http-eras rule 2: no header, _meta protocolVersion present -> modern
    (row 12: -32020)."""
    headers, body = _discover()
    response = post(app, replace_header(headers, "mcp-protocol-version", None), body)
    assert response.status == 400
    assert response.error_code == -32020


# --- security and robustness ------------------------------------------------------------------


def test_chunked_body_over_the_cap_is_413() -> None:
    """HTTP-05: the cap holds while a body without Content-Length arrives."""
    app = make_app(HttpOptions(max_body_bytes=1000))
    headers, _ = _discover()
    response = call(app, "POST", "/mcp", headers, [b"x" * 600, b"x" * 600, b"x" * 600])
    assert response.status == 413
    exact = call(app, "POST", "/mcp", headers, [b" " * 500, b" " * 500])
    assert exact.status == 400  # 1000 bytes are allowed (and are not JSON)


def test_slow_body_is_cut_off_with_408() -> None:
    app = make_app(HttpOptions(body_timeout=0.05))
    headers, body = _discover()
    response = call(app, "POST", "/mcp", headers, [body[:10]], hold=True)
    assert response.status == 408


def test_client_that_disconnects_mid_body_gets_nothing(app: SkillsApp) -> None:
    """HTTP-19: a dropped connection cancels the request; nothing is sent."""
    headers, body = _discover()
    sent = asyncio.run(acall(app, "POST", "/mcp", headers, [body[:10]], disconnect=True))
    assert sent is None


def test_cors_is_off_unless_configured(app: SkillsApp) -> None:
    preflight = [
        ("host", "127.0.0.1:8000"),
        ("origin", "http://localhost:3000"),
        ("access-control-request-method", "POST"),
    ]
    response = call(app, "OPTIONS", "/mcp", preflight)
    assert response.status == 405
    assert all(not k.startswith(b"access-control") for k, _ in response.headers)
    headers, body = _discover()
    allowed = post(app, [*headers, ("origin", "http://localhost:3000")], body)
    assert allowed.status == 200
    assert allowed.header("access-control-allow-origin") is None


def test_cors_when_configured() -> None:
    app = make_app(HttpOptions(cors=True, allowed_origins=("https://app.example",)))
    preflight = [("host", "127.0.0.1:8000"), ("origin", "https://app.example")]
    response = call(app, "OPTIONS", "/mcp", preflight)
    assert response.status == 204
    assert response.header("access-control-allow-origin") == "https://app.example"
    assert "mcp-protocol-version" in (response.header("access-control-allow-headers") or "")
    evil = call(app, "OPTIONS", "/mcp", replace_header(preflight, "origin", "https://evil.example"))
    assert evil.status == 403
    assert evil.header("access-control-allow-origin") is None
    headers, body = _discover()
    answered = post(app, [*headers, ("origin", "https://app.example")], body)
    assert answered.header("access-control-allow-origin") == "https://app.example"
    assert answered.header("access-control-expose-headers") == "mcp-session-id"


def test_host_check_can_be_switched_off_and_extended() -> None:
    headers, body = _discover()
    anyhost = make_app(HttpOptions(allowed_hosts=None))
    assert post(anyhost, replace_header(headers, "host", "skills.example.com"), body).status == 200
    listed = make_app(HttpOptions(allowed_hosts=("skills.example.com:443",)))
    assert (
        post(listed, replace_header(headers, "host", "skills.example.com:443"), body).status == 200
    )
    assert (
        post(listed, replace_header(headers, "host", "skills.example.com:80"), body).status == 421
    )


def test_internal_error_has_no_stack_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    """ERR-04 over HTTP: -32603 in-band, no exception text or path."""

    def broken(*args: object) -> None:
        raise RuntimeError("secret /etc/path in the exception text")

    monkeypatch.setattr("skills_core.server.handler._encode_read", broken)
    app = make_app()
    headers, body = _read()
    response = post(app, headers, body)
    assert response.status == 200
    assert response.error_code == -32603
    assert b"secret" not in response.body
    assert b"Traceback" not in response.body


def test_lifespan_and_websocket() -> None:
    app = make_app()

    async def run() -> list[str]:
        inbox: list[MutableMapping[str, Any]] = [
            {"type": "lifespan.startup"},
            {"type": "lifespan.shutdown"},
        ]
        out: list[str] = []

        async def receive() -> MutableMapping[str, Any]:
            return inbox.pop(0)

        async def send(message: MutableMapping[str, Any]) -> None:
            out.append(message["type"])

        await app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
        inbox.append({"type": "websocket.connect"})
        await app({"type": "websocket", "path": "/mcp", "headers": []}, receive, send)
        return out

    assert asyncio.run(run()) == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
        "websocket.close",
    ]


def test_options_are_checked() -> None:
    for bad in (
        {"path": "mcp"},
        {"path": "/mcp?x"},
        {"max_body_bytes": 0},
        {"allowed_origins": ("localhost",)},
        {"allowed_hosts": (":80",)},
    ):
        with pytest.raises(ValueError, match=r"."):
            HttpOptions(**bad)


def test_app_config_round_trips_through_the_environment(tmp_path: Any) -> None:
    config = AppConfig(
        roots=(str(tmp_path),),
        secret=b"k" * 40,
        path="/x",
        allowed_hosts=None,
        allowed_origins=("https://a.example",),
        cors=True,
        page_size=3,
        ttl_ms=0,
        directory_read=False,
        include_hidden=True,
        exclude=("*.log", "drafts/**", "name with, comma"),
        index=str(tmp_path / "index"),
    )
    assert AppConfig.from_environ(config.to_environ()) == config
    with pytest.raises(ValueError, match="SKILLS_CORE_ROOTS"):
        AppConfig.from_environ({})
    with pytest.raises(ValueError, match="CURSOR_KEY"):
        AppConfig.from_environ({"SKILLS_CORE_ROOTS": "x"})
    with pytest.raises(ValueError, match="at least 32"):
        AppConfig.from_environ({"SKILLS_CORE_ROOTS": "x", "SKILLS_CORE_CURSOR_KEY": "short"})


def test_the_source_options_reach_every_worker(tmp_path: Any) -> None:
    """serve --http hands --include-hidden, --exclude and --index to the workers' sources."""
    skill = tmp_path / "skills" / "pdf-processing"
    (skill / "drafts").mkdir(parents=True)
    for path, data in ex.FILES.items():
        (skill / path).parent.mkdir(parents=True, exist_ok=True)
        (skill / path).write_bytes(data)
    (skill / ".env").write_bytes(b"SECRET=1\n")
    (skill / "drafts" / "x.md").write_bytes(b"draft\n")
    index = tmp_path / "index"

    def uris(config: AppConfig) -> set[str]:
        app = AppConfig.from_environ(config.to_environ()).build()
        (published,) = app.server.catalog.skills
        resources = published.entry.resources
        assert not isinstance(resources, str)
        return {r.uri for r in resources}

    base = AppConfig(roots=(str(tmp_path / "skills"),), secret=b"k" * 40)
    default = uris(base)
    assert "skill://pdf-processing/.env" not in default
    assert "skill://pdf-processing/drafts/x.md" in default
    chosen = uris(replace(base, include_hidden=True, exclude=("drafts/",), index=str(index)))
    assert "skill://pdf-processing/.env" in chosen
    assert "skill://pdf-processing/drafts/x.md" not in chosen
    assert index.is_file()


def test_derived_keys_differ_by_purpose() -> None:
    assert derive_key(b"k" * 32, "cursor") != derive_key(b"k" * 32, "session")
    assert len(derive_key(b"k" * 32, "cursor")) == 32


# --- the header value encoding and the session codec, for any input --------------------------


@given(st.text())
def test_header_values_round_trip(value: str) -> None:
    """T26 value encoding: what is encoded decodes to itself, and is visible ASCII."""
    try:
        encoded = encode_header_value(value)
    except LocalProtocolError:  # a lone surrogate has no UTF-8 form
        return
    assert all(" " <= c <= "~" for c in encoded)
    assert decode_header_value(encoded.encode("ascii")) == value


@given(st.binary())
def test_header_decoding_never_raises(raw: bytes) -> None:
    decoded = decode_header_value(raw)
    assert decoded is None or isinstance(decoded, str)


def test_header_encoding_cases() -> None:
    assert encode_header_value(" x") == "=?base64?IHg=?="
    assert encode_header_value("a\r\nb").startswith("=?base64?")
    assert encode_header_value("=?base64?eA==?=") == "=?base64?PT9iYXNlNjQ/ZUE9PT89?="
    assert decode_header_value(b"=?base64?=") is None
    assert decode_header_value(b"=?BASE64?eA==?=") == "=?BASE64?eA==?="  # markers are lowercase
    assert decode_header_value(b"caf\xe9") is None


@given(
    version=st.sampled_from([LEGACY, "2025-06-18"]),
    nonce=st.binary(min_size=16, max_size=16),
    principal=st.text(max_size=20),
    flip=st.integers(min_value=0),
)
def test_sessions_open_only_untampered(
    version: str, nonce: bytes, principal: str, flip: int
) -> None:
    codec = SessionCodec(SESSION_KEY)
    try:
        session = codec.mint(version, expires=100, nonce=nonce, principal=principal)
    except UnicodeEncodeError:
        return
    assert SESSION_ID.match(session)
    assert codec.open(session, now=99, principal=principal) == version
    assert codec.open(session, now=100, principal=principal) is None
    index = flip % len(session)
    tampered = session[:index] + ("A" if session[index] != "A" else "B") + session[index + 1 :]
    assert codec.open(tampered, now=99, principal=principal) is None


# --- the corners -----------------------------------------------------------------------------


def test_session_codec_refuses_what_it_cannot_carry_or_read() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        SessionCodec(b"short")
    codec = SessionCodec(SESSION_KEY)
    with pytest.raises(ValueError, match="protocol version"):
        codec.mint("", expires=10, nonce=b"n" * 16)
    with pytest.raises(ValueError, match="nonce"):
        codec.mint(LEGACY, expires=10, nonce=b"n")
    good = codec.mint(LEGACY, expires=10, nonce=b"n" * 16)
    for bad in (
        "",
        "é" * 10,
        "A" * 500,
        "!!!!",
        good[:10],
        good.replace("-", "+").replace("_", "/"),
    ):
        if bad != good:
            assert codec.open(bad, now=0) is None, bad
    assert codec.open(good + "A", now=0) is None  # stray bits: not the canonical spelling
    # An authentic id of another format (a newer worker's, say) is refused, not misread.
    body = b"\x02" + (10).to_bytes(8, "big") + b"n" * 16 + bytes([len(LEGACY)]) + LEGACY.encode()
    raw = body + codec._tag(body, "")
    other_format = __import__("base64").urlsafe_b64encode(raw).rstrip(b"=").decode()
    assert codec.open(other_format, now=0) is None


def test_get_without_accept_is_405(app: SkillsApp) -> None:
    """No Accept means any media type (RFC 9110): no 406, and still no stream."""
    assert call(app, "GET", "/mcp", [("host", "127.0.0.1:8000")]).status == 405
    assert app.options.path == "/mcp"


def test_unknown_scope_types_are_ignored() -> None:
    app = make_app()

    async def run() -> list[MutableMapping[str, Any]]:
        sent: list[MutableMapping[str, Any]] = []

        async def receive() -> MutableMapping[str, Any]:
            raise AssertionError("not called")

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        await app({"type": "webtransport"}, receive, send)
        return sent

    assert asyncio.run(run()) == []


def test_a_result_too_large_to_write_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from skills_core.http import server as http_server
    from skills_core.jsonrpc import JsonRpcConnection

    monkeypatch.setattr(http_server, "_WRITER", JsonRpcConnection(max_message_size=1024))
    server = SkillsServer.from_files(
        {**FILES, "pdf-processing/big.md": b"x" * 4000}, cursor_key=b"c" * 32
    )
    app = SkillsApp(server, session_key=SESSION_KEY)
    headers, body = modern_request("resources/read", {"uri": "skill://pdf-processing/big.md"})
    response = post(app, headers, body)
    assert response.status == 200
    assert response.error_code == -32603


def test_concurrent_slow_bodies_each_get_408_and_fast_ones_are_served() -> None:
    app = make_app(HttpOptions(body_timeout=0.05))
    headers, body = _discover()

    async def run() -> list[int]:
        slow = [acall(app, "POST", "/mcp", headers, [body[:5]], hold=True) for _ in range(3)]
        fast = [acall(app, "POST", "/mcp", headers, [body]) for _ in range(3)]
        answers = await asyncio.gather(*slow, *fast)
        await asyncio.sleep(
            0.05
        )  # nothing waits: the sweep stops, and the next request restarts it
        late = await acall(app, "POST", "/mcp", headers, [body[:5]], hold=True)
        return [a.status for a in [*answers, late] if a is not None]

    assert asyncio.run(run()) == [408, 408, 408, 200, 200, 200, 408]
    assert asyncio.run(run())[-1] == 408  # a second event loop: the sweep starts afresh


def test_the_servers_own_cancellation_is_not_a_408() -> None:
    """An ASGI server cancelling the request (shutdown, dropped client) is not turned into 408."""
    app = make_app()
    headers, body = _discover()

    async def run() -> None:
        task = asyncio.ensure_future(acall(app, "POST", "/mcp", headers, [body[:5]], hold=True))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())


# --- reads that arrive together share a look ------------------------------------------------------

INVOICE_URI = "skill://pdf-processing/templates/invoice.md"
INVOICE_PATH = "pdf-processing/templates/invoice.md"


def counting_app() -> tuple[SkillsApp, CountingSource]:
    source = CountingSource(FILES)
    server = SkillsServer(source, cursor_key=b"c" * 32)
    return SkillsApp(server, session_key=SESSION_KEY), source


def text_of(response: Response | None) -> str:
    assert response is not None
    assert response.status == 200, response.body
    return str(response.json()["result"]["contents"][0]["text"])


def test_reads_that_arrive_together_share_one_look() -> None:
    app, source = counting_app()
    headers, body = modern_request("resources/read", {"uri": INVOICE_URI})

    async def burst() -> list[str]:
        together = [acall(app, "POST", "/mcp", headers, [body]) for _ in range(8)]
        return [text_of(response) for response in await asyncio.gather(*together)]

    assert asyncio.run(burst()) == [ex.INVOICE.decode()] * 8
    assert source.reads == 1  # one look for the eight
    source.memory.write(INVOICE_PATH, b"# Edited\n")
    assert asyncio.run(burst()) == ["# Edited\n"] * 8  # a later burst looks again
    assert source.reads == 2
    text_of(call(app, "POST", "/mcp", headers, [body]))
    assert source.reads == 3  # and so does a request alone


def test_a_read_whose_body_comes_after_a_look_is_answered_from_a_later_look() -> None:
    """The receipt is taken when the body is in, not when the headers are: a request whose body
    was still on its way while another request looked sees an edit made before its body came."""
    app, source = counting_app()
    headers, body = modern_request("resources/read", {"uri": INVOICE_URI})

    async def run() -> tuple[str, str]:
        arrived = asyncio.Event()

        async def late_body() -> MutableMapping[str, Any]:
            await arrived.wait()
            return {"type": "http.request", "body": body, "more_body": False}

        late = asyncio.ensure_future(acall(app, "POST", "/mcp", headers, receive=late_body))
        await asyncio.sleep(0)  # its headers are in, and it waits for its body
        early = text_of(await acall(app, "POST", "/mcp", headers, [body]))
        source.memory.write(INVOICE_PATH, b"# Edited\n")
        arrived.set()
        return early, text_of(await late)

    assert asyncio.run(run()) == (ex.INVOICE.decode(), "# Edited\n")
    assert source.reads == 2


def test_reads_that_arrive_together_share_one_look_under_trio() -> None:
    import trio

    app, source = counting_app()
    headers, body = modern_request("resources/read", {"uri": INVOICE_URI})
    texts: list[str] = []

    async def one() -> None:
        texts.append(text_of(await acall(app, "POST", "/mcp", headers, [body])))

    async def burst() -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(8):
                nursery.start_soon(one)

    trio.run(burst)
    assert texts == [ex.INVOICE.decode()] * 8
    assert source.reads == 1


def test_under_trio() -> None:
    """hypercorn's trio worker: the same answers, and the body deadline by trio's own timeout."""
    import trio

    app = make_app(HttpOptions(body_timeout=0.05))
    headers, body = _discover()

    async def exchange(chunks: list[bytes], hold: bool) -> int:
        pending = list(chunks)

        async def receive() -> MutableMapping[str, Any]:
            if pending:
                return {"type": "http.request", "body": pending.pop(0), "more_body": hold}
            await trio.sleep_forever()
            raise AssertionError("unreachable")

        response = await acall(app, "POST", "/mcp", headers, receive=receive)
        assert response is not None
        return response.status

    assert trio.run(exchange, [body], False) == 200
    assert trio.run(exchange, [body[:5]], True) == 408


def test_key_files(tmp_path: Any) -> None:
    from skills_core.adapters.asgi import create_key_file, read_key_file

    path = str(tmp_path / "key")
    secret = create_key_file(path)
    assert read_key_file(path) == secret
    assert len(secret) == 64
    with pytest.raises(FileExistsError):
        create_key_file(path)
    (tmp_path / "short").write_bytes(b"abc\n")
    with pytest.raises(ValueError, match="at least 32"):
        read_key_file(str(tmp_path / "short"))


def test_app_from_env(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from skills_core.adapters.asgi import app_from_env

    for path, data in FILES.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    key = tmp_path / "key"
    key.write_text("z" * 64)
    monkeypatch.setenv("SKILLS_CORE_ROOTS", str(tmp_path))
    monkeypatch.setenv("SKILLS_CORE_CURSOR_KEY_FILE", str(key))
    monkeypatch.setenv("SKILLS_CORE_PAGE_SIZE", "1")
    monkeypatch.setenv("SKILLS_CORE_TTL_MS", "5")
    app = app_from_env()
    assert (app.server.options.page_size, app.server.options.ttl_ms) == (1, 5)
    headers, body = modern_request("resources/list")
    page = post(app, headers, body).json()["result"]
    assert len(page["resources"]) == 1
    assert "nextCursor" in page
    for name, value, message in (
        ("SKILLS_CORE_PAGE_SIZE", "x", "whole number"),
        ("SKILLS_CORE_BODY_TIMEOUT", "soon", "number of seconds"),
    ):
        monkeypatch.setenv(name, value)
        with pytest.raises(ValueError, match=message):
            app_from_env()
        monkeypatch.delenv(name)


def test_the_app_imports_the_standard_library_only() -> None:
    """Decision 10 (docs/design.md#d10): ``python -S`` (no site-packages) imports the adapter and serve."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys, skills_core.adapters.asgi, skills_core.cli.serve;"
        "print(sorted(m for m in ('uvicorn', 'trio', 'anyio', 'httpx', 'starlette') if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=root, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


_HEADER_VALUES = st.one_of(
    st.none(),
    st.sampled_from(["2026-07-28", "2025-11-25", "v999", "", "=?base64?eA==?=", "resources/read"]),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
)


@given(
    body=st.one_of(
        st.binary(max_size=300),
        st.builds(
            lambda method, params, request_id: json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            ).encode(),
            st.sampled_from(["server/discover", "skills/list", "resources/read", "initialize"]),
            st.one_of(
                st.none(),
                st.just({"_meta": META, "uri": SKILL_MD_URI}),
                st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
            ),
            st.one_of(st.integers(), st.text(max_size=5), st.none()),
        ),
    ),
    version=_HEADER_VALUES,
    method=_HEADER_VALUES,
    name=_HEADER_VALUES,
    session=_HEADER_VALUES,
)
def test_any_request_gets_a_well_formed_answer(
    app: SkillsApp,
    *,
    body: bytes,
    version: str | None,
    method: str | None,
    name: str | None,
    session: str | None,
) -> None:
    """Fail closed: whatever comes in, one complete answer with a status the ladder allows."""
    headers = base_headers()
    for header, value in (
        ("mcp-protocol-version", version),
        ("mcp-method", method),
        ("mcp-name", name),
        ("mcp-session-id", session),
    ):
        if value is not None:
            headers.append((header, value))
    response = post(app, headers, body)
    assert response.status in (200, 202, 400, 404)
    if response.status == 202:
        assert response.body == b""
    else:
        message = response.json()
        assert message["jsonrpc"] == "2.0"
        assert ("result" in message) != ("error" in message)
        if response.status != 200:
            assert "error" in message


def test_initialize_negotiates_whatever_version_header_it_carries(app: SkillsApp) -> None:
    """L25: an unsupported requested version is answered with our latest, header or not."""
    body = legacy_body("initialize", {"protocolVersion": "2024-11-05", "capabilities": {}})
    response = post(app, legacy_headers(version="2024-11-05"), body)
    assert response.status == 200
    assert response.json()["result"]["protocolVersion"] == LEGACY
    session = response.header("mcp-session-id")
    assert session is not None
    assert post(app, legacy_headers(session, "2024-11-05"), legacy_body("ping")).status == 400
