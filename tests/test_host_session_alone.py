"""One skill's load session on its own: no Host, answers fed by hand, its intents read off.

The router owns the host-wide stores (request tokens, prompt ids and the prompt table, the
outstanding requests, the approval store, the verified cache, each origin's byte budget, the
refreshes in flight); a :class:`~skills_core.host.session.LoadSession` only reads them, through the
views it is made with, and returns what it wants done as intents
(:mod:`skills_core.host.intents`). These tests make a session over a
:class:`~skills_core.host.context.HostContext` that no Host ever sees, drive it through whole
loads answer by answer, check the intents it returns, and check that the context is exactly as it
was: nothing sent, nothing prompted, nothing recorded, cached or charged.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field

from host_helpers import FakeServer

from skills_core import spec_examples as ex
from skills_core.entry import SkillEntry
from skills_core.host import (
    ApprovalGranted,
    ApprovalReason,
    ApprovalStore,
    DeliverToModel,
    DeliveryKind,
    Effect,
    FailureSource,
    HostPolicy,
    LoadState,
    MemoryCacheStore,
    RequestApproval,
    SendRequest,
    SkillChanged,
    SkillLoaded,
    VerificationFailed,
    VerifiedCache,
)
from skills_core.host.carrier import INTENT_HANDLERS, Carrier
from skills_core.host.context import HostContext, OriginRecord
from skills_core.host.intents import (
    AskApproval,
    CacheView,
    Charge,
    DiscardCached,
    Intent,
    KeepVerified,
    RecordApproval,
    Refresh,
    Step,
    StoreView,
    WithdrawPrompt,
    keep_verified,
)
from skills_core.host.requests import (
    GetForLoad,
    Key,
    ReadFile,
    ReadResource,
    ReadSkillMd,
    SkillPrompt,
    read_file,
)
from skills_core.host.session import LoadSession
from skills_core.jsonvalue import JSONValue
from skills_core.messages import parse_server_features, server_capabilities

L = ex.ORIGIN_LABEL
URI = ex.SKILL_MD_URI
ROOT = "skill://pdf-processing"
INVOICE_URI = f"{ROOT}/templates/invoice.md"


@dataclass(frozen=True)
class Stores:
    """A read-only stand-in for the router's stores (a :class:`StoreView`), for the cases where a
    test wants something in them, such as a refresh in flight."""

    policy: HostPolicy
    approvals: ApprovalStore = field(default_factory=ApprovalStore)
    cache: CacheView = field(default_factory=lambda: VerifiedCache(MemoryCacheStore()))
    refreshing: Mapping[Key, int] = field(default_factory=dict)


def origin(label: str = L) -> OriginRecord:
    return OriginRecord(
        label=label,
        features=parse_server_features(server_capabilities(directory_read=True)),
        meta=None,
    )


def context(**policy: typing.Any) -> HostContext:
    return HostContext(HostPolicy(**policy), ApprovalStore(), VerifiedCache(MemoryCacheStore()))


def example_server() -> FakeServer:
    server = FakeServer()
    server.add("pdf-processing", ex.FILES)
    return server


def entry_of(server: FakeServer, uri: str = URI) -> SkillEntry:
    return SkillEntry.from_json(server.entry(uri))


def answer(server: FakeServer, uri: str) -> JSONValue:
    kind, payload = server.handle("resources/read", {"uri": uri})
    assert kind == "result"
    result: JSONValue = payload
    return result


def names(steps: list[Effect] | list[Step]) -> list[str]:
    return [type(step).__name__ for step in steps]


def untouched(ctx: HostContext, server: OriginRecord) -> None:
    """Nothing host-wide was written, and no token or prompt id was taken."""
    assert ctx.pending == {}
    assert ctx.prompts == {}
    assert ctx.asked == {}
    assert ctx.refreshing == {}
    assert ctx.approvals.to_json() == ApprovalStore().to_json()
    store = ctx.cache.store
    assert isinstance(store, MemoryCacheStore)
    assert store.cached_keys() == ()
    assert server.bytes_fetched == 0
    # The first token and the first prompt id are still to be given.
    assert ctx.send(server, {}, ReadResource(origin=L, uri=INVOICE_URI)).token == 1
    assert ctx.open_prompt(SkillPrompt(key=(L, URI), generation=0)) == 1


def test_a_session_loads_and_reads_without_a_host() -> None:
    """Entry fetched, prompt asked, approved, SKILL.md verified, a file read: each step's intents
    say what the router is to do, and the context the session reads is never written."""
    ctx = context()
    server = origin()
    peer = example_server()
    entry = entry_of(peer)
    session = LoadSession(ctx, server, URI)

    # The entry is unknown: the session asks for skills/get (the record is the intent).
    [get] = session.fetch_entry()
    assert get == GetForLoad(origin=L, uri=URI, session=session, generation=1)
    assert session.state is LoadState.AWAITING_ENTRY

    # The entry arrives: no approval exists, so a prompt bound to its manifest.
    [ask] = session.on_entry(entry)
    assert ask == AskApproval(
        origin=L,
        uri=URI,
        generation=2,
        entry=entry,
        reason=ApprovalReason.NEW,
        changes=None,
        widening_fields=(),
    )
    asking = session.asking  # (read apart, so the check after approval is not "unreachable")
    assert asking
    shown = ask.effect(7)
    assert isinstance(shown, RequestApproval)
    assert (shown.prompt_id, shown.name, shown.total_size) == (7, "pdf-processing", 215)

    # Approved: record it (for the router to), say so, read SKILL.md.
    record, granted, read_md = session.approve((), False)
    assert record == RecordApproval(
        origin=L,
        uri=URI,
        resources=entry.resource_set,
        granted_fields=frozenset(),
        allow_exec=False,
    )
    assert isinstance(granted, ApprovalGranted)
    assert granted.persisted
    assert isinstance(read_md, ReadSkillMd)
    assert read_md.entry is entry
    assert (read_md.uri, read_md.generation) == (URI, session.generation)
    assert not session.asking

    # SKILL.md answered: verified, so keep it (and charge it), deliver it, open the window.
    keep, delivered, loaded = session.on_skill_md(read_md, answer(peer, URI))
    skill_md_row = entry.resource(URI)
    assert skill_md_row is not None
    assert keep == KeepVerified(origin=L, resource=skill_md_row, data=ex.SKILL_MD)
    assert isinstance(delivered, DeliverToModel)
    assert delivered.verified
    assert delivered.kind is DeliveryKind.SKILL
    assert isinstance(loaded, SkillLoaded)
    assert session.view().state is LoadState.ACTING

    # A file of the skill: the read is the intent; its answer is kept, charged and delivered.
    [read] = session.read("templates/invoice.md", None)
    assert isinstance(read, ReadFile)
    assert (read.uri, read.resource) == (INVOICE_URI, entry.resource(INVOICE_URI))
    window = session.window
    assert window is not None
    keep, delivered = window.on_file(read, answer(peer, INVOICE_URI))
    assert isinstance(keep, KeepVerified)
    assert keep.data == ex.INVOICE
    assert isinstance(delivered, DeliverToModel)
    assert delivered.verified
    assert delivered.content == ex.INVOICE

    untouched(ctx, server)


def test_carried_out_the_intents_write_the_stores() -> None:
    """The same decisions, handed to the router's carrier: now the stores change, and each intent
    becomes the effect the caller sees (a token, a prompt id) or none."""
    ctx = context()
    server = origin()
    ctx.origins[L] = server
    peer = example_server()
    sessions: dict[Key, LoadSession] = {}
    carrier = Carrier(ctx, sessions)
    session = carrier.open(server, URI)
    [send] = carrier.run(session, session.fetch_entry())
    assert isinstance(send, SendRequest)
    assert send.token == 1
    assert isinstance(ctx.pending[1], GetForLoad)
    [prompt] = carrier.run(session, session.on_entry(entry_of(peer)))
    assert isinstance(prompt, RequestApproval)
    assert prompt.prompt_id == 1
    assert ctx.asked == {(L, URI): 1}
    effects = carrier.run(session, session.approve((), False))
    assert names(effects) == ["ApprovalGranted", "SendRequest"]
    assert ctx.approvals.approved(L, URI, entry_of(peer).resource_set) is not None
    read_md = ctx.pending[2]
    assert isinstance(read_md, ReadSkillMd)
    effects = carrier.run(session, session.on_skill_md(read_md, answer(peer, URI)))
    assert names(effects) == ["DeliverToModel", "SkillLoaded"]
    assert server.bytes_fetched == len(ex.SKILL_MD)
    store = ctx.cache.store
    assert isinstance(store, MemoryCacheStore)
    assert len(store) == 1
    assert sessions == {(L, URI): session}
    # Closing leaves the session IDLE: the carrier drops it from the router's map.
    assert names(carrier.run(session, session.close())) == ["WindowClosed"]
    assert sessions == {}


def test_a_failed_file_is_charged_and_asks_for_one_refresh_VER_09_VER_16() -> None:
    ctx = context()
    server = origin()
    peer = example_server()
    session = acting(ctx, server, peer)
    [read] = session.read("templates/invoice.md", None)
    assert isinstance(read, ReadFile)
    assert session.window is not None
    peer.skills[URI].files["templates/invoice.md"] = b"# Invoice, tampered\n"
    charge, failed, refresh = session.window.on_file(read, answer(peer, INVOICE_URI))
    assert charge == Charge(origin=L, size=len(b"# Invoice, tampered\n"))
    assert isinstance(failed, VerificationFailed)
    assert failed.refreshing
    assert refresh == Refresh(origin=L, uri=URI, failure_uri=INVOICE_URI)
    untouched(ctx, server)

    # With a refresh of the skill in flight (the router's record, read through the view), none.
    stores = Stores(policy=HostPolicy(), refreshing={(L, URI): 9})
    peer = example_server()
    session = acting(stores, server, peer)
    peer.skills[URI].files["templates/invoice.md"] = b"# Invoice, tampered\n"
    [read] = session.read("templates/invoice.md", None)
    assert isinstance(read, ReadFile)
    assert session.window is not None
    charge, failed = session.window.on_file(read, answer(peer, INVOICE_URI))
    assert isinstance(charge, Charge)
    assert isinstance(failed, VerificationFailed)
    assert not failed.refreshing


def test_a_stale_cached_copy_is_reported_and_left_for_the_router_to_drop_CACHE_02() -> None:
    ctx = context()
    server = origin()
    peer = example_server()
    session = acting(ctx, server, peer)
    entry = entry_of(peer)
    row = entry.resource(INVOICE_URI)
    assert row is not None
    store = ctx.cache.store
    assert isinstance(store, MemoryCacheStore)
    store.put(L, row.uri, row.digest, b"# Invoice, rotted on disk\n")
    discard, failed, read = session.read("templates/invoice.md", None)
    assert discard == DiscardCached(origin=L, resource=row)
    assert isinstance(failed, VerificationFailed)
    assert failed.source is FailureSource.CACHE
    assert isinstance(read, ReadFile)
    assert len(store) == 1  # the session dropped nothing
    Carrier(ctx, {}).carry_out([discard])
    assert len(store) == 0


def test_a_dynamic_skill_is_approved_on_the_load_and_only_charged_APR_04_HELD_08() -> None:
    ctx = context(allow_dynamic=True)
    server = origin()
    peer = FakeServer()
    files = {"SKILL.md": b"---\nname: live\ndescription: d\n---\n", "a.md": b"a"}
    uri = peer.add("live", files, dynamic=True)
    entry = SkillEntry.from_json(peer.entry(uri))
    session = LoadSession(ctx, server, uri)
    [ask] = session.begin(entry)
    assert isinstance(ask, AskApproval)
    assert ask.reason is ApprovalReason.DYNAMIC
    granted, read_md = session.approve((), True)
    assert isinstance(granted, ApprovalGranted)
    assert not granted.persisted  # no RecordApproval
    assert isinstance(read_md, ReadSkillMd)
    charge, delivered, _ = session.on_skill_md(read_md, answer(peer, uri))
    assert charge == Charge(origin=L, size=len(peer.skills[uri].files["SKILL.md"]))
    assert isinstance(delivered, DeliverToModel)
    assert not delivered.verified
    [read] = session.read("a.md", None)
    assert isinstance(read, ReadFile)
    assert read.resource is None
    assert session.window is not None
    charge, delivered = session.window.on_file(read, answer(peer, "skill://live/a.md"))
    assert charge == Charge(origin=L, size=1)
    assert session.exec_state().exec_approved  # the grant lives on the load
    untouched(ctx, server)


def test_a_change_while_asking_withdraws_the_prompt_and_asks_again_APR_02() -> None:
    ctx = context()
    server = origin()
    peer = example_server()
    session = LoadSession(ctx, server, URI)
    [first] = session.begin(entry_of(peer))
    assert isinstance(first, AskApproval)
    peer.skills[URI].files["templates/credit-note.md"] = ex.CREDIT_NOTE
    withdraw, changed, ask = session.observe(entry_of(peer))
    assert withdraw == WithdrawPrompt(origin=L, uri=URI, reason="the skill changed")
    assert isinstance(changed, SkillChanged)
    assert changed.requires_reapproval
    assert isinstance(ask, AskApproval)
    assert ask.generation > first.generation
    # Denied: declined, and nothing is left to withdraw.
    assert names(session.deny()) == ["LoadDeclined"]
    assert session.state is LoadState.IDLE
    assert not session.asking
    untouched(ctx, server)


def acting(stores: StoreView, server: OriginRecord, peer: FakeServer) -> LoadSession:
    """A session of the example skill, loaded and acting (approval waived by policy)."""
    session = LoadSession(stores, server, URI)
    [read_md] = [
        s for s in session.begin(entry_of(peer), preapproved=True) if isinstance(s, ReadSkillMd)
    ]
    session.on_skill_md(read_md, answer(peer, URI))
    assert session.state is LoadState.ACTING
    return session


# -- the intent types ------------------------------------------------------------------------------


def test_every_intent_has_one_handler_and_no_effect_has_one() -> None:
    intents = set(typing.get_args(Intent))
    assert set(INTENT_HANDLERS) == intents
    assert not any(issubclass(kind, Effect) for kind in intents)


def test_intents_are_small_frozen_values() -> None:
    for kind in typing.get_args(Intent):
        assert kind.__dataclass_params__.frozen, kind
        assert "__slots__" in kind.__dict__, kind
        assert getattr(kind, "__final__", False), kind
        assert all(f.kw_only for f in dataclasses.fields(kind)), kind


def test_fast_keep_verified_is_the_dataclass() -> None:
    row = entry_of(example_server()).resource(INVOICE_URI)
    assert row is not None
    fast = keep_verified(L, row, ex.INVOICE)
    slow = KeepVerified(origin=L, resource=row, data=ex.INVOICE)
    assert fast == slow
    assert repr(fast) == repr(slow)
    assert type(fast) is KeepVerified


def test_fast_read_file_is_the_dataclass() -> None:
    session = LoadSession(context(), origin(), URI)
    row = entry_of(example_server()).resource(INVOICE_URI)
    for resource in (row, None):
        fast = read_file(L, INVOICE_URI, session, URI, resource)
        slow = ReadFile(
            origin=L,
            uri=INVOICE_URI,
            session=session,
            generation=session.generation,
            skill_uri=URI,
            resource=resource,
        )
        assert fast == slow
        assert repr(fast) == repr(slow)
        assert type(fast) is ReadFile
        assert fast.session is session
