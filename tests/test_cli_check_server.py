"""``skills-core check --server`` against real peers, and beside MCP Inspector 2.12.0's ``--verify``.

The peers (all child processes):

* ours, ``skills-core serve examples/skills``, over stdio and over Streamable HTTP in both eras:
  clean, exit 0;
* the TypeScript SDK 2.4.0 skills server (``@modelcontextprotocol/server`` ``ext/skills``, with
  ``@modelcontextprotocol/node`` 2.1.2 for HTTP; ``tests/node/ts_skills_server.mjs``), over stdio and
  HTTP in both eras: clean, exit 0;
* FastMCP 4.1.6 (``tests/peers/fastmcp_server.py``, modern only): it serves a ``_manifest`` resource
  inside each skill that the skill's entry does not list, and names SKILL.md resources
  ``<skill>/SKILL.md`` in ``resources/list`` (FMT-08 asks for the skill's name): exit 1;
* ``tests/peers/rule_breaking_server.py``: one rule broken per mode, each found with its code in all
  four forms (text, json, sarif, github), with the exit code its severity gives;
* ``tests/peers/hostile_server.py``: servers that never answer, die, or flood, which cost the check
  bounded time (exit 2).

Inspector's verifier (``mcp-inspector --cli --verify --method skills/list``) is run on the same
servers; every finding it reports has a counterpart among ours (:data:`INSPECTOR_CODES`), and when
it fails a server, so do we.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
import sarif_check
from http_helpers import (
    INSPECTOR,
    NODE,
    NODE_DIR,
    free_port,
    node_env,
    require_node_tools,
    run_node_tool,
    serving,
    stop,
    wait_until_answering,
)
from interop_helpers import REPO_ROOT, child_env

from skills_core.rules import RULES, explain
from skills_core.validation import Severity

PEERS: Final = REPO_ROOT / "tests" / "peers"
EXAMPLES: Final = REPO_ROOT / "examples" / "skills"
TS_SERVER: Final = NODE_DIR / "ts_skills_server.mjs"
PY: Final = sys.executable


def _modes() -> dict[str, str]:
    """``MODES`` of the rule-breaking peer: each mode, and the code it draws."""
    spec = importlib.util.spec_from_file_location(
        "rule_breaking_server", PEERS / "rule_breaking_server.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    modes: dict[str, str] = module.MODES
    return modes


MODES: Final = _modes()

#: Inspector's codes (conformance, frontmatter, and ``file-<status>`` of a file not verified), and
#: the codes of ours that report the same fact.
INSPECTOR_CODES: Final[dict[str, set[str]]] = {
    "missing-name": {"name-missing", "name-not-string"},
    "malformed-name": {"name-invalid", "bad-uri"},
    "missing-description": {"description-missing", "description-empty", "description-not-string"},
    "malformed-description": {"description-too-long"},
    "malformed-uri": {"bad-uri"},
    "name-path-mismatch": {"name-mismatch"},
    "dynamic-resources": {"server-dynamic-skill"},
    "resource-limit-exceeded": {"too-many-resources"},
    "size-limit-exceeded": {"too-large"},
    "manifest-missing-self": {"missing-skill-md"},
    "duplicate-resource": {"duplicate-uri"},
    "resource-outside-skill-root": {"outside-skill"},
    "missing-digest": {"missing-digest"},
    "malformed-digest": {"bad-digest"},
    "missing-size": {"missing-size"},
    "malformed-size": {"bad-size"},
    "duplicate-name": {"duplicate-name"},
    "frontmatter-absent": {"frontmatter-delimiter"},
    "frontmatter-unparsable": {code for code in RULES if code.startswith("frontmatter-")},
    "frontmatter-mismatch": {"server-frontmatter-mismatch"},
    "file-mismatch": {"server-size-mismatch", "server-digest-mismatch"},
    "file-read-error": {"server-read-failed", "server-read-contents"},
    "file-unverifiable": {"bad-digest", "missing-digest"},
}


def check(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m skills_core check ARGS...``."""
    return subprocess.run(
        [PY, "-m", "skills_core", "check", *args],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def found(*args: str) -> tuple[int, set[str], dict[str, Any]]:
    """Run ``check --format json ARGS...``: the exit code, the codes found, the report."""
    result = check("--format", "json", *args)
    report = json.loads(result.stdout)
    codes = {f["code"] for r in report["results"] for f in r["findings"]}
    codes |= {f["code"] for f in report["findings"]}
    return result.returncode, codes, report


def stdio(*argv: str | Path) -> str:
    return "peer=" + " ".join(str(a) for a in argv)


OURS: Final = stdio(PY, "-m", "skills_core", "serve", EXAMPLES)
TS_STDIO: Final = stdio(NODE, TS_SERVER, EXAMPLES, "stdio")
FASTMCP: Final = stdio(PY, PEERS / "fastmcp_server.py", EXAMPLES)


def breaking(mode: str) -> str:
    return stdio(PY, PEERS / "rule_breaking_server.py", mode)


@contextlib.contextmanager
def ts_http() -> Iterator[str]:
    """The TypeScript SDK server over Streamable HTTP on a free port."""
    require_node_tools()
    port = free_port()
    process = subprocess.Popen(
        [str(NODE), str(TS_SERVER), str(EXAMPLES), "http", str(port)],
        env=node_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_until_answering(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


# --- clean servers ------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["text", "json", "sarif", "github"])
def test_our_server_is_clean_in_every_form(output: str) -> None:
    result = check("--format", output, "--server", OURS)
    assert result.returncode == 0, result.stdout + result.stderr
    if output == "sarif":
        log = json.loads(result.stdout)
        assert sarif_check.check(log) == []
        assert log["runs"][0]["results"] == []
    elif output == "github":
        assert "::" not in result.stdout
    elif output == "text":
        assert "ok       skill://pdf-processing/SKILL.md" in result.stdout
        assert "2 skills checked on peer: 2 valid, 0 invalid; 0 errors, 0 warnings" in result.stdout


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_our_http_server_is_clean_in_both_eras(era: str) -> None:
    with serving(EXAMPLES) as served:
        code, codes, report = found("--protocol-era", era, "--server", f"ours={served.url}")
    assert (code, codes) == (0, set())
    assert report["era"] == era
    assert report["files_read"] == 5


def test_the_typescript_sdk_server_is_clean_over_stdio() -> None:
    require_node_tools()
    code, codes, report = found("--server", TS_STDIO)
    assert (code, codes) == (0, set()), report
    assert report["summary"]["skills"] == 2
    assert report["files_read"] == 5


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_typescript_sdk_server_is_clean_over_http(era: str) -> None:
    with ts_http() as url:
        code, codes, report = found("--protocol-era", era, "--server", f"ts={url}")
    assert (code, codes) == (0, set()), report
    assert report["era"] == era


def test_fastmcp_serves_a_file_its_entries_do_not_list() -> None:
    """FastMCP 4.1.6: ``skill://<skill>/_manifest`` is served inside every skill, unlisted
    (ENTRY-08), and its SKILL.md resources are named ``<skill>/SKILL.md`` (FMT-08 is a SHOULD)."""
    # FastMCP takes seconds to start: on a loaded machine, more than the default 10 s per request
    code, codes, report = found("--timeout", "60", "--server", FASTMCP)
    assert code == 1
    assert codes == {"server-unlisted-file", "server-resources-list"}
    unlisted = [
        f["file"]
        for r in report["results"]
        for f in r["findings"]
        if f["code"] == "server-unlisted-file"
    ]
    assert unlisted == ["skill://pdf-processing/_manifest", "skill://release-notes/_manifest"]
    legacy, codes, _ = found("--timeout", "60", "--protocol-era", "legacy", "--server", FASTMCP)
    assert (legacy, codes) == (1, {"server-no-extension"})  # FastMCP serves skills modern only


# --- one rule broken each, in every form --------------------------------------------------------


def _exit_for(code: str, *, strict: bool) -> int:
    severity = RULES[code].severity
    failing = severity is Severity.ERROR or (strict and severity is Severity.WARNING)
    return 1 if failing else 0


@pytest.mark.parametrize("mode", sorted(MODES))
def test_each_broken_rule_is_found_in_every_form(mode: str) -> None:
    code = MODES[mode]
    server = breaking(mode)
    # json: the code, the exit its severity gives (and with --strict)
    exit_code, codes, _ = found("--server", server)
    assert code in codes
    assert exit_code == _exit_for(code, strict=False)
    if RULES[code].severity is not Severity.ERROR:  # --strict fails warnings, never notes
        strict, _, _ = found("--strict", "--server", server)
        assert strict == _exit_for(code, strict=True)
    # text
    text = check("--server", server)
    assert f"[{code}]" in text.stdout
    # sarif: structurally valid, the rule's result on a logical location
    sarif = check("--format", "sarif", "--server", server)
    log = json.loads(sarif.stdout)
    assert sarif_check.check(log) == []
    results = [r for r in log["runs"][0]["results"] if r["ruleId"] == code]
    assert results
    assert all(loc["logicalLocations"] for r in results for loc in r["locations"])
    assert sarif.returncode == exit_code
    # github
    github = check("--format", "github", "--server", server)
    assert f"title=skills-core {code}::" in github.stdout
    assert github.returncode == exit_code


def test_the_clean_mode_of_the_breaking_server_is_clean() -> None:
    for era in ("modern", "legacy"):
        assert found("--protocol-era", era, "--server", breaking("clean"))[:2] == (0, set())


def test_ignore_silences_a_message_not_the_verdict() -> None:
    server = breaking("digest")
    code, codes, _ = found("--ignore", "server-digest-mismatch", "--server", server)
    assert (code, codes) == (1, set())  # the skill stays invalid, as in validate
    assert (
        found("--ignore", "server-directory-disagrees", "--server", breaking("dir-missing"))[0] == 0
    )
    unknown = check("--ignore", "server-digest-mismach", "--server", server)
    assert unknown.returncode == 2
    assert "did you mean 'server-digest-mismatch'?" in unknown.stderr


def test_explain_prints_the_rule_of_a_server_code() -> None:
    result = check("--explain", "server-unlisted-file")
    assert result.returncode == 0
    assert result.stdout == explain(RULES["server-unlisted-file"])
    assert "ENTRY-08" in result.stdout


# --- hostile servers: bounded time --------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("slow", "did not answer resources/read within 1"),
        ("list-slow", "did not answer skills/list within 1"),
        ("die", "resources/read"),
        ("huge", "skills/list"),
    ],
)
def test_a_hostile_server_costs_bounded_time(mode: str, said: str, tmp_path: Path) -> None:
    sarif = tmp_path / "log.sarif"
    started = time.monotonic()
    result = check(
        "--timeout", "1", "--sarif", str(sarif),
        "--server", stdio(PY, PEERS / "hostile_server.py", mode),
    )  # fmt: skip
    assert time.monotonic() - started < 60
    assert result.returncode == 2, result.stdout + result.stderr
    assert said in result.stderr
    log = json.loads(sarif.read_text())
    assert sarif_check.check(log) == []
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_the_whole_check_has_a_time_bound() -> None:
    started = time.monotonic()
    result = check(
        "--timeout", "30", "--max-time", "2",
        "--server", stdio(PY, PEERS / "hostile_server.py", "slow"),
    )  # fmt: skip
    assert time.monotonic() - started < 30
    assert result.returncode == 2
    assert "--max-time 2s" in result.stderr


def test_a_server_that_cannot_start_is_exit_2() -> None:
    result = check("--server", stdio(PY, PEERS / "hostile_server.py", "startup-die"))
    assert result.returncode == 2
    assert "at start-up" in result.stderr
    assert "fatal: no config\\x1b[8m hidden" in result.stderr  # its stderr, shown escaped
    assert "\x1b" not in result.stderr


def test_server_text_reaches_the_terminal_escaped() -> None:
    """A forged description (escape sequences, bidi overrides, line breaks) never prints raw."""
    result = check("--server", stdio(PY, PEERS / "hostile_server.py", "forge"))
    for stream in (result.stdout, result.stderr):
        assert "\x1b" not in stream
        assert "\u202e" not in stream


# --- beside MCP Inspector's verifier ------------------------------------------------------------


def inspector(server: str, era: str = "auto") -> tuple[int, set[str]]:
    """Inspector's ``--verify`` on a stdio ``server``: its exit code and codes."""
    argv = [str(INSPECTOR), "--cli", "--verify", "--method", "skills/list"]
    if era != "auto":
        argv += ["--protocol-era", era]
    command = server.partition("=")[2].split(" ")
    result = run_node_tool([*argv, "--transport", "stdio", "--", *command], timeout=120)
    codes: set[str] = set()
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            report = json.loads(line)
            codes |= {issue["code"] for issue in report["conformance"] + report["frontmatter"]}
            codes |= {f"file-{f['status']}" for f in report["files"] if f["status"] != "verified"}
    return result.returncode, codes


INSPECTED: Final = {
    "ours": (OURS, "auto"),
    "typescript-sdk": (TS_STDIO, "auto"),
    "fastmcp": (FASTMCP, "modern"),
    **{f"breaking-{mode}": (breaking(mode), "auto") for mode in sorted(MODES)},
    **{
        f"hostile-{mode}": (stdio(PY, PEERS / "hostile_server.py", mode), "auto")
        for mode in ("digest", "size", "frontmatter", "invalid", "loop", "over-limit", "wrong-get")
    },
}


@pytest.mark.parametrize("name", sorted(INSPECTED))
def test_we_find_at_least_what_inspector_finds(name: str) -> None:
    require_node_tools()
    server, era = INSPECTED[name]
    theirs, their_codes = inspector(server, era)
    slow = ("--timeout", "60") if name == "fastmcp" else ()  # FastMCP takes seconds to start
    ours, our_codes, _ = found(*slow, "--server", server)
    for code in their_codes:
        assert INSPECTOR_CODES[code] & our_codes, (code, our_codes)
    if theirs != 0:  # a server Inspector fails (7: nonconformant, 1: an error), we fail too
        assert ours != 0, (theirs, their_codes, our_codes)
