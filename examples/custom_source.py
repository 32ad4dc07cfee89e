"""A skills server over a database: a custom source in forty lines (SQLite, standard library).

The server reads skills through :class:`skills_core.server.SkillSource`. The simplest way to
write one is :class:`skills_core.server.TreeSource`: implement six primitives over your storage
(here, a table of ``(path, bytes)`` rows) and the catalog builder applies every rule a folder
gets (names, limits, the Agent Skills rules, file names, collisions), so the source cannot
publish anything ``skills-core validate`` would refuse. ``_read_file`` and ``_list_dir`` may be
called from worker threads (a server on an event loop reads large files there), so the
connection is opened for any thread and used behind a lock. Run it::

    python examples/custom_source.py        # prints the catalog and one file, as a server reads it
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

from skills_core.jsonvalue import JSONValue
from skills_core.server import RootSnapshot, SkillsServer, SnapshotFile, TreeSource


class SqliteSource(TreeSource):
    """Skills stored as rows ``(path, data)`` of a table ``files`` (paths relative, ``/``)."""

    def __init__(self, database: sqlite3.Connection) -> None:
        super().__init__()
        self.db = database  # opened with check_same_thread=False
        self.lock = threading.Lock()
        self.version = self._version()

    def _query(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.db.execute(sql, args).fetchall()

    def _version(self) -> int:
        with self.lock:
            version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
            return version + self.db.total_changes

    def _paths(self) -> list[str]:
        return [str(row[0]) for row in self._query("SELECT path FROM files ORDER BY path")]

    # -- the six primitives ----------------------------------------------------------------------

    def _root_count(self) -> int:
        return 1

    def _snapshot(self, root: int, folder: str) -> RootSnapshot:
        rows = self._query("SELECT path, data FROM files WHERE path LIKE ?", f"{folder}%")
        return RootSnapshot(files=[SnapshotFile.of(path, bytes(data)) for path, data in rows])

    def _is_skill_folder(self, root: int, folder: str) -> bool:
        return self._read_file(root, f"{folder}/SKILL.md") is not None

    def _read_file(self, root: int, path: str) -> bytes | None:
        rows = self._query("SELECT data FROM files WHERE path = ?", path)
        return bytes(rows[0][0]) if rows else None

    def _list_dir(self, root: int, path: str) -> Sequence[tuple[str, bool]] | None:
        prefix = f"{path}/" if path else ""
        children = {
            rest.partition("/")[0]: "/" in rest
            for rest in (p[len(prefix) :] for p in self._paths() if p.startswith(prefix))
        }
        return sorted(children.items()) if children else None

    def _changed(self, max_age_ms: int) -> bool:
        version = self._version()
        changed, self.version = version != self.version, version
        return changed


def open_database(path: str = ":memory:") -> sqlite3.Connection:
    """The database, usable from the server's worker threads, with its table of files."""
    db = sqlite3.connect(path, check_same_thread=False)
    db.execute("CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, data BLOB)")
    return db


def main() -> None:
    db = open_database()
    db.executemany(
        "INSERT INTO files VALUES (?, ?)",
        [
            ("reports/SKILL.md", b"---\nname: reports\ndescription: Writes reports\n---\nSteps.\n"),
            ("reports/template.md", b"# Report\n"),
            ("broken/SKILL.md", b"---\nname: other\ndescription: Left out\n---\n"),
        ],
    )
    server = SkillsServer(SqliteSource(db), cursor_key=b"an example key of 32 bytes......")
    catalog = server.catalog
    print("published:", [skill.uri for skill in catalog.skills])
    print("left out:", [(o.uri, str(o.code)) for o in catalog.omitted])
    meta: dict[str, JSONValue] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    answer = server.answer("resources/read", {"uri": "skill://reports/template.md", "_meta": meta})
    print(answer.json.decode() if hasattr(answer, "json") else answer)


if __name__ == "__main__":
    main()
