"""Validation reports for CI systems: SARIF 2.1.0 for code scanning, and GitHub workflow commands.

Theory of operation
===================

Both forms are made from a :class:`~skills_core.check.ValidationReport` by pure functions (the
command line prints them; a CI script may too):

* :func:`to_sarif` gives a SARIF 2.1.0 log (OASIS) that GitHub code scanning accepts: one run
  whose driver lists every rule (:data:`RULES`: id, name, short and full descriptions, help text
  and ``helpUri``, default level, a tag for its family), and one result per finding with its
  ``ruleId``, ``ruleIndex``, ``level`` and a location: the file as a URI reference and a region.
  Code scanning needs a ``startLine``: a finding without a line (a missing field, a file refused
  by the walk, a skill over the limits) is placed on line 1 of its file. Columns count Unicode
  code points (``columnKind``). File paths under ``base`` (the checkout) are relative URIs
  against ``%SRCROOT%``; others are ``file://`` URIs; every byte outside the unreserved set is
  percent-encoded, so a name that is not UTF-8 keeps its exact bytes.
* :func:`github_commands` gives one ``::error`` or ``::warning`` workflow command per finding,
  ``file``, ``line``, ``col`` and ``title`` as properties. The runner reads a command up to the
  end of its line, so the message is escaped as the Actions toolkit escapes data (``%``, CR and
  LF as ``%25``, ``%0D``, ``%0A``) and each property as a property (also ``:`` and ``,`` as
  ``%3A`` and ``%2C``): nothing a skill folder holds can end the command early or start another.
  (The runner takes such a line as the command it starts with and looks no further; the legacy
  ``##[`` syntax inside it is escaped all the same, as :func:`skills_core.display.display` escapes
  it everywhere, so the message reads ``##\\x5b``; a file name starting with ``::`` or holding
  ``##[`` shows escaped in ``file`` too.)

Every text a folder or an entry controls (file names, frontmatter values quoted in messages)
goes through :func:`skills_core.display.display` first: a log viewer or an alert shows the
escapes, never a bidirectional override, a terminal control sequence or a workflow command, and
the output is strict UTF-8.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, final

from ._version import __version__
from .check import SkillReport, ValidationReport
from .display import display
from .jsonvalue import JSONValue
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
]

#: The ``$schema`` a SARIF 2.1.0 log names (the OASIS schema, as published by SchemaStore).
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"

_AGENT_SKILLS: Final = "https://agentskills.io/specification"
_EXTENSION: Final = "https://github.com/modelcontextprotocol/ext-skills"
_YAML: Final = "https://yaml.org/spec/1.2.2/"
_FAMILY_URIS: Final = {
    "yaml": _YAML,
    "agent-skills": _AGENT_SKILLS,
    "portability": _YAML,
    "extension": _EXTENSION,
    "source": _EXTENSION,
}


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """What a finding ``code`` means: the rule behind it.

    Attributes:
        code: The finding code (the SARIF rule id).
        family: ``"yaml"`` (the frontmatter does not parse), ``"agent-skills"`` (the Agent Skills
            rules), ``"portability"`` (values other YAML parsers read differently),
            ``"extension"`` (the entry, its limits, its paths) or ``"source"`` (what the walk
            refuses).
        severity: The severity its findings have.
        summary: One line: what is wrong.
        help: What to do about it.
    """

    code: str
    family: str
    severity: Severity
    summary: str
    help: str

    @property
    def name(self) -> str:
        """The rule's name in PascalCase, e.g. ``NameMismatch`` (SARIF ``name``)."""
        return "".join(part.capitalize() for part in self.code.split("-"))

    @property
    def help_uri(self) -> str:
        """Where the rule is specified."""
        return _FAMILY_URIS.get(self.family, _EXTENSION)


_E = Severity.ERROR
_W = Severity.WARNING
_RULE_ROWS: Final[tuple[tuple[str, str, Severity, str, str], ...]] = (
    # The frontmatter does not parse (FMT-03, SIL-10; DESIGN.md decision 3).
    ("frontmatter-delimiter", "yaml", _E, "SKILL.md does not open and close its YAML frontmatter",
     "Start SKILL.md with a line '---', then the YAML, then a line '---'."),
    ("frontmatter-encoding", "yaml", _E, "The frontmatter is not valid UTF-8",
     "Save SKILL.md as UTF-8."),
    ("frontmatter-limit", "yaml", _E, "The frontmatter is over a size, depth or key-length limit",
     "Keep the frontmatter under 1 MiB, 64 levels of nesting and keys of 1,024 characters."),
    ("frontmatter-syntax", "yaml", _E, "The frontmatter is not valid YAML",
     "Fix the YAML at the line and column given; quote values holding ': ' or ' #'."),
    ("frontmatter-unsupported", "yaml", _E, "The frontmatter uses YAML that parsers disagree on",
     "Anchors, aliases, tags, merge keys, complex keys, NaN and integers past 2**53 are refused; "
     "write plain values, quoted where needed."),
    ("frontmatter-duplicate-key", "yaml", _E, "A key appears twice in one mapping",
     "Keep one of the two; parsers disagree on which one wins."),
    ("frontmatter-schema", "yaml", _E, "The frontmatter is not a mapping",
     "Write the frontmatter as 'key: value' lines."),
    # The Agent Skills rules (FMT-01, FMT-03, URI-06, URI-07, ENTRY-03, FMT-12).
    ("not-a-mapping", "agent-skills", _E, "The frontmatter is not a mapping",
     "The frontmatter must be an object of fields."),
    ("name-missing", "agent-skills", _E, "The required field 'name' is missing",
     "Add 'name:' with the skill folder's name."),
    ("name-not-string", "agent-skills", _E, "'name' is not a string",
     "Write the name as text (quote it)."),
    ("name-invalid", "agent-skills", _E, "'name' breaks the naming rules",
     "Use 1-64 characters of a-z, 0-9 and single inner hyphens."),
    ("name-mismatch", "agent-skills", _E, "'name' differs from the skill's folder name",
     "Rename the folder or change 'name': they must be equal (the URI carries the name)."),
    ("description-missing", "agent-skills", _E, "The required field 'description' is missing",
     "Add 'description:' saying what the skill does and when to use it."),
    ("description-not-string", "agent-skills", _E, "'description' is not a string",
     "Write the description as text (quote it)."),
    ("description-empty", "agent-skills", _E, "'description' is empty",
     "Say what the skill does and when to use it."),
    ("description-too-long", "agent-skills", _E, "'description' is over 1,024 characters",
     "Shorten it; move details to the body of SKILL.md."),
    ("compatibility-not-string", "agent-skills", _E, "'compatibility' is not a string",
     "Write it as text of at most 500 characters."),
    ("compatibility-empty", "agent-skills", _E, "'compatibility' is empty",
     "Remove the field or say what the skill needs."),
    ("compatibility-too-long", "agent-skills", _E, "'compatibility' is over 500 characters",
     "Shorten it."),
    ("metadata-not-mapping", "agent-skills", _E, "'metadata' is not a mapping",
     "Write 'metadata' as string keys with string values."),
    ("metadata-key-not-string", "agent-skills", _E, "A 'metadata' key is not a string",
     "Use text keys in 'metadata'."),
    ("metadata-value-not-string", "agent-skills", _E, "A 'metadata' value is not a string",
     "Quote the value, or move structured data out of 'metadata'."),
    ("metadata-reserved-key", "agent-skills", _W, "A 'metadata' key uses the reserved MCP prefix",
     "Keys under 'io.modelcontextprotocol/' are reserved for MCP extensions; rename it."),
    ("license-not-string", "agent-skills", _E, "'license' is not a string",
     "Write the license as text."),
    ("allowed-tools-not-string", "agent-skills", _E, "'allowed-tools' is not a string",
     "Write the tools as one space-separated string, e.g. 'Read Grep Bash(git:*)'."),
    ("allowed-tools-commas", "agent-skills", _W, "'allowed-tools' looks comma-separated",
     "Separate tools with spaces."),
    # Values other YAML parsers read differently (SIL-09).
    ("portability-date", "portability", _W, "An unquoted date",
     "YAML 1.1 parsers make it a date, YAML 1.2 a string; quote it."),
    ("portability-bool", "portability", _W, "A YAML 1.1 boolean word",
     "'yes', 'no', 'on', 'off' and 'y'/'n' are booleans in YAML 1.1; quote them or write "
     "true/false."),
    ("portability-special", "portability", _W, "A value with a special YAML 1.1 meaning",
     "Quote '=' and '<<'."),
    ("portability-number", "portability", _W, "A number other parsers read differently",
     "Octal, binary, sexagesimal and underscored numbers differ between YAML 1.1 and 1.2; "
     "quote the value."),
    ("portability-number-text", "portability", _W, "A number whose text is lost",
     "'1.0' is the number 1; quote a version or any text that must stay as written."),
    ("portability-key", "portability", _W, "A key other parsers type",
     "PyYAML reads keys like 'yes' or '1' as booleans or numbers; quote the key."),
    # The catalog: what serve publishes (ORG-10, URI-12, SIL-05, WG-06, WG-09).
    ("duplicate-name", "extension", _W, "Another skill has the same name",
     "Names should be unique in a listing; hosts tell such skills apart by path."),
    ("bad-file-name", "extension", _W, "A file name cannot be a URI segment",
     "Rename the file (no control characters or backslashes); it is not served."),
    ("bad-path", "extension", _E, "The skill's folder path cannot be a URI",
     "Rename the folder (no control characters or backslashes)."),
    ("refused", "source", _E, "SKILL.md is a link, a special file or unreadable",
     "Make SKILL.md a regular, readable file; links are never followed."),
    ("path-collision", "extension", _E, "Two paths are one file on some filesystems",
     "Rename one: paths equal under case folding or Unicode normalisation collide."),
    ("uri-collision", "extension", _E, "Another root or skill claims the same URI",
     "Serve each skill from one place only."),
    ("top-level", "extension", _E, "SKILL.md has no folder to name the skill",
     "Put the skill in a folder named like the skill."),
    ("frontmatter", "extension", _E, "The server refused the frontmatter",
     "Fix the frontmatter; the message says why."),
    ("invalid", "extension", _E, "The server refused the skill",
     "Fix what the message names."),
    ("unavailable", "extension", _E, "A dynamic skill produced no SKILL.md",
     "Make the skill produce its SKILL.md."),
    ("symlink", "source", _W, "A symbolic link, never followed or served",
     "Replace the link with the file itself, or remove it."),
    ("special-file", "source", _W, "A FIFO, socket or device, never opened",
     "Remove it from the skill folder."),
    ("unreadable", "source", _W, "An entry that could not be read",
     "Fix its permissions."),
    # The skill entry (ENTRY-01..ENTRY-12, ENTRY-17, SIL-04, SIL-18).
    ("bad-json", "extension", _E, "Not valid JSON", "Give one JSON document."),
    ("not-an-object", "extension", _E, "The entry is not a JSON object",
     "Each entry is {uri, frontmatter, resources}."),
    ("missing-uri", "extension", _E, "A 'uri' is missing", "Add the URI."),
    ("bad-uri", "extension", _E, "The entry's 'uri' is not a SKILL.md URI",
     "Use <scheme>://<skill-path>/SKILL.md, the last segment being the skill name."),
    ("missing-frontmatter", "extension", _E, "'frontmatter' is missing",
     "Add the SKILL.md frontmatter as a JSON object."),
    ("bad-frontmatter", "extension", _E, "'frontmatter' is not an object",
     "Give the frontmatter as a JSON object."),
    ("missing-name", "extension", _E, "frontmatter 'name' is missing", "Add it."),
    ("bad-name", "extension", _E, "frontmatter 'name' is invalid", "Fix it."),
    ("missing-description", "extension", _E, "frontmatter 'description' is missing", "Add it."),
    ("bad-description", "extension", _E, "frontmatter 'description' is not a string", "Fix it."),
    ("not-json", "extension", _E, "A value is not plain JSON", "Use JSON values only."),
    ("missing-resources", "extension", _E, "'resources' is missing",
     "List every file, or write \"dynamic\"."),
    ("bad-resources", "extension", _E, "'resources' is neither an array nor \"dynamic\"",
     "List every file, or write \"dynamic\"."),
    ("bad-resource", "extension", _E, "A resource is not an object",
     "Each resource is {uri, digest, size}."),
    ("missing-digest", "extension", _E, "A resource has no 'digest'", "Add sha256:<64 hex>."),
    ("missing-size", "extension", _E, "A resource has no 'size'", "Add the size in bytes."),
    ("bad-resource-uri", "extension", _E, "A resource 'uri' is malformed",
     "Use a URI inside the skill's folder."),
    ("bad-digest", "extension", _E, "A 'digest' is malformed",
     "Write sha256: followed by 64 lowercase hex characters."),
    ("bad-size", "extension", _E, "A 'size' is not a whole number of bytes",
     "Write the byte count, 0 to 2**53-1."),
    ("size-digest-conflict", "extension", _E, "A size and a digest contradict each other",
     "The empty digest goes with size 0 only, and one digest with one size."),
    ("duplicate-uri", "extension", _E, "A file is listed twice", "List each file once."),
    ("outside-skill", "extension", _E, "A resource is outside the skill",
     "List only files below the skill's folder."),
    ("missing-skill-md", "extension", _E, "'resources' does not list SKILL.md",
     "List SKILL.md with its digest and size."),
    ("too-many-resources", "extension", _E, "The skill has more than 512 files",
     "Hosts need not load it; split the skill or remove files."),
    ("too-large", "extension", _E, "The skill's files total more than 16 MiB",
     "Hosts need not load it; remove or shrink files."),
)  # fmt: skip

#: Every rule, by code.
RULES: Final[Mapping[str, Rule]] = {
    code: Rule(code=code, family=family, severity=severity, summary=summary, help=help_text)
    for code, family, severity, summary, help_text in _RULE_ROWS
}


def rule_for(finding: Finding) -> Rule:
    """The rule behind ``finding``: from :data:`RULES`, or made from the finding itself."""
    rule = RULES.get(finding.code)
    if rule is not None:
        return rule
    return Rule(
        code=finding.code,
        family="extension",
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


def to_sarif(
    report: ValidationReport, *, base: str | None = None, exit_code: int | None = None
) -> dict[str, JSONValue]:
    """The report as a SARIF 2.1.0 log (see the module docstring).

    Args:
        report: What validation found.
        base: The absolute path of the checkout (the working directory): paths at or below it
            become URIs relative to ``%SRCROOT%``, which the log maps to it.
        exit_code: The exit code of the run, recorded in its invocation.

    Returns:
        The log as JSON values, ready for ``json.dumps``.
    """
    rules: list[Rule] = list(RULES.values())
    index: dict[str, int] = {rule.code: number for number, rule in enumerate(rules)}
    results: list[JSONValue] = []
    for skill, finding in report.all_findings():
        number = index.get(finding.code)
        if number is None:
            number = index[finding.code] = len(rules)
            rules.append(rule_for(finding))
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
            "level": "error" if finding.severity is Severity.ERROR else "warning",
            "message": {"text": _message(finding)},
            "locations": [location],
        }
        if finding.field:
            result["properties"] = {"field": display(finding.field)}
        results.append(result)
    invocation: dict[str, JSONValue] = {"executionSuccessful": True}
    if exit_code is not None:
        invocation["exitCode"] = exit_code
    run: dict[str, JSONValue] = {
        "tool": {
            "driver": {
                "name": "skills-core",
                "version": __version__,
                "rules": [_descriptor(rule) for rule in rules],
            }
        },
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if base is not None and posixpath.isabs(base):
        run["originalUriBaseIds"] = {
            "%SRCROOT%": {"uri": "file://" + _uri_path(posixpath.normpath(base).rstrip("/") + "/")}
        }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _descriptor(rule: Rule) -> dict[str, JSONValue]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": f"{rule.summary}. {rule.help}"},
        "help": {"text": rule.help, "markdown": f"{rule.help} See <{rule.help_uri}>."},
        "helpUri": rule.help_uri,
        "defaultConfiguration": {
            "level": "error" if rule.severity is Severity.ERROR else "warning"
        },
        "properties": {"tags": ["skills", rule.family]},
    }


def escape_data(text: str) -> str:
    """Escape the message of a workflow command: ``%``, CR and LF (as the Actions toolkit does)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command property: as :func:`escape_data`, and ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


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
        command = "error" if finding.severity is Severity.ERROR else "warning"
        lines.append(f"::{command} {','.join(properties)}::{escape_data(_message(finding))}")
    return lines
