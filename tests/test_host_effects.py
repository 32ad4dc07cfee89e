"""Effects: one base with empty slots, five families, a message on each, each fact told once.

A consumer matches by family (``isinstance(effect, Problem)``) and shows ``effect.message`` without
reading the source; a ``Notice`` carries a :class:`NoticeCode`. A scenario drives the host through
every kind of effect and checks each one it returns. Also here: a ``Resolution`` names the origin
and URI it resolved to (what ``Host.load`` takes).
"""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields
from typing import Any

import pytest
from host_helpers import Harness, example_harness, list_result, of, one, rpc_error, skill_md

from skills_core import SkillEntry
from skills_core import spec_examples as ex
from skills_core.host import (
    DeliverToModel,
    Delivery,
    DirectoryListing,
    Effect,
    Host,
    Notice,
    NoticeCode,
    OutboundRequest,
    Outcome,
    Problem,
    Prompt,
    RefusalCode,
    Refused,
    RequestApproval,
    RequestCrossOriginApproval,
    ResolutionStatus,
    SendRequest,
)
from skills_core.host import effects as effects_module
from skills_core.host.window import manifest_children
from skills_core.spec import EXTENSION_ID

L = ex.ORIGIN_LABEL
URI = ex.SKILL_MD_URI
FAMILIES = (OutboundRequest, Prompt, Delivery, Outcome, Problem)
EFFECT_TYPES = {
    obj
    for name in effects_module.__all__
    for obj in (getattr(effects_module, name),)
    if inspect.isclass(obj) and issubclass(obj, Effect) and obj not in (Effect, *FAMILIES)
}


def test_every_effect_is_in_exactly_one_family_and_slotted() -> None:
    assert len(EFFECT_TYPES) == 31
    assert Effect.__slots__ == ()
    for family in FAMILIES:
        assert family.__slots__ == ()
        assert family.__bases__ == (Effect,)
    for kind in EFFECT_TYPES:
        assert [f for f in FAMILIES if issubclass(kind, f)] == [kind.__bases__[0]], kind
        assert kind.__dictoffset__ == 0, kind  # slotted all the way down: no instance dict
        # Each effect says its own message: a field, or a property of its own.
        owner = next(c for c in kind.__mro__ if "message" in c.__dict__)
        assert owner is kind, kind


def test_families_sort_what_a_consumer_must_do() -> None:
    assert issubclass(SendRequest, OutboundRequest)
    assert issubclass(RequestApproval, Prompt)
    assert issubclass(RequestCrossOriginApproval, Prompt)
    assert issubclass(DeliverToModel, Delivery)
    assert issubclass(Notice, Outcome)
    assert issubclass(effects_module.LoadDeclined, Problem)
    assert issubclass(effects_module.VerificationFailed, Problem)


def everything() -> list[Effect]:
    """Drive the host through every kind of effect; return them all."""
    h = Harness()
    log = h.log
    server = h.add_server(L)
    server.add("pdf-processing", ex.FILES)
    server.add("gen", dynamic=True)
    log += h.host.connect(L, server.capabilities())  # Connected
    log += h.host.connect("odd", {"resources": {}, "extensions": {EXTENSION_ID: 5}})  # Notice
    h.list_all(L)  # SendRequest, RegistryUpdated, ListingComplete
    other = h.add_server("other")
    other.add("pdf-processing", ex.FILES)
    other.overrides.append(
        lambda m, p: (
            ("result", list_result([{"uri": "skill://bad/SKILL.md"}], "c1"))
            if m == "skills/list" and "cursor" not in p
            else None
        )
    )
    other.overrides.append(
        lambda m, p: ("result", list_result([], "c1")) if m == "skills/list" else None
    )
    h.list_all("other")  # EntryRejected, ListingPartial (repeated cursor)
    h.run(h.host.list_skills(L))
    log += h.host.register_local_skill("pdf-processing")  # NameCollision
    h.load(L, URI)  # RequestApproval, ApprovalGranted, DeliverToModel, SkillLoaded
    h.read(L, URI, "templates/invoice.md")
    h.read(L, URI, "nope.md")  # VerificationFailed (+ a refresh)
    h.read(L, URI, "../x")  # ReferenceRejected
    h.read(L, URI, "skill://elsewhere/x.md")  # Refused
    h.run(h.host.list_dir(L, URI, "templates"))  # DirectoryListing
    h.run(h.host.preview(L, URI))  # PreviewReady
    h.run(h.host.get_skill(L, URI))  # SkillConfirmed
    h.run(h.host.get_skill(L, "skill://missing/SKILL.md"))  # NotASkill
    h.run(h.host.read_resource("other", "skill://x/y.md", acting_on=(L, URI)), cross_origin=False)
    files = server.skills[URI].files
    files["templates/credit-note.md"] = ex.CREDIT_NOTE
    h.run(h.host.refresh(L, URI))  # SkillChanged, ApprovalRevoked, RequestApproval
    files["templates/other.md"] = b"other\n"
    h.run(h.host.refresh(L, URI), approve=True)  # ApprovalWithdrawn, HeldEntryReplaced
    files["SKILL.md"] = ex.SKILL_MD.replace(b"Choose", b"Pick")
    h.run(h.host.refresh(L, URI), approve=True)  # ReloadRequired
    h.load(L, URI)
    log += h.host.close(L, URI)  # WindowClosed
    h.load(L, "skill://gen/SKILL.md")  # LoadDeclined
    broken = server.add("broken")
    h.list_all(L)
    server.overrides.append(
        lambda m, p: ("error", rpc_error(-32603, "boom")) if m == "resources/read" else None
    )
    h.load(L, broken)  # RequestFailed, LoadFailed
    server.overrides.clear()
    log += h.host.on_response(L, 999_999, result={})  # UnexpectedResponse
    uri = server.add("late", {"SKILL.md": skill_md("late")})
    h.list_all(L)
    send = one(h.run(h.host.load(L, uri), approve=True, answer=False), SendRequest)
    server.skills[uri].files["x.md"] = b"x"
    h.list_all(L)  # the entry changed while SKILL.md was read
    _, payload = server.handle(send.method, {"uri": uri})
    log += h.host.on_response(L, send.token, result=payload)  # ResponseDiscarded
    return log


def test_every_effect_has_a_message_and_notices_have_codes() -> None:
    produced = everything()
    assert {type(e) for e in produced} == EFFECT_TYPES
    for effect in produced:
        message = effect.message
        assert isinstance(message, str)
        assert message.strip(), effect
        assert "\n" not in message or isinstance(effect, RequestApproval), effect
    for notice in of(produced, Notice):
        assert isinstance(notice.code, NoticeCode)


def test_an_effect_carrying_its_message_needs_one() -> None:
    """A ``message`` field has no default: built without one, an effect is refused at once.

    (A ``message`` property on the base class once became the default of every such field, so
    ``LoadFailed(origin=..., uri=...)`` carried a property object as its message.)
    """
    dataclasses: list[Any] = list(EFFECT_TYPES)  # each is a dataclass
    carried = [kind for kind in dataclasses if "message" in {f.name for f in fields(kind)}]
    assert len(carried) == 10
    for kind in carried:
        field = next(f for f in fields(kind) if f.name == "message")
        assert field.default is MISSING, kind
        assert field.default_factory is MISSING, kind
        with pytest.raises(TypeError, match="message"):
            kind()
    assert not hasattr(Effect, "message")  # declared for type checkers only


def test_a_resolution_names_what_load_takes() -> None:
    host = Host()
    h = Harness(host)
    h.add_server(L).add("pdf-processing", ex.FILES)
    h.list_all(L)
    resolution = host.resolve("pdf-processing")
    assert resolution.status is ResolutionStatus.UNIQUE
    assert (resolution.origin, resolution.uri) == (L, URI)
    assert resolution.message
    missing = host.resolve("nope")
    assert (missing.origin, missing.uri) == (None, None)
    host.register_local_skill("pdf-processing")
    contested = host.resolve("pdf-processing")
    assert contested.status is ResolutionStatus.AMBIGUOUS
    assert (contested.origin, contested.uri) == (None, None)


def test_a_directory_listing_says_what_it_cannot_vouch_for() -> None:
    listing = DirectoryListing(
        origin="srv",
        skill_uri="skill://a/SKILL.md",
        uri="skill://a/t",
        children=(),
        from_manifest=False,
        hidden=("skill://a/t/new.md",),
        dropped=("'file:///x' is not inside skill://a/t; dropped (WG-01)",),
        partial=True,
        verified=False,
    )
    message = listing.message
    assert "0 entries, from the server" in message
    assert "1 not approved (hidden), 0 missing" in message
    assert "1 malformed children dropped" in message
    assert "the walk stopped early" in message
    assert "not verified" in message


def test_a_dynamic_skill_has_no_manifest_children() -> None:
    entry = SkillEntry.from_json(
        {
            "uri": "skill://gen/SKILL.md",
            "frontmatter": {"name": "gen", "description": "d"},
            "resources": "dynamic",
        }
    )
    assert manifest_children(entry, "skill://gen/t") == ()


def test_forgetting_an_origin_ends_its_refresh_in_flight() -> None:
    h = example_harness()
    assert one(h.host.refresh(L, URI), SendRequest)
    assert one(h.host.refresh(L, URI), Refused).code is RefusalCode.REFRESH_IN_FLIGHT
    h.host.forget(L)
    h.host.connect(L, h.servers[L].capabilities())
    h.list_all(L)
    assert one(h.host.refresh(L, URI), SendRequest)
