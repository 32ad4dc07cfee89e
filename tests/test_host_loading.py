"""Loading a skill: VER-04..VER-12, VER-16, VER-17, SIL-09..SIL-11, SIL-34, CAP-10, WG-03, WG-04,
ENTRY-22, HELD-07, HELD-08, and the host's handling of odd responses.
"""

from __future__ import annotations

from typing import Any

import pytest
from host_helpers import (
    FakeServer,
    Harness,
    example_harness,
    get_result,
    kinds,
    list_result,
    of,
    one,
    read_result,
    rpc_error,
    skill_md,
)

from skills_core import Limits, SkillEntry
from skills_core import spec_examples as ex
from skills_core.digest import compute_digest
from skills_core.host import (
    ApprovalReason,
    ApprovalWithdrawn,
    DeclineReason,
    DeliverToModel,
    DeliveryKind,
    FailureSource,
    Host,
    HostPolicy,
    LoadDeclined,
    LoadFailed,
    LoadState,
    MemoryCacheStore,
    NotASkill,
    Notice,
    PreviewReady,
    RefusalCode,
    Refused,
    RegistryUpdated,
    ReloadRequired,
    RequestApproval,
    RequestFailed,
    ResponseDiscarded,
    SendRequest,
    SkillChanged,
    SkillLoaded,
    UnexpectedResponse,
    VerificationFailed,
    WindowClosed,
)
from skills_core.messages import Era
from skills_core.spec import META_PROTOCOL_VERSION

L = ex.ORIGIN_LABEL
URI = ex.SKILL_MD_URI


def serve_skill_md(h: Harness, data: bytes, *, label: str = L) -> None:
    """Make the server answer reads of SKILL.md with ``data`` (entry unchanged)."""
    h.servers[label].overrides.append(
        lambda m, p: (
            ("result", read_result(URI, data))
            if m == "resources/read" and p["uri"] == URI
            else None
        )
    )


# Requirement rows: VER-04, SIL-34
def test_load_effect_order_VER_04_SIL_34() -> None:
    h = example_harness()
    effects = h.load(L, URI)
    assert kinds(effects) == [
        "RequestApproval",
        "ApprovalGranted",
        "SendRequest",
        "DeliverToModel",
        "SkillLoaded",
    ]
    assert h.host.state(L, URI) is LoadState.ACTING
    view = h.host.window(L, URI)
    assert view is not None
    assert view.held is not None
    assert view.held.uri == URI
    assert [w.uri for w in h.host.windows()] == [URI]


# Requirement rows: VER-12
def test_nothing_is_fetched_ahead_of_need_VER_12() -> None:
    h = example_harness()
    assert h.methods() == ["skills/list"]
    prompt = one(h.host.load(L, URI), RequestApproval)
    assert h.host.pending_requests == 0
    h.run(h.host.approve(prompt.prompt_id))
    # Approval led to SKILL.md only; no supporting file was read.
    assert h.methods() == ["skills/list", "resources/read"]
    assert h.sent[-1].params["uri"] == URI


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (ex.SKILL_MD[:-1], "size"),  # V1 without its final newline: 150 bytes
        (ex.SKILL_MD.replace(b"\n", b"\r\n"), "size"),  # CRLF: 159 bytes
        (b"\xef\xbb\xbf" + ex.SKILL_MD, "size"),  # a BOM: 154 bytes
        (ex.SKILL_MD.replace(b"PDF processing", b"PDF Processing"), "digest"),
    ],
)
# Requirement rows: VER-06, VER-07, VER-08
def test_tampered_skill_md_is_never_used_VER_06_VER_07_VER_08(data: bytes, kind: str) -> None:
    h = example_harness()
    serve_skill_md(h, data)
    store = h.host._ctx.cache.store  # the in-memory store the host made
    effects = h.load(L, URI)
    failed = one(effects, VerificationFailed)
    assert failed.error.kind == kind
    assert failed.refreshing
    assert not of(effects, DeliverToModel)
    assert isinstance(store, MemoryCacheStore)
    assert len(store) == 0
    # One refresh; the entry is unchanged, so the failure stands and nothing loops (VER-16).
    assert h.methods() == ["skills/list", "resources/read", "skills/get"]
    assert "failure stands" in one(effects, LoadFailed).message
    assert h.host.state(L, URI) is LoadState.IDLE


# Requirement rows: VER-07
def test_size_mismatch_is_decided_before_hashing_VER_07() -> None:
    h = example_harness()
    big = "x" * 10_000
    h.servers[L].overrides.append(
        lambda m, p: (
            ("result", {"contents": [{"uri": URI, "text": big}]}) if m == "resources/read" else None
        )
    )
    failed = one(h.load(L, URI), VerificationFailed)
    assert failed.error.kind == "size"
    assert "at least 10000 bytes" in failed.error.message


@pytest.mark.parametrize(
    ("entry_frontmatter", "served"),
    [
        # SKILL.md has allowed-tools, the entry lacks it.
        (None, skill_md("fm", extra="allowed-tools: Bash\n")),
        # The entry has an extra key.
        ({"name": "fm", "description": "A test skill", "license": "MIT"}, skill_md("fm")),
        # The description differs by one character.
        ({"name": "fm", "description": "A test skilL"}, skill_md("fm")),
        # A duplicate allowed-tools key hides a second value (SIL-09).
        (
            {"name": "fm", "description": "A test skill", "allowed-tools": "Read"},
            skill_md("fm", extra="allowed-tools: Read\nallowed-tools: Bash\n"),
        ),
        # No frontmatter at all (SIL-10).
        ({"name": "fm", "description": "A test skill"}, b"# fm\n"),
    ],
)
# Requirement rows: VER-10, VER-11
def test_frontmatter_differences_fail_verification_VER_10_VER_11(
    entry_frontmatter: dict[str, Any] | None, served: bytes
) -> None:
    h = Harness()
    server = h.add_server("srv")
    published = entry_frontmatter or {"name": "fm", "description": "A test skill"}
    uri = server.add("fm", {"SKILL.md": served}, frontmatter=published)
    h.list_all("srv")
    effects = h.load("srv", uri)
    failed = one(effects, VerificationFailed)
    assert failed.error.kind == "frontmatter"
    assert "frontmatter" in failed.error.message
    assert not of(effects, DeliverToModel)
    assert not of(effects, SkillLoaded)
    assert one(effects, LoadFailed)


# Requirement rows: SIL-09
def test_frontmatter_comparison_is_on_the_json_data_model_SIL_09() -> None:
    h = Harness()
    server = h.add_server("srv")
    served = skill_md("fm", extra="version: 1.0\nflag: yes\nmeta:\n  b: 2\n  a: [1, 2]\n")
    uri = server.add("fm", {"SKILL.md": served})
    entry = server.entry(uri)
    entry["frontmatter"] = {
        "meta": {"a": [1, 2], "b": 2},
        "flag": "yes",
        "version": 1,
        "description": "A test skill",
        "name": "fm",
    }
    server.overrides.append(
        lambda m, p: ("result", list_result([entry])) if m == "skills/list" else None
    )
    h.list_all("srv")
    assert one(h.load("srv", uri), DeliverToModel).verified


def test_many_frontmatter_differences_are_summarised() -> None:
    h = Harness()
    server = h.add_server("srv")
    extra = "".join(f"k{i}: {i}\n" for i in range(7))
    uri = server.add("fm", {"SKILL.md": skill_md("fm", extra=extra)})
    entry = server.entry(uri)
    entry["frontmatter"] = {"name": "fm", "description": "A test skill"}
    server.overrides.append(
        lambda m, p: ("result", list_result([entry])) if m == "skills/list" else None
    )
    h.list_all("srv")
    failed = one(h.load("srv", uri), VerificationFailed)
    assert "(and 2 more)" in failed.error.message


# Requirement rows: VER-17
def test_blob_content_is_hashed_after_strict_decoding_VER_17() -> None:
    h = Harness()
    h.add_server(L, FakeServer(blob=True)).add("pdf-processing", ex.FILES)
    h.list_all(L)
    assert one(h.load(L, URI), DeliverToModel).content == ex.SKILL_MD


@pytest.mark.parametrize(
    "result",
    [
        {"contents": [{"uri": URI, "text": "a"}, {"uri": URI, "text": "b"}]},
        {"contents": [{"uri": "skill://other/SKILL.md", "text": ex.SKILL_MD.decode()}]},
        {"contents": [{"uri": URI, "text": "a", "blob": "YQ=="}]},
        {"contents": [{"uri": URI, "blob": "!!!"}]},
    ],
)
# Requirement rows: VER-17, SIL-11
def test_malformed_read_results_are_verification_failures_VER_17_SIL_11(
    result: dict[str, Any],
) -> None:
    h = example_harness()
    h.servers[L].overrides.append(
        lambda m, p: ("result", result) if m == "resources/read" else None
    )
    effects = h.load(L, URI)
    assert one(effects, VerificationFailed).error.kind == "content"
    assert not of(effects, DeliverToModel)


def test_a_refreshed_entry_that_differs_leads_to_reapproval_not_an_error() -> None:
    h = example_harness()
    server = h.servers[L]
    # The server rotated SKILL.md after the listing.
    new_md = ex.SKILL_MD.replace(b"Choose", b"Pick")
    server.skills[URI].files["SKILL.md"] = new_md
    server.skills[URI].frontmatter = None
    effects = h.load(L, URI, approve=lambda p: True if p.reason is ApprovalReason.NEW else None)
    changed = one(effects, SkillChanged)
    assert changed.requires_reapproval
    assert changed.skill_md_changed
    prompts = of(effects, RequestApproval)
    assert [p.reason for p in prompts] == [ApprovalReason.NEW, ApprovalReason.CHANGED]
    assert h.host.state(L, URI) is LoadState.AWAITING_APPROVAL
    effects = h.run(h.host.approve(prompts[-1].prompt_id))
    assert one(effects, DeliverToModel).content == new_md


# Requirement rows: DIR-17
def test_server_no_longer_serving_skill_md_triggers_a_refresh_DIR_17() -> None:
    h = example_harness()
    h.servers[L].overrides.append(
        lambda m, p: ("error", rpc_error(-32602, "gone")) if m == "resources/read" else None
    )
    effects = h.load(L, URI)
    assert one(effects, RequestFailed).code == -32602
    assert h.methods()[-1] == "skills/get"
    assert one(effects, LoadFailed)


def test_other_errors_and_malformed_results_end_the_load() -> None:
    h = example_harness()
    server = h.servers[L]
    server.overrides.append(
        lambda m, p: ("error", rpc_error(-32603, "internal")) if m == "resources/read" else None
    )
    effects = h.load(L, URI)
    assert one(effects, RequestFailed).code == -32603
    assert "internal" in one(effects, LoadFailed).message
    server.overrides[:] = [lambda m, p: ("result", [1]) if m == "resources/read" else None]
    effects = h.load(L, URI)
    assert one(effects, RequestFailed).error is not None
    assert one(effects, LoadFailed).error is not None
    server.overrides[:] = [
        lambda m, p: ("result", {"resultType": "input_required"}) if m == "resources/read" else None
    ]
    assert one(h.load(L, URI), LoadFailed)


def test_load_of_an_unknown_skill_errors() -> None:
    h = Harness()
    server = h.add_server("srv")
    effects = h.load("srv", "skill://nope/SKILL.md")
    assert one(effects, NotASkill)
    assert one(effects, LoadDeclined).reason is DeclineReason.NOT_A_SKILL
    server.overrides.append(lambda m, p: ("error", rpc_error(-32603, "down")))
    assert one(h.load("srv", "skill://nope/SKILL.md"), LoadFailed)
    server.overrides[:] = [lambda m, p: ("result", {})]
    effects = h.load("srv", "skill://nope/SKILL.md")
    assert one(effects, RequestFailed).error is not None
    assert one(effects, LoadFailed).error is not None
    other = server.add("other")
    server.overrides[:] = [lambda m, p: ("result", get_result(server.entry(other)))]
    effects = h.load("srv", "skill://nope/SKILL.md")
    assert one(effects, LoadDeclined).reason is DeclineReason.INVALID_ENTRY


# Requirement rows: CAP-10
def test_modern_requests_carry_meta_legacy_ones_do_not_CAP_10() -> None:
    h = Harness()
    h.add_server("modern").add("a")
    h.add_server("legacy", era=Era.LEGACY).add("a")
    h.list_all("modern")
    h.list_all("legacy")
    modern, legacy = h.sent
    assert modern.params["_meta"][META_PROTOCOL_VERSION] == "2026-07-28"  # type: ignore[index,call-overload]
    assert legacy.params == {}


# Requirement rows: WG-03
def test_per_file_cap_declines_before_reading_WG_03() -> None:
    h = example_harness(max_file_bytes=100)
    declined = one(h.host.load(L, URI), LoadDeclined)
    assert declined.reason is DeclineReason.FILE_TOO_LARGE
    assert h.methods() == ["skills/list"]
    h2 = example_harness(max_file_bytes=151)
    h2.load(L, URI)
    assert one(h2.read(L, URI, "templates/invoice.md"), DeliverToModel)
    h3 = example_harness(max_file_bytes=30)
    assert one(h3.host.load(L, URI), LoadDeclined).reason is DeclineReason.FILE_TOO_LARGE
    h3.host.approvals.grant(L, URI, SkillEntry.from_json(ex.entry_json()).resource_set)


# Requirement rows: WG-04
def test_per_server_budget_WG_04() -> None:
    h = example_harness(per_server_budget_bytes=151 + 29)
    h.load(L, URI)
    assert one(h.read(L, URI, "templates/invoice.md"), DeliverToModel)
    refused = one(h.read(L, URI, "templates/purchase-order.md"), Refused)
    assert refused.code is RefusalCode.SERVER_BUDGET
    # Cache hits cost nothing.
    assert one(h.read(L, URI, "templates/invoice.md"), DeliverToModel).from_cache
    # Other servers have their own budget.
    h.add_server("other").add("pdf-processing", ex.FILES)
    h.list_all("other")
    assert one(h.load("other", URI), DeliverToModel)
    h2 = example_harness(per_server_budget_bytes=100)
    assert one(h2.host.load(L, URI), LoadDeclined).reason is DeclineReason.SERVER_BUDGET


# Requirement rows: ENTRY-22
def test_dynamic_skills_load_unverified_with_frontmatter_checked_and_capped_ENTRY_22() -> None:
    h = Harness(allow_dynamic=True, limits=Limits(max_total_bytes=200))
    server = h.add_server("srv")
    uri = server.add(
        "reports/daily",
        {"SKILL.md": skill_md("daily"), "a.md": b"a" * 100, "b.md": b"b" * 100},
        dynamic=True,
    )
    h.list_all("srv")
    effects = h.load("srv", uri)
    delivered = one(effects, DeliverToModel)
    assert not delivered.verified
    used = len(delivered.content)
    view = h.host.window("srv", uri)
    assert view is not None
    assert view.dynamic_bytes == used
    assert not one(h.read("srv", uri, "a.md"), DeliverToModel).verified
    # The next read would pass the cumulative cap: refused when the content arrives.
    assert one(h.read("srv", uri, "b.md"), Refused).code is RefusalCode.SKILL_SIZE_LIMIT
    # A mismatched name fails frontmatter verification even for a dynamic skill (VER-11).
    h2 = Harness(allow_dynamic=True)
    server2 = h2.add_server("srv")
    uri2 = server2.add(
        "reports/daily",
        {"SKILL.md": skill_md("weekly")},
        dynamic=True,
        frontmatter={"name": "daily", "description": "A test skill"},
    )
    h2.list_all("srv")
    assert one(h2.load("srv", uri2), VerificationFailed).error.kind == "frontmatter"


# Requirement rows: ENTRY-22
def test_dynamic_cap_reached_exactly_refuses_further_sends_ENTRY_22() -> None:
    body = skill_md("daily")
    h = Harness(allow_dynamic=True, limits=Limits(max_total_bytes=len(body)))
    uri = h.add_server("srv").add("reports/daily", {"SKILL.md": body, "x": b"x"}, dynamic=True)
    h.list_all("srv")
    h.load("srv", uri)
    sent = len(h.sent)
    assert one(h.read("srv", uri, "x"), Refused).code is RefusalCode.SKILL_SIZE_LIMIT
    assert len(h.sent) == sent


def test_dynamic_skill_md_over_the_cap_is_a_failure() -> None:
    h = Harness(allow_dynamic=True, limits=Limits(max_total_bytes=10))
    uri = h.add_server("srv").add("reports/daily", dynamic=True)
    h.list_all("srv")
    assert one(h.load("srv", uri), VerificationFailed).error.kind == "size"


def test_loads_in_progress_and_acting_are_refused() -> None:
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    assert one(h.host.load(L, URI), Refused).code is RefusalCode.LOAD_IN_PROGRESS
    h.run(h.host.approve(prompt.prompt_id))
    assert one(h.host.load(L, URI), Refused).code is RefusalCode.ALREADY_ACTING
    assert one(h.host.load("nope", URI), Refused).code is RefusalCode.UNKNOWN_ORIGIN


def test_entry_change_while_the_prompt_is_open_replaces_the_prompt() -> None:
    h = example_harness()
    first = one(h.host.load(L, URI), RequestApproval)
    h.servers[L].skills[URI].files["templates/credit-note.md"] = ex.CREDIT_NOTE
    effects = h.list_all(L)
    assert one(effects, ApprovalWithdrawn).prompt_id == first.prompt_id
    assert one(effects, SkillChanged).requires_reapproval
    second = one(effects, RequestApproval)
    assert second.total_size == 254
    assert one(h.host.approve(first.prompt_id), Refused).code is RefusalCode.UNKNOWN_PROMPT
    effects = h.run(h.host.approve(second.prompt_id))
    assert one(effects, SkillLoaded).entry.total_size == 254
    # An identical entry arriving during a prompt changes nothing.
    h.host.close(L, URI)
    h.host.approvals.revoke(L, URI)
    prompt = one(h.host.load(L, URI), RequestApproval)
    assert not of(h.list_all(L), ApprovalWithdrawn)
    h.run(h.host.deny(prompt.prompt_id))


def test_entry_change_while_reading_skill_md_discards_the_answer() -> None:
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    send = one(h.host.approve(prompt.prompt_id), SendRequest)
    h.servers[L].skills[URI].files["templates/credit-note.md"] = ex.CREDIT_NOTE
    effects = h.list_all(L)
    reprompt = one(effects, RequestApproval)
    late = h.host.on_response(L, send.token, result=read_result(URI, ex.SKILL_MD))
    assert one(late, ResponseDiscarded)
    assert h.host.state(L, URI) is LoadState.AWAITING_APPROVAL
    h.run(h.host.deny(reprompt.prompt_id))
    assert h.host.state(L, URI) is LoadState.IDLE


# Requirement rows: SEC-06
def test_entry_change_while_reading_under_a_no_prompt_policy_reads_again_SEC_06() -> None:
    h = example_harness(require_approval=False)
    send = one(h.host.load(L, URI), SendRequest)
    p_prime = ex.entry_json(with_credit_note=True)
    listing = one(h.host.list_skills(L), SendRequest)
    effects = h.host.on_response(L, listing.token, result=list_result([p_prime]))
    assert not one(effects, SkillChanged).requires_reapproval
    resend = one(effects, SendRequest)
    assert resend.method == "resources/read"
    late = h.host.on_response(L, send.token, result=read_result(URI, ex.SKILL_MD))
    assert one(late, ResponseDiscarded)
    effects = h.host.on_response(L, resend.token, result=read_result(URI, ex.SKILL_MD))
    assert one(effects, SkillLoaded).entry.total_size == 254


def test_entry_becoming_invalid_or_dynamic_during_a_load_declines_it() -> None:
    h = example_harness()
    one(h.host.load(L, URI), RequestApproval)
    bad = {"uri": URI, "frontmatter": {"name": "pdf-processing", "description": "d"}}
    h.servers[L].overrides.append(
        lambda m, p: ("result", list_result([bad])) if m == "skills/list" else None
    )
    effects = h.list_all(L)
    assert one(effects, LoadDeclined).reason is DeclineReason.INVALID_ENTRY
    assert one(effects, ApprovalWithdrawn)
    h2 = example_harness()
    one(h2.host.load(L, URI), RequestApproval)
    dynamic = {**ex.entry_json(), "resources": "dynamic"}
    h2.servers[L].overrides.append(
        lambda m, p: ("result", list_result([dynamic])) if m == "skills/list" else None
    )
    assert one(h2.list_all(L), LoadDeclined).reason is DeclineReason.DYNAMIC


# Requirement rows: HELD-07
def test_stale_window_after_skill_md_changed_HELD_07() -> None:
    h = example_harness()
    h.load(L, URI)
    new_md = ex.SKILL_MD.replace(b"Choose", b"Pick")
    h.servers[L].skills[URI].files["SKILL.md"] = new_md
    effects = h.run(h.host.refresh(L, URI))
    changed = one(effects, SkillChanged)
    assert changed.skill_md_changed
    effects = h.run(h.host.approve(one(effects, RequestApproval).prompt_id))
    assert one(effects, ReloadRequired)
    assert h.host.state(L, URI) is LoadState.STALE
    refused = one(h.read(L, URI, "templates/invoice.md"), Refused)
    assert refused.code is RefusalCode.RELOAD_REQUIRED
    assert one(h.host.list_dir(L, URI), Refused).code is RefusalCode.RELOAD_REQUIRED
    effects = h.load(L, URI)
    assert not of(effects, RequestApproval)
    assert one(effects, DeliverToModel).content == new_md
    assert h.host.state(L, URI) is LoadState.ACTING


def test_stale_window_can_change_again_or_close() -> None:
    h = example_harness()
    h.load(L, URI)
    h.servers[L].skills[URI].files["SKILL.md"] = ex.SKILL_MD.replace(b"Choose", b"Pick")
    effects = h.run(h.host.refresh(L, URI), approve=True)
    assert h.host.state(L, URI) is LoadState.STALE
    h.servers[L].skills[URI].files["templates/credit-note.md"] = ex.CREDIT_NOTE
    effects = h.run(h.host.refresh(L, URI))
    assert one(effects, RequestApproval)
    assert h.host.state(L, URI) is LoadState.REAPPROVAL
    h.run(h.host.approve(one(effects, RequestApproval).prompt_id))
    assert h.host.state(L, URI) is LoadState.STALE
    assert one(h.host.close(L, URI), WindowClosed)
    assert h.host.state(L, URI) is LoadState.IDLE


def test_stale_reload_declines_when_over_budget() -> None:
    h = example_harness(per_server_budget_bytes=151 + 160)
    h.load(L, URI)
    h.servers[L].skills[URI].files["SKILL.md"] = ex.SKILL_MD + b"x" * 200
    h.run(h.host.refresh(L, URI), approve=True)
    assert h.host.state(L, URI) is LoadState.STALE
    assert one(h.host.load(L, URI), LoadDeclined).reason is DeclineReason.SERVER_BUDGET


# Requirement rows: CACHE-05
def test_load_from_cache_when_disconnected_and_failure_without_cache_CACHE_05() -> None:
    store = MemoryCacheStore()
    h = Harness(Host(cache=store))
    h.add_server(L).add("pdf-processing", ex.FILES)
    h.list_all(L)
    h.load(L, URI)
    h.host.close(L, URI)
    h.host.disconnect(L)
    effects = h.load(L, URI)
    delivered = one(effects, DeliverToModel)
    assert delivered.from_cache
    assert delivered.origin == L
    assert h.methods().count("resources/read") == 1
    h.host.close(L, URI)
    store.forget_origin(L)
    assert "disconnected" in one(h.load(L, URI), LoadFailed).message


def test_disconnect_fails_requests_in_flight() -> None:
    h = example_harness()
    send_list = one(h.host.list_skills(L), SendRequest)
    prompt = one(h.host.load(L, URI), RequestApproval)
    read = one(h.host.approve(prompt.prompt_id), SendRequest)
    effects = h.host.disconnect(L)
    assert {type(e).__name__ for e in effects} >= {"RequestFailed", "ListingPartial", "LoadFailed"}
    assert h.host.state(L, URI) is LoadState.IDLE
    assert one(h.host.on_response(L, read.token, result={}), UnexpectedResponse)
    assert one(h.host.on_response(L, send_list.token, result={}), UnexpectedResponse)


def test_disconnect_during_a_get_for_load() -> None:
    h = Harness()
    h.add_server("srv")
    send = one(h.host.load("srv", "skill://a/SKILL.md"), SendRequest)
    effects = h.host.on_request_failed("srv", send.token, "timeout")
    assert one(effects, RequestFailed).message == "timeout"
    assert one(effects, LoadFailed)
    assert one(h.host.on_request_failed("srv", send.token, "again"), UnexpectedResponse)


def test_responses_with_bad_tokens_or_shapes_never_crash() -> None:
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    send = one(h.host.approve(prompt.prompt_id), SendRequest)
    assert one(h.host.on_response(L, 9999, result={}), UnexpectedResponse)
    assert one(h.host.on_response("other", send.token, result={}), UnexpectedResponse)
    # Exactly one of result and error: anything else fails the request.
    effects = h.host.on_response(L, send.token)
    assert "exactly one" in one(effects, RequestFailed).message
    assert one(h.host.on_response(L, send.token, result={}), UnexpectedResponse)


@pytest.mark.parametrize(
    ("error", "code", "text"),
    [
        ("boom", None, "malformed error response"),
        ({"code": True, "message": 5}, None, "error without a message"),
        ({"code": -32000, "message": "line\nbreak"}, -32000, "line break"),
    ],
)
def test_malformed_error_objects_are_tolerated(error: object, code: int | None, text: str) -> None:
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    send = one(h.host.approve(prompt.prompt_id), SendRequest)
    failed = one(h.host.on_response(L, send.token, error=error), RequestFailed)
    assert failed.code == code
    assert text in failed.message


def test_forget_mid_load_discards_later_answers() -> None:
    h = Harness()
    h.add_server("srv")
    send = one(h.host.load("srv", "skill://a/SKILL.md"), SendRequest)
    effects = h.host.forget("srv")
    assert one(effects, Notice).code == "origin-forgotten"
    assert one(h.host.on_response("srv", send.token, result={}), UnexpectedResponse)


def test_get_answer_after_the_load_moved_on_is_discarded() -> None:
    h = Harness()
    server = h.add_server("srv")
    uri = server.add("a")
    first = one(h.host.load("srv", uri), SendRequest)
    h.host.on_request_failed("srv", first.token, "timeout")
    second = one(h.host.load("srv", uri), SendRequest)
    h.host.forget("srv")
    h.add_server("srv", server)
    # Neither answer can be matched any more.
    assert one(
        h.host.on_response("srv", second.token, result=get_result(server.entry(uri))),
        UnexpectedResponse,
    )


def test_stale_get_for_load_is_discarded_after_a_new_load() -> None:
    h = Harness()
    server = h.add_server("srv")
    uri = server.add("a")
    first = one(h.host.load("srv", uri), SendRequest)
    h.host.disconnect("srv")
    h.host.connect("srv", server.capabilities())
    assert first.token not in (s.token for s in of(h.host.load("srv", uri), SendRequest))


# Requirement rows: ERR-07
def test_not_a_skill_removes_a_registered_entry_on_refresh_ERR_07() -> None:
    h = example_harness()
    h.load(L, URI)
    del h.servers[L].skills[URI]
    effects = h.run(h.host.refresh(L, URI))
    assert one(effects, NotASkill)
    assert one(effects, RegistryUpdated).removed == (URI,)
    assert one(effects, WindowClosed)
    assert h.host.registry.get(L, URI) is None
    assert h.host.approvals.record(L, URI).revoked  # type: ignore[union-attr]


def test_dynamic_delivery_kind_and_policy_object() -> None:
    host = Host(policy=HostPolicy(allow_dynamic=True))
    assert host.policy.allow_dynamic
    assert host.features("nope") is None
    assert host.window(L, URI) is None
    assert host.windows() == ()
    assert DeliveryKind.SKILL.value == "skill"
    assert FailureSource.CACHE.value == "cache"
    digest = compute_digest(b"")
    assert digest.startswith("sha256:")


# Requirement rows: CACHE-02
def test_tampered_cached_skill_md_is_refetched_CACHE_02() -> None:
    store = MemoryCacheStore()
    h = Harness(Host(cache=store))
    h.add_server(L).add("pdf-processing", ex.FILES)
    h.list_all(L)
    h.load(L, URI)
    h.host.close(L, URI)
    store.put(L, URI, ex.EXPECTED["SKILL.md"][1], b"x" * 151)
    effects = h.load(L, URI)
    failed = one(effects, VerificationFailed)
    assert (failed.source, failed.error.kind) == (FailureSource.CACHE, "digest")
    delivered = one(effects, DeliverToModel)
    assert (delivered.from_cache, delivered.content) == (False, ex.SKILL_MD)


def test_frontmatter_failure_from_the_cache_while_disconnected() -> None:
    """An entry with the same set but other frontmatter keeps the approval (it binds the set),
    but the SKILL.md, even served from the verified cache, is checked against it and refused."""
    h = example_harness()
    h.load(L, URI)
    h.host.close(L, URI)
    forged = ex.entry_json()
    forged["frontmatter"] = {"name": "pdf-processing", "description": "Something else"}
    h.servers[L].overrides.append(
        lambda m, p: ("result", list_result([forged])) if m == "skills/list" else None
    )
    h.list_all(L)
    h.host.disconnect(L)
    effects = h.load(L, URI)
    failed = one(effects, VerificationFailed)
    assert (failed.source, failed.error.kind, failed.refreshing) == (
        FailureSource.CACHE,
        "frontmatter",
        False,
    )
    assert one(effects, LoadFailed)


# Requirement rows: SEC-06
def test_no_prompt_policy_with_a_stored_approval_of_the_new_set_SEC_06() -> None:
    h = example_harness(require_approval=False)
    p_prime = SkillEntry.from_json(ex.entry_json(with_credit_note=True))
    h.load(L, URI, approve=False)
    h.host.approvals.grant(L, URI, p_prime.resource_set, allow_exec=True)
    h.servers[L].skills[URI].files["templates/credit-note.md"] = ex.CREDIT_NOTE
    effects = h.list_all(L)
    assert not one(effects, SkillChanged).requires_reapproval
    assert h.host.exec_gate().decision.value == "allow"


def test_late_error_for_a_superseded_skill_md_read_is_discarded() -> None:
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    send = one(h.host.approve(prompt.prompt_id), SendRequest)
    h.servers[L].skills[URI].files["templates/credit-note.md"] = ex.CREDIT_NOTE
    h.list_all(L)
    assert one(h.host.on_response(L, send.token, error=rpc_error(-32603)), ResponseDiscarded)


def test_forget_keeps_other_origins_prompts() -> None:
    h = example_harness()
    h.add_server("other").add("pdf-processing", ex.FILES)
    h.list_all("other")
    mine = one(h.host.load(L, URI), RequestApproval)
    theirs = one(h.host.load("other", URI), RequestApproval)
    h.host.forget("other")
    assert one(h.host.approve(theirs.prompt_id), Refused).code is RefusalCode.UNKNOWN_PROMPT
    assert one(h.run(h.host.approve(mine.prompt_id)), DeliverToModel)


def test_prompt_message_lists_requested_grants() -> None:
    h = Harness()
    uri = h.add_server("srv").add("t", {"SKILL.md": skill_md("t", extra="hooks: {}\n")})
    h.list_all("srv")
    prompt = one(h.host.load("srv", uri), RequestApproval)
    assert prompt.reason is ApprovalReason.NEW
    assert prompt.message.endswith("It asks for: hooks (ignored unless granted separately).")


# Requirement rows: WG-04
def test_previews_count_against_the_server_budget_WG_04() -> None:
    h = example_harness(per_server_budget_bytes=160)
    assert one(h.run(h.host.preview(L, URI)), PreviewReady).verified
    refused = one(h.host.preview(L, URI, "templates/invoice.md"), Refused)
    assert refused.code is RefusalCode.SERVER_BUDGET
