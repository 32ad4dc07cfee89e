"""``skills-core validate``: skill folders as ``serve`` reads them, or skill entries, for people and CI.

Theory of operation: the checks are :mod:`skills_core.check` (:func:`validate_folder` for each
PATH, :func:`validate_entries` for each ``--entries`` file); this module reads the input, drops the
``--ignore``d codes, prints the report in one of four forms, and picks the exit code:

* ``text``: one status line per skill (``ok`` or ``INVALID``), each finding under it as
  ``file:line:column: severity[code] field: message``, then a summary with counts. Every line
  goes through :func:`skills_core.display.display`, so a file name or a frontmatter value holding
  a line break, an escape sequence or a bidirectional override shows as escapes and cannot forge
  a line;
* ``json``: :meth:`ValidationReport.to_json`, strict UTF-8 (``*_hex`` fields carry the bytes of
  names that are not UTF-8);
* ``sarif``: :func:`skills_core.ci.to_sarif`, paths relative to the working directory; the summary
  goes to stderr;
* ``github``: :func:`skills_core.ci.github_commands` (written as they are: commands on purpose,
  each made of shown text with its message and properties escaped), then the summary.

Every form is safe in a CI log: no name or message can form a workflow command the runner would
obey (:mod:`skills_core.display`); JSON and SARIF go through
:func:`skills_core.display.display_json`, exact and strict UTF-8.

Exit codes, as diff(1) has them: 0 when no finding is an error (and none is a warning, under
``--strict``), 1 when one is, 2 for a usage or I/O error (a path that does not exist or holds no
skill, an unreadable or malformed ``--entries`` file or one that holds no entry, a JSON-RPC error
response, an unknown ``--ignore`` code). An input that gives nothing to validate is an error
whatever it is: the report of the rest is printed, then one line for each such input.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from ..check import (
    SkillReport,
    SubjectKind,
    ValidationReport,
    validate_entries,
    validate_folder,
)
from ..ci import RULES, github_commands, to_sarif
from ..display import display
from ..errors import JsonRpcError
from ..jsonvalue import loads_strict
from ..validation import Finding
from ._common import CliError, error, open_url_source, os_message, print_json

__all__ = [
    "EXIT_VALID",
    "EXIT_INVALID",
    "EXIT_TROUBLE",
    "run_validate",
    "read_json_documents",
    "plural",
]

#: No error (and no warning under ``--strict``).
EXIT_VALID = 0
#: At least one error (or warning, under ``--strict``).
EXIT_INVALID = 1
#: A usage or I/O error: nothing (or not everything) could be checked.
EXIT_TROUBLE = 2


def run_validate(args: argparse.Namespace) -> int:
    """Run ``skills-core validate`` (see the module docstring); return the exit code."""
    output = "json" if args.json else args.format
    if not args.paths and not args.entries:
        raise CliError("validate: give PATH... or --entries FILE", EXIT_TROUBLE)
    unknown = [code for code in args.ignore if code not in RULES]
    if unknown:
        near = difflib.get_close_matches(unknown[0], RULES, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise CliError(
            f"validate: --ignore {unknown[0]!r} is not a finding code{hint}", EXIT_TROUBLE
        )
    reports: list[ValidationReport] = []
    empty: list[str] = []  # one message per input that gave nothing to validate
    for name in args.entries:
        found = 0
        for source, document in read_json_documents(name, label=f"--entries {name}"):
            try:
                report = validate_entries(document, source=source)
            except JsonRpcError as exc:
                raise CliError(f"--entries {name}: {exc.message}", EXIT_TROUBLE) from None
            found += len(report.skills)
            reports.append(report)
        if not found:
            empty.append(f"--entries {name}: no skill entry found (its list of entries is empty)")
    for path in args.paths:
        try:
            if path.startswith(("s3://", "git:")):
                report = _source_report(path, args)
            else:
                report = validate_folder(
                    path, include_hidden=args.include_hidden, exclude=args.exclude
                )
        except OSError as exc:
            raise CliError(os_message(exc), EXIT_TROUBLE) from None
        if not report.skills:
            empty.append(f"{path}: no skill found (no folder at or below it holds a SKILL.md)")
        reports.append(report)
    report = ValidationReport.merge(reports).without(frozenset(args.ignore))
    code = EXIT_VALID if report.passes(strict=args.strict) else EXIT_INVALID
    if empty:
        code = EXIT_TROUBLE
    _print(report, output, strict=args.strict, exit_code=code)
    for message in empty:
        error(message)
    return code


def _source_report(url: str, args: argparse.Namespace) -> ValidationReport:
    """What a bucket's catalog or a git commit publishes, checked: each published entry by the
    host's and the Agent Skills rules, and an error for each skill the source's rules leave out.
    """
    from ..validation import Severity  # noqa: PLC0415

    try:
        source = open_url_source(
            url,
            include_hidden=args.include_hidden,
            exclude=args.exclude,
            s3_endpoint=args.s3_endpoint,
        )
    except CliError as exc:
        raise CliError(exc.message, EXIT_TROUBLE) from None
    catalog = source.scan()
    source.close()
    report = validate_entries([skill.entry.to_json() for skill in catalog.skills], source=url)
    left_out = [
        SkillReport(
            kind=SubjectKind.ENTRY,
            path=url,
            uri=omitted.uri,
            findings=(
                Finding(
                    severity=Severity.ERROR,
                    field="",
                    code=str(omitted.code),
                    message=f"{omitted.path}: {omitted.reason}",
                    file=url,
                ),
            ),
        )
        for omitted in catalog.omitted
    ]
    return ValidationReport.merge([report, ValidationReport(skills=tuple(left_out))])


def read_json_documents(name: str, *, label: str = "") -> list[tuple[str, object]]:
    """The JSON documents of a file (``-``: stdin): one document, or JSON lines (one per line).

    Args:
        name: The file, or ``-``.
        label: What errors name the file as (``--entries FILE``); ``name`` by default.

    Returns:
        ``(source, document)`` pairs: ``source`` is ``name``, or ``name:LINE`` for JSON lines.

    Raises:
        CliError: the file cannot be read, is not UTF-8, or is not JSON (exit 2).
    """
    label = label or name
    try:
        raw = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
        text = raw.decode("utf-8")
    except OSError as exc:
        raise CliError(f"{label}: {exc.strerror or exc}", EXIT_TROUBLE) from None
    except UnicodeDecodeError as exc:
        raise CliError(
            f"{label}: not UTF-8 ({exc.reason} at byte {exc.start})", EXIT_TROUBLE
        ) from None
    source = "<stdin>" if name == "-" else name
    try:
        return [(source, loads_strict(text))]  # duplicate keys and NaN are refused, not resolved
    except ValueError as whole:
        documents: list[tuple[str, object]] = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                documents.append((f"{source}:{number}", loads_strict(line)))
            except ValueError:
                raise CliError(f"{label}: not JSON ({whole})", EXIT_TROUBLE) from None
        if len(documents) < 2:
            raise CliError(f"{label}: not JSON ({whole})", EXIT_TROUBLE) from None
        return documents


def _print(report: ValidationReport, output: str, *, strict: bool, exit_code: int) -> None:
    out = sys.stdout
    if output == "json":
        print_json(report.to_json(strict=strict))
        return
    if output == "sarif":
        print_json(to_sarif(report, base=os.getcwd(), exit_code=exit_code))
        sys.stderr.write(display(f"skills-core: {_summary(report, strict)}") + "\n")
        return
    if output == "github":
        # Workflow commands on purpose: made of shown text, each message and property escaped.
        commands = github_commands(report, base=os.getcwd())
        out.write("".join(line + "\n" for line in commands))
        out.write(display(_summary(report, strict)) + "\n")
        return
    lines = [*_text(report), _summary(report, strict)]
    out.write("".join(display(line) + "\n" for line in lines))


def _text(report: ValidationReport) -> list[str]:
    lines: list[str] = []
    for finding in report.findings:
        lines.append(_finding_line(finding, prefix=""))
    for skill in report.skills:
        lines.append(f"{'ok' if skill.valid else 'INVALID':8} {_subject(skill)}")
        lines.extend(_finding_line(finding, prefix="  ") for finding in skill.findings)
    return lines


def _subject(skill: SkillReport) -> str:
    subject = skill.path if skill.index is None else f"{skill.path}[{skill.index}]"
    if skill.uri is not None and skill.index is not None:
        subject += f" {skill.uri}"
    entry = skill.entry
    if entry is not None:
        what = (
            "dynamic"
            if entry.is_dynamic
            else f"{plural(len(entry.resources), 'file')}, {plural(entry.total_size, 'byte')}"
        )
        subject += f" ({what})"
    return subject


def _finding_line(finding: Finding, *, prefix: str) -> str:
    field = f" {finding.field}:" if finding.field else ""
    place = f"{finding.place}: " if finding.place else ""
    return f"{prefix}{place}{finding.severity}[{finding.code}]{field} {finding.message}"


def _summary(report: ValidationReport, strict: bool) -> str:
    counts = report.summary()
    text = (
        f"{plural(counts['skills'], 'skill')} checked: {counts['valid']} valid, "
        f"{counts['invalid']} invalid; {plural(counts['errors'], 'error')}, "
        f"{plural(counts['warnings'], 'warning')}"
    )
    if counts["ignored"]:
        text += f", {counts['ignored']} ignored"
    if strict and counts["warnings"]:
        text += " (--strict: warnings fail)"
    return text


def plural(number: int, noun: str) -> str:
    """``"1 file"``, ``"2 files"``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
