"""``skills-core host``: load skills from MCP server processes, verifying every byte.

Theory of operation: one run of the command is one short-lived host. It spawns every ``--server``
(asyncio adapter), handshakes with each (``server/discover``, falling back to ``initialize``), lists
their skills to resolve the SKILL argument, then performs the action through a
:class:`~skills_core.host.Host`, carrying out its effects with
:func:`~skills_core.adapters.host_driver.carry_out`. Approval prompts are answered by ``--yes``
(the manifest only: never a dynamic skill without ``--allow-dynamic``, never an ``allowed-tools``
grant, never a cross-origin read), interactively on a terminal, or refused (exit 4). Approvals
persist in ``--approvals FILE``, bound to the manifest. Content is printed framed with its origin
label, exactly as a model would receive it. Exit codes: see :mod:`skills_core.cli._common`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from skills_core.adapters.asyncio_stdio import StdioClient, open_stdio_client
from skills_core.adapters.host_driver import CLIENT_INFO, TransportFailure, carry_out, handshake
from skills_core.cli._common import (
    EXIT_APPROVAL,
    EXIT_CONNECTION,
    EXIT_INVALID_ENTRY,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VERIFICATION,
    CliError,
    error,
    print_json,
)
from skills_core.errors import (
    JsonRpcError,
    LocalProtocolError,
    SkillsError,
    TransportError,
    VerificationError,
)
from skills_core.host.approvals import ApprovalsFileError, ApprovalStore
from skills_core.host.cache import CacheStore
from skills_core.host.effects import (
    ApprovalGranted,
    ApprovalRevoked,
    DeclineReason,
    DeliverToModel,
    DeliveryKind,
    DirectoryListing,
    Effect,
    EntryRejected,
    FailureSource,
    ListingPartial,
    LoadDeclined,
    LoadFailed,
    Notice,
    NoticeLevel,
    ReferenceRejected,
    Refused,
    RequestApproval,
    RequestCrossOriginApproval,
    RequestFailed,
    SkillChanged,
    VerificationFailed,
)
from skills_core.host.policy import HostPolicy
from skills_core.host.registry import ResolutionStatus
from skills_core.host.router import Host
from skills_core.host.states import LoadState
from skills_core.jsonvalue import thaw_json
from skills_core.uri import is_skill_md_uri

__all__ = ["run_host"]


def run_host(args: argparse.Namespace) -> int:
    """Run ``skills-core host`` with parsed arguments; return the exit code."""
    servers = _parse_servers(args.server)
    return asyncio.run(_Session(args, servers).run())


def _parse_servers(specs: list[str]) -> dict[str, list[str]]:
    if not specs:
        raise CliError("host: give at least one --server LABEL=COMMAND", EXIT_USAGE)
    servers: dict[str, list[str]] = {}
    for spec in specs:
        label, sep, command = spec.partition("=")
        label = label.strip()
        if not sep or not label or not command.strip():
            raise CliError(f"--server {spec!r}: expected LABEL=COMMAND", EXIT_USAGE)
        if label in servers:
            raise CliError(f"--server: the label {label!r} is used twice", EXIT_USAGE)
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise CliError(
                f"--server {label}: cannot parse the command ({exc})", EXIT_USAGE
            ) from None
        servers[label] = argv
    return servers


#: Exit codes from the most to the least serious: the first one recorded decides the exit.
_SEVERITY = (EXIT_CONNECTION, EXIT_VERIFICATION, EXIT_INVALID_ENTRY, EXIT_APPROVAL, EXIT_USAGE)


@dataclass
class _Outcome:
    """What went wrong, by exit code; the most serious one decides the exit."""

    failures: dict[int, list[str]] = field(default_factory=dict)

    def fail(self, code: int, message: str) -> None:
        self.failures.setdefault(code, []).append(message)

    def exit_code(self) -> int:
        for code in _SEVERITY:
            if code in self.failures:
                return code
        return EXIT_OK

    def report(self) -> None:
        for code in _SEVERITY:
            for message in dict.fromkeys(self.failures.get(code, [])):
                error(message)


class _Session:
    """One run of ``skills-core host``."""

    def __init__(self, args: argparse.Namespace, servers: dict[str, list[str]]) -> None:
        self.args = args
        self.servers = servers
        self.timeout: float = args.timeout
        self.outcome = _Outcome()
        self.approvals_path = Path(args.approvals) if args.approvals else None
        self.host = Host(
            policy=HostPolicy(allow_dynamic=args.allow_dynamic),
            client_info=CLIENT_INFO,
            approvals=self._load_approvals(),
            cache=self._open_cache(),
        )
        self.connections: dict[str, StdioClient] = {}
        self.delivered: list[DeliverToModel] = []
        self.listings: list[DirectoryListing] = []
        self.rejected: list[EntryRejected] = []
        self.notices: list[str] = []
        self.warnings: list[tuple[str, str]] = []
        self.interactive = sys.stdin.isatty() and sys.stderr.isatty()

    # -- set-up -------------------------------------------------------------------------------

    def _load_approvals(self) -> ApprovalStore:
        path = self.approvals_path
        if path is None or not path.exists():
            return ApprovalStore()
        try:
            return ApprovalStore.loads(path.read_bytes())
        except (OSError, ApprovalsFileError) as exc:
            raise CliError(f"--approvals {path}: {exc}", EXIT_USAGE) from None

    def _save_approvals(self) -> None:
        path = self.approvals_path
        if path is None:
            return
        text = json.dumps(self.host.approvals.to_json(), indent=2, ensure_ascii=False) + "\n"
        directory = path.parent if str(path.parent) else Path(".")
        fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise CliError(f"--approvals {path}: cannot save ({exc})", EXIT_USAGE) from None

    def _open_cache(self) -> CacheStore | None:
        if not self.args.cache:
            return None
        from skills_core.host.cache_store import DiskCacheStore  # noqa: PLC0415

        try:
            return DiskCacheStore(self.args.cache)
        except (OSError, SkillsError) as exc:
            raise CliError(f"--cache {self.args.cache}: {exc}", EXIT_USAGE) from None

    # -- the run ------------------------------------------------------------------------------

    async def run(self) -> int:
        async with contextlib.AsyncExitStack() as stack:
            for label, argv in self.servers.items():
                try:
                    self.host.connect(label, {})  # validates the label before anything spawns
                except LocalProtocolError as exc:
                    raise CliError(f"--server {label}: {exc}", EXIT_USAGE) from None
                try:
                    client = await stack.enter_async_context(
                        open_stdio_client(argv, label=label, stderr=None)
                    )
                except TransportError as exc:
                    return self._fatal(exc)
                self.connections[label] = client
            for label, client in self.connections.items():
                try:
                    effects = await handshake(self.host, label, client, timeout=self.timeout)
                except (TransportError, JsonRpcError) as exc:
                    return self._fatal(exc)
                self._absorb(effects)
            code = await self._action()
        for origin, message in self.warnings:
            error(f"{origin}: {message}")
        self.outcome.report()
        return code if code != EXIT_OK else self.outcome.exit_code()

    def _fatal(self, exc: SkillsError) -> int:
        error(str(exc))
        return EXIT_CONNECTION

    async def _pump(self, effects: list[Effect]) -> list[Effect | TransportFailure]:
        """Carry out effects until nothing is left to send; answer prompts on the way."""
        done: list[Effect | TransportFailure] = []
        pending = effects
        while pending:
            produced = await carry_out(self.host, pending, self.connections, timeout=self.timeout)
            pending = []
            for effect in produced:
                done.append(effect)
                pending.extend(await self._react(effect))
        return done

    async def _react(self, effect: Effect | TransportFailure) -> list[Effect]:
        outcome = self.outcome
        if isinstance(effect, TransportFailure):
            outcome.fail(EXIT_CONNECTION, str(effect.error))
        elif isinstance(effect, RequestApproval):
            return await self._approve(effect)
        elif isinstance(effect, RequestCrossOriginApproval):
            outcome.fail(
                EXIT_APPROVAL,
                f"a skill from {effect.from_origin!r} asks to read {effect.uri} from "
                f"{effect.to_origin!r}; cross-origin reads are never approved by this command",
            )
            return self.host.deny(effect.prompt_id)
        elif isinstance(effect, ApprovalGranted | ApprovalRevoked):
            self._save_approvals()
        elif isinstance(effect, DeliverToModel):
            self.delivered.append(effect)
        elif isinstance(effect, DirectoryListing):
            self.listings.append(effect)
        elif isinstance(effect, VerificationFailed):
            if effect.source is not FailureSource.CACHE:
                outcome.fail(EXIT_VERIFICATION, f"verification failed: {effect.error}")
        elif isinstance(effect, ReferenceRejected):
            outcome.fail(EXIT_VERIFICATION, f"reference {effect.ref!r} refused: {effect.error}")
        elif isinstance(effect, LoadFailed):
            if isinstance(effect.error, VerificationError):
                code = EXIT_VERIFICATION
            elif effect.error is None and EXIT_VERIFICATION in outcome.failures:
                code = EXIT_VERIFICATION  # the verification failure that caused it stands
            else:
                code = EXIT_CONNECTION
            outcome.fail(code, effect.message)
        elif isinstance(effect, EntryRejected):
            self.rejected.append(effect)
        elif isinstance(effect, LoadDeclined):
            if not (effect.reason is DeclineReason.DENIED and EXIT_APPROVAL in outcome.failures):
                outcome.fail(_decline_code(effect.reason), effect.message)
        elif isinstance(effect, SkillChanged) and effect.requires_reapproval:
            self.notices.append(
                f"{effect.origin}: {effect.uri} changed: {effect.changes.describe()}"
            )
        elif isinstance(effect, RequestFailed):
            self.notices.append(f"{effect.origin}: {effect.method} failed: {effect.message}")
        elif isinstance(effect, Refused):
            outcome.fail(EXIT_USAGE, effect.message)
        elif isinstance(effect, Notice | ListingPartial):
            self._absorb([effect])
        return []

    def _absorb(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Notice) and effect.level is not NoticeLevel.INFO:
                self.warnings.append((effect.origin or "host", effect.message))
            elif isinstance(effect, ListingPartial):
                self.warnings.append((effect.origin, effect.message))

    async def _approve(self, prompt: RequestApproval) -> list[Effect]:
        if self.args.yes and (not prompt.dynamic or self.args.allow_dynamic):
            return self.host.approve(prompt.prompt_id)
        if self.interactive:
            sys.stderr.write(_describe_prompt(prompt))
            answer = await asyncio.get_running_loop().run_in_executor(
                None, _ask, "Approve this manifest? [y/N] "
            )
            if answer:
                grant: tuple[str, ...] = ()
                if prompt.widening_fields:
                    fields = ", ".join(prompt.widening_fields)
                    more = await asyncio.get_running_loop().run_in_executor(
                        None, _ask, f"Also grant {fields} for this skill? [y/N] "
                    )
                    grant = prompt.widening_fields if more else ()
                return self.host.approve(prompt.prompt_id, grant_fields=grant)
        why = "changed since it was approved" if prompt.changes else "not approved yet"
        detail = f": {prompt.changes.describe()}" if prompt.changes else ""
        hint = "" if self.interactive else " (run on a terminal to approve, or pass --yes)"
        self.outcome.fail(
            EXIT_APPROVAL,
            f"approval needed for {prompt.origin}:{prompt.name} ({prompt.uri}), {why}{detail}"
            f"{hint}",
        )
        return self.host.deny(prompt.prompt_id)

    # -- actions ------------------------------------------------------------------------------

    async def _action(self) -> int:
        action = self.args.action
        await self._list_all()
        if action == "list":
            return self._print_list()
        origin, uri = self._resolve(self.args.skill)
        if action == "show":
            return await self._show(origin, uri)
        loaded = await self._load(origin, uri)
        if not loaded:
            return EXIT_OK  # the outcome carries the failure
        if action == "load":
            self._print_delivery(DeliveryKind.SKILL)
            return EXIT_OK
        if action == "read":
            before = len(self.delivered)
            await self._pump(self.host.read(origin, uri, self.args.ref))
            files = [d for d in self.delivered[before:] if d.kind is not DeliveryKind.SKILL]
            self._emit_deliveries(files)
            return EXIT_OK
        assert action == "ls"
        await self._pump(self.host.list_dir(origin, uri, self.args.directory))
        self._print_listings()
        return EXIT_OK

    async def _list_all(self) -> None:
        for label in self.connections:
            features = self.host.features(label)
            if features is None or not features.skills:
                self.notices.append(f"{label}: the server does not declare the skills extension")
                continue
            await self._pump(self.host.list_skills(label))

    def _resolve(self, query: str) -> tuple[str, str]:
        label, sep, rest = query.partition(":")
        if sep and label in self.connections and is_skill_md_uri(rest):
            return label, rest  # LABEL:URI, possibly a skill the listing did not include
        resolution = self.host.resolve(query)
        unique = resolution.unique
        if unique is not None and unique.origin is not None and unique.uri is not None:
            return unique.origin, unique.uri
        if resolution.status is ResolutionStatus.NOT_FOUND and is_skill_md_uri(query):
            if len(self.connections) == 1:
                return next(iter(self.connections)), query
            raise CliError(
                f"{query} is not in any listing; name the server as LABEL:{query}", EXIT_USAGE
            )
        candidates = ", ".join(c.qualified for c in resolution.candidates)
        if resolution.status is ResolutionStatus.NOT_FOUND:
            refused = [r for r in self.rejected if _names(r.uri, query)]
            if refused:
                reasons = "; ".join(f"{r.origin}: {r.error}" for r in refused)
                raise CliError(reasons, EXIT_INVALID_ENTRY)
            raise CliError(f"no server lists a skill {query!r}", EXIT_USAGE)
        raise CliError(f"{resolution.message} (candidates: {candidates})", EXIT_USAGE)

    async def _load(self, origin: str, uri: str) -> bool:
        await self._pump(self.host.load(origin, uri))
        return self.host.state(origin, uri) is LoadState.ACTING

    async def _show(self, origin: str, uri: str) -> int:
        entry = self.host.registry.get(origin, uri)
        if entry is None:
            await self._pump(self.host.get_skill(origin, uri))
            entry = self.host.registry.get(origin, uri)
        if entry is None:
            self._report_rejections(uri)
            if not self.outcome.failures:
                self.outcome.fail(EXIT_USAGE, f"{origin}: no skill is served at {uri}")
            return EXIT_OK
        approved = (
            not entry.is_dynamic
            and self.host.approvals.approved(origin, entry.uri, entry.resource_set) is not None
        )
        if self.args.json:
            print_json({"origin": origin, "approved": approved, "entry": entry.to_json()})
            return EXIT_OK
        out = sys.stdout
        out.write(f"origin:      {origin}\n")
        out.write(f"uri:         {entry.uri}\n")
        out.write(f"name:        {entry.name}\n")
        out.write(f"description: {entry.description}\n")
        out.write(f"approved:    {'yes, for this exact manifest' if approved else 'no'}\n")
        extra = {k: v for k, v in entry.frontmatter.items() if k not in ("name", "description")}
        for key, value in extra.items():
            out.write(f"{key + ':':12} {json.dumps(thaw_json(value), ensure_ascii=False)}\n")
        if isinstance(entry.resources, str):
            out.write('files:       "dynamic" (no manifest, no integrity)\n')
        else:
            out.write(f"files:       {len(entry.resources)}, {entry.total_size} bytes\n")
            for resource in entry.resources:
                out.write(f"  {resource.size:>9}  {resource.digest}  {resource.uri}\n")
        return EXIT_OK

    def _report_rejections(self, uri: str | None) -> None:
        for rejected in self.rejected:
            if uri is None or rejected.uri == uri:
                self.outcome.fail(EXIT_INVALID_ENTRY, f"{rejected.origin}: {rejected.error}")

    # -- output -------------------------------------------------------------------------------

    def _print_list(self) -> int:
        items = self.host.catalog()
        if self.args.json:
            print_json(
                {
                    "skills": [
                        {
                            "origin": item.origin,
                            "name": item.name,
                            "qualified": item.qualified,
                            "uri": item.uri,
                            "description": item.description,
                            "dynamic": item.dynamic,
                        }
                        for item in items
                    ],
                    "rejected": [
                        {
                            "origin": r.origin,
                            "uri": r.uri,
                            "over_limit": not r.error.malformed,
                            "problems": [str(p) for p in r.error.problems],
                        }
                        for r in self.rejected
                    ],
                    "notices": self.notices,
                }
            )
            return EXIT_OK
        out = sys.stdout
        for item in items:
            marker = " [dynamic]" if item.dynamic else ""
            out.write(f"{item.qualified}{marker}  {item.uri}\n    {item.description}\n")
        for rejected in self.rejected:
            what = "OVER LIMIT" if not rejected.error.malformed else "INVALID"
            out.write(f"{rejected.origin}:{rejected.uri or '(no uri)'}  [{what}]\n")
            for problem in rejected.error.problems:
                out.write(f"    {problem}\n")
        for notice in self.notices:
            out.write(f"note: {notice}\n")
        return EXIT_OK

    def _print_delivery(self, kind: DeliveryKind) -> None:
        self._emit_deliveries([d for d in self.delivered if d.kind is kind])

    def _emit_deliveries(self, deliveries: list[DeliverToModel]) -> None:
        for delivery in deliveries:
            if self.args.json:
                print_json(
                    {
                        "origin": delivery.origin,
                        "uri": delivery.uri,
                        "kind": str(delivery.kind),
                        "verified": delivery.verified,
                        "from_cache": delivery.from_cache,
                        "content": delivery.content.decode("utf-8", errors="replace"),
                    }
                )
            else:
                sys.stdout.write(delivery.model_text)
                if not delivery.model_text.endswith("\n"):
                    sys.stdout.write("\n")

    def _print_listings(self) -> None:
        for listing in self.listings:
            if self.args.json:
                print_json(
                    {
                        "origin": listing.origin,
                        "uri": listing.uri,
                        "from_manifest": listing.from_manifest,
                        "children": [
                            {"name": c.name, "uri": c.uri, "directory": c.is_directory}
                            for c in listing.children
                        ],
                        "looks_changed": listing.looks_changed,
                    }
                )
            else:
                sys.stdout.write(listing.model_text)
                if not listing.model_text.endswith("\n"):
                    sys.stdout.write("\n")


def _names(uri: str | None, query: str) -> bool:
    """True when a refused entry's URI is what ``query`` (a URI, LABEL:NAME or NAME) names."""
    if uri is None:
        return False
    name = query.rpartition(":")[2] if "://" not in query else query
    return uri == name or uri.endswith(f"/{name}/SKILL.md")


def _decline_code(reason: DeclineReason) -> int:
    if reason in (DeclineReason.INVALID_ENTRY, DeclineReason.OVER_LIMIT):
        return EXIT_INVALID_ENTRY
    if reason is DeclineReason.NOT_A_SKILL:
        return EXIT_USAGE
    if reason in (DeclineReason.FILE_TOO_LARGE, DeclineReason.SERVER_BUDGET):
        return EXIT_INVALID_ENTRY
    return EXIT_APPROVAL


def _describe_prompt(prompt: RequestApproval) -> str:
    lines = [
        "",
        f"Skill {prompt.name!r} from server {prompt.origin!r} ({prompt.uri})",
        f"  {prompt.description}",
    ]
    if prompt.changes:
        lines.append(f"  It changed since you approved it: {prompt.changes.describe()}")
    if isinstance(prompt.manifest, str):
        lines.append(
            '  Its files are "dynamic": nothing can be verified; this approval is for this load '
            "only."
        )
    else:
        lines.append(f"  {len(prompt.manifest)} files, {prompt.total_size} bytes:")
        for resource in prompt.manifest:
            lines.append(f"    {resource.size:>9}  {resource.digest[:19]}...  {resource.uri}")
    if prompt.widening_fields:
        lines.append(
            f"  It asks for: {', '.join(prompt.widening_fields)} (ignored unless you grant it)"
        )
    return "\n".join(lines) + "\n"


def _ask(question: str) -> bool:
    sys.stderr.write(question)
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() in ("y", "yes")
