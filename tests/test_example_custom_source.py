"""examples/custom_source.py: a source over SQLite serves what the folder rules allow, and
picks up a skill added to the database in the next listing."""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

from server_helpers import skill_md

from skills_core.jsonrpc import EncodedResult
from skills_core.jsonvalue import JSONValue
from skills_core.server import PendingRead, SkillsServer

ROOT = Path(__file__).resolve().parents[1]


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "custom_source", ROOT / "examples" / "custom_source.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_as_the_readme_says() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "custom_source.py")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "published: ['skill://reports/SKILL.md']" in done.stdout
    assert "name-mismatch" in done.stdout
    assert '"text":"# Report\\n"' in done.stdout


def test_the_folder_rules_apply_and_changes_show_in_listings() -> None:
    example = load_example()
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE files (path TEXT PRIMARY KEY, data BLOB)")
    db.execute("INSERT INTO files VALUES (?, ?)", ("a/SKILL.md", skill_md("a", "A")))
    db.execute("INSERT INTO files VALUES (?, ?)", ("Bad Name/SKILL.md", skill_md("Bad Name", "B")))
    server = SkillsServer(example.SqliteSource(db), cursor_key=b"k" * 32)
    assert [s.uri for s in server.catalog.skills] == ["skill://a/SKILL.md"]
    db.execute("INSERT INTO files VALUES (?, ?)", ("c/SKILL.md", skill_md("c", "C")))
    meta: dict[str, JSONValue] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    listed = server.answer("skills/list", {"_meta": meta})
    assert isinstance(listed, dict)
    skills = listed["skills"]
    assert isinstance(skills, list)
    assert [e["uri"] for e in skills if isinstance(e, dict)] == [
        "skill://a/SKILL.md",
        "skill://c/SKILL.md",
    ]


def test_reads_deferred_to_worker_threads_are_served_while_the_server_lists() -> None:
    # A server on an event loop reads large files in worker threads (PendingRead): the source's
    # read and list_directory then run there, at the same time as each other and as listings.
    example = load_example()
    db = example.open_database()
    files = {f"s{n}/SKILL.md": skill_md(f"s{n}", "S") for n in range(8)}
    files.update({f"s{n}/data/big.txt": f"{n}\n".encode() * 5_000 for n in range(8)})
    db.executemany("INSERT INTO files VALUES (?, ?)", list(files.items()))
    server = SkillsServer(example.SqliteSource(db), cursor_key=b"k" * 32)
    meta: dict[str, JSONValue] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    pending: list[PendingRead] = []
    for _ in range(25):
        for n in range(8):
            read = server.answer(
                "resources/read",
                {"uri": f"skill://s{n}/data/big.txt", "_meta": meta},
                defer_reads_over=0,
            )
            assert isinstance(read, PendingRead)
            pending.append(read)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = pool.map(PendingRead.complete, pending)
        for n in range(50):  # listings and folder reads on this thread meanwhile
            assert isinstance(server.answer("skills/list", {"_meta": meta}), dict)
            folder: dict[str, JSONValue] = {"uri": f"skill://s{n % 8}/data", "_meta": meta}
            listed = server.answer("resources/directory/read", folder)
            assert isinstance(listed, dict), listed
        answers = list(results)
    for read, answer in zip(pending, answers, strict=True):
        assert isinstance(answer, EncodedResult), (read.uri, answer)
        number = read.uri.split("/")[2][1:]
        assert f'"text":"{number}\\n{number}\\n'.encode() in answer.json
