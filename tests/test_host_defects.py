"""Defects found reading the host, each pinned by a test that failed before its fix.

* the exported ``skills_core.ABSENT`` was not the sentinel ``Host.on_response`` compared with, so
  ``result=skills_core.ABSENT, error=...`` failed as "both given";
* a preview whose cached copy no longer verified silently fetched again, while a read of the same
  file reported the cache failure;
* an ordinary resource read whose result was malformed dropped the ``VerificationError`` from
  ``RequestFailed``;
* a decline reason no code path produced (``DeclineReason.NOT_CONNECTED``);
* one fact reported twice: a declined dynamic skill gave ``LoadDeclined`` and a ``Notice`` with the
  same text, a listing stopped at a cap gave ``ListingPartial`` and a ``Notice`` with the same text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from host_helpers import (
    FakeServer,
    Harness,
    example_harness,
    list_result,
    of,
    one,
    read_result,
    rpc_error,
)

import skills_core
from skills_core import spec_examples as ex
from skills_core.errors import EntryOverLimitError, VerificationError, VerificationKind
from skills_core.frontmatter import ABSENT as FRONTMATTER_ABSENT
from skills_core.host import (
    DeclineReason,
    DeliverToModel,
    FailureSource,
    Host,
    ListingPartial,
    LoadDeclined,
    MemoryCacheStore,
    Notice,
    PreviewReady,
    RequestApproval,
    RequestFailed,
    SendRequest,
    VerificationFailed,
)
from skills_core.jsonvalue import ABSENT as JSON_ABSENT

L = ex.ORIGIN_LABEL
URI = ex.SKILL_MD_URI


def test_one_absent_sentinel_and_on_response_accepts_it() -> None:
    assert skills_core.ABSENT is JSON_ABSENT is FRONTMATTER_ABSENT
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    send = one(h.host.approve(prompt.prompt_id), SendRequest)
    effects = h.host.on_response(
        L, send.token, result=skills_core.ABSENT, error=rpc_error(-32603, "boom")
    )
    failed = one(effects, RequestFailed)
    assert failed.code == -32603
    assert "boom" in failed.message


# Requirement rows: CACHE-02
def test_preview_reports_a_cached_copy_that_no_longer_verifies_CACHE_02() -> None:
    store = MemoryCacheStore()
    h = Harness(Host(cache=store))
    h.add_server(L).add("pdf-processing", ex.FILES)
    h.list_all(L)
    assert one(h.run(h.host.preview(L, URI)), PreviewReady).content == ex.SKILL_MD
    store.put(L, URI, ex.EXPECTED["SKILL.md"][1], b"x" * len(ex.SKILL_MD))
    effects = h.run(h.host.preview(L, URI))
    failed = one(effects, VerificationFailed)
    assert (failed.source, failed.error.kind) == (FailureSource.CACHE, VerificationKind.DIGEST)
    # The tampered copy was discarded and the file fetched again, as a read does.
    assert one(effects, PreviewReady).content == ex.SKILL_MD
    assert h.methods()[-1] == "resources/read"


def test_malformed_ordinary_read_keeps_its_verification_error() -> None:
    h = Harness()
    server = h.add_server("srv")
    server.overrides.append(
        lambda m, p: (
            ("result", read_result("skill://elsewhere/x.md", b"x"))
            if m == "resources/read"
            else None
        )
    )
    failed = one(h.run(h.host.read_resource("srv", "skill://a/notes.md")), RequestFailed)
    assert isinstance(failed.error, VerificationError)
    assert failed.error.kind is VerificationKind.CONTENT
    assert failed.message == failed.error.message


def _dynamic(h: Harness) -> list[Any]:
    uri = h.add_server("srv").add("gen", dynamic=True)
    h.list_all("srv")
    return h.run(h.host.load("srv", uri))


def _denied(h: Harness) -> list[Any]:
    uri = h.add_server("srv").add("a")
    h.list_all("srv")
    return h.run(h.host.load("srv", uri), approve=lambda _prompt: False)


def _policy(h: Harness) -> list[Any]:
    uri = h.add_server("blocked").add("a")
    h.list_all("blocked")
    return h.run(h.host.load("blocked", uri))


def _invalid(h: Harness) -> list[Any]:
    server = h.add_server("srv")
    server.overrides.append(
        lambda m, p: (
            ("result", list_result([{"uri": "skill://a/SKILL.md", "frontmatter": {}}]))
            if m == "skills/list"
            else None
        )
    )
    h.list_all("srv")
    return h.run(h.host.load("srv", "skill://a/SKILL.md"))


def _over_limit(h: Harness) -> list[Any]:
    server = h.add_server("srv")
    uri = server.add("a", {"SKILL.md": b"---\nname: a\ndescription: d\n---\n", "b.md": b"b"})
    h.list_all("srv")
    return h.run(h.host.load("srv", uri))


def _not_a_skill(h: Harness) -> list[Any]:
    h.add_server("srv")
    return h.run(h.host.load("srv", "skill://missing/SKILL.md"))


def _file_too_large(h: Harness) -> list[Any]:
    uri = h.add_server("srv").add("a")
    h.list_all("srv")
    return h.run(h.host.load("srv", uri))


def _server_budget(h: Harness) -> list[Any]:
    uri = h.add_server("srv").add("a")
    h.list_all("srv")
    return h.run(h.host.load("srv", uri))


#: A way to reach every decline reason, and the policy it needs.
DECLINES: dict[DeclineReason, tuple[Callable[[Harness], list[Any]], dict[str, Any]]] = {
    DeclineReason.DYNAMIC: (_dynamic, {}),
    DeclineReason.DENIED: (_denied, {}),
    DeclineReason.POLICY: (_policy, {"denied_origins": frozenset({"blocked"})}),
    DeclineReason.INVALID_ENTRY: (_invalid, {}),
    DeclineReason.OVER_LIMIT: (
        _over_limit,
        {"limits": skills_core.Limits(max_resources=1)},
    ),
    DeclineReason.NOT_A_SKILL: (_not_a_skill, {}),
    DeclineReason.FILE_TOO_LARGE: (_file_too_large, {"max_file_bytes": 10}),
    DeclineReason.SERVER_BUDGET: (_server_budget, {"per_server_budget_bytes": 10}),
}


def test_every_decline_reason_is_reachable() -> None:
    assert set(DECLINES) == set(DeclineReason)


@pytest.mark.parametrize("reason", list(DECLINES), ids=str)
def test_a_decline_is_reported_once(reason: DeclineReason) -> None:
    scenario, policy = DECLINES[reason]
    h = Harness(**policy)
    effects = scenario(h)
    declined = one(effects, LoadDeclined)
    assert declined.reason is reason
    assert declined.message
    if reason is DeclineReason.OVER_LIMIT:
        assert isinstance(declined.error, EntryOverLimitError)
    # The same fact is not told again as a notice.
    assert not [n for n in of(effects, Notice) if n.message == declined.message]


# Requirement rows: SIL-17, WG-05
def test_a_listing_stopped_at_a_cap_is_reported_once_SIL_17() -> None:
    h = Harness(max_pages=2)
    server = h.add_server("srv", FakeServer(page_size=1))
    for name in ("a", "b", "c"):
        server.add(name)
    effects = h.list_all("srv")
    partial = one(effects, ListingPartial)
    assert partial.pages == 2
    assert not [n for n in of(effects, Notice) if n.message == partial.message]
    assert not of(effects, DeliverToModel)
