"""The host's read path, as made lean: same answers, same errors, same objects.

* ``decode_read_result`` takes a ``text`` item in one pass and leaves everything else to the blob
  path; a differential hypothesis test holds it to the straightforward decoding (the reference
  below: every check in spec order, ``base64.b64decode(..., validate=True)`` on the encoded blob),
  result for result and error for error (VER-17, SIL-11, WG-03).
* A file read names the held entry's row it was sent for; its answer is verified against that row,
  and only in the generation it was sent in, so an answer that outlived its entry is never
  delivered, even when a later entry lists the very same URI with other bytes (HELD-01, HELD-05,
  VER-06); a ``skills/get`` for a load goes back to the session that sent it, only while that
  session has not moved.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

import pytest
from host_helpers import FakeServer, Harness, get_result, kinds, of, one, read_result
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_core import spec_examples as ex
from skills_core.errors import (
    LocalProtocolError,
    RemoteProtocolError,
    VerificationError,
    VerificationKind,
)
from skills_core.host import DeliverToModel, HeldEntryReplaced, LoadState, SendRequest
from skills_core.messages import decode_read_result

L = ex.ORIGIN_LABEL
URI = ex.SKILL_MD_URI
INVOICE = "skill://pdf-processing/templates/invoice.md"
ITEM_URI = "skill://x/a.md"


def _reference_decode(result: object, *, uri: str, max_size: int | None) -> bytes:
    """The decoding the fast path must equal: each check in order, the blob via ``b64decode``."""
    if not isinstance(result, Mapping):
        raise RemoteProtocolError("not an object", kind="bad-result")
    if result.get("resultType", "complete") != "complete":
        raise RemoteProtocolError("not complete", kind="unsupported-result-type")
    contents = result.get("contents")
    if not isinstance(contents, list):
        raise VerificationError("'contents' is not an array", kind=VerificationKind.CONTENT)
    if len(contents) != 1:
        raise VerificationError("expected exactly one", kind=VerificationKind.CONTENT)
    item = contents[0]
    if not isinstance(item, Mapping):
        raise VerificationError("not an object", kind=VerificationKind.CONTENT)
    if item.get("uri") != uri:
        raise VerificationError("the content item is for", kind=VerificationKind.CONTENT)
    if ("text" in item) == ("blob" in item):
        raise VerificationError("exactly one of", kind=VerificationKind.CONTENT)
    if "text" in item:
        text = item["text"]
        if not isinstance(text, str):
            raise VerificationError("'text' is not a string", kind=VerificationKind.CONTENT)
        if max_size is not None and len(text) > max_size:
            raise VerificationError("size", kind=VerificationKind.SIZE)
        try:
            return text.encode()
        except UnicodeEncodeError:
            raise VerificationError("surrogate", kind=VerificationKind.CONTENT) from None
    blob = item["blob"]
    if not isinstance(blob, str):
        raise VerificationError("'blob' is not a string", kind=VerificationKind.CONTENT)
    if max_size is not None and len(blob) > 4 * -(-max_size // 3):
        raise VerificationError("size", kind=VerificationKind.SIZE)
    try:
        return base64.b64decode(blob.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise VerificationError("not valid base64", kind=VerificationKind.CONTENT) from None


_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=4))
_not_objects = st.one_of(_json_scalars, st.lists(_json_scalars, max_size=2))
_texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["\ud800", "a\udfffb", "é" * 5, ""]),
    _json_scalars,
)
_blobs = st.one_of(
    st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode()),
    # Each of these is refused in strict mode; the lax decoder accepts several.
    st.sampled_from(["YQ", "YQ==\n", "Y Q==", "é", "Y===", "=YQ=", "YQ==YQ==", "YQ=\n=", "*YQ=="]),
    st.text(alphabet="AYQ=+/ \n*", max_size=10),
    _json_scalars,
)


@st.composite
def _items(draw: st.DrawFn) -> object:
    """Mostly a well-formed item for the URI read, with text, blob, both or neither."""
    if draw(st.integers(0, 9)) == 0:
        return draw(_not_objects)
    item: dict[str, Any] = {}
    choice = draw(st.integers(0, 7))
    if choice:
        item["uri"] = (
            ITEM_URI if choice > 2 else draw(st.sampled_from([ITEM_URI + "x", "", None, 5]))
        )
    if draw(st.booleans()):
        item["text"] = draw(_texts)
    if draw(st.booleans()):
        item["blob"] = draw(_blobs)
    if draw(st.booleans()):
        item["mimeType"] = "text/plain"
    return item


@st.composite
def _results(draw: st.DrawFn) -> object:
    """Mostly ``{"contents": [item]}``; sometimes a bad envelope or a bad ``contents``."""
    if draw(st.integers(0, 12)) == 0:
        return draw(_not_objects)
    result: dict[str, Any] = {}
    kind = draw(st.integers(0, 9))
    if kind == 1:
        result["resultType"] = draw(st.sampled_from(["complete", "incomplete", 5, None]))
    if kind == 2:
        result["contents"] = draw(st.one_of(st.lists(_items(), max_size=3), _json_scalars))
    elif kind != 3:
        result["contents"] = [draw(_items())]
    return result


def _outcome(result: object, max_size: int | None, decode: Any) -> tuple[str, object]:
    try:
        return "bytes", decode(result, uri=ITEM_URI, max_size=max_size)
    except VerificationError as exc:
        return "verification", exc.kind
    except RemoteProtocolError as exc:
        return "protocol", exc.kind


@st.composite
def _cases(draw: st.DrawFn) -> tuple[object, int | None]:
    """A result, and a ``max_size`` of None or close to the length of what it carries."""
    result = draw(_results())
    if draw(st.integers(0, 3)) == 0:
        return result, None
    contents = result.get("contents") if isinstance(result, dict) else None
    item = contents[0] if isinstance(contents, list) and contents else None
    length = 0
    if isinstance(item, dict):
        carried = item.get("text", item.get("blob"))
        length = len(carried) if isinstance(carried, str) else 0
        if "text" not in item and isinstance(carried, str):
            length = 3 * len(carried) // 4
    return result, max(0, length + draw(st.integers(-2, 2)))


@settings(max_examples=1000, deadline=None)
@given(case=_cases())
def test_decode_read_result_equals_the_reference_VER_17_SIL_11(
    case: tuple[object, int | None],
) -> None:
    result, max_size = case
    assert _outcome(result, max_size, decode_read_result) == _outcome(
        result, max_size, _reference_decode
    )


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"uri": ITEM_URI, "text": None}, "'text' is not a string"),
        ({"uri": ITEM_URI, "text": None, "blob": "YQ=="}, "exactly one of 'text' and 'blob'"),
        ({"uri": ITEM_URI, "text": "a", "blob": None}, "exactly one of 'text' and 'blob'"),
        ({"uri": ITEM_URI, "blob": "YWJj\u00e9"}, "'blob' is not valid base64"),
    ],
)
def test_items_off_the_text_path_keep_their_messages_VER_17(
    item: dict[str, object], message: str
) -> None:
    with pytest.raises(VerificationError, match=message) as caught:
        decode_read_result({"contents": [item]}, uri=ITEM_URI, max_size=10)
    assert caught.value.kind is VerificationKind.CONTENT


def test_a_blob_is_decoded_from_the_string_itself_SIL_11() -> None:
    data = bytes(range(256))
    item = {"uri": ITEM_URI, "blob": base64.b64encode(data).decode()}
    assert decode_read_result({"contents": [item]}, uri=ITEM_URI, max_size=256) == data


# --- the row a read was sent for ----------------------------------------------------------------


def test_an_answer_that_outlived_its_entry_is_not_delivered_HELD_05_VER_06() -> None:
    """The file changes on the server and the skill is re-approved with its SKILL.md unchanged, so
    the window now holds an entry listing the same URI with other bytes (HELD-05). The answer to a
    read sent before, with the old bytes, verifies against the row it was sent for, yet it is
    discarded; a read sent now is held to the new row."""
    h = Harness()
    server = h.add_server(L, FakeServer())
    server.add("pdf-processing", ex.FILES)
    h.list_all(L)
    h.load(L, URI, approve=True)
    [old_read] = of(h.host.read(L, URI, "templates/invoice.md"), SendRequest)
    changed = b"# Invoice, second edition\n"
    server.skills[URI].files["templates/invoice.md"] = changed
    effects = h.run(h.host.list_skills(L), approve=True)
    assert kinds(of(effects, HeldEntryReplaced)) == ["HeldEntryReplaced"]
    assert h.host.state(L, URI) is LoadState.ACTING
    late = h.host.on_response(L, old_read.token, result=read_result(INVOICE, ex.INVOICE))
    assert kinds(late) == ["ResponseDiscarded"]
    delivered = one(h.read(L, URI, "templates/invoice.md"), DeliverToModel)
    assert delivered.content == changed
    assert delivered.verified
    stale = h.host.on_response(L, old_read.token, result=read_result(INVOICE, ex.INVOICE))
    assert kinds(stale) == ["UnexpectedResponse"]


def test_a_skills_get_for_a_load_that_was_cleared_is_discarded_LIST_06() -> None:
    """The request names its session: once that session was cleared (ERROR, then ``close``), the
    ``skills/get`` it sent is answered into the registry but never resumes the load."""
    h = Harness()
    server = h.add_server("srv")
    uri = server.add("a")
    [send] = of(h.host.load("srv", uri), SendRequest)
    session = h.host._sessions["srv", uri]  # reach in to break it, as the state-machine tests do
    with pytest.raises(LocalProtocolError):
        session._fault("broken on purpose")
    assert h.host.close("srv", uri) == []
    effects = h.host.on_response("srv", send.token, result=get_result(server.entry(uri)))
    assert kinds(effects) == ["RegistryUpdated", "ResponseDiscarded"]
    assert h.host.state("srv", uri) is LoadState.IDLE
    assert h.host.registry.get("srv", uri) is not None
