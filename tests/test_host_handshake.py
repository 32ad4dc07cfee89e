"""The handshake lives in the sans-IO host: a custom transport needs nothing from the adapters.

The host builds ``server/discover`` (modern, with the request ``_meta``: CAP-10, SIL-28) or
``initialize`` (legacy), and reads the answer (docs/protocol.md#discover). Here the transport is a
``ServerConnection`` called in-process: the whole flow, handshake to verified delivery, runs
without an adapter import.
"""

from __future__ import annotations

import pytest

from skills_core import spec_examples as ex
from skills_core.errors import RemoteProtocolError
from skills_core.host import Connected, DeliverToModel, Host, RequestApproval, SendRequest
from skills_core.host.handshake import INITIALIZED_NOTIFICATION, outcome_of
from skills_core.host.pump import Send, pump
from skills_core.jsonvalue import JSONValue
from skills_core.messages import Era, Implementation
from skills_core.server.handler import ServerConnection, SkillsServer
from skills_core.spec import (
    EXTENSION_ID,
    LEGACY_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    MODERN_PROTOCOL_VERSION,
)

INFO = Implementation(name="custom-transport", version="9.9")


def spec_server() -> SkillsServer:
    files = {f"pdf-processing/{path}": data for path, data in ex.FILES.items()}
    return SkillsServer.from_files(files, cursor_key=b"k" * 32)


def send_to(connection: ServerConnection) -> Send:
    """A transport of one's own: JSON in, JSON out, no adapter."""

    def send(method: str, params: dict[str, JSONValue]) -> dict[str, JSONValue]:
        answer = connection.handle({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        assert answer is not None
        assert "result" in answer, answer
        result = answer["result"]
        assert isinstance(result, dict)
        return result

    return send


def test_modern_handshake_request_carries_the_request_meta_CAP_10() -> None:
    host = Host(client_info=INFO)
    method, params = host.handshake_request(Era.MODERN)
    assert method == "server/discover"
    meta = params["_meta"]
    assert isinstance(meta, dict)
    assert meta[META_PROTOCOL_VERSION] == MODERN_PROTOCOL_VERSION
    assert meta[META_CLIENT_INFO] == {"name": "custom-transport", "version": "9.9"}
    assert meta[META_CLIENT_CAPABILITIES] == {"extensions": {EXTENSION_ID: {}}}  # SIL-28


def test_legacy_handshake_request_is_initialize() -> None:
    method, params = Host(client_info=INFO).handshake_request(Era.LEGACY)
    assert method == "initialize"
    assert params["protocolVersion"] == LEGACY_PROTOCOL_VERSION
    assert params["clientInfo"] == {"name": "custom-transport", "version": "9.9"}
    assert params["capabilities"] == {"extensions": {EXTENSION_ID: {}}}
    assert INITIALIZED_NOTIFICATION == "notifications/initialized"


@pytest.mark.parametrize("era", [Era.MODERN, Era.LEGACY])
def test_a_custom_transport_handshakes_and_loads_without_the_adapters(era: Era) -> None:
    connection = spec_server().connection()
    send = send_to(connection)
    host = Host(client_info=INFO)
    method, params = host.handshake_request(era)
    effects = host.on_handshake("docs", era, send(method, params))
    assert [type(e) for e in effects][:1] == [Connected]
    features = host.features("docs")
    assert features is not None
    assert features.skills
    assert features.directory_read
    senders = {"docs": send}
    pump(host, host.list_skills("docs"), senders)
    out = pump(host, host.load("docs", ex.SKILL_MD_URI), senders)
    prompt = next(e for e in out if isinstance(e, RequestApproval))
    out = pump(host, host.approve(prompt.prompt_id), senders)
    delivery = next(e for e in out if isinstance(e, DeliverToModel))
    assert delivery.verified
    assert delivery.content == ex.FILES["SKILL.md"]
    sent = host.list_skills("docs")
    request = next(e for e in sent if isinstance(e, SendRequest))
    assert ("_meta" in request.params) is (era is Era.MODERN)  # CAP-10: legacy carries none


def test_a_discover_result_without_a_common_version_is_a_typed_error() -> None:
    host = Host(client_info=INFO)
    with pytest.raises(RemoteProtocolError) as caught:
        host.on_handshake("docs", Era.MODERN, {"supportedVersions": ["1999-01-01"]})
    assert caught.value.kind == "no-common-version"
    assert host.features("docs") is None  # nothing connected


@pytest.mark.parametrize("result", [None, [], "x", 3])
def test_a_handshake_answer_that_is_not_an_object_is_a_typed_error(result: object) -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        Host(client_info=INFO).on_handshake("docs", Era.LEGACY, result)
    assert caught.value.kind == "bad-handshake"


def test_legacy_outcome_keeps_a_version_we_speak_and_otherwise_ours() -> None:
    assert outcome_of(Era.LEGACY, {"protocolVersion": "2025-06-18"}).protocol_version == (
        "2025-06-18"
    )
    assert outcome_of(Era.LEGACY, {"protocolVersion": "2099-01-01"}).protocol_version == (
        LEGACY_PROTOCOL_VERSION
    )
