"""``serve`` and ``manifest`` as people lay folders out, and ``manifest``'s output (issue 11).

The options of the filesystem source (``--include-hidden``, ``--exclude``, ``--index``), a root
that is itself a skill, and output that a hostile file name cannot forge: text through
``skills_core.display``, JSON always strict UTF-8 with ``pathHex`` for names that are not UTF-8.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fs_helpers import spec_tree, write

from skills_core import spec_examples as ex
from skills_core.cli import main
from skills_core.cli.manifest import _path, _text
from skills_core.server.index import decode_index

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    return spec_tree(tmp_path / "skills")


def run(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capfd.readouterr()
    assert "Traceback" not in err
    return code, out, err


def run_bytes(*argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """The command in a process of its own: stdout as the exact bytes written."""
    return subprocess.run(
        [PY, "-m", "skills_core", *argv],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )


def hostile_tree(root: Path) -> None:
    """Names that forge a line, reverse text, or are not UTF-8, in every part of the output."""
    base = os.fsencode(spec_tree(root))
    forged = "templates/x\nskill:forged  (1 files, 1 bytes)"  # one name, with a line break
    write(root, {f"pdf-processing/{forged}": b"x", "pdf-processing/a\u202etxt.md": b"r"})
    os.makedirs(base + b"/bad\xffdir/inner")  # an omitted folder whose name is not UTF-8
    with open(base + b"/bad\xffdir/inner/SKILL.md", "wb") as handle:
        handle.write(b"---\nname: inner\ndescription: d\n---\n")
    with open(base + b"/bad\xffdir/SKILL.md", "wb") as handle:
        handle.write(b"---\nname: x\ndescription: d\n---\n")
    os.symlink("/etc/passwd", base + b"/pdf-processing/link\xfe\n.md")  # a refused entry
    with open(base + b"/pdf-processing/.hidden\xfd", "wb") as handle:  # a skipped entry
        handle.write(b"h")


# --- manifest: what a person sees ------------------------------------------------------------------


def test_manifest_text_cannot_be_forged_by_file_names(tmp_path: Path) -> None:
    hostile_tree(tmp_path)
    result = run_bytes("manifest", str(tmp_path))
    assert result.returncode == 0
    text = result.stdout.decode("utf-8")  # strict: nothing undecodable reaches the terminal
    ours = ("skill://", "    warning ", "omitted ", "refused ", "skipped ")
    lines = text.splitlines()
    assert all(line.startswith(ours) for line in lines[:-1]), text
    assert lines[-1].endswith("skipped")  # the summary
    assert not any(line.startswith("skill:forged") for line in lines)
    assert "\u202e" not in text
    assert "a\\u202etxt.md" in text
    assert "x\\nskill:forged" in text
    assert "bad\\udcffdir" in text


def test_manifest_json_is_strict_utf8_with_the_exact_bytes_beside(tmp_path: Path) -> None:
    hostile_tree(tmp_path)
    result = run_bytes("manifest", "--json", str(tmp_path))
    assert result.returncode == 0
    document = json.loads(result.stdout.decode("utf-8"))  # strict UTF-8, no lone surrogates
    omitted = next(o for o in document["omitted"] if o["path"] == "bad\\xffdir")
    assert bytes.fromhex(omitted["pathHex"]) == b"bad\xffdir"
    (refused,) = document["problems"]
    assert bytes.fromhex(refused["pathHex"]) == b"pdf-processing/link\xfe\n.md"
    assert refused["path"] == "pdf-processing/link\\xfe\n.md"  # JSON escapes the newline itself
    (skipped,) = document["skipped"]
    assert bytes.fromhex(skipped["pathHex"]) == b"pdf-processing/.hidden\xfd"
    assert skipped["code"] == "hidden"
    for item in document["omitted"] + document["problems"] + document["skipped"]:
        if "pathHex" not in item:
            assert item["path"].encode("utf-8")
    messages = " ".join(w["message"] for w in document["warnings"])
    assert "\\xfe" in messages  # a name quoted in a message is shown the same way
    assert document["skills"][0]["uri"] == ex.SKILL_MD_URI


def test_manifest_json_layout(skills: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["manifest", "--json", str(skills)], capfd)
    assert code == 0
    document = json.loads(out)
    assert list(document) == ["skills", "omitted", "warnings", "problems", "skipped"]
    assert document["skills"] == [ex.entry_json()]
    lines = out.splitlines()
    assert lines[0] == "{"
    assert lines[1] == '  "skills": ['
    assert json.loads(lines[2]) == ex.entry_json()  # one entry per line


# --- manifest and serve: hidden files, excludes, the index -----------------------------------------


def test_manifest_lists_what_was_skipped_and_why(
    skills: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write(
        skills,
        {
            "pdf-processing/.env": b"TOKEN=1\n",
            "pdf-processing/drafts/a.md": b"a",
            "pdf-processing/run.log": b"l",
        },
    )
    code, out, _ = run(
        ["manifest", str(skills), "--exclude", "drafts/", "--exclude", "*.log"], capfd
    )
    assert code == 0
    assert "skill://pdf-processing/SKILL.md  (3 files, 215 bytes)" in out
    assert "skipped pdf-processing/.env: hidden" in out
    assert "skipped pdf-processing/drafts: excluded by the pattern 'drafts/'" in out
    assert "skipped pdf-processing/run.log: excluded by the pattern '*.log'" in out
    assert out.endswith("1 skills published, 0 left out, 3 skipped\n")
    code, out, _ = run(["manifest", "--include-hidden", str(skills)], capfd)
    assert "(6 files," in out
    code, out, _ = run(["manifest", "--json", "--exclude", "[z-a]", str(skills)], capfd)
    assert code == 1


def test_manifest_with_an_index(
    skills: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    index = tmp_path / "skills.index"
    code, cold, err = run(["manifest", "--json", "--index", str(index), str(skills)], capfd)
    assert (code, err) == (0, "")
    assert decode_index(index.read_bytes()).roots[0].path == str(skills)
    code, warm, err = run(["manifest", "--json", "--index", str(index), str(skills)], capfd)
    assert (code, warm, err) == (0, cold, "")
    index.write_bytes(b"garbage")
    code, again, err = run(["manifest", "--json", "--index", str(index), str(skills)], capfd)
    assert (code, again) == (0, cold)
    assert err.startswith("skills-core: manifest: the digest index ")
    assert err.endswith("ignored and is rebuilt: does not start with the magic line\n")
    assert err.count("digest index") == 1
    assert err.count("\n") == 1


def test_serve_a_skill_folder_itself(skills: Path, tmp_path: Path) -> None:
    """``serve ./my-skill`` publishes the skill (``validate ./my-skill`` accepts it too)."""
    index = tmp_path / "serve.index"
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {"_meta": META}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "resources/read",
            "params": {"_meta": META, "uri": "skill://pdf-processing/.env"},
        },
    ]
    write(skills, {"pdf-processing/.env": b"SECRET=1\n", "pdf-processing/tmp/x.md": b"x"})
    result = run_bytes(
        "serve",
        "--exclude",
        "tmp/",
        "--index",
        str(index),
        str(skills / "pdf-processing"),
        stdin="".join(json.dumps(r) + "\n" for r in requests).encode(),
    )
    assert result.returncode == 0
    assert result.stderr == b""
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert answers[0]["result"]["skills"] == [ex.entry_json()]
    assert answers[1]["error"]["code"] == -32602  # hidden: not readable
    assert decode_index(index.read_bytes()).roots[0].mount == "pdf-processing"


def test_serve_reports_an_unusable_index_on_stderr(skills: Path, tmp_path: Path) -> None:
    index = tmp_path / "no-such-folder" / "serve.index"
    result = run_bytes("serve", "--index", str(index), str(skills))
    assert result.returncode == 0
    assert result.stderr.startswith(b"skills-core: serve: the digest index ")
    assert b"could not be written" in result.stderr


def test_manifest_in_process_writes_bytes_strictly(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    hostile_tree(tmp_path)
    assert main(["manifest", "--json", str(tmp_path)]) == 0
    out = capfdbinary.readouterr().out
    document = json.loads(out.decode("utf-8"))
    assert any(item.get("pathHex") for item in document["problems"])


def test_manifest_to_a_text_only_stream_and_progress_on_a_terminal(
    skills: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)  # no .buffer: written as text
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    roots = str(skills) + "\x1b[2J"  # shown escaped, like any name
    write(Path(roots), {f"x/{p}": b for p, b in ex.FILES.items()})
    assert main(["manifest", str(skills), roots]) == 0
    assert stream.getvalue().endswith("1 skills published, 1 left out\n")  # x: name mismatch
    err = capfd.readouterr().err
    assert "skills-core: scanning" in err
    assert "\x1b" not in err
    assert "\\x1b[2J" in err
    assert "scanned" in err


@pytest.mark.parametrize(
    ("name", "shown", "raw"),
    [
        ("plain.md", "plain.md", None),
        ("café ✓.md", "café ✓.md", None),
        ("bad\udcff.md", "bad\\xff.md", b"bad\xff.md"),
        ("\udc80\udcfe", "\\x80\\xfe", b"\x80\xfe"),
    ],
)
def test_paths_in_json_text_and_exact_bytes(name: str, shown: str, raw: bytes | None) -> None:
    field = _path(name)
    assert field["path"] == shown
    assert field["path"].encode("utf-8")
    assert ("pathHex" in field) is (raw is not None)
    if raw is not None:
        assert bytes.fromhex(field["pathHex"]) == raw
    assert _text("lone \ud800 high") == "lone \\ud800 high"


def test_validate_a_nested_skill_folder_with_the_servers_verdict(
    skills: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """validate asks the source about the folder itself (a root that is a skill), even when
    the folder above it is a skill too; hidden files are left out as serve leaves them out."""
    write(
        skills,
        {
            "pdf-processing/sub/SKILL.md": b"---\nname: sub\ndescription: d\n---\n",
            "pdf-processing/sub/.env": b"X=1\n",
        },
    )
    code, out, _ = run(["validate", str(skills / "pdf-processing" / "sub")], capfd)
    assert code == 0
    assert out.startswith(f"ok       {skills / 'pdf-processing' / 'sub'} (1 file, 33 bytes)")
