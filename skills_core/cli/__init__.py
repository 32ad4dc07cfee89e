"""The ``skills-core`` command line: serve, manifest, publish, validate, diff, check, host, demo.

Theory of operation: each command is a thin shell over the library, in a module of its own that
this package imports only when that command runs (``serve`` starts fast because it loads no host,
no asyncio and no argparse sub-parsers' handlers it does not need):

* :mod:`skills_core.cli.serve` wraps a :class:`~skills_core.server.SkillsServer` in the blocking
  stdio loop;
* :mod:`skills_core.cli.manifest` and :mod:`skills_core.cli.validate` print what the catalog and
  the validators decide, :mod:`skills_core.cli.diff` what changed between two skills;
* :mod:`skills_core.cli.publish` uploads a catalog to an S3-compatible bucket;
* :mod:`skills_core.cli.check_server` checks a live server as a host would
  (:mod:`skills_core.server_check`), reporting as ``validate`` does;
* :mod:`skills_core.cli.host` drives a :class:`~skills_core.host.Host` over server processes;
* ``demo`` (:mod:`skills_core.demo`) replays the spec's example flow.

This module holds the argument parser and :func:`main`. Exit codes and the error type live in
:mod:`skills_core.cli._common`, which every command imports. Every failure is one line on stderr,
never a traceback, and the exit code says what kind of failure it was (see ``_common``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn, TypeVar, overload

from .._version import __version__
from ..errors import SkillsError
from ._common import (
    EXIT_CONNECTION,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CliError,
    error,
)

__all__ = ["main", "build_parser"]

_N = TypeVar("_N")


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil (which start-up would pay
    for)."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    stdout = sys.__stdout__
    try:
        return os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 80
    except (AttributeError, ValueError, OSError):
        return 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, given the width it would otherwise ask shutil for."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_terminal_columns() - 2)


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 1 (docs/design.md#command-line) with one line and no usage dump.

    A sub-parser made with ``usage_exit=N`` exits N on a usage error instead, and reports the
    arguments it does not know itself (argparse leaves those to the top-level parser).
    """

    def __init__(self, *args: Any, usage_exit: int = EXIT_USAGE, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)
        self.usage_exit = usage_exit

    @overload
    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: None = None
    ) -> tuple[argparse.Namespace, list[str]]: ...
    @overload
    def parse_known_args(
        self, args: Iterable[str] | None, namespace: _N
    ) -> tuple[_N, list[str]]: ...
    @overload
    def parse_known_args(self, *, namespace: _N) -> tuple[_N, list[str]]: ...
    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: Any = None
    ) -> tuple[Any, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self.usage_exit != EXIT_USAGE:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        # main() writes "skills-core: " before every message: name the command after it, once.
        command = self.prog.removeprefix("skills-core").strip()
        where = f"{command}: " if command else ""
        raise CliError(f"{where}{message} (see {self.prog} --help)", self.usage_exit)


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def _positive_int(text: str) -> int:
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _non_negative_int(text: str) -> int:
    value = _whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0 seconds")
    return value


def _seconds_or_none(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more seconds")
    return value


def _add_http_options(serve: argparse.ArgumentParser) -> None:
    """``serve --http`` and its options (Streamable HTTP instead of stdio)."""
    http = serve.add_argument_group("Streamable HTTP (needs: pip install 'skills-core[http]')")
    http.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve Streamable HTTP (both eras) on HOST:PORT instead of stdio (HOST: 127.0.0.1)",
    )
    http.add_argument(
        "--workers", type=_positive_int, default=1, help="worker processes (default 1)"
    )
    http.add_argument("--path", default="/mcp", help="the MCP endpoint's path (default /mcp)")
    http.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="H",
        help="also accept this Host (name, name:port or name:*; repeatable; loopback names are "
        "accepted on a loopback address)",
    )
    http.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="O",
        help="also accept this Origin (scheme://host[:port|:*]; repeatable)",
    )
    http.add_argument(
        "--cursor-key-file",
        metavar="F",
        help="the secret shared by every worker and server process (created when absent)",
    )
    http.add_argument(
        "--head-timeout",
        type=_seconds,
        metavar="S",
        help="seconds a client has to send a request's line and headers, from the connection's "
        "start or the first byte of the request; then the connection is closed (default 10)",
    )
    http.add_argument(
        "--idle-timeout",
        type=_seconds,
        metavar="S",
        help="seconds a kept-alive connection may stay idle after an answer (default 5)",
    )
    http.add_argument(
        "--body-timeout",
        type=_seconds,
        metavar="S",
        help="seconds a request's body has to arrive once its headers have; then 408 (default 30)",
    )
    http.add_argument(
        "--send-timeout",
        type=_seconds,
        metavar="S",
        help="seconds an answer may wait for the client to take more of it; then the connection "
        "is closed (default 30)",
    )
    http.add_argument(
        "--max-large-answers",
        type=_positive_int,
        metavar="N",
        help="answers over 64 KiB each worker makes and sends at once (default 4)",
    )
    http.add_argument(
        "--large-answer-queue",
        type=_non_negative_int,
        metavar="N",
        help="requests that may wait for a large answer's turn, per worker; more get 503 "
        "(default 64)",
    )
    http.add_argument(
        "--graceful-timeout",
        type=_seconds_or_none,
        default=5.0,
        metavar="S",
        help="on SIGTERM or SIGINT, seconds the requests in flight have to finish; then they are "
        "ended (exit 0 when all finished, 6 when some were ended; default 5)",
    )
    http.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        help="info: a line per request on stderr; warning: refusals and problems only; "
        "debug: probes too (default info)",
    )
    http.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="stderr lines as key=value text or JSON lines (default text)",
    )
    http.add_argument(
        "--metrics",
        action="store_true",
        help="answer GET /metrics in the Prometheus text format (every worker's counts)",
    )
    http.add_argument("--tls-cert", metavar="F", help="serve HTTPS with this certificate (PEM)")
    http.add_argument("--tls-key", metavar="F", help="the certificate's private key (PEM)")
    http.add_argument(
        "--tls-ca",
        metavar="F",
        help="require client certificates signed by these CA certificates (PEM)",
    )
    http.add_argument(
        "--proxy-headers",
        action="store_true",
        help="take the client address (and scheme) from X-Forwarded-For (X-Forwarded-Proto) "
        "sent by a trusted proxy",
    )
    http.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="the proxies trusted with --proxy-headers: comma-separated addresses or networks, "
        "or * (default 127.0.0.1,::1)",
    )


def _source_options(command: argparse.ArgumentParser, *, index: bool = True) -> None:
    """The options of the filesystem source, which ``serve``, ``manifest``, ``validate`` and
    ``diff`` share (the digest index only where a catalog is built to serve or print)."""
    command.add_argument(
        "--include-hidden",
        action="store_true",
        help="publish hidden files and folders too (names starting with '.', ending with '~', "
        "or '#...#'); version-control metadata stays out",
    )
    command.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="do not publish paths matching GLOB, relative to the root with '/' separators "
        "('*.log', 'drafts/', '**/tmp'); repeatable",
    )
    if not index:
        return
    command.add_argument(
        "--index",
        metavar="FILE",
        help="start warm from a digest index kept in FILE (created and updated as needed; "
        "workers of one server may share it)",
    )


def _s3_endpoint(command: argparse.ArgumentParser) -> None:
    """``--s3-endpoint``, for the commands that take an ``s3://`` URL."""
    command.add_argument(
        "--s3-endpoint",
        metavar="URL",
        help="the S3-compatible endpoint of s3:// URLs (default: AWS_ENDPOINT_URL, else AWS); "
        "credentials and region come from the standard AWS environment",
    )


def _non_negative_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser (exposed for documentation and tests)."""
    parser = _Parser(
        prog="skills-core",
        description="Serve, inspect, validate and load MCP Skills (io.modelcontextprotocol/skills).",
    )
    parser.add_argument("--version", action="version", version=f"skills-core {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    serve = commands.add_parser(
        "serve", help="serve the skills under ROOT... as a stdio MCP server"
    )
    serve.add_argument(
        "roots",
        nargs="+",
        metavar="ROOT",
        help="a folder of skills, or a skill folder itself; or one source URL: "
        "s3://BUCKET/PREFIX (what publish wrote) or git:PATH[@REF] (a commit's skills)",
    )
    serve.add_argument(
        "--no-directory-read",
        action="store_true",
        help="do not declare or serve resources/directory/read",
    )
    serve.add_argument(
        "--page-size",
        type=_positive_int,
        default=200,  # ServerOptions' default (a test keeps them equal; not imported: start-up)
        help="entries per page (default 200)",
    )
    serve.add_argument(
        "--ttl-ms",
        type=_non_negative_int,
        default=300_000,
        help="ttlMs on cacheable results; skills added or removed show in listings within it "
        "(default 300000)",
    )
    _add_http_options(serve)
    _source_options(serve)
    _s3_endpoint(serve)

    manifest = commands.add_parser(
        "manifest", help="print the entries serve would publish, and why any are omitted"
    )
    manifest.add_argument(
        "roots",
        nargs="+",
        metavar="ROOT",
        help="a folder of skills, or a skill folder itself; or s3://BUCKET/PREFIX, git:PATH[@REF]",
    )
    manifest.add_argument("--json", action="store_true", help="machine-readable output")
    _source_options(manifest)
    _s3_endpoint(manifest)

    publish = commands.add_parser(
        "publish",
        help="upload what serve would publish from SOURCE to an S3-compatible bucket",
        description="Store the files serve would publish from SOURCE under their digests in "
        "TARGET, then commit the catalog (what replicas serve) last. Publishing an unchanged "
        "tree uploads nothing.",
    )
    publish.add_argument("source", metavar="SOURCE", help="a folder of skills, or git:PATH[@REF]")
    publish.add_argument("target", metavar="TARGET", help="s3://BUCKET/PREFIX")
    publish.add_argument(
        "--gc-grace",
        type=_non_negative_seconds,
        metavar="SECONDS",
        help="then delete files no catalog replaced less than SECONDS ago refers to (make it "
        "longer than any replica's --ttl-ms plus the outages it should survive)",
    )
    publish.add_argument(
        "--concurrency", type=_positive_int, default=16, help="uploads at once (default 16)"
    )
    publish.add_argument("--json", action="store_true", help="machine-readable output")
    _source_options(publish, index=False)
    _s3_endpoint(publish)

    # validate and diff exit 0 (valid, or the same), 1 (invalid, or different) or 2 (usage or
    # I/O error), as diff(1) does, so that CI can tell a finding from a broken invocation.
    validate = commands.add_parser(
        "validate",
        help="lint skill folders as serve reads them, or skill entries with --entries",
        description="Apply to skill folders what serve applies (links refused, limits, Agent "
        "Skills rules, extension rules, portability of the YAML), or to JSON skill entries what "
        "a host applies plus the same Agent Skills rules. Exit 0 when there is no error (and "
        "no warning, with --strict), 1 when there is, 2 on a usage or I/O error.",
        usage_exit=2,
    )
    validate.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="a root of skills, a skill folder, or any file or folder inside a skill (which "
        "selects that skill); or s3://BUCKET/PREFIX, git:PATH[@REF]",
    )
    validate.add_argument(
        "--entries",
        action="append",
        default=[],
        metavar="FILE",
        help="JSON to check as skill entries (repeatable; '-' for stdin): an entry, a list of "
        "entries, a skills/list or skills/get result, or a whole JSON-RPC response",
    )
    validate.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="text",
        help="text (default), json, sarif (SARIF 2.1.0 for code scanning) or github "
        "(workflow annotations)",
    )
    validate.add_argument("--json", action="store_true", help="the same as --format json")
    validate.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="CODE",
        help="drop findings with this code (repeatable), e.g. --ignore portability-date",
    )
    validate.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    validate.add_argument(
        "--changed",
        action="store_true",
        help="the PATHs are changed files (as pre-commit passes them): validate the skills "
        "that contain them, pass over files in no skill, and exit 0 when none is in a skill",
    )
    validate.add_argument(
        "--sarif", metavar="FILE", help="also write the SARIF log to FILE (even on exit 2)"
    )
    validate.add_argument(
        "--explain", metavar="CODE", help="print what a finding code means, and exit"
    )
    validate.add_argument(
        "--rules-url",
        metavar="URL",
        help="where docs/rules.md is published: the page the rules' helpUri (SARIF) and "
        "--explain point to",
    )
    _source_options(validate, index=False)
    _s3_endpoint(validate)

    diff = commands.add_parser(
        "diff",
        help="what changed between two skills (folders, or entries as JSON)",
        description="Compare what serve publishes for two folders, or two JSON entries "
        "(frontmatter field by field; files added, removed and changed, with sizes). Exit 0 "
        "when they are the same, 1 when they differ, 2 on a usage or I/O error.",
        usage_exit=2,
    )
    diff.add_argument("old", metavar="OLD", help="a skill folder, a root of skills, or JSON")
    diff.add_argument("new", metavar="NEW", help="the same, after")
    diff.add_argument("--json", action="store_true", help="machine-readable output")
    _source_options(diff, index=False)

    check = commands.add_parser(
        "check",
        help="check a live server as a host would: every page, skill, file and directory",
        description="Connect to a server as a host would (stdio command or Streamable HTTP "
        "URL, either era), list every page, get each skill, read every listed file and "
        "directory, and report what breaks the extension's rules, with the codes of "
        "docs/rules.md. Exit 0 when there is no error (and no warning, with --strict), 1 when "
        "there is, 2 when the server could not be checked.",
        usage_exit=2,
    )
    check.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="LABEL=COMMAND|URL",
        help="the server: a command to spawn, or an http(s):// Streamable HTTP endpoint",
    )
    check.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="LABEL=NAME:VALUE",
        help="an HTTP header for the server (repeatable; values are never printed)",
    )
    check.add_argument(
        "--protocol-era",
        choices=("auto", "modern", "legacy"),
        default="auto",
        help="auto: probe server/discover, fall back to initialize (default); modern: "
        "2026-07-28 only; legacy: initialize (2025-11-25) only",
    )
    check.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="text",
        help="text (default), json, sarif (SARIF 2.1.0, logical locations) or github "
        "(workflow annotations)",
    )
    check.add_argument(
        "--ignore", action="append", default=[], metavar="CODE", help="drop findings with this code"
    )
    check.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    check.add_argument(
        "--timeout", type=_seconds, default=10.0, help="seconds per request (default 10)"
    )
    check.add_argument(
        "--max-time",
        type=_seconds,
        default=600.0,
        help="seconds for the whole check; past it, exit 2 (default 600)",
    )
    check.add_argument(
        "--max-entries",
        type=_positive_int,
        default=None,
        metavar="N",
        help="entries read from the listing (default 10000, as a host)",
    )
    check.add_argument(
        "--max-listing-bytes",
        type=_positive_int,
        default=None,
        metavar="N",
        help="listing bytes the entries read may hold (default 33554432, as a host)",
    )
    check.add_argument(
        "--sarif", metavar="FILE", help="also write the SARIF log to FILE (even on exit 2)"
    )
    check.add_argument(
        "--explain", metavar="CODE", help="print what a finding code means, and exit"
    )
    check.add_argument(
        "--rules-url", metavar="URL", help="where docs/rules.md is published (SARIF helpUri)"
    )

    host = commands.add_parser("host", help="load skills from MCP servers, verifying every byte")
    _host_options(host, after_action=False)
    actions = host.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    actions.required = True
    skill_help = (
        "the skill: LABEL:NAME, a skill URI (skill://.../SKILL.md), LABEL:URI, or a bare NAME "
        "when only one server lists it"
    )
    _host_options(actions.add_parser("list", help="list every server's skills"), after_action=True)
    watch = actions.add_parser(
        "watch", help="print each skill a server adds, removes or changes, until interrupted"
    )
    watch.add_argument(
        "--relist-interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="re-list a server at most once per this many seconds, however many change "
        "notifications it sends (default: 1)",
    )
    watch.add_argument(
        "--poll-interval",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="re-list a server that offers no notification stream every this many seconds "
        "(default: 30; 0 makes such a server an error, exit 2)",
    )
    _host_options(watch, after_action=True)
    show = actions.add_parser("show", help="show a skill's entry (fetches no content)")
    show.add_argument("skill", metavar="SKILL", help=skill_help)
    _host_options(show, after_action=True)
    load = actions.add_parser("load", help="load a skill: approve, read and verify SKILL.md")
    load.add_argument("skill", metavar="SKILL", help=skill_help)
    _host_options(load, after_action=True)
    read = actions.add_parser("read", help="load a skill and read one of its files")
    read.add_argument("skill", metavar="SKILL", help=skill_help)
    read.add_argument(
        "ref",
        metavar="REF",
        help="the file, relative to the skill's folder (e.g. templates/invoice.md), or its "
        "full skill:// URI",
    )
    _host_options(read, after_action=True)
    ls = actions.add_parser("ls", help="load a skill and list one of its directories")
    ls.add_argument("skill", metavar="SKILL", help=skill_help)
    ls.add_argument(
        "directory",
        metavar="DIR",
        nargs="?",
        default="",
        help="the directory, relative to the skill's folder (default: the folder itself)",
    )
    _host_options(ls, after_action=True)

    commands.add_parser("demo", help="replay the spec's example flow against a real server")
    return parser


def _host_options(parser: argparse.ArgumentParser, *, after_action: bool) -> None:
    """The options of ``host``, accepted before the action and after it (``host list --json``).

    After the action, an option given there wins; ``--server`` given in both places adds up
    (``server_after`` holds those given after the action).
    """

    def default(value: object) -> object:
        # Unset options after the action leave the namespace alone (the values before it stand).
        return argparse.SUPPRESS if after_action else value

    parser.add_argument(
        "--server",
        action="append",
        dest="server_after" if after_action else "server",
        default=default([]),
        metavar="LABEL=COMMAND|URL",
        help="a server command to spawn, or an http(s):// Streamable HTTP endpoint, under a label "
        "you choose (repeatable)",
    )
    parser.add_argument(
        "--header",
        action="append",
        dest="header_after" if after_action else "header",
        default=default([]),
        metavar="LABEL=NAME:VALUE",
        help="an HTTP header sent to server LABEL only, e.g. LABEL=Authorization:'Bearer ...' "
        "(repeatable; values are never printed)",
    )
    parser.add_argument(
        "--protocol-era",
        choices=("auto", "modern", "legacy"),
        default=default("auto"),
        help="auto: probe server/discover, fall back to initialize (default); modern: "
        "2026-07-28 only; legacy: initialize (2025-11-25) only",
    )
    parser.add_argument(
        "--approvals", metavar="FILE", default=default(None), help="where approvals are kept (JSON)"
    )
    parser.add_argument(
        "--cache", metavar="DIR", default=default(None), help="cache verified content here"
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        default=default(False),
        help="approve the skill's manifest without asking",
    )
    parser.add_argument(
        "--allow-dynamic",
        action="store_true",
        default=default(False),
        help='allow skills whose resources are "dynamic"',
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=default(10.0),
        help="seconds per request (default 10)",
    )
    parser.add_argument(
        "--max-entries",
        type=_positive_int,
        default=default(None),
        metavar="N",
        help="entries read from one server's listing (default 10000)",
    )
    parser.add_argument(
        "--max-listing-bytes",
        type=_positive_int,
        default=default(None),
        metavar="N",
        help="bytes one server's listed entries may hold (default 33554432)",
    )
    parser.add_argument(
        "--max-listed-resources",
        type=_positive_int,
        default=default(None),
        metavar="N",
        help="manifest rows one server's listed entries may hold (default 50000)",
    )
    parser.add_argument(
        "--json", action="store_true", default=default(False), help="machine-readable output"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (see the module docstring)."""
    try:
        args = build_parser().parse_args(argv)
        return _dispatch(args)
    except CliError as exc:
        error(exc.message)
        return exc.code
    except KeyboardInterrupt:
        error("interrupted")
        return EXIT_INTERRUPTED
    except SkillsError as exc:  # anything typed that a command did not map itself
        error(str(exc))
        return EXIT_CONNECTION
    except Exception as exc:  # noqa: BLE001 - never a traceback, but say it is a bug
        error(f"internal error ({exc.__class__.__name__}: {exc}); please report it")
        return EXIT_INTERNAL


def _dispatch(args: argparse.Namespace) -> int:
    # Each command's module is imported only when it runs (serve's start-up stays small).
    command = args.command
    if command == "serve":
        from .serve import run_serve  # noqa: PLC0415

        return run_serve(args)
    if command == "manifest":
        from .manifest import run_manifest  # noqa: PLC0415

        return run_manifest(args)
    if command == "publish":
        from .publish import run_publish  # noqa: PLC0415

        return run_publish(args)
    if command == "validate":
        from .validate import run_validate  # noqa: PLC0415

        return run_validate(args)
    if command == "diff":
        from .diff import run_diff  # noqa: PLC0415

        return run_diff(args)
    if command == "check":
        from .check_server import run_check_server  # noqa: PLC0415

        return run_check_server(args)
    if command == "host":
        from .host import run_host  # noqa: PLC0415

        return run_host(args)
    assert command == "demo"
    from ..demo import run_demo  # noqa: PLC0415

    return run_demo()
