"""Host registry, listing walks and name resolution: ORG-*, LIST-05..13, GET-02/07/10/11, ERR-07,
ENTRY-07/17/18/20/21/23, CAP-08, SIL-04, SIL-12, SIL-13, SIL-16, SIL-17, SIL-24, URI-15, URI-16,
WG-05.
"""

from __future__ import annotations

from typing import Any

import pytest
from host_helpers import (
    FakeServer,
    Harness,
    get_result,
    kinds,
    list_result,
    of,
    one,
    rpc_error,
    skill_md,
)

from skills_core import EntryOverLimitError, InvalidEntryError, LocalProtocolError, SkillEntry
from skills_core import spec_examples as ex
from skills_core.digest import compute_digest
from skills_core.entry import Limits
from skills_core.errors import EntryProblem
from skills_core.host import (
    DeclineReason,
    DeliverToModel,
    EntryRejected,
    Host,
    HostPolicy,
    ListingComplete,
    ListingPartial,
    ListingWalk,
    LoadDeclined,
    NameCollision,
    NotASkill,
    Notice,
    RefusalCode,
    Refused,
    Registry,
    RegistryUpdated,
    RequestApproval,
    RequestFailed,
    ResolutionStatus,
    SendRequest,
    SkillConfirmed,
    StopReason,
    check_label,
)
from skills_core.messages import server_capabilities
from skills_core.spec import MAX_TOTAL_BYTES


def entry(uri: str, files: dict[str, bytes] | None = None, **frontmatter: Any) -> SkillEntry:
    """A valid entry for ``uri`` whose SKILL.md is generated from its name."""
    root = uri[: -len("/SKILL.md")]
    name = root.rsplit("/", 1)[-1]
    files = files if files is not None else {"SKILL.md": skill_md(name)}
    fields: dict[str, Any] = {"name": name, "description": "d", **frontmatter}
    return SkillEntry.from_json(
        {
            "uri": uri,
            "frontmatter": fields,
            "resources": [
                {"uri": f"{root}/{p}", "digest": compute_digest(d), "size": len(d)}
                for p, d in files.items()
            ],
        }
    )


# --- labels ----------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["docs-server", "a", "Ünïcode-ok", "x" * 64, "a/b", "..", "A"])
# Requirement rows: SIL-24
def test_valid_labels_SIL_24(label: str) -> None:
    assert check_label(label) == label


@pytest.mark.parametrize(
    "label",
    ["", "a:b", "has space", "tab\t", "ctl\x00", "zw\u200b", "x" * 65, "é" * 33, "\ud800", 5],
)
def test_invalid_labels_are_a_configuration_error(label: object) -> None:
    with pytest.raises(LocalProtocolError) as info:
        check_label(label)
    assert info.value.kind == "bad-label"
    with pytest.raises(LocalProtocolError):
        Host().connect(label, server_capabilities(directory_read=False))  # type: ignore[arg-type]


# Requirement rows: ORG-05
def test_labels_are_host_assigned_never_server_info_ORG_05() -> None:
    """Two servers that both call themselves "github" are told apart by their labels."""
    h = Harness()
    for label in ("github-a", "github-b"):
        server = h.add_server(label)
        server.add("refunds")
    for label in ("github-a", "github-b"):
        h.list_all(label)
    assert {o for o, _ in h.host.registry.entries()} == {"github-a", "github-b"}


# --- identity --------------------------------------------------------------------------------


# Requirement rows: ORG-01, ORG-03
def test_same_uri_on_two_servers_is_two_skills_ORG_01_ORG_03() -> None:
    h = Harness()
    a, b = h.add_server("a"), h.add_server("b")
    uri = a.add("refunds")
    b.add("refunds", {"SKILL.md": skill_md("refunds", "other")})
    h.list_all("a")
    h.list_all("b")
    assert h.host.registry.get("a", uri) != h.host.registry.get("b", uri)
    resolution = h.host.resolve(uri)
    assert resolution.status is ResolutionStatus.AMBIGUOUS
    assert [c.origin for c in resolution.candidates] == ["a", "b"]
    assert h.host.resolve(f"a:{uri}").unique is not None
    # Approving one never approves the other (ORG-03).
    h.load("a", uri)
    effects = h.host.load("b", uri)
    assert one(effects, RequestApproval).origin == "b"


# Requirement rows: LIST-13, VER-12
def test_listing_records_entries_and_fetches_nothing_LIST_13_VER_12() -> None:
    h = Harness()
    server = h.add_server("docs-server")
    server.add("pdf-processing", ex.FILES)
    effects = h.list_all("docs-server")
    assert kinds(effects) == ["SendRequest", "RegistryUpdated", "ListingComplete"]
    assert h.methods() == ["skills/list"]
    [item] = h.host.catalog()
    assert item.qualified == "docs-server:pdf-processing"
    assert item.model_line.startswith(
        '- docs-server:pdf-processing (MCP skill served by "docs-server"'
    )


# Requirement rows: ORG-07, ORG-16
def test_catalog_marks_origin_and_dynamic_ORG_07_ORG_16() -> None:
    h = Harness()
    server = h.add_server("srv")
    server.add("reports/daily", dynamic=True)
    h.list_all("srv")
    [item] = h.host.catalog("srv")
    assert item.dynamic
    assert "cannot be verified" in item.model_line
    assert '"srv"' in item.model_line


# --- listing walks ---------------------------------------------------------------------------


# Requirement rows: LIST-07
def test_pagination_follows_next_cursor_until_absent_LIST_07() -> None:
    h = Harness()
    server = h.add_server("srv", FakeServer(page_size=2))
    for name in ("a", "b", "c"):
        server.add(name)
    effects = h.list_all("srv")
    sends = of(effects, SendRequest)
    assert len(sends) == 2
    assert "cursor" not in sends[0].params
    assert sends[1].params["cursor"] == "2"
    done = one(effects, ListingComplete)
    assert (done.pages, done.entries) == (2, 3)
    assert h.host.registry.count("srv") == 3


# Requirement rows: SIL-17, WG-05
def test_repeated_cursor_stops_the_walk_SIL_17_WG_05() -> None:
    h = Harness()
    server = h.add_server("srv")
    server.overrides.append(lambda m, p: ("result", list_result([], "again")))
    effects = h.list_all("srv")
    assert len(of(effects, SendRequest)) == 2
    partial = one(effects, ListingPartial)
    assert partial.reason is StopReason.REPEATED_CURSOR
    assert not of(effects, Notice)  # the stop is told once, by ListingPartial


# Requirement rows: WG-05
def test_endless_new_cursors_stop_at_the_page_cap_WG_05() -> None:
    h = Harness(max_pages=3)
    server = h.add_server("srv")
    counter = iter(range(1000))
    server.overrides.append(lambda m, p: ("result", list_result([], f"c{next(counter)}")))
    effects = h.list_all("srv")
    assert len(of(effects, SendRequest)) == 3
    assert one(effects, ListingPartial).reason is StopReason.PAGE_CAP


# Requirement rows: WG-05, ENTRY-23
def test_entry_cap_marks_the_listing_partial_WG_05_ENTRY_23() -> None:
    h = Harness(max_entries=3)
    server = h.add_server("srv", FakeServer(page_size=2))
    for name in "abcde":
        server.add(name)
    effects = h.list_all("srv")
    partial = one(effects, ListingPartial)
    assert partial.reason is StopReason.ENTRY_CAP
    assert h.host.registry.count("srv") == 3


def test_entry_cap_reached_exactly_with_a_cursor_left() -> None:
    h = Harness(max_entries=2)
    server = h.add_server("srv", FakeServer(page_size=2))
    for name in "abcd":
        server.add(name)
    effects = h.list_all("srv")
    assert one(effects, ListingPartial).reason is StopReason.ENTRY_CAP
    assert len(of(effects, SendRequest)) == 1


# Requirement rows: ENTRY-23
def test_ten_thousand_entries_are_all_registered_ENTRY_23() -> None:
    h = Harness()
    server = h.add_server("srv", FakeServer(page_size=2500))
    body = skill_md("x")
    digest = compute_digest(body)
    entries = [
        {
            "uri": f"skill://s{i}/x/SKILL.md",
            "frontmatter": {"name": "x", "description": "d"},
            "resources": [{"uri": f"skill://s{i}/x/SKILL.md", "digest": digest, "size": len(body)}],
        }
        for i in range(10_000)
    ]

    def pages(method: str, params: dict[str, Any]) -> tuple[str, Any]:
        start = int(params.get("cursor", "0"))
        nxt = str(start + 2500) if start + 2500 < 10_000 else None
        return "result", list_result(entries[start : start + 2500], nxt)

    server.overrides.append(pages)
    effects = h.list_all("srv")
    assert one(effects, ListingComplete).entries == 10_000
    assert h.host.registry.count() == 10_000
    assert h.host.resolve("x").status is ResolutionStatus.AMBIGUOUS


def test_listing_in_progress_is_refused() -> None:
    h = Harness()
    h.add_server("srv")
    first = h.host.list_skills("srv")
    assert one(h.host.list_skills("srv"), Refused).code is RefusalCode.LISTING_IN_PROGRESS
    h.run(first)
    assert one(h.run(h.host.list_skills("srv")), ListingComplete)


def test_listing_error_and_malformed_result_are_partial() -> None:
    h = Harness()
    server = h.add_server("srv")
    server.overrides.append(lambda m, p: ("error", rpc_error(-32603, "boom")))
    effects = h.list_all("srv")
    assert one(effects, RequestFailed).code == -32603
    assert one(effects, ListingPartial).reason is StopReason.REQUEST_FAILED
    server.overrides[:] = [lambda m, p: ("result", {"skills": "nope"})]
    effects = h.list_all("srv")
    assert one(effects, ListingPartial).reason is StopReason.MALFORMED_RESULT
    assert one(effects, RequestFailed).error is not None


# Requirement rows: ENTRY-07, SIL-12
def test_invalid_entries_are_kept_out_with_reasons_siblings_kept_ENTRY_07_SIL_12() -> None:
    h = Harness()
    server = h.add_server("srv")
    good = server.add("good")
    bad = {"uri": "skill://bad/SKILL.md", "frontmatter": {"name": "bad", "description": "d"}}
    server.overrides.append(
        lambda m, p: (
            ("result", list_result([server.entry(good), bad, {"uri": 5}]))
            if m == "skills/list"
            else None
        )
    )
    effects = h.list_all("srv")
    rejected = of(effects, EntryRejected)
    assert [r.uri for r in rejected] == ["skill://bad/SKILL.md", None]
    assert not rejected[0].over_limit
    assert h.host.registry.get("srv", good) is not None
    assert {r.uri for r in h.host.registry.rejected("srv")} == {"skill://bad/SKILL.md", None}
    # The invalid one is never loaded and nothing is sent for it (ENTRY-07).
    sent = len(h.sent)
    declined = one(h.host.load("srv", "skill://bad/SKILL.md"), LoadDeclined)
    assert declined.reason is DeclineReason.INVALID_ENTRY
    assert "resources" in declined.message
    assert len(h.sent) == sent
    # It shows up in resolution with its problem, for `list`-style displays.
    [candidate] = h.host.resolve("skill://bad/SKILL.md").candidates
    assert candidate.problem is not None


def over_limit_entry(count: int, total: int | None = None) -> dict[str, Any]:
    body = skill_md("big")
    resources = [{"uri": "skill://big/SKILL.md", "digest": compute_digest(body), "size": len(body)}]
    sizes = [1] * (count - 1)
    if total is not None:
        sizes[-1] = total - len(body) - (count - 2)
    for index, size in enumerate(sizes):
        resources.append(
            {"uri": f"skill://big/f{index}", "digest": f"sha256:{index + 1:064x}", "size": size}
        )
    return {
        "uri": "skill://big/SKILL.md",
        "frontmatter": {"name": "big", "description": "d"},
        "resources": resources,
    }


# Requirement rows: ENTRY-20, ENTRY-21
def test_513_files_are_refused_from_the_entry_alone_ENTRY_20_ENTRY_21() -> None:
    h = Harness()
    server = h.add_server("srv")
    server.overrides.append(lambda m, p: ("result", list_result([over_limit_entry(513)])))
    effects = h.list_all("srv")
    rejected = one(effects, EntryRejected)
    assert rejected.over_limit
    assert isinstance(rejected.error, EntryOverLimitError)
    sent = len(h.sent)
    declined = one(h.host.load("srv", "skill://big/SKILL.md"), LoadDeclined)
    assert declined.reason is DeclineReason.OVER_LIMIT
    assert "513 files; the limit is 512" in declined.message
    assert len(h.sent) == sent


# Requirement rows: ENTRY-17, ENTRY-18
def test_limits_are_inclusive_ENTRY_17_and_may_be_raised_ENTRY_18() -> None:
    exact = over_limit_entry(512, MAX_TOTAL_BYTES)
    assert sum(r["size"] for r in exact["resources"]) == MAX_TOTAL_BYTES
    h = Harness()
    server = h.add_server("srv")
    server.overrides.append(lambda m, p: ("result", list_result([exact])))
    assert not of(h.list_all("srv"), EntryRejected)
    h2 = Harness(limits=Limits(max_resources=1024))
    server2 = h2.add_server("srv")
    server2.overrides.append(lambda m, p: ("result", list_result([over_limit_entry(513)])))
    assert not of(h2.list_all("srv"), EntryRejected)


# Requirement rows: SIL-04
def test_same_skill_twice_with_different_manifests_is_refetched_once_SIL_04() -> None:
    h = Harness()
    server = h.add_server("srv", FakeServer(page_size=1))
    uri = server.add("dup")
    honest = server.entry(uri)
    other = entry(uri, {"SKILL.md": skill_md("dup"), "x.md": b"x"}).to_json()
    pages = [list_result([honest], "1"), list_result([other, honest], "2"), list_result([other])]

    def paged(method: str, params: dict[str, Any]) -> tuple[str, Any] | None:
        if method != "skills/list":
            return None
        return "result", pages[int(params.get("cursor", "0"))]

    server.overrides.append(paged)
    effects = h.list_all("srv")
    gets = [s for s in of(effects, SendRequest) if s.method == "skills/get"]
    assert len(gets) == 1
    assert one(effects, EntryRejected).error.problems[0].code == "listed-twice"
    # The skills/get answer (the honest entry) is what the registry ends up with.
    assert h.host.registry.get("srv", uri) == SkillEntry.from_json(honest)


# Requirement rows: SIL-04
def test_identical_duplicates_are_deduplicated_SIL_04() -> None:
    h = Harness()
    server = h.add_server("srv")
    uri = server.add("dup")
    server.overrides.append(
        lambda m, p: (
            ("result", list_result([server.entry(uri), server.entry(uri)]))
            if m == "skills/list"
            else None
        )
    )
    effects = h.list_all("srv")
    assert not of(effects, EntryRejected)
    assert h.methods() == ["skills/list"]


# --- capability gating -----------------------------------------------------------------------


# Requirement rows: CAP-08
def test_no_skills_requests_before_the_declaration_CAP_08() -> None:
    host = Host()
    uri = "skill://a/SKILL.md"
    assert one(host.list_skills("srv"), Refused).code is RefusalCode.UNKNOWN_ORIGIN
    assert one(host.get_skill("srv", uri), Refused).code is RefusalCode.UNKNOWN_ORIGIN
    host.connect("srv", {"resources": {}})
    for effects in (
        host.list_skills("srv"),
        host.get_skill("srv", uri),
        host.load("srv", uri),
        host.refresh("srv", uri),
        host.preview("srv", uri),
    ):
        assert one(effects, Refused).code is RefusalCode.EXTENSION_NOT_DECLARED
    assert host.pending_requests == 0


def test_extension_without_resources_is_not_used_SIL_16() -> None:
    host = Host()
    effects = host.connect("srv", {"extensions": {"io.modelcontextprotocol/skills": {}}})
    assert "SIL-16" in one(effects, Notice).message
    assert one(host.list_skills("srv"), Refused).code is RefusalCode.EXTENSION_NOT_DECLARED


def test_disconnected_origin_is_refused() -> None:
    h = Harness()
    h.add_server("srv")
    h.host.disconnect("srv")
    assert one(h.host.list_skills("srv"), Refused).code is RefusalCode.NOT_CONNECTED
    assert one(h.host.get_skill("srv", "skill://a/SKILL.md"), Refused).code is (
        RefusalCode.NOT_CONNECTED
    )
    assert one(h.host.disconnect("nope"), Refused).code is RefusalCode.UNKNOWN_ORIGIN
    assert one(h.host.forget("nope"), Refused).code is RefusalCode.UNKNOWN_ORIGIN
    # Reconnecting under the same label restores it.
    h.host.connect("srv", h.servers["srv"].capabilities())
    assert of(h.host.list_skills("srv"), SendRequest)


# --- skills/get ------------------------------------------------------------------------------


# Requirement rows: URI-15, URI-16, GET-10
def test_explicit_reference_is_confirmed_with_skills_get_URI_15_URI_16_GET_10() -> None:
    h = Harness()
    server = h.add_server("srv")
    uri = server.add("pdf-processing", ex.FILES)
    server.hidden.add(uri)
    h.list_all("srv")
    assert h.host.registry.count() == 0
    effects = h.run(h.host.get_skill("srv", uri))
    assert one(effects, SkillConfirmed).uri == uri
    assert one(effects, RegistryUpdated).added == (uri,)
    assert h.methods() == ["skills/list", "skills/get"]
    # A second confirmation of an unchanged entry reports no registry change.
    assert not of(h.run(h.host.get_skill("srv", uri)), RegistryUpdated)


@pytest.mark.parametrize("uri", ["skill://a", "skill://a/x.md", "skill://a/skill.md", "file:///x"])
# Requirement rows: GET-02
def test_get_needs_a_skill_md_uri_GET_02(uri: str) -> None:
    h = Harness()
    h.add_server("srv")
    assert one(h.host.get_skill("srv", uri), Refused).code is RefusalCode.NOT_SKILL_MD_URI
    assert one(h.host.load("srv", uri), Refused).code is RefusalCode.NOT_SKILL_MD_URI
    assert h.host.pending_requests == 0


# Requirement rows: ERR-07
def test_minus_32602_means_not_a_skill_registry_unchanged_ERR_07() -> None:
    h = Harness()
    h.add_server("srv")
    effects = h.run(h.host.get_skill("srv", "skill://acme/billing/chargebacks/SKILL.md"))
    assert "chargebacks" in one(effects, NotASkill).message
    assert h.host.registry.count() == 0
    assert not of(effects, RegistryUpdated)


# Requirement rows: SIL-13
def test_get_answer_for_another_uri_is_rejected_SIL_13() -> None:
    h = Harness()
    server = h.add_server("srv")
    other = server.add("b")
    server.overrides.append(lambda m, p: ("result", get_result(server.entry(other))))
    effects = h.run(h.host.get_skill("srv", "skill://a/SKILL.md"))
    rejected = one(effects, EntryRejected)
    assert rejected.error.problems[0].code == "uri-mismatch"
    assert h.host.registry.get("srv", "skill://a/SKILL.md") is None
    assert h.host.registry.get("srv", other) is None


def test_malformed_get_result_and_errors() -> None:
    h = Harness()
    server = h.add_server("srv")
    server.overrides.append(lambda m, p: ("result", {"resultType": "complete"}))
    effects = h.run(h.host.get_skill("srv", "skill://a/SKILL.md"))
    assert one(effects, RequestFailed).error is not None
    server.overrides[:] = [lambda m, p: ("error", rpc_error(-32603, "internal"))]
    effects = h.run(h.host.get_skill("srv", "skill://a/SKILL.md"))
    assert one(effects, RequestFailed).code == -32603


# Requirement rows: LIST-05, LIST-06
def test_empty_listing_is_no_proof_load_by_uri_LIST_05_LIST_06() -> None:
    h = Harness()
    server = h.add_server("docs-server")
    uri = server.add("pdf-processing", ex.FILES)
    server.hidden.add(uri)
    h.list_all("docs-server")
    effects = h.load("docs-server", uri)
    assert h.methods() == ["skills/list", "skills/get", "resources/read"]
    assert one(effects, DeliverToModel).verified


# Requirement rows: LIST-12
def test_listed_entry_needs_no_get_LIST_12() -> None:
    h = Harness()
    server = h.add_server("docs-server")
    uri = server.add("pdf-processing", ex.FILES)
    h.list_all("docs-server")
    h.load("docs-server", uri)
    assert h.methods() == ["skills/list", "resources/read"]


# Requirement rows: GET-07
def test_refresh_is_exactly_one_get_GET_07() -> None:
    h = Harness()
    server = h.add_server("srv")
    uri = server.add("a")
    h.list_all("srv")
    effects = h.host.refresh("srv", uri)
    assert [s.method for s in of(effects, SendRequest)] == ["skills/get"]
    h.run(effects)
    assert one(h.host.refresh("srv", "skill://a"), Refused).code is RefusalCode.NOT_SKILL_MD_URI


# --- names -----------------------------------------------------------------------------------


# Requirement rows: ORG-11, ORG-12
def test_same_name_in_one_origin_is_disambiguated_by_path_ORG_11_ORG_12() -> None:
    h = Harness()
    server = h.add_server("docs")
    billing = server.add("acme/billing/refunds")
    support = server.add("acme/support/refunds")
    top = server.add("refunds")
    nested = server.add("refunds/x/refunds")
    h.list_all("docs")
    registry = h.host.registry
    assert registry.display_name("docs", billing) == "billing/refunds"
    assert registry.display_name("docs", support) == "support/refunds"
    assert registry.display_name("docs", nested) == "x/refunds"
    assert registry.display_name("docs", top) == top  # no unique suffix: the URI itself
    bare = h.host.resolve("refunds")
    assert bare.status is ResolutionStatus.AMBIGUOUS
    assert len(bare.candidates) == 4
    assert "docs:billing/refunds" in bare.message
    assert h.host.resolve("docs:refunds").status is ResolutionStatus.AMBIGUOUS
    assert h.host.resolve("docs:billing/refunds").unique is not None
    assert h.host.resolve("billing/refunds").unique is not None
    assert h.host.resolve(f"docs:{top}").unique is not None


# Requirement rows: ORG-12
def test_same_path_under_two_schemes_uses_the_uri_ORG_12() -> None:
    h = Harness()
    server = h.add_server("docs")
    a = server.add("team/refunds")
    b = server.add("team/refunds", scheme="github")
    h.list_all("docs")
    assert h.host.registry.display_name("docs", a) == a
    assert h.host.registry.display_name("docs", b) == b


# Requirement rows: ORG-13, ORG-15
def test_name_shared_by_three_origins_is_never_resolved_silently_ORG_13_ORG_15() -> None:
    h = Harness()
    collisions: list[NameCollision] = []
    for label in ("alpha", "beta", "gamma"):
        server = h.add_server(label)
        server.add("code-review")
        collisions.extend(of(h.list_all(label), NameCollision))
    assert [len(c.candidates) for c in collisions] == [2, 3]
    resolution = h.host.resolve("code-review")
    assert resolution.status is ResolutionStatus.AMBIGUOUS
    assert [c.qualified for c in resolution.candidates] == [
        "alpha:code-review",
        "beta:code-review",
        "gamma:code-review",
    ]
    assert resolution.unique is None
    for label in ("alpha", "beta", "gamma"):
        resolved = h.host.resolve(f"{label}:code-review").unique
        assert resolved is not None
        assert resolved.origin == label
    # Forgetting two of them never silently retargets the bare name (ORG-14).
    h.host.forget("alpha")
    h.host.forget("beta")
    left = h.host.resolve("code-review")
    assert left.status is ResolutionStatus.REQUIRES_QUALIFICATION
    assert left.candidates[0].qualified == "gamma:code-review"


# Requirement rows: ORG-14
def test_mcp_skill_named_like_a_local_one_never_shadows_it_ORG_14() -> None:
    h = Harness()
    assert h.host.register_local_skill("code-review", "/home/u/.skills/code-review") == []
    server = h.add_server("evil")
    server.add("code-review")
    collision = one(h.list_all("evil"), NameCollision)
    assert [c.is_local for c in collision.candidates] == [True, False]
    resolution = h.host.resolve("code-review")
    assert resolution.status is ResolutionStatus.AMBIGUOUS
    assert resolution.candidates[0].location == "/home/u/.skills/code-review"
    assert "(local)" in resolution.message
    # Removing the local skill does not retarget the bare name to the MCP one.
    h.host.unregister_local_skill("code-review")
    assert h.host.resolve("code-review").status is ResolutionStatus.REQUIRES_QUALIFICATION
    assert h.host.resolve("evil:code-review").unique is not None


# Requirement rows: ORG-14
def test_local_skill_registered_after_the_mcp_one_collides_too_ORG_14() -> None:
    h = Harness()
    h.add_server("srv").add("lint")
    h.list_all("srv")
    assert h.host.resolve("lint").unique is not None
    collision = one(h.host.register_local_skill("lint"), NameCollision)
    assert len(collision.candidates) == 2
    assert h.host.resolve("lint").status is ResolutionStatus.AMBIGUOUS
    # A local-only name resolves to the local skill.
    h.host.register_local_skill("only-local")
    assert h.host.resolve("only-local").unique is not None


def test_resolution_not_found_cases() -> None:
    h = Harness()
    h.add_server("srv").add("a")
    h.list_all("srv")
    for query in (
        "nope",
        "other:a",
        "srv:nope",
        "skill://zzz/SKILL.md",
        "srv:skill://zzz/SKILL.md",
    ):
        resolution = h.host.resolve(query)
        assert resolution.status is ResolutionStatus.NOT_FOUND
        assert resolution.candidates == ()


def test_registry_unit_operations() -> None:
    registry = Registry()
    e = entry("skill://a/SKILL.md")
    registry.put("o", e)
    assert registry.remove("o", "skill://missing/SKILL.md") is None
    assert registry.remove("zz", e.uri) is None
    problem = InvalidEntryError((EntryProblem(code="x", pointer="", message="m"),))
    for _ in range(1002):
        registry.reject(EntryRejected(origin="o", uri=None, error=problem))
    assert len(registry.rejected("o")) == 1000
    registry.reject(EntryRejected(origin="o", uri=e.uri, error=problem))
    assert registry.get("o", e.uri) is None
    record = registry.rejection("o", e.uri)
    assert record is not None
    assert not record.over_limit
    registry.put("o", e)
    assert registry.rejection("o", e.uri) is None
    registry.forget_origin("o")
    assert registry.count() == 0
    assert registry.rejected() == ()
    assert not registry.is_contested("a")


def test_listing_walk_unit() -> None:
    walk = ListingWalk(max_pages=5, max_entries=100)
    assert walk.record_page(3, "a").cursor == "a"
    step = walk.record_page(3, "a")
    assert step.done
    assert step.stop is StopReason.REPEATED_CURSOR
    assert ListingWalk(max_pages=1, max_entries=9).record_page(0, None).stop is None


def test_without_a_page_cap_pages_are_bounded_by_entries_WG_05_SIL_17() -> None:
    """The default walk has no page cap of its own: 10,000 entries in pages of one are read whole,
    and a server answering empty pages with fresh cursors stops at the entry cap."""
    assert HostPolicy().max_pages is None
    walk = ListingWalk(max_pages=None, max_entries=10_000)
    for page in range(9_999):
        assert walk.record_page(1, f"c{page}").cursor == f"c{page}"
    assert walk.record_page(1, None).stop is None  # the 10,000th entry, and the end
    assert (walk.pages, walk.entries) == (10_000, 10_000)
    empty = ListingWalk(max_pages=None, max_entries=50)
    steps = [empty.record_page(0, f"c{page}") for page in range(50)]
    assert all(step.cursor is not None for step in steps[:-1])
    assert steps[-1].stop is StopReason.ENTRY_CAP
    assert "50 pages" in steps[-1].message
    assert "the cap, 50 entries" in steps[-1].message
    with pytest.raises(ValueError, match="max_pages must be None or a positive int"):
        HostPolicy(max_pages=0)


def test_a_catalog_in_small_pages_is_listed_whole_by_a_default_host_WG_05() -> None:
    """3,000 skills in pages of 50 (60 pages): all of them, no partial listing."""
    h = Harness()
    server = h.add_server("srv")
    for index in range(3_000):
        server.add(f"s{index}", {"SKILL.md": skill_md(f"s{index}")})
    server.page_size = 50
    effects = h.list_all("srv")
    assert not of(effects, ListingPartial)
    assert h.host.registry.count("srv") == 3_000


# Requirement rows: WG-05
def test_rejected_entries_count_toward_the_entry_cap_WG_05() -> None:
    h = Harness(max_entries=1)
    server = h.add_server("srv")
    good = server.add("good")
    server.overrides.append(
        lambda m, p: ("result", list_result([server.entry(good), {"uri": "skill://x/SKILL.md"}]))
    )
    effects = h.list_all("srv")
    assert not of(effects, EntryRejected)
    assert one(effects, ListingPartial).reason is StopReason.ENTRY_CAP


def test_removing_one_of_two_same_named_skills_keeps_the_other() -> None:
    registry = Registry()
    a = entry("skill://x/a/SKILL.md")
    b = entry("skill://y/a/SKILL.md")
    registry.put("o", a)
    registry.put("o", b)
    assert registry.display_name("o", a.uri) == "x/a"
    registry.remove("o", a.uri)
    assert registry.display_name("o", b.uri) == "a"


def test_catalog_lines_are_one_line_and_bounded() -> None:
    h = Harness()
    server = h.add_server("srv")
    server.add("long", frontmatter={"name": "long", "description": "x\n" * 400})
    h.list_all("srv")
    [item] = h.host.catalog()
    assert "\n" not in item.model_line
    assert item.model_line.endswith("...")
