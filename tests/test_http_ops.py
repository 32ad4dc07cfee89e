"""Operating ``serve --http``: probes, a line per request, metrics, the drain on SIGTERM, TLS, proxies.

Real processes throughout: ``python -m skills_core serve --http`` with uvicorn workers (two
where the number matters), real sockets, real SIGTERM sent to the main process (as an orchestrator
sends it), stderr read from a file. A loading that must be slow to be seen is made to wait on a
file the test creates (a factory module run by a real uvicorn process), never on a clock.

The rules (DESIGN docs/design.md#d15, "operable by default"): ``/healthz`` and ``/readyz`` answer without
touching the skills and are not logged at the default level; the Host and Origin checks (HTTP-03,
HTTP-04) still apply to them, with loopback names accepted; each request gets one line (text or
JSON lines) with no secret and no control character; each refusal its reason at warning level; a
cursor or session signed with another key is said as such; ``/metrics`` counts every worker's
requests; SIGTERM lets requests in flight finish within ``--graceful-timeout`` and ends the rest
cleanly, and the exit status says which.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from http_helpers import (
    JSON_HEADERS,
    MODERN_META,
    Answer,
    exchange,
    free_port,
    modern_headers,
    rpc,
    serving,
)
from interop_helpers import child_env, write_spec_skill

from skills_core import spec_examples as ex
from skills_core.adapters.asgi import HttpOptions
from skills_core.display import display_line
from skills_core.http.logs import VALUE_LIMIT
from skills_core.http.probes import Probe
from skills_core.http.server import HttpChecks, Reply
from skills_core.http.session import SessionCodec
from skills_core.server.cursors import CursorCodec

#: Read in a worker thread and sent in pieces; more than the kernel's buffers hold, so a client
#: that reads nothing holds the answer in flight.
BIG_SIZE: Final = 8 << 20
BIG_URI: Final = "skill://pdf-processing/big.bin"
SECRET_TOKEN: Final = "Bearer s3cr3t-t0ken-never-logged"
#: Deadline for anything a test waits for (a line in the log, a process to exit).
WAIT: Final = 30.0
EXIT_DRAIN_INCOMPLETE: Final = 6


@pytest.fixture(scope="module")
def skills(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ops") / "skills"
    folder = write_spec_skill(root)
    (folder / "big.bin").write_bytes(b"\xff" * BIG_SIZE)
    return root


# --- helpers ------------------------------------------------------------------------------------


def json_lines(text: str) -> list[dict[str, Any]]:
    """Every line of ``text``, each parsed as JSON (fails on a line that is not)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def eventually(check: Callable[[], Any], what: str) -> Any:
    """Poll ``check`` until it returns something true (the processes are not ours to time)."""
    deadline = time.monotonic() + WAIT
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def request_lines(stderr: Callable[[], str]) -> list[dict[str, Any]]:
    """The request lines, but those of the ``server/discover`` :func:`serving` waits with."""
    return [
        line
        for line in json_lines(stderr())
        if line.get("event") == "request" and line["method"] != "server/discover"
    ]


def both_ready(stderr: Callable[[], str]) -> None:
    """Wait until both workers have loaded their skills (each scans in a thread once it starts;
    :func:`serving` waits for one answer, from either)."""
    eventually(
        lambda: len([x for x in json_lines(stderr()) if x.get("event") == "ready"]) == 2,
        "both workers ready",
    )


def read_body(uri: str, request_id: int = 1) -> bytes:
    return rpc("resources/read", {"uri": uri, "_meta": MODERN_META}, request_id)


def read_headers(uri: str) -> dict[str, str]:
    return modern_headers("resources/read", uri)


def raw_request(headers: dict[str, str], body: bytes, host: str = "127.0.0.1") -> bytes:
    lines = ["POST /mcp HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def read_all(sock: socket.socket, limit: float = WAIT) -> bytes:
    """What the server sends until it closes (or resets) the connection."""
    sock.settimeout(limit)
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(1 << 20):
            received += chunk
    return received


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """One response on ``sock`` (status, body), by its Content-Length."""
    sock.settimeout(WAIT)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed before a response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "closed mid-body"
        body += chunk
    return int(head.split()[1]), body


def stopped(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM to the main process only (as Kubernetes or systemd send it); its exit status."""
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=WAIT)


# --- probes ---------------------------------------------------------------------------------------


def test_probes_answer_without_being_logged_at_the_default_level(skills: Path) -> None:
    """``/healthz`` and ``/readyz`` answer 200 with ``no-store`` on both workers; at the default
    level (info) they leave no line, while the MCP request beside them does."""
    with serving(skills, "--workers", "2", "--log-format", "json") as served:
        both_ready(served.stderr)
        loaded = [x for x in json_lines(served.stderr()) if x.get("event") == "ready"]
        assert [x["skills"] for x in loaded] == [1, 1]  # each worker loaded in its thread
        for _ in range(6):  # on either worker
            health = exchange(served.port, "GET", "/healthz")
            assert (health.status, health.body) == (200, b"ok\n")
            assert health.headers["Cache-Control"] == "no-store"
            ready = exchange(served.port, "GET", "/readyz")
            assert (ready.status, ready.body) == (200, b"ready\n")
        assert exchange(served.port, "HEAD", "/healthz").status == 200
        assert exchange(served.port, "POST", "/healthz", body=b"{}").status == 405
        assert exchange(served.port, "GET", "/metrics").status == 404  # not without --metrics
        uri = "skill://pdf-processing/SKILL.md"
        assert (
            exchange(served.port, "POST", "/mcp", read_headers(uri), read_body(uri)).status == 200
        )
        eventually(
            lambda: any(line["path"] == "/mcp" for line in request_lines(served.stderr)),
            "the read's line",
        )
        lines = request_lines(served.stderr)
    assert [line["status"] for line in lines if line["path"] == "/mcp"] == [200]
    probes = [line for line in lines if line["path"] in ("/healthz", "/readyz")]
    assert [line["status"] for line in probes] == [405]  # the refused POST; no answered probe


def test_probes_keep_the_host_and_origin_checks_http_03_http_04(skills: Path) -> None:
    """HTTP-04: a probe with a Host the server does not serve is refused (421) and logged at
    warning with its reason; a loopback name is accepted at any port. HTTP-03: a probe from a
    page on another origin is refused (403)."""
    with serving(skills, "--log-format", "json") as served:
        evil = exchange(served.port, "GET", "/readyz", {"Host": "evil.example"})
        assert evil.status == 421
        assert exchange(served.port, "GET", "/healthz", {"Host": "localhost:1"}).status == 200
        page = exchange(served.port, "GET", "/healthz", {"Origin": "https://evil.example"})
        assert page.status == 403
        lines = eventually(
            lambda: [line for line in request_lines(served.stderr) if line["status"] == 403],
            "the 403's line",
        )
        refused = {line["status"]: line for line in request_lines(served.stderr)}
        assert refused[421]["level"] == "warning"
        assert "evil.example" in refused[421]["reason"]
        assert lines[0]["level"] == "warning"
        assert "https://evil.example" in lines[0]["reason"]


def test_a_probe_accepts_a_loopback_host_beside_a_public_allow_list_http_04() -> None:
    """Sans-IO: with only ``app.example`` allowed, a probe may say ``localhost`` (a same-machine
    health check; DNS rebinding never puts a loopback name in Host), the endpoint may not, and
    neither accepts another name."""
    options = HttpOptions(allowed_hosts=("app.example",))
    checks = HttpChecks(options, SessionCodec(b"k" * 32), lambda: 0)

    def head(path: str, host: str, method: str = "GET") -> object:
        return checks.head(
            {"type": "http", "method": method, "path": path, "headers": [(b"host", host.encode())]}
        )

    assert isinstance(head("/healthz", "localhost:8080"), Probe)
    assert isinstance(head("/readyz", "127.0.0.7"), Probe)
    assert isinstance(head("/readyz", "app.example"), Probe)
    refused = head("/readyz", "localhost.evil.example")
    assert isinstance(refused, Reply)
    assert refused.status == 421
    endpoint = head("/mcp", "localhost:8080", "POST")
    assert isinstance(endpoint, Reply)
    assert endpoint.status == 421


# --- readiness while the skills load ----------------------------------------------------------------

FACTORY: Final = """
import os, time
from skills_core.adapters.asgi import SkillsApp, HttpOptions, derive_key
from skills_core.server import ServerOptions, server_from_roots

SECRET = b"s" * 32
OPTIONS = ServerOptions(directory_read=False)

def load():
    gate = os.environ["OPS_GATE"]
    while not os.path.exists(gate):  # the test opens the gate
        time.sleep(0.02)
    if os.environ.get("OPS_FAIL"):
        raise OSError("the skills folder is gone (\\x1b[31mred\\x1b[0m)")
    return server_from_roots(
        [os.environ["OPS_ROOT"]], cursor_key=derive_key(SECRET, "cursor"), options=OPTIONS
    )

def make():
    from skills_core.adapters._asgi_observe import configure_logging, log_event
    from skills_core.adapters._reload import reload, reload_on_hangup
    configure_logging("info", "json")
    app = SkillsApp.loading(
        load, session_key=derive_key(SECRET, "session"), options=HttpOptions(),
        server_options=OPTIONS,
    )
    say = lambda message: log_event("info", "source", message)

    def current():  # as app_from_env wires it
        if app.when_loaded(lambda server: reload(server, say)):
            return None
        return app.server

    reload_on_hangup(current, say)
    return app
"""


@contextlib.contextmanager
def loading_server(skills: Path, tmp_path: Path, *, fail: bool = False) -> Iterator[Loading]:
    """A real uvicorn process serving ``SkillsApp.loading`` whose load waits for a gate file."""
    (tmp_path / "ops_factory.py").write_text(FACTORY)
    gate, log = tmp_path / "gate", tmp_path / "stderr.log"
    port = free_port()
    env = child_env({"OPS_GATE": str(gate), "OPS_ROOT": str(skills)})
    if fail:
        env["OPS_FAIL"] = "1"
    argv = [sys.executable, "-m", "uvicorn", "--factory", "ops_factory:make", "--app-dir"]
    argv += [str(tmp_path), "--port", str(port), "--lifespan", "on", "--http"]
    argv += ["skills_core.adapters.uvicorn_http:BoundedProtocol", "--log-level", "warning"]
    with log.open("wb") as stderr:
        process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stderr=stderr)
    try:
        eventually(lambda: _answers(port, "/healthz"), "the process answers")
        yield Loading(port, gate, lambda: log.read_text(errors="replace"), process)
    finally:
        process.terminate()
        process.wait(timeout=WAIT)


@dataclass
class Loading:
    port: int
    gate: Path
    stderr: Callable[[], str]
    process: subprocess.Popen[bytes]


def _answers(port: int, path: str) -> int | None:
    try:
        return exchange(port, "GET", path, timeout=5).status
    except OSError:
        return None


def test_readyz_is_503_until_the_catalog_is_loaded(skills: Path, tmp_path: Path) -> None:
    """The process answers ``/healthz`` at once and ``/readyz`` 503 while the skills load; a
    request to the endpoint meanwhile waits for them (never an empty listing); once loaded,
    ``/readyz`` is 200 and the waiting request is answered with the skill."""
    with loading_server(skills, tmp_path) as server:
        assert _answers(server.port, "/healthz") == 200
        assert _answers(server.port, "/readyz") == 503
        answers: list[Answer] = []
        body = rpc("skills/list", {"_meta": MODERN_META})
        waiting = threading.Thread(
            target=lambda: answers.append(
                exchange(
                    server.port, "POST", "/mcp", modern_headers("skills/list"), body, timeout=WAIT
                )
            )
        )
        waiting.start()
        assert _answers(server.port, "/readyz") == 503
        server.gate.touch()
        eventually(lambda: _answers(server.port, "/readyz") == 200, "ready")
        waiting.join(WAIT)
        (answer,) = answers
        assert answer.status == 200
        assert [s["uri"] for s in answer.json()["result"]["skills"]] == [
            "skill://pdf-processing/SKILL.md"
        ]
        ready = [line for line in json_lines(server.stderr()) if line.get("event") == "ready"]
        assert ready[0]["skills"] == 1


def test_the_handshake_is_answered_while_the_catalog_loads(skills: Path, tmp_path: Path) -> None:
    """``server/discover`` and a legacy ``initialize`` are answered at once while the skills
    load (their answers depend on the server's options only, and are the loaded server's: no
    ``directoryRead`` here, as the options say); a legacy session opened then goes on once
    loaded; a listing still waits for the whole catalog."""
    discover = rpc("server/discover", {"_meta": MODERN_META})
    initialize = rpc(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    with loading_server(skills, tmp_path) as server:
        early = exchange(server.port, "POST", "/mcp", modern_headers("server/discover"), discover)
        opened = exchange(server.port, "POST", "/mcp", JSON_HEADERS, initialize)
        assert _answers(server.port, "/readyz") == 503  # answered while still loading
        assert early.status == 200
        assert opened.status == 200
        session = opened.headers["mcp-session-id"]
        assert session
        skills_ext = early.json()["result"]["capabilities"]["extensions"]
        (declared,) = skills_ext.values()
        assert "directoryRead" not in json.dumps(declared)
        server.gate.touch()
        eventually(lambda: _answers(server.port, "/readyz") == 200, "ready")
        late = exchange(server.port, "POST", "/mcp", modern_headers("server/discover"), discover)
        assert late.json() == early.json()
        legacy = {**JSON_HEADERS, "MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": session}
        listed = exchange(server.port, "POST", "/mcp", legacy, rpc("skills/list", {}, 2))
        assert [s["uri"] for s in listed.json()["result"]["skills"]] == [
            "skill://pdf-processing/SKILL.md"
        ]


def test_a_sighup_during_the_load_rescans_once_loaded(skills: Path, tmp_path: Path) -> None:
    """The load may have read the folders before the change the SIGHUP announces: the skills
    are scanned again once loaded, before they are served (and the signal kills nothing)."""
    with loading_server(skills, tmp_path) as server:
        server.process.send_signal(signal.SIGHUP)
        assert _answers(server.port, "/healthz") == 200  # still there: the handler is installed
        assert "reloaded" not in server.stderr()
        server.gate.touch()
        eventually(lambda: "reloaded: 1 skill(s) served" in server.stderr(), "the re-scan")
        eventually(lambda: _answers(server.port, "/readyz") == 200, "ready")
        lines = json_lines(server.stderr())
        events = [x.get("event") for x in lines if x.get("event") in ("source", "ready")]
        assert events == ["source", "ready"]  # re-scanned before it serves
        assert server.process.poll() is None


def test_a_catalog_that_fails_to_load_fails_the_probes_without_a_traceback(
    skills: Path, tmp_path: Path
) -> None:
    """The load's error is one log line at error level (escaped), and both probes answer 503
    naming it, so an orchestrator restarts the process; the endpoint answers 503 at once."""
    with loading_server(skills, tmp_path, fail=True) as server:
        server.gate.touch()
        eventually(lambda: _answers(server.port, "/healthz") == 503, "healthz fails")
        assert _answers(server.port, "/readyz") == 503
        answer = exchange(
            server.port,
            "POST",
            "/mcp",
            modern_headers("skills/list"),
            rpc("skills/list", {"_meta": MODERN_META}),
        )
        assert answer.status == 503
        text = server.stderr()
        assert "Traceback" not in text
        assert "\x1b" not in text
        (failed,) = [line for line in json_lines(text) if line.get("event") == "load"]
        assert failed["level"] == "error"
        assert "the skills folder is gone" in failed["message"]


# --- a line per request -----------------------------------------------------------------------------


def test_each_request_has_a_json_line_with_its_fields_and_no_secret(skills: Path) -> None:
    """One JSON line per request with time, client, status, MCP method, URI, error code, bytes
    and latency; the ``Authorization`` value never appears; a URI with terminal escapes arrives
    escaped."""
    with serving(skills, "--log-format", "json") as served:
        headers = {**read_headers("skill://pdf-processing/SKILL.md"), "Authorization": SECRET_TOKEN}
        read = exchange(
            served.port, "POST", "/mcp", headers, read_body("skill://pdf-processing/SKILL.md")
        )
        assert read.status == 200
        hostile = "skill://x\x1b[2J\x1b]0;owned\x07/SKILL.md"
        get = exchange(
            served.port,
            "POST",
            "/mcp",
            {**modern_headers("skills/get"), "Authorization": SECRET_TOKEN},
            rpc("skills/get", {"uri": hostile, "_meta": MODERN_META}, 2),
        )
        assert get.status == 200
        assert get.json()["error"]["code"] < 0
        lines = eventually(
            lambda: len(request_lines(served.stderr)) >= 2 and request_lines(served.stderr),
            "two request lines",
        )
        text = served.stderr()
    assert "s3cr3t" not in text
    assert "\x1b" not in text
    assert "\x07" not in text
    first, second = lines
    assert set(first) >= {"time", "level", "client", "status", "method", "uri", "code"}
    assert set(first) >= {"bytes", "ms"}
    assert first["time"].endswith("Z")
    assert first["client"].startswith("127.0.0.1:")
    assert (first["status"], first["method"], first["uri"]) == (
        200,
        "resources/read",
        "skill://pdf-processing/SKILL.md",
    )
    assert first["code"] is None
    assert first["bytes"] == len(read.body)
    assert first["ms"] >= 0
    assert (second["method"], second["code"]) == ("skills/get", get.json()["error"]["code"])
    assert second["uri"] == hostile  # exact once parsed, escaped on the wire


def test_text_lines_are_one_line_each_and_escaped(skills: Path) -> None:
    """The text format: ``key=value`` pairs on one line; a hostile value cannot add a line,
    a pair or a terminal escape."""
    with serving(skills) as served:
        hostile = 'skill://x\nFAKE status=200 "\x1b[31m/SKILL.md'
        exchange(
            served.port,
            "POST",
            "/mcp",
            modern_headers("skills/get"),
            rpc("skills/get", {"uri": hostile, "_meta": MODERN_META}),
        )
        line = eventually(
            lambda: [x for x in served.stderr().splitlines() if " method=skills/get " in x],
            "the request's line",
        )[0]
        text = served.stderr()
    assert "\x1b" not in text
    assert not any(x.startswith("FAKE") for x in text.splitlines())
    assert " status=200 verb=POST path=/mcp method=skills/get uri=" in line
    quoted = line.split(" uri=", 1)[1]
    shown, end = json.JSONDecoder().raw_decode(quoted)  # one quoted value, whatever it holds
    assert shown == display_line(hostile, VALUE_LIMIT)
    assert quoted[end:].startswith(" code=-32602 bytes=")
    assert line.split()[1] == "INFO"


@pytest.mark.parametrize(
    ("status", "change"),
    [
        (421, {"Host": "evil.example"}),
        (403, {"Origin": "https://evil.example"}),
        (415, {"Content-Type": "text/plain"}),
    ],
)
def test_refusals_are_warnings_with_their_reason_http_03_04_06(
    skills: Path, status: int, change: dict[str, str]
) -> None:
    """HTTP-03, HTTP-04, HTTP-06: a refused request is logged at warning level with why, and
    without its Authorization header."""
    with serving(skills, "--log-format", "json", "--log-level", "warning") as served:
        headers = {**modern_headers("skills/list"), "Authorization": SECRET_TOKEN, **change}
        body = rpc("skills/list", {"_meta": MODERN_META})
        assert exchange(served.port, "POST", "/mcp", headers, body).status == status
        (line,) = eventually(lambda: request_lines(served.stderr), "the refusal's line")
        assert "s3cr3t" not in served.stderr()
    assert (line["status"], line["level"]) == (status, "warning")
    assert line["reason"]


def test_a_body_over_the_limit_or_too_slow_is_a_warning_with_its_reason_http_05(
    skills: Path,
) -> None:
    """HTTP-05: 413 (declared over the cap) and 408 (the body did not arrive within
    ``--body-timeout``) are logged at warning level with their reason."""
    args = ("--log-format", "json", "--body-timeout", "1")
    with serving(skills, *args) as served:
        with socket.create_connection(("127.0.0.1", served.port)) as sock:
            head = raw_request(modern_headers("skills/list"), b"")
            sock.sendall(head.replace(b"Content-Length: 0", b"Content-Length: 999999999"))
            assert read_response(sock)[0] == 413
        body = rpc("skills/list", {"_meta": MODERN_META})
        with socket.create_connection(("127.0.0.1", served.port)) as sock:
            sock.sendall(raw_request(modern_headers("skills/list"), body)[: -len(body) // 2])
            assert read_response(sock)[0] == 408
        lines = eventually(
            lambda: len(request_lines(served.stderr)) >= 2 and request_lines(served.stderr),
            "both lines",
        )
    by_status = {line["status"]: line for line in lines}
    assert by_status[413]["level"] == by_status[408]["level"] == "warning"
    assert "999999999" in by_status[413]["reason"]
    assert "1 s" in by_status[408]["reason"]


def test_a_cursor_signed_with_another_key_is_logged_as_such(skills: Path) -> None:
    """The client is told ``Invalid cursor`` whatever the reason; the operator's log says the
    cursor was signed with another key (workers or servers that do not share the secret)."""
    with serving(skills, "--log-format", "json") as served:
        foreign = CursorCodec(os.urandom(32)).encode("skills/list", "pdf-processing")
        answer = exchange(
            served.port,
            "POST",
            "/mcp",
            modern_headers("skills/list"),
            rpc("skills/list", {"cursor": foreign, "_meta": MODERN_META}),
        )
        assert answer.json()["error"] == {"code": -32602, "message": "Invalid cursor"}
        garbage = exchange(
            served.port,
            "POST",
            "/mcp",
            modern_headers("skills/list"),
            rpc("skills/list", {"cursor": "not a cursor", "_meta": MODERN_META}),
        )
        assert garbage.json()["error"]["message"] == "Invalid cursor"
        lines = eventually(
            lambda: len(request_lines(served.stderr)) >= 2 and request_lines(served.stderr),
            "both lines",
        )
        assert foreign not in served.stderr()  # the cursor itself is never logged
    first, second = lines
    assert first["level"] == "warning"
    assert "not signed with this server's key" in first["reason"]
    assert second["level"] == "info"
    assert "malformed" in second["reason"]


def test_a_session_signed_with_another_key_is_logged_as_such_http_25(skills: Path) -> None:
    """HTTP-25: a legacy request with a session id minted under another key gets 404; the log
    says the id was signed with another key, at warning level, without the id."""
    with serving(skills, "--log-format", "json") as served:
        foreign = SessionCodec(os.urandom(32)).mint(
            "2025-11-25", expires=int(time.time()) + 3600, nonce=os.urandom(16)
        )
        headers = {
            **JSON_HEADERS,
            "MCP-Protocol-Version": "2025-11-25",
            "Mcp-Session-Id": foreign,
        }
        answer = exchange(served.port, "POST", "/mcp", headers, rpc("skills/list"))
        assert answer.status == 404
        (line,) = eventually(lambda: request_lines(served.stderr), "the line")
        assert foreign not in served.stderr()
    assert line["level"] == "warning"
    assert "not signed with this server's key" in line["reason"]


# --- metrics ----------------------------------------------------------------------------------------


def metric(text: str, name: str) -> float:
    """The sum of every series of ``name`` (with any labels, or starting with the labels given:
    ``name{label="value"``) in a Prometheus text answer."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and line[len(name)] in "{ ,}":  # a name, or its first labels
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_metrics_count_every_workers_requests(skills: Path) -> None:
    """With ``--metrics`` and two workers, ``/metrics`` (Prometheus text) answers for both: the
    request counter, the latency histogram and the bytes served move by what was asked, the
    catalog gauges say one skill and its files."""
    with serving(skills, "--workers", "2", "--metrics", "--log-format", "json") as served:
        both_ready(served.stderr)
        first = exchange(served.port, "GET", "/metrics")
        assert first.status == 200
        assert first.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = first.body.decode()
        assert metric(text, "skills_core_catalog_skills") == 1
        assert metric(text, "skills_core_catalog_files") == len(ex.FILES) + 1  # and big.bin
        assert metric(text, "skills_core_ready") == 1
        before = metric(text, 'skills_core_http_requests_total{method="resources/read"')
        sent = 0
        for number in range(10):  # on a fresh connection each: both workers answer some
            answer = exchange(
                served.port,
                "POST",
                "/mcp",
                read_headers("skill://pdf-processing/SKILL.md"),
                read_body("skill://pdf-processing/SKILL.md", number),
            )
            sent += len(answer.body)

        def counted() -> str | None:
            body = exchange(served.port, "GET", "/metrics").body.decode()
            reads = metric(body, 'skills_core_http_requests_total{method="resources/read"')
            workers = metric(body, "skills_core_workers")
            return body if reads - before == 10 and workers == 2 else None

        text = eventually(counted, "ten reads counted over both workers")

        def settled() -> bool:  # once each worker's report is out, any worker answers for both
            scrapes = [exchange(served.port, "GET", "/metrics").body.decode() for _ in range(6)]
            reads = 'skills_core_http_requests_total{method="resources/read"'
            return all(metric(scrape, reads) - before == 10 for scrape in scrapes)

        eventually(settled, "every scrape counts the ten reads")
    assert metric(text, 'skills_core_http_response_bytes_total{method="resources/read"') == sent
    count = 'skills_core_http_request_duration_seconds_count{method="resources/read"'
    assert metric(text, count) == 10
    assert (
        'skills_core_http_request_duration_seconds_bucket{method="resources/read",le="+Inf"} 10'
        in text
    )
    assert metric(text, "skills_core_catalog_last_scan_timestamp_seconds") > 1.7e9
    assert metric(text, "skills_core_catalog_scan_failures_total") == 0


def test_metrics_follow_the_catalog_scans_and_failed_looks(tmp_path: Path) -> None:
    """A skill added is a new catalog (scans 1 -> 2, the scan time moves, skills 1 -> 2); a root
    that disappears is a failed look (counted once), the catalog kept."""
    root = tmp_path / "current"
    write_spec_skill(root)
    with serving(root, "--metrics", "--ttl-ms", "1") as served:

        def scrape() -> str:
            return exchange(served.port, "GET", "/metrics").body.decode()

        def listed() -> int:
            body = rpc("skills/list", {"_meta": MODERN_META})
            answer = exchange(served.port, "POST", "/mcp", modern_headers("skills/list"), body)
            return len(answer.json()["result"]["skills"])

        first = scrape()
        assert metric(first, "skills_core_catalog_scans_total") == 1
        shutil.copytree(root / "pdf-processing", root / "other")
        text = (root / "other" / "SKILL.md").read_text().replace("pdf-processing", "other", 1)
        (root / "other" / "SKILL.md").write_text(text)
        eventually(lambda: listed() == 2, "the new skill listed")
        second = scrape()
        assert metric(second, "skills_core_catalog_scans_total") == 2
        assert metric(second, "skills_core_catalog_skills") == 2
        assert metric(second, "skills_core_catalog_last_scan_timestamp_seconds") >= metric(
            first, "skills_core_catalog_last_scan_timestamp_seconds"
        )
        shutil.rmtree(root)
        assert listed() == 2  # the catalog is kept
        assert metric(scrape(), "skills_core_catalog_scan_failures_total") == 1
        assert listed() == 2
        assert metric(scrape(), "skills_core_catalog_scan_failures_total") == 1  # once


# --- the drain --------------------------------------------------------------------------------------


def test_sigterm_lets_a_request_in_flight_finish(skills: Path) -> None:
    """A request whose body is still arriving when SIGTERM comes (two workers) is answered in
    full; the log says the server is stopping with one request in flight and that it finished;
    the exit status is 0, with no traceback."""
    body = read_body("skill://pdf-processing/SKILL.md")
    request = raw_request(read_headers("skill://pdf-processing/SKILL.md"), body)
    args = ("--workers", "2", "--graceful-timeout", "20", "--log-format", "json")
    with serving(skills, *args) as served:
        with socket.create_connection(("127.0.0.1", served.port)) as sock:
            sock.sendall(request[:-10])
            served.process.send_signal(signal.SIGTERM)
            eventually(
                lambda: any(
                    x.get("event") == "drain" and x["in_flight"] == 1
                    for x in json_lines(served.stderr())
                ),
                "the drain's first line",
            )
            sock.sendall(request[-10:])
            status, answer = read_response(sock)
        assert status == 200
        assert json.loads(answer)["result"]["contents"][0]["uri"].endswith("SKILL.md")
        assert served.process.wait(timeout=WAIT) == 0
        text = served.stderr()
    assert "Traceback" not in text
    lines = json_lines(text)
    stops = [x for x in lines if x.get("event") == "stopped"]
    assert sum(x["finished"] for x in stops) == 1
    assert sum(x["cut"] for x in stops) == 0
    (shut,) = [x for x in lines if x.get("event") == "serve" and "shut down" in x["message"]]
    assert "exit status 0" in shut["message"]


def test_past_the_graceful_timeout_requests_end_cleanly_and_the_exit_status_says_so(
    skills: Path,
) -> None:
    """Past ``--graceful-timeout``: a request still waiting for its body gets 503 with
    ``Connection: close``; an 8 MiB answer its client does not take is cut off (its connection
    closed mid-answer); stderr has no traceback and a warning per request ended; the exit
    status is 6."""
    body = read_body("skill://pdf-processing/SKILL.md")
    waiting = raw_request(read_headers("skill://pdf-processing/SKILL.md"), body)
    args = ("--workers", "2", "--graceful-timeout", "1", "--log-format", "json", "--send-timeout")
    with serving(skills, *args, "60") as served:
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", served.port))
        slow = socket.create_connection(("127.0.0.1", served.port))
        with stalled, slow:
            stalled.sendall(raw_request(read_headers(BIG_URI), read_body(BIG_URI)))
            slow.sendall(waiting[:-10])
            time.sleep(0.5)  # not a timing assertion: lets the server start the big answer
            assert stopped(served.process) == EXIT_DRAIN_INCOMPLETE
            answer = read_all(slow)
            cut = read_all(stalled)
        text = served.stderr()
    assert answer.startswith(b"HTTP/1.1 503")
    assert b"connection: close" in answer.lower()
    assert len(cut) < BIG_SIZE  # ended mid-answer, not sent whole
    assert "Traceback" not in text
    assert "CancelledError" not in text
    lines = json_lines(text)
    ended = [x for x in lines if x.get("event") == "request" and x["level"] == "warning"]
    assert len(ended) == 2, ended
    assert all("server stopped" in x["reason"] for x in ended)
    (shut,) = [x for x in lines if x.get("event") == "serve" and "shut down" in x["message"]]
    assert shut["level"] == "warning"
    assert "exit status 6" in shut["message"]


def test_sigterm_with_nothing_in_flight_exits_0_with_a_shutdown_line(skills: Path) -> None:
    with serving(skills, "--workers", "2") as served:
        assert stopped(served.process) == 0
        text = served.stderr()
    assert "Traceback" not in text
    assert "shut down: 0 request(s) finished during the drain, 0 ended" in text


def worker_pids(pid: int) -> list[int]:
    """uvicorn's worker processes under its supervisor ``pid`` (Linux ``/proc``)."""
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
            for child in map(int, handle.read().split()):
                with open(f"/proc/{child}/cmdline", "rb") as cmdline:
                    if b"spawn_main" in cmdline.read():
                        found.append(child)
    return found


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="Linux /proc")
def test_a_worker_that_died_makes_the_exit_status_6(skills: Path) -> None:
    """A worker killed (SIGKILL: no drain, no report) is replaced by uvicorn; at SIGTERM the
    shutdown says a worker ended without draining, and the exit status is 6."""
    with serving(skills, "--workers", "2", "--log-format", "json") as served:
        both_ready(served.stderr)
        victim = eventually(lambda: worker_pids(served.process.pid), "the workers")[0]
        os.kill(victim, signal.SIGKILL)
        eventually(
            lambda: (
                len(worker_pids(served.process.pid)) == 2
                and victim not in worker_pids(served.process.pid)
            ),
            "a replacement",
        )
        assert stopped(served.process) == EXIT_DRAIN_INCOMPLETE
        text = served.stderr()
    assert f"worker(s) {victim} ended without draining" in text
    assert "Traceback" not in text


# --- TLS and proxies ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1 (its own CA), made by openssl."""
    openssl = shutil.which("openssl")
    assert openssl is not None, "the TLS tests need the openssl command"
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,digitalSignature,keyCertSign",
            "-addext",
            "extendedKeyUsage=serverAuth,clientAuth",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@contextlib.contextmanager
def serve_tls(skills: Path, *args: str) -> Iterator[tuple[int, subprocess.Popen[bytes], Path]]:
    port = free_port()
    log = Path(tempfile.mkstemp(suffix=".log")[1])
    argv = [sys.executable, "-m", "skills_core", "serve", "--http", f"127.0.0.1:{port}", *args]
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [*argv, str(skills)],
            env=child_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        yield port, process, log
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=WAIT)
        log.unlink()


def https(port: int, context: ssl.SSLContext, path: str = "/healthz") -> int | None:
    connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=context)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def test_tls_serves_https_with_the_given_certificate(
    skills: Path, certificate: tuple[Path, Path]
) -> None:
    """``--tls-cert``/``--tls-key``: the server speaks HTTPS (a client trusting the certificate
    gets answers, an MCP request included), and says https in its first line."""
    cert, key = certificate
    with serve_tls(skills, "--tls-cert", str(cert), "--tls-key", str(key)) as (port, _, log):
        context = ssl.create_default_context(cafile=str(cert))
        eventually(lambda: https(port, context) == 200, "an HTTPS answer")
        connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
        try:
            connection.request(
                "POST",
                "/mcp",
                rpc("server/discover", {"_meta": MODERN_META}),
                modern_headers("server/discover"),
            )
            assert connection.getresponse().status == 200
        finally:
            connection.close()
        plain = _answers(port, "/healthz")  # plain HTTP to a TLS port: no answer, or a 400
        assert plain != 200
        assert f"https://127.0.0.1:{port}/mcp" in log.read_text()


def test_tls_ca_requires_a_client_certificate(skills: Path, certificate: tuple[Path, Path]) -> None:
    """``--tls-ca``: a client without a certificate signed by it is refused at the handshake."""
    cert, key = certificate
    args = ("--tls-cert", str(cert), "--tls-key", str(key), "--tls-ca", str(cert))
    with serve_tls(skills, *args) as (port, _, _):
        with_cert = ssl.create_default_context(cafile=str(cert))
        with_cert.load_cert_chain(str(cert), str(key))
        eventually(lambda: https(port, with_cert) == 200, "an answer to a client with a cert")
        without = ssl.create_default_context(cafile=str(cert))
        assert https(port, without) is None


def test_tls_settings_that_do_not_load_stop_serve_with_one_line(
    skills: Path, certificate: tuple[Path, Path], tmp_path: Path
) -> None:
    cert, _ = certificate
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key\n")
    for args, said in [
        (["--tls-cert", str(cert)], "--tls-cert and --tls-key go together"),
        (["--tls-cert", str(cert), "--tls-key", str(bad)], "do not load"),
        (["--proxy-headers", "--forwarded-allow-ips", "not-an-ip"], "not 'not-an-ip'"),
        (["--forwarded-allow-ips", "10.0.0.1"], "needs --proxy-headers"),
    ]:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "skills_core",
                "serve",
                "--http",
                str(free_port()),
                *args,
                str(skills),
            ],
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=WAIT,
            check=False,
        )
        assert done.returncode == 1, (args, done.stderr)
        assert said in done.stderr
        assert "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1


def test_proxy_headers_change_the_logged_client(skills: Path) -> None:
    """``--proxy-headers``: the client logged is the one ``X-Forwarded-For`` names when the peer
    is a trusted proxy (127.0.0.1 here); without the flag the header is ignored. The Host check
    still reads ``Host``, never ``X-Forwarded-Host``."""
    headers = {**modern_headers("skills/list"), "X-Forwarded-For": "203.0.113.7"}
    body = rpc("skills/list", {"_meta": MODERN_META})
    for args, client in [(("--proxy-headers",), "203.0.113.7"), ((), "127.0.0.1:")]:
        with serving(skills, "--log-format", "json", *args) as served:
            assert exchange(served.port, "POST", "/mcp", headers, body).status == 200
            refused = {**headers, "Host": "evil.example", "X-Forwarded-Host": "localhost"}
            assert exchange(served.port, "POST", "/mcp", refused, body).status == 421
            lines = eventually(
                lambda: len(request_lines(served.stderr)) >= 2 and request_lines(served.stderr),
                "two lines",
            )
        assert lines[0]["client"].startswith(client), (args, lines[0])
