"""The stdio adapters: asyncio and trio, server loop and client, against real processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from skills_core.adapters import asyncio_stdio, stdio, trio_stdio
from skills_core.client_stream import (
    ClientStream,
    Failed,
    GiveUp,
    Notified,
    Reply,
    Report,
    Resolved,
)
from skills_core.errors import JsonRpcError, TransportError
from skills_core.jsonrpc import NEED_DATA, Answer, JSONObject
from skills_core.jsonvalue import JSONValue
from skills_core.server_stream import FINISHED, ServerStream

PEER = str(Path(__file__).resolve().parent / "peers" / "echo_server.py")
FLAVOURS = ["asyncio", "trio"]


def run(flavour: str, fn: Callable[[], Awaitable[None]]) -> None:
    """Run an async test body on the given event loop."""
    if flavour == "asyncio":
        asyncio.run(fn())  # type: ignore[arg-type]
    else:
        trio.run(fn)


def opener(flavour: str) -> Any:
    return asyncio_stdio.open_stdio_client if flavour == "asyncio" else trio_stdio.open_stdio_client


# --- the pure cores ------------------------------------------------------------------------


class Echo:
    """A responder that echoes params, and misbehaves on request."""

    def answer(
        self, method: str, params: JSONObject | None, *, defer_reads_over: int | None
    ) -> Answer:
        if method == "boom":
            raise RuntimeError("bug")
        if method == "none":
            return None  # type: ignore[return-value]
        if method == "weird":
            return {"x": {1, 2}}  # type: ignore[dict-item]
        return {"params": params}


echo = Echo()

WIRE = (
    b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}\n'
    b"not json\n"
    b'{"jsonrpc":"2.0","id":"s","method":"boom"}\n'
    b'{"jsonrpc":"2.0","id":2,"method":"none"}\n'
    b'{"jsonrpc":"2.0","id":3,"method":"weird"}\n'
    b'{"jsonrpc":"2.0","id":5,"result":{}}\n'
    b'{"jsonrpc":"2.0","id":6,"method":"echo"}\n'
)
EXPECTED = [
    b'{"jsonrpc":"2.0","id":1,"result":{"params":{"a":1}}}',
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,',
    b'{"jsonrpc":"2.0","id":"s","error":{"code":-32603,"message":"Internal error"}}',
    b'{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error: unencodable',
    b'{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error: unencodable',
    b'{"jsonrpc":"2.0","id":6,"result":{"params":null}}',
]


@pytest.mark.parametrize("chunk", [len(WIRE), 1, 7])
def test_server_stream_answers_every_request_whole_and_byte_by_byte(chunk: int) -> None:
    stream = ServerStream(echo)
    out = b""
    for start in range(0, len(WIRE), chunk):
        stream.receive_data(WIRE[start : start + chunk])
        while (step := stream.next_output()) is not NEED_DATA:
            assert isinstance(step, bytes)
            out += step
    stream.receive_data(b"")
    assert stream.next_output() is FINISHED
    lines = out.splitlines()
    assert len(lines) == len(EXPECTED)
    for line, prefix in zip(lines, EXPECTED, strict=True):
        assert line.startswith(prefix), line


def test_client_loop_outcomes() -> None:
    loop = ClientStream(label="docs-server", max_message_size=1024)
    first, _ = loop.request("skills/list", {})
    second, _ = loop.request("skills/get", {"uri": "x"})
    third, _ = loop.request("resources/read", {"uri": "y"})
    assert loop.cancel(third, "gone")
    assert loop.cancel(999, "never sent") == b""
    outcomes = loop.feed(
        b'{"jsonrpc":"2.0","id":1,"result":{"skills":[]}}\n'
        b"Starting server...\n"
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"No skill"}}\n'
        b'{"jsonrpc":"2.0","id":3,"result":{}}\n'
        b'{"jsonrpc":"2.0","id":77,"result":{}}\n'
        b'{"jsonrpc":"2.0","id":"q","method":"sampling/createMessage"}\n'
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n'
    )
    assert isinstance(outcomes[0], Resolved)
    assert outcomes[0].request_id == first
    assert isinstance(outcomes[1], Report)
    assert "not JSON-RPC" in outcomes[1].message
    assert isinstance(outcomes[2], Failed)
    assert outcomes[2].request_id == second
    error = outcomes[2].error
    assert isinstance(error, JsonRpcError)
    assert error.rpc_code == -32602
    assert error.method == "skills/get"
    assert "docs-server" in str(error)
    assert isinstance(outcomes[3], Report)  # id 77 is nobody's; the late answer to 3 is dropped
    assert isinstance(outcomes[4], Reply)
    assert b'"code":-32601' in outcomes[4].data
    # A notification is handed on (a change notification is a hint for the host: PUSH-09).
    assert outcomes[5] == Notified("notifications/message", {})
    assert len(outcomes) == 6


def test_client_loop_gives_up_on_oversized_or_invalid_messages() -> None:
    loop = ClientStream(label="L", max_message_size=1024)
    loop.request("x", None)
    outcomes = loop.feed(b'{"jsonrpc":"2.0","id":1,"result":{"x":"' + b"a" * 2000 + b'"}}\n')
    assert len(outcomes) == 1
    assert isinstance(outcomes[0], GiveUp)
    assert outcomes[0].error.kind == "protocol"
    assert "L" in str(outcomes[0].error)

    loop = ClientStream(label="L")
    loop.request("x", None)
    outcomes = loop.feed(b'{"jsonrpc":"2.0","id":1,"result":5}\n')
    assert isinstance(outcomes[0], Failed)
    assert isinstance(outcomes[0].error, TransportError)
    assert outcomes[0].error.kind == "protocol"


def test_client_loop_end_of_stream_fails_pending() -> None:
    loop = ClientStream(label="L")
    loop.request("a", None)
    loop.request("b", None)
    outcomes = loop.feed(b"")
    assert [type(o) for o in outcomes] == [Failed, Failed]
    assert all(isinstance(o, Failed) and o.error.kind == "closed" for o in outcomes)
    assert "closed the connection" in str(outcomes[0].error)  # type: ignore[union-attr]


# --- real processes ------------------------------------------------------------------------


@pytest.mark.parametrize("client_flavour", FLAVOURS)
@pytest.mark.parametrize("server_flavour", FLAVOURS)
def test_client_talks_to_served_handler(client_flavour: str, server_flavour: str) -> None:
    async def body() -> None:
        async with opener(client_flavour)(
            [sys.executable, PEER, server_flavour], label="peer"
        ) as client:
            assert await client.request("echo", {"a": [1, "é"]}, timeout=10) == {
                "echo": {"a": [1, "é"]}
            }
            with pytest.raises(JsonRpcError) as info:
                await client.request("nope", None, timeout=10)
            assert info.value.rpc_code == -32601
            with pytest.raises(JsonRpcError) as info:
                await client.request("boom", {}, timeout=10)
            assert info.value.rpc_code == -32603
            await client.notify("notifications/initialized")
            results = await gather(
                client_flavour, [client.request("echo", {"n": n}, timeout=10) for n in range(20)]
            )
            assert results == [{"echo": {"n": n}} for n in range(20)]
            process = client.process
        assert process.returncode is not None  # no server outlives the block

    run(client_flavour, body)


async def gather(
    flavour: str, calls: list[Awaitable[dict[str, JSONValue]]]
) -> list[dict[str, JSONValue]]:
    if flavour == "asyncio":
        return list(await asyncio.gather(*calls))
    results: list[dict[str, JSONValue]] = [{}] * len(calls)

    async def one(index: int, call: Awaitable[dict[str, JSONValue]]) -> None:
        results[index] = await call

    async with trio.open_nursery() as nursery:
        for index, call in enumerate(calls):
            nursery.start_soon(one, index, call)
    return results


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_noise_timeouts_requests_and_death(flavour: str, capfd: pytest.CaptureFixture[str]) -> None:
    reports: list[str] = []

    async def body() -> None:
        async with opener(flavour)(
            [sys.executable, PEER, "raw"], label="raw", on_report=reports.append
        ) as client:
            assert await client.request("noise", None, timeout=10) == {"ok": "noise"}
            assert await client.request("ask", None, timeout=10) == {"ok": "ask"}
            with pytest.raises(TransportError) as info:
                await client.request("sleep", None, timeout=0.2)
            assert info.value.kind == "timeout"
            assert "0.2 seconds" in str(info.value)
            assert await client.request("echo", None, timeout=10) == {"ok": "echo"}
            with pytest.raises(TransportError) as info:
                await client.request("die", None, timeout=10)
            assert info.value.kind == "closed"
            with pytest.raises(TransportError):
                await client.request("echo", None, timeout=10)

    run(flavour, body)
    assert any("not JSON-RPC" in r for r in reports)
    assert "a log line on stderr" in capfd.readouterr().err  # stderr passed through


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_oversized_message_gives_up(flavour: str) -> None:
    async def body() -> None:
        async with opener(flavour)(
            [sys.executable, PEER, "raw"], label="raw", max_message_size=1024
        ) as client:
            with pytest.raises(TransportError) as info:
                await client.request("huge", None, timeout=10)
            assert info.value.kind == "protocol"
            with pytest.raises(TransportError):
                await client.request("echo", None, timeout=10)

    run(flavour, body)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_spawn_failure_is_typed(flavour: str) -> None:
    async def body() -> None:
        with pytest.raises(TransportError) as info:
            async with opener(flavour)(["/nonexistent/server"], label="ghost"):
                pass  # pragma: no cover
        assert info.value.kind == "spawn-failed"
        assert "ghost" in str(info.value)
        with pytest.raises(TransportError):
            async with opener(flavour)([], label="empty"):
                pass  # pragma: no cover

    run(flavour, body)


STUBBORN = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "sys.stdin.read()\n"
    "time.sleep(60)\n"
)


@pytest.mark.parametrize("groups", [True, False], ids=["groups", "no-groups"])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_shutdown_escalates_to_kill(
    flavour: str, groups: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM ignored: SIGKILL after the grace period, to the group; where the platform has no
    process groups (Windows), to the server process itself."""
    if not groups:
        monkeypatch.setattr(stdio, "NEW_SESSION", False)

    async def body() -> None:
        async with opener(flavour)(
            [sys.executable, "-c", STUBBORN], label="stubborn", shutdown_grace=0.3
        ) as client:
            process = client.process
        assert process.returncode == -signal.SIGKILL

    run(flavour, body)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_cancelling_a_waiting_call_sends_notifications_cancelled(
    flavour: str, tmp_path: Path
) -> None:
    log = tmp_path / "received.log"
    script = (
        "import sys\n"
        f"log = open({str(log)!r}, 'w')\n"
        "for line in sys.stdin:\n"
        "    log.write(line); log.flush()\n"
    )

    async def body() -> None:
        async with opener(flavour)([sys.executable, "-c", script], label="s") as client:
            if flavour == "asyncio":
                task = asyncio.ensure_future(client.request("slow", {}, timeout=None))
                await asyncio.sleep(0.2)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            else:
                with trio.move_on_after(0.2):
                    await client.request("slow", {}, timeout=None)
            await client.notify("flush")

    run(flavour, body)
    lines = log.read_text().splitlines()
    assert '"method":"slow"' in lines[0]
    assert '"method":"notifications/cancelled"' in lines[1]
    assert '"requestId":1' in lines[1]


def test_importing_skills_core_does_not_import_trio() -> None:
    import subprocess

    code = (
        "import sys, skills_core, skills_core.adapters, skills_core.adapters.asyncio_stdio;"
        "print('trio' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert result.stdout.strip() == "False"


def test_without_trio_the_error_names_the_package_to_install() -> None:
    """trio hidden: importing the trio adapter says ``pip install trio`` (what a vendored copy
    needs), then the extra for an installed skills-core; the asyncio adapter still imports."""
    import subprocess

    code = (
        "import sys; sys.modules['trio'] = None\n"
        "import skills_core.adapters.asyncio_stdio\n"
        "import skills_core.adapters.trio_stdio\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "ImportError: skills_core.adapters.trio_stdio needs trio: pip install trio "
        "(or, where skills-core itself is installed, pip install 'skills-core[trio]')"
    )


def serve_over_pipes(wire: bytes, serve: Callable[[int, int], None]) -> list[bytes]:
    """Run ``serve(stdin_fd, stdout_fd)`` with ``wire`` as its whole input; return its lines.

    The output is read as it comes (a thread), so answers larger than a pipe cannot block it.
    """
    import threading

    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    os.write(in_write, wire)
    os.close(in_write)
    chunks: list[bytes] = []

    def drain() -> None:
        while chunk := os.read(out_read, 1 << 16):
            chunks.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        serve(in_read, out_write)
    finally:
        os.close(in_read)
        os.close(out_write)
        reader.join()
        os.close(out_read)
    return b"".join(chunks).splitlines()


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_serve_stdio_in_process_over_pipes(flavour: str) -> None:
    """serve_stdio answers everything, writes nothing but responses, and returns at end of input."""

    def serve(stdin_fd: int, stdout_fd: int) -> None:
        async def body() -> None:
            if flavour == "asyncio":
                await asyncio_stdio.serve_stdio(echo, stdin_fd=stdin_fd, stdout_fd=stdout_fd)
            else:
                await trio_stdio.serve_stdio(
                    echo, stdin_fd=stdin_fd, stdout_fd=stdout_fd, max_message_size=4096
                )

        run(flavour, body)

    lines = serve_over_pipes(WIRE, serve)
    assert len(lines) == len(EXPECTED)
    for line, prefix in zip(lines, EXPECTED, strict=True):
        assert line.startswith(prefix), line


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_default_report_goes_to_stderr(flavour: str, capsys: pytest.CaptureFixture[str]) -> None:
    async def body() -> None:
        async with opener(flavour)(
            [sys.executable, PEER, "raw"], label="noisy", stderr=-3
        ) as client:
            assert await client.request("noise", None, timeout=10) == {"ok": "noise"}

    run(flavour, body)
    assert (
        "skills-core: server 'noisy' wrote a line that is not JSON-RPC" in capsys.readouterr().err
    )


def test_blocking_serve_stdio_over_pipes() -> None:
    from skills_core.adapters import blocking_stdio

    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    os.write(in_write, WIRE)
    os.close(in_write)
    try:
        blocking_stdio.serve_stdio(
            echo, stdin_fd=in_read, stdout_fd=out_write, results_have_string_keys=True
        )
    finally:
        os.close(in_read)
        os.close(out_write)
    with os.fdopen(out_read, "rb") as out:
        lines = out.read().splitlines()
    assert len(lines) == len(EXPECTED)
    for line, prefix in zip(lines, EXPECTED, strict=True):
        assert line.startswith(prefix), line


@pytest.mark.parametrize("flavour", ["blocking", *FLAVOURS])
def test_serve_stdio_stops_when_the_client_leaves(flavour: str) -> None:
    from skills_core.adapters import blocking_stdio

    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    os.write(in_write, WIRE)
    os.close(out_read)  # nobody reads the answers: the first write fails with EPIPE
    try:
        if flavour == "blocking":
            blocking_stdio.serve_stdio(echo, stdin_fd=in_read, stdout_fd=out_write)
        elif flavour == "asyncio":
            run(
                flavour,
                lambda: asyncio_stdio.serve_stdio(echo, stdin_fd=in_read, stdout_fd=out_write),
            )
        else:
            run(
                flavour, lambda: trio_stdio.serve_stdio(echo, stdin_fd=in_read, stdout_fd=out_write)
            )
    finally:
        os.close(in_write)
        os.close(in_read)
        os.close(out_write)


def test_server_stream_refuses_unencodable_results() -> None:
    for keys in (False, True):
        stream = ServerStream(echo, results_have_string_keys=keys)
        stream.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"weird"}\n')
        assert stream.next_output() == (
            b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603,'
            b'"message":"Internal error: unencodable result"}}\n'
        )


def test_blocking_serve_stdio_to_a_regular_file(tmp_path: Path) -> None:
    """Pipe widening is skipped quietly when stdin or stdout is not a pipe."""
    from skills_core.adapters import blocking_stdio

    requests = tmp_path / "in.jsonl"
    requests.write_bytes(WIRE)
    answers = tmp_path / "out.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        blocking_stdio.serve_stdio(echo, stdin_fd=stdin.fileno(), stdout_fd=stdout.fileno())
    assert len(answers.read_bytes().splitlines()) == len(EXPECTED)


def test_serve_start_up_imports_stay_lean(tmp_path: Path) -> None:
    """What `skills-core serve` imports before its first answer leaves out slow stdlib modules.

    urllib.parse (which imports ipaddress), pathlib, shutil and asyncio together cost ~15 ms of
    start-up (issue 6 allows 100 ms over bare python); run without site, so only our imports count.
    """
    import subprocess

    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "SKILL.md").write_bytes(b"---\nname: demo\ndescription: d\n---\n")
    code = (
        "import sys\n"
        "from skills_core.cli import main\n"
        f"sys.argv = ['skills-core', 'serve', {str(tmp_path)!r}]\n"
        "code = main()\n"
        "heavy = ('urllib.parse', 'ipaddress', 'pathlib', 'shutil', 'asyncio', 'tempfile',\n"
        "         'skills_core.client_stream', 'skills_core.host.router',\n"
        "         'skills_core.host.effects')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", code],
        input=b"",
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert result.stderr.decode().strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("flavour", ["blocking", *FLAVOURS])
def test_every_serve_stdio_takes_a_server_connection(flavour: str) -> None:
    """A ServerConnection (a Responder) is served directly, repeated reads included."""
    from server_helpers import KEY, request, spec_files

    from skills_core.adapters import blocking_stdio
    from skills_core.server import SkillsServer

    connection = SkillsServer.from_files(spec_files(), cursor_key=KEY).connection()
    read = request("resources/read", {"uri": "skill://pdf-processing/SKILL.md"})
    wire = b"".join(json.dumps({**read, "id": n}).encode() + b"\n" for n in range(3))

    def serve(stdin_fd: int, stdout_fd: int) -> None:
        async def body() -> None:
            if flavour == "asyncio":
                await asyncio_stdio.serve_stdio(connection, stdin_fd=stdin_fd, stdout_fd=stdout_fd)
            else:
                await trio_stdio.serve_stdio(connection, stdin_fd=stdin_fd, stdout_fd=stdout_fd)

        if flavour == "blocking":
            blocking_stdio.serve_stdio(connection, stdin_fd=stdin_fd, stdout_fd=stdout_fd)
        else:
            run(flavour, body)

    answers = [json.loads(line) for line in serve_over_pipes(wire, serve)]
    assert [a["id"] for a in answers] == [0, 1, 2]
    texts = {a["result"]["contents"][0]["text"] for a in answers}
    assert len(texts) == 1
    assert texts.pop().startswith("---\nname: pdf-processing")


# --- an event loop stays free while a large file is read -------------------------------------


class GatedSource:
    """A MemorySource whose reads of ``big.md`` wait until the event loop has run meanwhile."""

    def __init__(self, files: dict[str, bytes]) -> None:
        import threading

        from skills_core.server import MemorySource

        self.inner = MemorySource(files)
        self.started = threading.Event()
        self.release = threading.Event()
        self.threads: dict[str, str] = {}

    def scan(self) -> Any:
        return self.inner.scan()

    def recheck(self, uri: str) -> Any:
        return self.inner.recheck(uri)

    def list_directory(self, skill: Any, dir_path: str) -> Any:
        return self.inner.list_directory(skill, dir_path)

    def poll(self, max_age_ms: int) -> Any:
        return self.inner.poll(max_age_ms)

    def read(self, skill: Any, file_path: str) -> bytes | None:
        import threading

        self.threads[file_path] = threading.current_thread().name
        if file_path == "big.md":
            self.started.set()
            # On the event loop's thread this would wait for the loop itself: it never returns.
            if not self.release.wait(timeout=10):
                raise RuntimeError("the event loop did not run while a large file was read")
        return self.inner.read(skill, file_path)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_large_read_leaves_the_event_loop_free_and_small_reads_stay_on_it(flavour: str) -> None:
    import threading

    from server_helpers import KEY, request, skill_md

    from skills_core.server import SkillsServer

    big = b"b" * (300 << 10)  # over DEFAULT_DEFER_READS_OVER (256 KiB)
    source = GatedSource({"s/SKILL.md": skill_md("s"), "s/big.md": big, "s/small.md": b"small"})
    connection = SkillsServer(source, cursor_key=KEY).connection()
    wire = b"".join(
        json.dumps(request("resources/read", {"uri": f"skill://s/{name}"}, request_id=n)).encode()
        + b"\n"
        for n, name in enumerate(["small.md", "big.md", "small.md"])
    )

    def serve(stdin_fd: int, stdout_fd: int) -> None:
        async def release_when_started() -> None:
            # Runs on the event loop: only possible if the loop is not stuck in the read.
            while not source.started.is_set():
                await (asyncio.sleep(0.01) if flavour == "asyncio" else trio.sleep(0.01))
            source.release.set()

        async def body_asyncio() -> None:
            helper = asyncio.ensure_future(release_when_started())
            await asyncio_stdio.serve_stdio(connection, stdin_fd=stdin_fd, stdout_fd=stdout_fd)
            await helper

        async def body_trio() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(release_when_started)
                await trio_stdio.serve_stdio(connection, stdin_fd=stdin_fd, stdout_fd=stdout_fd)

        run(flavour, body_asyncio if flavour == "asyncio" else body_trio)

    loop_thread = threading.current_thread().name
    answers = [json.loads(line) for line in serve_over_pipes(wire, serve)]
    assert [a["id"] for a in answers] == [0, 1, 2]
    assert answers[1]["result"]["contents"][0]["text"] == big.decode()
    assert source.threads["big.md"] != loop_thread
    assert source.threads["small.md"] == loop_thread
