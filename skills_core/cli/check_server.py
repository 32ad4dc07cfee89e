"""``skills-core check --server``: a live server, checked as ``validate`` checks a folder.

Theory of operation: the checks are :mod:`skills_core.server_check` (pure: it says which request
to send next and what each answer breaks). This module connects to the one ``--server`` exactly as
``host`` does (:mod:`skills_core.cli._servers`: a command spawned over stdio, or a Streamable HTTP
URL), handshakes with the host's own :func:`~skills_core.host.driver.handshake` (``server/discover``,
falling back to ``initialize``, unless ``--protocol-era`` pins one), then carries each call of the
check over that connection and hands the answer back. A request that gets no answer within
``--timeout`` seconds, or once ``--max-time`` seconds have passed since the start, ends the check.

The report is printed in one of the four forms of ``validate`` (``text``, ``json``, ``sarif``,
``github``; :mod:`skills_core.ci` makes the last two, with logical locations: the findings are
about URIs, not files), after the ``--ignore``d codes are dropped (an ignored error leaves its
skill invalid, as in ``validate``). Every string a server sent is shown through
:mod:`skills_core.display`; its stderr is kept (the last lines, bounded) and shown only when the
check fails because of it.

Exit codes, as ``validate`` has them: 0 when no finding is an error (and none is a warning, under
``--strict``; notes never count), 1 when one is, or when a skill had an error ``--ignore``d, 2 when
the server could not be checked: a usage error (an unknown ``--ignore`` code), a server that cannot
be started or reached or that fails the handshake, or a request left without an answer. A SARIF log
is written also then (its invocation unsuccessful, saying why), so that an upload step always has
one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import sys
import time
from collections import Counter, deque
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ..check import ValidationReport
from ..ci import server_github_commands, server_sarif
from ..display import display, display_json, display_line
from ..errors import JsonRpcError, RemoteProtocolError, SkillsError, TransportError
from ..host.driver import CLIENT_INFO, Negotiated, Negotiator, Requester, handshake
from ..host.handshake import outcome_of
from ..host.policy import HostPolicy
from ..host.router import Host
from ..jsonvalue import JSONValue
from ..messages import Era, Implementation, request_meta
from ..rules import RULES, RULES_URL, explain
from ..server_check import Call, CheckBounds, Reply, ServerCheckResult, check_server
from ..spec import Method
from ._common import CliError, error, print_json
from ._servers import ServerSpec, open_connection, parse_headers, parse_servers

__all__ = ["EXIT_VALID", "EXIT_INVALID", "EXIT_TROUBLE", "run_check_server", "STDERR_LINES"]

#: No error (and no warning under ``--strict``): as ``validate``.
EXIT_VALID: Final = 0
#: At least one error (or warning, under ``--strict``).
EXIT_INVALID: Final = 1
#: The server could not be checked (or not entirely): usage, connection, no answer.
EXIT_TROUBLE: Final = 2
#: The last lines of the server's stderr kept, to show when the check fails because of it.
STDERR_LINES: Final = 20
_HANDSHAKES: Final = frozenset({Method.SERVER_DISCOVER.value, Method.INITIALIZE.value})


def run_check_server(args: argparse.Namespace) -> int:
    """Run ``skills-core check`` with parsed arguments; return the exit code."""
    rules_url = args.rules_url or RULES_URL
    if args.explain is not None:
        rule = RULES.get(args.explain)
        if rule is None:
            raise CliError(
                f"check: --explain {args.explain!r} is not a finding code{_near(args.explain)}",
                EXIT_TROUBLE,
            )
        sys.stdout.write(explain(rule, page=rules_url))
        return EXIT_VALID
    try:
        servers = parse_servers(args.server, command="check", exit_code=EXIT_TROUBLE)
        if len(servers) != 1:
            raise CliError(
                "check: give one --server (check each server in its own run)", EXIT_TROUBLE
            )
        unknown = [code for code in args.ignore if code not in RULES]
        if unknown:
            raise CliError(
                f"check: --ignore {unknown[0]!r} is not a finding code{_near(unknown[0])}",
                EXIT_TROUBLE,
            )
        headers = parse_headers(args.header, servers, exit_code=EXIT_TROUBLE)
        ((label, spec),) = servers.items()
        run = _Run(args, label, spec, headers.get(label, []))
        result = asyncio.run(run.check())
    except CliError as exc:
        _write_sarif(args, None, "", exit_code=exc.code, failures=[exc.message])
        raise
    report = result.report.without(frozenset(args.ignore))
    failures = list(result.failures)
    code = EXIT_VALID if report.passes(strict=args.strict) else EXIT_INVALID
    if failures:
        code = EXIT_TROUBLE
    output = args.format
    if output == "json":
        print_json(_json(result, report, args.strict))
    elif output == "github":
        # Workflow commands on purpose: made of shown text, each message and property escaped.
        sys.stdout.write(
            "".join(line + "\n" for line in server_github_commands(report, server=label))
        )
        sys.stdout.write(display(_summary(result, report, args.strict)) + "\n")
    elif output == "text":
        lines = [*_text(result, report), _summary(result, report, args.strict)]
        sys.stdout.write("".join(display(line) + "\n" for line in lines))
    _write_sarif(args, result, label, exit_code=code, failures=failures)
    if output == "sarif":
        sys.stderr.write(display(f"skills-core: {_summary(result, report, args.strict)}") + "\n")
    run.report_troubles(failed=bool(failures))
    for message in failures:
        error(message)
    return code


def _near(code: str) -> str:
    near = difflib.get_close_matches(code, RULES, n=1)
    return f"; did you mean {near[0]!r}?" if near else ""


class _Recorder:
    """A connection that remembers the last handshake answer (the capabilities, as sent)."""

    def __init__(self, inner: Requester) -> None:
        self.inner = inner
        self.answer: tuple[str, object] | None = None
        self.negotiated: Negotiated | None = None

    async def request(
        self, method: str, params: Mapping[str, object] | None = None, *, timeout: float | None
    ) -> dict[str, JSONValue]:
        result = await self.inner.request(method, params, timeout=timeout)
        if method in _HANDSHAKES:
            self.answer = (method, result)
        return result

    async def notify(self, method: str, params: Mapping[str, object] | None = None) -> None:
        await self.inner.notify(method, params)


class _NegotiatingRecorder(_Recorder):
    """The same, for a connection that negotiates its era itself (HTTP)."""

    async def negotiate(
        self, *, client_info: Implementation, timeout: float | None, era: Era | None
    ) -> Negotiated:
        assert isinstance(self.inner, Negotiator)
        self.negotiated = await self.inner.negotiate(
            client_info=client_info, timeout=timeout, era=era
        )
        return self.negotiated


class _Run:
    """One run of ``skills-core check``: one server."""

    def __init__(
        self,
        args: argparse.Namespace,
        label: str,
        spec: ServerSpec,
        headers: list[tuple[str, str]],
    ) -> None:
        self.args = args
        self.label = label
        self.spec = spec
        self.headers = headers
        self.era = {"modern": Era.MODERN, "legacy": Era.LEGACY}.get(args.protocol_era)
        self.timeout: float = args.timeout
        self.deadline = time.monotonic() + args.max_time
        self.reports: list[str] = []
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        caps = {
            name: value
            for name in ("max_entries", "max_listing_bytes")
            if (value := getattr(args, name, None)) is not None
        }
        self.bounds = CheckBounds.from_policy(HostPolicy(**caps))

    async def check(self) -> ServerCheckResult:
        async with contextlib.AsyncExitStack() as stack:
            era_cache = None
            if isinstance(self.spec, str):
                from ..http.eras import EraCache  # noqa: PLC0415

                era_cache = EraCache()
            try:
                connection = await open_connection(
                    stack,
                    self.label,
                    self.spec,
                    exit_code=EXIT_TROUBLE,
                    headers=self.headers,
                    era_cache=era_cache,
                    on_report=self.reports.append,
                    on_stderr=self.stderr.append,
                )
                negotiated = await self._handshake(connection)
            except (TransportError, JsonRpcError, RemoteProtocolError) as exc:
                return self._failed(f"server {self.label!r}: {exc} (at start-up)")
            meta = (
                request_meta(CLIENT_INFO, protocol_version=negotiated.protocol_version)
                if negotiated.era is Era.MODERN
                else None
            )
            walk = check_server(
                self.label,
                era=negotiated.era,
                capabilities=negotiated.capabilities,
                meta=meta,
                bounds=self.bounds,
            )
            try:
                call = next(walk)
                while True:
                    call = walk.send(await self._send(connection, call))
            except StopIteration as stop:
                result: ServerCheckResult = stop.value
                return result

    async def _handshake(self, connection: Requester) -> Negotiated:
        """The host's handshake, recorded: the era, the version and the capabilities as sent."""
        recorder = (
            _NegotiatingRecorder(connection)
            if isinstance(connection, Negotiator)
            else _Recorder(connection)
        )
        host = Host(client_info=CLIENT_INFO)
        await handshake(host, self.label, recorder, timeout=self.timeout, era=self.era)
        if recorder.negotiated is not None:
            return recorder.negotiated
        assert recorder.answer is not None  # handshake() returned: one was answered
        method, answer = recorder.answer
        era = Era.MODERN if method == Method.SERVER_DISCOVER.value else Era.LEGACY
        return outcome_of(era, answer)

    async def _send(self, connection: Requester, call: Call) -> Reply:
        left = self.deadline - time.monotonic()
        if left <= 0:
            return Reply.failed(
                f"the check's time bound (--max-time {self.args.max_time:g}s) ran out"
            )
        timeout = min(self.timeout, left)
        try:
            return Reply.ok(await connection.request(call.method, call.params, timeout=timeout))
        except JsonRpcError as exc:
            return Reply.error(exc.rpc_code, exc.rpc_message)
        except TransportError as exc:
            if exc.kind == "timeout" and timeout < self.timeout:
                return Reply.failed(
                    f"no answer before the check's time bound (--max-time {self.args.max_time:g}s) "
                    "ran out"
                )
            return Reply.failed(str(exc))
        except RemoteProtocolError as exc:
            return Reply.failed(str(exc))
        except SkillsError as exc:  # anything else typed the transport raised
            return Reply.failed(str(exc))

    def _failed(self, message: str) -> ServerCheckResult:
        return ServerCheckResult(
            label=self.label,
            era=self.era or Era.MODERN,
            report=ValidationReport(),
            failures=(message,),
        )

    def report_troubles(self, *, failed: bool) -> None:
        """The adapter's reports (counted), then the server's last stderr lines if it failed."""
        for message, count in Counter(self.reports).items():
            error(message if count == 1 else f"{message} ({count} times)")
        if not failed or not self.stderr:
            return
        stream = sys.stderr
        what = "line" if len(self.stderr) == 1 else f"{len(self.stderr)} lines"
        stream.write(
            display(f"skills-core: the last {what} server {self.label!r} wrote on stderr:") + "\n"
        )
        for line in self.stderr:
            stream.write(f"  [{display(self.label)}] {display_line(line, 500)}\n")
        stream.flush()


def _json(
    result: ServerCheckResult, report: ValidationReport, strict: bool
) -> dict[str, JSONValue]:
    return {
        "server": result.label,
        "era": "modern" if result.era is Era.MODERN else "legacy",
        "requests": result.requests,
        "files_read": result.files_read,
        "bytes_read": result.bytes_read,
        "failures": list(result.failures),
        **report.to_json(strict=strict),
    }


def _text(result: ServerCheckResult, report: ValidationReport) -> list[str]:
    era = "2026-07-28" if result.era is Era.MODERN else "2025-11-25"
    lines = [
        f"server {result.label} ({era}): {result.requests} requests answered, "
        f"{result.files_read} files read ({result.bytes_read:,} bytes)"
    ]
    for skill in report.skills:
        status = f"{'ok' if skill.valid else 'INVALID':8} {skill.uri or f'entry {skill.index}'}"
        if skill.ignored_errors:
            status += f" [errors ignored, still invalid: {', '.join(skill.ignored_errors)}]"
        lines.append(status)
        for finding in skill.findings:
            where = f"{finding.file}: " if finding.file and finding.file != skill.uri else ""
            field = f" {finding.field}:" if finding.field else ""
            lines.append(f"  {where}{finding.severity}[{finding.code}]{field} {finding.message}")
    for finding in report.findings:
        where = f"{finding.file}: " if finding.file else ""
        field = f" {finding.field}:" if finding.field else ""
        lines.append(f"server: {where}{finding.severity}[{finding.code}]{field} {finding.message}")
    return lines


def _summary(result: ServerCheckResult, report: ValidationReport, strict: bool) -> str:

    counts = report.summary()
    text = (
        f"{_plural(counts['skills'], 'skill')} checked on {result.label}: {counts['valid']} valid, "
        f"{counts['invalid']} invalid; {_plural(counts['errors'], 'error')}, "
        f"{_plural(counts['warnings'], 'warning')}"
    )
    if counts["notes"]:
        text += f", {_plural(counts['notes'], 'note')}"
    if counts["ignored"]:
        text += f", {counts['ignored']} ignored"
    if strict and counts["warnings"]:
        text += " (--strict: warnings fail)"
    return text


def _plural(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _write_sarif(
    args: argparse.Namespace,
    result: ServerCheckResult | None,
    label: str,
    *,
    exit_code: int,
    failures: list[str],
) -> None:
    """Print the SARIF log (``--format sarif``) and write it to ``--sarif FILE``, if asked."""
    if args.format != "sarif" and args.sarif is None:
        return

    report = (
        result.report.without(frozenset(args.ignore)) if result is not None else ValidationReport()
    )
    log = server_sarif(
        report,
        server=label or "server",
        exit_code=exit_code,
        failures=failures,
        rules_url=args.rules_url or RULES_URL,
    )
    if args.format == "sarif":
        print_json(log)
    if args.sarif is not None:
        try:
            Path(args.sarif).write_text(display_json(log) + "\n", encoding="utf-8")
        except OSError as exc:
            raise CliError(f"--sarif {args.sarif}: {exc.strerror or exc}", EXIT_TROUBLE) from None
