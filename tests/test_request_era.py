"""One rule decides a request's era, and every side and transport follows it.

``skills_core.messages.request_era`` reads a request's params: modern when ``params._meta`` is an
object holding the protocol version's key (whatever its value), legacy otherwise. The server
(``SkillsServer.answer``), the HTTP server's ladder (``HttpChecks.body`` without a
``MCP-Protocol-Version`` header) and the HTTP client's headers (``message_headers``) each decide by
it; hypothesis feeds the same params to all of them and to the rule, and each must agree. The
rule's only reader of the version's key is ``messages.py``: no other module asks whether a
``_meta`` holds it, and the HTTP client adapter does not touch the key at all.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from skills_core import spec_examples as ex
from skills_core.errors import LocalProtocolError
from skills_core.http.client import message_headers
from skills_core.http.options import HttpOptions
from skills_core.http.server import Head, HttpChecks, Reply
from skills_core.http.session import SessionCodec
from skills_core.jsonrpc import ErrorObject
from skills_core.messages import SKILLS_CORE, Era, request_era, request_meta
from skills_core.server.handler import SkillsServer
from skills_core.spec import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, ErrorCode

PACKAGE = Path(__file__).resolve().parents[1] / "skills_core"
SERVER = SkillsServer.from_files(
    {f"pdf-processing/{path}": data for path, data in ex.FILES.items()}, cursor_key=b"c" * 32
)
CHECKS = HttpChecks(HttpOptions(), SessionCodec(b"s" * 32), lambda: 1_000)

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)
_version = st.sampled_from(["2026-07-28", "2025-11-25", "2099-01-01", ""]) | _json
_meta = st.one_of(
    _json,  # not an object, or an object without the keys
    st.fixed_dictionaries(
        {},
        optional={
            META_PROTOCOL_VERSION: _version,
            META_CLIENT_CAPABILITIES: st.just({}) | _json,
            "progressToken": _json,
        },
    ),
)
PARAMS = st.none() | st.fixed_dictionaries({}, optional={"_meta": _meta, "other": _json})


def server_era(params: dict[str, Any] | None) -> Era:
    """The era the server answered in, on a legacy connection: a legacy request is answered in the
    legacy shape; a modern one in the modern shape, or refused for its ``_meta``."""
    answer = SERVER.answer("skills/list", params, legacy_version="2025-11-25")
    if isinstance(answer, ErrorObject):
        codes = {ErrorCode.INVALID_PARAMS, ErrorCode.UNSUPPORTED_PROTOCOL_VERSION}
        assert answer.code in codes, answer  # only a modern _meta can be refused here
        assert "_meta" in answer.message or "protocol version" in answer.message, answer
        return Era.MODERN
    assert isinstance(answer, dict)
    return Era.MODERN if "resultType" in answer else Era.LEGACY


def http_server_era(params: dict[str, Any] | None) -> Era:
    """The era the ladder routed a POST to, without a version header: a legacy request without a
    session is -32600 "Mcp-Session-Id is required"; a modern one fails a modern rung instead."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "skills/list"}
    if params is not None:
        message["params"] = params
    verdict = CHECKS.body(Head({}, frozenset(), None), json.dumps(message).encode(), {})
    assert isinstance(verdict, Reply), verdict
    error = json.loads(verdict.body)["error"]
    if error["code"] == ErrorCode.INVALID_REQUEST:
        assert "Mcp-Session-Id is required" in error["message"], error
        return Era.LEGACY
    return Era.MODERN


def http_client_era(params: dict[str, Any] | None) -> Era:
    """The era of the headers the client sends: ``Mcp-Method`` only on modern messages; a modern
    message whose version no header can carry is refused before anything is sent."""
    try:
        headers = message_headers("skills/list", params, session=None)
    except LocalProtocolError as exc:
        refused = exc.message
    else:
        return Era.MODERN if any(name == "Mcp-Method" for name, _ in headers) else Era.LEGACY
    assert "the protocol version in its _meta is not a string" in refused
    return Era.MODERN


@given(PARAMS)
@example(None)
@example({})
@example({"_meta": request_meta(SKILLS_CORE)})
@example({"_meta": {META_PROTOCOL_VERSION: 5, META_CLIENT_CAPABILITIES: {}}})
@example({"_meta": {META_PROTOCOL_VERSION: None}})
@example({"_meta": {META_CLIENT_CAPABILITIES: {}}})
@example({"_meta": [META_PROTOCOL_VERSION]})
@example({"_meta": META_PROTOCOL_VERSION})
def test_the_server_the_http_ladder_and_the_http_client_agree_with_request_era(
    params: dict[str, Any] | None,
) -> None:
    era = request_era(params)
    assert server_era(params) is era
    assert http_server_era(params) is era
    assert http_client_era(params) is era


@pytest.mark.parametrize(
    ("params", "era"),
    [
        (None, Era.LEGACY),
        ({}, Era.LEGACY),
        ({"_meta": None}, Era.LEGACY),
        ({"_meta": {}}, Era.LEGACY),
        ({"_meta": {"progressToken": 1}}, Era.LEGACY),
        ({"_meta": [META_PROTOCOL_VERSION]}, Era.LEGACY),
        ({"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}, Era.MODERN),
        ({"_meta": {META_PROTOCOL_VERSION: 5}}, Era.MODERN),  # refused as modern, not served
        ({"_meta": {META_PROTOCOL_VERSION: None}}, Era.MODERN),
    ],
)
def test_request_era(params: dict[str, Any] | None, era: Era) -> None:
    assert request_era(params) is era


def _mentions(tree: ast.AST, name: str) -> list[ast.AST]:
    return [
        node
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and node.id == name)
        or (isinstance(node, ast.alias) and name in (node.name, node.asname))
    ]


def test_only_request_era_asks_whether_a_meta_holds_the_version() -> None:
    """No module but messages.py tests ``META_PROTOCOL_VERSION in ...`` (nor the literal key);
    each deciding module calls request_era; the HTTP client adapter never touches the key."""
    askers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                isinstance(op, ast.In | ast.NotIn) for op in node.ops
            ):
                left = ast.unparse(node.left)
                if left == "META_PROTOCOL_VERSION" or "protocolVersion" in left:
                    askers.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert askers == [f"messages.py:{_line_of_rule()}"]
    for module in ("server/handler.py", "http/server.py", "http/client.py"):
        tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
        assert _mentions(tree, "request_era"), module
    adapter = ast.parse((PACKAGE / "adapters" / "http_client.py").read_text(encoding="utf-8"))
    assert _mentions(adapter, "request_era")
    assert not _mentions(adapter, "META_PROTOCOL_VERSION")


def _line_of_rule() -> int:
    tree = ast.parse((PACKAGE / "messages.py").read_text(encoding="utf-8"))
    rule = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "request_era"
    )
    return next(
        node.lineno
        for node in ast.walk(rule)
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In)
    )
