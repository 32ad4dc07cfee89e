"""A Hypothesis state machine driving the host with random calls and random server answers.

Two servers (labels ``a`` and ``b``, one with ``directoryRead``) publish the same skill URIs, so
any confusion of origins would show. The test keeps every ``SendRequest`` pending until a rule
answers it, honestly or with one of several hostile answers (tampered bytes, wrong size, another
URI's content, another skill's entry, a forged manifest, errors, garbage, transport failure,
duplicate and foreign tokens), while the servers' skills change underneath.

The invariant, checked after every call on every effect it returned:

    no byte reaches the model unless it was verified against the held, approved entry of its own
    origin.

That is: a ``DeliverToModel(verified=True)`` is for a URI listed in the held entry of an open,
acting window of the same origin and skill, its bytes have exactly that entry's size and digest,
and the approval store approves exactly that entry's set; a ``verified=False`` delivery is an
ordinary resource (no skill) or comes from a dynamic skill's window. Alongside: nothing is ever
sent to an unknown or disconnected origin, ``resources/directory/read`` only to an origin that
declared it (CAP-06), and a read made while acting names a listed file (HELD-03).
"""

from __future__ import annotations

import hashlib
from typing import Any

from host_helpers import FakeServer, read_result, rpc_error, skill_md, strip_meta
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from skills_core.host import (
    DeliverToModel,
    DeliveryKind,
    Effect,
    Host,
    HostPolicy,
    LoadState,
    RequestApproval,
    RequestCrossOriginApproval,
    SendRequest,
)
from skills_core.messages import Era

LABELS = ("a", "b")
SKILLS = (
    "skill://pdf/SKILL.md",
    "skill://pdf/nested/SKILL.md",
    "skill://reports/daily/SKILL.md",
)
REFS = (
    "SKILL.md",
    "templates/invoice.md",
    "templates/new.md",
    "nested/SKILL.md",
    "nested/x.md",
    "x.md",
    "../escape.md",
    "file:///etc/passwd",
    "templates/",
    "skill://pdf/templates/invoice.md",
    "skill://other/SKILL.md",
)
DIRS = ("", "templates", "nested", "nope", "SKILL.md")
MODES = (
    "honest",
    "honest",
    "honest",
    "tamper",
    "grow",
    "other-uri",
    "other-entry",
    "forged-manifest",
    "not-found",
    "internal",
    "garbage",
    "transport",
)


def build_server(directory_read: bool) -> FakeServer:
    server = FakeServer(directory_read=directory_read, page_size=2)
    nested_md = skill_md("nested", extra="allowed-tools: Bash\n")
    server.add(
        "pdf",
        {
            "SKILL.md": skill_md("pdf", body="See templates/.\n"),
            "templates/invoice.md": b"# Invoice\n",
            "nested/SKILL.md": nested_md,
            "nested/x.md": b"nested file\n",
        },
    )
    server.add("pdf/nested", {"SKILL.md": nested_md, "x.md": b"nested file\n"})
    server.add(
        "reports/daily", {"SKILL.md": skill_md("daily"), "x.md": b"generated\n"}, dynamic=True
    )
    return server


class HostMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.host = Host(policy=HostPolicy(allow_dynamic=True, max_pages=5))
        self.servers = {"a": build_server(True), "b": build_server(False)}
        self.connected = dict.fromkeys(LABELS, True)
        for label in LABELS:
            self.host.connect(label, self.servers[label].capabilities())
        self.pending: list[SendRequest] = []
        self.prompts: list[int] = []
        self.answered: list[SendRequest] = []
        self.delivered = 0

    # -- the invariant ------------------------------------------------------------------------

    def check(self, effects: list[Effect], *, acting_read: tuple[str, str] | None = None) -> None:
        for effect in effects:
            if isinstance(effect, SendRequest):
                assert effect.origin in self.connected
                assert self.connected[effect.origin]
                if effect.method == "resources/directory/read":
                    assert self.servers[effect.origin].directory_read  # CAP-06
                if acting_read is not None and effect.method == "resources/read":
                    view = self.host.window(*acting_read)
                    assert view is not None
                    assert view.held is not None
                    if not view.held.is_dynamic:  # HELD-03: only listed files are read
                        assert view.held.resource(str(effect.params["uri"])) is not None
                self.pending.append(effect)
            elif isinstance(effect, RequestApproval | RequestCrossOriginApproval):
                self.prompts.append(effect.prompt_id)
            elif isinstance(effect, DeliverToModel):
                self.check_delivery(effect)

    def check_delivery(self, effect: DeliverToModel) -> None:
        self.delivered += 1
        assert effect.trust == "untrusted"
        if not effect.verified:
            if effect.kind is DeliveryKind.RESOURCE:
                assert effect.skill_uri is None
                return
            assert effect.skill_uri is not None
            view = self.host.window(effect.origin, effect.skill_uri)
            assert view is not None
            assert view.held is not None
            assert view.held.is_dynamic
            return
        assert effect.kind is not DeliveryKind.RESOURCE
        assert effect.skill_uri is not None
        view = self.host.window(effect.origin, effect.skill_uri)
        assert view is not None
        assert view.state is LoadState.ACTING
        held = view.held
        assert held is not None
        resource = held.resource(effect.uri)
        assert resource is not None
        assert len(effect.content) == resource.size
        assert "sha256:" + hashlib.sha256(effect.content).hexdigest() == resource.digest
        assert self.host.approvals.approved(effect.origin, held.uri, held.resource_set)
        assert f'"{effect.origin}"' in effect.model_text

    @invariant()
    def windows_are_consistent(self) -> None:
        for view in self.host.windows():
            assert view.held is not None
            assert view.held.uri == view.uri
            if view.state is LoadState.ACTING and not view.held.is_dynamic:
                assert self.host.approvals.approved(view.origin, view.uri, view.held.resource_set)

    # -- calls --------------------------------------------------------------------------------

    @rule(label=st.sampled_from(LABELS))
    def list_skills(self, label: str) -> None:
        self.check(self.host.list_skills(label))

    @rule(label=st.sampled_from(LABELS), skill=st.sampled_from(SKILLS))
    def load(self, label: str, skill: str) -> None:
        self.check(self.host.load(label, skill))

    @rule(label=st.sampled_from(LABELS), skill=st.sampled_from(SKILLS), ref=st.sampled_from(REFS))
    def read(self, label: str, skill: str, ref: str) -> None:
        self.check(self.host.read(label, skill, ref), acting_read=(label, skill))

    @rule(label=st.sampled_from(LABELS), skill=st.sampled_from(SKILLS), ref=st.sampled_from(DIRS))
    def list_dir(self, label: str, skill: str, ref: str) -> None:
        self.check(self.host.list_dir(label, skill, ref))

    @rule(label=st.sampled_from(LABELS), skill=st.sampled_from(SKILLS))
    def refresh(self, label: str, skill: str) -> None:
        self.check(self.host.refresh(label, skill))

    @rule(label=st.sampled_from(LABELS), skill=st.sampled_from(SKILLS))
    def preview(self, label: str, skill: str) -> None:
        self.check(self.host.preview(label, skill))

    @rule(
        label=st.sampled_from(LABELS),
        ref=st.sampled_from(REFS),
        driver=st.none() | st.tuples(st.sampled_from(LABELS), st.sampled_from(SKILLS)),
    )
    def read_resource(self, label: str, ref: str, driver: tuple[str, str] | None) -> None:
        uri = ref if "://" in ref else f"skill://pdf/{ref}"
        self.check(self.host.read_resource(label, uri, acting_on=driver))

    @rule(label=st.sampled_from(LABELS), skill=st.sampled_from(SKILLS))
    def close(self, label: str, skill: str) -> None:
        self.check(self.host.close(label, skill))

    @rule(
        index=st.integers(min_value=0, max_value=50),
        yes=st.booleans(),
        grant=st.booleans(),
        allow_exec=st.booleans(),
    )
    def answer_prompt(self, index: int, yes: bool, grant: bool, allow_exec: bool) -> None:
        if not self.prompts:
            return
        prompt_id = self.prompts.pop(index % len(self.prompts))
        if yes:
            fields = ("allowed-tools",) if grant else ()
            effects = self.host.approve(prompt_id, grant_fields=fields, allow_exec=allow_exec)
        else:
            effects = self.host.deny(prompt_id)
        self.check(effects)
        self.host.exec_gate()
        for view in self.host.windows():
            self.host.permissions(view.origin, view.uri)

    @rule(label=st.sampled_from(LABELS))
    def toggle_connection(self, label: str) -> None:
        if self.connected[label]:
            self.connected[label] = False
            self.check(self.host.disconnect(label))
            self.pending = [s for s in self.pending if s.origin != label]
        else:
            self.connected[label] = True
            self.check(self.host.connect(label, self.servers[label].capabilities(), era=Era.MODERN))

    # -- the servers change -------------------------------------------------------------------

    @rule(
        label=st.sampled_from(LABELS),
        change=st.sampled_from(("rotate", "add", "remove", "rotate-md")),
        salt=st.integers(0, 3),
    )
    def server_changes(self, label: str, change: str, salt: int) -> None:
        files = self.servers[label].skills[SKILLS[0]].files
        if change == "rotate":
            files["templates/invoice.md"] = b"# Invoice v%d\n" % salt
        elif change == "add":
            files["templates/new.md"] = b"new %d\n" % salt
        elif change == "remove":
            files.pop("templates/new.md", None)
        else:
            files["SKILL.md"] = skill_md("pdf", body=f"v{salt}\n")

    # -- answers ------------------------------------------------------------------------------

    @rule(index=st.integers(min_value=0, max_value=50), mode=st.sampled_from(MODES))
    def respond(self, index: int, mode: str) -> None:
        if not self.pending:
            return
        send = self.pending.pop(index % len(self.pending))
        self.answered.append(send)
        server = self.servers[send.origin]
        params = strip_meta(send.params)
        if mode == "transport":
            self.check(self.host.on_request_failed(send.origin, send.token, "timeout"))
            return
        if mode in ("not-found", "internal"):
            code = -32602 if mode == "not-found" else -32603
            self.check(self.host.on_response(send.origin, send.token, error=rpc_error(code)))
            return
        if mode == "garbage":
            self.check(self.host.on_response(send.origin, send.token, result=[1, 2]))
            return
        kind, payload = server.handle(send.method, params)
        payload = self.corrupt(send, mode, payload) if kind == "result" else payload
        if kind == "result":
            effects = self.host.on_response(send.origin, send.token, result=payload)
        else:
            effects = self.host.on_response(send.origin, send.token, error=payload)
        self.check(effects)

    def corrupt(self, send: SendRequest, mode: str, payload: Any) -> Any:
        uri = send.params.get("uri")
        if send.method == "resources/read" and isinstance(uri, str):
            server = self.servers[send.origin]
            data = server.file(uri) or b""
            if mode == "tamper" and data:
                return read_result(uri, bytes([data[0] ^ 1]) + data[1:])
            if mode == "grow":
                return read_result(uri, data + b"!")
            if mode == "other-uri":
                return read_result("skill://pdf/templates/invoice.md", data)
        if send.method == "skills/get" and isinstance(uri, str):
            server = self.servers[send.origin]
            if mode == "other-entry":
                other = next(s for s in SKILLS if s != uri)
                return {"skill": server.entry(other), "resultType": "complete"}
            if (
                mode == "forged-manifest"
                and uri in server.skills
                and not server.skills[uri].dynamic
            ):
                entry: Any = server.entry(uri)
                entry["resources"][-1]["digest"] = "sha256:" + "f" * 64
                return {"skill": entry, "resultType": "complete"}
        if send.method == "skills/list" and mode == "forged-manifest":
            skills = payload.get("skills", [])
            for entry in skills:
                if isinstance(entry.get("resources"), list):
                    entry["resources"][-1]["digest"] = "sha256:" + "e" * 64
        return payload

    @rule(approve=st.booleans())
    def settle(self, approve: bool) -> None:
        """Answer everything pending honestly (and, if asked, approve every open prompt)."""
        for _ in range(20):
            if approve:
                while self.prompts:
                    self.check(self.host.approve(self.prompts.pop()))
            if not self.pending:
                return
            send = self.pending.pop(0)
            self.answered.append(send)
            kind, payload = self.servers[send.origin].handle(send.method, strip_meta(send.params))
            if kind == "result":
                self.check(self.host.on_response(send.origin, send.token, result=payload))
            else:
                self.check(self.host.on_response(send.origin, send.token, error=payload))

    @rule(label=st.sampled_from(LABELS), skill=st.sampled_from(SKILLS), ref=st.sampled_from(REFS))
    def load_then_read(self, label: str, skill: str, ref: str) -> None:
        """The common path: load, settle with approvals, read a file of the skill."""
        self.check(self.host.load(label, skill))
        self.settle(approve=True)
        self.check(self.host.read(label, skill, ref), acting_read=(label, skill))
        self.settle(approve=False)

    @rule(index=st.integers(min_value=0, max_value=50), other=st.booleans())
    def stray_response(self, index: int, other: bool) -> None:
        """A response for an already answered token, or from the wrong origin."""
        if not self.answered:
            return
        send = self.answered[index % len(self.answered)]
        origin = ("b" if send.origin == "a" else "a") if other else send.origin
        effects = self.host.on_response(origin, send.token, result={})
        assert all(type(e).__name__ == "UnexpectedResponse" for e in effects)


TestHostMachine = HostMachine.TestCase
TestHostMachine.settings = settings(
    max_examples=150,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
