"""What a skill author meets with ``skills-core validate``: paths inside a skill, hidden files and
names that look like secrets, links in the body, SARIF when a run fails, and where a YAML error is
reported."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from check_helpers import write_tree
from sarif_check import check, check_code_scanning

from skills_core.check import validate_entries, validate_folder
from skills_core.cli import main
from skills_core.digest import compute_digest
from skills_core.server.selection import looks_secret
from skills_core.validation import Severity, lint_body, validate_skill_md

GOOD = b"---\nname: pdf-tools\ndescription: Fill PDF forms.\n---\n# PDF tools\n"


def run(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capfd.readouterr()
    assert "Traceback" not in err
    return code, out, err


def codes(report: Any) -> list[tuple[str, str]]:
    return [(f.code, str(f.severity)) for _, f in report.all_findings()]


# --- a path inside a skill selects the skill ---------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_tree(
        tmp_path,
        {
            "skills/pdf-tools/SKILL.md": GOOD,
            "skills/pdf-tools/references/guide.md": b"guide\n",
            "skills/broken/SKILL.md": b"---\nname: broken\n---\n",
            "skills/broken/notes.md": b"n\n",
            "README.md": b"readme\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_file_inside_a_skill_validates_that_skill(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The reported case: ``validate skills/x/notes.md`` exited 2."""
    code, out, err = run(["validate", "skills/broken/notes.md"], capfd)
    assert (code, err) == (1, "")
    assert out.splitlines()[0] == "INVALID  skills/broken"
    assert "skills/broken/SKILL.md: error[description-missing]" in out
    code, out, _ = run(["validate", "skills/pdf-tools/references/guide.md"], capfd)
    assert code == 0
    assert out.startswith("ok       skills/pdf-tools (2 files")
    # a folder inside a skill, and several paths of one skill: the skill once
    code, out, _ = run(
        [
            "validate",
            "skills/pdf-tools/references",
            "skills/pdf-tools/SKILL.md",
            "skills/pdf-tools/references/guide.md",
        ],
        capfd,
    )
    assert (code, out.count("ok       ")) == (0, 1)
    # from inside the skill, a relative path finds the skill above the working directory
    os.chdir(repo / "skills" / "pdf-tools" / "references")
    code, out, _ = run(["validate", "guide.md"], capfd)
    assert (code, out.startswith("ok       ..")) == (0, True)


def test_a_file_in_no_skill_is_an_error_unless_the_paths_are_changed_files(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["validate", "README.md", "skills/pdf-tools/SKILL.md"], capfd)
    assert code == 2
    assert out.startswith("ok       skills/pdf-tools")
    assert err == (
        "skills-core: README.md: not inside a skill (no SKILL.md in its folder or any folder "
        "above it)\n"
    )
    # --changed (pre-commit): files outside skills are passed over, deleted files still count
    code, out, err = run(["validate", "--changed", "README.md"], capfd)
    assert (code, out, err) == (
        0,
        "0 skills checked: 0 valid, 0 invalid; 0 errors, 0 warnings\n",
        "",
    )
    code, out, _ = run(["validate", "--changed", "README.md", "skills/broken/gone.md"], capfd)
    assert (code, out.splitlines()[0]) == (1, "INVALID  skills/broken")
    code, _, err = run(["validate", "skills/broken/gone.md"], capfd)
    assert (code, err) == (2, "skills-core: skills/broken/gone.md: No such file or directory\n")


# --- hidden files and names that look like secrets ---------------------------------------------


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        (".env", True),
        (".env.production", True),
        (".ENV", True),
        ("deploy.pem", True),
        ("tls.key", True),
        ("store.p12", True),
        ("id_rsa", True),
        ("id_ed25519", True),
        ("credentials.json", True),
        ("credentials", True),
        (".netrc", True),
        (".env.example", False),
        (".env.sample", False),
        ("id_rsa.pub", False),
        ("environment.md", False),
        ("keys.md", False),
        ("SKILL.md", False),
    ],
)
def test_names_that_look_like_secrets(name: str, secret: bool) -> None:
    assert looks_secret(name) is secret


def test_hidden_files_are_reported_and_secrets_warned_whether_skipped_or_published(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The reported case: a hidden ``.env`` was silent, and ``--include-hidden`` published it
    without a word."""
    root = write_tree(
        tmp_path / "skills",
        {
            "pdf-tools/SKILL.md": GOOD,
            "pdf-tools/.env": b"TOKEN=x\n",
            "pdf-tools/notes.md~": b"old\n",
            "pdf-tools/.cache/x": b"x\n",
            "pdf-tools/keys/deploy.pem": b"-----BEGIN\n",
            "pdf-tools/drafts/credentials.json": b"{}\n",
        },
    )
    report = validate_folder(root, exclude=["drafts/"])
    skill = report.skills[0]
    assert skill.valid
    found = sorted(
        (os.path.relpath(f.file or "", root), f.code, str(f.severity)) for f in skill.findings
    )
    assert found == [
        ("pdf-tools/.cache", "hidden-file", "note"),
        ("pdf-tools/.env", "secret-file", "warning"),
        ("pdf-tools/keys/deploy.pem", "secret-file", "warning"),
        ("pdf-tools/notes.md~", "hidden-file", "note"),
    ]
    env = next(f for f in skill.findings if f.file and f.file.endswith(".env"))
    assert "not published now (hidden)" in env.message
    # An excluded file that looks like a secret is still in the folder.
    excluded = validate_folder(root, exclude=["credentials.json"])
    assert any(
        f.code == "secret-file" and "(excluded)" in f.message for f in excluded.skills[0].findings
    )
    # --include-hidden publishes .env: now a warning that says so.
    published = validate_folder(root, include_hidden=True, exclude=["drafts/"])
    messages = [f.message for f in published.skills[0].findings if f.code == "secret-file"]
    assert messages == [
        "'.env' looks like a secret and is published with the skill: move it out of the skill "
        "folder",
        "'deploy.pem' looks like a secret and is published with the skill: move it out of the "
        "skill folder",
    ]
    # On the command line: notes never fail, even with --strict; warnings fail under --strict.
    code, out, _ = run(["validate", "--exclude", "drafts/", "--exclude", "*.pem", str(root)], capfd)
    assert code == 0
    assert "note[hidden-file]" in out
    assert out.endswith("0 errors, 2 warnings, 2 notes\n")
    code, _, _ = run(["validate", "--strict", "--ignore", "secret-file", str(root)], capfd)
    assert code == 0
    code, _, _ = run(["validate", "--strict", str(root)], capfd)
    assert code == 1
    code, out, _ = run(["validate", "--format", "github", str(root)], capfd)
    assert "::notice file=" in out


def test_a_listing_that_publishes_a_secret_draws_a_warning() -> None:
    data = b"K=1\n"
    entry = {
        "uri": "skill://pdf-tools/SKILL.md",
        "frontmatter": {"name": "pdf-tools", "description": "d"},
        "resources": [
            {
                "uri": "skill://pdf-tools/SKILL.md",
                "digest": compute_digest(GOOD),
                "size": len(GOOD),
            },
            {"uri": "skill://pdf-tools/.env", "digest": compute_digest(data), "size": len(data)},
        ],
    }
    report = validate_entries(entry)
    assert codes(report) == [("secret-file", "warning")]
    assert report.skills[0].findings[0].field == "/resources/1/uri"
    assert report.passes()


def test_manifest_marks_secrets(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    root = write_tree(
        tmp_path / "skills",
        {"pdf-tools/SKILL.md": GOOD, "pdf-tools/.env": b"K\n", "pdf-tools/a.pem": b"p\n"},
    )
    code, out, _ = run(["manifest", str(root)], capfd)
    assert code == 0
    assert "    warning a.pem: looks like a secret and is published" in out
    assert "skipped pdf-tools/.env: hidden" in out
    assert "(and looks like a secret:" in out
    code, out, _ = run(["manifest", "--json", "--include-hidden", str(root)], capfd)
    document = json.loads(out)
    assert sorted(w["message"].split()[0] for w in document["warnings"]) == [".env", "a.pem"]
    code, out, _ = run(["manifest", "--json", str(root)], capfd)
    assert [s["looksSecret"] for s in json.loads(out)["skipped"]] == [True]


# --- links in the body, and its length ---------------------------------------------------------


def test_links_to_files_the_skill_does_not_publish(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    body = (
        b"See [the guide](references/guide.md), [forms](references/FORMS.md),\n"
        b'[up](../common/notes.md), ![logo](assets/logo.png "Logo"), [site](https://e.org),\n'
        b"`[in code](nope.md)`, [anchor](#usage), [folder](references/)\n"
        b"```\n[fenced](nope.md)\n```\n"
        b"[hidden](references/.draft.md) [win](scripts\\fill.py)\n"
        b"[def]: missing.md\n"
    )
    root = write_tree(
        tmp_path / "skills",
        {
            "pdf-tools/SKILL.md": GOOD + body,
            "pdf-tools/references/guide.md": b"g\n",
            "pdf-tools/references/.draft.md": b"d\n",
            "pdf-tools/assets/logo.png": b"\x89PNG",
        },
    )
    report = validate_folder(root)
    placed = [
        (f.code, f.line, f.column)
        for f in report.skills[0].findings
        if f.code.startswith("reference-")
    ]
    assert placed == [  # each at the column where the link's destination starts
        ("reference-missing", 6, 47),
        ("reference-invalid", 7, 6),
        ("reference-missing", 12, 10),
        ("reference-invalid", 12, 38),
        ("reference-missing", 13, 8),
    ]
    assert report.skills[0].valid  # warnings: the skill is served all the same
    code, out, _ = run(["validate", str(root)], capfd)
    assert code == 0
    assert f"{root}/pdf-tools/SKILL.md:6:47: warning[reference-missing]" in out
    assert "'references/FORMS.md', which the skill does not publish" in out


def test_a_long_skill_md_draws_a_warning(tmp_path: Path) -> None:
    long = GOOD + b"line\n" * 495
    assert lint_body(long, None) == ()  # 500 lines exactly
    (finding,) = lint_body(long + b"one more\n", None)
    assert (finding.code, finding.line, finding.severity) == (
        "body-too-long",
        501,
        Severity.WARNING,
    )
    assert "501 lines" in finding.message
    assert lint_body(b"no frontmatter\n" * 600, None) == ()


# --- SARIF whenever it is asked ---------------------------------------------------------------


def test_a_failed_run_still_writes_a_valid_sarif_log(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported case: an exit 2 left an empty SARIF file for the upload step."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["validate", "--format", "sarif", "no-such-folder"], capfd)
    assert code == 2
    assert err == "skills-core: no-such-folder: No such file or directory\n"
    log = json.loads(out)
    assert check(log) == []
    assert check_code_scanning(log) == []
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation == {
        "executionSuccessful": False,
        "exitCode": 2,
        "toolExecutionNotifications": [
            {"level": "error", "message": {"text": "no-such-folder: No such file or directory"}}
        ],
    }
    assert log["runs"][0]["results"] == []
    # --sarif FILE: the log is written beside any other format, on success and on failure
    write_tree(tmp_path, {"skills/pdf-tools/SKILL.md": GOOD, "empty/.keep": b""})
    code, out, _ = run(["validate", "--sarif", "out.sarif", "skills", "empty"], capfd)
    assert code == 2
    assert out.startswith("ok       skills/pdf-tools")
    log = json.loads((tmp_path / "out.sarif").read_text())
    assert check(log) == []
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["toolExecutionNotifications"][0]["message"]["text"].startswith(
        "empty: no skill found"
    )
    code, _, _ = run(["validate", "--sarif", "out.sarif", "--ignore", "nope", "skills"], capfd)
    assert code == 2
    log = json.loads((tmp_path / "out.sarif").read_text())
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False
    code, _, _ = run(["validate", "--sarif", "out.sarif", "skills"], capfd)
    assert code == 0
    log = json.loads((tmp_path / "out.sarif").read_text())
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]
    code, _, err = run(["validate", "--sarif", str(tmp_path / "no" / "x.sarif"), "skills"], capfd)
    assert code == 2
    assert "--sarif" in err


# --- where a YAML error is reported -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "place", "fragment"),
    [
        # the reported case: the quote opens at 3:14; the parser gave up at 4:1
        (b"---\nname: x\ndescription: 'abc\nmore\n---\n", (3, 14), "unterminated single-quoted"),
        (b'---\nname: x\ndescription: "abc\nother: "y"\n---\n', (3, 14), "unterminated double"),
        (b'---\nname: x\nmeta: {a: "abc, b: 1}\nz: 1\n---\n', (3, 11), "unterminated double"),
        # a string that does close, on a line not indented: the indentation is the problem
        (b'---\nname: x\ndescription: "abc\nmore"\n---\n', (4, 1), "indented more"),
    ],
)
def test_an_unterminated_quoted_string_is_reported_where_it_opens(
    text: bytes, place: tuple[int, int], fragment: str
) -> None:
    (finding,) = validate_skill_md(text)
    assert (finding.code, (finding.line, finding.column)) == ("frontmatter-syntax", place)
    assert fragment in finding.message
