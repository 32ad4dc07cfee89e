"""The handshake is answered while the catalog loads; everything else waits for all of it."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from skills_core import spec_examples as ex
from skills_core.adapters.loading import LoadingServer
from skills_core.server import SkillsServer
from skills_core.server.options import ServerOptions
from skills_core.server_stream import Deferred

META: Any = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/skills": {}}
    },
}
FILES = {f"pdf-processing/{path}": data for path, data in ex.FILES.items()}
INITIALIZE: Any = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}


def test_the_handshake_is_answered_before_the_load_and_listings_wait_for_it() -> None:
    options = ServerOptions(page_size=7)
    release = threading.Event()

    def load() -> SkillsServer:
        assert release.wait(10)
        return SkillsServer.from_files(FILES, cursor_key=b"k" * 32, options=options)

    loading = LoadingServer(load, options=options)
    loading.start()
    connection = loading.connection()
    real = SkillsServer.from_files(FILES, cursor_key=b"k" * 32, options=options).connection()
    assert connection.answer("initialize", INITIALIZE) == real.answer("initialize", INITIALIZE)
    discover = {"_meta": META}
    assert connection.answer("server/discover", discover) == real.answer(
        "server/discover", discover
    )
    assert not loading.loaded
    listed: list[object] = []
    deferred = connection.answer("skills/list", None)
    assert isinstance(deferred, Deferred)  # the answers before it go out first
    waiting = threading.Thread(target=lambda: listed.append(deferred.complete()))
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive()
    assert not listed  # never a partial (or empty) catalog
    release.set()
    waiting.join(10)
    assert loading.wait(0) is not None
    # the legacy version initialize agreed on goes on with the real server's connection
    assert listed == [real.answer("skills/list", None)]
    assert listed[0]["skills"][0]["uri"] == "skill://pdf-processing/SKILL.md"  # type: ignore[index]


def test_a_failed_load_is_raised_where_the_catalog_is_needed() -> None:
    def load() -> SkillsServer:
        raise OSError("the roots vanished")

    loading = LoadingServer(load, options=ServerOptions())
    connection = loading.connection()
    loading.start()
    deferred = connection.answer("skills/list", {"_meta": META})
    assert isinstance(deferred, Deferred)
    with pytest.raises(OSError, match="vanished"):
        deferred.complete()
    assert isinstance(loading.error, OSError)
    assert not loading.loaded
    assert connection.answer("ping", {"_meta": META}) == SkillsServer.from_files(
        FILES, cursor_key=b"k" * 32
    ).answer("ping", {"_meta": META})  # the handshake still answers


def test_serve_answers_the_handshake_first_when_a_listing_is_pipelined_behind_it(
    tmp_path: Path,
) -> None:
    """initialize, discover and skills/list in one write: the first two are not held back."""
    for path, data in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE},
        {"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 3, "method": "skills/list", "params": {"_meta": META}},
    ]
    result = subprocess.run(
        [sys.executable, "-m", "skills_core", "serve", str(tmp_path)],
        input=b"".join(json.dumps(r).encode() + b"\n" for r in requests),
        capture_output=True,
        check=True,
        timeout=60,
    )
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert answers[2]["result"]["skills"][0]["uri"] == "skill://pdf-processing/SKILL.md"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_a_load_hands_its_free_heap_back_to_the_system(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once loaded (or failed), the thread trims the C heap: what the load used only for a
    while (the index read, the walk's snapshot) does not stay in the serving process."""
    import ctypes

    trims: list[int] = []

    class Libc:
        def __init__(self, name: object) -> None:
            assert name is None

        def malloc_trim(self, pad: int) -> int:
            trims.append(pad)
            return 1

    monkeypatch.setattr(ctypes, "CDLL", Libc)
    loading = LoadingServer(
        lambda: SkillsServer.from_files({}, cursor_key=b"k" * 32), options=ServerOptions()
    )
    loading.start()
    loading.join()
    assert loading.loaded
    assert trims == [0]
