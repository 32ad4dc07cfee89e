"""The program the official conformance suite runs for its client scenarios: ``skills-core host``.

Usage (by the suite, which appends the mock server's URL):
``conformance client --command "python tests/conformance_client.py" --scenario NAME``

The suite sets ``MCP_CONFORMANCE_SCENARIO`` and ``MCP_CONFORMANCE_PROTOCOL_VERSION`` (2025-11-25
unless ``--spec-version`` says otherwise). The era is pinned from the latter
(``--protocol-era legacy`` or ``modern``): the suite's mocks answer ``server/discover`` whatever
the version, so an unpinned host would always land in the modern era and the legacy runs would
test nothing legacy.

What it does, each step one ``skills-core host`` command over HTTP (a fresh host each time, as a
person would type them):

(``--json --yes`` on each: machine-readable output, the manifest approved without a prompt)

1. ``list``; for a server that does not list ``pdf-processing`` (the ``initialize`` and
   ``request-metadata`` mocks declare no skills) that is all.
2. ``show pdf-processing``: the entry, whose manifest names every file (no content read).
3. ``sep-2640-client-no-prefetch``: stop here (a load would read SKILL.md, which that scenario
   counts as a prefetch; listing and showing must read nothing).
4. ``load pdf-processing``; when it succeeds, ``read`` every other file the manifest
   lists. Reading after a good load is what makes the ``verify-*`` scenarios meaningful: they fail
   a host that reads ``references/FORMS.md`` after a SKILL.md that fails verification, so a
   wrapper that never reads on would pass them without testing anything.

Exit status: the first failing command's (the ``verify-*`` scenarios expect the load to fail).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

SKILL = "mock:pdf-processing"


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    era = "legacy" if version < "2026-07-28" else "modern"
    host = [sys.executable, "-m", "skills_core", "host", "--server", f"mock={url}"]
    host += ["--protocol-era", era, "--timeout", "10"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        # Options before the action: the host sub-command takes them there.
        done = subprocess.run(
            [*host, "--json", "--yes", *args], capture_output=True, text=True, check=False
        )
        sys.stderr.write(f"$ host {' '.join(args)} -> {done.returncode}\n{done.stderr}")
        sys.stdout.write(done.stdout)
        return done

    listed = run("list")
    if listed.returncode != 0:
        return listed.returncode
    names = [skill["name"] for skill in json.loads(listed.stdout)["skills"]]
    if SKILL.partition(":")[2] not in names:
        return 0  # a server without the skill (initialize, request-metadata): listing is all
    shown = run("show", SKILL)
    if shown.returncode != 0 or scenario == "sep-2640-client-no-prefetch":
        return shown.returncode
    entry = json.loads(shown.stdout)["entry"]
    loaded = run("load", SKILL)
    if loaded.returncode != 0:
        return loaded.returncode
    root = entry["uri"].rpartition("/")[0] + "/"
    for resource in entry["resources"]:
        if resource["uri"] != entry["uri"]:
            read = run("read", SKILL, resource["uri"].removeprefix(root))
            if read.returncode != 0:
                return read.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
