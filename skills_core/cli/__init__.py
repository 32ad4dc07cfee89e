"""The ``skills-core`` command line: serve, manifest, validate, host, demo.

Theory of operation: each command is a thin shell over the library, in a module of its own that
this package imports only when that command runs (``serve`` starts fast because it loads no host,
no asyncio and no argparse sub-parsers' handlers it does not need):

* :mod:`skills_core.cli.serve` wraps a :class:`~skills_core.server.SkillsServer` in the blocking
  stdio loop;
* :mod:`skills_core.cli.manifest` and :mod:`skills_core.cli.validate` print what the catalog and
  the validators decide;
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
from collections.abc import Sequence
from typing import Any, NoReturn

from skills_core._version import __version__
from skills_core.cli._common import (
    EXIT_CONNECTION,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CliError,
    error,
)
from skills_core.errors import SkillsError

__all__ = ["main", "build_parser"]


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


def _source_options(command: argparse.ArgumentParser) -> None:
    """The options of the filesystem source, which ``serve`` and ``manifest`` share."""
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
    command.add_argument(
        "--index",
        metavar="FILE",
        help="start warm from a digest index kept in FILE (created and updated as needed; "
        "workers of one server may share it)",
    )


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
        "roots", nargs="+", metavar="ROOT", help="a folder of skills, or a skill folder itself"
    )
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
        help="ttlMs on cacheable results; skills added or removed show in listings within it "
        "(default 300000)",
    )
    _source_options(serve)

    manifest = commands.add_parser(
        "manifest", help="print the entries serve would publish, and why any are omitted"
    )
    manifest.add_argument(
        "roots", nargs="+", metavar="ROOT", help="a folder of skills, or a skill folder itself"
    )
    manifest.add_argument("--json", action="store_true", help="machine-readable output")
    _source_options(manifest)

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
        from skills_core.cli.serve import run_serve  # noqa: PLC0415

        return run_serve(args)
    if command == "manifest":
        from skills_core.cli.manifest import run_manifest  # noqa: PLC0415

        return run_manifest(args)
    if command == "validate":
        from skills_core.cli.validate import run_validate  # noqa: PLC0415

        return run_validate(args)
    if command == "host":
        from skills_core.cli.host import run_host  # noqa: PLC0415

        return run_host(args)
    assert command == "demo"
    from skills_core.demo import run_demo  # noqa: PLC0415

    return run_demo()
