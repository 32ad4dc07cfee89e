"""The ``skills-core`` command line: serve, manifest, validate, host, demo.

Theory of operation: each command is a thin shell over the library. ``serve`` wraps a
:class:`~skills_core.server.SkillsServer` in the blocking stdio loop; ``manifest`` and
``validate`` print what the catalog and the validators decide; ``host`` (in
:mod:`skills_core.cli_host`) drives a :class:`~skills_core.host.Host` over server processes;
``demo`` (in :mod:`skills_core.demo`) replays the spec's example flow. Every failure is one line on
stderr, never a traceback, and the exit code says what kind of failure it was (DESIGN.md):

====  ==================================================================================
0     ok
1     usage: bad arguments, an unknown or ambiguous skill name, an invalid folder (validate)
2     connection or protocol error: a server cannot start, dies, times out, breaks JSON-RPC
3     verification failure: size, digest, frontmatter, unlisted file, escaping reference
4     approval needed, refused or revoked (the message names what changed)
5     invalid or over-limit entry (including a skills/get answer for another URI)
====  ==================================================================================
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from skills_core._version import __version__
from skills_core.entry import DEFAULT_LIMITS, SkillEntry
from skills_core.errors import InvalidEntryError, SkillsError
from skills_core.jsonvalue import loads_strict
from skills_core.validation import Finding, Severity, validate_skill_md

if TYPE_CHECKING:
    from pathlib import Path

    from skills_core.server.filesystem import FilesystemSource

__all__ = ["main", "EXIT_OK", "EXIT_USAGE", "EXIT_CONNECTION", "EXIT_VERIFICATION"]

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_CONNECTION = 2
EXIT_VERIFICATION = 3
EXIT_APPROVAL = 4
EXIT_INVALID_ENTRY = 5


class CliError(Exception):
    """A failure to report as one line with an exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil (3 ms of start-up)."""
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
    """argparse, but usage errors exit 1 (DESIGN.md) with one line and no usage dump."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{self.prog}: {message} (see --help)", EXIT_USAGE)


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
    serve.add_argument("roots", nargs="+", metavar="ROOT", help="folder of skills")
    serve.add_argument(
        "--no-directory-read",
        action="store_true",
        help="do not declare or serve resources/directory/read",
    )
    serve.add_argument(
        "--page-size", type=_positive_int, default=50, help="entries per page (default 50)"
    )
    serve.add_argument(
        "--ttl-ms",
        type=_non_negative_int,
        default=300_000,
        help="ttlMs on cacheable results (default 300000)",
    )

    manifest = commands.add_parser(
        "manifest", help="print the entries serve would publish, and why any are omitted"
    )
    manifest.add_argument("roots", nargs="+", metavar="ROOT")
    manifest.add_argument("--json", action="store_true", help="machine-readable output")

    validate = commands.add_parser(
        "validate", help="lint skill folders, or skill entries with --entries"
    )
    validate.add_argument(
        "paths", nargs="*", metavar="PATH", help="a skill folder, its SKILL.md, or a root of skills"
    )
    validate.add_argument(
        "--entries",
        metavar="FILE",
        help="a JSON skill entry, a list of entries, or a skills/list result ('-' for stdin)",
    )
    validate.add_argument("--json", action="store_true", help="machine-readable output")

    host = commands.add_parser("host", help="load skills from MCP servers, verifying every byte")
    host.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="LABEL=COMMAND",
        help="a server to spawn, under a label you choose (repeatable)",
    )
    host.add_argument("--approvals", metavar="FILE", help="where approvals are kept (JSON)")
    host.add_argument("--cache", metavar="DIR", help="cache verified content here")
    host.add_argument(
        "--yes", action="store_true", help="approve the skill's manifest without asking"
    )
    host.add_argument(
        "--allow-dynamic", action="store_true", help='allow skills whose resources are "dynamic"'
    )
    host.add_argument(
        "--timeout", type=_seconds, default=10.0, help="seconds per request (default 10)"
    )
    host.add_argument("--json", action="store_true", help="machine-readable output")
    actions = host.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    actions.required = True
    actions.add_parser("list", help="list every server's skills")
    show = actions.add_parser("show", help="show a skill's entry (fetches no content)")
    show.add_argument("skill", metavar="SKILL")
    load = actions.add_parser("load", help="load a skill: approve, read and verify SKILL.md")
    load.add_argument("skill", metavar="SKILL")
    read = actions.add_parser("read", help="load a skill and read one of its files")
    read.add_argument("skill", metavar="SKILL")
    read.add_argument("ref", metavar="REF")
    ls = actions.add_parser("ls", help="load a skill and list one of its directories")
    ls.add_argument("skill", metavar="SKILL")
    ls.add_argument("directory", metavar="DIR", nargs="?", default="")

    commands.add_parser("demo", help="replay the spec's example flow against a real server")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (see the module docstring)."""
    try:
        args = build_parser().parse_args(argv)
        return _dispatch(args)
    except CliError as exc:
        _error(exc.message)
        return exc.code
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except SkillsError as exc:  # anything typed that a command did not map itself
        _error(str(exc))
        return EXIT_CONNECTION
    except Exception as exc:  # noqa: BLE001 - never a traceback, but say it is a bug
        _error(f"internal error ({exc.__class__.__name__}: {exc}); please report it")
        return 70


def _error(message: str) -> None:
    sys.stderr.write(f"skills-core: {message}\n")
    sys.stderr.flush()


def _dispatch(args: argparse.Namespace) -> int:
    command = args.command
    if command == "serve":
        return _serve(args)
    if command == "manifest":
        return _manifest(args)
    if command == "validate":
        return _validate(args)
    if command == "host":
        from skills_core.cli_host import run_host  # noqa: PLC0415 - only the host loads the host

        return run_host(args)
    assert command == "demo"
    from skills_core.demo import run_demo  # noqa: PLC0415

    return run_demo()


# --- serve ------------------------------------------------------------------------------------


def _open_source(roots: Sequence[str]) -> FilesystemSource:
    from skills_core.server.filesystem import FilesystemSource  # noqa: PLC0415

    try:
        return FilesystemSource(roots)
    except (OSError, ValueError) as exc:
        raise CliError(_os_message(exc), EXIT_USAGE) from None


def _os_message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc)


def _serve(args: argparse.Namespace) -> int:
    from skills_core.adapters.blocking_stdio import serve_stdio  # noqa: PLC0415
    from skills_core.server.handler import SkillsServer  # noqa: PLC0415

    source = _open_source(args.roots)
    server = SkillsServer(
        source,
        cursor_key=os.urandom(32),
        directory_read=not args.no_directory_read,
        page_size=args.page_size,
        ttl_ms=args.ttl_ms,
    )
    omitted = len(server.catalog.omitted)
    if omitted:  # stdout belongs to the protocol; stderr is for the operator (§1.7)
        _error(f"serve: {omitted} skill folder(s) left out; `skills-core manifest` says why")
    # A SkillsServer's results have string keys by construction: skip the endpoint's key walk.
    serve_stdio(server.connection(), results_have_string_keys=True)
    return EXIT_OK


# --- manifest ---------------------------------------------------------------------------------


def _manifest(args: argparse.Namespace) -> int:
    source = _open_source(args.roots)
    progress = sys.stderr.isatty()
    if progress:
        sys.stderr.write(f"skills-core: scanning {', '.join(args.roots)} ...")
        sys.stderr.flush()
    catalog = source.scan()
    if progress:
        sys.stderr.write(f"\rskills-core: scanned {len(catalog.skills)} skills.      \n")
    if args.json:
        document = {
            "skills": [skill.entry.to_json() for skill in catalog.skills],
            "omitted": [
                {"path": o.path, "uri": o.uri, "code": str(o.code), "reason": o.reason}
                for o in catalog.omitted
            ],
            "warnings": [
                {"uri": skill.entry.uri, **_finding_json(f)}
                for skill in catalog.skills
                for f in catalog.findings(skill)
            ],
            "problems": [
                {"path": p.path, "code": str(p.code), "reason": p.reason} for p in catalog.problems
            ],
        }
        _print_json(document)
        return EXIT_OK
    out = sys.stdout
    for skill in catalog.skills:
        entry = skill.entry
        what = (
            "dynamic"
            if entry.is_dynamic
            else f"{len(entry.resources)} files, {entry.total_size} bytes"
        )
        out.write(f"{entry.uri}  ({what})\n")
        for finding in catalog.findings(skill):
            out.write(f"    warning {finding.field or '/'}: {finding.message}\n")
    for omitted in catalog.omitted:
        where = omitted.uri or omitted.path
        out.write(f"omitted {where}: {omitted.reason}\n")
    for problem in catalog.problems:
        out.write(f"skipped {problem.path}: {problem.reason}\n")
    out.write(f"{len(catalog.skills)} skills published, {len(catalog.omitted)} left out\n")
    return EXIT_OK


def _finding_json(finding: Finding) -> dict[str, object]:
    out: dict[str, object] = {
        "severity": str(finding.severity),
        "field": finding.field,
        "code": finding.code,
        "message": finding.message,
    }
    if finding.line is not None:
        out["line"] = finding.line
    return out


def _print_json(document: object) -> None:
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


# --- validate ---------------------------------------------------------------------------------


def _validate(args: argparse.Namespace) -> int:
    if args.entries is None and not args.paths:
        raise CliError("validate: give PATH... or --entries FILE", EXIT_USAGE)
    reports: list[dict[str, object]] = []
    if args.entries is not None:
        reports.extend(_validate_entries(args.entries))
    for path in args.paths:
        reports.extend(_validate_path(path))
    ok = all(report["valid"] for report in reports)
    if args.json:
        _print_json({"valid": ok, "results": reports})
    else:
        for report in reports:
            status = "ok" if report["valid"] else "INVALID"
            sys.stdout.write(f"{status:8} {report['subject']}\n")
            findings = report["findings"]
            assert isinstance(findings, list)
            for finding in findings:
                line = f" (line {finding['line']})" if "line" in finding else ""
                sys.stdout.write(
                    f"    {finding['severity']:7} {finding['field'] or '/'}: "
                    f"{finding['message']}{line}\n"
                )
    return EXIT_OK if ok else EXIT_USAGE


def _validate_entries(name: str) -> list[dict[str, object]]:
    from pathlib import Path  # noqa: PLC0415 - kept off the start-up path of serve

    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"--entries {name}: {exc}", EXIT_USAGE) from None
    try:
        document: object = loads_strict(text)  # duplicate keys and NaN are refused, not resolved
    except ValueError as exc:
        raise CliError(f"--entries {name}: not JSON ({exc})", EXIT_USAGE) from None
    if isinstance(document, dict) and "skills" in document and "uri" not in document:
        document = document["skills"]
    if isinstance(document, dict) and "skill" in document and "uri" not in document:
        document = document["skill"]
    items = document if isinstance(document, list) else [document]
    reports: list[dict[str, object]] = []
    for index, item in enumerate(items):
        subject = f"{name}[{index}]"
        uri = item.get("uri") if isinstance(item, dict) else None
        if isinstance(uri, str):
            subject = f"{subject} {uri}"
        try:
            SkillEntry.from_json(item, limits=DEFAULT_LIMITS)
        except InvalidEntryError as exc:
            findings = [
                {
                    "severity": "error",
                    "field": p.pointer,
                    "code": p.code,
                    "message": p.message,
                }
                for p in exc.problems
            ]
            reports.append({"subject": subject, "valid": False, "findings": findings})
        else:
            reports.append({"subject": subject, "valid": True, "findings": []})
    return reports


def _validate_path(path_text: str) -> list[dict[str, object]]:
    from pathlib import Path  # noqa: PLC0415 - kept off the start-up path of serve

    path = Path(path_text)
    if path.is_file():
        if path.name != "SKILL.md":
            raise CliError(f"{path_text}: not a SKILL.md file or a folder", EXIT_USAGE)
        path = path.parent
    if not path.is_dir():
        raise CliError(f"{path_text}: no such folder", EXIT_USAGE)
    if (path / "SKILL.md").is_file():
        return [_validate_skill_folder(path)]
    source = _open_source([str(path)])
    catalog = source.scan()
    reports: list[dict[str, object]] = []
    folders = {skill.folder for skill in catalog.skills} | {o.path for o in catalog.omitted}
    for folder in sorted(folders):
        reports.append(_validate_skill_folder(path / folder if folder else path))
    if not reports:
        raise CliError(f"{path_text}: no SKILL.md found", EXIT_USAGE)
    return reports


def _validate_skill_folder(folder: Path) -> dict[str, object]:
    """All Agent Skills findings for one folder, plus what the server would decide about it."""
    from skills_core.server.filesystem import FilesystemSource  # noqa: PLC0415
    from skills_core.server.model import OmittedSkill, PublishedSkill  # noqa: PLC0415
    from skills_core.uri import encode_path_segment  # noqa: PLC0415

    folder = folder.resolve()
    findings: list[dict[str, object]] = []
    try:
        data = (folder / "SKILL.md").read_bytes()
    except OSError as exc:
        return {
            "subject": str(folder),
            "valid": False,
            "findings": [
                {"severity": "error", "field": "", "code": "unreadable", "message": str(exc)}
            ],
        }
    findings.extend(_finding_json(f) for f in validate_skill_md(data, directory_name=folder.name))
    verdict: PublishedSkill | OmittedSkill | None = None
    try:
        source = FilesystemSource([folder.parent])
        verdict = source.recheck(f"skill://{encode_path_segment(folder.name)}/SKILL.md")
    except (OSError, SkillsError, ValueError) as exc:
        findings.append(
            {"severity": "error", "field": "", "code": "unservable", "message": str(exc)}
        )
    subject = str(folder)
    if isinstance(verdict, PublishedSkill):
        entry = verdict.entry
        subject = f"{folder} ({len(entry.resources)} files, {entry.total_size} bytes)"
        known = {(f["code"], f["message"]) for f in findings}
        for finding in verdict.findings:
            item = _finding_json(finding)
            if (item["code"], item["message"]) not in known:
                findings.append(item)
    elif isinstance(verdict, OmittedSkill) and not any(f["severity"] == "error" for f in findings):
        findings.append(
            {
                "severity": "error",
                "field": "",
                "code": str(verdict.code),
                "message": verdict.reason,
            }
        )
    valid = not any(f["severity"] == Severity.ERROR for f in findings)
    return {"subject": subject, "valid": valid, "findings": findings}
