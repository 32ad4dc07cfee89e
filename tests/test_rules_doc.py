"""The registry of finding codes (``skills_core.rules``), ``docs/rules.md`` and ``--explain`` agree
with the code: every code the engine can emit has an entry, the page is what ``scripts/rules-doc``
writes, and ``validate --explain CODE`` prints the entry."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_docs import anchors

from skills_core.check import SkillReport, SubjectKind, ValidationReport
from skills_core.ci import to_sarif
from skills_core.cli import main
from skills_core.errors import FrontmatterErrorKind
from skills_core.rules import FAMILIES, RULES, RULES_URL, explain, help_uri
from skills_core.server.model import OmitCode, ProblemCode
from skills_core.validation import Finding, Severity

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "rules.md"

#: The modules that make findings (or entry problems, which become findings).
SOURCES = [
    "skills_core/validation.py",
    "skills_core/check.py",
    "skills_core/_file_findings.py",
    "skills_core/entry.py",
    "skills_core/server/catalog.py",
    "skills_core/server/_rules.py",
    "skills_core/cli/manifest.py",
    "skills_core/server_check/_walk.py",
]
#: Functions whose second positional argument is a finding code.
CODE_SECOND = {"_error", "_warning", "warning"}
#: Codes made by f-strings, by their shape (``*`` for the formatted part): every spelling each
#: shape takes in the code. A new f-string code fails the test until it is listed here.
SHAPES = {
    "*-missing": {"name-missing", "description-missing", "missing-uri"},
    "missing-*": {"missing-uri", "missing-digest", "missing-size"},
    "*-not-string": {"name-not-string", "description-not-string", "compatibility-not-string"},
    "*-empty": {"description-empty", "compatibility-empty"},
    "*-too-long": {"description-too-long", "compatibility-too-long"},
    "frontmatter-*": {f"frontmatter-{kind}" for kind in FrontmatterErrorKind},
}
CODE = re.compile(r"[a-z]+(?:-[a-z0-9]+)+|[a-z]+")


def _shape(node: ast.JoinedStr) -> str:
    return "".join(
        str(part.value) if isinstance(part, ast.Constant) else "*" for part in node.values
    )


def codes_in_source() -> tuple[set[str], set[str]]:
    """``(codes, shapes)``: the literal codes the source passes where a code goes, and the
    shapes of the f-string ones."""
    codes: set[str] = set()
    shapes: set[str] = set()

    def take(node: ast.AST | None) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            codes.add(node.value)
        elif isinstance(node, ast.JoinedStr):
            shapes.add(_shape(node))
        elif isinstance(node, ast.IfExp):
            take(node.body)
            take(node.orelse)

    for name in SOURCES:
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if called in CODE_SECOND and len(node.args) > 1:
                    take(node.args[1])
                for keyword in node.keywords:
                    if keyword.arg == "code":
                        take(keyword.value)
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
                first = node.value.elts[0] if node.value.elts else None
                if isinstance(first, ast.Constant) and str(first.value).count("-"):
                    take(first)  # _lint_value's ("portability-...", message)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "code" for t in node.targets
            ):
                take(node.value)
    return {c for c in codes if CODE.fullmatch(c)}, shapes


def test_the_source_scan_finds_codes_of_every_kind() -> None:
    codes, shapes = codes_in_source()
    # keywords, second arguments, returned tuples, assignments, f-strings
    assert {"bad-digest", "duplicate-name", "portability-date", "too-large"} <= codes
    assert {"secret-file", "hidden-file", "reference-missing", "body-too-long"} <= codes
    assert {"*-missing", "frontmatter-*"} <= shapes


def test_every_code_the_engine_can_emit_has_an_entry() -> None:
    """A code without an entry in the registry (and so on docs/rules.md) fails here."""
    codes, shapes = codes_in_source()
    unknown_shapes = shapes - SHAPES.keys()
    assert not unknown_shapes, f"f-string codes to list in SHAPES: {unknown_shapes}"
    for shape in shapes:
        codes |= SHAPES[shape]
    codes |= {str(code) for code in ProblemCode}
    codes |= {str(code) for code in OmitCode} - {"over-limit"}  # reported as too-large
    missing = sorted(codes - RULES.keys())
    assert not missing, f"codes without an entry in skills_core/rules.py: {missing}"


def test_every_rule_is_complete_and_in_a_family() -> None:
    families = [family for family, _, _ in FAMILIES]
    assert families[-1] == "server"  # the place of check --server's codes
    for rule in RULES.values():
        assert rule.family in families, rule.code
        assert CODE.fullmatch(rule.code), rule.code
        assert all((rule.summary, rule.help, rule.why)), rule.code
        if rule.code != "unavailable":  # a dynamic skill has no folder to show
            assert all((rule.bad, rule.good)), rule.code


def test_the_page_is_what_the_script_writes() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "rules-doc"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_the_script_catches_a_stale_page(tmp_path: Path) -> None:
    script = (ROOT / "scripts" / "rules-doc").read_text(encoding="utf-8")
    page = tmp_path / "docs" / "rules.md"
    page.parent.mkdir()
    page.write_text(PAGE.read_text(encoding="utf-8").replace("### `too-large`", "### `big`"))
    copy = tmp_path / "scripts" / "rules-doc"
    copy.parent.mkdir()
    copy.write_text(
        script.replace("sys.path.insert(0, str(ROOT))", f"sys.path.insert(0, {str(ROOT)!r})")
    )
    result = subprocess.run(
        [sys.executable, str(copy), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert "docs/rules.md is out of date" in result.stderr
    subprocess.run([sys.executable, str(copy)], check=True)
    assert page.read_text(encoding="utf-8") == PAGE.read_text(encoding="utf-8")


def test_every_code_has_an_anchor_and_sarif_links_to_it() -> None:
    found = anchors(PAGE)
    assert set(RULES) <= found
    assert {"live-servers", "the-frontmatter-parses", "skill-entries"} <= found
    finding = Finding(severity=Severity.NOTE, field="", code="hidden-file", message="m", file="x")
    report = ValidationReport(
        skills=(SkillReport(kind=SubjectKind.FOLDER, path="x", findings=(finding,)),)
    )
    log: Any = to_sarif(report, rules_url="https://example.org/docs/rules.md")
    (run,) = log["runs"]
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["helpUri"] == f"https://example.org/docs/rules.md#{rule['id']}"
        assert rule["id"] in found
        assert rule["fullDescription"]["text"]
        assert "docs/requirements.md#" not in rule["help"]["markdown"] or (
            "https://example.org/docs/requirements.md#" in rule["help"]["markdown"]
        )
    assert run["results"][0]["level"] == "note"
    assert help_uri("x") == RULES_URL + "#x"


@pytest.mark.parametrize("code", sorted(RULES))
def test_explain_prints_the_entry(code: str, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--explain", code]) == 0
    out, err = capfd.readouterr()
    assert err == ""
    rule = RULES[code]
    assert out == explain(rule)
    assert out.startswith(f"{code} ({rule.severity}): {rule.summary}\n")
    assert f"More: {RULES_URL}#{code}\n" in out
    assert "Silence it: " in out


def test_explain_of_an_unknown_code_suggests_one(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--explain", "name-mising"]) == 2
    out, err = capfd.readouterr()
    assert out == ""
    assert "'name-mising' is not a finding code; did you mean 'name-missing'?" in err
    assert main(["validate", "--explain", "x", "--rules-url", "https://e.org/r.md"]) == 2
    capfd.readouterr()
    assert main(["validate", "--explain", "too-large", "--rules-url", "https://e.org/r.md"]) == 0
    assert "More: https://e.org/r.md#too-large\n" in capfd.readouterr().out


def test_the_old_codes_of_one_rule_are_gone() -> None:
    """One code per rule: the entry-mode spellings of the Agent Skills rules are not codes."""
    for old in ("missing-name", "bad-name", "missing-description", "bad-description"):
        assert old not in RULES
    assert "not-a-mapping" not in RULES
