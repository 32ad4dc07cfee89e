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
differently from our YAML 1.2 core schema (DESIGN.md decision 3): dates and timestamps (PyYAML
builds a ``date``, js-yaml a ``Date``), YAML 1.1 booleans (``yes``, ``off``, ``y``...), integers
YAML 1.1 reads differently (``017`` is octal 15 there, ``0o17`` a string, ``0b101``, ``1_000``
and ``1:20`` integers), floats only one of the two reads as a number (``1e3``), numbers whose
text is lost (``version: 1.0``), the YAML 1.1 value indicator ``=``, and keys that YAML 1.1
would type (``1:``, ``yes:``). Integers beyond 2**53, ``.nan``/``.inf``, merge keys, anchors and
tags are not lint warnings: the parser refuses them outright.

Findings are :class:`Finding` values: a :class:`Severity`, the JSON pointer (RFC 6901) of the
field (``""`` for the frontmatter as a whole), a stable ``code``, a message, and the SKILL.md
line when known.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, final

from skills_core._yaml import Path, parse_yaml
from skills_core.errors import FrontmatterError, quote_for_message
from skills_core.frontmatter import DEFAULT_MAX_BYTES, split_frontmatter
from skills_core.names import skill_name_problem
from skills_core.spec import RESERVED_FRONTMATTER_METADATA_PREFIX

__all__ = [
    "Severity",
    "Finding",
    "DESCRIPTION_MAX_LENGTH",
    "COMPATIBILITY_MAX_LENGTH",
    "validate_frontmatter",
    "lint_portability",
    "validate_skill_md",
]

#: Longest ``description`` the Agent Skills specification allows, in characters.
DESCRIPTION_MAX_LENGTH: Final = 1024
#: Longest ``compatibility`` the Agent Skills specification allows, in characters.
COMPATIBILITY_MAX_LENGTH: Final = 500


class Severity(enum.StrEnum):
    """How serious a :class:`Finding` is."""

    #: The skill breaks a rule and must not be served or loaded as is.
    ERROR = "error"
    #: The skill is valid but fragile: another tool may read it differently.
    WARNING = "warning"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One problem found in a skill's frontmatter.

    Attributes:
        severity: :attr:`Severity.ERROR` or :attr:`Severity.WARNING`.
        field: JSON pointer to the field, e.g. ``"/name"`` or ``"/metadata/author"``; ``""`` for
            the frontmatter as a whole.
        code: Stable machine-readable code, e.g. ``"name-mismatch"`` or ``"portability-bool"``.
        message: Human-readable explanation naming the value and what to do.
        line: The SKILL.md line the finding is about, when known.
    """

    severity: Severity
    field: str
    code: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.severity}: {self.field or 'frontmatter'}: {self.message}"


def _pointer(path: Path) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def _error(field: str, code: str, message: str) -> Finding:
    return Finding(severity=Severity.ERROR, field=field, code=code, message=message)


def _warning(field: str, code: str, message: str, line: int | None = None) -> Finding:
    return Finding(severity=Severity.WARNING, field=field, code=code, message=message, line=line)


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
                "", "not-a-mapping", f"the frontmatter must be a mapping, not {_type_name(data)}"
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
        field = "/metadata" + _pointer((key,))
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


def _lint_value(text: str, where: str) -> tuple[str, str] | None:
    """(code, message) for a plain value that other parsers read differently, or None."""
    shown = quote_for_message(text, 60)
    if _TIMESTAMP.fullmatch(text):
        return (
            "portability-date",
            f"{where}{shown} is a date to YAML 1.1 parsers (PyYAML builds a date object, js-yaml "
            "a Date) but a string in YAML 1.2; quote it",
        )
    if text in _BOOL_11:
        return (
            "portability-bool",
            f"{where}{shown} is the boolean {str(_BOOL_11[text]).lower()} in YAML 1.1 but the "
            "string here (YAML 1.2); quote it, or write true/false",
        )
    if text in ("=", "<<"):
        return (
            "portability-special",
            f"{where}{shown} has a special meaning in YAML 1.1 (PyYAML refuses to load it); "
            "quote it",
        )
    is_int_12 = _INT_12.fullmatch(text) is not None
    is_float_12 = not is_int_12 and _FLOAT_12.fullmatch(text) is not None
    is_int_11 = _INT_11.fullmatch(text) is not None
    if not is_int_12 and not is_float_12:
        if is_int_11 or _FLOAT_11.fullmatch(text):
            kind = "an integer" if is_int_11 else "a float"
            return (
                "portability-number",
                f"{where}{shown} is {kind} in YAML 1.1 but a string in YAML 1.2; quote it",
            )
        return None
    if not is_int_11 and not _FLOAT_11.fullmatch(text):
        return (
            "portability-number",
            f"{where}{shown} is a number in YAML 1.2 but a string in YAML 1.1; quote it",
        )
    if is_int_12:
        # Both read an integer; YAML 1.1 reads a leading zero as octal.
        if _OCTAL_11.fullmatch(text) and int(text, 8) != int(text, 10):
            return (
                "portability-number",
                f"{where}{shown} is {int(text, 10)} in YAML 1.2 but the octal {int(text, 8)} in "
                "YAML 1.1; quote it, or drop the leading zero",
            )
        return None
    value = float(text)
    if value.is_integer() or repr(value) != text.lstrip("+"):
        return (
            "portability-number-text",
            f"{where}{shown} is the number {value!r}, so its text is lost (JSON may write it as "
            f"{_js_number(value)}); quote it if the text matters, e.g. a version",
        )
    return None


def _js_number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)


def _lint(plain: list[tuple[Path, int, int, str, bool]]) -> list[Finding]:
    findings: list[Finding] = []
    for path, line, _column, text, is_key in plain:
        field = _pointer(path)
        if is_key:
            kind = _yaml11_type(text)
            if kind == "a string" and (_INT_12.fullmatch(text) or _FLOAT_12.fullmatch(text)):
                kind = "a number"
            if kind != "a string":
                findings.append(
                    _warning(
                        field,
                        "portability-key",
                        f"line {line}: the key {quote_for_message(text, 60)} is {kind} to YAML "
                        "parsers that type keys (PyYAML, YAML 1.1); it is a string here; quote it",
                        line,
                    )
                )
            continue
        found = _lint_value(text, f"line {line}: ")
        if found is not None:
            code, message = found
            findings.append(_warning(field, code, message, line))
    return findings


def _parse(
    skill_md: bytes | str, max_bytes: int
) -> tuple[object, list[tuple[Path, int, int, str, bool]], Finding | None]:
    plain: list[tuple[Path, int, int, str, bool]] = []
    try:
        yaml_text, _ = split_frontmatter(skill_md, max_bytes=max_bytes)
        data = parse_yaml(
            yaml_text,
            first_line=2,
            plain_hook=lambda path, line, column, text, is_key: plain.append(
                (path, line, column, text, is_key)
            ),
        )
    except FrontmatterError as exc:
        return (
            None,
            [],
            Finding(
                severity=Severity.ERROR,
                field="",
                code=f"frontmatter-{exc.kind}",
                message=str(exc),
                line=exc.line,
            ),
        )
    return data, plain, None


def lint_portability(
    skill_md: bytes | str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[Finding, ...]:
    """Warn about frontmatter values that other YAML parsers read differently.

    Args:
        skill_md: The raw SKILL.md bytes, or its text.
        max_bytes: Cap on the frontmatter's size, as for :func:`parse_frontmatter`.

    Returns:
        One warning per plain scalar that YAML 1.1 parsers (PyYAML, js-yaml's defaults) type
        differently from the YAML 1.2 core schema, each naming its line; or, when the
        frontmatter does not parse, a single error finding describing the failure.
    """
    _, plain, failure = _parse(skill_md, max_bytes)
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
        A parse failure as a single error finding (code ``"frontmatter-<kind>"``, with its line);
        otherwise the findings of :func:`validate_frontmatter` followed by those of
        :func:`lint_portability`.
    """
    data, plain, failure = _parse(skill_md, max_bytes)
    if failure is not None:
        return (failure,)
    return validate_frontmatter(data, directory_name=directory_name) + tuple(_lint(plain))
