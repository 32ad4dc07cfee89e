"""Content-bound approvals, persistence, grants and gates: APR-*, SEC-02/04/06/09, ORG-03, VER-15,
SIL-18, SIL-19, SIL-25, WG-08, ENTRY-14, ENTRY-16.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from host_helpers import FakeServer, Harness, example_harness, kinds, list_result, of, one, skill_md

from skills_core import spec_examples as ex
from skills_core.host import (
    APPROVALS_FORMAT_VERSION,
    ApprovalGranted,
    ApprovalReason,
    ApprovalRecord,
    ApprovalRevoked,
    ApprovalsFileError,
    ApprovalStore,
    CrossOriginPolicy,
    DeclineReason,
    DeliverToModel,
    DeliveryKind,
    ExecDecision,
    Host,
    HostPolicy,
    LoadDeclined,
    LoadState,
    ManifestChanges,
    Notice,
    RefusalCode,
    Refused,
    RequestApproval,
    RequestCrossOriginApproval,
    SendRequest,
    SkillChanged,
    manifest_changes,
)

L = ex.ORIGIN_LABEL
URI = ex.SKILL_MD_URI
D = "sha256:" + "d" * 64
E = "sha256:" + "e" * 64


def p_set(with_credit_note: bool = False) -> frozenset[tuple[str, str, int]]:
    files = ex.FILES_WITH_CREDIT_NOTE if with_credit_note else ex.FILES
    return frozenset(
        (f"skill://pdf-processing/{p}", ex.EXPECTED[p][1], ex.EXPECTED[p][0]) for p in files
    )


# --- the store -------------------------------------------------------------------------------


# Requirement rows: APR-01, APR-02
def test_approval_is_bound_to_the_exact_set_APR_01_APR_02() -> None:
    store = ApprovalStore()
    record = store.grant(L, URI, p_set())
    assert record.resources == p_set()  # every (uri, digest, size) of P (SPEC example)
    assert store.approved(L, URI, p_set()) == record
    invoice = "skill://pdf-processing/templates/invoice.md"
    po = "skill://pdf-processing/templates/purchase-order.md"
    rotated = frozenset((u, D if u == invoice else d, s) for u, d, s in p_set())
    removed = frozenset(k for k in p_set() if k[0] != po)
    resized = frozenset((u, d, s + 1 if u == invoice else s) for u, d, s in p_set())
    for other in (rotated, p_set(with_credit_note=True), removed, resized):  # (a), (b), (c), SIL-18
        assert store.approved(L, URI, other) is None
    # (d) the same set in another order is the same set (SIL-19).
    assert store.approved(L, URI, frozenset(sorted(p_set(), reverse=True))) is not None


# Requirement rows: APR-02
def test_observe_revokes_on_any_other_set_and_keeps_history_APR_02() -> None:
    store = ApprovalStore()
    store.grant(L, URI, p_set())
    assert store.observe(L, URI, p_set()) is None
    before = store.observe(L, URI, p_set(with_credit_note=True))
    assert before is not None
    assert not before.revoked
    record = store.record(L, URI)
    assert record is not None
    assert record.revoked
    assert store.approved(L, URI, p_set()) is None
    assert store.observe(L, URI, p_set()) is None  # already revoked: nothing more to revoke
    # (e) a switch to "dynamic" revokes.
    store.grant(L, URI, p_set())
    assert store.observe(L, URI, None) is not None
    assert store.revoke(L, URI) is None
    store.grant(L, URI, p_set())
    assert store.revoke(L, URI) is not None
    assert store.revoke("nobody", URI) is None


# Requirement rows: ORG-03
def test_keys_are_label_and_uri_never_uri_alone_ORG_03() -> None:
    store = ApprovalStore()
    store.grant("a", URI, p_set())
    assert store.approved("b", URI, p_set()) is None
    assert store.forget_origin("a") == 1
    assert len(store) == 0


# Requirement rows: APR-04
def test_dynamic_skills_are_never_recorded_APR_04() -> None:
    with pytest.raises(ValueError, match="dynamic"):
        ApprovalStore().grant(L, "skill://reports/daily/SKILL.md", frozenset())


def test_exec_grant_is_bound_to_the_set() -> None:
    store = ApprovalStore()
    store.grant(L, URI, p_set(), allow_exec=True)
    record = store.approved(L, URI, p_set())
    assert record is not None
    assert record.allow_exec
    store.observe(L, URI, p_set(with_credit_note=True))
    assert store.approved(L, URI, p_set()) is None


def test_duplicate_records_are_refused() -> None:
    record = ApprovalRecord(origin=L, skill_uri=URI, resources=p_set())
    with pytest.raises(ValueError, match="two approval records"):
        ApprovalStore([record, record])


def test_manifest_changes_describe_what_changed() -> None:
    old = frozenset({("skill://s/SKILL.md", D, 1), ("skill://s/a", D, 2), ("skill://s/b", D, 3)})
    new = frozenset({("skill://s/SKILL.md", D, 1), ("skill://s/a", E, 2), ("skill://s/c", E, 4)})
    changes = manifest_changes(old, new, root="skill://s")
    assert changes.added == (("skill://s/c", E, 4),)
    assert changes.removed == (("skill://s/b", D, 3),)
    assert changes.changed == ((("skill://s/a", D, 2), ("skill://s/a", E, 2)),)
    assert changes.describe() == "added c (4 bytes); removed b; changed a (same size, new digest)"
    assert changes.touches("skill://s/a")
    assert changes.touches("skill://s/b")
    assert changes.touches("skill://s/c")
    assert not changes.touches("skill://s/SKILL.md")
    resized = manifest_changes(old, old - {("skill://s/a", D, 2)} | {("skill://s/a", D, 9)})
    assert "2 -> 9 bytes" in resized.describe()
    assert not manifest_changes(old, old)
    assert manifest_changes(old, old).describe() == "no change"
    assert "dynamic" in manifest_changes(old, None).describe()
    assert manifest_changes(None, old).from_dynamic
    assert bool(ManifestChanges(to_dynamic=True))


# --- persistence -----------------------------------------------------------------------------


def test_persistence_round_trip_is_versioned() -> None:
    store = ApprovalStore()
    store.grant(L, URI, p_set(), granted_fields=("allowed-tools",), allow_exec=True)
    store.grant("other", "skill://x/SKILL.md", frozenset({("skill://x/SKILL.md", D, 5)}))
    store.revoke("other", "skill://x/SKILL.md")
    text = store.dumps()
    document = json.loads(text)
    assert document["version"] == APPROVALS_FORMAT_VERSION == 1
    assert document["approvals"][0]["origin"] == L  # both halves of the identity (ORG-02)
    assert document["approvals"][0]["skill"] == URI
    assert document["approvals"][1]["status"] == "revoked"
    loaded = ApprovalStore.loads(text)
    assert list(loaded) == list(store)
    assert loaded.to_json() == store.to_json()
    assert ApprovalStore.loads(text.encode()).dumps() == text


def good_document() -> dict[str, Any]:
    return ApprovalStore([ApprovalRecord(origin=L, skill_uri=URI, resources=p_set())]).to_json()


def mutate(path: list[Any], value: Any, *, delete: bool = False) -> dict[str, Any]:
    document = good_document()
    target: Any = document
    for step in path[:-1]:
        target = target[step]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return document


@pytest.mark.parametrize(
    ("document", "pointer"),
    [
        (mutate(["version"], 2), "/version"),
        (mutate(["version"], True), "/version"),
        (mutate(["version"], "1"), "/version"),
        (mutate(["version"], None, delete=True), ""),
        (mutate(["extra"], 1), ""),
        (mutate(["approvals"], {}), "/approvals"),
        (mutate(["approvals", 0], "x"), "/approvals/0"),
        (mutate(["approvals", 0, "expires"], "2027"), "/approvals/0"),
        (mutate(["approvals", 0, "exec"], None, delete=True), "/approvals/0"),
        (mutate(["approvals", 0, "origin"], ""), "/approvals/0/origin"),
        (mutate(["approvals", 0, "skill"], 5), "/approvals/0/skill"),
        (mutate(["approvals", 0, "skill"], "skill://a/README.md"), "/approvals/0/skill"),
        (mutate(["approvals", 0, "status"], "maybe"), "/approvals/0/status"),
        (mutate(["approvals", 0, "resources"], []), "/approvals/0/resources"),
        (mutate(["approvals", 0, "resources", 0], 1), "/approvals/0/resources/0"),
        (mutate(["approvals", 0, "resources", 0, "mtime"], 1), "/approvals/0/resources/0"),
        (mutate(["approvals", 0, "resources", 0, "uri"], ""), "/approvals/0/resources/0/uri"),
        (
            mutate(["approvals", 0, "resources", 0, "digest"], "sha256:AB"),
            "/approvals/0/resources/0/digest",
        ),
        (mutate(["approvals", 0, "resources", 0, "size"], True), "/approvals/0/resources/0/size"),
        (mutate(["approvals", 0, "resources", 0, "size"], -1), "/approvals/0/resources/0/size"),
        (mutate(["approvals", 0, "grants"], ["a", "a"]), "/approvals/0/grants"),
        (mutate(["approvals", 0, "grants"], [""]), "/approvals/0/grants"),
        (mutate(["approvals", 0, "grants"], "allowed-tools"), "/approvals/0/grants"),
        (mutate(["approvals", 0, "exec"], "yes"), "/approvals/0/exec"),
    ],
)
def test_malformed_or_unknown_documents_raise_a_typed_error(
    document: dict[str, Any], pointer: str
) -> None:
    with pytest.raises(ApprovalsFileError) as info:
        ApprovalStore.from_json(document)
    assert info.value.kind == "approvals-file"
    assert info.value.pointer == pointer


def test_duplicate_uris_and_records_and_bad_json_are_refused() -> None:
    document = good_document()
    resources = document["approvals"][0]["resources"]
    resources.append(dict(resources[0]))
    with pytest.raises(ApprovalsFileError, match="listed twice"):
        ApprovalStore.from_json(document)
    document = good_document()
    document["approvals"].append(document["approvals"][0])
    with pytest.raises(ApprovalsFileError, match="second record"):
        ApprovalStore.from_json(document)
    for text in ("", "[", '{"version": 1, "version": 1, "approvals": []}', '{"v": NaN}'):
        with pytest.raises(ApprovalsFileError, match="not valid JSON"):
            ApprovalStore.loads(text)
    with pytest.raises(ApprovalsFileError, match="object"):
        ApprovalStore.from_json([])
    assert len(ApprovalStore.loads('{"version": 1, "approvals": []}')) == 0


# --- through the host ------------------------------------------------------------------------


# Requirement rows: APR-01
def test_a_persisted_approval_of_the_exact_set_needs_no_prompt_APR_01() -> None:
    h = example_harness()
    h.load(L, URI)
    saved = h.host.approvals.dumps()
    # A new host (a restart) with the saved approvals loads without asking.
    h2 = Harness(Host(approvals=ApprovalStore.loads(saved)))
    h2.add_server(L).add("pdf-processing", ex.FILES)
    h2.list_all(L)
    effects = h2.load(L, URI, approve=False)
    assert not of(effects, RequestApproval)
    assert one(effects, DeliverToModel).verified


def test_no_approval_of_a_server_or_of_its_other_skills_approves_a_skill_SEC_02() -> None:
    """Skills are a riskier surface than tools: nothing approves a skill but its own manifest.

    The default policy asks for every skill; approving one skill of a server, even every other
    one, gives the next skill of that server nothing; and no policy setting approves by server.
    """
    assert HostPolicy().require_approval is True
    assert not [f for f in HostPolicy.__dataclass_fields__ if "trust" in f or "auto" in f]
    h = Harness()
    server = h.add_server("srv")
    uris = [server.add(name, {"SKILL.md": skill_md(name)}) for name in ("one", "two", "three")]
    h.list_all("srv")
    for uri in uris[:2]:
        h.load("srv", uri)  # approved by the harness
    prompt = one(h.host.load("srv", uris[2]), RequestApproval)
    assert (prompt.origin, prompt.uri, prompt.reason) == ("srv", uris[2], ApprovalReason.NEW)


# Requirement rows: APR-02, VER-09
def test_a_changed_listing_revokes_and_reprompts_with_the_diff_APR_02_VER_09() -> None:
    h = example_harness()
    h.load(L, URI)
    h.host.close(L, URI)
    h.servers[L].skills[URI].files["templates/credit-note.md"] = ex.CREDIT_NOTE
    effects = h.list_all(L)
    revoked = one(effects, ApprovalRevoked)
    assert "added templates/credit-note.md (39 bytes)" in revoked.message
    effects = h.host.load(L, URI)
    prompt = one(effects, RequestApproval)
    assert prompt.reason is ApprovalReason.CHANGED
    assert prompt.changes is not None
    assert "credit-note" in prompt.message
    assert not of(effects, SendRequest)  # re-prompt before loading (APR-02)


# Requirement rows: VER-15, SEC-09
def test_identical_content_on_another_server_inherits_nothing_VER_15_SEC_09() -> None:
    h = example_harness()
    h.load(L, URI)
    h.add_server("mirror").add("pdf-processing", ex.FILES)
    h.list_all("mirror")
    effects = h.load("mirror", URI, approve=False)
    assert one(effects, RequestApproval).origin == "mirror"
    # Without an approval there is no load, even though every digest would verify.
    effects = h.run(h.host.deny(one(effects, RequestApproval).prompt_id))
    assert one(effects, LoadDeclined).reason is DeclineReason.DENIED
    assert not of(effects, DeliverToModel)
    assert [s.method for s in h.sent].count("resources/read") == 1


# Requirement rows: ENTRY-16
def test_dynamic_skills_are_declined_by_default_ENTRY_16() -> None:
    h = Harness()
    h.add_server("srv").add("reports/daily", dynamic=True)
    h.list_all("srv")
    effects = h.host.load("srv", "skill://reports/daily/SKILL.md")
    assert one(effects, LoadDeclined).reason is DeclineReason.DYNAMIC
    assert not of(effects, Notice)  # the decline is told once
    assert h.methods() == ["skills/list"]


# Requirement rows: APR-04
def test_dynamic_approval_is_per_load_and_never_persisted_APR_04() -> None:
    h = Harness(allow_dynamic=True)
    uri = h.add_server("srv").add("reports/daily", dynamic=True)
    h.list_all("srv")
    for _ in range(2):
        effects = h.load("srv", uri)
        prompt = one(effects, RequestApproval)
        assert prompt.dynamic
        assert prompt.reason is ApprovalReason.DYNAMIC
        assert prompt.manifest == "dynamic"
        assert "generated" in prompt.message
        assert not one(effects, ApprovalGranted).persisted
        delivered = one(effects, DeliverToModel)
        assert not delivered.verified
        assert "NOT verified" in delivered.model_text
        h.host.close("srv", uri)
    assert len(h.host.approvals) == 0
    assert h.host.approvals.to_json()["approvals"] == []


# Requirement rows: APR-06
def test_nested_skill_needs_its_own_approval_APR_06() -> None:
    h = Harness()
    server = h.add_server("srv")
    nested_md = skill_md("sub", extra="allowed-tools: Bash\n")
    parent = server.add("a", {"SKILL.md": skill_md("a"), "sub/SKILL.md": nested_md})
    nested = server.add("a/sub", {"SKILL.md": nested_md})
    h.list_all("srv")
    h.load("srv", parent)
    prompt = one(h.host.load("srv", nested), RequestApproval)
    assert prompt.reason is ApprovalReason.NEW
    assert prompt.widening_fields == ("allowed-tools",)


# Requirement rows: APR-05, APR-10
def test_nested_skill_md_read_as_a_file_is_not_acted_on_APR_05_APR_10() -> None:
    h = Harness()
    server = h.add_server("srv")
    nested_md = skill_md("sub", extra="allowed-tools: Bash Write\nhooks:\n  PostToolUse: sh x\n")
    parent = server.add("a", {"SKILL.md": skill_md("a"), "sub/SKILL.md": nested_md})
    h.list_all("srv")
    h.load("srv", parent)
    before = h.host.permissions("srv", parent)
    effects = h.read("srv", parent, "sub/SKILL.md")
    delivered = one(effects, DeliverToModel)
    assert delivered.kind is DeliveryKind.SKILL_FILE
    assert "has no effect" in delivered.model_text
    after = h.host.permissions("srv", parent)
    assert after == before
    assert after.allowed_tools is None
    assert h.host.permissions("srv", "skill://a/sub/SKILL.md").honoured == {}


# Requirement rows: APR-07, APR-08, APR-09
def test_allowed_tools_is_ignored_unless_granted_APR_07_APR_08_APR_09() -> None:
    md = skill_md("tools", extra="allowed-tools: Bash Write\npermissions:\n  fs: /\n")
    h = Harness()
    uri = h.add_server("a").add("tools", {"SKILL.md": md})
    h.add_server("b").add("tools", {"SKILL.md": md})
    h.list_all("a")
    h.list_all("b")
    effects = h.load("a", uri)
    assert one(effects, RequestApproval).widening_fields == ("allowed-tools", "permissions")
    permissions = h.host.permissions("a", uri)
    assert permissions.allowed_tools is None
    assert permissions.ignored == ("allowed-tools", "permissions")
    h.host.close("a", uri)
    h.host.approvals.revoke("a", uri)
    h.load("a", uri, grant_fields=("allowed-tools", "not-requested"))
    permissions = h.host.permissions("a", uri)
    assert permissions.allowed_tools == "Bash Write"
    assert permissions.ignored == ("permissions",)
    record = h.host.approvals.record("a", uri)
    assert record is not None
    assert record.granted_fields == frozenset({"allowed-tools"})
    # The same-named skill on another server gets nothing (APR-09).
    h.load("b", uri)
    assert h.host.permissions("b", uri).allowed_tools is None
    # The grant is revoked with the approval when the set changes (recommended in APR-09).
    h.servers["a"].skills[uri].files["x.md"] = b"x"
    h.run(h.host.refresh("a", uri))
    assert h.host.permissions("a", uri).allowed_tools is None
    assert h.host.state("a", uri) is LoadState.REAPPROVAL


# Requirement rows: APR-11, APR-12, APR-13
def test_exec_gate_APR_11_APR_12_APR_13() -> None:
    h = example_harness()
    assert h.host.exec_gate().decision is ExecDecision.NOT_APPLICABLE
    h.load(L, URI)
    gate = h.host.exec_gate()
    assert gate.decision is ExecDecision.REQUIRE_APPROVAL
    assert gate.skills == ((L, URI),)
    assert L in gate.message
    assert h.host.exec_gate("other").decision is ExecDecision.NOT_APPLICABLE
    assert h.host.exec_gate(L, "skill://x/SKILL.md").decision is ExecDecision.NOT_APPLICABLE
    h.host.close(L, URI)
    assert h.host.exec_gate().decision is ExecDecision.NOT_APPLICABLE
    h.host.approvals.revoke(L, URI)
    h.load(L, URI, allow_exec=True)
    assert h.host.exec_gate(L, URI).decision is ExecDecision.ALLOW
    assert h.host.permissions(L, URI).allow_exec
    # While the changed skill awaits re-approval, execution is suspended (HELD-09).
    h.servers[L].skills[URI].files["templates/credit-note.md"] = ex.CREDIT_NOTE
    h.run(h.host.refresh(L, URI))
    gate = h.host.exec_gate()
    assert gate.decision is ExecDecision.DENY
    assert "re-approval" in gate.message


# Requirement rows: WG-08
def test_dynamic_skills_always_require_exec_approval_WG_08() -> None:
    h = Harness(allow_dynamic=True)
    uri = h.add_server("srv").add("reports/daily", dynamic=True)
    h.list_all("srv")
    h.load("srv", uri, allow_exec=True, grant_fields=("hooks",))
    assert h.host.exec_gate().decision is ExecDecision.REQUIRE_APPROVAL
    assert h.host.permissions("srv", uri).allow_exec


# Requirement rows: SEC-04
def test_policy_denies_before_any_send_SEC_04() -> None:
    h = example_harness(denied_origins=frozenset({L}))
    sent = len(h.sent)
    assert one(h.host.load(L, URI), LoadDeclined).reason is DeclineReason.POLICY
    h2 = example_harness(denied_skills=frozenset({(L, URI)}))
    assert one(h2.host.load(L, URI), LoadDeclined).reason is DeclineReason.POLICY
    assert len(h.sent) == sent


# Requirement rows: SEC-06
def test_policy_without_prompts_persists_nothing_SEC_06() -> None:
    h = example_harness(require_approval=False)
    effects = h.load(L, URI, approve=False)
    assert not of(effects, RequestApproval)
    assert one(effects, DeliverToModel).verified
    assert len(h.host.approvals) == 0
    assert h.host.exec_gate().decision is ExecDecision.REQUIRE_APPROVAL
    # A changed set under this policy is re-accepted without a prompt.
    h.servers[L].skills[URI].files["templates/credit-note.md"] = ex.CREDIT_NOTE
    effects = h.run(h.host.refresh(L, URI))
    assert not one(effects, SkillChanged).requires_reapproval
    assert h.host.state(L, URI) is LoadState.ACTING


def test_deny_declines_and_unknown_prompts_are_refused() -> None:
    h = example_harness()
    prompt = one(h.host.load(L, URI), RequestApproval)
    effects = h.host.deny(prompt.prompt_id)
    assert kinds(effects) == ["LoadDeclined"]
    assert h.host.state(L, URI) is LoadState.IDLE
    assert one(h.host.approve(prompt.prompt_id), Refused).code is RefusalCode.UNKNOWN_PROMPT
    assert one(h.host.deny(prompt.prompt_id), Refused).code is RefusalCode.UNKNOWN_PROMPT


# Requirement rows: ORG-08, ORG-09, SIL-25
def test_cross_origin_read_needs_a_per_call_approval_naming_both_ORG_08_ORG_09_SIL_25() -> None:
    h = example_harness()
    other = h.add_server("other-server")
    other.add("secrets", {"SKILL.md": skill_md("secrets"), "key.md": b"secret"})
    h.load(L, URI)
    target = "skill://secrets/key.md"
    effects = h.host.read_resource("other-server", target, acting_on=(L, URI))
    prompt = one(effects, RequestCrossOriginApproval)
    assert L in prompt.message
    assert "other-server" in prompt.message
    assert not of(effects, SendRequest)
    effects = h.run(h.host.approve(prompt.prompt_id))
    delivered = one(effects, DeliverToModel)
    assert (delivered.origin, delivered.kind, delivered.verified) == (
        "other-server",
        DeliveryKind.RESOURCE,
        False,
    )
    # Single use: the same call prompts again, and a refusal sends nothing.
    again = one(
        h.host.read_resource("other-server", target, acting_on=(L, URI)), RequestCrossOriginApproval
    )
    sent = len(h.sent)
    assert one(h.host.deny(again.prompt_id), Notice).code == "cross-origin-denied"
    assert len(h.sent) == sent
    # Same-origin reads driven by the skill need no such prompt.
    assert of(h.host.read_resource(L, "skill://x/y.md", acting_on=(L, URI)), SendRequest)


def test_cross_origin_reads_can_be_denied_by_policy() -> None:
    h = example_harness(cross_origin=CrossOriginPolicy.DENY)
    h.add_server("b")
    h.load(L, URI)
    refused = one(h.host.read_resource("b", "skill://x/y.md", acting_on=(L, URI)), Refused)
    assert refused.code is RefusalCode.CROSS_ORIGIN_DENIED
    # The driving skill must be acting.
    assert (
        one(
            h.host.read_resource("b", "skill://x/y.md", acting_on=("b", "skill://z/SKILL.md")),
            Refused,
        ).code
        is RefusalCode.NOT_ACTING
    )


def test_cross_origin_approval_for_a_forgotten_origin() -> None:
    h = example_harness()
    h.add_server("b")
    h.load(L, URI)
    prompt = one(
        h.host.read_resource("b", "skill://x/y.md", acting_on=(L, URI)), RequestCrossOriginApproval
    )
    h.host.forget("b")
    assert one(h.host.approve(prompt.prompt_id), Refused).code is RefusalCode.UNKNOWN_PROMPT
    send = one(h.host.read_resource(L, "skill://x/y.md", acting_on=(L, URI)), SendRequest)
    assert send.origin == L


def test_policy_values_are_checked() -> None:
    for bad in (
        {"max_pages": 0},
        {"max_entries": True},
        {"max_file_bytes": -1},
        {"max_file_bytes": 1.5},
        {"limits": "x"},
        {"cross_origin": "sometimes"},
    ):
        with pytest.raises(ValueError):  # noqa: PT011
            HostPolicy(**bad)
    policy = HostPolicy(cross_origin="deny", denied_origins={"x"})  # type: ignore[arg-type]
    assert policy.cross_origin is CrossOriginPolicy.DENY
    assert policy.denies("x", "skill://a/SKILL.md")
    assert policy.dynamic_total_bytes == 16 * 1024 * 1024


def test_require_approval_false_still_declines_dynamic_by_default() -> None:
    h = Harness(require_approval=False)
    server = h.add_server("srv", FakeServer())
    uri = server.add("reports/daily", dynamic=True)
    server.overrides.append(
        lambda m, p: ("result", list_result([server.entry(uri)])) if m == "skills/list" else None
    )
    h.list_all("srv")
    assert one(h.host.load("srv", uri), LoadDeclined).reason is DeclineReason.DYNAMIC


def test_changes_from_dynamic_are_described() -> None:
    changes = manifest_changes(None, frozenset({("skill://s/SKILL.md", D, 1)}))
    assert changes.describe() == 'it now publishes a manifest instead of "dynamic"'


def test_transition_table_and_diagram() -> None:
    from skills_core.host import TRANSITIONS, LoadInput, transition_diagram

    diagram = transition_diagram()
    assert diagram.startswith("stateDiagram-v2\n")
    assert diagram.count("-->") == len(TRANSITIONS) + 1
    # Every non-idle state can be abandoned (forget); only windows close, and ERROR is cleared.
    closable = (LoadState.ACTING, LoadState.REAPPROVAL, LoadState.STALE, LoadState.ERROR)
    for state in LoadState:
        if state is not LoadState.IDLE:
            assert (state, LoadInput.ABANDON) in TRANSITIONS
        assert ((state, LoadInput.CLOSE) in TRANSITIONS) == (state in closable)
