"""The README's quick start works as written, from the repository's root.

The two shell lines under "Serve a folder of skills over Streamable HTTP" are read from the README
itself (not copied here), the `pip install` part left out (the test runs in the installed
environment) and the port replaced by a free one; then they run as a user would run them: a real
`skills-core serve --http` process on `examples/skills`, and `skills-core host` loading a skill from
it. So a README that names a folder a clone does not have, or a command that no longer works, fails.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

from skills_core import spec_examples as ex

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def quick_start_lines() -> tuple[list[str], list[str]]:
    """The serve and host command lines of the README's quick start, as argument lists."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[
        readme.index("## Quick start") : readme.index("\n## ", readme.index("## Quick start") + 3)
    ]
    block = re.search(r"Streamable HTTP.*?```sh\n(.*?)```", section, re.S)
    assert block is not None, "the quick start's HTTP block is gone"
    serve_line, host_line = block.group(1).strip().splitlines()
    serve = serve_line.split("&&", 1)[1].strip().removesuffix("&").strip()
    return shlex.split(serve), shlex.split(host_line)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_the_quick_start_serves_the_example_folder_and_loads_a_skill_from_it() -> None:
    serve, host = quick_start_lines()
    assert serve[:3] == ["skills-core", "serve", "--http"]
    assert host[:2] == ["skills-core", "host"]
    folder = ROOT / serve[-1]
    assert folder.is_dir(), f"the quick start serves {serve[-1]}, which a clone does not have"
    port = str(free_port())
    serve = [str(BIN / "skills-core"), *[port if arg == "8765" else arg for arg in serve[1:]]]
    host = [str(BIN / "skills-core"), *[a.replace(":8765/", f":{port}/") for a in host[1:]]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(serve, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:  # until the server listens
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", int(port))) == 0:
                    break
            assert server.poll() is None, "serve exited"
            assert time.monotonic() < deadline, "serve did not start listening"
            time.sleep(0.1)
        done = subprocess.run(
            host, cwd=ROOT, env=env, capture_output=True, timeout=120, check=False
        )
    finally:
        server.terminate()
        server.communicate(timeout=30)
    assert done.returncode == 0, done.stderr
    assert ex.SKILL_MD in done.stdout  # the verified SKILL.md, byte for byte
