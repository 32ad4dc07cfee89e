"""``validate``, ``diff`` and ``manifest`` in a CI job: nothing a skill holds becomes a runner command.

The GitHub Actions runner obeys ``::command::`` at the start of a line (after white space) and the
legacy ``##[command]`` anywhere in a line (``ci_runner``). Skill folders and entries here hold such
text in every place the commands print: folder names (which start lines of ``validate``), file
names, names, descriptions, metadata keys, frontmatter keys and values. Each command runs as a
process, as a workflow step runs it, in every output form; no line of its stdout or stderr may be
a command, except ``--format github``'s own annotations, and the text stays readable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from check_helpers import spec_entry, write_tree
from ci_runner import commands_in, lines_of

from skills_core.cli.manifest import _shown

ROOT = Path(__file__).resolve().parents[1]

#: A folder of skills whose name starts each line ``validate`` prints about the tree itself.
TREE = "::stop-commands::pwned"
SET_OUTPUT = "##[set-output name=approved;]yes"
ADD_MASK = "##[add-mask]secret"


def cli(cwd: Path, *args: str) -> tuple[int, str, str]:
    """``python -m skills_core ARGS`` in ``cwd``: exit code, stdout and stderr (strict UTF-8)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "skills_core", *args],
        capture_output=True,
        check=False,
        cwd=cwd,
        env=env,
        timeout=120,
    )
    out, err = result.stdout.decode("utf-8"), result.stderr.decode("utf-8")
    assert "Traceback" not in err
    return result.returncode, out, err


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """``TREE``: a skill with a hostile description, one with a hostile name and metadata key, and
    links and a hidden file with hostile names, inside and outside the skills."""
    tree = tmp_path / TREE
    write_tree(
        tree / "pdf",
        {"SKILL.md": f'---\nname: pdf\ndescription: "ok" then {SET_OUTPUT}\n---\n'.encode()},
    )
    write_tree(
        tree / "evil",
        {
            "SKILL.md": (
                f'---\nname: "{ADD_MASK}"\ndescription: d\nmetadata:\n  "{ADD_MASK}": 1\n---\n'
            ).encode(),
            f".{ADD_MASK}": b"hidden",
        },
    )
    write_tree(tree / "good", {"SKILL.md": b"---\nname: good\ndescription: d\n---\n"})
    (tree / f"  ::add-mask::{ADD_MASK}").symlink_to("/etc/passwd")
    (tree / "evil" / SET_OUTPUT).symlink_to("/etc/passwd")
    return tmp_path


def assert_no_command(*outputs: str) -> None:
    for output in outputs:
        assert commands_in(output) == [], output


@pytest.mark.parametrize("form", ["text", "json", "sarif"])
def test_validate_prints_no_command(hostile: Path, form: str) -> None:
    code, out, err = cli(hostile, "validate", "--format", form, TREE)
    assert code == 1
    assert_no_command(out, err)
    if form == "text":
        # the folder's name starts the lines about the tree itself: escaped, still readable
        assert "\\x3a:stop-commands::pwned/  ::add-mask::##\\x5badd-mask]secret: warning" in out
        assert "unexpected text 'then ##\\x5bset-output name=approved;]yes'" in out
        assert "skill name '##\\x5badd-mask]secret'" in out
        assert "/evil/##\\x5bset-output name=approved;]yes: warning[symlink]" in out
    elif form == "json":
        document = json.loads(out)  # the same values: only the JSON text escapes them
        text = json.dumps(document, ensure_ascii=False)
        assert f"skill name '{ADD_MASK}'" in text
        assert f"/evil/{SET_OUTPUT}" in text
    else:  # SARIF messages are shown text (``display``), as in the text form
        messages = [r["message"]["text"] for r in json.loads(out)["runs"][0]["results"]]
        assert "skill name '##\\x5badd-mask]secret' must use only" in " ".join(messages)


def test_validate_github_annotations_are_the_only_commands(hostile: Path) -> None:
    code, out, err = cli(hostile, "validate", "--format", "github", TREE)
    assert code == 1
    *annotations, summary = lines_of(out.removesuffix("\n"))
    assert len(annotations) == 6  # with a notice for the hidden file of the hostile skill
    for line in annotations:
        # one command, of ours: the runner reads up to the end of the line, no "##[" after it
        assert line.startswith(("::error file=", "::warning file=", "::notice file="))
        assert "##[" not in line
    assert summary == "3 skills checked: 1 valid, 2 invalid; 3 errors, 2 warnings, 1 note"
    assert_no_command(summary, err)


def test_validate_of_hostile_entries(tmp_path: Path) -> None:
    entry = spec_entry()
    entry["frontmatter"]["description"] = SET_OUTPUT
    entry["frontmatter"]["metadata"] = {"::add-mask::k": 1}
    (tmp_path / TREE).write_text(json.dumps({"skills": [entry]}))
    for form in ("text", "json", "sarif"):
        code, out, err = cli(tmp_path, "validate", "--format", form, "--entries", TREE)
        assert code == 1
        assert_no_command(out, err)
    code, out, _ = cli(tmp_path, "validate", "--entries", TREE)
    assert out.splitlines()[:2] == [
        "INVALID  ::stop-commands::pwned[0] skill://pdf-processing/SKILL.md",
        "  \\x3a:stop-commands::pwned: error[metadata-value-not-string] /frontmatter/metadata/"
        "::add-mask::k: 'metadata' values must be strings; '::add-mask::k' is a number (quote it, "
        "or move structured data out of 'metadata')",
    ]


def test_diff_prints_no_command(hostile: Path) -> None:
    old = spec_entry()
    new = spec_entry()
    new["frontmatter"]["description"] = SET_OUTPUT
    new["frontmatter"]["::stop-commands::k"] = ADD_MASK
    (hostile / "old.json").write_text(json.dumps(old))
    (hostile / "new.json").write_text(json.dumps(new))
    code, out, err = cli(hostile, "diff", "old.json", "new.json")
    assert code == 1
    assert_no_command(out, err)
    assert (
        '  frontmatter /description changed: "Extract, fill, and assemble PDF documents" -> '
        '"##\\x5bset-output name=approved;]yes"'
    ) in out.splitlines()
    assert '  frontmatter /::stop-commands::k added: "##\\x5badd-mask]secret"' in out
    code, out, err = cli(hostile, "diff", "--json", "old.json", "new.json")
    assert code == 1
    assert_no_command(out, err)
    changes = {c["pointer"]: c.get("new") for c in json.loads(out)["skills"][0]["frontmatter"]}
    assert changes == {"/description": SET_OUTPUT, "/::stop-commands::k": ADD_MASK}
    # two folders: the skills' own names and descriptions, and a note on stderr about the evil one
    code, out, err = cli(hostile, "diff", f"{TREE}/good", f"{TREE}/pdf")
    assert_no_command(out, err)
    code, out, err = cli(hostile, "diff", TREE, f"{TREE}/good")
    assert code == 0  # only "good" is published
    assert_no_command(out, err)
    assert "\\x3a:stop-commands::pwned/pdf: not published" in err


def test_manifest_prints_no_command(hostile: Path) -> None:
    code, out, err = cli(hostile, "manifest", TREE)
    assert code == 0
    assert_no_command(out, err)
    assert "unexpected text 'then ##\\x5bset-output name=approved;]yes'" in out
    assert "refused evil/##\\x5bset-output name=approved;]yes: is a symbolic link" in out
    assert "skipped evil/.##\\x5badd-mask]secret: hidden" in out
    code, out, err = cli(hostile, "manifest", "--json", TREE)
    assert code == 0
    assert_no_command(out, err)
    document = json.loads(out)
    assert [p["path"] for p in document["problems"]] == [
        f"  ::add-mask::{ADD_MASK}",
        f"evil/{SET_OUTPUT}",
    ]
    assert document["skipped"][0]["path"] == f"evil/.{ADD_MASK}"
    assert [s["uri"] for s in document["skills"]] == ["skill://good/SKILL.md"]


def test_manifest_json_shows_terminal_controls_as_escapes(tmp_path: Path) -> None:
    """The same path as ``display_json``: a C1 control, DEL, a bidi override as ``\\u`` escapes."""
    description = "csi \x9b2J del \x7f bidi \u202e end"
    yaml = b'"csi \\u009b2J del \\x7f bidi \\u202e end"'  # YAML's own escapes
    write_tree(
        tmp_path / "r" / "x", {"SKILL.md": b"---\nname: x\ndescription: " + yaml + b"\n---\n"}
    )
    code, out, _ = cli(tmp_path, "manifest", "--json", "r")
    assert code == 0
    assert "\\u009b2J del \\u007f bidi \\u202e end" in out
    assert not any(c in out for c in "\x9b\x7f\u202e")
    assert json.loads(out)["skills"][0]["frontmatter"]["description"] == description


def test_manifest_json_keeps_safe_chunks_as_they_are() -> None:
    """``_shown`` rewrites only the items that need it, in each of its three paths."""
    ascii_chunks = [b'{\n  "a": [', b'"x"', b"]\n}\n"]
    assert _shown(ascii_chunks) == [b"".join(ascii_chunks)]
    cafe, bidi = '"caf\u00e9"'.encode(), '"\u202e"'.encode()
    shown = _shown([cafe, b", ", bidi])
    assert shown[0] is cafe
    assert shown[1:] == [b", ", b'"\\u202e"']
    hostile = f'"{ADD_MASK}"'.encode()
    shown = _shown([cafe, b", ", hostile, b'"\x7f"'])
    assert shown == [cafe, b", ", b'"##\\u005badd-mask]secret"', b'"\\u007f"']
    assert [json.loads(chunk) for chunk in shown[2:]] == [ADD_MASK, "\x7f"]
