"""Every finding code, in one registry: what each rule checks, why, examples, and how to silence it.

Theory of operation
===================

:data:`RULES` maps each code that :mod:`skills_core.check` (and so ``skills-core validate``) can
emit to a :class:`Rule`: its family, its severity, a one-line summary, what to do, why the rule
exists (with the Agent Skills section or the requirement it comes from), a failing and a fixed
example, and how to silence it. Everything that explains a code is made from this one table:

* ``docs/rules.md`` has one entry per rule, written from it by ``scripts/rules-doc`` (a test
  checks that the page is what the script writes, so a code without an entry fails);
* ``skills-core validate --explain CODE`` prints :func:`explain` of it;
* the SARIF rules of :func:`skills_core.ci.to_sarif` take their descriptions, help text and
  ``helpUri`` (:func:`help_uri`: the page's anchor of the code) from it.

Families are the sections of the page, in :data:`FAMILIES` order; ``server`` holds the codes of
the live-server check (:mod:`skills_core.server_check`, ``skills-core check --server``).

The :class:`Rule` value lives in :mod:`skills_core._rule` and the rows of the ``server`` family in
:mod:`skills_core._rules_server` (both re-exported here through :data:`RULES`). The modules are
pure data and string functions: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from ._rule import RULES_URL, Rule, help_uri
from ._rules_server import SERVER_ROWS
from .validation import Severity

__all__ = [
    "Rule",
    "RULES",
    "FAMILIES",
    "RULES_URL",
    "help_uri",
    "explain",
    "markdown_entry",
    "plain_text",
    "silence_text",
    "requirement_ids",
]

#: The families, in the order of the page's sections: ``(family, heading, introduction)``.
FAMILIES: Final[tuple[tuple[str, str, str], ...]] = (
    (
        "yaml",
        "The frontmatter parses",
        "`SKILL.md` opens with YAML frontmatter that every YAML parser reads the same way "
        "(decision 3 of [design.md](design.md)). A skill whose frontmatter does not parse is "
        "not published; the other rules are checked once it parses.",
    ),
    (
        "agent-skills",
        "Agent Skills rules",
        "The fields of the [Agent Skills specification](https://agentskills.io/specification), "
        "which the MCP Skills extension requires of every published skill (FMT-01). Fields the "
        "specification does not define pass through without a finding (ENTRY-03).",
    ),
    (
        "portability",
        "YAML portability",
        "Plain values that YAML 1.1 parsers (PyYAML, js-yaml's defaults) read differently from "
        "the YAML 1.2 core schema that skills-core uses (SIL-09). The skill is valid; another "
        "tool may see another value.",
    ),
    (
        "content",
        "The body of SKILL.md",
        "What the Markdown after the frontmatter says: the files it links to and its length.",
    ),
    (
        "source",
        "Files and folders",
        "What the walk of a skill folder refuses or passes over, as `serve` walks it.",
    ),
    (
        "catalog",
        "What serve publishes",
        "Rules of the catalog: a skill's place among the others, its paths and its URI.",
    ),
    (
        "entry",
        "Skill entries",
        "The rules of the extension's skill entry (`uri`, `frontmatter`, `resources`), which a "
        "host applies to what a server lists and `validate --entries` applies to captured JSON.",
    ),
    (
        "server",
        "Live servers",
        "What `skills-core check --server` finds when it connects to a running server as a "
        "host would: lists every page, gets each skill, reads every listed file and compares "
        "what it was told with what it read. The entries it lists are also checked by the "
        "rules of the sections above (the Agent Skills rules and the entry rules); the codes "
        "here are what only a live server can break. Findings point at the skill's URI and, "
        "where there is one, the file's.",
    ),
)


def silence_text(rule: Rule) -> str:
    """How to silence ``rule``: its own words, or what ``--ignore`` does for its severity."""
    if rule.silence:
        return rule.silence
    if rule.severity is Severity.ERROR:
        return (
            f"`--ignore {rule.code}` hides the message, but the skill stays invalid (exit 1): "
            "an error is a reason serve or a host refuses the skill, which no option changes."
        )
    if rule.severity is Severity.WARNING:
        return (
            f"`--ignore {rule.code}` drops it (a warning fails only under `--strict`); from the "
            "library, `report.without({...})`."
        )
    return f"Notes never fail a run; `--ignore {rule.code}` drops them from the output."


_REQUIREMENT = re.compile(
    r"\b(?:CAP|FMT|URI|ENTRY|LIST|GET|DIR|ERR|ORG|WG|SIL|SEC|VER|HTTP)-\d{2}\b"
)


def requirement_ids(text: str) -> list[str]:
    """The requirement IDs ``text`` names, in order, once each."""
    return list(dict.fromkeys(_REQUIREMENT.findall(text)))


_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def plain_text(markdown: str) -> str:
    """``markdown`` of this table as plain text: ``[text](url)`` becomes ``text (url)``, and
    backquotes go."""
    return _LINK.sub(r"\1 (\2)", markdown).replace("`", "")


def _linked(text: str, docs: str) -> str:
    """``text`` with each requirement ID a link to its entry under ``docs`` (a folder URL or
    ``""`` for a page in docs/ itself)."""
    return _REQUIREMENT.sub(lambda m: f"[{m[0]}]({docs}requirements.md#{m[0].lower()})", text)


def markdown_entry(rule: Rule, *, docs: str = "") -> str:
    """The body of ``rule``'s entry in ``docs/rules.md`` (Markdown, without its heading).

    Args:
        rule: The rule.
        docs: What links to other pages of docs/ start with: ``""`` on the page itself, the
            page's folder URL elsewhere (SARIF help).
    """
    parts = [
        f"**{rule.severity}** · {rule.summary}.",
        f"**What to do:** {rule.help}",
    ]
    if rule.why:
        parts.append(f"**Why:** {_linked(rule.why, docs)}")
    if rule.bad:
        parts.append(f"Fails:\n\n```text\n{rule.bad}\n```")
    if rule.good:
        parts.append(f"Passes:\n\n```text\n{rule.good}\n```")
    parts.append(f"**Silence it:** {silence_text(rule)}")
    return "\n\n".join(parts) + "\n"


def explain(rule: Rule, *, page: str = RULES_URL) -> str:
    """The text ``skills-core validate --explain CODE`` prints: ``docs/rules.md``'s entry."""
    lines = [f"{rule.code} ({rule.severity}): {rule.summary}", ""]
    lines += ["What to do: " + plain_text(rule.help)]
    if rule.why:
        lines += ["", "Why: " + plain_text(rule.why)]
        ids = requirement_ids(rule.why)
        if ids:
            lines += ["See " + ", ".join(f"docs/requirements.md#{i.lower()}" for i in ids) + "."]
    if rule.bad:
        lines += ["", "Fails:", *("    " + line for line in rule.bad.splitlines())]
    if rule.good:
        lines += ["", "Passes:", *("    " + line for line in rule.good.splitlines())]
    lines += ["", "Silence it: " + plain_text(silence_text(rule))]
    lines += ["", f"More: {help_uri(rule.code, page)}"]
    return "\n".join(lines) + "\n"


_E = Severity.ERROR
_W = Severity.WARNING
_N = Severity.NOTE

# Examples: a SKILL.md excerpt starts with "---"; a file listing with the folder; JSON with "{".
_OK = "---\nname: pdf-tools\ndescription: Fill PDF forms. Use when a form is a PDF.\n---"


def _fm(*lines: str) -> str:
    """A SKILL.md frontmatter example of ``pdf-tools``."""
    return "\n".join(("---", *lines, "---"))


_NAME_DESC = ("name: pdf-tools", "description: Fill PDF forms.")

_ROWS: Final[tuple[Rule, ...]] = (
    # --- yaml -------------------------------------------------------------------------------
    Rule(
        code="frontmatter-delimiter", family="yaml", severity=_E,
        summary="SKILL.md does not open and close its YAML frontmatter",
        help="Start SKILL.md with a line '---', then the YAML, then a line '---'.",
        why="The extension requires SKILL.md to open with YAML frontmatter (FMT-03); the block "
        "starts at a first line of exactly `---` and ends at the next such line, so a BOM or a "
        "space after the marker is not a delimiter (SIL-10).",
        bad="# PDF tools\nname: pdf-tools", good=_OK,
    ),
    Rule(
        code="frontmatter-encoding", family="yaml", severity=_E,
        summary="The frontmatter is not valid UTF-8",
        help="Save SKILL.md as UTF-8 (without a byte order mark).",
        why="Entries carry the frontmatter as JSON text, which is Unicode (ENTRY-03); bytes "
        "that are not UTF-8 have no agreed meaning.",
        bad="---\nname: pdf-tools\ndescription: caf\\xe9 (Latin-1 bytes)\n---",
        good="---\nname: pdf-tools\ndescription: café (UTF-8)\n---",
    ),
    Rule(
        code="frontmatter-limit", family="yaml", severity=_E,
        summary="The frontmatter is over a size, depth or key-length limit",
        help="Keep the frontmatter under 1 MiB, 64 levels of nesting and keys of 1,024 "
        "characters.",
        why="Bounds on what a parser reads keep a hostile SKILL.md from exhausting a server or a "
        "host (decision 3 of design.md).",
        bad=_fm(*_NAME_DESC, "metadata: {a: {b: {c: ... 65 levels deep"),
        good=_fm(*_NAME_DESC, "metadata:", "  level: '3'"),
    ),
    Rule(
        code="frontmatter-syntax", family="yaml", severity=_E,
        summary="The frontmatter is not valid YAML",
        help="Fix the YAML at the line and column given; quote values holding ': ' or ' #', and "
        "close every quoted string on a line indented under its key.",
        why="The frontmatter must be YAML (FMT-03); values are read as YAML 1.2 (SIL-09).",
        bad=_fm("name: pdf-tools", "description: Use this: to fill forms"),
        good=_fm("name: pdf-tools", "description: 'Use this: to fill forms'"),
    ),
    Rule(
        code="frontmatter-unsupported", family="yaml", severity=_E,
        summary="The frontmatter uses YAML that parsers disagree on",
        help="Anchors, aliases, tags, merge keys, complex keys, NaN and integers past 2**53 are "
        "refused; write plain values, quoted where needed.",
        why="Hosts compare the frontmatter they parse with the entry's JSON (SIL-09); constructs "
        "that YAML parsers resolve differently would make one skill mean two things.",
        bad=_fm("name: &n pdf-tools", "description: *n"),
        good=_fm(*_NAME_DESC),
    ),
    Rule(
        code="frontmatter-duplicate-key", family="yaml", severity=_E,
        summary="A key appears twice in one mapping",
        help="Keep one of the two; parsers disagree on which one wins.",
        why="PyYAML keeps the last value, other parsers the first or refuse the file (SIL-09).",
        bad=_fm(*_NAME_DESC, "description: Merge PDFs."),
        good=_fm("name: pdf-tools", "description: Fill and merge PDF forms."),
    ),
    Rule(
        code="frontmatter-schema", family="yaml", severity=_E,
        summary="The frontmatter is not a mapping",
        help="Write the frontmatter as 'key: value' lines.",
        why="The frontmatter is an object of fields with at least `name` and `description` "
        "(FMT-03, ENTRY-03); an empty block, a list or a lone scalar is none.",
        bad="---\n- pdf-tools\n---", good=_OK,
    ),
    # --- agent-skills -----------------------------------------------------------------------
    Rule(
        code="name-missing", family="agent-skills", severity=_E,
        summary="The required field 'name' is missing",
        help="Add 'name:' with the skill folder's name.",
        why="`name` is required by the [Agent Skills specification]"
        "(https://agentskills.io/specification#name-field) and by the extension's entries "
        "(FMT-03, ENTRY-03).",
        bad=_fm("description: Fill PDF forms."), good=_fm(*_NAME_DESC),
    ),
    Rule(
        code="name-not-string", family="agent-skills", severity=_E,
        summary="'name' is not a string",
        help="Write the name as text (quote it if YAML would read a number or a boolean).",
        why="Entries carry `name` as a string (ENTRY-03); a YAML number or boolean is not one.",
        bad=_fm("name: 2024", "description: Fill PDF forms."),
        good=_fm("name: pdf-2024", "description: Fill PDF forms."),
    ),
    Rule(
        code="name-invalid", family="agent-skills", severity=_E,
        summary="'name' breaks the naming rules",
        help="Use 1-64 characters of a-z, 0-9 and single inner hyphens.",
        why="The [name rules](https://agentskills.io/specification#name-field) of Agent Skills; "
        "the name is also the last segment of the skill's URI (URI-07), so it must be a plain "
        "URI segment.",
        bad=_fm("name: PDF_Tools", "description: Fill PDF forms."),
        good=_fm(*_NAME_DESC),
    ),
    Rule(
        code="name-mismatch", family="agent-skills", severity=_E,
        summary="'name' differs from the skill's folder name",
        help="Rename the folder or change 'name': they must be equal (the URI carries the name).",
        why="Agent Skills requires the name to [match the parent directory]"
        "(https://agentskills.io/specification#name-field); the extension reads the name from "
        "the URI's last segment (URI-06, ENTRY-05).",
        bad="pdf/SKILL.md:\n" + _fm(*_NAME_DESC),
        good="pdf-tools/SKILL.md:\n" + _fm(*_NAME_DESC),
    ),
    Rule(
        code="description-missing", family="agent-skills", severity=_E,
        summary="The required field 'description' is missing",
        help="Add 'description:' saying what the skill does and when to use it.",
        why="`description` is required by the [Agent Skills specification]"
        "(https://agentskills.io/specification#description-field) and by the extension's "
        "entries (FMT-03, ENTRY-03): it is what a model reads to choose the skill.",
        bad=_fm("name: pdf-tools"), good=_fm(*_NAME_DESC),
    ),
    Rule(
        code="description-not-string", family="agent-skills", severity=_E,
        summary="'description' is not a string",
        help="Write the description as text (quote it).",
        why="Entries carry `description` as a string (ENTRY-03).",
        bad=_fm("name: pdf-tools", "description:", "  - Fill PDF forms."),
        good=_fm(*_NAME_DESC),
    ),
    Rule(
        code="description-empty", family="agent-skills", severity=_E,
        summary="'description' is empty",
        help="Say what the skill does and when to use it.",
        why="The [specification](https://agentskills.io/specification#description-field) "
        "requires 1-1,024 characters, not only white space.",
        bad=_fm("name: pdf-tools", "description: ''"), good=_fm(*_NAME_DESC),
    ),
    Rule(
        code="description-too-long", family="agent-skills", severity=_E,
        summary="'description' is over 1,024 characters",
        help="Shorten it; move details to the body of SKILL.md.",
        why="The [specification](https://agentskills.io/specification#description-field) caps "
        "it at 1,024 characters; hosts load every description at start-up.",
        bad=_fm("name: pdf-tools", "description: (1,200 characters)"), good=_fm(*_NAME_DESC),
    ),
    Rule(
        code="compatibility-not-string", family="agent-skills", severity=_E,
        summary="'compatibility' is not a string",
        help="Write it as text of at most 500 characters.",
        why="The [compatibility field](https://agentskills.io/specification#compatibility-field) "
        "is a string.",
        bad=_fm(*_NAME_DESC, "compatibility:", "  - python"),
        good=_fm(*_NAME_DESC, "compatibility: Requires Python 3.11 and poppler"),
    ),
    Rule(
        code="compatibility-empty", family="agent-skills", severity=_E,
        summary="'compatibility' is empty",
        help="Remove the field or say what the skill needs.",
        why="When present, the [compatibility field]"
        "(https://agentskills.io/specification#compatibility-field) has 1-500 characters.",
        bad=_fm(*_NAME_DESC, "compatibility: ''"), good=_fm(*_NAME_DESC),
    ),
    Rule(
        code="compatibility-too-long", family="agent-skills", severity=_E,
        summary="'compatibility' is over 500 characters",
        help="Shorten it.",
        why="The [compatibility field](https://agentskills.io/specification#compatibility-field) "
        "has at most 500 characters.",
        bad=_fm(*_NAME_DESC, "compatibility: (600 characters)"),
        good=_fm(*_NAME_DESC, "compatibility: Requires Python 3.11"),
    ),
    Rule(
        code="metadata-not-mapping", family="agent-skills", severity=_E,
        summary="'metadata' is not a mapping",
        help="Write 'metadata' as string keys with string values.",
        why="The [metadata field](https://agentskills.io/specification#metadata-field) is a map "
        "from string keys to string values.",
        bad=_fm(*_NAME_DESC, "metadata: v1"),
        good=_fm(*_NAME_DESC, "metadata:", "  version: 'v1'"),
    ),
    Rule(
        code="metadata-key-not-string", family="agent-skills", severity=_E,
        summary="A 'metadata' key is not a string",
        help="Use text keys in 'metadata' (quote a key YAML would read as a number).",
        why="The [metadata field](https://agentskills.io/specification#metadata-field) has "
        "string keys.",
        bad=_fm(*_NAME_DESC, "metadata:", "  {[a]: x}"),
        good=_fm(*_NAME_DESC, "metadata:", "  a: x"),
    ),
    Rule(
        code="metadata-value-not-string", family="agent-skills", severity=_E,
        summary="A 'metadata' value is not a string",
        help="Quote the value, or move structured data out of 'metadata'.",
        why="The [metadata field](https://agentskills.io/specification#metadata-field) has "
        "string values.",
        bad=_fm(*_NAME_DESC, "metadata:", "  version: 1.0"),
        good=_fm(*_NAME_DESC, "metadata:", "  version: '1.0'"),
    ),
    Rule(
        code="metadata-reserved-key", family="agent-skills", severity=_W,
        summary="A 'metadata' key uses the reserved MCP prefix",
        help="Keys under 'io.modelcontextprotocol/' are reserved for MCP extensions; rename it.",
        why="The extension reserves that prefix for MCP extensions and defines no key yet "
        "(FMT-12).",
        bad=_fm(*_NAME_DESC, "metadata:", "  io.modelcontextprotocol/x: 'y'"),
        good=_fm(*_NAME_DESC, "metadata:", "  example.com/x: 'y'"),
    ),
    Rule(
        code="license-not-string", family="agent-skills", severity=_E,
        summary="'license' is not a string",
        help="Write the license as text: a name or the name of a bundled file.",
        why="The [license field](https://agentskills.io/specification#license-field) is a "
        "string.",
        bad=_fm(*_NAME_DESC, "license:", "  name: MIT"),
        good=_fm(*_NAME_DESC, "license: MIT"),
    ),
    Rule(
        code="allowed-tools-not-string", family="agent-skills", severity=_E,
        summary="'allowed-tools' is not a string",
        help="Write the tools as one space-separated string, e.g. 'Read Grep Bash(git:*)'.",
        why="The [allowed-tools field](https://agentskills.io/specification#allowed-tools-field) "
        "is a space-separated string; a YAML list is another type.",
        bad=_fm(*_NAME_DESC, "allowed-tools: [Read, Grep]"),
        good=_fm(*_NAME_DESC, "allowed-tools: Read Grep"),
    ),
    Rule(
        code="allowed-tools-commas", family="agent-skills", severity=_W,
        summary="'allowed-tools' looks comma-separated",
        help="Separate tools with spaces.",
        why="The [allowed-tools field](https://agentskills.io/specification#allowed-tools-field) "
        "separates tools with spaces; a host splitting on spaces would read `Read,` as a tool.",
        bad=_fm(*_NAME_DESC, "allowed-tools: Read, Grep"),
        good=_fm(*_NAME_DESC, "allowed-tools: Read Grep"),
    ),
    # --- portability ------------------------------------------------------------------------
    Rule(
        code="portability-date", family="portability", severity=_W,
        summary="An unquoted date",
        help="YAML 1.1 parsers make it a date, YAML 1.2 a string; quote it.",
        why="PyYAML builds a date object and js-yaml a Date, so a host written with them sees "
        "another value than the entry's string (SIL-09).",
        bad=_fm(*_NAME_DESC, "created: 2025-10-20"),
        good=_fm(*_NAME_DESC, "created: '2025-10-20'"),
    ),
    Rule(
        code="portability-bool", family="portability", severity=_W,
        summary="A YAML 1.1 boolean word",
        help="'yes', 'no', 'on', 'off' and 'y'/'n' are booleans in YAML 1.1; quote them or "
        "write true/false.",
        why="YAML 1.2 reads them as strings, YAML 1.1 as booleans (SIL-09).",
        bad=_fm(*_NAME_DESC, "beta: yes"), good=_fm(*_NAME_DESC, "beta: true"),
    ),
    Rule(
        code="portability-special", family="portability", severity=_W,
        summary="A value with a special YAML 1.1 meaning",
        help="Quote '=' and '<<'.",
        why="PyYAML refuses to load `=` as a value and reads `<<` as a merge key (SIL-09).",
        bad=_fm(*_NAME_DESC, "op: ="), good=_fm(*_NAME_DESC, "op: '='"),
    ),
    Rule(
        code="portability-number", family="portability", severity=_W,
        summary="A number other parsers read differently",
        help="Octal, binary, sexagesimal and underscored numbers differ between YAML 1.1 and "
        "1.2; quote the value.",
        why="`017` is 17 in YAML 1.2 and 15 in YAML 1.1; `1_000` and `1:20` are numbers only "
        "in YAML 1.1 (SIL-09).",
        bad=_fm(*_NAME_DESC, "code: 017"), good=_fm(*_NAME_DESC, "code: '017'"),
    ),
    Rule(
        code="portability-number-text", family="portability", severity=_W,
        summary="A number whose text is lost",
        help="'1.0' is the number 1; quote a version or any text that must stay as written.",
        why="The entry carries JSON numbers, which keep no spelling: `1.0` arrives as `1` "
        "(ENTRY-03).",
        bad=_fm(*_NAME_DESC, "version: 1.0"), good=_fm(*_NAME_DESC, "version: '1.0'"),
    ),
    Rule(
        code="portability-key", family="portability", severity=_W,
        summary="A key other parsers type",
        help="PyYAML reads keys like 'yes' or '1' as booleans or numbers; quote the key.",
        why="JSON keys are strings; a YAML 1.1 parser that types the key sees another "
        "frontmatter (SIL-09).",
        bad=_fm(*_NAME_DESC, "metadata:", "  1: first"),
        good=_fm(*_NAME_DESC, "metadata:", "  '1': first"),
    ),
    # --- content ----------------------------------------------------------------------------
    Rule(
        code="reference-missing", family="content", severity=_W,
        summary="A link in SKILL.md names a file the skill does not publish",
        help="Fix the link, add the file, or stop excluding it: a host can read only the "
        "skill's published files.",
        why="Agent Skills tells authors to [reference files](https://agentskills.io/"
        "specification#file-references) by relative paths from the skill root; a host "
        "resolves them against the skill's URI and reads only files of the skill's manifest "
        "(ENTRY-08), so a link to a file that is not published fails when the model follows it.",
        bad="pdf-tools/SKILL.md: See [the guide](references/GUIDE.md).\n"
        "pdf-tools/references/guide.md",
        good="pdf-tools/SKILL.md: See [the guide](references/guide.md).\n"
        "pdf-tools/references/guide.md",
    ),
    Rule(
        code="reference-invalid", family="content", severity=_W,
        summary="A link in SKILL.md can never resolve to a file of the skill",
        help="Link with a relative path below the skill folder, '/' between names: no '..' above "
        "the folder, no leading '/', no backslash, no drive letter.",
        why="Hosts refuse references that climb above the skill root (URI-19), start with `/` "
        "(URI-20), carry another scheme (URI-21) or hold backslashes (URI-23); Agent Skills "
        "asks for [relative paths from the skill root](https://agentskills.io/"
        "specification#file-references).",
        bad="See [common notes](../common/notes.md) and [the script](scripts\\fill.py).",
        good="See [notes](references/notes.md) and [the script](scripts/fill.py).",
    ),
    Rule(
        code="body-too-long", family="content", severity=_W,
        summary="SKILL.md is over 500 lines",
        help="Move reference material into files of the skill and link to them.",
        why="Agent Skills recommends keeping the main SKILL.md [under 500 lines]"
        "(https://agentskills.io/specification#progressive-disclosure): the whole file is "
        "loaded when the skill is used, the other files only when needed.",
        bad="pdf-tools/SKILL.md (812 lines)",
        good="pdf-tools/SKILL.md (140 lines)\npdf-tools/references/forms.md",
    ),
    # --- source -----------------------------------------------------------------------------
    Rule(
        code="symlink", family="source", severity=_W,
        summary="A symbolic link, never followed or served",
        help="Replace the link with the file itself, or remove it.",
        why="Links never lead out of a skill: the server does not follow them (WG-09).",
        bad="pdf-tools/LICENSE -> ../LICENSE", good="pdf-tools/LICENSE (a copy)",
        silence="`--ignore symlink`, or leave the link out with `--exclude NAME`.",
    ),
    Rule(
        code="special-file", family="source", severity=_W,
        summary="A FIFO, socket or device, never opened",
        help="Remove it from the skill folder.",
        why="Opening a FIFO or a device can block or read without end; the walk never opens "
        "one (WG-09).",
        bad="pdf-tools/queue (a FIFO)", good="pdf-tools/ (no FIFO)",
        silence="`--ignore special-file`, or `--exclude NAME`.",
    ),
    Rule(
        code="unreadable", family="source", severity=_W,
        summary="An entry that could not be read",
        help="Fix its permissions.",
        why="A file the server cannot read is not published, so the skill lacks it.",
        bad="pdf-tools/forms/ (mode 000)", good="pdf-tools/forms/ (mode 755)",
        silence="`--ignore unreadable`, or `--exclude NAME`.",
    ),
    Rule(
        code="hidden-file", family="source", severity=_N,
        summary="A hidden file or folder, not published",
        help="Nothing, if it should stay private; `--include-hidden` publishes hidden names.",
        why="`serve` leaves out names starting with `.`, ending with `~` or of the form `#...#` "
        "(editor files, local settings); a skill that needs such a file breaks when served "
        "without `--include-hidden`.",
        bad="pdf-tools/.config.json (read by a script of the skill)",
        good="pdf-tools/config.json",
        silence="Notes never fail a run; `--ignore hidden-file` drops them, and "
        "`--exclude NAME` leaves the file out without a note.",
    ),
    Rule(
        code="secret-file", family="source", severity=_W,
        summary="A file whose name looks like a secret (.env, *.pem, id_rsa, credentials)",
        help="Move it out of the skill folder: a skill is published to every host that "
        "connects, and other tools package skill folders whole.",
        why="Skill content reaches hosts and models as data (SEC-01); a key or a token in a "
        "skill folder is one `--include-hidden`, one upload or one copy away from being "
        "published. It is reported whether the walk publishes it or passes over it.",
        bad="pdf-tools/.env\npdf-tools/deploy.pem", good="pdf-tools/ (no secrets)",
        silence="`--ignore secret-file` (a warning fails only under `--strict`); better, move "
        "the file out of the skill folder.",
    ),
    # --- catalog ----------------------------------------------------------------------------
    Rule(
        code="duplicate-name", family="catalog", severity=_W,
        summary="Another skill has the same name",
        help="Names should be unique in a listing; hosts tell such skills apart by path.",
        why="Names within one server's listing should be unique (ORG-10).",
        bad="team-a/pdf-tools/SKILL.md\nteam-b/pdf-tools/SKILL.md",
        good="team-a/pdf-tools/SKILL.md\nteam-b/pdf-forms/SKILL.md",
    ),
    Rule(
        code="bad-file-name", family="catalog", severity=_W,
        summary="A file name cannot be a URI segment",
        help="Rename the file (no control characters or backslashes); it is not served.",
        why="Every file is published under a `skill://` URI; a backslash or a control "
        "character has no safe spelling there (URI-23).",
        bad="pdf-tools/notes\\draft.md", good="pdf-tools/notes-draft.md",
    ),
    Rule(
        code="bad-path", family="catalog", severity=_E,
        summary="The skill's folder path cannot be a URI",
        help="Rename the folder (no control characters or backslashes).",
        why="The folder path becomes the skill's URI (URI-23).",
        bad="skills/pdf\\tools/SKILL.md", good="skills/pdf-tools/SKILL.md",
    ),
    Rule(
        code="refused", family="catalog", severity=_E,
        summary="SKILL.md is a link, a special file or unreadable",
        help="Make SKILL.md a regular, readable file; links are never followed.",
        why="A skill is a folder with a file named `SKILL.md` (FMT-02), and links are never "
        "followed (WG-09).",
        bad="pdf-tools/SKILL.md -> ../common/SKILL.md", good="pdf-tools/SKILL.md (a file)",
    ),
    Rule(
        code="path-collision", family="catalog", severity=_E,
        summary="Two paths are one file on some filesystems",
        help="Rename one: paths equal under case folding or Unicode normalisation collide.",
        why="A host refuses a file set whose URIs collide once case-folded or normalised "
        "(WG-06, SIL-05): on macOS or Windows they are one file.",
        bad="pdf-tools/Notes.md\npdf-tools/notes.md", good="pdf-tools/notes.md",
    ),
    Rule(
        code="uri-collision", family="catalog", severity=_E,
        summary="Another root or skill claims the same URI",
        help="Serve each skill from one place only.",
        why="A URI names one skill (ENTRY-02); two roots publishing the same path would give "
        "it two contents.",
        bad="serve a/ b/   (both hold pdf-tools/)", good="serve a/   (pdf-tools/ once)",
    ),
    Rule(
        code="top-level", family="catalog", severity=_E,
        summary="SKILL.md has no folder to name the skill",
        help="Put the skill in a folder named like the skill.",
        why="The skill's name is the last segment of its path (URI-06), which a SKILL.md at the "
        "top of a served root does not have.",
        bad="serve skills/   with skills/SKILL.md", good="skills/pdf-tools/SKILL.md",
    ),
    Rule(
        code="frontmatter", family="catalog", severity=_E,
        summary="The server refused the frontmatter",
        help="Fix the frontmatter; the message says why.",
        why="A skill whose SKILL.md has no well-formed frontmatter is not published (FMT-03).",
        bad="---\nname: pdf-tools", good=_OK,
    ),
    Rule(
        code="invalid", family="catalog", severity=_E,
        summary="The server refused the skill",
        help="Fix what the message names.",
        why="A folder that breaks the Agent Skills rules is not published (FMT-01).",
        bad=_fm("name: pdf-tools"), good=_OK,
    ),
    Rule(
        code="unavailable", family="catalog", severity=_E,
        summary="A dynamic skill produced no SKILL.md",
        help="Make the skill produce its SKILL.md.",
        why="Every entry's `uri` is a SKILL.md that `resources/read` can read (ENTRY-02).",
    ),
    # --- entry ------------------------------------------------------------------------------
    Rule(
        code="bad-json", family="entry", severity=_E,
        summary="Not valid JSON", help="Give one JSON document.",
        why="An entry is JSON (ENTRY-01).", bad='{"uri": "skill://a/pdf-tools/SKILL.md",',
        good='{"uri": "skill://a/pdf-tools/SKILL.md", ...}',
    ),
    Rule(
        code="not-an-object", family="entry", severity=_E,
        summary="The entry is not a JSON object",
        help="Each entry is {uri, frontmatter, resources}.",
        why="An entry has `uri`, `frontmatter` and `resources` (ENTRY-01).",
        bad='["skill://a/pdf-tools/SKILL.md"]',
        good='{"uri": "skill://a/pdf-tools/SKILL.md", "frontmatter": {...}, "resources": [...]}',
    ),
    Rule(
        code="missing-uri", family="entry", severity=_E,
        summary="A 'uri' is missing", help="Add the URI.",
        why="Every entry and every file record has a `uri` (ENTRY-01, ENTRY-02).",
        bad='{"frontmatter": {...}, "resources": [...]}',
        good='{"uri": "skill://a/pdf-tools/SKILL.md", "frontmatter": {...}, "resources": [...]}',
    ),
    Rule(
        code="bad-uri", family="entry", severity=_E,
        summary="The entry's 'uri' is not a SKILL.md URI",
        help="Use <scheme>://<skill-path>/SKILL.md, the last segment being the skill name.",
        why="The entry's `uri` is the full URI of the skill's SKILL.md (ENTRY-02, URI-07).",
        bad='"uri": "skill://a/pdf-tools/"', good='"uri": "skill://a/pdf-tools/SKILL.md"',
    ),
    Rule(
        code="missing-frontmatter", family="entry", severity=_E,
        summary="'frontmatter' is missing",
        help="Add the SKILL.md frontmatter as a JSON object.",
        why="Every entry carries its frontmatter (ENTRY-01, ENTRY-03).",
        bad='{"uri": "...", "resources": [...]}',
        good='{"uri": "...", "frontmatter": {"name": "pdf-tools", ...}, "resources": [...]}',
    ),
    Rule(
        code="bad-frontmatter", family="entry", severity=_E,
        summary="'frontmatter' is not an object",
        help="Give the frontmatter as a JSON object.",
        why="`frontmatter` is the YAML frontmatter as a JSON object (ENTRY-03).",
        bad='"frontmatter": "name: pdf-tools"',
        good='"frontmatter": {"name": "pdf-tools", "description": "Fill PDF forms."}',
    ),
    Rule(
        code="not-json", family="entry", severity=_E,
        summary="A value is not plain JSON", help="Use JSON values only.",
        why="Entries are compared on the JSON data model (ENTRY-03); NaN, infinities, "
        "non-string keys and lone surrogates have no JSON form.",
        bad='"frontmatter": {"name": "pdf-tools", "weight": NaN}',
        good='"frontmatter": {"name": "pdf-tools", "weight": "n/a"}',
    ),
    Rule(
        code="missing-resources", family="entry", severity=_E,
        summary="'resources' is missing", help="List every file, or write \"dynamic\".",
        why="`resources` is always present (ENTRY-06), and a host never loads an entry "
        "without it (ENTRY-07).",
        bad='{"uri": "...", "frontmatter": {...}}',
        good='{"uri": "...", "frontmatter": {...}, "resources": "dynamic"}',
    ),
    Rule(
        code="bad-resources", family="entry", severity=_E,
        summary="'resources' is neither an array nor \"dynamic\"",
        help="List every file, or write \"dynamic\".",
        why="`resources` is an array of file records or exactly the string `\"dynamic\"` "
        "(ENTRY-06).",
        bad='"resources": {"SKILL.md": 120}', good='"resources": [{"uri": ..., "digest": ..., '
        '"size": 120}]',
    ),
    Rule(
        code="bad-resource", family="entry", severity=_E,
        summary="A resource is not an object", help="Each resource is {uri, digest, size}.",
        why="Each file record is an object with `uri`, `digest` and `size` (ENTRY-01).",
        bad='"resources": ["skill://a/pdf-tools/SKILL.md"]',
        good='"resources": [{"uri": "skill://a/pdf-tools/SKILL.md", "digest": ..., "size": ...}]',
    ),
    Rule(
        code="missing-digest", family="entry", severity=_E,
        summary="A resource has no 'digest'", help="Add sha256:<64 hex>.",
        why="Every file record has its SHA-256 digest (ENTRY-12).",
        bad='{"uri": "...", "size": 120}', good='{"uri": "...", "digest": "sha256:...", '
        '"size": 120}',
    ),
    Rule(
        code="missing-size", family="entry", severity=_E,
        summary="A resource has no 'size'", help="Add the size in bytes.",
        why="Every file record has its size in bytes (ENTRY-11).",
        bad='{"uri": "...", "digest": "sha256:..."}',
        good='{"uri": "...", "digest": "sha256:...", "size": 120}',
    ),
    Rule(
        code="bad-resource-uri", family="entry", severity=_E,
        summary="A resource 'uri' is malformed", help="Use a URI inside the skill's folder.",
        why="Each listed URI is the entry's SKILL.md or lies inside the skill's folder "
        "(ENTRY-10), spelled as a URI (URI-22, URI-23).",
        bad='"uri": "skill://a/pdf-tools/forms%2Fa.pdf"', good='"uri": "skill://a/pdf-tools/'
        'forms/a.pdf"',
    ),
    Rule(
        code="bad-digest", family="entry", severity=_E,
        summary="A 'digest' is malformed",
        help="Write sha256: followed by 64 lowercase hex characters.",
        why="`digest` is `sha256:` and exactly 64 lowercase hexadecimal digits (ENTRY-12).",
        bad='"digest": "SHA256:9F86D0..."', good='"digest": "sha256:9f86d0..." (64 digits)',
    ),
    Rule(
        code="bad-size", family="entry", severity=_E,
        summary="A 'size' is not a whole number of bytes",
        help="Write the byte count, 0 to 2**53-1.",
        why="`size` is a non-negative integer, the number of bytes the digest covers (ENTRY-11).",
        bad='"size": "120"', good='"size": 120',
    ),
    Rule(
        code="size-digest-conflict", family="entry", severity=_E,
        summary="A size and a digest contradict each other",
        help="The empty digest goes with size 0 only, and one digest with one size.",
        why="A zero-byte file is fine only with the digest of zero bytes (SIL-18).",
        bad='"digest": "sha256:e3b0c442...b855", "size": 12', good='"digest": "sha256:e3b0c442'
        '...b855", "size": 0',
    ),
    Rule(
        code="duplicate-uri", family="entry", severity=_E,
        summary="A file is listed twice", help="List each file once.",
        why="The manifest lists every file once (ENTRY-08); a URI listed twice makes the entry "
        "invalid (SIL-04).",
        bad='"resources": [{"uri": "...SKILL.md", ...}, {"uri": "...SKILL.md", ...}]',
        good='"resources": [{"uri": "...SKILL.md", ...}]',
    ),
    Rule(
        code="outside-skill", family="entry", severity=_E,
        summary="A resource is outside the skill",
        help="List only files below the skill's folder.",
        why="Each listed URI lies inside the skill's folder (ENTRY-10).",
        bad='uri "skill://a/pdf-tools/SKILL.md", resource "skill://a/other/x.md"',
        good='uri "skill://a/pdf-tools/SKILL.md", resource "skill://a/pdf-tools/x.md"',
    ),
    Rule(
        code="missing-skill-md", family="entry", severity=_E,
        summary="'resources' does not list SKILL.md",
        help="List SKILL.md with its digest and size.",
        why="The array contains a record for the entry's own SKILL.md (ENTRY-09).",
        bad='"resources": [{"uri": "skill://a/pdf-tools/forms/a.pdf", ...}]',
        good='"resources": [{"uri": "skill://a/pdf-tools/SKILL.md", ...}, ...]',
    ),
    Rule(
        code="too-many-resources", family="entry", severity=_E,
        summary="The skill has more than 512 files",
        help="Hosts need not load it; split the skill or remove files.",
        why="Hosts accept skills up to 512 files (ENTRY-17); a server should not publish more "
        "(ENTRY-19), so `serve` does not.",
        bad="pdf-tools/ (600 files)", good="pdf-tools/ (120 files)",
    ),
    Rule(
        code="too-large", family="entry", severity=_E,
        summary="The skill's files total more than 16 MiB",
        help="Hosts need not load it; remove or shrink files.",
        why="Hosts accept skills up to 16,777,216 bytes in total (ENTRY-17); a server should not "
        "publish more (ENTRY-19), so `serve` does not.",
        bad="pdf-tools/ (20 MiB of samples)", good="pdf-tools/ (2 MiB)",
    ),
)  # fmt: skip

#: Every rule, by code, in page order.
RULES: Final[Mapping[str, Rule]] = {rule.code: rule for rule in (*_ROWS, *SERVER_ROWS)}
