"""``skills-core validate``: skill folders as ``serve`` reads them, or skill entries, for people and CI.

Theory of operation: the checks are :mod:`skills_core.check` (:func:`validate_folder` for each
folder, :func:`validate_entries` for each ``--entries`` file); this module reads the input, drops
the ``--ignore``d codes (an ignored error leaves its skill invalid), prints the report in one of
four forms, and picks the exit code.

**Paths.** :func:`skill_targets` turns the PATHs into folders to scan: a root of skills, a skill
folder or its ``SKILL.md`` as given; any other file, and a folder with no ``SKILL.md`` at or below
it, stands for the nearest folder above it that holds one (the skill that contains it), each
scanned once. With ``--changed`` (the pre-commit hook) the paths are changed files: one in no
skill is passed over, and one that no longer exists still selects the skill that held it. A
source URL (``s3://BUCKET/PREFIX``, ``git:PATH[@REF]``) is checked as a whole: each entry its
catalog or commit publishes by the entry rules, and an error for each skill its rules leave out.

**Forms.**

* ``text``: one status line per skill (``ok`` or ``INVALID``), each finding under it as
  ``file:line:column: severity[code] field: message``, then a summary with counts. Every line
  goes through :func:`skills_core.display.display`, so a file name or a frontmatter value holding
  a line break, an escape sequence or a bidirectional override shows as escapes and cannot forge
  a line;
* ``json``: :meth:`ValidationReport.to_json`, strict UTF-8 (``*_hex`` fields carry the bytes of
  names that are not UTF-8);
* ``sarif``: :func:`skills_core.ci.to_sarif`, paths relative to the working directory; the summary
  goes to stderr. A SARIF log is written whenever one is asked (``--format sarif``, or
  ``--sarif FILE`` beside another form), also when the run fails with exit 2: then its
  invocation is unsuccessful and says why, so that an upload step never meets an empty file;
* ``github``: :func:`skills_core.ci.github_commands` (written as they are: commands on purpose,
  each made of shown text with its message and properties escaped), then the summary.

``--explain CODE`` prints the rule behind a code (:func:`skills_core.rules.explain`: the entry
of docs/rules.md) and exits; ``--rules-url`` names the published page the rules link to.

Every form is safe in a CI log: no name or message can form a workflow command the runner would
obey (:mod:`skills_core.display`); JSON and SARIF go through
:func:`skills_core.display.display_json`, exact and strict UTF-8.

Exit codes, as diff(1) has them: 0 when no finding is an error (and none is a warning, under
``--strict``; notes never count), 1 when one is, or when a skill had an error ``--ignore``d, 2
for a usage or I/O error (a path that does not exist or is in no skill, an unreadable or
malformed ``--entries`` file or one that holds no entry, a JSON-RPC error response, an unknown
``--ignore`` code). An input that gives nothing to validate is an error
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
from ..ci import github_commands, to_sarif
from ..display import display, display_json
from ..errors import JsonRpcError
from ..jsonvalue import loads_strict
from ..rules import RULES, RULES_URL, explain
from ..server.model import OmitCode
from ..spec import SKILL_MD
from ..validation import Finding, Severity
from ._common import CliError, error, open_url_source, os_message, print_json

__all__ = [
    "EXIT_VALID",
    "EXIT_INVALID",
    "EXIT_TROUBLE",
    "run_validate",
    "read_json_documents",
    "skill_targets",
    "plural",
]

#: No error (and no warning under ``--strict``).
EXIT_VALID = 0
#: At least one error (or warning, under ``--strict``).
EXIT_INVALID = 1
#: A usage or I/O error: nothing (or not everything) could be checked.
EXIT_TROUBLE = 2

#: How a source URL starts (:func:`skills_core.sources.urls.is_source_url`; the sources package
#: is imported only when one is given).
_SOURCE_URLS = ("s3://", "git:")


def run_validate(args: argparse.Namespace) -> int:
    """Run ``skills-core validate`` (see the module docstring); return the exit code."""
    rules_url = args.rules_url or RULES_URL
    if args.explain is not None:
        return _explain(args.explain, rules_url)
    output = "json" if args.json else args.format
    try:
        report, empty = _validate(args)
    except CliError as exc:
        # A SARIF log is written whatever happens, so that an upload step has a valid one to send.
        _write_sarif(args, output, ValidationReport(), exit_code=exc.code, failures=[exc.message])
        raise
    code = EXIT_VALID if report.passes(strict=args.strict) else EXIT_INVALID
    if empty:
        code = EXIT_TROUBLE
    if output != "sarif":
        _print(report, output, strict=args.strict)
    _write_sarif(args, output, report, exit_code=code, failures=empty)
    if output == "sarif":
        sys.stderr.write(display(f"skills-core: {_summary(report, args.strict)}") + "\n")
    for message in empty:
        error(message)
    return code


def _validate(args: argparse.Namespace) -> tuple[ValidationReport, list[str]]:
    """Validate every input; return the report (less ``--ignore``d codes) and one message per
    input that gave nothing to validate.

    Raises:
        CliError: a usage or I/O error (exit 2).
    """
    if not args.paths and not args.entries:
        raise CliError("validate: give PATH... or --entries FILE", EXIT_TROUBLE)
    unknown = [code for code in args.ignore if code not in RULES]
    if unknown:
        raise CliError(
            f"validate: --ignore {unknown[0]!r} is not a finding code{_near(unknown[0])}",
            EXIT_TROUBLE,
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
    targets, outside = skill_targets(args.paths, changed=args.changed)
    if not args.changed:
        empty += outside
    for path in targets:
        try:
            if path.startswith(_SOURCE_URLS):
                report = _source_report(path, args)
            else:
                report = validate_folder(
                    path, include_hidden=args.include_hidden, exclude=args.exclude
                )
        except OSError as exc:
            raise CliError(os_message(exc), EXIT_TROUBLE) from None
        if not report.skills and not args.changed:
            empty.append(f"{path}: no skill found (no folder at or below it holds a SKILL.md)")
        reports.append(report)
    return ValidationReport.merge(reports).without(frozenset(args.ignore)), empty


def skill_targets(paths: list[str], *, changed: bool = False) -> tuple[list[str], list[str]]:
    """What to validate for ``paths``: the folders to scan, and a message per path in no skill.

    A folder or a ``SKILL.md`` is scanned as it is (a root of skills, or one skill). Any other
    file, and a folder that holds no ``SKILL.md`` at or below it, stands for the skill that
    contains it: the nearest folder above it holding a ``SKILL.md`` (so ``skills/x/notes.md``
    and ``skills/x/references/`` select ``skills/x``). Each folder is scanned once. A source URL
    (``s3://BUCKET/PREFIX``, ``git:PATH[@REF]``) is kept as given.

    Args:
        paths: The paths given, in order.
        changed: The paths are changed files (pre-commit gives them): one that no longer exists
            stands for the skill that contained it, and one in no skill is passed over.

    Returns:
        ``(folders, messages)``: the folders in the order first selected, spelled as given (or
        relative to the working directory, for a skill found above a relative path); one
        message for each path that is in no skill.

    Raises:
        CliError: a path does not exist (unless ``changed``) (exit 2).
    """
    folders: dict[str, None] = {}
    outside: list[str] = []
    for path in paths:
        target: str | None = path
        if path.startswith(_SOURCE_URLS):
            folders.setdefault(path, None)  # a bucket's catalog or a commit, read as a whole
            continue
        if not os.path.lexists(path):
            if not changed:
                raise CliError(f"{path}: No such file or directory", EXIT_TROUBLE)
            target = _containing_skill(path)
        elif os.path.isdir(path) and not _holds_skill(path):
            target = _containing_skill(path) or path
        elif os.path.basename(path) == SKILL_MD and not os.path.isdir(path):
            target = os.path.dirname(path) or os.curdir
        elif not os.path.isdir(path):
            target = _containing_skill(path)
        if target is None:
            outside.append(
                f"{path}: not inside a skill (no SKILL.md in its folder or any folder above it)"
            )
            continue
        folders.setdefault(os.path.normpath(target), None)
    return list(folders), outside


def _holds_skill(folder: str) -> bool:
    """Whether a ``SKILL.md`` is in ``folder`` or below it (hidden folders included)."""
    return any(SKILL_MD in files for _, _, files in os.walk(folder))


def _containing_skill(path: str) -> str | None:
    """The nearest folder strictly above ``path`` that holds a ``SKILL.md``, or None."""
    absolute = os.path.abspath(path)
    folder = os.path.dirname(absolute)
    while True:
        if os.path.lexists(os.path.join(folder, SKILL_MD)):
            if os.path.isabs(path):
                return folder
            return os.path.relpath(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _near(code: str) -> str:
    near = difflib.get_close_matches(code, RULES, n=1)
    return f"; did you mean {near[0]!r}?" if near else ""


def _explain(code: str, rules_url: str) -> int:
    rule = RULES.get(code)
    if rule is None:
        raise CliError(
            f"validate: --explain {code!r} is not a finding code{_near(code)}", EXIT_TROUBLE
        )
    sys.stdout.write(
        explain(rule, page=rules_url)
    )  # our own text, the URL given on our command line
    return EXIT_VALID


def _write_sarif(
    args: argparse.Namespace,
    output: str,
    report: ValidationReport,
    *,
    exit_code: int,
    failures: list[str],
) -> None:
    """Print the SARIF log (``--format sarif``) and write it to ``--sarif FILE``, if asked."""
    if output != "sarif" and args.sarif is None:
        return
    log = to_sarif(
        report,
        base=os.getcwd(),
        exit_code=exit_code,
        failures=failures,
        rules_url=args.rules_url or RULES_URL,
    )
    if output == "sarif":
        print_json(log)
    if args.sarif is not None:
        try:
            Path(args.sarif).write_text(display_json(log) + "\n", encoding="utf-8")
        except OSError as exc:
            raise CliError(f"--sarif {args.sarif}: {exc.strerror or exc}", EXIT_TROUBLE) from None


def _source_report(url: str, args: argparse.Namespace) -> ValidationReport:
    """What a bucket's catalog or a git commit publishes, checked: each published entry by the
    host's and the Agent Skills rules, and an error for each skill the source's rules leave out.
    """
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
                    code="too-large" if omitted.code is OmitCode.OVER_LIMIT else str(omitted.code),
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


def _print(report: ValidationReport, output: str, *, strict: bool) -> None:
    out = sys.stdout
    if output == "json":
        print_json(report.to_json(strict=strict))
        return
    if output == "github":
        # Workflow commands on purpose: made of shown text, each message and property escaped.
        commands = github_commands(report, base=os.getcwd())
        out.write("".join(line + "\n" for line in commands))
        refused = [_status(skill) for skill in report.skills if skill.ignored_errors]
        out.write("".join(display(line) + "\n" for line in [*refused, _summary(report, strict)]))
        return
    lines = [*_text(report), _summary(report, strict)]
    out.write("".join(display(line) + "\n" for line in lines))


def _text(report: ValidationReport) -> list[str]:
    lines: list[str] = []
    for finding in report.findings:
        lines.append(_finding_line(finding, prefix=""))
    for skill in report.skills:
        lines.append(_status(skill))
        lines.extend(_finding_line(finding, prefix="  ") for finding in skill.findings)
    return lines


def _status(skill: SkillReport) -> str:
    status = f"{'ok' if skill.valid else 'INVALID':8} {_subject(skill)}"
    if skill.ignored_errors:
        status += f" [errors ignored, still refused: {', '.join(skill.ignored_errors)}]"
    return status


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
    if counts["notes"]:
        text += f", {plural(counts['notes'], 'note')}"
    if counts["ignored"]:
        text += f", {counts['ignored']} ignored"
    if strict and counts["warnings"]:
        text += " (--strict: warnings fail)"
    return text


def plural(number: int, noun: str) -> str:
    """``"1 file"``, ``"2 files"``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
