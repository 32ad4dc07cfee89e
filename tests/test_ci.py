"""Reports for CI (``skills_core.ci``): SARIF 2.1.0 that code scanning accepts, GitHub workflow
commands that no skill folder can break out of."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from frontmatter_helpers import CORPUS_FILES
from hypothesis import given
from hypothesis import strategies as st
from sarif_check import check, check_code_scanning

from skills_core.check import SkillReport, SubjectKind, ValidationReport, validate_folder
from skills_core.ci import (
    RULES,
    escape_data,
    escape_property,
    github_commands,
    rule_for,
    to_sarif,
)
from skills_core.cli import main
from skills_core.display import display
from skills_core.errors import FrontmatterError
from skills_core.rules import RULES_URL
from skills_core.server.model import OmitCode, ProblemCode
from skills_core.validation import Finding, Severity


def finding(code: str = "name-invalid", **fields: Any) -> Finding:
    values: dict[str, Any] = {
        "severity": Severity.ERROR,
        "field": "/name",
        "code": code,
        "message": "m",
        **fields,
    }
    return Finding(**values)


def report_of(*findings: Finding, path: str = "skills/x") -> ValidationReport:
    return ValidationReport(
        skills=(SkillReport(kind=SubjectKind.FOLDER, path=path, findings=findings),)
    )


# --- the checker itself catches what it must --------------------------------------------------


def minimal_log() -> dict[str, Any]:
    return to_sarif(report_of(finding(file="skills/x/SKILL.md", line=2, column=7)), base="/w")


@pytest.mark.parametrize(
    ("damage", "complaint"),
    [
        (lambda log: log.pop("version"), "'version' is required"),
        (lambda log: log.__setitem__("version", "2.0.0"), "is not one of"),
        (lambda log: log["runs"][0]["results"][0].__setitem__("level", "fatal"), "is not one of"),
        (lambda log: log["runs"][0]["results"][0].__setitem__("ruleID", "x"), "not allowed"),
        (lambda log: log["runs"][0]["results"][0].__setitem__("message", {}), "matches none"),
        (
            lambda log: log["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
                "region"
            ].__setitem__("startLine", 0),
            "below 1",
        ),
        (
            lambda log: log["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
                "artifactLocation"
            ].__setitem__("uri", "a b"),
            "not a uri-reference",
        ),
        (
            lambda log: log["runs"][0]["tool"]["driver"]["rules"][0].__setitem__("helpUri", "x"),
            "not a uri",
        ),
        (
            lambda log: log["runs"][0]["tool"]["driver"]["rules"].append(
                log["runs"][0]["tool"]["driver"]["rules"][0]
            ),
            "not unique",
        ),
        (lambda log: log["runs"][0].pop("tool"), "'tool' is required"),
        (lambda log: log["runs"][0]["invocations"][0].pop("executionSuccessful"), "required"),
        (lambda log: log["runs"][0]["results"][0].__setitem__("ruleIndex", True), "expected"),
        (
            lambda log: log["runs"][0]["invocations"][0].__setitem__(
                "toolExecutionNotifications", [{"level": "fatal", "message": {"text": "x"}}]
            ),
            "is not one of",
        ),
        (
            lambda log: log["runs"][0]["invocations"][0].__setitem__(
                "toolExecutionNotifications", [{"level": "error"}]
            ),
            "'message' is required",
        ),
    ],
)
def test_the_structural_check_catches_broken_logs(damage: Any, complaint: str) -> None:
    log = minimal_log()
    assert check(log) == []
    broken = copy.deepcopy(log)
    damage(broken)
    assert any(complaint in error for error in check(broken)), check(broken)


def test_the_code_scanning_check_catches_what_github_needs() -> None:
    log = minimal_log()
    assert check_code_scanning(log) == []
    result = log["runs"][0]["results"][0]
    result["ruleId"] = "nope"
    del result["locations"][0]["physicalLocation"]["region"]["startLine"]
    errors = check_code_scanning(log)
    assert any("not a rule" in e for e in errors)
    assert any("startLine" in e for e in errors)


# --- SARIF ----------------------------------------------------------------------------------


def test_sarif_places_results_and_describes_rules() -> None:
    report = report_of(
        finding(file="skills/x/SKILL.md", line=2, column=7),
        finding("description-missing", file="skills/x/SKILL.md"),
        finding("symlink", severity=Severity.WARNING, field="", file="/w/skills/x/link\n.md"),
        finding("too-large", field="/resources", file="/elsewhere/x/SKILL.md"),
        finding("made-up-code", field=""),
    )
    log: Any = to_sarif(report, base="/w", exit_code=1)
    assert check(log) == []
    assert check_code_scanning(log) == []
    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": "file:///w/"}}
    places = [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["artifactLocation"],
            r["locations"][0]["physicalLocation"]["region"],
        )
        for r in run["results"]
    ]
    assert places == [
        ("name-invalid", "error", {"uri": "skills/x/SKILL.md", "uriBaseId": "%SRCROOT%"},
         {"startLine": 2, "startColumn": 7}),
        ("description-missing", "error", {"uri": "skills/x/SKILL.md", "uriBaseId": "%SRCROOT%"},
         {"startLine": 1}),
        ("symlink", "warning", {"uri": "skills/x/link%0A.md", "uriBaseId": "%SRCROOT%"},
         {"startLine": 1}),
        ("too-large", "error", {"uri": "file:///elsewhere/x/SKILL.md"}, {"startLine": 1}),
        ("made-up-code", "error", {"uri": "skills/x", "uriBaseId": "%SRCROOT%"}, {"startLine": 1}),
    ]  # fmt: skip
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules[: len(RULES)]] == list(RULES)
    assert rules[-1]["id"] == "made-up-code"
    invalid = rules[run["results"][0]["ruleIndex"]]
    assert invalid["name"] == "NameInvalid"
    assert invalid["helpUri"] == RULES_URL + "#name-invalid"
    assert invalid["fullDescription"]["text"].startswith("'name' breaks the naming rules. ")
    assert "URI-07" in invalid["fullDescription"]["text"]
    assert "```text\nname: PDF_Tools" not in invalid["help"]["markdown"]  # examples are fenced
    assert "Fails:\n\n```text\n---\nname: PDF_Tools" in invalid["help"]["markdown"]
    assert (
        "(https://github.com/skills-core/skills-core/blob/main/docs/requirements.md#uri-07)"
        in (invalid["help"]["markdown"])
    )
    assert invalid["defaultConfiguration"] == {"level": "error"}
    assert run["results"][0]["message"]["text"] == "/name: m"


def test_sarif_keeps_the_exact_bytes_of_names_that_are_not_utf8() -> None:
    name = b"skills/x/bad\xff\xe2\x80\xae.md".decode("utf-8", "surrogateescape")
    log: Any = to_sarif(report_of(finding("symlink", file=name, message=f"{name} is a link")))
    (result,) = log["runs"][0]["results"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "skills/x/bad%FF%E2%80%AE.md"
    assert "\u202e" not in result["message"]["text"]  # shown as an escape, never reversing text
    json.dumps(log, ensure_ascii=False).encode("utf-8")  # strict UTF-8 throughout


def test_every_code_the_engine_makes_has_a_rule() -> None:
    kinds = ["syntax", "unsupported", "limit", "duplicate-key", "schema", "encoding", "delimiter"]
    codes = {f"frontmatter-{kind}" for kind in kinds}
    codes |= {str(code) for code in ProblemCode}
    codes |= {str(code) for code in OmitCode} - {"over-limit", "name-mismatch"}
    assert codes <= set(RULES)
    assert FrontmatterError("x", kind="syntax").kind in kinds
    assert rule_for(finding("name-mismatch")) is RULES["name-mismatch"]
    unknown = rule_for(finding("no-such-code", severity=Severity.WARNING))
    assert (unknown.severity, unknown.name) == (Severity.WARNING, "NoSuchCode")


def test_validate_sarif_on_the_corpus_passes_the_structural_check(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shared corpus (4,986 SKILL.md files) as SARIF 2.1.0 for code scanning."""
    if not CORPUS_FILES.is_dir():
        pytest.skip("the shared corpus (../shared/corpus) is not beside this checkout")
    monkeypatch.chdir(CORPUS_FILES.parent)
    code = main(["validate", "--format", "sarif", "--include-hidden", CORPUS_FILES.name])
    out, err = capfd.readouterr()
    assert code == 1, err
    log = json.loads(out)
    assert check(log) == []
    assert check_code_scanning(log) == []
    (run,) = log["runs"]
    report = validate_folder(CORPUS_FILES, include_hidden=True)
    assert len(run["results"]) == report.error_count + report.warning_count
    assert len(run["results"]) > 2_000
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert all(uri.startswith("skill-md/") for uri in uris)
    assert all(
        "uriBaseId" in r["locations"][0]["physicalLocation"]["artifactLocation"]
        for r in run["results"]
    )
    assert (
        sum(
            "startColumn" in r["locations"][0]["physicalLocation"]["region"] for r in run["results"]
        )
        > 1_000
    )
    assert "4986 skills checked" in err


# --- GitHub workflow commands -----------------------------------------------------------------

_ESCAPES = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def unescape(text: str) -> str:
    """What the runner does with an escaped value (one pass, so that escapes never compound)."""
    return re.sub("%25|%0D|%0A|%3A|%2C", lambda m: _ESCAPES[m.group()], text)


@given(st.text())
def test_escaped_data_round_trips_and_never_ends_the_line(text: str) -> None:
    escaped = escape_data(text)
    assert "\n" not in escaped
    assert "\r" not in escaped
    assert unescape(escaped) == text


@given(st.text())
def test_escaped_properties_round_trip_and_hold_no_separator(text: str) -> None:
    escaped = escape_property(text)
    assert not set("\r\n:,") & set(escaped)
    assert unescape(escaped) == text


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    head, _, message = line[2:].partition("::")
    command, _, props = head.partition(" ")
    properties = dict(p.split("=", 1) for p in props.split(","))
    return command, {k: unescape(v) for k, v in properties.items()}, unescape(message)


def test_github_commands_place_each_finding(tmp_path: Path) -> None:
    report = report_of(
        finding(file=str(tmp_path / "skills/x/SKILL.md"), line=2, column=7, message="50%, a: b"),
        finding("portability-date", severity=Severity.WARNING, field="/d", file="rel/SKILL.md"),
    )
    first, second = github_commands(report, base=str(tmp_path))
    assert first.startswith(
        "::error file=skills/x/SKILL.md,line=2,col=7,title=skills-core name-invalid::"
    )
    assert parse_command(first) == (
        "error",
        {"file": "skills/x/SKILL.md", "line": "2", "col": "7", "title": "skills-core name-invalid"},
        "/name: 50%, a: b",
    )
    assert parse_command(second)[:2] == (
        "warning",
        {"file": "rel/SKILL.md", "title": "skills-core portability-date"},
    )


_HOSTILE = st.text(
    st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=20
).filter(lambda name: name not in (".", ".."))


@given(_HOSTILE, _HOSTILE)
def test_no_name_or_message_can_forge_a_command(name: str, message: str) -> None:
    path = f"skills/x/{name}"
    report = report_of(finding("symlink", file=path, message=message, field=""))
    (line,) = github_commands(report, base="/w")
    assert "\n" not in line
    assert "\r" not in line
    command, properties, shown = parse_command(line)
    assert command == "error"
    assert set(properties) == {"file", "title"}
    assert properties["file"] == display(path)
    assert shown == display(message)


def test_hostile_file_names_on_disk_stay_inside_their_annotation(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    skill = root / "x"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: x\ndescription: d\n---\n")
    (skill / "a\n::error file=forged::pwned,b").symlink_to("/etc/passwd")
    (skill / "rev\u202egnp.md").symlink_to("/etc/passwd")
    report = validate_folder(root)
    lines = github_commands(report, base=str(tmp_path))
    assert len(lines) == 2
    assert all(line.startswith("::warning file=skills/x/") for line in lines)
    files = sorted(parse_command(line)[1]["file"] for line in lines)
    assert files == ["skills/x/a\\n::error file=forged::pwned,b", "skills/x/rev\\u202egnp.md"]
