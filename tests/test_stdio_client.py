"""The stdio client, hardened (issue 11): bounded noise, a server's stderr relayed safely and
bounded, the whole process group ended, and never a traceback (asyncio and trio alike).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from client_helpers import HOSTILE, alive
from hypothesis import given
from hypothesis import strategies as st
from interop_helpers import PEERS, child_env, new_host, serve_argv, write_spec_skill

import skills_core as sc
from skills_core import spec_examples as ex
from skills_core.adapters import asyncio_stdio, trio_stdio
from skills_core.adapters._io import STDERR_LINES_SHOWN, stderr_relay
from skills_core.adapters.stdio import DEFAULT_TIMEOUT
from skills_core.client_stream import (
    REPORTS_SHOWN,
    STDERR_LINE_BYTES,
    STDERR_TAIL,
    ClientStream,
    Report,
    StderrLines,
)
from skills_core.errors import TransportError
from skills_core.host.driver import handshake

ROOT = Path(__file__).resolve().parents[1]
PEER = str(PEERS / "echo_server.py")
FLAVOURS = ["asyncio", "trio"]
META = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
}


def run(flavour: str, fn: Callable[[], Awaitable[None]]) -> None:
    if flavour == "asyncio":
        asyncio.run(fn())  # type: ignore[arg-type]
    else:
        trio.run(fn)


def opener(flavour: str) -> Any:
    return asyncio_stdio.open_stdio_client if flavour == "asyncio" else trio_stdio.open_stdio_client


# --- the pure parts --------------------------------------------------------------------------


def test_repeated_reports_are_counted_not_repeated() -> None:
    """Issue 11 "bounded noise": 50,000 junk lines give a few reports and one count."""
    loop = ClientStream(label="h")
    loop.request("skills/list", None)
    outcomes = loop.feed(b"junk, not JSON\n" * 50_000)
    reports = [o for o in outcomes if isinstance(o, Report)]
    assert len(reports) == REPORTS_SHOWN
    assert "more like this are counted" in reports[-1].message
    loop.feed(b'{"jsonrpc":"2.0","id":99,"result":{}}\n')  # one unknown id: reported, no summary
    summaries = [r.message for r in loop.summaries()]
    assert summaries == [
        f"server 'h' sent 50,000 lines that are not JSON-RPC in all; "
        f"the first {REPORTS_SHOWN} were reported"
    ]


def test_stderr_lines_split_cut_and_keep_a_tail() -> None:
    lines = StderrLines()
    assert lines.feed(b"one\r\ntw") == ["one"]
    assert lines.feed(b"o\n" + b"x" * (STDERR_LINE_BYTES + 10) + b"\nbad \xff\n") == [
        "two",
        "x" * STDERR_LINE_BYTES + " [10 more bytes]",
        "bad \ufffd",
    ]
    assert lines.feed(b"no end") == []
    assert lines.feed(b"") == ["no end"]
    assert lines.tail == (
        "one",
        "two",
        "x" * STDERR_LINE_BYTES + " [10 more bytes]",
        "bad \ufffd",
        "no end",
    )
    many = StderrLines()
    many.feed(b"".join(b"line %d\n" % n for n in range(100)))
    assert many.tail == tuple(f"line {n}" for n in range(100 - STDERR_TAIL, 100))


@given(st.binary(max_size=3000), st.integers(min_value=1, max_value=97))
def test_stderr_lines_are_the_same_whole_and_in_pieces(data: bytes, step: int) -> None:
    whole = StderrLines()
    expected = whole.feed(data) + whole.feed(b"")
    pieces = StderrLines()
    got: list[str] = []
    for start in range(0, len(data), step):
        got += pieces.feed(data[start : start + step])
    got += pieces.feed(b"")
    assert got == expected
    assert all(len(line.encode()) <= 3 * STDERR_LINE_BYTES + 40 for line in got)


def test_stderr_relay_labels_escapes_and_stops(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 11: a server's stderr reaches the terminal labelled, escaped and bounded."""
    relay = stderr_relay("docs-server")
    relay("\x1b[2K\rApprove this manifest? [y/N] \u202e")
    for n in range(STDERR_LINES_SHOWN + 50):
        relay(f"line {n}")
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert lines[0] == (
        "skills-core: [docs-server] \\x1b[2K\\rApprove this manifest? [y/N] \\u202e"
    )
    assert len(lines) == STDERR_LINES_SHOWN + 1
    assert lines[-1].endswith("the rest is not)")
    assert "\x1b" not in err
    assert "\r" not in err


# --- real processes --------------------------------------------------------------------------


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_server_stderr_is_relayed_not_passed_through(
    flavour: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 11: the forged question a server writes on stderr arrives labelled and escaped."""
    tails: list[tuple[str, ...]] = []

    async def body() -> None:
        async with opener(flavour)([sys.executable, HOSTILE, "forge"], label="evil") as client:
            await client.request("server/discover", META, timeout=10)
            await client.request("skills/list", META, timeout=10)
        tails.append(client.stderr_tail)

    run(flavour, body)
    err = capfd.readouterr().err
    assert "\x1b" not in err
    assert "\r" not in err
    assert "skills-core: [evil] \\x1b[2K\\rApprove this manifest? [y/N] " in err
    assert tails[0][0] == "\x1b[2K\rApprove this manifest? [y/N] "


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_stderr_can_be_handed_to_the_caller(
    flavour: str, capfd: pytest.CaptureFixture[str]
) -> None:
    got: list[str] = []

    async def body() -> None:
        async with opener(flavour)(
            [sys.executable, HOSTILE, "stderr-flood"], label="f", on_stderr=got.append
        ) as client:
            await client.request("server/discover", META, timeout=10)
        assert client.stderr_tail == ("flood line",) * STDERR_TAIL

    run(flavour, body)
    assert len(got) == 20_000
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_junk_on_stdout_is_summarised(flavour: str) -> None:
    """Issue 11: endless junk lines cost a few reports and a count, not one line each."""
    reports: list[str] = []

    async def body() -> None:
        async with opener(flavour)(
            [sys.executable, HOSTILE, "junk"], label="j", on_report=reports.append
        ) as client:
            result = await client.request("skills/list", META, timeout=30)
            assert result["skills"]

    run(flavour, body)
    assert len(reports) == REPORTS_SHOWN + 1
    assert reports[-1].startswith("server 'j' sent 50,000 lines that are not JSON-RPC in all")


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_no_process_of_the_group_outlives_the_block(flavour: str, tmp_path: Path) -> None:
    """Issue 11 "clean shutdown": a process the server forked is ended with it."""
    pidfile = tmp_path / "pids"

    async def body() -> None:
        async with opener(flavour)(
            [sys.executable, HOSTILE, "fork", str(pidfile)], label="f", shutdown_grace=5
        ) as client:
            await client.request("server/discover", META, timeout=10)

    run(flavour, body)
    server, forked = (int(line) for line in pidfile.read_text().split())
    assert not alive(server)
    assert not alive(forked)
    with pytest.raises(ProcessLookupError):
        os.killpg(server, 0)  # no process of the server's group remains


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_server_that_exits_fails_pending_requests_though_its_child_holds_stdout(
    flavour: str, tmp_path: Path
) -> None:
    """Issue 11: the server exits, its child keeps stdout open: the request fails as closed
    (not after its timeout), and the child is ended."""
    pidfile = tmp_path / "pids"

    async def body() -> None:
        async with opener(flavour)(
            [sys.executable, HOSTILE, "fork-exit", str(pidfile)], label="fx"
        ) as client:
            with pytest.raises(TransportError) as info:
                await client.request("server/discover", META, timeout=600)
            assert info.value.kind == "closed"

    run(flavour, body)
    _, forked = (int(line) for line in pidfile.read_text().split())
    assert not alive(forked)


CLIENT_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
from skills_core.adapters import {module} as adapter
from skills_core.adapters.stdio import DEFAULT_TIMEOUT
from skills_core.errors import TransportError
from skills_core.host.driver import handshake
META = {meta!r}

async def main():
    async with adapter.open_stdio_client(
        [sys.executable, {hostile!r}, {mode!r}], label="x", on_report=lambda m: None
    ) as client:
        try:
            await client.request("skills/list", META, timeout=20)
        except TransportError as exc:
            print("failed:", exc.kind)

{runner}
"""


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("mode", ["huge", "fork-exit"])
def test_no_traceback_at_exit(flavour: str, mode: str) -> None:
    """Issue 11: after an oversized message, or with a child holding stdout, the process ends
    without "Exception ignored in ... BaseSubprocessTransport.__del__" or any traceback."""
    runner = (
        "import asyncio; asyncio.run(main())"
        if flavour == "asyncio"
        else "import trio; trio.run(main)"
    )
    script = CLIENT_SCRIPT.format(
        root=str(ROOT),
        module=f"{flavour}_stdio",
        meta=META,
        hostile=HOSTILE,
        mode=mode,
        runner=runner,
    )
    result = subprocess.run(  # a hang fails the test through the timeout
        [sys.executable, "-X", "dev", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ("failed: protocol" if mode == "huge" else "failed: closed")
    # -X dev also reports unclosed transports (ResourceWarning); it may log slow callbacks on a
    # busy machine, which is not a failure.
    for sign in ("Traceback", "Exception ignored", "ResourceWarning", "Event loop is closed"):
        assert sign not in result.stderr


def test_the_client_does_not_start_servers_in_our_group() -> None:
    async def body() -> None:
        async with asyncio_stdio.open_stdio_client(
            [sys.executable, "-c", "import os, sys; print(os.getpgid(0)); sys.stdin.read()"],
            label="g",
            on_report=lambda m: None,
        ) as client:
            assert client.process.pid != os.getpgid(0)
            assert os.getpgid(client.process.pid) == client.process.pid

    asyncio.run(body())


# --- the client as the pump's requester ------------------------------------------------------


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_the_client_is_the_pumps_requester_with_the_timeout_it_was_opened_with(
    flavour: str, tmp_path: Path
) -> None:
    """``pump_async(host, effects, {"docs": client})``: awaited as ``client(method, params)``,
    the client waits up to the ``timeout`` given to ``open_stdio_client`` (10 s by default)."""
    write_spec_skill(tmp_path)

    async def body() -> None:
        async with opener(flavour)(
            serve_argv(str(tmp_path)), label="docs", env=child_env()
        ) as client:
            assert client.timeout == DEFAULT_TIMEOUT == 10.0
            host = new_host()
            await handshake(host, "docs", client, timeout=10)
            await sc.pump_async(host, host.list_skills("docs"), {"docs": client})
            assert host.registry.get("docs", ex.SKILL_MD_URI) is not None
        async with opener(flavour)(
            [sys.executable, PEER, "raw"], label="slow", timeout=0.2, on_report=lambda m: None
        ) as slow:
            with pytest.raises(TransportError, match=r"within 0\.2 seconds") as info:
                await slow("sleep", {})
            assert info.value.kind == "timeout"
            assert await slow("echo", {"n": 1}) == {"ok": "echo"}  # the connection lives on

    run(flavour, body)


CLOSES_STDIN = (
    "import os, sys, time\n"
    "os.close(0)\n"
    "sys.stderr.write('stdin closed\\n'); sys.stderr.flush()\n"
    "time.sleep(60)\n"
)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_server_that_closed_its_stdin_fails_requests_as_closed(flavour: str) -> None:
    """Writing to a server whose stdin is closed is a typed failure (kind ``closed``), for a
    request and a notification alike; the server is still shut down."""
    said: list[str] = []

    async def body() -> None:
        sleep = asyncio.sleep if flavour == "asyncio" else trio.sleep
        async with opener(flavour)(
            [sys.executable, "-c", CLOSES_STDIN],
            label="deaf",
            on_stderr=said.append,
            shutdown_grace=0.5,
        ) as client:
            for _ in range(500):  # up to 10 s for the server to start and close its stdin
                if said:
                    break
                await sleep(0.02)
            assert said == ["stdin closed"]
            with pytest.raises(TransportError, match="server 'deaf' closed its input") as info:
                await client.request("skills/list", META, timeout=10)
            assert info.value.kind == "closed"
            with pytest.raises(TransportError, match="closed its input"):
                await client.notify("notifications/initialized")
            process = client.process
        assert process.returncode == -signal.SIGTERM

    run(flavour, body)
