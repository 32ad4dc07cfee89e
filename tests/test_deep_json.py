"""Peer JSON nested thousands of levels deep gives a typed error on every path, never a
``RecursionError``.

A server controls every value the host decodes: entries (``skills/list``, ``skills/get``), results
(``resources/read``, ``resources/directory/read``), capabilities and error objects. Each place is fed
a value nested deeper than the interpreter's recursion limit, at random, and must answer with a
:class:`~skills_core.errors.SkillsError` (an entry's error names the JSON pointer of the problem) or,
for the value helpers of :mod:`skills_core.jsonvalue`, a ``ValueError``. Before the fix, quoting such
a value in an error message (``repr``) raised ``RecursionError`` from ``SkillEntry.from_json``,
``parse_list_skills_result``, ``decode_read_result``, ``parse_server_features``, ``Host.connect`` and
``Host.on_response``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest
from host_helpers import list_result, of, one
from hypothesis import given, settings
from hypothesis import strategies as st

from skills_core.entry import SkillEntry
from skills_core.errors import InvalidEntryError, SkillsError
from skills_core.frontmatter import compare_frontmatter
from skills_core.host import (
    ApprovalStore,
    Host,
    ListingComplete,
    ListingPartial,
    RequestFailed,
    SendRequest,
)
from skills_core.jsonvalue import freeze_json, json_value_problems, thaw_json
from skills_core.messages import (
    decode_read_result,
    parse_directory_result,
    parse_get_skill_result,
    parse_list_skills_result,
    parse_server_features,
    server_capabilities,
)
from skills_core.spec import EXTENSION_ID

URI = "skill://a/SKILL.md"
DIGEST = "sha256:" + "0" * 64
DEEP = 4_000


def nest(depth: int, kinds: tuple[str, ...], leaf: Any = 1) -> Any:
    """A value ``depth`` levels deep, built without recursion."""
    value = leaf
    for level in range(depth):
        value = [value] if kinds[level % len(kinds)] == "list" else {"k": value}
    return value


@st.composite
def deep_values(draw: st.DrawFn) -> Any:
    # Past any recursion limit in force (hypothesis raises it to about 2,000 while it runs).
    depth = draw(st.integers(min_value=DEEP, max_value=2 * DEEP))
    kinds = tuple(draw(st.lists(st.sampled_from(("list", "dict")), min_size=1, max_size=3)))
    leaf = draw(st.sampled_from((1, "x", None, True, 1.5)))
    return nest(depth, kinds, leaf)


def entry(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "uri": URI,
        "frontmatter": {"name": "a", "description": "d"},
        "resources": [{"uri": URI, "digest": DIGEST, "size": 1}],
    }
    base.update(changes)
    return base


def resource(**changes: Any) -> dict[str, Any]:
    return {"uri": URI, "digest": DIGEST, "size": 1, **changes}


#: Every place in an entry where a server can put a value.
ENTRY_PLACES: dict[str, Callable[[Any], Any]] = {
    "the entry": lambda v: v,
    "uri": lambda v: entry(uri=v),
    "frontmatter": lambda v: entry(frontmatter=v),
    "frontmatter.name": lambda v: entry(frontmatter={"name": v, "description": "d"}),
    "frontmatter member": lambda v: entry(frontmatter={"name": "a", "description": "d", "x": v}),
    "resources": lambda v: entry(resources=v),
    "a resource": lambda v: entry(resources=[v]),
    "resource uri": lambda v: entry(resources=[resource(uri=v)]),
    "resource digest": lambda v: entry(resources=[resource(digest=v)]),
    "resource size": lambda v: entry(resources=[resource(size=v)]),
    "resource member": lambda v: entry(resources=[resource(x=v)]),
    "entry member": lambda v: entry(x=v),
}


@settings(max_examples=25, deadline=None)
@given(value=deep_values(), place=st.sampled_from(sorted(ENTRY_PLACES)))
def test_entry_from_json_gives_a_typed_error_with_a_pointer(value: Any, place: str) -> None:
    with pytest.raises(InvalidEntryError) as caught:
        SkillEntry.from_json(ENTRY_PLACES[place](value))
    assert caught.value.problems
    assert all(isinstance(p.pointer, str) for p in caught.value.problems)
    assert len(caught.value.message) < 10_000


#: Every result parser of :mod:`skills_core.messages`, with a place for the value.
RESULT_PLACES: dict[str, Callable[[Any], object]] = {
    "skills/list result": parse_list_skills_result,
    "skills/list skills": lambda v: parse_list_skills_result({"skills": v}),
    "skills/list entry": lambda v: parse_list_skills_result({"skills": [v]}),
    "skills/list cursor": lambda v: parse_list_skills_result({"skills": [], "nextCursor": v}),
    "resultType": lambda v: parse_list_skills_result({"skills": [], "resultType": v}),
    "skills/get skill": lambda v: parse_get_skill_result({"skill": v}, requested_uri=URI),
    "skills/get uri": lambda v: parse_get_skill_result({"skill": {"uri": v}}, requested_uri=URI),
    "read contents": lambda v: decode_read_result({"contents": v}, uri=URI),
    "read item": lambda v: decode_read_result({"contents": [v]}, uri=URI),
    "read item uri": lambda v: decode_read_result({"contents": [{"uri": v}]}, uri=URI),
    "read text": lambda v: decode_read_result({"contents": [{"uri": URI, "text": v}]}, uri=URI),
    "directory resources": lambda v: parse_directory_result(
        {"resources": v}, directory_uri="skill://a/b"
    ),
    "directory child uri": lambda v: parse_directory_result(
        {"resources": [{"uri": v}]}, directory_uri="skill://a/b"
    ),
    "directory child name": lambda v: parse_directory_result(
        {"resources": [{"uri": "skill://a/b/c", "name": v}]}, directory_uri="skill://a/b"
    ),
    "approvals document": ApprovalStore.from_json,
    "approvals version": lambda v: ApprovalStore.from_json({"version": v, "approvals": []}),
    "approvals record": lambda v: ApprovalStore.from_json({"version": 1, "approvals": [v]}),
}


@settings(max_examples=25, deadline=None)
@given(value=deep_values(), place=st.sampled_from(sorted(RESULT_PLACES)))
def test_result_parsers_give_typed_errors(value: Any, place: str) -> None:
    message = ""
    try:
        RESULT_PLACES[place](value)
    except SkillsError as exc:  # ApprovalsFileError included; anything else fails the test
        message = exc.message
    assert len(message) < 10_000


@settings(max_examples=15, deadline=None)
@given(value=deep_values())
def test_capabilities_never_raise(value: Any) -> None:
    for capabilities in (
        value,
        {"resources": {}, "extensions": value},
        {"resources": {}, "extensions": {EXTENSION_ID: value}},
        {"resources": {}, "extensions": {EXTENSION_ID: {"directoryRead": value}}},
    ):
        features = parse_server_features(capabilities)
        assert not features.directory_read
    host = Host()
    host.connect("srv", {"resources": {}, "extensions": {EXTENSION_ID: value}})
    assert host.features("srv") is not None


@settings(max_examples=15, deadline=None)
@given(value=deep_values(), as_error=st.booleans())
def test_host_answers_deep_responses_with_effects(value: Any, as_error: bool) -> None:
    host = Host()
    host.connect("srv", server_capabilities(directory_read=True))
    for answer in (value, {"code": -32000, "message": value}, list_result([value])):
        send = one(host.list_skills("srv"), SendRequest)
        if as_error:
            effects = host.on_response("srv", send.token, error=answer)
            assert one(effects, RequestFailed)
        else:
            effects = host.on_response("srv", send.token, result=answer)
        # The walk ended (so the next listing is accepted) and said why, briefly.
        assert len(of(effects, ListingComplete) + of(effects, ListingPartial)) == 1
        assert all(len(getattr(e, "message", "")) < 10_000 for e in effects)


def frozen_nest(depth: int) -> Any:
    value: Any = 1
    for level in range(depth):
        value = (value,) if level % 2 else MappingProxyType({"k": value})
    return value


@settings(max_examples=15, deadline=None)
@given(value=deep_values())
def test_comparison_and_value_helpers_never_recurse_without_bound(value: Any) -> None:
    assert compare_frontmatter({"a": value}, {"a": value})  # too deep to compare: a difference
    assert compare_frontmatter({"a": value}, {"a": 1})
    assert next(json_value_problems(value))[1].startswith("nested deeper")
    with pytest.raises(ValueError, match="nested too deeply"):
        freeze_json(value)
    with pytest.raises(ValueError, match="nested too deeply"):
        thaw_json(frozen_nest(DEEP))


def test_freezing_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError, match="a object is not a JSON value"):
        freeze_json({"a": [object()]})
