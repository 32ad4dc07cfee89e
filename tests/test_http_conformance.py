"""The official MCP conformance suite's server scenarios against ``skills-core serve --http``.

``@modelcontextprotocol/conformance@0.2.0-alpha.12`` under Node 22, both installed by
``scripts/node-tools`` (``scripts/check`` runs it); the tests fail, never skip, without them.
One server serves a test tree for the whole module: the spec's ``pdf-processing`` skill (with its
``templates/`` folder), a nested ``acme/billing/refunds`` skill with a ``references/`` folder, and
``meeting-notes``. The SEP-2640 scenarios discover their fixtures from ``skills/list`` and
``resources/list`` (the suite hard-codes no URI; its ``sep-2640-skills-directory`` wants a served
directory with a subdirectory, its enumeration probes ``skills/get`` on an unserved URI).

Runs (docs/requirements.md#http-conformance):

* the three SEP-2640 server scenarios at 2026-07-28 (the extension's default wire) and, with
  ``--spec-version 2025-11-25 --force``, over a legacy session: every check passes, none is
  skipped for want of the extension;
* ``--requirements 2026-07-28`` (the revision's frozen scenario list) and ``--suite all
  --spec-version 2025-11-25``, each with its baseline in ``conformance/`` (every entry justified
  there: they probe tools, prompts and fixtures a skills server does not have). The base transport
  scenarios that do apply (server-stateless, dns-rebinding-protection, sep-2164-resource-not-found,
  resources-list, caching; server-initialize, server-session-lifecycle, ping,
  server-sse-multiple-streams) are asserted to pass by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from http_helpers import CONFORMANCE, Served, require_node_tools, run_node_tool, serving
from interop_helpers import EXTRA_FILES, REPO_ROOT, write_files, write_spec_skill

SEP_2640 = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"]
RESULT = re.compile(r"Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    require_node_tools()
    root = tmp_path_factory.mktemp("conformance-skills")
    write_spec_skill(root)
    write_files(root, EXTRA_FILES)
    with serving(root) as served:
        yield served


def conformance(served: Served, *args: str) -> str:
    result = run_node_tool([str(CONFORMANCE), "server", "--url", served.url, *args])
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    return output


@pytest.mark.parametrize("scenario", SEP_2640)
@pytest.mark.parametrize(
    "era", [[], ["--spec-version", "2025-11-25", "--force"]], ids=["2026-07-28", "2025-11-25"]
)
def test_sep_2640_server_scenario(server: Served, scenario: str, era: list[str]) -> None:
    output = conformance(server, "--scenario", scenario, *era)
    found = RESULT.search(output)
    assert found is not None, output[-3000:]
    passed, total, failed, warnings = map(int, found.groups())
    assert (failed, warnings) == (0, 0)
    assert passed == total >= 6, output[-3000:]
    # Checks are skipped only where the protocol revision makes them not applicable.
    skipped = re.findall(r"\[([\w-]+)\s*\]\s*\S*SKIPPED", output)
    assert set(skipped) <= {
        "sep-2640-skills-list-cache-attributes",
        "sep-2640-skills-get-cache-attributes",
    }, skipped
    if not era:
        assert not skipped


def test_requirements_2026_07_28(server: Served) -> None:
    baseline = REPO_ROOT / "conformance" / "server-2026.yml"
    output = conformance(
        server, "--requirements", "2026-07-28", "--expected-failures", str(baseline)
    )
    assert "Baseline check passed" in output
    for scenario in (
        "server-stateless",
        "dns-rebinding-protection",
        "sep-2164-resource-not-found",
        "resources-list",
        "caching",
    ):
        line = re.search(rf"[✓✗] {scenario}: (\d+) passed, (\d+) failed", output)
        assert line is not None, scenario
        allowed_failures = {"server-stateless": 4, "caching": 2}.get(scenario, 0)
        assert int(line.group(2)) == allowed_failures, line.group(0)
        assert int(line.group(1)) > 0


def test_suite_all_2025_11_25(server: Served) -> None:
    baseline = REPO_ROOT / "conformance" / "server-2025.yml"
    output = conformance(
        server,
        "--suite",
        "all",
        "--spec-version",
        "2025-11-25",
        "--expected-failures",
        str(baseline),
    )
    assert "Baseline check passed" in output
    for scenario in (
        "server-initialize",
        "server-session-lifecycle",
        "ping",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        "resources-list",
    ):
        assert re.search(rf"✓ {scenario}: [1-9]\d* passed, 0 failed", output), scenario


def test_baselines_are_the_ones_in_the_repository() -> None:
    """The baselines list scenario ids only (no stray entries the suite would not recognise)."""
    for name in ("server-2026.yml", "server-2025.yml"):
        text = (REPO_ROOT / "conformance" / name).read_text(encoding="utf-8")
        entries = re.findall(r"^  - (\S+)$", text, flags=re.MULTILINE)
        assert entries
        assert len(entries) == len(set(entries))
        assert all(re.fullmatch(r"[a-z0-9-]+(:[a-z0-9-]+)?", entry) for entry in entries)
