"""Test helpers for the host state machine: a fake skills server and a harness that pumps effects.

``FakeServer`` is an honest, in-memory server for the Skills extension built only from the wire
formats (it is deliberately independent of ``skills_core.server``): it serves ``skills/list``
(optionally paginated), ``skills/get``, ``resources/read`` and ``resources/directory/read`` from
a dict of skill files, and tests make it hostile by mutating files or installing overrides.

``Harness`` drives a :class:`~skills_core.host.Host` against fake servers: it answers every
``SendRequest`` depth-first (so effects come back in causal order), optionally answers approval
prompts, and records every request sent.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from skills_core import spec_examples as ex
from skills_core.digest import compute_digest
from skills_core.errors import JsonRpcError
from skills_core.frontmatter import parse_frontmatter
from skills_core.host import (
    Effect,
    Host,
    HostPolicy,
    RequestApproval,
    RequestCrossOriginApproval,
    SendRequest,
)
from skills_core.host.pump import EffectRun, TransportFailure
from skills_core.jsonvalue import JSONValue
from skills_core.messages import Era, encode_resource_contents, server_capabilities

T = TypeVar("T")

CACHE: dict[str, JSONValue] = {"ttlMs": 300000, "cacheScope": "public"}


def skill_md(
    name: str, description: str = "A test skill", extra: str = "", body: str = ""
) -> bytes:
    """A SKILL.md with the given frontmatter fields (``extra`` is raw YAML lines)."""
    text = f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n{body}"
    return text.encode("utf-8")


def of(effects: Iterable[Effect], kind: type[T]) -> list[T]:
    """The effects of one type, in order."""
    return [e for e in effects if isinstance(e, kind)]


def one(effects: Iterable[Effect], kind: type[T]) -> T:
    """The single effect of one type (fails when there are none or several)."""
    found = of(effects, kind)
    assert len(found) == 1, (kind.__name__, list(effects))
    return found[0]


def kinds(effects: Iterable[Effect]) -> list[str]:
    """Effect class names, for order assertions."""
    return [type(e).__name__ for e in effects]


def strip_meta(params: dict[str, JSONValue]) -> dict[str, JSONValue]:
    """Request params without ``_meta`` (the spec's examples omit it)."""
    return {k: v for k, v in params.items() if k != "_meta"}


def read_result(uri: str, data: bytes, *, blob: bool = False) -> dict[str, JSONValue]:
    """A modern ``resources/read`` result for ``data``."""
    item: dict[str, JSONValue]
    if blob:
        item = {"uri": uri, "blob": base64.b64encode(data).decode("ascii")}
    else:
        item = encode_resource_contents(uri, data, None)
    return {"resultType": "complete", "contents": [item], **CACHE}


def list_result(entries: list[Any], cursor: str | None = None) -> dict[str, JSONValue]:
    """A modern ``skills/list`` result."""
    out: dict[str, JSONValue] = {"resultType": "complete", "skills": entries, **CACHE}
    if cursor is not None:
        out["nextCursor"] = cursor
    return out


def get_result(entry: Any) -> dict[str, JSONValue]:
    """A modern ``skills/get`` result."""
    return {"resultType": "complete", "skill": entry, **CACHE}


def rpc_error(code: int, message: str = "error") -> dict[str, JSONValue]:
    """A JSON-RPC error object."""
    return {"code": code, "message": message}


@dataclass
class FakeSkill:
    """One skill the fake server publishes."""

    uri: str
    files: dict[str, bytes]
    dynamic: bool = False
    frontmatter: dict[str, JSONValue] | None = None

    @property
    def root(self) -> str:
        return self.uri[: -len("/SKILL.md")]


Override = Callable[[str, dict[str, JSONValue]], "tuple[str, Any] | None"]


@dataclass
class FakeServer:
    """An in-memory skills server; see the module docstring."""

    directory_read: bool = True
    page_size: int | None = None
    blob: bool = False
    skills: dict[str, FakeSkill] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)
    overrides: list[Override] = field(default_factory=list)
    requests: list[tuple[str, dict[str, JSONValue]]] = field(default_factory=list)

    def add(
        self,
        path: str,
        files: dict[str, bytes] | None = None,
        *,
        dynamic: bool = False,
        scheme: str = "skill",
        frontmatter: dict[str, JSONValue] | None = None,
    ) -> str:
        """Publish a skill at ``scheme://path``; return its SKILL.md URI."""
        name = path.rsplit("/", 1)[-1]
        uri = f"{scheme}://{path}/SKILL.md"
        self.skills[uri] = FakeSkill(
            uri=uri,
            files=dict(files) if files is not None else {"SKILL.md": skill_md(name)},
            dynamic=dynamic,
            frontmatter=frontmatter,
        )
        return uri

    def capabilities(self) -> dict[str, JSONValue]:
        return server_capabilities(directory_read=self.directory_read)

    def entry(self, uri: str) -> dict[str, JSONValue]:
        """The honest entry of a published skill."""
        skill = self.skills[uri]
        frontmatter = skill.frontmatter
        if frontmatter is None:
            frontmatter = parse_frontmatter(skill.files["SKILL.md"]).data
        resources: JSONValue
        if skill.dynamic:
            resources = "dynamic"
        else:
            resources = [
                {"uri": f"{skill.root}/{path}", "digest": compute_digest(data), "size": len(data)}
                for path, data in sorted(skill.files.items())
            ]
        return {"uri": uri, "frontmatter": frontmatter, "resources": resources}

    def file(self, uri: str) -> bytes | None:
        for skill in self.skills.values():
            if uri.startswith(skill.root + "/"):
                data = skill.files.get(uri[len(skill.root) + 1 :])
                if data is not None:
                    return data
        return None

    def handle(self, method: str, params: dict[str, JSONValue]) -> tuple[str, Any]:
        """Answer one request: ``("result", obj)`` or ``("error", obj)``."""
        self.requests.append((method, params))
        for override in self.overrides:
            answer = override(method, params)
            if answer is not None:
                return answer
        if method == "skills/list":
            uris = [u for u in self.skills if u not in self.hidden]
            start = int(str(params.get("cursor", "0")))
            size = self.page_size or len(uris) or 1
            page = uris[start : start + size]
            cursor = str(start + size) if start + size < len(uris) else None
            return "result", list_result([self.entry(u) for u in page], cursor)
        uri = params.get("uri")
        assert isinstance(uri, str)
        if method == "skills/get":
            if uri not in self.skills:
                return "error", rpc_error(-32602, f"No skill is served at {uri}")
            return "result", get_result(self.entry(uri))
        if method == "resources/read":
            data = self.file(uri)
            if data is None:
                return "error", rpc_error(-32602, f"not found: {uri}")
            return "result", read_result(uri, data, blob=self.blob)
        if method == "resources/directory/read":
            children: dict[str, JSONValue] = {}
            for skill in self.skills.values():
                for path in skill.files:
                    full = f"{skill.root}/{path}"
                    if full.startswith(uri + "/"):
                        name, sep, _ = full[len(uri) + 1 :].partition("/")
                        children[name] = {
                            "uri": f"{uri}/{name}",
                            "name": name,
                            "mimeType": "inode/directory" if sep else "text/markdown",
                        }
            if not children:
                return "error", rpc_error(-32602, f"{uri} is not a directory resource")
            return "result", {
                "resultType": "complete",
                "resources": [children[k] for k in sorted(children)],
            }
        return "error", rpc_error(-32601, "method not found")


#: Answers a prompt: True approves, False denies, None leaves it open.
Approver = Callable[[RequestApproval], bool | None]


class Harness:
    """Drives a Host against fake servers (see the module docstring)."""

    def __init__(self, host: Host | None = None, **policy: Any) -> None:
        self.host = host if host is not None else Host(policy=HostPolicy(**policy))
        self.servers: dict[str, FakeServer] = {}
        self.sent: list[SendRequest] = []
        self.log: list[Effect] = []

    def add_server(
        self, label: str, server: FakeServer | None = None, *, era: Era = Era.MODERN
    ) -> FakeServer:
        server = server if server is not None else FakeServer()
        self.servers[label] = server
        self.host.connect(label, server.capabilities(), era=era)
        return server

    def run(
        self,
        effects: list[Effect],
        *,
        approve: bool | Approver = False,
        grant_fields: tuple[str, ...] = (),
        allow_exec: bool = False,
        cross_origin: bool | None = None,
        answer: bool = True,
    ) -> list[Effect]:
        """Carry out ``effects``: answer requests (when ``answer``) and prompts (when asked).

        Runs the library's own pump loop (:class:`~skills_core.host.pump.EffectRun`), with the
        fake servers as requesters; unlike the pump's output, the list returned keeps every
        ``SendRequest`` in its place, so tests can see what was sent when. With ``answer=False``
        the first request is left unanswered and the run stops there.
        """
        out: list[Effect] = []
        run = EffectRun(self.host, effects, self.servers.keys())
        while (step := run.next()) is not None:
            assert not isinstance(step, TransportFailure)  # fake servers always answer
            out.append(step)
            self.log.append(step)
            if isinstance(step, SendRequest):
                self.sent.append(step)
                if not answer:
                    break
                server = self.servers[step.origin]
                kind, payload = server.handle(step.method, strip_meta(step.params))
                if kind == "result":
                    run.settle(step, payload)
                else:
                    run.settle(
                        step,
                        JsonRpcError(
                            str(payload.get("message")),
                            rpc_code=payload["code"],
                            method=step.method,
                            data=payload.get("data"),
                        ),
                    )
            elif isinstance(step, RequestApproval) and approve:
                decision = approve(step) if callable(approve) else True
                if decision is None:
                    continue
                if decision:
                    run.react(
                        self.host.approve(
                            step.prompt_id, grant_fields=grant_fields, allow_exec=allow_exec
                        )
                    )
                else:
                    run.react(self.host.deny(step.prompt_id))
            elif isinstance(step, RequestCrossOriginApproval) and cross_origin is not None:
                if cross_origin:
                    run.react(self.host.approve(step.prompt_id))
                else:
                    run.react(self.host.deny(step.prompt_id))
        return out

    def methods(self) -> list[str]:
        """The methods of every request sent so far."""
        return [s.method for s in self.sent]

    def list_all(self, label: str) -> list[Effect]:
        return self.run(self.host.list_skills(label))

    def load(self, label: str, uri: str, **kw: Any) -> list[Effect]:
        kw.setdefault("approve", True)
        return self.run(self.host.load(label, uri), **kw)

    def read(self, label: str, uri: str, ref: str, **kw: Any) -> list[Effect]:
        return self.run(self.host.read(label, uri, ref), **kw)


def example_harness(**policy: Any) -> Harness:
    """The spec's example server (``pdf-processing``) under its example label, listed."""
    h = Harness(**policy)
    h.add_server(ex.ORIGIN_LABEL).add("pdf-processing", ex.FILES)
    h.list_all(ex.ORIGIN_LABEL)
    return h
