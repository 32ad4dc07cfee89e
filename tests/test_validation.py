"""Agent Skills validation of frontmatter and the portable-frontmatter lint (FMT-01, FMT-03,
FMT-12, ENTRY-03, URI-07, SIL-09)."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from frontmatter_helpers import fm

from skills_core.validation import (
    COMPATIBILITY_MAX_LENGTH,
    DESCRIPTION_MAX_LENGTH,
    Finding,
    Severity,
    lint_portability,
    validate_frontmatter,
    validate_skill_md,
)

VALID = {"name": "pdf-processing", "description": "Extract text from PDFs."}


def codes(findings: tuple[Finding, ...]) -> list[tuple[str, str]]:
    return [(f.field, f.code) for f in findings]


def test_valid_frontmatter_has_no_findings() -> None:
    assert validate_frontmatter(VALID) == ()
    assert validate_frontmatter(VALID, directory_name="pdf-processing") == ()
    assert validate_frontmatter(MappingProxyType(VALID)) == ()


def test_unknown_fields_pass_through_untouched() -> None:
    """ENTRY-03: the extension renders frontmatter verbatim; unknown fields are fine."""
    data = {**VALID, "x-custom": {"nested": [1, 2]}, "user-invocable": True, "version": 1.0}
    assert validate_frontmatter(data) == ()


def test_frontmatter_must_be_a_mapping() -> None:
    """ENTRY-03: ``frontmatter`` given as an array is invalid."""
    (only,) = validate_frontmatter(["name", "x"])
    assert (only.severity, only.field, only.code) == (Severity.ERROR, "", "frontmatter-schema")
    assert "a list" in only.message


def test_fmt_03_name_and_description_are_required() -> None:
    assert codes(validate_frontmatter({})) == [
        ("/name", "name-missing"),
        ("/description", "description-missing"),
    ]


@pytest.mark.parametrize(
    "name",
    ["PDF-Processing", "-pdf", "pdf-", "pdf--processing", "a" * 65, "pdf_processing", "pdf.x", ""],
)
def test_uri_07_invalid_names(name: str) -> None:
    (only,) = validate_frontmatter({**VALID, "name": name})
    assert (only.field, only.code, only.severity) == ("/name", "name-invalid", Severity.ERROR)


@pytest.mark.parametrize("name", ["pdf-processing", "a", "a" * 64, "x1-2y"])
def test_uri_07_valid_names(name: str) -> None:
    assert validate_frontmatter({**VALID, "name": name}, directory_name=name) == ()


def test_entry_03_name_must_be_a_string() -> None:
    """ENTRY-03: ``name: 5`` is invalid."""
    (only,) = validate_frontmatter({**VALID, "name": 5})
    assert only.code == "name-not-string"
    assert "a number" in only.message


def test_name_must_match_the_directory() -> None:
    (only,) = validate_frontmatter(VALID, directory_name="pdf")
    assert only.code == "name-mismatch"
    assert "'pdf-processing'" in only.message
    assert "'pdf'" in only.message


def test_description_length_bounds() -> None:
    assert validate_frontmatter({**VALID, "description": "x" * DESCRIPTION_MAX_LENGTH}) == ()
    (only,) = validate_frontmatter({**VALID, "description": "x" * (DESCRIPTION_MAX_LENGTH + 1)})
    assert only.code == "description-too-long"
    assert "1025 characters" in only.message
    assert codes(validate_frontmatter({**VALID, "description": ""})) == [
        ("/description", "description-empty")
    ]
    assert codes(validate_frontmatter({**VALID, "description": " \n\t"})) == [
        ("/description", "description-empty")
    ]
    assert codes(validate_frontmatter({**VALID, "description": None})) == [
        ("/description", "description-not-string")
    ]


def test_description_counts_characters_not_bytes() -> None:
    assert validate_frontmatter({**VALID, "description": "é" * DESCRIPTION_MAX_LENGTH}) == ()


def test_compatibility_bounds() -> None:
    assert validate_frontmatter({**VALID, "compatibility": "x" * COMPATIBILITY_MAX_LENGTH}) == ()
    assert codes(validate_frontmatter({**VALID, "compatibility": "x" * 501})) == [
        ("/compatibility", "compatibility-too-long")
    ]
    assert codes(validate_frontmatter({**VALID, "compatibility": ""})) == [
        ("/compatibility", "compatibility-empty")
    ]
    assert codes(validate_frontmatter({**VALID, "compatibility": ["py"]})) == [
        ("/compatibility", "compatibility-not-string")
    ]


def test_metadata_must_map_strings_to_strings() -> None:
    assert validate_frontmatter({**VALID, "metadata": {"author": "me", "version": "1.0"}}) == ()
    data = {**VALID, "metadata": {"version": 1.0, "tags": ["a"], "ok": "x", "nested": {"a": "b"}}}
    assert codes(validate_frontmatter(data)) == [
        ("/metadata/version", "metadata-value-not-string"),
        ("/metadata/tags", "metadata-value-not-string"),
        ("/metadata/nested", "metadata-value-not-string"),
    ]
    assert codes(validate_frontmatter({**VALID, "metadata": None})) == [
        ("/metadata", "metadata-not-mapping")
    ]
    assert codes(validate_frontmatter({**VALID, "metadata": {1: "x"}})) == [
        ("/metadata", "metadata-key-not-string")
    ]
    assert codes(validate_frontmatter({**VALID, "metadata": {"a/b": 2}})) == [
        ("/metadata/a~1b", "metadata-value-not-string")
    ]


def test_fmt_12_reserved_metadata_prefix_is_a_warning() -> None:
    (only,) = validate_frontmatter({**VALID, "metadata": {"io.modelcontextprotocol/x": "1"}})
    assert (only.severity, only.code) == (Severity.WARNING, "metadata-reserved-key")
    assert only.field == "/metadata/io.modelcontextprotocol~1x"


def test_license_must_be_a_string() -> None:
    assert validate_frontmatter({**VALID, "license": "MIT"}) == ()
    assert codes(validate_frontmatter({**VALID, "license": 2})) == [
        ("/license", "license-not-string")
    ]


def test_allowed_tools_is_a_space_separated_string() -> None:
    assert validate_frontmatter({**VALID, "allowed-tools": "Read Grep Bash(git add:*, x)"}) == ()
    (only,) = validate_frontmatter({**VALID, "allowed-tools": ["Read", "Grep"]})
    assert (only.code, only.severity) == ("allowed-tools-not-string", Severity.ERROR)
    assert "not a YAML list" in only.message
    assert codes(validate_frontmatter({**VALID, "allowed-tools": True})) == [
        ("/allowed-tools", "allowed-tools-not-string")
    ]
    (warning,) = validate_frontmatter({**VALID, "allowed-tools": "Read, Write"})
    assert (warning.code, warning.severity) == ("allowed-tools-commas", Severity.WARNING)


def test_every_problem_is_reported_in_field_order() -> None:
    data = {
        "name": "Bad_Name",
        "description": "",
        "compatibility": 3,
        "metadata": [],
        "license": None,
        "allowed-tools": ["Read"],
    }
    assert [code for _, code in codes(validate_frontmatter(data))] == [
        "name-invalid",
        "description-empty",
        "compatibility-not-string",
        "metadata-not-mapping",
        "license-not-string",
        "allowed-tools-not-string",
    ]


def test_finding_str() -> None:
    (only,) = validate_frontmatter(VALID, directory_name="pdf")
    assert str(only).startswith("error: /name: 'name' is 'pdf-processing'")
    whole = validate_frontmatter(3)[0]
    assert str(whole) == "error: frontmatter: the frontmatter must be a mapping, not a number"


# --- validate_skill_md ------------------------------------------------------------------------------


def test_validate_skill_md_of_a_valid_skill() -> None:
    doc = fm("name: pdf\ndescription: Read PDFs.\n")
    assert validate_skill_md(doc, directory_name="pdf") == ()
    assert validate_skill_md(doc.encode(), directory_name="pdf") == ()


def test_fmt_03_skill_md_without_frontmatter_is_one_located_error() -> None:
    (only,) = validate_skill_md(b"# title\n")
    assert (only.severity, only.code, only.line, only.field) == (
        Severity.ERROR,
        "frontmatter-delimiter",
        1,
        "",
    )
    assert "line 1" in only.message


def test_yaml_error_becomes_one_finding() -> None:
    (only,) = validate_skill_md(fm("name: x\ndescription: a: b\n"))
    assert (only.code, only.line) == ("frontmatter-syntax", 3)


def test_validate_skill_md_combines_rules_and_lint() -> None:
    doc = fm("name: x\ndescription: z\nmetadata:\n  updated: 2025-10-20\n  version: 1.0\n")
    assert codes(validate_skill_md(doc, directory_name="z")) == [
        ("/name", "name-mismatch"),
        ("/metadata/version", "metadata-value-not-string"),
        ("/metadata/updated", "portability-date"),
        ("/metadata/version", "portability-number-text"),
    ]


# --- lint_portability -----------------------------------------------------------------------------

LINT_CASES = [
    ("2025-10-20", "portability-date"),
    ("2001-12-14 21:59:43.10 -5", "portability-date"),
    ("2001-12-14T21:59:43Z", "portability-date"),
    ("yes", "portability-bool"),
    ("No", "portability-bool"),
    ("ON", "portability-bool"),
    ("off", "portability-bool"),
    ("y", "portability-bool"),
    ("N", "portability-bool"),
    ("017", "portability-number"),
    ("-017", "portability-number"),
    ("08", "portability-number"),
    ("0o17", "portability-number"),
    ("0b101", "portability-number"),
    ("1_000", "portability-number"),
    ("1_000.5", "portability-number"),
    ("1:20", "portability-number"),
    ("1:20.5", "portability-number"),
    ("+0x1F", "portability-number"),
    ("1e3", "portability-number"),
    ("1.0e3", "portability-number"),
    ("1.0", "portability-number-text"),
    ("2.10", "portability-number-text"),
    (".5", "portability-number-text"),
    ("1.0e+3", "portability-number-text"),
    ("=", "portability-special"),
    ("<<", "portability-special"),
]


@pytest.mark.parametrize(("value", "code"), LINT_CASES, ids=[v for v, _ in LINT_CASES])
def test_lint_flags_values_other_parsers_read_differently(value: str, code: str) -> None:
    """SIL-09: dates, YAML 1.1 booleans and integers, number texts."""
    (only,) = lint_portability(fm(f"name: x\ndescription: d\nv: {value}\n"))
    assert (only.severity, only.field, only.code) == (Severity.WARNING, "/v", code)
    assert (only.file, only.line, only.column) == ("SKILL.md", 4, 4)
    assert "line" not in only.message  # the place is in the fields, not said again


@pytest.mark.parametrize(
    "value",
    [
        "x",
        "'yes'",
        '"2025-10-20"',
        "true",
        "False",
        "null",
        "~",
        "0",
        "17",
        "-5",
        "0x1F",
        "0.5",
        "1.5e-07",
        "00",
        "1.2.3",
        "v1.0",
        "yes please",
        "[a, b]",
        "{a: b}",
        "|\n  yes\n",
    ],
)
def test_lint_accepts_portable_values(value: str) -> None:
    assert lint_portability(fm(f"name: x\ndescription: d\nv: {value}\n")) == ()


def test_lint_looks_inside_collections_and_reports_pointers() -> None:
    doc = fm("a: [yes, {b: 2025-01-01}]\nc:\n  - d: off\n  - 1_0\n")
    assert codes(lint_portability(doc)) == [
        ("/a/0", "portability-bool"),
        ("/a/1/b", "portability-date"),
        ("/c/0/d", "portability-bool"),
        ("/c/1", "portability-number"),
    ]


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("1", "an integer"),
        ("yes", "a boolean"),
        ("true", "a boolean"),
        ("null", "null"),
        ("~", "null"),
        ("1.5", "a float"),
        ("2025-01-01", "a date"),
        ("0o7", "a number"),
        ("=", "a special YAML 1.1 value"),
    ],
)
def test_lint_flags_keys_that_yaml_1_1_types(key: str, kind: str) -> None:
    (only,) = lint_portability(fm(f"name: x\n{key}: v\n"))
    assert (only.code, only.field, only.line) == (
        "portability-key",
        "/" + key.replace("~", "~0"),
        3,
    )
    assert kind in only.message


def test_lint_ignores_quoted_keys() -> None:
    assert lint_portability(fm("'1': v\n\"yes\": w\n")) == ()


def test_lint_flags_keys_inside_flow_mappings() -> None:
    assert codes(lint_portability(fm("m: {1: a, b: on}\n"))) == [
        ("/m/1", "portability-key"),
        ("/m/b", "portability-bool"),
    ]


def test_lint_on_unparseable_frontmatter_reports_the_parse_error() -> None:
    (only,) = lint_portability(b"---\na: 1\na: 2\n---\n")
    assert (only.severity, only.code, only.line) == (Severity.ERROR, "frontmatter-duplicate-key", 3)


def test_lint_multi_line_plain_values() -> None:
    (only,) = lint_portability(fm("a: 2025-10-20\nb: x\n  yes\n"))
    assert only.field == "/a"
