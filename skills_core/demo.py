"""``skills-core demo``: the spec's example message flow, end to end, against a real server process.

Theory of operation: the demo writes the spec's ``pdf-processing`` skill (exact bytes, so sizes and
digests equal the spec's) into a temporary folder, starts ``python -m skills_core serve`` on it as a
child process, and drives a :class:`~skills_core.host.Host` through the flow of the spec's "Example
Message Flow", printing each step and each JSON-RPC request and answer: list, approve, load and
verify, directory read, the newly added ``credit-note.md`` refused as unlisted, the refresh, the
revocation, re-approval, and the verified read. The user's approvals are given by the demo itself,
and said so. It exits 0 when every step went as the spec says, 1 otherwise. Every line it prints
goes through :func:`skills_core.display.display`, as all text from a server must.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from . import spec_examples as ex
from ._self import python_m, python_m_env
from .adapters.asyncio_stdio import StdioClient, open_stdio_client
from .display import display
from .errors import SkillsError
from .host.approvals import ApprovalStore
from .host.driver import CLIENT_INFO, TransportFailure, carry_out, handshake
from .host.effects import (
    ApprovalRevoked,
    DeliverToModel,
    DirectoryListing,
    Effect,
    RequestApproval,
    SkillChanged,
    VerificationFailed,
)
from .host.policy import HostPolicy
from .host.router import Host
from .jsonvalue import JSONValue

__all__ = ["run_demo"]

_T = TypeVar("_T")

LABEL = ex.ORIGIN_LABEL
SKILL = ex.SKILL_MD_URI


def run_demo() -> int:
    """Run the demo; return 0 when the flow matched the spec, 1 otherwise."""
    with tempfile.TemporaryDirectory(prefix="skills-core-demo-") as tmp:
        root = Path(tmp) / "skills"
        for path, data in ex.FILES.items():
            target = root / "pdf-processing" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        try:
            return asyncio.run(_Demo(root).run())
        except DemoStepError as exc:
            _say()
            _say(f"DEMO FAILED: {exc}")
            return 1


class DemoStepError(Exception):
    """A step did not go as the spec says."""


class _Narrated:
    """A connection that prints each request and a summary of each answer."""

    def __init__(self, client: StdioClient) -> None:
        self._client = client

    async def request(
        self, method: str, params: Mapping[str, object] | None = None, *, timeout: float | None
    ) -> dict[str, JSONValue]:
        shown = {k: v for k, v in (params or {}).items() if k != "_meta"}
        _say(f"    -> {method} {json.dumps(shown)}")
        try:
            result = await self._client.request(method, params, timeout=timeout)
        except SkillsError as exc:
            _say(f"    <- error: {exc}")
            raise
        _say(f"    <- {_summary(method, result)}")
        return result

    async def notify(self, method: str, params: Mapping[str, object] | None = None) -> None:
        await self._client.notify(method, params)


def _summary(method: str, result: Mapping[str, object]) -> str:
    if method == "skills/list":
        skills = result.get("skills")
        return f"{len(skills) if isinstance(skills, list) else '?'} skill(s)"
    if method == "skills/get":
        skill = result.get("skill")
        resources = skill.get("resources") if isinstance(skill, dict) else None
        count = len(resources) if isinstance(resources, list) else resources
        return f"entry with {count} files"
    if method == "resources/read":
        contents = result.get("contents")
        item = contents[0] if isinstance(contents, list) and contents else {}
        text = item.get("text") if isinstance(item, dict) else None
        size = len(text.encode()) if isinstance(text, str) else "?"
        return f"{size} bytes of {item.get('mimeType') if isinstance(item, dict) else '?'}"
    if method == "resources/directory/read":
        resources = result.get("resources")
        names = [r.get("name") for r in resources] if isinstance(resources, list) else []
        return "children: " + ", ".join(str(n) for n in names)
    if method == "server/discover":
        return f"capabilities {json.dumps(result.get('capabilities'))}"
    return "ok"


def _say(text: str = "") -> None:
    """Write one line; what the server sent in it is shown through ``display`` (docs/design.md#d11)."""
    sys.stdout.write(display(text) + "\n")
    sys.stdout.flush()


def _step(number: int, title: str) -> None:
    _say()
    _say(f"[{number}] {title}")


class _Demo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.host = Host(
            policy=HostPolicy(), client_info=CLIENT_INFO, approvals=ApprovalStore(), cache=None
        )
        self.connections: dict[str, _Narrated] = {}

    async def pump(self, effects: list[Effect]) -> list[Effect | TransportFailure]:
        done = await carry_out(self.host, effects, self.connections, timeout=10.0)
        for effect in done:
            if isinstance(effect, TransportFailure):
                raise DemoStepError(str(effect.error))
        return done

    async def run(self) -> int:
        env = python_m_env(os.environ)
        argv = python_m("serve", str(self.root))
        _say("skills-core demo: the MCP Skills extension's example message flow, end to end.")
        _say(f"Server: a real process, `{' '.join(argv[1:4])} <tmp>/skills`, labelled {LABEL!r}.")
        async with open_stdio_client(argv, label=LABEL, env=env, stderr=-3) as client:
            narrated = _Narrated(client)
            self.connections[LABEL] = narrated
            _step(1, "Connect: discover the server's capabilities (nothing else is fetched)")
            await handshake(self.host, LABEL, narrated, timeout=10.0)
            features = self.host.features(LABEL)
            if features is None or not features.directory_read:
                raise DemoStepError("the server did not declare the extension with directoryRead")
            await self._flow()
        _say()
        _say("Done: every byte the model saw was verified against the approved manifest.")
        return 0

    async def _flow(self) -> None:
        host = self.host
        _step(2, "List skills: the host records each entry under (label, uri) and fetches nothing")
        await self.pump(host.list_skills(LABEL))
        entry = host.registry.get(LABEL, SKILL)
        if entry is None or entry.to_json() != ex.entry_json():
            raise DemoStepError("the listed entry differs from the spec's")
        for resource in entry.resources:
            assert not isinstance(resource, str)
            _say(f"    {resource.size:>4} bytes  {resource.digest}  {resource.uri}")
        _say("    sizes and digests equal the spec's example.")

        _step(3, "The model asks to load the skill: the user approves the manifest")
        effects = await self.pump(host.load(LABEL, SKILL))
        prompt = _only(effects, RequestApproval)
        _say(
            f"    approval prompt: {prompt.name} from {prompt.origin}, {len(prompt.manifest)} files"
        )
        _say("    (the demo approves on the user's behalf)")
        effects = await self.pump(host.approve(prompt.prompt_id))
        skill_md = _only(effects, DeliverToModel)
        _say(f"    verified: {len(skill_md.content)} bytes, digest and frontmatter match the entry")
        _say("    delivered to the model, tagged with its origin:")
        _indent(skill_md.model_text)

        _step(4, "Meanwhile the server's author adds templates/credit-note.md to the live folder")
        (self.root / "pdf-processing" / "templates" / "credit-note.md").write_bytes(ex.CREDIT_NOTE)
        _say("    (written to disk; the host's held entry still lists three files)")

        _step(
            5,
            "The model lists templates/: the directory read shows the new file, the host hides it",
        )
        effects = await self.pump(host.list_dir(LABEL, SKILL, "templates"))
        listing = _only(effects, DirectoryListing)
        shown = [c.name for c in listing.children]
        if "credit-note.md" in shown or "invoice.md" not in shown:
            raise DemoStepError(f"the model was shown {shown}")
        _say(
            f"    shown to the model: {', '.join(shown)}; not part of the approved skill: "
            f"{', '.join(listing.hidden) or '(none)'}"
        )

        _step(6, "The model reads templates/invoice.md: listed, so it is fetched and verified")
        effects = await self.pump(host.read(LABEL, SKILL, "templates/invoice.md"))
        invoice = _only(effects, DeliverToModel)
        if invoice.content != ex.INVOICE or not invoice.verified:
            raise DemoStepError("invoice.md did not verify")
        _say(f"    verified {len(invoice.content)} bytes against the held entry")

        _step(
            7,
            "The model reads templates/credit-note.md: unlisted, refused without a request;"
            " the host refreshes the entry",
        )
        effects = await self.pump(host.read(LABEL, SKILL, "templates/credit-note.md"))
        failed = _only(effects, VerificationFailed)
        _say(f"    refused: {failed.error}")
        if any(isinstance(e, DeliverToModel) for e in effects):
            raise DemoStepError("unlisted content reached the model")
        _only(effects, SkillChanged)
        revoked = _only(effects, ApprovalRevoked)
        _say(f"    the manifest changed ({revoked.changes.describe()}): approval revoked")
        prompt = _only(effects, RequestApproval)
        _say("    the skill is presented as changed and needing approval again")
        _say("    (the demo approves the new manifest on the user's behalf)")
        await self.pump(host.approve(prompt.prompt_id))

        _step(8, "The model reads templates/credit-note.md again, under the refreshed entry")
        effects = await self.pump(host.read(LABEL, SKILL, "templates/credit-note.md"))
        note = _only(effects, DeliverToModel)
        size, digest = ex.EXPECTED["templates/credit-note.md"]
        if note.content != ex.CREDIT_NOTE or not note.verified:
            raise DemoStepError("credit-note.md did not verify")
        _say(f"    verified {size} bytes, {digest}")
        _indent(note.model_text)


def _only(effects: list[Effect | TransportFailure], kind: type[_T]) -> _T:
    found = [e for e in effects if isinstance(e, kind)]
    if len(found) != 1:
        names = ", ".join(type(e).__name__ for e in effects)
        raise DemoStepError(f"expected one {kind.__name__}, got: {names}")
    return found[0]


def _indent(text: str) -> None:
    for line in text.rstrip("\n").split("\n"):
        _say(f"      | {line}")
