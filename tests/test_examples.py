"""The examples in examples/ run and do what the README says."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from interop_helpers import FASTMCP_ENV, FASTMCP_SERVER

from skills_core import spec_examples as ex

ROOT = Path(__file__).resolve().parents[1]


def run_example(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "validate_entry.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_validate_entry_example_on_the_spec_entry() -> None:
    result = run_example()
    assert result.returncode == 0, result.stderr
    assert (
        "VALID       skill://pdf-processing/SKILL.md  (pdf-processing: 3 files, 215 bytes)"
        in result.stdout
    )
    assert "refused (escapes-root)" in result.stdout


def test_validate_entry_example_on_a_bad_listing(tmp_path: Path) -> None:
    bad = ex.entry_json()
    bad["resources"] = "DYNAMIC"
    listing = tmp_path / "listing.json"
    listing.write_text(json.dumps({"skills": [ex.entry_json(), bad]}), encoding="utf-8")
    result = run_example(str(listing))
    assert result.returncode == 1
    assert "INVALID     skill://pdf-processing/SKILL.md" in result.stdout
    assert "/resources: 'resources' must be an array" in result.stdout


def test_tcp_server_example_answers_two_clients(tmp_path: Path) -> None:
    """The TCP example serves skills to several clients, each with its own connection."""
    import socket

    for path, data in ex.FILES.items():
        target = tmp_path / "pdf-processing" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "tcp_server.py"), str(tmp_path), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        host, port = process.stdout.readline().split()[-1].rsplit(":", 1)
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        uri = "skill://pdf-processing/templates/invoice.md"
        for client in range(2):
            with socket.create_connection((host, int(port)), timeout=10) as sock:
                lines = [
                    {
                        "jsonrpc": "2.0",
                        "id": n,
                        "method": "resources/read",
                        "params": {"uri": uri, "_meta": meta},
                    }
                    for n in range(2)
                ] + [
                    {"jsonrpc": "2.0", "id": 9, "method": "skills/list", "params": {"_meta": meta}}
                ]
                sock.sendall(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
                sock.shutdown(socket.SHUT_WR)
                received = b""
                while chunk := sock.recv(1 << 16):
                    received += chunk
            answers = [json.loads(line) for line in received.splitlines()]
            assert [a["id"] for a in answers] == [0, 1, 9], client
            texts = [a["result"]["contents"][0]["text"].encode() for a in answers[:2]]
            assert texts == [ex.FILES["templates/invoice.md"]] * 2
            assert answers[2]["result"]["skills"][0]["uri"] == "skill://pdf-processing/SKILL.md"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def run_sdk_host(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``examples/mcp_sdk_host.py ARGS`` with this interpreter."""
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "mcp_sdk_host.py"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        check=False,
        timeout=120,
    )


def spec_skills(root: Path) -> Path:
    for path, data in ex.FILES.items():
        target = root / "skills" / "pdf-processing" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root / "skills"


@pytest.mark.parametrize(("era", "version"), [("modern", "2026-07-28"), ("legacy", "2025-11-25")])
def test_mcp_sdk_host_example_loads_from_skills_core_serve(
    tmp_path: Path, era: str, version: str
) -> None:
    """The SDK's stdio client spawns ``skills-core serve``; the first skill is loaded, verified."""
    serve = [sys.executable, "-m", "skills_core", "serve", str(spec_skills(tmp_path))]
    result = run_sdk_host("--era", era, "--", *serve)
    assert result.returncode == 0, result.stderr
    assert f"connected: {version}" in result.stdout
    assert (
        "skill: server:pdf-processing: Extract, fill, and assemble PDF documents" in result.stdout
    )
    assert "integrity: matches the skill's approved manifest" in result.stdout
    # The SKILL.md, line by line, inside the origin-tagged frame.
    assert "\n".join(ex.FILES["SKILL.md"].decode().splitlines()) in result.stdout


def test_mcp_sdk_host_example_loads_from_fastmcp(tmp_path: Path) -> None:
    command = [sys.executable, str(FASTMCP_SERVER), str(spec_skills(tmp_path))]
    result = run_sdk_host("--", *command, env=FASTMCP_ENV)
    assert result.returncode == 0, result.stderr
    assert "connected: 2026-07-28" in result.stdout
    assert "# PDF processing" in result.stdout


def test_mcp_sdk_host_example_reports_a_dead_server_escaped() -> None:
    dying = [sys.executable, "-c", "import sys; sys.stderr.write('\\x1b[31mboom\\n'); sys.exit(3)"]
    result = run_sdk_host("--", *dying)
    assert result.returncode == 2
    assert "the connection is closed (server/discover got no answer)" in result.stderr
    assert "server stderr: \\x1b[31mboom" in result.stderr
    assert "\x1b" not in result.stderr


def test_http_auth_example_refuses_strangers_and_binds_sessions(tmp_path: Path) -> None:
    """examples/http_auth.py: 401 without a known token; a session is its opener's only."""
    from http_helpers import JSON_HEADERS, exchange, free_port, rpc, stop

    for path, data in ex.FILES.items():
        target = tmp_path / "pdf-processing" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    port = free_port()
    argv = [sys.executable, str(ROOT / "examples" / "http_auth.py"), str(tmp_path)]
    process = subprocess.Popen(
        [*argv, "--port", str(port)],
        env={**os.environ, "PYTHONPATH": str(ROOT), "SKILLS_AUTH_TOKENS": "ta=alice,tb=bob"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    alice = {**JSON_HEADERS, "Authorization": "Bearer ta"}
    bob = {**JSON_HEADERS, "Authorization": "Bearer tb"}
    initialize = rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    try:
        opened = None
        for _ in range(150):
            with contextlib.suppress(OSError):
                opened = exchange(port, "POST", "/mcp", alice, initialize)
                break
            time.sleep(0.1)
        assert opened is not None
        assert opened.status == 200
        stranger = exchange(port, "POST", "/mcp", JSON_HEADERS, initialize)
        assert stranger.status == 401
        assert stranger.headers["WWW-Authenticate"].startswith("Bearer")
        wrong = {**JSON_HEADERS, "Authorization": "Bearer x"}
        assert exchange(port, "POST", "/mcp", wrong, initialize).status == 401
        session = {"Mcp-Session-Id": opened.headers["Mcp-Session-Id"]}
        ping = rpc("ping", request_id=2)
        assert exchange(port, "POST", "/mcp", {**alice, **session}, ping).status == 200
        assert exchange(port, "POST", "/mcp", {**bob, **session}, ping).status == 404
    finally:
        stop(process)


def run_stdio_host(
    *args: str, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    """``examples/host_over_stdio.py ARGS`` with this interpreter."""
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "host_over_stdio.py"), *args],
        capture_output=True,
        text=True,
        stdin=stdin,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
        timeout=120,
    )


def test_host_over_stdio_example_loads_the_spec_skill_with_yes() -> None:
    """No folder: the spec's example skill is served from a temporary folder, approved with
    --yes, loaded and printed verified, inside the origin-tagged frame."""
    result = run_stdio_host("--yes")
    assert result.returncode == 0, result.stderr
    assert "'docs' connected: skills extension with directoryRead" in result.stdout
    assert "skill: docs:pdf-processing: Extract, fill, and assemble PDF documents" in result.stdout
    assert "approved (--yes)" in result.stdout
    assert "verified: 151 bytes, as the approved manifest says" in result.stdout
    assert "integrity: matches the skill's approved manifest" in result.stdout
    assert "\n".join(ex.FILES["SKILL.md"].decode().splitlines()) in result.stdout


def test_host_over_stdio_example_asks_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal the example asks; "y" approves the skill named with --skill."""
    folder = spec_skills(tmp_path)
    other = folder / "aaa-first" / "SKILL.md"
    other.parent.mkdir()
    other.write_bytes(b"---\nname: aaa-first\ndescription: Listed first\n---\n\n# First\n")
    controller, terminal = os.openpty()
    try:
        os.write(controller, b"y\n")
        result = run_stdio_host(str(folder), "--skill", "pdf-processing", stdin=terminal)
    finally:
        os.close(terminal)
        os.close(controller)
    assert result.returncode == 0, result.stderr
    assert "skill: docs:aaa-first: Listed first" in result.stdout
    assert "approve this manifest? [y/N] " in result.stdout
    assert "# PDF processing" in result.stdout
    assert "# First" not in result.stdout


def test_host_over_stdio_example_declines_without_a_terminal_or_yes(tmp_path: Path) -> None:
    result = run_stdio_host(str(spec_skills(tmp_path)))
    assert result.returncode == 1
    assert "not a terminal: pass --yes to approve" in result.stderr
    assert "note: loading skill://pdf-processing/SKILL.md from 'docs' was not approved" in (
        result.stderr
    )
    assert "# PDF processing" not in result.stdout
    result = run_stdio_host(str(spec_skills(tmp_path)), "--skill", "nope", "--yes")
    assert result.returncode == 1
    assert "no skill matches 'nope'" in result.stderr


def test_host_over_stdio_example_reports_a_server_that_cannot_serve(tmp_path: Path) -> None:
    """``serve`` on a missing folder exits at once: the handshake fails, exit status 2, and the
    server's own error reaches our stderr labelled."""
    result = run_stdio_host(str(tmp_path / "missing"), "--yes")
    assert result.returncode == 2
    assert "error: server 'docs'" in result.stderr
    assert "skills-core: [docs] " in result.stderr


def run_http_host(*args: str, answer: str | None = None) -> subprocess.CompletedProcess[str]:
    """``examples/host_over_http.py ARGS``, with ``answer`` typed at its prompt (None: no stdin)."""
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "host_over_http.py"), *args],
        input=answer,
        stdin=subprocess.DEVNULL if answer is None else None,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
        timeout=120,
    )


def assert_printed_skill_md(stdout: str) -> None:
    """The verified SKILL.md, line by line, inside the origin-tagged frame."""
    assert "integrity: matches the skill's approved manifest" in stdout
    assert "\n".join(ex.FILES["SKILL.md"].decode().splitlines()) in stdout


def test_host_over_http_example_asks_and_loads_from_skills_core_serve_http(tmp_path: Path) -> None:
    """examples/host_over_http.py against a real ``skills-core serve --http`` process: it starts
    nothing, connects to the URL, lists, asks for approval (answered y), prints the SKILL.md."""
    from http_helpers import serving

    with serving(spec_skills(tmp_path)) as served:
        result = run_http_host(served.url, answer="y\n")
    assert result.returncode == 0, result.stderr
    assert "serving" not in result.stdout  # nothing started in-process
    assert "connected: 2026-07-28 (modern)" in result.stdout
    assert "skill: docs:pdf-processing: Extract, fill, and assemble PDF documents" in result.stdout
    assert "load skill pdf-processing from 'docs'? (215 bytes)" in result.stdout
    assert "skill://pdf-processing/templates/invoice.md" in result.stdout  # the manifest shown
    assert "approve? [y/N]" in result.stdout
    assert_printed_skill_md(result.stdout)


def test_host_over_http_example_serves_the_spec_skill_itself_without_a_url() -> None:
    result = run_http_host("--yes")
    assert result.returncode == 0, result.stderr
    assert "serving the spec's example skill at http://127.0.0.1:" in result.stdout
    assert "approved (--yes)" in result.stdout
    assert_printed_skill_md(result.stdout)


@pytest.mark.parametrize("answer", ["n\n", None], ids=["no", "nobody-to-ask"])
def test_host_over_http_example_loads_nothing_unless_approved(answer: str | None) -> None:
    result = run_http_host(answer=answer)
    assert result.returncode == 1
    assert "was not approved" in result.stderr
    assert "# PDF processing" not in result.stdout


def test_host_over_http_example_reports_an_unreachable_server() -> None:
    from http_helpers import free_port

    result = run_http_host(f"http://127.0.0.1:{free_port()}/mcp", "--yes")
    assert result.returncode == 2
    assert "error: cannot connect to server 'docs'" in result.stderr
