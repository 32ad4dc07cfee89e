"""Agent Skills validation of SKILL.md frontmatter, and the portable-frontmatter lint.

Theory of operation
===================

Two pure functions over data this package has already parsed; no I/O. Folder- and entry-level
checks (walking a directory, manifests, limits) are built on top of them elsewhere.

:func:`validate_frontmatter` applies the Agent Skills rules to a frontmatter mapping (FMT-01,
FMT-03, ENTRY-03, URI-07):

* ``name``: required, a string, the naming rules of :mod:`skills_core.names` (1-64 characters of
  ``a-z``, ``0-9`` and single inner hyphens), and equal to the skill's directory name when the
  caller gives it;
* ``description``: required, a string of 1-1,024 characters that is not only white space;
* ``compatibility``: optional, a string of 1-500 characters;
* ``metadata``: optional, a mapping from string keys to string values; keys under the reserved
  ``io.modelcontextprotocol/`` prefix draw a warning (FMT-12: reserved, none defined yet);
* ``license``: optional, a string;
* ``allowed-tools``: optional, a space-separated string (a YAML list is an error, as in the
  Agent Skills specification; commas outside parentheses draw a warning);
* every other field passes through without a finding: the extension renders frontmatter
  verbatim (ENTRY-03), so unknown fields are the author's business.

:func:`lint_portability` warns about plain (unquoted) scalars that other YAML parsers read
differently from our YAML 1.2 core schema (docs/design.md#d3): dates and timestamps (PyYAML
builds a ``date``, js-yaml a ``Date``), YAML 1.1 booleans (``yes``, ``off``, ``y``...), integers
YAML 1.1 reads differently (``017`` is octal 15 there, ``0o17`` a string, ``0b101``, ``1_000``
and ``1:20`` integers), floats only one of the two reads as a number (``1e3``), numbers whose
text is lost (``version: 1.0``), the YAML 1.1 value indicator ``=``, and keys that YAML 1.1
would type (``1:``, ``yes:``). Integers beyond 2**53, ``.nan``/``.inf``, merge keys, anchors and
tags are not lint warnings: the parser refuses them outright.

Findings are :class:`Finding` values: a :class:`Severity`, the JSON pointer (RFC 6901) of the
field (``""`` for the frontmatter as a whole), a stable ``code``, a message, and where the source
has one, the file, line and column. :func:`validate_frontmatter` sees only data, so its findings
carry no place; :func:`validate_skill_md` and :func:`lint_portability` parse with locations
(``parse_frontmatter(..., locate=True)``) and place each finding in ``SKILL.md``: a finding about
a key (a reserved ``metadata`` key, a key other parsers type) at the key, any other at the start
of the value (at the key when it has none); a missing field has no place. :meth:`Finding.to_json`
is the JSON form every command prints, strict UTF-8 always (see :func:`strict_utf8`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Final, final

from ._yaml import Path, Spots, parse_yaml
from .errors import FrontmatterError, URIError, URIErrorKind, quote_for_message
from .frontmatter import (
    DEFAULT_MAX_BYTES,
    FieldLocation,
    field_locations,
    json_pointer,
    split_frontmatter,
)
from .jsonvalue import JSONValue
from .names import skill_name_problem
from .spec import RESERVED_FRONTMATTER_METADATA_PREFIX, SKILL_MD
from .uri import percent_decode, resolve_reference

__all__ = [
    "Severity",
    "Finding",
    "DESCRIPTION_MAX_LENGTH",
    "COMPATIBILITY_MAX_LENGTH",
    "validate_frontmatter",
    "lint_portability",
    "validate_skill_md",
    "lint_body",
    "BODY_MAX_LINES",
    "place_in_skill_md",
    "strict_utf8",
    "raw_bytes",
]

#: Longest ``description`` the Agent Skills specification allows, in characters.
DESCRIPTION_MAX_LENGTH: Final = 1024
#: Longest ``compatibility`` the Agent Skills specification allows, in characters.
COMPATIBILITY_MAX_LENGTH: Final = 500
#: Lines the Agent Skills specification recommends a SKILL.md stay under.
BODY_MAX_LINES: Final = 500


class Severity(enum.StrEnum):
    """How serious a :class:`Finding` is."""

    #: The skill breaks a rule and must not be served or loaded as is.
    ERROR = "error"
    #: The skill is valid but fragile: another tool may read it differently.
    WARNING = "warning"
    #: Information only (a hidden file left out, say): never fails a run, even a strict one.
    NOTE = "note"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One problem found in a skill: its frontmatter, its files, or its entry.

    Attributes:
        severity: :attr:`Severity.ERROR`, :attr:`Severity.WARNING` or :attr:`Severity.NOTE`.
        field: JSON pointer to the field, e.g. ``"/name"`` or ``"/metadata/author"``; ``""`` for
            the document as a whole. In the frontmatter for findings about SKILL.md, in the
            entry for findings about an entry (``"/frontmatter/name"``, ``"/resources/2/size"``).
        code: Stable machine-readable code, e.g. ``"name-mismatch"`` or ``"portability-bool"``.
        message: Human-readable explanation naming the value and what to do.
        line: The line the finding is about (1-based), when the source has one.
        column: The column (1-based, in characters) within ``line``, when known.
        file: The file the finding is about, when known: ``"SKILL.md"`` from
            :func:`validate_skill_md`; a path the caller can open in the reports of
            :mod:`skills_core.check`.
    """

    severity: Severity
    field: str
    code: str
    message: str
    line: int | None = None
    column: int | None = None
    file: str | None = None

    def __str__(self) -> str:
        return f"{self.severity}: {self.field or 'frontmatter'}: {self.message}"

    @property
    def place(self) -> str:
        """``file:line:column``, as much of it as is known (``""`` when nothing is)."""
        place = self.file or ""
        if self.line is not None:
            place += f":{self.line}"
            if self.column is not None:
                place += f":{self.column}"
        return place

    def to_json(self) -> dict[str, JSONValue]:
        """The finding as a JSON object, every string strict UTF-8.

        Returns:
            ``severity``, ``code``, ``field`` and ``message``, then ``file``, ``line`` and
            ``column`` when known. A ``file`` whose name is not valid UTF-8 (a file name on disk
            can be any bytes) is given as :func:`strict_utf8` shows it, and ``file_hex`` beside
            it holds the name's exact bytes in hexadecimal (:func:`raw_bytes`).
        """
        out: dict[str, JSONValue] = {
            "severity": str(self.severity),
            "code": self.code,
            "field": strict_utf8(self.field),
            "message": strict_utf8(self.message),
        }
        if self.file is not None:
            out["file"] = strict_utf8(self.file)
            if out["file"] != self.file:
                out["file_hex"] = raw_bytes(self.file).hex()
        if self.line is not None:
            out["line"] = self.line
        if self.column is not None:
            out["column"] = self.column
        return out


def strict_utf8(text: str) -> str:
    """Return ``text`` itself when it is valid Unicode for UTF-8, else a copy that is.

    A ``str`` can hold lone surrogates, which no UTF-8 encoder accepts: Python decodes a file
    name that is not UTF-8 into them (``os.fsdecode``), and JSON text may escape them
    (``"\\udcff"``). Each one becomes the six characters of its escape (``\\udcff``), as
    :func:`skills_core.display.display` shows it.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def raw_bytes(name: str) -> bytes:
    """The bytes a file name stands for (``os.fsencode`` on POSIX).

    For names :func:`strict_utf8` had to change, this is the exact name. A lone surrogate that
    no file name decodes to (from JSON text, say) is kept as its three UTF-8-style bytes.
    """
    try:
        return name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogatepass")


def _error(field: str, code: str, message: str) -> Finding:
    return Finding(severity=Severity.ERROR, field=field, code=code, message=message)


def _warning(field: str, code: str, message: str, *, file: str | None = None) -> Finding:
    return Finding(severity=Severity.WARNING, field=field, code=code, message=message, file=file)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return f"a {type(value).__name__}"


def _string_field(
    findings: list[Finding],
    data: Mapping[str, object],
    key: str,
    maximum: int,
    *,
    required: bool,
) -> None:
    """Append the finding about the string field ``key``, if there is one."""
    if key not in data:
        if required:
            findings.append(
                _error(f"/{key}", f"{key}-missing", f"the required field '{key}' is missing")
            )
        return
    value = data[key]
    # The common case first: a string with a character other than white space, within bounds
    # ("not value.strip()" is "not value or value.isspace()", without copying the string).
    if isinstance(value, str) and value and not value.isspace() and len(value) <= maximum:
        return
    field = f"/{key}"
    if not isinstance(value, str):
        findings.append(
            _error(
                field,
                f"{key}-not-string",
                f"'{key}' must be a string, not {_type_name(value)} (quote the value)",
            )
        )
    elif not value or value.isspace():
        findings.append(
            _error(field, f"{key}-empty", f"'{key}' must not be empty or only white space")
        )
    else:
        findings.append(
            _error(
                field,
                f"{key}-too-long",
                f"'{key}' is {len(value)} characters long; the maximum is {maximum}",
            )
        )


def validate_frontmatter(data: object, *, directory_name: str | None = None) -> tuple[Finding, ...]:
    """Check parsed frontmatter against the Agent Skills rules (FMT-01, FMT-03, ENTRY-03).

    Args:
        data: The parsed frontmatter (normally :attr:`ParsedFrontmatter.data`, or an entry's
            ``frontmatter`` object); anything that is not a mapping is one error.
        directory_name: The name of the skill's directory; when given, ``name`` must equal it.

    Returns:
        Every finding, in field order: ``name``, ``description``, ``compatibility``,
        ``metadata``, ``license``, ``allowed-tools``. Empty when the frontmatter is valid.
    """
    if type(data) is not dict and not isinstance(data, Mapping):
        return (
            _error(
                "",
                "frontmatter-schema",
                f"the frontmatter must be a mapping, not {_type_name(data)}",
            ),
        )
    findings: list[Finding] = []
    if "name" not in data:
        findings.append(_error("/name", "name-missing", "the required field 'name' is missing"))
    else:
        name = data["name"]
        problem = skill_name_problem(name)
        if not isinstance(name, str):
            findings.append(
                _error(
                    "/name",
                    "name-not-string",
                    f"'name' must be a string, not {_type_name(name)} (quote the value)",
                )
            )
        elif problem is not None:
            findings.append(_error("/name", "name-invalid", problem))
        elif directory_name is not None and name != directory_name:
            findings.append(
                _error(
                    "/name",
                    "name-mismatch",
                    f"'name' is {name!r} but the skill's directory is "
                    f"{quote_for_message(directory_name, 80)}; they must be equal",
                )
            )
    _string_field(findings, data, "description", DESCRIPTION_MAX_LENGTH, required=True)
    _string_field(findings, data, "compatibility", COMPATIBILITY_MAX_LENGTH, required=False)
    if "metadata" in data:
        findings += _check_metadata(data["metadata"])
    if "license" in data and not isinstance(data["license"], str):
        findings.append(
            _error(
                "/license",
                "license-not-string",
                f"'license' must be a string, not {_type_name(data['license'])}",
            )
        )
    if "allowed-tools" in data:
        findings += _check_allowed_tools(data["allowed-tools"])
    return tuple(findings)


def _check_metadata(metadata: object) -> list[Finding]:
    if not isinstance(metadata, Mapping):
        return [
            _error(
                "/metadata",
                "metadata-not-mapping",
                f"'metadata' must be a mapping of strings to strings, not {_type_name(metadata)}",
            )
        ]
    findings: list[Finding] = []
    for key, value in metadata.items():
        # The common case first: a string key that is not reserved, with a string value.
        if (
            isinstance(value, str)
            and isinstance(key, str)
            and not key.startswith(RESERVED_FRONTMATTER_METADATA_PREFIX)
        ):
            continue
        if not isinstance(key, str):
            findings.append(
                _error(
                    "/metadata",
                    "metadata-key-not-string",
                    f"'metadata' keys must be strings; {key!r} is {_type_name(key)}",
                )
            )
            continue
        field = "/metadata" + json_pointer((key,))
        if not isinstance(value, str):
            findings.append(
                _error(
                    field,
                    "metadata-value-not-string",
                    f"'metadata' values must be strings; {key!r} is {_type_name(value)} (quote "
                    "it, or move structured data out of 'metadata')",
                )
            )
        if key.startswith(RESERVED_FRONTMATTER_METADATA_PREFIX):
            findings.append(
                _warning(
                    field,
                    "metadata-reserved-key",
                    f"the key prefix {RESERVED_FRONTMATTER_METADATA_PREFIX!r} is reserved for MCP "
                    "extensions and no such key is defined yet (FMT-12)",
                )
            )
    return findings


def _check_allowed_tools(value: object) -> list[Finding]:
    if isinstance(value, list):
        return [
            _error(
                "/allowed-tools",
                "allowed-tools-not-string",
                "'allowed-tools' must be one space-separated string (Agent Skills), not a YAML "
                "list; write e.g. 'allowed-tools: Read Grep Bash(git:*)'",
            )
        ]
    if not isinstance(value, str):
        return [
            _error(
                "/allowed-tools",
                "allowed-tools-not-string",
                f"'allowed-tools' must be a space-separated string, not {_type_name(value)}",
            )
        ]
    # Removing parenthesised text never adds a comma: only text with one needs the substitution.
    if "," in value and "," in _PARENTHESISED.sub("", value):
        return [
            _warning(
                "/allowed-tools",
                "allowed-tools-commas",
                "'allowed-tools' looks comma-separated; the Agent Skills format separates tools "
                "with spaces",
            )
        ]
    return []


_PARENTHESISED = re.compile(r"\([^()]*\)")

# --- the portability lint --------------------------------------------------------------------------

# YAML 1.1 (PyYAML's resolver and the YAML 1.1 type repository) patterns that differ from 1.2 core.
_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?"
)
_BOOL_11: Final = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "off", "Off", "OFF"), False),
}
_INT_11 = re.compile(
    r"[-+]?0b[01_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
    r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"
)
_FLOAT_11 = re.compile(
    r"[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*"
)
_OCTAL_11 = re.compile(r"[-+]?0[0-7]+")
_NULL_11: Final = frozenset(("~", "null", "Null", "NULL"))
# YAML 1.2 core (what we resolve), to tell a number from a string.
_INT_12 = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT_12 = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_BOOL_12: Final = frozenset(("true", "True", "TRUE", "false", "False", "FALSE"))


def _yaml11_type(text: str) -> str:
    """What a YAML 1.1 resolver (PyYAML's) makes of a plain scalar: a short description."""
    if text in _NULL_11:
        return "null"
    if text in _BOOL_11 or text in _BOOL_12:
        return "a boolean"
    if _INT_11.fullmatch(text):
        return "an integer"
    if _FLOAT_11.fullmatch(text):
        return "a float"
    if _TIMESTAMP.fullmatch(text):
        return "a date"
    if text in ("=", "<<"):
        return "a special YAML 1.1 value"
    return "a string"


def _lint_value(text: str) -> tuple[str, str] | None:
    """(code, message) for a plain value that other parsers read differently, or None."""
    shown = quote_for_message(text, 60)
    if _TIMESTAMP.fullmatch(text):
        return (
            "portability-date",
            f"{shown} is a date to YAML 1.1 parsers (PyYAML builds a date object, js-yaml "
            "a Date) but a string in YAML 1.2; quote it",
        )
    if text in _BOOL_11:
        return (
            "portability-bool",
            f"{shown} is the boolean {str(_BOOL_11[text]).lower()} in YAML 1.1 but the "
            "string here (YAML 1.2); quote it, or write true/false",
        )
    if text in ("=", "<<"):
        return (
            "portability-special",
            f"{shown} has a special meaning in YAML 1.1 (PyYAML refuses to load it); quote it",
        )
    is_int_12 = _INT_12.fullmatch(text) is not None
    is_float_12 = not is_int_12 and _FLOAT_12.fullmatch(text) is not None
    is_int_11 = _INT_11.fullmatch(text) is not None
    if not is_int_12 and not is_float_12:
        if is_int_11 or _FLOAT_11.fullmatch(text):
            kind = "an integer" if is_int_11 else "a float"
            return (
                "portability-number",
                f"{shown} is {kind} in YAML 1.1 but a string in YAML 1.2; quote it",
            )
        return None
    if not is_int_11 and not _FLOAT_11.fullmatch(text):
        return (
            "portability-number",
            f"{shown} is a number in YAML 1.2 but a string in YAML 1.1; quote it",
        )
    if is_int_12:
        # Both read an integer; YAML 1.1 reads a leading zero as octal.
        if _OCTAL_11.fullmatch(text) and int(text, 8) != int(text, 10):
            return (
                "portability-number",
                f"{shown} is {int(text, 10)} in YAML 1.2 but the octal {int(text, 8)} in "
                "YAML 1.1; quote it, or drop the leading zero",
            )
        return None
    value = float(text)
    if value.is_integer() or repr(value) != text.lstrip("+"):
        return (
            "portability-number-text",
            f"{shown} is the number {value!r}, so its text is lost (JSON may write it as "
            f"{_js_number(value)}); quote it if the text matters, e.g. a version",
        )
    return None


def _js_number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)


def _lint(plain: list[tuple[Path, int, int, str, bool]]) -> list[Finding]:
    findings: list[Finding] = []
    for path, line, column, text, is_key in plain:
        if is_key:
            kind = _yaml11_type(text)
            if kind == "a string" and (_INT_12.fullmatch(text) or _FLOAT_12.fullmatch(text)):
                kind = "a number"
            if kind == "a string":
                continue
            code = "portability-key"
            message = (
                f"the key {quote_for_message(text, 60)} is {kind} to YAML parsers that type keys "
                "(PyYAML, YAML 1.1); it is a string here; quote it"
            )
        else:
            found = _lint_value(text)
            if found is None:
                continue
            code, message = found
        findings.append(
            Finding(
                severity=Severity.WARNING,
                field=json_pointer(path),
                code=code,
                message=message,
                line=line,
                column=column,
                file=SKILL_MD,
            )
        )
    return findings


#: Codes of findings about a key rather than its value: they are placed at the key.
_KEY_CODES: Final = frozenset(
    {"metadata-reserved-key", "metadata-key-not-string", "portability-key"}
)


def _placed(finding: Finding, locations: Mapping[str, FieldLocation]) -> Finding:
    """``finding`` in SKILL.md, at its key or its value (module docstring)."""
    where = locations.get(finding.field)
    if where is None:
        return replace(finding, file=SKILL_MD)
    if finding.code in _KEY_CODES:
        return replace(finding, file=SKILL_MD, line=where.line, column=where.column)
    return replace(finding, file=SKILL_MD, line=where.value_line, column=where.value_column)


def place_in_skill_md(
    findings: Iterable[Finding], skill_md: bytes | str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[Finding, ...]:
    """Place findings about a SKILL.md's frontmatter in that file (module docstring).

    For findings made from the data alone, e.g. by :func:`validate_frontmatter` or by a catalog
    (a name other skills share). A finding that already has a line, or names another file, is
    kept as it is.

    Args:
        findings: Findings whose ``field`` points into the frontmatter of ``skill_md``.
        skill_md: The raw SKILL.md bytes, or its text.
        max_bytes: Cap on the frontmatter's size, as for :func:`parse_frontmatter`.

    Returns:
        The findings, each naming ``SKILL.md`` as its file and placed at its key or value when
        the frontmatter has it (none is placed when the frontmatter does not parse).
    """
    _, _, spots, _ = _parse(skill_md, max_bytes, locate=True)
    locations = field_locations(*spots)
    return tuple(
        _placed(f, locations) if f.line is None and f.file in (None, SKILL_MD) else f
        for f in findings
    )


#: What :func:`_parse` gives: the data, the plain scalars the lint looks at, where keys and values
#: start (when asked, else empty), or instead the parse failure as a finding.
_Parsed = tuple[object, list[tuple[Path, int, int, str, bool]], tuple[Spots, Spots], Finding | None]


def _parse(skill_md: bytes | str, max_bytes: int, *, locate: bool) -> _Parsed:
    plain: list[tuple[Path, int, int, str, bool]] = []
    keys: Spots = {}
    values: Spots = {}
    try:
        yaml_text, _ = split_frontmatter(skill_md, max_bytes=max_bytes)
        data = parse_yaml(
            yaml_text,
            first_line=2,
            plain_hook=lambda path, line, column, text, is_key: plain.append(
                (path, line, column, text, is_key)
            ),
            key_spots=keys if locate else None,
            value_spots=values if locate else None,
        )
    except FrontmatterError as exc:
        failure = Finding(
            severity=Severity.ERROR,
            field="",
            code=f"frontmatter-{exc.kind}",
            message=exc.reason,
            line=exc.line,
            column=exc.column,
            file=SKILL_MD,
        )
        return None, [], (keys, values), failure
    return data, plain, (keys, values), None


def lint_portability(
    skill_md: bytes | str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[Finding, ...]:
    """Warn about frontmatter values that other YAML parsers read differently.

    Args:
        skill_md: The raw SKILL.md bytes, or its text.
        max_bytes: Cap on the frontmatter's size, as for :func:`parse_frontmatter`.

    Returns:
        One warning per plain scalar that YAML 1.1 parsers (PyYAML, js-yaml's defaults) type
        differently from the YAML 1.2 core schema, each placed at its line and column of
        ``SKILL.md``; or, when the frontmatter does not parse, a single error finding describing
        the failure, placed where it was found.
    """
    _, plain, _, failure = _parse(skill_md, max_bytes, locate=False)
    if failure is not None:
        return (failure,)
    return tuple(_lint(plain))


def validate_skill_md(
    skill_md: bytes | str,
    *,
    directory_name: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> tuple[Finding, ...]:
    """Parse a SKILL.md's frontmatter, validate it and lint it, in one pass.

    Args:
        skill_md: The raw SKILL.md bytes, or its text.
        directory_name: The skill directory's name; when given, ``name`` must equal it.
        max_bytes: Cap on the frontmatter's size, as for :func:`parse_frontmatter`.

    Returns:
        A parse failure as a single error finding (code ``"frontmatter-<kind>"``, with its line
        and column); otherwise the findings of :func:`validate_frontmatter` followed by those of
        :func:`lint_portability`. Every finding names ``SKILL.md`` as its ``file`` and, where the
        source has one, its line and column (see the module docstring).
    """
    data, plain, spots, failure = _parse(skill_md, max_bytes, locate=True)
    if failure is not None:
        return (failure,)
    rules = validate_frontmatter(data, directory_name=directory_name)
    if rules:  # where members sit is worked out only when a finding needs it
        locations = field_locations(*spots)
        rules = tuple(_placed(finding, locations) for finding in rules)
    return (*rules, *_lint(plain))


# --- the body: links to the skill's files, and length ---------------------------------------------

#: An inline link or image, ``[text](destination "title")``: group 1 is the destination.
_INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]\\\n]|\\.)*\]\(\s*(<[^<>\n]*>|[^\s()<>]+(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
#: A link reference definition, ``[label]: destination``.
_LINK_DEFINITION = re.compile(r" {0,3}\[[^\]\n]+\]:[ \t]*(<[^<>\n]*>|\S+)")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
#: A scheme that makes a link a web page, a mail address...: not a file of the skill. One letter
#: followed by ':' is a drive letter, a path, and is checked.
_OTHER_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")


def _links(body: str, first_line: int) -> Iterable[tuple[int, int, str]]:
    """``(line, column, destination)`` of each link outside code in ``body`` (starting at
    ``first_line`` of the file; columns count characters from 1)."""
    fence = ""
    for number, line in enumerate(body.split("\n"), first_line):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        if "](" not in line and "]:" not in line:
            continue
        text = _CODE_SPAN.sub(lambda m: " " * len(m[0]), line) if "`" in line else line
        found = [(m.start(1), m[1]) for m in _INLINE_LINK.finditer(text)]
        definition = _LINK_DEFINITION.match(text)
        if definition:
            found.append((definition.start(1), definition[1]))
        for start, destination in found:
            yield number, start + 1, destination


def lint_body(
    skill_md: bytes | str, files: Collection[str] | None, *, skill_uri: str | None = None
) -> tuple[Finding, ...]:
    """Check the body of a SKILL.md: its links to the skill's files, and its length.

    * ``body-too-long``: the file has more than :data:`BODY_MAX_LINES` lines (the Agent Skills
      specification's recommendation), placed at the first line past it;
    * ``reference-invalid``: a link (``[text](path)``, an image, or a ``[label]: path``
      definition) outside code that a host would refuse to resolve against the skill's URI:
      above the skill root, absolute, a backslash, an encoded separator, a query, a ``skill://``
      URI of another skill (:func:`skills_core.uri.resolve_reference`); links with another
      scheme (``https:``, ``mailto:``), to an anchor only or to a folder are not file references;
    * ``reference-missing``: a link that resolves to a path not in ``files``.

    Args:
        skill_md: The raw SKILL.md bytes, or its text.
        files: The paths of the skill's published files, relative to the skill folder with
            ``/`` between names (``SKILL.md``, ``references/guide.md``); None to skip the
            ``reference-missing`` check.
        skill_uri: The skill's SKILL.md URI, against which links are resolved (a ``skill://``
            link is checked only when it is given).

    Returns:
        Warnings, each with file ``SKILL.md`` and its line (and, for a link, the column where
        its destination starts); none when the frontmatter cannot be found.
    """
    try:
        _, body_offset = split_frontmatter(skill_md)
    except FrontmatterError:
        return ()
    text = skill_md.decode("utf-8") if isinstance(skill_md, bytes) else skill_md
    text = text.removeprefix("\ufeff")
    findings: list[Finding] = []
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if lines > BODY_MAX_LINES:
        findings.append(
            Finding(
                severity=Severity.WARNING,
                field="",
                code="body-too-long",
                message=f"SKILL.md has {lines} lines; keep it under {BODY_MAX_LINES} and move "
                "reference material into files of the skill",
                line=BODY_MAX_LINES + 1,
                file=SKILL_MD,
            )
        )
    first_line = text.count("\n", 0, body_offset) + 1
    body = text[body_offset:].replace("\r\n", "\n")
    for line, column, destination in _links(body, first_line):
        found = _reference_finding(destination, files, skill_uri)
        if found is not None:
            code, message = found
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    field="",
                    code=code,
                    message=message,
                    line=line,
                    column=column,
                    file=SKILL_MD,
                )
            )
    return tuple(findings)


def _reference_finding(
    destination: str, files: Collection[str] | None, skill_uri: str | None
) -> tuple[str, str] | None:
    """(code, message) for a link destination that is not a file of the skill, or None."""
    shown = quote_for_message(destination, 80)
    if destination.startswith("<"):
        destination = destination[1:-1]
    destination = _ESCAPED.sub(r"\1", destination)
    absolute = _OTHER_SCHEME.match(destination) is not None
    if not destination or destination.startswith("#") or (absolute and skill_uri is None):
        return None
    base = skill_uri or _BASE
    if absolute and destination.partition(":")[0].lower() != base.partition(":")[0].lower():
        return None  # a web page, a mail address...: not a file of the skill
    path = destination.split("#", 1)[0]
    if path.endswith("/"):
        return None  # a folder: hosts list it with a directory read
    try:
        uri = resolve_reference(base, path)
    except URIError as exc:
        if exc.kind is URIErrorKind.NOT_IN_SKILL:
            message = f"the link {shown} names another skill, which a host loads on its own"
        else:
            message = f"the link {shown} cannot be a file of the skill: {exc.message}"
        return "reference-invalid", message
    root = base[: -len(SKILL_MD)]
    file = percent_decode(uri[len(root) :])
    if files is None or file in files:
        return None
    return (
        "reference-missing",
        f"the link {shown} names {quote_for_message(file, 80)}, which the skill does not "
        "publish (no such file, or hidden, excluded or refused)",
    )


#: The SKILL.md URI links are resolved against when the skill's is not given: only the path
#: below it counts.
_BASE: Final = "skill://skill/SKILL.md"
