"""Validation reports for CI systems: SARIF 2.1.0 for code scanning, and GitHub workflow commands.

Theory of operation
===================

Both forms are made from a :class:`~skills_core.check.ValidationReport` by pure functions (the
command line prints them; a CI script may too):

* :func:`to_sarif` gives a SARIF 2.1.0 log (OASIS) that GitHub code scanning accepts: one run
  whose driver lists every rule of the registry :data:`skills_core.rules.RULES` (id, name,
  short and full descriptions, the rule's ``docs/rules.md`` entry as help text and Markdown,
  ``helpUri`` to that entry, default level, a tag for its family), and one result per finding
  with its ``ruleId``, ``ruleIndex``, ``level`` (``error``, ``warning`` or ``note``) and a
  location: the file as a URI reference and a region. A run that could not check everything (a
  path that does not exist, an input with nothing to validate) is still a valid log: its
  invocation is not ``executionSuccessful`` and carries each reason as an error
  ``toolExecutionNotification``, so an upload step after a failed run uploads a log that says
  why.
  Code scanning needs a ``startLine``: a finding without a line (a missing field, a file refused
  by the walk, a skill over the limits) is placed on line 1 of its file. Columns count Unicode
  code points (``columnKind``). File paths under ``base`` (the checkout) are relative URIs
  against ``%SRCROOT%``; others are ``file://`` URIs; every byte outside the unreserved set is
  percent-encoded, so a name that is not UTF-8 keeps its exact bytes.
* :func:`github_commands` gives one ``::error``, ``::warning`` or ``::notice`` workflow command
  per finding,
  ``file``, ``line``, ``col`` and ``title`` as properties. The runner reads a command up to the
  end of its line, so the message is escaped as the Actions toolkit escapes data (``%``, CR and
  LF as ``%25``, ``%0D``, ``%0A``) and each property as a property (also ``:`` and ``,`` as
  ``%3A`` and ``%2C``): nothing a skill folder holds can end the command early or start another.
  (The runner takes such a line as the command it starts with and looks no further; the legacy
  ``##[`` syntax inside it is escaped all the same, as :func:`skills_core.display.display` escapes
  it everywhere, so the message reads ``##\\x5b``; a file name starting with ``::`` or holding
  ``##[`` shows escaped in ``file`` too.)

The live-server check (``skills-core check --server``) has no files to point at: its findings
are about URIs a server serves. :func:`server_sarif` places each on a SARIF *logical* location
(``logicalLocations``: the file's or the skill's URI, of kind ``resource``, or the server's label,
of kind ``module``, for what is about the server as a whole), with the same driver, rules and
invocation as :func:`to_sarif`; :func:`server_github_commands` gives workflow commands without a
``file`` property, the URI leading the message.

Every text a folder or an entry controls (file names, frontmatter values quoted in messages)
goes through :func:`skills_core.display.display` first: a log viewer or an alert shows the
escapes, never a bidirectional override, a terminal control sequence or a workflow command, and
the output is strict UTF-8.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Final

from ._version import __version__
from .check import SkillReport, ValidationReport
from .display import display
from .jsonvalue import JSONValue
from .rules import RULES, RULES_URL, Rule, explain, help_uri, markdown_entry, plain_text
from .validation import Finding, Severity, raw_bytes

__all__ = [
    "Rule",
    "RULES",
    "rule_for",
    "SARIF_SCHEMA",
    "to_sarif",
    "github_commands",
    "escape_data",
    "escape_property",
    "finding_path",
    "server_sarif",
    "server_github_commands",
]

#: The ``$schema`` a SARIF 2.1.0 log names (the OASIS schema, as published by SchemaStore).
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"


def rule_for(finding: Finding) -> Rule:
    """The rule behind ``finding``: from :data:`RULES`, or made from the finding itself."""
    rule = RULES.get(finding.code)
    if rule is not None:
        return rule
    return Rule(
        code=finding.code,
        family="catalog",
        severity=finding.severity,
        summary=finding.code.replace("-", " "),
        help="See the message.",
    )


def finding_path(skill: SkillReport | None, finding: Finding) -> str:
    """The file a finding is about: its own, or its skill's path (``""`` when it has neither)."""
    if finding.file is not None:
        return finding.file
    return skill.path if skill is not None else ""


def _relative(path: str, base: str | None) -> str | None:
    """``path`` relative to ``base`` when it is at or below it (posix paths), else None."""
    if not posixpath.isabs(path):
        return posixpath.normpath(path)
    if base is None:
        return None
    base = posixpath.normpath(base)
    path = posixpath.normpath(path)
    if path == base:
        return "."
    prefix = base.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


#: Bytes a URI path carries as they are (RFC 3986 unreserved characters, and "/").
_URI_SAFE: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")


def _uri_path(path: str) -> str:
    """``path`` percent-encoded byte by byte (the file name's own bytes, as the OS has them)."""
    return "".join(chr(byte) if byte in _URI_SAFE else f"%{byte:02X}" for byte in raw_bytes(path))


def _artifact(path: str, base: str | None) -> dict[str, JSONValue]:
    relative = _relative(path, base)
    if relative is not None:
        return {"uri": _uri_path(relative), "uriBaseId": "%SRCROOT%"}
    return {"uri": "file://" + _uri_path(posixpath.normpath(path))}


def _message(finding: Finding) -> str:
    text = f"{finding.field}: {finding.message}" if finding.field else finding.message
    return display(text)


def _level(severity: Severity) -> str:
    """The SARIF level of a severity: ``error``, ``warning`` or ``note``."""
    return str(severity)


def to_sarif(
    report: ValidationReport,
    *,
    base: str | None = None,
    exit_code: int | None = None,
    failures: Sequence[str] = (),
    rules_url: str = RULES_URL,
) -> dict[str, JSONValue]:
    """The report as a SARIF 2.1.0 log (see the module docstring).

    Args:
        report: What validation found (empty when the run failed before validating).
        base: The absolute path of the checkout (the working directory): paths at or below it
            become URIs relative to ``%SRCROOT%``, which the log maps to it.
        exit_code: The exit code of the run, recorded in its invocation.
        failures: Why the run could not check everything (a path that does not exist, an input
            with nothing to validate): each becomes an error ``toolExecutionNotification``, and
            the invocation is not ``executionSuccessful``.
        rules_url: The published ``docs/rules.md``: each rule's ``helpUri`` is its anchor there.

    Returns:
        The log as JSON values, ready for ``json.dumps``.
    """
    rules: list[Rule] = list(RULES.values())
    index: dict[str, int] = {rule.code: number for number, rule in enumerate(rules)}
    results: list[JSONValue] = []
    for skill, finding in report.all_findings():
        number = _rule_index(finding, rules, index)
        region: dict[str, JSONValue] = {"startLine": finding.line or 1}
        if finding.line is not None and finding.column is not None:
            region["startColumn"] = finding.column
        location: dict[str, JSONValue] = {
            "physicalLocation": {
                "artifactLocation": _artifact(finding_path(skill, finding), base),
                "region": region,
            }
        }
        result: dict[str, JSONValue] = {
            "ruleId": finding.code,
            "ruleIndex": number,
            "level": _level(finding.severity),
            "message": {"text": _message(finding)},
            "locations": [location],
        }
        if finding.field:
            result["properties"] = {"field": display(finding.field)}
        results.append(result)
    run = _run(rules, results, exit_code=exit_code, failures=failures, rules_url=rules_url)
    if base is not None and posixpath.isabs(base):
        run["originalUriBaseIds"] = {
            "%SRCROOT%": {"uri": "file://" + _uri_path(posixpath.normpath(base).rstrip("/") + "/")}
        }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _rule_index(finding: Finding, rules: list[Rule], index: dict[str, int]) -> int:
    """The index of ``finding``'s rule in ``rules`` (a code not in the registry is appended)."""
    number = index.get(finding.code)
    if number is None:
        number = index[finding.code] = len(rules)
        rules.append(rule_for(finding))
    return number


def _run(
    rules: Sequence[Rule],
    results: list[JSONValue],
    *,
    exit_code: int | None,
    failures: Sequence[str],
    rules_url: str,
) -> dict[str, JSONValue]:
    """A SARIF run: the driver with every rule, one invocation, the results."""
    invocation: dict[str, JSONValue] = {"executionSuccessful": not failures}
    if exit_code is not None:
        invocation["exitCode"] = exit_code
    if failures:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": display(message)}} for message in failures
        ]
    return {
        "tool": {
            "driver": {
                "name": "skills-core",
                "version": __version__,
                "informationUri": rules_url,
                "rules": [_descriptor(rule, rules_url) for rule in rules],
            }
        },
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }


def _logical(skill: SkillReport | None, finding: Finding, server: str) -> dict[str, JSONValue]:
    """The logical location of a live-server finding: its URI, or the server's label."""
    uri = finding.file or (skill.uri if skill is not None else None)
    if uri is None:
        return {"name": display(server), "fullyQualifiedName": display(server), "kind": "module"}
    name = uri.rstrip("/").rpartition("/")[2] or uri
    return {"name": display(name), "fullyQualifiedName": display(uri), "kind": "resource"}


def server_sarif(
    report: ValidationReport,
    *,
    server: str,
    exit_code: int | None = None,
    failures: Sequence[str] = (),
    rules_url: str = RULES_URL,
) -> dict[str, JSONValue]:
    """The findings of ``skills-core check --server`` as a SARIF 2.1.0 log (module docstring).

    Args:
        report: What the check found (empty when the run failed before checking).
        server: The server's label: the logical location of the server's own findings.
        exit_code: The exit code of the run, recorded in its invocation.
        failures: Why the run could not check everything; as for :func:`to_sarif`.
        rules_url: The published ``docs/rules.md``: each rule's ``helpUri`` is its anchor there.

    Returns:
        The log as JSON values, ready for ``json.dumps``.
    """
    rules: list[Rule] = list(RULES.values())
    index: dict[str, int] = {rule.code: number for number, rule in enumerate(rules)}
    results: list[JSONValue] = []
    for skill, finding in report.all_findings():
        properties: dict[str, JSONValue] = {"server": display(server)}
        if skill is not None and skill.uri is not None:
            properties["skill"] = display(skill.uri)
        if finding.field:
            properties["field"] = display(finding.field)
        results.append(
            {
                "ruleId": finding.code,
                "ruleIndex": _rule_index(finding, rules, index),
                "level": _level(finding.severity),
                "message": {"text": _message(finding)},
                "locations": [{"logicalLocations": [_logical(skill, finding, server)]}],
                "properties": properties,
            }
        )
    run = _run(rules, results, exit_code=exit_code, failures=failures, rules_url=rules_url)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def server_github_commands(report: ValidationReport, *, server: str) -> list[str]:
    """One workflow command per live-server finding: no ``file``, the URI leading the message."""
    lines: list[str] = []
    for skill, finding in report.all_findings():
        uri = finding.file or (skill.uri if skill is not None else None)
        where = display(f"{server} {uri}" if uri else server)
        title = escape_property(f"skills-core {finding.code}")
        message = escape_data(f"{where}: {_message(finding)}")
        lines.append(f"::{_COMMANDS[finding.severity]} title={title}::{message}")
    return lines


def _descriptor(rule: Rule, rules_url: str) -> dict[str, JSONValue]:
    docs = rules_url.rpartition("#")[0] or rules_url
    docs = docs.rpartition("/")[0] + "/"
    full = f"{rule.summary}. {rule.why}" if rule.why else f"{rule.summary}. {rule.help}"
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": plain_text(full), "markdown": full},
        "help": {
            "text": explain(rule, page=rules_url),
            "markdown": markdown_entry(rule, docs=docs),
        },
        "helpUri": help_uri(rule.code, rules_url),
        "defaultConfiguration": {"level": _level(rule.severity)},
        "properties": {"tags": ["skills", rule.family]},
    }


def escape_data(text: str) -> str:
    """Escape the message of a workflow command: ``%``, CR and LF (as the Actions toolkit does)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command property: as :func:`escape_data`, and ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


#: The workflow command of each severity.
_COMMANDS: Final = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def github_commands(report: ValidationReport, *, base: str | None = None) -> list[str]:
    """One ``::error`` / ``::warning`` workflow command per finding (see the module docstring).

    Args:
        report: What validation found.
        base: The absolute path of the workspace: paths below it are given relative to it, as
            annotations need.

    Returns:
        The command lines, without line breaks.
    """
    lines: list[str] = []
    for skill, finding in report.all_findings():
        path = finding_path(skill, finding)
        relative = _relative(path, base)
        properties = [f"file={escape_property(display(relative or path))}"]
        if finding.line is not None:
            properties.append(f"line={finding.line}")
            if finding.column is not None:
                properties.append(f"col={finding.column}")
        properties.append(f"title={escape_property(f'skills-core {finding.code}')}")
        command = _COMMANDS[finding.severity]
        lines.append(f"::{command} {','.join(properties)}::{escape_data(_message(finding))}")
    return lines
