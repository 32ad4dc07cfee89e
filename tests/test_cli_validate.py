"""``skills-core validate`` and ``skills-core diff``: formats, exit codes (0 / 1 / 2), escaping."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from check_helpers import spec_entry, write_tree

from skills_core import spec_examples as ex
from skills_core.cli import main

ROOT = Path(__file__).resolve().parents[1]


def write_skill(root: Path, files: dict[str, bytes], name: str = "pdf-processing") -> Path:
    return write_tree(root / name, files)


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, ex.FILES)
    return root


def run(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capfd.readouterr()
    assert "Traceback" not in err
    return code, out, err


BAD = (
    b"---\nname: Bad_Name\ndescription: d\ncreated: 2025-10-20\nallowed-tools: [Bash, Read]\n---\n"
)


# --- folders, text ----------------------------------------------------------------------------


def test_a_valid_folder_exits_0(skills: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["validate", str(skills / "pdf-processing")], capfd)
    assert code == 0
    assert out.splitlines() == [
        f"ok       {skills / 'pdf-processing'} (3 files, 215 bytes)",
        "1 skill checked: 1 valid, 0 invalid; 0 errors, 0 warnings",
    ]
    code, _, _ = run(["validate", str(skills / "pdf-processing" / "SKILL.md")], capfd)
    assert code == 0
    code, out, _ = run(["validate", "--json", str(skills)], capfd)
    assert code == 0
    document = json.loads(out)
    assert document["valid"] is True
    assert document["results"][0]["files"] == 3


def test_every_finding_is_placed_and_the_exit_is_1(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = write_skill(tmp_path, {"SKILL.md": BAD}, "bad-dir")
    code, out, _ = run(["validate", str(folder)], capfd)
    assert code == 1
    file = folder / "SKILL.md"
    assert out.splitlines() == [
        f"INVALID  {folder}",
        f"  {file}:2:7: error[name-invalid] /name: skill name 'Bad_Name' must use only lowercase "
        "ASCII letters, digits and single hyphens, and must not start or end with a hyphen",
        f"  {file}:4:10: warning[portability-date] /created: '2025-10-20' is a date to YAML 1.1 "
        "parsers (PyYAML builds a date object, js-yaml a Date) but a string in YAML 1.2; quote it",
        f"  {file}:5:16: error[allowed-tools-not-string] /allowed-tools: 'allowed-tools' must be "
        "one space-separated string (Agent Skills), not a YAML list; write e.g. 'allowed-tools: "
        "Read Grep Bash(git:*)'",
        "1 skill checked: 0 valid, 1 invalid; 2 errors, 1 warning",
    ]
    code, out, _ = run(["validate", "--format", "json", str(folder)], capfd)
    assert code == 1
    (result,) = json.loads(out)["results"]
    assert [(f["code"], f["line"], f["column"]) for f in result["findings"]] == [
        ("name-invalid", 2, 7),
        ("portability-date", 4, 10),
        ("allowed-tools-not-string", 5, 16),
    ]
    assert result["findings"][0]["file"] == str(file)


def test_a_yaml_error_has_its_line_and_column(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = write_skill(
        tmp_path, {"SKILL.md": b"---\nname: x\nname: y\ndescription: d\n---\n"}, "x"
    )
    code, out, _ = run(["validate", str(folder)], capfd)
    assert code == 1
    assert (
        f"{folder / 'SKILL.md'}:3:1: error[frontmatter-duplicate-key] duplicate key 'name'" in out
    )


def test_an_over_limit_folder(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """ENTRY-19: 513 files; the count and the limit are named."""
    files = {"SKILL.md": b"---\nname: big\ndescription: d\n---\n"}
    files.update({f"f{i}.txt": b"x" for i in range(512)})
    folder = write_skill(tmp_path, files, "big")
    code, out, _ = run(["validate", str(folder)], capfd)
    assert code == 1
    assert "error[too-many-resources] /resources: the skill has 513 files; the limit is 512" in out


# --- exit codes, --ignore, --strict -----------------------------------------------------------


def test_ignore_and_strict(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    folder = write_skill(
        tmp_path, {"SKILL.md": b"---\nname: x\ndescription: d\nv: 2025-10-20\n---\n"}, "x"
    )
    assert run(["validate", str(folder)], capfd)[0] == 0
    code, out, _ = run(["validate", "--strict", str(folder)], capfd)
    assert code == 1
    assert out.endswith("0 errors, 1 warning (--strict: warnings fail)\n")
    code, out, _ = run(["validate", "--strict", "--ignore", "portability-date", str(folder)], capfd)
    assert code == 0
    assert out.endswith("0 errors, 0 warnings, 1 ignored\n")
    bad = write_skill(tmp_path, {"SKILL.md": BAD}, "bad-dir")
    argv = ["validate", "--ignore", "name-invalid", "--ignore", "allowed-tools-not-string"]
    code, out, _ = run([*argv, str(bad)], capfd)
    assert code == 1  # the messages go, the verdict stays: serve refuses this skill
    assert out.startswith(
        f"INVALID  {bad} [errors ignored, still refused: name-invalid, allowed-tools-not-string]\n"
    )
    assert out.endswith("0 valid, 1 invalid; 0 errors, 1 warning, 2 ignored\n")


def test_ignoring_description_missing_still_fails_a_skill_serve_refuses(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The reported case: ``--ignore description-missing`` printed ``ok`` and exited 0."""
    folder = write_skill(tmp_path, {"SKILL.md": b"---\nname: x\n---\nbody\n"}, "x")
    for output in ("text", "json", "sarif", "github"):
        code, out, _ = run(
            ["validate", "--format", output, "--ignore", "description-missing", str(folder)], capfd
        )
        assert code == 1, output
        assert "description-missing" in out or output == "sarif", output
    code, out, _ = run(
        ["validate", "--json", "--ignore", "description-missing", str(folder)], capfd
    )
    assert json.loads(out)["valid"] is False


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["validate"], "give PATH"),
        (["validate", "/nonexistent/x"], "/nonexistent/x: No such file or directory"),
        (["validate", "--entries", "/nonexistent.json"], "--entries /nonexistent.json"),
        (["validate", "--format", "xml", "."], "invalid choice: 'xml'"),
        (["validate", "--bogus", "."], "unrecognized arguments: --bogus"),
        (["validate", "--ignore", "portabilty-date", "."], "did you mean 'portability-date'"),
        (["diff", "only-one"], "the following arguments are required: NEW"),
        (["diff", "/nonexistent/a", "/nonexistent/b"], "/nonexistent/a: No such file"),
    ],
)
def test_usage_and_io_errors_exit_2(
    args: list[str], fragment: str, capfd: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(args, capfd)
    assert code == 2
    assert fragment in err
    assert err.count("\n") == 1
    assert out == ""


def test_inputs_that_are_not_skills_exit_2(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text("{")
    code, _, err = run(["validate", "--entries", str(junk)], capfd)
    assert (code, "not JSON" in err) == (2, True)
    code, _, err = run(["validate", str(junk)], capfd)
    assert (code, "not inside a skill" in err) == (2, True)
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(["validate", str(empty)], capfd)
    assert (code, "no skill found" in err) == (2, True)
    assert out.endswith("0 skills checked: 0 valid, 0 invalid; 0 errors, 0 warnings\n")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"uri": "\xe9"}')
    code, _, err = run(["validate", "--entries", str(latin)], capfd)
    assert (code, "not UTF-8" in err) == (2, True)
    duplicated = tmp_path / "dup.json"
    duplicated.write_text(
        json.dumps(ex.entry_json()).replace('"uri": ', '"uri": "skill://x/SKILL.md", "uri": ', 1)
    )
    code, _, err = run(["validate", "--entries", str(duplicated)], capfd)
    assert (code, "duplicate object key 'uri'" in err) == (2, True)


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"skills": []},
        {"jsonrpc": "2.0", "id": 1, "result": {"skills": [], "resultType": "complete"}},
    ],
)
def test_nothing_to_validate_exits_2_from_a_folder_or_from_entries(
    document: object, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """One rule for both inputs: an empty folder and an empty list of entries are usage errors
    (exit 2), the report printed, then one line saying which input held nothing."""
    empty_folder = tmp_path / "empty"
    empty_folder.mkdir()
    empty_entries = tmp_path / "empty.json"
    empty_entries.write_text(json.dumps(document))
    folder = run(["validate", str(empty_folder)], capfd)
    entries = run(["validate", "--entries", str(empty_entries)], capfd)
    summary = "0 skills checked: 0 valid, 0 invalid; 0 errors, 0 warnings\n"
    assert folder == (
        2,
        summary,
        f"skills-core: {empty_folder}: no skill found (no folder at or "
        "below it holds a SKILL.md)\n",
    )
    assert entries == (
        2,
        summary,
        f"skills-core: --entries {empty_entries}: no skill entry found "
        "(its list of entries is empty)\n",
    )
    code, out, _ = run(["validate", "--json", "--entries", str(empty_entries)], capfd)
    assert (code, json.loads(out)["summary"]["skills"]) == (2, 0)


def test_an_empty_input_beside_good_ones_still_exits_2(
    skills: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"skills": [ex.entry_json()]}))
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    code, out, err = run(["validate", "--entries", str(good), "--entries", str(empty)], capfd)
    assert code == 2
    assert out.startswith(f"ok       {good}[0]")
    assert (
        err
        == f"skills-core: --entries {empty}: no skill entry found (its list of entries is empty)\n"
    )
    code, _, err = run(["validate", str(skills), "--entries", str(empty)], capfd)
    assert (code, err.count("\n"), "no skill entry found" in err) == (2, 1, True)
    # JSON lines: the file is empty only when every page is; an empty last page is no error
    pages = tmp_path / "pages.jsonl"
    pages.write_text('{"skills": []}\n{"skills": []}\n')
    code, _, err = run(["validate", "--entries", str(pages)], capfd)
    assert (code, "no skill entry found" in err) == (2, True)
    pages.write_text(json.dumps({"skills": [ex.entry_json()]}) + '\n{"skills": []}\n')
    code, _, err = run(["validate", "--entries", str(pages)], capfd)
    assert (code, err) == (0, "")


# --- entries ----------------------------------------------------------------------------------


def test_entries_in_every_shape(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"resultType": "complete", "skills": [ex.entry_json()]}))
    code, out, _ = run(["validate", "--entries", str(good)], capfd)
    assert code == 0
    assert out.startswith(
        f"ok       {good}[0] skill://pdf-processing/SKILL.md (3 files, 215 bytes)"
    )
    bad_entry = spec_entry()
    bad_entry["resources"] = "DYNAMIC"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"skill": bad_entry}))
    code, out, _ = run(["validate", "--entries", str(bad)], capfd)
    assert code == 1
    assert "error[bad-resources] /resources:" in out
    listing = tmp_path / "list.json"
    listing.write_text(json.dumps([ex.entry_json(), 5]))
    code, out, _ = run(["validate", "--json", "--entries", str(listing)], capfd)
    assert code == 1
    assert [r["valid"] for r in json.loads(out)["results"]] == [True, False]


def test_a_captured_json_rpc_response(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    entry = spec_entry()
    entry["frontmatter"]["description"] = ""
    response = {"jsonrpc": "2.0", "id": 7, "result": {"skills": [entry], "resultType": "complete"}}
    captured = tmp_path / "response.json"
    captured.write_text(json.dumps(response))
    code, out, _ = run(["validate", "--entries", str(captured)], capfd)
    assert code == 1  # an empty description fails here as it fails in a folder
    assert f"{captured}: error[description-empty] /frontmatter/description:" in out
    failed = tmp_path / "error.json"
    failed.write_text(
        json.dumps({"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "no"}})
    )
    code, _, err = run(["validate", "--entries", str(failed)], capfd)
    assert code == 2
    assert "JSON-RPC error" in err


def test_json_lines_and_stdin(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = tmp_path / "traffic.jsonl"
    page = {"jsonrpc": "2.0", "id": 1, "result": {"skills": [ex.entry_json()]}}
    lines.write_text(json.dumps(page) + "\n\n" + json.dumps({"skill": ex.entry_json()}) + "\n")
    code, out, _ = run(["validate", "--entries", str(lines)], capfd)
    assert code == 0
    assert f"{lines}:1[0]" in out
    assert f"{lines}:3[0]" in out
    stdin = io.TextIOWrapper(io.BytesIO(json.dumps(ex.entry_json()).encode()), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, _ = run(["validate", "--entries", "-"], capfd)
    assert code == 0
    assert out.startswith("ok       <stdin>[0]")


# --- what a person sees: hostile names are escaped (issue 11) ---------------------------------


def test_hostile_file_names_cannot_forge_a_line_or_reverse_text(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = write_skill(tmp_path, {"SKILL.md": b"---\nname: x\ndescription: d\n---\n"}, "x")
    os.symlink("/etc/passwd", folder / "a\nok       forged (1 files, 1 bytes)")
    os.symlink("/etc/passwd", folder / "evil\u202etxt.md")
    os.symlink("/etc/passwd", folder / "esc\x1b[8mhidden")
    code, out, _ = run(["validate", str(folder)], capfd)
    assert code == 0
    lines = out.splitlines()
    assert not any(line.startswith("ok       forged") for line in lines)
    assert "\u202e" not in out
    assert "\x1b" not in out
    assert any("a\\nok       forged" in line for line in lines)
    assert any("evil\\u202etxt.md" in line for line in lines)
    assert len(lines) == 5  # the skill, three warnings, the summary


def test_json_output_is_strict_utf8_with_the_bytes_of_odd_names(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = write_skill(tmp_path, {"SKILL.md": b"---\nname: x\ndescription: d\n---\n"}, "x")
    os.symlink(b"/etc/passwd", os.fsencode(folder) + b"/bad\xffname")
    result = subprocess.run(
        [sys.executable, "-m", "skills_core", "validate", "--json", str(folder)],
        capture_output=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout.decode("utf-8"))  # strict: fails on a lone surrogate
    (warning,) = document["results"][0]["findings"]
    assert warning["file"].endswith("bad\\udcffname")
    assert bytes.fromhex(warning["file_hex"]) == os.fsencode(folder) + b"/bad\xffname"


# --- SARIF and GitHub formats -----------------------------------------------------------------


def test_sarif_and_github_formats(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path / "skills", {"SKILL.md": BAD}, "bad-dir")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["validate", "--format", "sarif", "skills"], capfd)
    assert code == 1
    log = json.loads(out)
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == [
        "name-invalid",
        "portability-date",
        "allowed-tools-not-string",
    ]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "skills/bad-dir/SKILL.md", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 2, "startColumn": 7},
    }
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]
    assert err == "skills-core: 1 skill checked: 0 valid, 1 invalid; 2 errors, 1 warning\n"
    code, out, _ = run(["validate", "--format", "github", str(tmp_path / "skills")], capfd)
    assert code == 1
    assert out.splitlines()[0].startswith(
        "::error file=skills/bad-dir/SKILL.md,line=2,col=7,title=skills-core name-invalid::/name: "
    )
    assert out.splitlines()[-1] == "1 skill checked: 0 valid, 1 invalid; 2 errors, 1 warning"


# --- diff -------------------------------------------------------------------------------------


def test_diff_of_a_folder_with_itself_and_its_entry(
    skills: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = skills / "pdf-processing"
    code, out, _ = run(["diff", str(folder), str(folder)], capfd)
    assert code == 0
    assert out.splitlines() == [
        "same     skill://pdf-processing/SKILL.md",
        "0 changed, 0 added, 0 removed, 1 the same",
    ]
    entry = tmp_path / "entry.json"
    entry.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"skill": ex.entry_json()}}))
    assert run(["diff", str(entry), str(folder / "SKILL.md")], capfd)[0] == 0


def test_diff_of_two_versions(
    skills: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The spec's credit-note change, plus frontmatter edits, in old/new wording."""
    new_root = tmp_path / "new"
    files = dict(ex.FILES_WITH_CREDIT_NOTE)
    files["SKILL.md"] = files["SKILL.md"].replace(b"description:", b"license: MIT\ndescription:")
    new = write_skill(new_root, files)
    code, out, _ = run(["diff", str(skills / "pdf-processing"), str(new)], capfd)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "changed  skill://pdf-processing/SKILL.md"
    assert '  frontmatter /license added: "MIT"' in lines
    size = len(ex.FILES["SKILL.md"])
    assert f"  file SKILL.md changed ({size} -> {size + 13} bytes)" in lines
    credit = len(ex.FILES_WITH_CREDIT_NOTE["templates/credit-note.md"])
    assert f"  file templates/credit-note.md added ({credit} bytes)" in lines
    assert lines[-1] == "1 changed, 0 added, 0 removed, 0 the same"
    code, out, _ = run(["diff", "--json", str(skills / "pdf-processing"), str(new)], capfd)
    assert code == 1
    document = json.loads(out)
    assert document["same"] is False
    (skill,) = document["skills"]
    assert skill["status"] == "changed"
    assert skill["frontmatter"] == [{"pointer": "/license", "change": "added", "new": "MIT"}]
    assert [f["path"] for f in skill["files"]] == ["SKILL.md", "templates/credit-note.md"]


def test_diff_of_roots_pairs_skills_by_uri(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old"
    new = tmp_path / "new"
    for root, names in ((old, ("a", "b", "gone")), (new, ("a", "b", "fresh"))):
        for name in names:
            write_skill(
                root, {"SKILL.md": f"---\nname: {name}\ndescription: d\n---\n".encode()}, name
            )
    write_skill(new, {"SKILL.md": b"---\nname: b\ndescription: other\n---\n"}, "b")
    write_skill(new, {"SKILL.md": BAD}, "broken")
    code, out, err = run(["diff", str(old), str(new)], capfd)
    assert code == 1
    assert out.splitlines() == [
        "same     skill://a/SKILL.md",
        "changed  skill://b/SKILL.md",
        '  frontmatter /description changed: "d" -> "other"',
        "  file SKILL.md changed (31 -> 35 bytes)",
        "added    skill://fresh/SKILL.md (1 file, 35 bytes)",
        "removed  skill://gone/SKILL.md (1 file, 34 bytes)",
        "1 changed, 1 added, 1 removed, 1 the same",
    ]
    assert f"{new / 'broken'}: not published (name-invalid:" in err


def test_diff_refuses_malformed_entries_and_escapes_values(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"uri": "skill://x/SKILL.md"}))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(ex.entry_json()))
    code, _, err = run(["diff", str(good), str(broken)], capfd)
    assert code == 2
    assert "broken.json[0]: invalid skill entry" in err
    hostile = spec_entry()
    hostile["frontmatter"]["description"] = "fine\u202e\n\x1b[2J"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(hostile))
    code, out, _ = run(["diff", str(good), str(changed)], capfd)
    assert code == 1
    assert "\u202e" not in out
    assert "\x1b" not in out
    assert "\\u202e" in out
    code, out, _ = run(["diff", "--json", str(good), str(changed)], capfd)
    assert json.loads(out)["skills"][0]["frontmatter"][0]["new"] == "fine\u202e\n\x1b[2J"


def test_diff_in_every_wording(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    old = spec_entry()
    old["frontmatter"]["license"] = "MIT"
    new = spec_entry()
    new["resources"] = [r for r in new["resources"] if "purchase" not in r["uri"]]
    same_size = new["resources"][1]
    same_size["digest"] = "sha256:" + "0" * 64
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    code, out, _ = run(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")], capfd)
    assert code == 1
    assert out.splitlines()[1:] == [
        '  frontmatter /license removed (was "MIT")',
        f"  file {same_size['uri'].split('/', 3)[3]} changed ({same_size['size']} bytes, other content)",
        "  file templates/purchase-order.md removed (was 35 bytes)",
        "1 changed, 0 added, 0 removed, 0 the same",
    ]
    dynamic = dict(spec_entry(), resources="dynamic")
    (tmp_path / "dynamic.json").write_text(json.dumps(dynamic))
    code, out, _ = run(["diff", str(tmp_path / "dynamic.json"), str(tmp_path / "new.json")], capfd)
    assert "  resources: dynamic -> a manifest" in out.splitlines()
    code, out, _ = run(["diff", str(tmp_path / "new.json"), str(tmp_path / "dynamic.json")], capfd)
    assert "  resources: a manifest -> dynamic" in out.splitlines()


def test_diff_of_listings_as_json_and_its_troubles(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    a = spec_entry()
    b = spec_entry()
    b["uri"] = "skill://other/pdf-processing/SKILL.md"
    b["resources"] = [dict(r, uri=r["uri"].replace("//", "//other/")) for r in b["resources"]]
    (tmp_path / "one.json").write_text(json.dumps({"skills": [a]}))
    (tmp_path / "two.json").write_text(json.dumps({"skills": [a, b]}))
    code, out, _ = run(
        ["diff", "--json", str(tmp_path / "two.json"), str(tmp_path / "one.json")], capfd
    )
    assert code == 1
    assert [(s["status"], s.get("uri", s.get("new_uri"))) for s in json.loads(out)["skills"]] == [
        ("removed", "skill://other/pdf-processing/SKILL.md"),
        ("same", "skill://pdf-processing/SKILL.md"),
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(["diff", str(empty), str(tmp_path / "one.json")], capfd)
    assert (code, "no skill found" in err) == (2, True)
    (tmp_path / "error.json").write_text(
        json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "unknown"}})
    )
    code, _, err = run(["diff", str(tmp_path / "error.json"), str(tmp_path / "one.json")], capfd)
    assert (code, "JSON-RPC error" in err) == (2, True)


def test_text_shows_the_trees_own_findings_and_bad_json_lines(
    skills: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (skills / "stray").symlink_to("/etc")
    code, out, _ = run(["validate", str(skills)], capfd)
    assert code == 0
    assert out.splitlines()[0] == (
        f"{skills / 'stray'}: warning[symlink] is a symbolic link; links are never followed or served"
    )
    lines = tmp_path / "lines.jsonl"
    lines.write_text(json.dumps(ex.entry_json()) + "\n{\n" + json.dumps(ex.entry_json()) + "\n")
    code, _, err = run(["validate", "--entries", str(lines)], capfd)
    assert (code, "not JSON" in err) == (2, True)
