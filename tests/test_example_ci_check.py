"""examples/ci_check.py runs and does what its docstring says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from check_helpers import write_tree
from sarif_check import check, check_code_scanning

from skills_core import spec_examples as ex

ROOT = Path(__file__).resolve().parents[1]


def run_example(cwd: Path, *args: str, github: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GITHUB_ACTIONS": "true" if github else ""}
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "ci_check.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


def test_ci_check_passes_a_clean_tree_and_reports_changes(tmp_path: Path) -> None:
    write_tree(tmp_path / "base", {f"pdf-processing/{p}": d for p, d in ex.FILES.items()})
    write_tree(
        tmp_path / "head", {f"pdf-processing/{p}": d for p, d in ex.FILES_WITH_CREDIT_NOTE.items()}
    )
    result = run_example(tmp_path, "head", "--baseline", "base", "--sarif", "out.sarif")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "1 skills, 0 errors, 0 warnings",
        "changed: skill://pdf-processing/SKILL.md file templates/credit-note.md (added, 39 bytes)",
    ]
    log = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    assert check(log) == []
    assert log["runs"][0]["results"] == []


def test_ci_check_fails_on_errors_and_annotates_under_github_actions(tmp_path: Path) -> None:
    write_tree(tmp_path / "skills", {"bad/SKILL.md": b"---\nname: Bad\ndescription: d\n---\n"})
    result = run_example(tmp_path, "skills", "--sarif", "out.sarif", github=True)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith(
        "::error file=skills/bad/SKILL.md,line=2,col=7,title=skills-core name-invalid::"
    )
    log = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    assert check(log) == []
    assert check_code_scanning(log) == []
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["name-invalid"]
    plain = run_example(tmp_path, "skills")
    assert plain.stdout.startswith("skills/bad/SKILL.md:2:7: error[name-invalid] ")
