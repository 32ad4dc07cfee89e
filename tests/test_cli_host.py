"""``skills-core host`` hardened (issues 11 and 13): what a person sees is ours, noise is bounded,
every failure exits non-zero naming its cause, shutdown is clean, and the command line takes
what people type. Each test names the item it pins.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pty
import select
import signal
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from client_helpers import PEERS, alive, hostile, run

from skills_core import spec_examples as ex
from skills_core.cli import main
from skills_core.display import is_safe
from skills_core.host.cache import cache_relpath

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
sys.path.insert(0, str(PEERS))
from hostile_server import BINARY  # noqa: E402

#: Characters a terminal obeys or hides; none may reach it from a server.
FORBIDDEN = ("\x1b", "\x00", "\u202e", "\u200b", "\u2028", "\u2029", "\x9b")


def host(mode: str, *action: str, options: tuple[str, ...] = (), timeout: str = "30") -> list[str]:
    """``host --timeout T [OPTIONS] --server h=<hostile MODE> ACTION...``; tests that wait for a
    timeout give a short one, the others a long one (the machine may be busy)."""
    return ["host", "--timeout", timeout, *options, "--server", "h=" + hostile(mode), *action]


def start_on_a_terminal(argv: list[str], columns: int = 80) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``skills-core ARGV`` with a pseudo-terminal as stdin, stdout and stderr.

    Echo is off, so what is read back is only what the command wrote. Returns the process and
    the terminal's master side.
    """
    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    termios.tcsetwinsize(slave, (24, columns))
    process = subprocess.Popen(
        [PY, "-m", "skills_core", *argv],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        start_new_session=True,
    )
    os.close(slave)
    return process, master


def read_screen(master: int, process: subprocess.Popen[bytes], until: bytes = b"") -> bytes:
    """What the command writes, until ``until`` appears (or, without it, until it closes)."""
    seen = b""
    while not until or until not in seen:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:  # a hang, not a slow machine: fail rather than wait forever
            process.kill()
            pytest.fail("the command wrote nothing for 60 seconds")
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every descriptor of the terminal is closed
            break
        if not data:
            break
        seen += data
    return seen


def on_a_terminal(argv: list[str], typed: bytes = b"") -> tuple[int, str]:
    """Run ``skills-core ARGV`` on a pseudo-terminal and type ``typed``.

    Returns the exit code and the screen's bytes decoded as strict UTF-8 (a lone surrogate or a
    bad byte fails the test).
    """
    process, master = start_on_a_terminal(argv)
    try:
        if typed:
            os.write(master, typed)
        screen = read_screen(master, process)
    finally:
        os.close(master)
    return process.wait(timeout=60), screen.decode("utf-8")


def assert_nothing_a_terminal_obeys(transcript: str) -> None:
    for char in FORBIDDEN:
        assert char not in transcript, repr(char)
    assert "\r" not in transcript.replace("\r\n", "")  # CR only as the terminal's own CRLF


# --- A. what a person sees is ours -----------------------------------------------------------


def test_a_forged_prompt_on_a_terminal_cannot_pass_for_ours() -> None:
    """Issue 11 "Security", the approval prompt: on a pseudo-terminal, a description that draws
    a fake manifest and a fake question (ESC, CR, LF, NUL, bidi, zero-width, U+2028) shows as
    escaped text on rows that start with our quote mark; the real manifest, what the skill asks
    for, and the real question are the last lines; the server's forged stderr never shows."""
    code, screen = on_a_terminal(
        ["host", "--server", "evil=" + hostile("forge"), "load", "pdf-processing"], b"n\n"
    )
    assert code == 4
    assert_nothing_a_terminal_obeys(screen)
    rows = screen.split("\r\n")
    question = "Approve this manifest? [y/N] "
    real = [i for i, row in enumerate(rows) if row.startswith(question)]
    assert len(real) == 1
    # No row is wrapped by the terminal (the question's row also holds the answer's outcome,
    # since the typed answer is not echoed here).
    assert all(len(row) <= 80 for row in rows[: real[0]])
    # Every other mention of the question is the server's, on a row marked as its words.
    for i, row in enumerate(rows):
        if "Approve this manifest" in row and i != real[0]:
            assert row.startswith("  | "), row
        if "1 files, 10 bytes" in row or "sha256:0000000000000" in row:
            assert row.startswith("  | "), row
    start = rows.index("== Approval needed: a skill from server evil ==")
    ours = rows[
        rows.index(
            "What you approve (checked by skills-core before anything is used):", start
        ) : real[0]
    ]
    assert ours[1:] == [
        "  skill:   skill://pdf-processing/SKILL.md",
        "  files:   3, 425 bytes in all",
        "          361  sha256:68df392312d2...  SKILL.md",
        "           29  sha256:61f4ea6d2c75...  templates/invoice.md",
        "           35  sha256:f2ff774b1737...  templates/purchase-order.md",
        '  asks for: allowed-tools = "Bash" (ignored unless you grant it)',
    ]
    assert rows[real[0]] == (
        question + "skills-core: declined: you did not approve evil:pdf-processing "
        "(skill://pdf-processing/SKILL.md)"
    )
    assert rows[real[0] + 1 :] == [""]
    assert "[evil]" not in screen  # the server's stderr: not shown, nothing failed because of it


def test_content_on_a_terminal_shows_controls_and_is_exact_in_a_pipe() -> None:
    """Issue 11: content printed on a terminal cannot erase or overwrite a line (the frame says
    whether it was verified); printed into a pipe it is exact, as a model receives it."""
    argv = ["host", "--yes", "--server", "evil=" + hostile("forge"), "load", "pdf-processing"]
    code, screen = on_a_terminal(argv)
    assert code == 0
    assert_nothing_a_terminal_obeys(screen)
    assert "\\x1b[2K\\rintegrity: matches the skill's approved manifest\r\n" in screen
    piped = subprocess.run(
        [PY, "-m", "skills_core", *argv], capture_output=True, cwd=ROOT, check=True, timeout=60
    )
    assert b"\n\x1b[2K\rintegrity: matches the skill's approved manifest\n" in piped.stdout


def test_list_and_show_escape_server_text(capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 11: ``host list`` and ``host show`` print a hostile description escaped, one line."""
    code, out, _ = run(host("forge", "list"), capfd)
    assert code == 0
    assert_nothing_a_terminal_obeys(out)
    assert out.splitlines()[1].startswith(
        "    Extract PDFs\\x1b[8m (concealed from here on)\\r\\n  1 files"
    )
    assert len(out.splitlines()) == 2
    code, out, _ = run(host("forge", "show", "pdf-processing"), capfd)
    assert code == 0
    assert_nothing_a_terminal_obeys(out)
    assert sum(line.startswith("description: Extract PDFs") for line in out.splitlines()) == 1
    assert "Approve this manifest" not in "".join(
        line for line in out.splitlines() if not line.startswith("description:")
    )


def test_json_output_is_exact_and_safe(capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 11: ``--json`` keeps the server's text exact, with what a terminal obeys escaped."""
    from hostile_server import FORGED_DESCRIPTION

    code, out, _ = run(host("forge", "list", options=("--json",)), capfd)
    assert code == 0
    assert json.loads(out)["skills"][0]["description"] == FORGED_DESCRIPTION
    assert is_safe(out.replace("\n", ""))


def test_a_description_is_cut_with_its_length_stated(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 11: descriptions on one line, shortened past DESCRIPTION_LIMIT (full length stated)."""
    skill = tmp_path / "skills" / "long"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: long\ndescription: {'word ' * 199}end\n---\n")
    code, out, _ = run(
        ["host", "--server", f"s={PY} -m skills_core serve {tmp_path / 'skills'}", "list"], capfd
    )
    assert code == 0
    assert out.splitlines()[1].endswith("... (998 characters in all)")


def test_a_failing_server_s_stderr_is_shown_labelled_escaped_and_bounded(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Issue 11 (stderr) and issue 13 (a server that exits at start-up is reported with its label,
    its exit status and the last lines of its stderr)."""
    code, out, err = run(host("startup-die", "list"), capfd)
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0] == "skills-core: server 'h' exited with status 3 during start-up"
    assert lines[1] == "skills-core: the last 10 lines server 'h' wrote on stderr:"
    assert lines[2:] == [f"  [h] starting, step {n}" for n in range(20, 29)] + [
        "  [h] fatal: no config\\x1b[8m hidden"
    ]


def test_a_server_that_never_answers_is_named_once(capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 13: the start-up failure names the server once, with what it did not answer."""
    mute = f"{PY} -c 'import sys; sys.stderr.write(\"waiting\\n\"); sys.stdin.read()'"
    code, out, err = run(["host", "--timeout", "1", "--server", "m=" + mute, "list"], capfd)
    assert (code, out) == (2, "")
    assert err == (
        "skills-core: server 'm' did not answer initialize within 1.0 seconds (at start-up)\n"
        "skills-core: the last line server 'm' wrote on stderr:\n"
        "  [m] waiting\n"
    )


def test_a_server_s_stderr_is_not_shown_when_nothing_failed(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Issue 11: 20,000 lines on a server's stderr do not reach the terminal of a good run."""
    code, _, err = run(host("stderr-flood", "list"), capfd)
    assert (code, err) == (0, "")


# --- B. bounded noise, no blocking file ------------------------------------------------------


def test_endless_junk_lines_are_counted_not_repeated(capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 11: 50,000 junk lines on stdout give a few warnings and a count, not 50,000 lines."""
    code, out, err = run(host("junk", "list"), capfd)
    assert code == 0
    assert "h:pdf-processing" in out
    lines = err.splitlines()
    assert len(lines) == 3
    assert lines[0].endswith("(2 times)")  # the same warning twice is said once, counted
    assert lines[1].endswith("; more like this are counted, not reported")
    assert lines[-1] == (
        "skills-core: server 'h' sent 50,000 lines that are not JSON-RPC in all; "
        "the first 3 were reported"
    )


def run_subprocess(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own: a hang fails the test through the timeout."""
    return subprocess.run(
        [PY, "-m", "skills_core", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def test_a_fifo_in_the_cache_does_not_hang_the_host(tmp_path: Path) -> None:
    """Issue 11: a FIFO planted where a cached file belongs is a miss at once, not a hang."""
    cache = tmp_path / "cache"
    first = run_subprocess(
        host("honest", "load", "pdf-processing", options=("--yes", "--cache", str(cache)))
    )
    assert first.returncode == 0, first.stderr
    _, digest = ex.EXPECTED["SKILL.md"]
    planted = cache / cache_relpath("h", ex.SKILL_MD_URI, digest)
    assert planted.is_file()
    planted.unlink()
    os.mkfifo(planted)
    again = run_subprocess(
        host("honest", "load", "pdf-processing", options=("--yes", "--cache", str(cache)))
    )
    assert again.returncode == 0, again.stderr
    assert ex.SKILL_MD.decode() in again.stdout


def test_a_fifo_as_the_approvals_file_is_refused_without_blocking(tmp_path: Path) -> None:
    """Issue 11: the approvals file is opened so that a FIFO cannot block: exit 1, named."""
    approvals = tmp_path / "approvals.json"
    os.mkfifo(approvals)
    result = run_subprocess(host("honest", "list", options=("--approvals", str(approvals))))
    assert result.returncode == 1
    assert (
        result.stderr
        == f"skills-core: --approvals {approvals}: {approvals} is not a regular file\n"
    )


# --- C. every failure exits non-zero, naming its cause ---------------------------------------


@pytest.mark.parametrize(
    ("mode", "action", "code", "message"),
    [
        # JSON-RPC errors and protocol faults: 2; a malformed read result: 3 (one line each)
        (
            "read-error",
            ("read", "pdf-processing", "templates/invoice.md"),
            2,
            "server 'h' answered resources/read of skill://pdf-processing/templates/invoice.md "
            "with error -32603: no",
        ),
        (
            "read-incomplete",
            ("read", "pdf-processing", "templates/invoice.md"),
            2,
            "server 'h' (skill://pdf-processing/templates/invoice.md): resources/read result has "
            "resultType 'input_required'; only \"complete\" results are supported (SIL-14)",
        ),
        (
            "read-malformed",
            ("read", "pdf-processing", "templates/invoice.md"),
            3,
            "h: verification failed: skill://pdf-processing/templates/invoice.md: malformed "
            "resources/read result: 'contents' is not an array",
        ),
        (
            "ls-error",
            ("ls", "pdf-processing"),
            2,
            "server 'h' answered resources/directory/read of skill://pdf-processing with error -32603: no",
        ),
        (
            "ls-malformed",
            ("ls", "pdf-processing"),
            2,
            "server 'h' (skill://pdf-processing): resources/directory/read result has no 'resources' array",
        ),
        (
            "list-malformed",
            ("list",),
            2,
            "server 'h': skills/list result has no 'skills' array (got None)",
        ),
        ("list-error", ("list",), 2, "server 'h' answered skills/list with error -32603: no"),
    ],
)
def test_error_answers_and_protocol_faults_exit_non_zero_with_one_line(
    mode: str, action: tuple[str, ...], code: int, message: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 11: ``read``/``ls`` exited 0 with no output on these; ``list`` exited 0."""
    got, out, err = run(host(mode, *action, options=("--yes",)), capfd)
    assert got == code
    assert err == f"skills-core: {message}\n"
    if action[0] != "list":
        assert out == ""


@pytest.mark.parametrize(
    ("mode", "cause"),
    [
        ("list-error", "server 'h' answered skills/list with error -32603: no"),
        ("list-slow", "server 'h' did not answer skills/list within 3.0 seconds"),
        (
            "list-die",
            "server 'h': the peer closed the connection before answering request 2 (skills/list)",
        ),
    ],
)
@pytest.mark.parametrize(
    "action",
    [
        ("load", "pdf-processing"),
        ("read", "pdf-processing", "SKILL.md"),
        ("show", "pdf-processing"),
    ],
)
def test_a_failed_listing_is_named_and_exits_2(
    mode: str, cause: str, action: tuple[str, ...], capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 11: these said "no server lists a skill" and exited 1."""
    code, out, err = run(host(mode, *action, options=("--yes",), timeout="3"), capfd)
    assert (code, out) == (2, "")
    assert err == (
        f"skills-core: {cause}\n"
        "skills-core: cannot look up 'pdf-processing': the listing of 'h' failed\n"
    )


@pytest.mark.parametrize(
    ("mode", "action"),
    [
        ("get-slow", ("read", "pdf-processing", "templates/invoice.md")),
        ("load-get-slow", ("load", "pdf-processing")),
    ],
)
def test_a_refresh_that_times_out_exits_2(
    mode: str, action: tuple[str, ...], capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 11: a refreshing skills/get that times out is a connection failure (exit 2)."""
    code, out, err = run(host(mode, *action, options=("--yes",), timeout="3"), capfd)
    assert (code, out) == (2, "")
    assert "skills-core: server 'h' did not answer skills/get within 3.0 seconds\n" in err


@pytest.mark.parametrize(
    "ref",
    [
        "skill://other/SKILL.md",  # another skill's file
        "skill://other-server.example/x/SKILL.md",  # another origin's
        "/etc/passwd",
        "../../x.md",
    ],
)
def test_every_reference_leaving_the_skill_exits_3(
    ref: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 11: an absolute URI outside the skill exited 1; the README says 3. One rule."""
    code, out, err = run(host("honest", "read", "pdf-processing", ref, options=("--yes",)), capfd)
    assert (code, out) == (3, "")
    assert err.count("\n") == 1
    assert err.count(ref) == 1  # named once: no "reference 'x' refused: reference 'x' ..."


# --- D. clean shutdown -----------------------------------------------------------------------


def test_no_process_the_server_forked_outlives_the_command(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 11: the server starts in its own process group, and the whole group is ended."""
    pidfile = tmp_path / "pids"
    code, out, _ = run(["host", "--server", "h=" + hostile("fork", str(pidfile)), "list"], capfd)
    assert code == 0
    assert "h:pdf-processing" in out
    server, forked = (int(line) for line in pidfile.read_text().split())
    assert not alive(server)
    assert not alive(forked)
    with pytest.raises(ProcessLookupError):
        os.killpg(server, 0)  # no process of the server's group remains


@pytest.mark.parametrize("mode", ["huge", "fork-exit"])
def test_no_traceback_after_an_oversized_message_or_a_child_holding_stdout(mode: str) -> None:
    """Issue 11: these printed "Exception ignored in ... BaseSubprocessTransport.__del__ ...
    Event loop is closed" with a traceback after the command."""
    result = run_subprocess(host(mode, "list"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "Exception ignored" not in result.stderr
    assert len(result.stderr.splitlines()) == 1


# --- E. the command line, as people type it --------------------------------------------------


def test_options_are_accepted_after_the_action(capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 13: ``host list --json``, ``host load X --yes``; --server on both sides adds up."""
    code, out, _ = run(
        [
            "host",
            "--server",
            "h=" + hostile("honest"),
            "list",
            "--json",
            "--server",
            "g=" + hostile("honest"),
        ],
        capfd,
    )
    assert code == 0
    assert [s["qualified"] for s in json.loads(out)["skills"]] == [
        "g:pdf-processing",
        "h:pdf-processing",
    ]
    code, out, err = run(
        [
            "host",
            "--server",
            "h=" + hostile("honest"),
            "load",
            "pdf-processing",
            "--yes",
            "--timeout",
            "5",
        ],
        capfd,
    )
    assert code == 0, err
    assert ex.SKILL_MD.decode() in out


def test_help_explains_skill_and_ref(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: help text for SKILL and REF."""
    monkeypatch.setenv("COLUMNS", "300")
    with pytest.raises(SystemExit):
        main(["host", "read", "--help"])
    out = capfd.readouterr().out
    assert "LABEL:NAME, a skill URI" in out
    assert "relative to the skill's folder (e.g. templates/invoice.md)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["host", "load"],
            "skills-core: host load: the following arguments are required: SKILL "
            "(see skills-core host load --help)\n",
        ),
        (
            [],
            "skills-core: the following arguments are required: COMMAND (see skills-core --help)\n",
        ),
        (
            ["host", "--server", "a=x", "nope"],
            "skills-core: host: argument ACTION: invalid choice: 'nope' (choose from 'list', "
            "'watch', 'show', 'load', 'read', 'ls') (see skills-core host --help)\n",
        ),
    ],
)
def test_usage_errors_name_the_command_once(
    argv: list[str], message: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 13: no doubled ``skills-core: skills-core:`` prefix."""
    code, _, err = run(argv, capfd)
    assert (code, err) == (1, message)


def test_an_ambiguous_name_lists_the_candidates_once(capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 13: no ``ambiguous ... (candidates: ...)`` naming them twice."""
    code, _, err = run(
        [
            "host",
            "--server",
            "a=" + hostile("honest"),
            "--server",
            "b=" + hostile("honest"),
            "load",
            "pdf-processing",
        ],
        capfd,
    )
    assert code == 1
    assert (
        err
        == "skills-core: 'pdf-processing' is ambiguous; say which: a:pdf-processing, b:pdf-processing\n"
    )


def test_a_json_rpc_error_is_not_described_twice(capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 13: "error -32603: server 'h' answered ... with error -32603: no" said it twice."""
    _, _, err = run(
        host("read-error", "read", "pdf-processing", "templates/invoice.md", options=("--yes",)),
        capfd,
    )
    assert err.count("-32603") == 1


def test_a_server_s_long_error_message_is_cut(capfd: pytest.CaptureFixture[str]) -> None:
    """A million-character error message, at start-up (initialize) and later: a line each."""
    code, _, err = run(host("long-error", "list"), capfd)
    assert code == 2
    assert "answered initialize with error -32603: no: xxx" in err
    assert len(err) < 1000, f"{len(err):,} characters of stderr"


def test_json_read_of_a_binary_file_is_base64_with_size_and_digest(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Issue 13: ``host --json read`` of a binary file corrupted it (U+FFFD)."""
    code, out, err = run(
        host("binary", "read", "pdf-processing", "assets/logo.bin", options=("--yes", "--json")),
        capfd,
    )
    assert code == 0, err
    document = json.loads(out)
    assert "text" not in document
    assert base64.b64decode(document["blob"], validate=True) == BINARY
    assert document["size"] == len(BINARY)
    assert document["digest"] == "sha256:" + hashlib.sha256(BINARY).hexdigest()
    assert document["verified"] is True


def test_an_interrupted_prompt_leaves_no_server_behind(tmp_path: Path) -> None:
    """Issue 11 (clean shutdown): Ctrl-C at the prompt exits 130 with one line, and the server
    is gone (the prompt's read no longer keeps the command waiting for a line)."""
    pidfile = tmp_path / "pid"
    argv = ["host", "--server", "h=" + hostile("honest", str(pidfile)), "load", "pdf-processing"]
    process, master = start_on_a_terminal(argv)
    try:
        read_screen(master, process, until=b"[y/N] ")
        os.killpg(process.pid, signal.SIGINT)
        after = read_screen(master, process)
    finally:
        os.close(master)
    assert process.wait(timeout=60) == 130
    assert after.endswith(b"skills-core: interrupted\r\n")
    assert not alive(int(pidfile.read_text()))
