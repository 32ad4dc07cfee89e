"""``skills-core host``: load skills from MCP server processes, verifying every byte.

Theory of operation: one run of the command is one short-lived host. It spawns every ``--server``
command (asyncio adapter, each in a process group of its own) or connects to every ``--server``
URL (Streamable HTTP, with httpx2 and anyio; ``--header`` adds headers for one server),
handshakes with each (``server/discover``, falling back to ``initialize``, unless
``--protocol-era`` pins one), lists their skills to resolve the SKILL argument, then performs the
action through a :class:`~skills_core.host.Host`, carrying out its effects with
:func:`~skills_core.host.pump.pump_async`. Approval prompts are answered by ``--yes``
(the manifest only: never a dynamic skill without ``--allow-dynamic``, never an ``allowed-tools``
grant, never a cross-origin read), interactively on a terminal, or refused (exit 4). Approvals
persist in ``--approvals FILE``, bound to the manifest. Content is printed framed with its origin
label, exactly as a model would receive it. Exit codes: see :mod:`skills_core.cli._common`; each
effect the host returns maps to one of them in :meth:`_Session._react`.

What a person sees is ours (docs/design.md#d11):

* every string that came from a server (names, descriptions, URIs, file names, frontmatter values,
  error messages, notices) is shown through :mod:`skills_core.display`; on a terminal, lines that
  carry such text are cut at its width into rows that start with our prefix
  (:mod:`skills_core.cli._screen`), so not even a wrapped line can start like one of ours;
* the approval prompt prints what the server says first, then, in a fixed form, what is being
  approved (every file with its size and digest, what changed, what is asked for) and the
  question, last;
* nothing of a server reaches the terminal while a prompt is shown: a server's stderr is kept (its
  last lines, bounded) and shown only when the command fails because of that server, and the
  adapter's reports (junk on stdout, counted and summarised) are printed at the end;
* content printed on a terminal keeps its line breaks but shows every other control as an escape;
  printed to a pipe or a file it is exact.

Approvals and cache files are opened so that no special file (a FIFO, a device) can block the
command: non-blocking open, then a regular-file check before anything is read.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import functools
import json
import os
import signal
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO, cast

from ..adapters.asyncio_stdio import StdioClient
from ..digest import compute_digest
from ..display import display, display_line
from ..errors import (
    JsonRpcError,
    LocalProtocolError,
    SkillsError,
    TransportError,
    VerificationError,
    VerificationKind,
)
from ..host.approvals import ApprovalsFileError, ApprovalStore
from ..host.cache import CacheStore
from ..host.codes import NoticeCode, StopReason
from ..host.driver import CLIENT_INFO, Requester, handshake
from ..host.effects import (
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
    RefusalCode,
    Refused,
    RequestApproval,
    RequestCrossOriginApproval,
    RequestFailed,
    SkillChanged,
    VerificationFailed,
)
from ..host.policy import HostPolicy
from ..host.pump import AsyncSend, Pumped, TransportFailure, pump_async
from ..host.registry import ResolutionStatus
from ..host.router import Host
from ..host.states import LoadState
from ..jsonvalue import thaw_json
from ..messages import Era
from ..uri import is_skill_md_uri
from ._common import (
    EXIT_APPROVAL,
    EXIT_CONNECTION,
    EXIT_INVALID_ENTRY,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VERIFICATION,
    CliError,
    error,
    print_json,
    read_regular_file,
    terminal_width,
)
from ._screen import fit
from ._servers import ServerSpec, open_connection, parse_headers, parse_servers

if TYPE_CHECKING:
    from ..http.eras import EraCache

__all__ = ["run_host", "MAX_APPROVALS_BYTES"]

#: The largest approvals file read (a record per approved skill is a few hundred bytes).
MAX_APPROVALS_BYTES: Final = 16 << 20
#: Files of a skill named when a read asks for one it does not have.
FILES_NAMED: Final = 20
#: Why a listing stopped that makes it a failure (exit 2), not a notice.
_LISTING_FAILED: Final = frozenset({StopReason.REQUEST_FAILED, StopReason.MALFORMED_RESULT})
#: Exit codes of refusals; any other refusal is a usage error (exit 1).
_REFUSAL_EXIT: Final = {
    RefusalCode.NOT_IN_SKILL: EXIT_VERIFICATION,  # a reference leaving the skill, as README says
    RefusalCode.REAPPROVAL_REQUIRED: EXIT_APPROVAL,
    RefusalCode.CROSS_ORIGIN_DENIED: EXIT_APPROVAL,
    RefusalCode.SKILL_SIZE_LIMIT: EXIT_INVALID_ENTRY,
    RefusalCode.SERVER_BUDGET: EXIT_INVALID_ENTRY,
    RefusalCode.FILE_TOO_LARGE: EXIT_INVALID_ENTRY,
    RefusalCode.RESOURCE_TOO_LARGE: EXIT_INVALID_ENTRY,
}
_DECLINE_EXIT: Final = {
    DeclineReason.INVALID_ENTRY: EXIT_INVALID_ENTRY,
    DeclineReason.OVER_LIMIT: EXIT_INVALID_ENTRY,
    DeclineReason.FILE_TOO_LARGE: EXIT_INVALID_ENTRY,
    DeclineReason.SERVER_BUDGET: EXIT_INVALID_ENTRY,
    DeclineReason.NOT_A_SKILL: EXIT_USAGE,
}


def run_host(args: argparse.Namespace) -> int:
    """Run ``skills-core host`` with parsed arguments; return the exit code."""
    specs = [*args.server, *getattr(args, "server_after", [])]
    servers = parse_servers(specs, command="host", exit_code=EXIT_USAGE)
    return asyncio.run(_Session(args, servers).run())


#: Exit codes from the most to the least serious: the first one recorded decides the exit.
_SEVERITY = (EXIT_CONNECTION, EXIT_VERIFICATION, EXIT_INVALID_ENTRY, EXIT_APPROVAL, EXIT_USAGE)


@dataclass
class _Outcome:
    """What went wrong, by exit code; the most serious one decides the exit.

    A failure may carry a key naming the fact it reports (a request to a server, a file): the
    same fact reported again by another effect, in other words, is not said twice.
    """

    failures: dict[int, list[str]] = field(default_factory=dict)
    facts: set[tuple[str, ...]] = field(default_factory=set)

    def fail(self, code: int, message: str, key: tuple[str, ...] | None = None) -> None:
        if key is not None:
            if key in self.facts:
                return
            self.facts.add(key)
        self.failures.setdefault(code, []).append(message)

    def said(self) -> set[str]:
        return {message for messages in self.failures.values() for message in messages}

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

    def __init__(self, args: argparse.Namespace, servers: dict[str, ServerSpec]) -> None:
        self.args = args
        self.servers = servers
        self.headers = parse_headers(
            [*args.header, *getattr(args, "header_after", [])], servers, exit_code=EXIT_USAGE
        )
        self.era = {"modern": Era.MODERN, "legacy": Era.LEGACY}.get(args.protocol_era)
        self.era_cache: EraCache | None = None
        self.timeout: float = args.timeout
        self.outcome = _Outcome()
        self.approvals_path = Path(args.approvals) if args.approvals else None
        caps = {
            name: value
            for name in ("max_entries", "max_listing_bytes", "max_listed_resources")
            if (value := getattr(args, name, None)) is not None
        }
        self.host = Host(
            policy=HostPolicy(allow_dynamic=args.allow_dynamic, **caps),
            client_info=CLIENT_INFO,
            approvals=self._load_approvals(),
            cache=self._open_cache(),
        )
        self.connections: dict[str, Requester] = {}
        #: The spawned servers among them (their exit status and stderr tail are ours to report).
        self.processes: dict[str, StdioClient] = {}
        self.delivered: list[DeliverToModel] = []
        self.listings: list[DirectoryListing] = []
        self.rejected: list[EntryRejected] = []
        #: Servers whose listing stopped before its end (a cap or a budget), and why.
        self.partial: dict[str, ListingPartial] = {}
        self.notices: list[str] = []
        self.warnings: list[str] = []
        #: Servers a connection or protocol failure came from: their stderr is shown at the end.
        self.troubled: dict[str, None] = {}
        #: Servers whose skills/list failed (their failure is reported as it came).
        self.unlisted: dict[str, None] = {}
        #: The server whose start-up failed, and how.
        self.starting: tuple[str, SkillsError] | None = None
        self.interactive = sys.stdin.isatty() and sys.stderr.isatty()

    # -- set-up -------------------------------------------------------------------------------

    def _load_approvals(self) -> ApprovalStore:
        path = self.approvals_path
        if path is None:
            return ApprovalStore()
        try:
            return ApprovalStore.loads(read_regular_file(path, MAX_APPROVALS_BYTES))
        except FileNotFoundError:
            return ApprovalStore()
        except (OSError, ApprovalsFileError) as exc:
            raise CliError(f"--approvals {path}: {_os_reason(exc)}", EXIT_USAGE) from None

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
        from ..host.cache_store import DiskCacheStore  # noqa: PLC0415

        try:
            return DiskCacheStore(self.args.cache)
        except (OSError, SkillsError) as exc:
            raise CliError(f"--cache {self.args.cache}: {exc}", EXIT_USAGE) from None

    async def _connect(
        self, stack: contextlib.AsyncExitStack, label: str, spec: ServerSpec
    ) -> Requester:
        """Open the connection to one ``--server`` (:func:`~skills_core.cli._servers.open_connection`).

        A command's stderr is kept, not shown (see :meth:`_show_stderr`); every HTTP server
        shares one era cache for the run (HTTP-36).
        """
        if isinstance(spec, str) and self.era_cache is None:
            try:
                from ..http.eras import EraCache  # noqa: PLC0415
            except ImportError as exc:  # pragma: no cover - pure module, always importable
                raise CliError(str(exc), EXIT_USAGE) from None
            self.era_cache = EraCache()
        client = await open_connection(
            stack,
            label,
            spec,
            exit_code=EXIT_USAGE,
            headers=self.headers.get(label, ()),
            era_cache=self.era_cache,
            on_report=self.warnings.append,  # shown after the run, as over stdio
            on_stderr=_keep_tail_only,
        )
        if not isinstance(spec, str):  # a spawned server: its exit status and stderr are ours
            self.processes[label] = cast("StdioClient", client)
        return client

    # -- the run ------------------------------------------------------------------------------

    async def run(self) -> int:
        async with contextlib.AsyncExitStack() as stack:
            if await self._start(stack):
                await self._action()
        self._report()  # after every server is shut down: their stderr and exit status are known
        return self.outcome.exit_code()

    async def _start(self, stack: contextlib.AsyncExitStack) -> bool:
        """Spawn and handshake with every server; False (the failure recorded) if one fails."""
        for label, spec in self.servers.items():
            try:
                self.host.connect(label, {})  # validates the label before anything spawns
            except LocalProtocolError as exc:
                raise CliError(f"--server {label}: {exc}", EXIT_USAGE) from None
            try:
                self.connections[label] = await self._connect(stack, label, spec)
            except TransportError as exc:
                self.outcome.fail(EXIT_CONNECTION, str(exc))
                return False
        for label, client in self.connections.items():
            try:
                effects = await handshake(
                    self.host, label, client, timeout=self.timeout, era=self.era
                )
            except (TransportError, JsonRpcError) as exc:
                self.troubled[label] = None
                self.starting = (label, exc)
                return False
            self._absorb(effects)
        return True

    def _report(self) -> None:
        """Warnings, then failures, then the last stderr lines of the servers that failed."""
        if self.starting is not None:
            self.outcome.fail(EXIT_CONNECTION, self._startup_failure(*self.starting))
        said = self.outcome.said()
        counts = Counter(message for message in self.warnings if message not in said)
        for message, count in counts.items():
            error(message if count == 1 else f"{message} ({count} times)")
        self.outcome.report()
        for label in self.troubled:
            self._show_stderr(label)

    def _startup_failure(self, label: str, exc: SkillsError) -> str:
        process = self.processes.get(label)
        status = None if process is None else process.process.returncode
        if isinstance(exc, TransportError) and exc.kind == "closed" and status is not None:
            if status < 0:
                return (
                    f"server {label!r} was ended by signal {_signal_name(-status)} during start-up"
                )
            return f"server {label!r} exited with status {status} during start-up"
        return f"{exc} (at start-up)"  # the message names the server

    def _show_stderr(self, label: str) -> None:
        client = self.processes.get(label)
        if client is None or not client.stderr_tail:
            return
        tail = client.stderr_tail
        stream = sys.stderr
        what = "line" if len(tail) == 1 else f"{len(tail)} lines"
        stream.write(f"skills-core: the last {what} server {label!r} wrote on stderr:\n")
        prefix = f"  [{display(label)}] "
        width = terminal_width(stream)
        for line in tail:
            _write(stream, fit(prefix, display_line(line, 500), width=width, indent="  |   "))
        stream.flush()

    async def _pump(self, effects: list[Effect]) -> list[Pumped]:
        """Carry out effects until nothing is left to send; answer prompts on the way."""
        senders: dict[str, AsyncSend] = {
            label: functools.partial(connection.request, timeout=self.timeout)
            for label, connection in self.connections.items()
        }
        return await pump_async(self.host, effects, senders, on_effect=self._react)

    async def _react(self, effect: Effect | TransportFailure) -> list[Effect]:
        """Map one effect to output, a failure (with its exit code), or a reply to a prompt."""
        outcome = self.outcome
        if isinstance(effect, TransportFailure):
            self._request_failed(effect.origin, effect.method, str(effect.error))
        elif isinstance(effect, RequestFailed):
            self._request_failed(effect.origin, effect.method, _request_failure(effect))
        elif isinstance(effect, ListingPartial):
            if effect.reason in _LISTING_FAILED:
                message = f"server {effect.origin!r}: {effect.message}"
                self._request_failed(effect.origin, "skills/list", message)
            else:
                self.partial[effect.origin] = effect
                self.warnings.append(_incomplete_listing(effect))
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
            self._verification_failed(effect)
        elif isinstance(effect, ReferenceRejected):
            outcome.fail(EXIT_VERIFICATION, f"{effect.origin}: {effect.error}")
        elif isinstance(effect, LoadFailed):
            if not outcome.failures:  # otherwise its cause is reported already
                is_bad = isinstance(effect.error, VerificationError)
                outcome.fail(EXIT_VERIFICATION if is_bad else EXIT_CONNECTION, effect.message)
        elif isinstance(effect, EntryRejected):
            self.rejected.append(effect)
        elif isinstance(effect, LoadDeclined):
            self._declined(effect)
        elif isinstance(effect, SkillChanged) and effect.requires_reapproval:
            self.notices.append(
                f"{effect.origin}: {effect.uri} changed: {effect.changes.describe()}"
            )
        elif isinstance(effect, Refused):
            outcome.fail(_REFUSAL_EXIT.get(effect.code, EXIT_USAGE), effect.message)
        elif isinstance(effect, Notice):
            self._absorb([effect])
        return []

    def _request_failed(self, origin: str, method: str, message: str) -> None:
        """A request failed: a connection or protocol failure (exit 2), said once per request."""
        self.troubled[origin] = None
        if method == "skills/list":
            self.unlisted[origin] = None
        self.outcome.fail(EXIT_CONNECTION, message, key=("request", origin, method))

    def _verification_failed(self, effect: VerificationFailed) -> None:
        if effect.source is FailureSource.CACHE:
            return  # the cached copy was discarded and the file is fetched again
        if effect.error.kind is VerificationKind.UNLISTED:
            self.outcome.fail(
                EXIT_VERIFICATION,
                self._no_such_file(effect.origin, effect.skill_uri, effect.uri),
                key=("unlisted", effect.origin, effect.uri),
            )
            return
        self.outcome.fail(
            EXIT_VERIFICATION,
            f"{effect.origin}: verification failed: {effect.error}",
            key=("verification", effect.origin, effect.uri),
        )

    def _no_such_file(self, origin: str, skill_uri: str, uri: str) -> str:
        """The plain message for a read of a file the skill does not list."""
        entry = self.host.registry.get(origin, skill_uri)
        root = skill_uri.rpartition("/")[0] + "/"
        name = f"{origin}:{entry.name}" if entry is not None else f"{origin}:{skill_uri}"
        message = f"{name} has no file {uri.removeprefix(root)}"
        if entry is None or isinstance(entry.resources, str):
            return message
        files = [r.uri.removeprefix(root) for r in entry.resources]
        more = f" and {len(files) - FILES_NAMED} more" if len(files) > FILES_NAMED else ""
        return f"{message}; its files are: {', '.join(files[:FILES_NAMED])}{more}"

    def _declined(self, effect: LoadDeclined) -> None:
        if effect.reason is DeclineReason.DENIED and EXIT_APPROVAL in self.outcome.failures:
            return  # our own refusal, already said
        message = effect.message
        if effect.reason is DeclineReason.DYNAMIC:
            message += " (pass --allow-dynamic to load it)"
        code = _DECLINE_EXIT.get(effect.reason, EXIT_APPROVAL)
        self.outcome.fail(code, message, key=("declined", effect.origin, effect.uri))

    def _absorb(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Notice) and effect.level is not NoticeLevel.INFO:
                if effect.code is NoticeCode.FAILURE_STANDS and self.outcome.failures:
                    continue  # the failure it refers to is reported already
                self.warnings.append(f"{effect.origin or 'host'}: {effect.message}")

    # -- approval -----------------------------------------------------------------------------

    async def _approve(self, prompt: RequestApproval) -> list[Effect]:
        if self.args.yes and (not prompt.dynamic or self.args.allow_dynamic):
            return self.host.approve(prompt.prompt_id)
        who = f"{prompt.origin}:{prompt.name} ({prompt.uri})"
        if self.interactive:
            stream = sys.stderr
            _write(stream, _prompt_lines(prompt, terminal_width(stream)))
            if await _ask("Approve this manifest? [y/N] "):
                grant: tuple[str, ...] = ()
                if prompt.widening_fields:
                    fields = ", ".join(prompt.widening_fields)
                    if await _ask(f"Also grant {fields} for this skill? [y/N] "):
                        grant = prompt.widening_fields
                return self.host.approve(prompt.prompt_id, grant_fields=grant)
            self.outcome.fail(EXIT_APPROVAL, f"declined: you did not approve {who}")
            return self.host.deny(prompt.prompt_id)
        if prompt.changes:
            why = f"changed since it was approved: {prompt.changes.describe()}"
        else:
            why = "not approved yet"
        hint = " (run on a terminal to approve, or pass --yes)"
        self.outcome.fail(EXIT_APPROVAL, f"approval needed for {who}, {why}{hint}")
        return self.host.deny(prompt.prompt_id)

    # -- actions ------------------------------------------------------------------------------

    async def _action(self) -> None:
        action = self.args.action
        await self._list_all()
        if action == "list":
            self._print_list()
            return
        if action == "watch":
            from ._watch import watch_changes  # noqa: PLC0415

            await watch_changes(
                self.host,
                self.connections,
                self._pump,
                interval=self.args.relist_interval,
                poll_every=self.args.poll_interval,
                timeout=self.timeout,
                as_json=self.args.json,
                fail=self.outcome.fail,
            )
            return
        resolved = self._resolve(self.args.skill)
        if resolved is None:
            return
        origin, uri = resolved
        if action == "show":
            await self._show(origin, uri)
            return
        if not await self._load(origin, uri):
            return  # the outcome carries the failure
        if action == "load":
            self._emit_deliveries([d for d in self.delivered if d.kind is DeliveryKind.SKILL])
        elif action == "read":
            before = len(self.delivered)
            await self._pump(self.host.read(origin, uri, self.args.ref))
            files = [d for d in self.delivered[before:] if d.kind is not DeliveryKind.SKILL]
            self._emit_deliveries(files)
        else:
            assert action == "ls"
            await self._pump(self.host.list_dir(origin, uri, self.args.directory))
            self._print_listings()

    async def _list_all(self) -> None:
        for label in self.connections:
            features = self.host.features(label)
            if features is None or not features.skills:
                self.notices.append(f"{label}: the server does not declare the skills extension")
                continue
            await self._pump(self.host.list_skills(label))

    def _resolve(self, query: str) -> tuple[str, str] | None:
        """The ``(origin, uri)`` that SKILL names, or None with the failure recorded."""
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
            self.outcome.fail(
                EXIT_USAGE, f"{query} is not in any listing; name the server as LABEL:{query}"
            )
            return None
        if resolution.status is not ResolutionStatus.NOT_FOUND:
            self.outcome.fail(EXIT_USAGE, resolution.message)  # it names every candidate
            return None
        refused = [r for r in self.rejected if _names(r.uri, query)]
        if refused:
            for r in refused:
                self.outcome.fail(EXIT_INVALID_ENTRY, f"{r.origin}: {r.error}")
        elif self.unlisted:
            failed = ", ".join(repr(label) for label in self.unlisted)
            self.outcome.fail(
                EXIT_CONNECTION, f"cannot look up {query!r}: the listing of {failed} failed"
            )
        elif self.partial:
            cut = ", ".join(repr(label) for label in self.partial)
            self.outcome.fail(
                EXIT_USAGE,
                f"no skill {query!r} among the skills listed, but the listing of {cut} was "
                "incomplete (see the warning): raise the cap it names, or name the skill as "
                "LABEL:skill://.../SKILL.md",
            )
        else:
            self.outcome.fail(EXIT_USAGE, f"no server lists a skill {query!r}")
        return None

    async def _load(self, origin: str, uri: str) -> bool:
        await self._pump(self.host.load(origin, uri))
        return self.host.state(origin, uri) is LoadState.ACTING

    async def _show(self, origin: str, uri: str) -> None:
        entry = self.host.registry.get(origin, uri)
        if entry is None:
            await self._pump(self.host.get_skill(origin, uri))
            entry = self.host.registry.get(origin, uri)
        if entry is None:
            for rejected in self.rejected:
                if rejected.uri == uri:
                    self.outcome.fail(EXIT_INVALID_ENTRY, f"{rejected.origin}: {rejected.error}")
            if not self.outcome.failures:
                self.outcome.fail(EXIT_USAGE, f"{origin}: no skill is served at {uri}")
            return
        approved = (
            not entry.is_dynamic
            and self.host.approvals.approved(origin, entry.uri, entry.resource_set) is not None
        )
        if self.args.json:
            print_json({"origin": origin, "approved": approved, "entry": entry.to_json()})
            return
        out = sys.stdout
        width = terminal_width(out)
        rows = [
            ("origin:      ", origin),
            ("uri:         ", entry.uri),
            ("name:        ", entry.name),
            ("description: ", display_line(entry.description)),
            ("approved:    ", "yes, for this exact manifest" if approved else "no"),
        ]
        extra = {k: v for k, v in entry.frontmatter.items() if k not in ("name", "description")}
        for key, value in extra.items():
            text = json.dumps(thaw_json(value), ensure_ascii=False)
            rows.append((f"{display_line(key, 40) + ':':12} ", display_line(text)))
        for first, text in rows:
            _write(out, fit(first, display(text), width=width, indent=" " * 13))
        if isinstance(entry.resources, str):
            out.write('files:       "dynamic" (no manifest, no integrity)\n')
            return
        out.write(f"files:       {len(entry.resources)}, {entry.total_size} bytes\n")
        for resource in entry.resources:
            first = f"  {resource.size:>9}  {resource.digest}  "
            _write(out, fit(first, display(resource.uri), width=width, indent="    "))

    # -- output -------------------------------------------------------------------------------

    def _print_list(self) -> None:
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
                    "complete": not self.partial and not self.unlisted,
                    "incomplete": [
                        {"origin": p.origin, "reason": p.reason.value, "message": p.message}
                        for p in self.partial.values()
                    ],
                }
            )
            return
        out = sys.stdout
        width = terminal_width(out)
        for item in items:
            marker = " [dynamic]" if item.dynamic else ""
            _write(
                out,
                fit(
                    "",
                    f"{display(item.qualified)}{marker}  {display(item.uri)}",
                    width=width,
                    indent="  ",
                ),
            )
            _write(out, fit("    ", display_line(item.description), width=width, indent="    "))
        for rejected in self.rejected:
            what = "OVER LIMIT" if not rejected.error.malformed else "INVALID"
            uri = display(rejected.uri) if rejected.uri is not None else "(no uri)"
            _write(out, fit("", f"{rejected.origin}:{uri}  [{what}]", width=width, indent="  "))
            for problem in rejected.error.problems:
                _write(out, fit("    ", display_line(str(problem)), width=width, indent="    "))
        for notice in self.notices:
            _write(out, fit("note: ", display(notice), width=width, indent="      "))

    def _emit_deliveries(self, deliveries: list[DeliverToModel]) -> None:
        for delivery in deliveries:
            if self.args.json:
                print_json(_delivery_json(delivery))
            else:
                self._print_framed(delivery.model_text)

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
                self._print_framed(listing.model_text)

    @staticmethod
    def _print_framed(text: str) -> None:
        """Model-facing text: exact into a pipe or a file; controls made visible on a terminal."""
        out = sys.stdout
        if out.isatty():
            text = display(text, lines=True)
        out.write(text if text.endswith("\n") else text + "\n")


#: The option of ``skills-core host`` that raises each cap or budget a listing can stop at.
_RAISED_BY: Final = {
    StopReason.ENTRY_CAP: "--max-entries",
    StopReason.BYTE_BUDGET: "--max-listing-bytes",
    StopReason.RESOURCE_BUDGET: "--max-listed-resources",
}


def _incomplete_listing(partial: ListingPartial) -> str:
    """The warning for a listing that stopped before its end: why, and how to read it whole."""
    option = _RAISED_BY.get(partial.reason)
    fix = (
        f"raise the cap with {option} N to read it whole"
        if option is not None
        else "the server's listing is at fault"
    )
    why = partial.message.removesuffix("; the listing may be incomplete")
    return (
        f"warning: the listing of {partial.origin!r} is INCOMPLETE: {why}; skills past that "
        f"point are not shown and cannot be named: {fix}"
    )


def _request_failure(effect: RequestFailed) -> str:
    """One line for a failed request: the server's error answer, or the protocol fault."""
    origin = repr(effect.origin)
    about = f"{effect.method} of {effect.uri}" if effect.uri else effect.method
    if effect.code is not None:
        return f"server {origin} answered {about} with {effect.message}"
    if effect.error is not None:  # the message names the method already
        where = f" ({effect.uri})" if effect.uri else ""
        return f"server {origin}{where}: {effect.message}"
    return f"server {origin}: {about} failed: {effect.message}"


def _delivery_json(delivery: DeliverToModel) -> dict[str, object]:
    """A delivered file as JSON: ``text`` when it is exact UTF-8, else ``blob`` (base64)."""
    document: dict[str, object] = {
        "origin": delivery.origin,
        "uri": delivery.uri,
        "kind": str(delivery.kind),
        "verified": delivery.verified,
        "from_cache": delivery.from_cache,
        "size": len(delivery.content),
        "digest": compute_digest(delivery.content),
    }
    text = delivery.text
    if text is not None:
        document["text"] = text
    else:
        document["blob"] = base64.b64encode(delivery.content).decode("ascii")
    return document


def _prompt_lines(prompt: RequestApproval, width: int | None) -> list[str]:
    """The approval prompt: the server's words first, marked; then what is approved, in our form.

    Every row that carries server text starts with ``  | `` or with our fixed columns; the
    question that follows these lines is the last thing on the screen.
    """
    root = prompt.uri.rpartition("/")[0] + "/"
    quoted = "  | "
    lines = [
        "",
        f"== Approval needed: a skill from server {display(prompt.origin)} ==",
        "What the server says about it (its words, not checked):",
        *fit(f"{quoted}name:        ", display_line(prompt.name, 80), width=width, indent=quoted),
        *fit(
            f"{quoted}description: ",
            display_line(prompt.description),
            width=width,
            indent=quoted,
        ),
        "What you approve (checked by skills-core before anything is used):",
        *fit("  skill:   ", display(prompt.uri), width=width, indent="    "),
    ]
    if isinstance(prompt.manifest, str):
        lines.append(
            '  files:   "dynamic": nothing can be verified; this approval is for this load only'
        )
    else:
        lines.append(f"  files:   {len(prompt.manifest)}, {prompt.total_size} bytes in all")
        for resource in prompt.manifest:
            first = f"    {resource.size:>9}  {resource.digest[:19]}...  "
            name = display(resource.uri.removeprefix(root))
            lines.extend(fit(first, name, width=width, indent="      "))
    if prompt.changes:
        changed = display(prompt.changes.describe())
        lines.extend(fit("  changed since you approved it: ", changed, width=width, indent="    "))
    for name in prompt.widening_fields:
        value = json.dumps(prompt.frontmatter.get(name), ensure_ascii=False)
        lines.extend(
            fit(
                f"  asks for: {display(name)} = ",
                display_line(value) + " (ignored unless you grant it)",
                width=width,
                indent="    ",
            )
        )
    return lines


def _write(stream: TextIO, lines: list[str]) -> None:
    stream.write("".join(line + "\n" for line in lines))


def _keep_tail_only(line: str) -> None:
    """A server's stderr is not shown as it comes: only its tail, when it failed (see above)."""


async def _ask(question: str) -> bool:
    """Ask on the terminal. The blocking read runs in a daemon thread of its own, not in the
    loop's executor: Ctrl-C at the prompt cancels the wait, the servers are shut down, and the
    command exits without waiting for a line that never comes."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[bool] = loop.create_future()

    def deliver(result: bool) -> None:
        if not answer.done():
            answer.set_result(result)

    def read() -> None:
        result = _ask_blocking(question)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(deliver, result)

    threading.Thread(target=read, name="skills-core prompt", daemon=True).start()
    return await answer


def _ask_blocking(question: str) -> bool:
    sys.stderr.write(question)
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() in ("y", "yes")


def _names(uri: str | None, query: str) -> bool:
    """True when a refused entry's URI is what ``query`` (a URI, LABEL:NAME or NAME) names."""
    if uri is None:
        return False
    name = query.rpartition(":")[2] if "://" not in query else query
    return uri == name or uri.endswith(f"/{name}/SKILL.md")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
