"""The skills-core command line: every command and exit code (docs/design.md#command-line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from client_helpers import hostile, run

from skills_core import spec_examples as ex
from skills_core.cli import main

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def write_skill(root: Path, files: dict[str, bytes], name: str = "pdf-processing") -> Path:
    for path, data in files.items():
        target = root / name / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root / name


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, ex.FILES)
    return root


def serve_cmd(root: Path, *extra: str) -> str:
    return f"{PY} -m skills_core serve {' '.join(extra)} {root}"


# --- usage ---------------------------------------------------------------------------------


def test_usage_errors_exit_1_with_one_line(capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([], capfd)
    assert code == 1
    assert err.count("\n") == 1
    code, _, err = run(["serve", "--page-size", "0", "x"], capfd)
    assert code == 1
    assert "must be at least 1" in err
    code, _, err = run(["host", "list"], capfd)
    assert code == 1
    assert "--server" in err
    code, _, err = run(["host", "--server", "nolabel", "list"], capfd)
    assert code == 1
    assert "LABEL=COMMAND" in err
    code, _, err = run(["host", "--server", "a=x", "--server", "a=y", "list"], capfd)
    assert code == 1
    assert "used twice" in err
    code, _, err = run(["host", "--server", "bad label=x", "list"], capfd)
    assert code == 1
    code, _, err = run(["host", "--server", "a=x 'unterminated", "list"], capfd)
    assert code == 1
    code, _, err = run(["host", "--server", "a=x", "--timeout", "0", "list"], capfd)
    assert code == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--page-size", "ten", "x"], "'ten' is not a whole number"),
        (["serve", "--page-size", "1.5", "x"], "'1.5' is not a whole number"),
        (["serve", "--ttl-ms", "-1", "x"], "'-1' must not be negative"),
        (["host", "--server", "a=x", "--timeout", "soon", "list"], "not a number of seconds"),
        (["host", "--server", "a=x", "--timeout", "nan", "list"], "must be more than 0 seconds"),
        (["host", "--server", "a=x", "--timeout", "-3", "list"], "must be more than 0 seconds"),
    ],
)
def test_bad_option_values_exit_1_naming_the_value(
    argv: list[str], message: str, capfd: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(argv, capfd)
    assert (code, out) == (1, "")
    assert message in err
    assert err.count("\n") == 1


def test_serve_accepts_a_zero_ttl(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """--ttl-ms 0 is allowed (nothing is cacheable); only a bad root stops this serve."""
    code, _, err = run(["serve", "--ttl-ms", "0", str(tmp_path / "missing")], capfd)
    assert code == 1
    assert err.endswith("missing: No such file or directory\n")


def test_version(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert "skills-core" in capfd.readouterr().out


def test_python_dash_m_entry_point(skills: Path) -> None:
    result = subprocess.run(
        [PY, "-m", "skills_core", "manifest", str(skills)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0
    assert ex.SKILL_MD_URI in result.stdout


# --- serve ---------------------------------------------------------------------------------


def test_serve_answers_json_rpc_on_stdio(skills: Path) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "id": 2, "method": "skills/list", "params": {"_meta": meta}},
        {
            "jsonrpc": "2.0",
            "id": "r",
            "method": "resources/read",
            "params": {"_meta": meta, "uri": "skill://pdf-processing/templates/invoice.md"},
        },
    ]
    stdin = "".join(json.dumps(r) + "\n" for r in requests) + "not json\n"
    result = subprocess.run(
        [PY, "-m", "skills_core", "serve", "--ttl-ms", "5", str(skills)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0
    assert result.stderr == ""  # nothing to say when every skill is served
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, "r", None]
    caps = answers[0]["result"]["capabilities"]
    assert caps["extensions"]["io.modelcontextprotocol/skills"] == {"directoryRead": True}
    assert answers[1]["result"]["skills"] == [ex.entry_json()]
    assert answers[1]["result"]["ttlMs"] == 5
    assert answers[2]["result"]["contents"][0]["text"] == ex.INVOICE.decode()
    assert answers[3]["error"]["code"] == -32700


def test_serve_without_directory_read(skills: Path) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    request = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    result = subprocess.run(
        [PY, "-m", "skills_core", "serve", "--no-directory-read", str(skills)],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd=ROOT,
    )
    answer = json.loads(result.stdout)
    assert answer["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"] == {}


def test_serve_bad_root_exits_1(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["serve", str(tmp_path / "missing")], capfd)
    assert code == 1
    assert "missing" in err


# --- manifest ------------------------------------------------------------------------------


def test_manifest_human_and_json(skills: Path, capfd: pytest.CaptureFixture[str]) -> None:
    write_skill(skills, {"SKILL.md": b"---\nname: other-name\ndescription: d\n---\n"}, "mismatch")
    (skills / "pdf-processing" / "link.md").symlink_to("/etc/passwd")
    code, out, _ = run(["manifest", str(skills)], capfd)
    assert code == 0
    assert "skill://pdf-processing/SKILL.md  (3 files, 215 bytes)" in out
    assert "omitted skill://mismatch/SKILL.md" in out or "omitted mismatch" in out
    assert "other-name" in out
    assert "link.md" in out
    code, out, _ = run(["manifest", "--json", str(skills)], capfd)
    assert code == 0
    document = json.loads(out)
    assert document["skills"] == [ex.entry_json()]
    assert [o["code"] for o in document["omitted"]] == ["name-mismatch"]
    assert document["problems"]


# --- host ----------------------------------------------------------------------------------


def test_host_list_marks_invalid_entries(capfd: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["host", "--server", "h=" + hostile("invalid"), "list"], capfd)
    assert code == 0
    assert "h:pdf-processing  skill://pdf-processing/SKILL.md" in out
    assert "h:skill://broken/SKILL.md  [INVALID]" in out
    assert "DYNAMIC" in out
    code, out, _ = run(["host", "--json", "--server", "h=" + hostile("invalid"), "list"], capfd)
    document = json.loads(out)
    assert [s["qualified"] for s in document["skills"]] == ["h:pdf-processing"]
    assert document["rejected"][0]["uri"] == "skill://broken/SKILL.md"


def test_host_list_several_servers(skills: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        [
            "host",
            "--server",
            "a=" + serve_cmd(skills),
            "--server",
            "b=" + serve_cmd(skills),
            "list",
        ],
        capfd,
    )
    assert code == 0
    assert "a:pdf-processing" in out
    assert "b:pdf-processing" in out


def test_host_bare_name_shared_by_two_origins_exits_1_naming_both(
    skills: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        [
            "host",
            "--server",
            "a=" + serve_cmd(skills),
            "--server",
            "b=" + serve_cmd(skills),
            "show",
            "pdf-processing",
        ],
        capfd,
    )
    assert code == 1
    assert "a:pdf-processing" in err
    assert "b:pdf-processing" in err


def test_host_unknown_skill_exits_1(skills: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["host", "--server", "a=" + serve_cmd(skills), "load", "nope"], capfd)
    assert code == 1
    assert "nope" in err


def test_host_show(skills: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["host", "--server", "a=" + serve_cmd(skills), "show", "a:pdf-processing"], capfd
    )
    assert code == 0
    assert "origin:      a" in out
    assert "approved:    no" in out
    assert "sha256:61f4ea6d2c75fde1b4977219e7e3107d491c3c26aefb6686e84d6281c088d9ee" in out
    code, out, _ = run(
        ["host", "--json", "--server", "a=" + serve_cmd(skills), "show", ex.SKILL_MD_URI], capfd
    )
    assert json.loads(out)["entry"] == ex.entry_json()
    code, _, err = run(
        ["host", "--server", "a=" + serve_cmd(skills), "show", "a:skill://nope/SKILL.md"], capfd
    )
    assert code == 1
    assert "skill://nope/SKILL.md" in err


def test_host_load_needs_approval_then_persists_it(
    skills: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    approvals = tmp_path / "approvals.json"
    base = ["host", "--server", "docs-server=" + serve_cmd(skills), "--approvals", str(approvals)]
    code, out, err = run([*base, "load", "pdf-processing"], capfd)
    assert code == 4
    assert out == ""
    assert "approval needed for docs-server:pdf-processing" in err
    assert not approvals.exists()

    code, out, err = run([*base, "--yes", "load", "pdf-processing"], capfd)
    assert code == 0, err
    assert 'Source: MCP server "docs-server"' in out  # origin-tagged (ORG-06)
    assert ex.SKILL_MD.decode() in out
    record = json.loads(approvals.read_text())
    assert record["version"] == 1

    code, out, _ = run([*base, "load", "pdf-processing"], capfd)  # the approval persisted
    assert code == 0

    # the manifest changes: the approval is revoked and the message names what changed (APR-02)
    (skills / "pdf-processing" / "templates" / "credit-note.md").write_bytes(ex.CREDIT_NOTE)
    code, out, err = run([*base, "load", "pdf-processing"], capfd)
    assert code == 4
    assert "changed since it was approved" in err
    assert "credit-note.md" in err


def test_host_read_and_cache(
    skills: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    base = ["host", "--yes", "--cache", str(cache), "--server", "d=" + serve_cmd(skills)]
    code, out, err = run([*base, "read", "pdf-processing", "templates/invoice.md"], capfd)
    assert code == 0, err
    assert ex.INVOICE.decode() in out
    assert "---\nname: pdf-processing" not in out  # only the requested file is printed
    assert any(p.is_file() for p in cache.rglob("*"))
    code, out, err = run([*base, "--json", "read", "pdf-processing", "templates/invoice.md"], capfd)
    document = json.loads(out)
    assert document["text"] == ex.INVOICE.decode()
    assert (document["size"], document["digest"]) == ex.EXPECTED["templates/invoice.md"]
    assert "blob" not in document
    assert document["verified"] is True


@pytest.mark.parametrize(
    ("ref", "fragment"),
    [
        ("../../etc/passwd", "climbs above the root"),
        (
            "templates/credit-note.md",  # issue 11: plainly "no such file", with its files
            "d:pdf-processing has no file templates/credit-note.md; its files are: SKILL.md, "
            "templates/invoice.md, templates/purchase-order.md",
        ),
        ("%2e%2e/x", "percent-encoded"),
    ],
)
def test_host_read_refused_references_exit_3(
    skills: Path, ref: str, fragment: str, capfd: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["host", "--yes", "--server", "d=" + serve_cmd(skills), "read", "pdf-processing", ref],
        capfd,
    )
    assert code == 3
    assert fragment in err
    assert "Credit note" not in out


def test_host_ls_with_and_without_directory_read(
    skills: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (skills / "pdf-processing" / "templates" / "credit-note.md").write_bytes(ex.CREDIT_NOTE)
    code, out, err = run(
        [
            "host",
            "--yes",
            "--server",
            "d=" + serve_cmd(skills),
            "ls",
            "pdf-processing",
            "templates",
        ],
        capfd,
    )
    assert code == 0, err
    assert '"credit-note.md"' in out  # the live folder and the manifest agree here
    code, out, err = run(
        [
            "host",
            "--yes",
            "--json",
            "--server",
            "d=" + hostile("honest"),
            "ls",
            "pdf-processing",
            "templates",
        ],
        capfd,
    )
    assert code == 0, err
    listing = json.loads(out)
    assert [c["name"] for c in listing["children"]] == ["invoice.md", "purchase-order.md"]  # DIR-14
    assert listing["looks_changed"] is True
    code, out, err = run(
        [
            "host",
            "--yes",
            "--json",
            "--server",
            "d=" + serve_cmd(skills, "--no-directory-read"),
            "ls",
            "pdf-processing",
        ],
        capfd,
    )
    assert code == 0, err
    listing = json.loads(out)
    assert listing["from_manifest"] is True  # CAP-06: answered from the held entry
    assert [c["name"] for c in listing["children"]] == ["SKILL.md", "templates"]


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [
        ("digest", "digest mismatch"),
        ("size", "size mismatch"),
        ("frontmatter", "duplicate key 'allowed-tools'"),
    ],
)
def test_hostile_server_makes_load_exit_3_naming_file_and_mismatch(
    mode: str, fragment: str, capfd: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["host", "--yes", "--server", "h=" + hostile(mode), "load", "pdf-processing"], capfd
    )
    assert code == 3
    assert ex.SKILL_MD_URI in err
    assert fragment in err
    assert out == ""  # no unverified byte is printed


def test_skills_get_for_another_uri_exits_5(capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        ["host", "--yes", "--server", "h=" + hostile("wrong-get"), "load", "h:" + ex.SKILL_MD_URI],
        capfd,
    )
    assert code == 5
    assert "skill://other/SKILL.md" in err


def test_over_limit_entry_exits_5(capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        ["host", "--yes", "--server", "h=" + hostile("over-limit"), "load", "pdf-processing"], capfd
    )
    assert code == 5
    assert "513 files; the limit is 512" in err


def test_dynamic_skill_needs_allow_dynamic(capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        ["host", "--yes", "--server", "h=" + hostile("dynamic"), "load", "pdf-processing"], capfd
    )
    assert code == 4
    assert "dynamic" in err
    code, out, err = run(
        [
            "host",
            "--yes",
            "--allow-dynamic",
            "--server",
            "h=" + hostile("dynamic"),
            "load",
            "pdf-processing",
        ],
        capfd,
    )
    assert code == 0, err
    assert "integrity: NOT verified" in out


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [
        ("die", "closed the connection"),
        ("slow", "did not answer resources/read within 1.0 seconds"),
    ],
)
def test_dying_and_slow_servers_exit_2(
    mode: str, fragment: str, capfd: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        [
            "host",
            "--yes",
            "--timeout",
            "1",
            "--server",
            "h=" + hostile(mode),
            "load",
            "pdf-processing",
        ],
        capfd,
    )
    assert code == 2
    assert fragment in err


def test_server_that_cannot_start_exits_2(capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["host", "--server", "x=/nonexistent/server --flag", "list"], capfd)
    assert code == 2
    assert "cannot start" in err


def test_non_json_stdout_lines_are_reported_and_skipped(capfd: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["host", "--yes", "--server", "h=" + hostile("noise"), "load", "pdf-processing"], capfd
    )
    assert code == 0
    assert "not JSON-RPC; skipped it" in err
    assert ex.SKILL_MD.decode() in out


def test_legacy_server_falls_back_to_initialize(capfd: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["host", "--yes", "--server", "h=" + hostile("legacy"), "load", "pdf-processing"], capfd
    )
    assert code == 0, err
    assert ex.SKILL_MD.decode() in out


def test_no_server_outlives_the_command(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    pidfile = tmp_path / "pid"
    code, _, _ = run(
        ["host", "--timeout", "1", "--server", "h=" + hostile("slow", str(pidfile)), "list"], capfd
    )
    assert code == 0
    pid = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"server process {pid} outlived the command")


def test_bad_approvals_file_exits_1(
    tmp_path: Path, skills: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    approvals = tmp_path / "a.json"
    approvals.write_text('{"version": 99}')
    code, _, err = run(
        ["host", "--approvals", str(approvals), "--server", "d=" + serve_cmd(skills), "list"], capfd
    )
    assert code == 1
    assert "a.json" in err


# --- demo ----------------------------------------------------------------------------------


def test_demo_runs_the_spec_flow(capfd: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["demo"], capfd)
    assert code == 0
    for fragment in (
        "sha256:99b737495721155ece826d57521e2d66141ebdc1344a400487481ea2642ab19e",
        "-> resources/directory/read",
        "not part of the approved skill: skill://pdf-processing/templates/credit-note.md",
        "is not listed in the held entry",
        "approval revoked",
        "verified 39 bytes, sha256:766bffa8d4908ce897e1727ca22e4bf0fa796620b35218ce2132a124545626f1",
    ):
        assert fragment in out


class _TTY:
    """A stdin that says it is a terminal and answers from a script."""

    def __init__(self, answers: str) -> None:
        import io

        self._lines = io.StringIO(answers)

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        return self._lines.readline()


def test_interactive_prompt_shows_origin_files_and_changes(
    skills: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    approvals = tmp_path / "approvals.json"
    base = ["host", "--server", "docs-server=" + serve_cmd(skills), "--approvals", str(approvals)]
    monkeypatch.setattr(sys, "stdin", _TTY("y\n"))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run([*base, "load", "pdf-processing"], capfd)
    assert code == 0, err
    assert "== Approval needed: a skill from server docs-server ==" in err
    assert "  | description: Extract, fill, and assemble PDF documents\n" in err
    assert "  skill:   skill://pdf-processing/SKILL.md\n" in err
    assert "  files:   3, 215 bytes in all\n" in err
    assert "           29  sha256:61f4ea6d2c75...  templates/invoice.md\n" in err
    assert err.endswith("Approve this manifest? [y/N] ")
    assert ex.SKILL_MD.decode() in out

    (skills / "pdf-processing" / "templates" / "credit-note.md").write_bytes(ex.CREDIT_NOTE)
    monkeypatch.setattr(sys, "stdin", _TTY("n\n"))
    code, out, err = run([*base, "load", "pdf-processing"], capfd)
    assert code == 4
    assert "  changed since you approved it: added templates/credit-note.md (39 bytes)" in err
    assert err.endswith(
        "skills-core: declined: you did not approve docs-server:pdf-processing "
        "(skill://pdf-processing/SKILL.md)\n"
    )  # issue 13: "declined" when the user answers no
    assert out == ""


def test_interactive_grant_of_allowed_tools(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    skill_md = b"---\nname: tooly\ndescription: d\nallowed-tools: Bash\n---\nbody\n"
    write_skill(tmp_path / "skills", {"SKILL.md": skill_md}, "tooly")
    monkeypatch.setattr(sys, "stdin", _TTY("y\ny\n"))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, _, err = run(
        ["host", "--server", "s=" + serve_cmd(tmp_path / "skills"), "load", "tooly"], capfd
    )
    assert code == 0, err
    assert '  asks for: allowed-tools = "Bash" (ignored unless you grant it)' in err
    assert "Also grant allowed-tools for this skill? [y/N]" in err


def test_unexpected_errors_are_one_line(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from skills_core import cli

    def boom(args: object) -> int:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(cli, "_dispatch", boom)
    code, _, err = run(["demo"], capfd)
    assert code == 70
    assert err == "skills-core: internal error (RuntimeError: kaboom); please report it\n"

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_dispatch", interrupted)
    code, _, err = run(["demo"], capfd)
    assert code == 130


def test_listing_with_a_repeating_cursor_stops_with_a_notice_SIL_17(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # Requirement rows: SIL-17, WG-05
    code, out, err = run(["host", "--server", "h=" + hostile("loop"), "list"], capfd)
    assert code == 0
    assert "h:pdf-processing" in out
    assert "again" in err or "repeat" in err


def test_host_show_prints_extra_frontmatter_fields(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    skill_md = (
        b"---\nname: rich\ndescription: d\nlicense: MIT\nmetadata: {author: x, version: '1'}\n"
        b"x-tags: [a, b]\n---\n"
    )
    write_skill(tmp_path / "skills", {"SKILL.md": skill_md}, "rich")
    code, out, err = run(
        ["host", "--server", "s=" + serve_cmd(tmp_path / "skills"), "show", "rich"], capfd
    )
    assert code == 0, err
    assert 'license:     "MIT"' in out
    assert 'metadata:    {"author": "x", "version": "1"}' in out
    assert 'x-tags:      ["a", "b"]' in out
