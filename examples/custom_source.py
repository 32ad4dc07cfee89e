"""A skills server over a database: a custom source in forty lines (SQLite, standard library).

The server reads skills through :class:`skills_core.server.SkillSource`. The simplest way to
write one is :class:`skills_core.server.TreeSource`: implement six primitives over your storage
(here, a table of ``(path, bytes)`` rows) and the catalog builder applies every rule a folder
gets (names, limits, the Agent Skills rules, file names, collisions), so the source cannot
publish anything ``skills-core validate`` would refuse. Run it::

    python examples/custom_source.py        # prints the catalog and one file, as a server reads it
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from skills_core.jsonvalue import JSONValue
from skills_core.server import RootSnapshot, SkillsServer, SnapshotFile, TreeSource


class SqliteSource(TreeSource):
    """Skills stored as rows ``(path, data)`` of a table ``files`` (paths relative, ``/``)."""

    def __init__(self, database: sqlite3.Connection) -> None:
        super().__init__()
        self.db = database
        self.version = self._version()

    def _version(self) -> int:
        return int(self.db.execute("PRAGMA data_version").fetchone()[0]) + self.db.total_changes

    def _paths(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT path FROM files ORDER BY path")]

    # -- the six primitives ----------------------------------------------------------------------

    def _root_count(self) -> int:
        return 1

    def _snapshot(self, root: int, folder: str) -> RootSnapshot:
        rows = self.db.execute("SELECT path, data FROM files WHERE path LIKE ?", (f"{folder}%",))
        return RootSnapshot(files=[SnapshotFile.of(path, bytes(data)) for path, data in rows])

    def _is_skill_folder(self, root: int, folder: str) -> bool:
        return self._read_file(root, f"{folder}/SKILL.md") is not None

    def _read_file(self, root: int, path: str) -> bytes | None:
        row = self.db.execute("SELECT data FROM files WHERE path = ?", (path,)).fetchone()
        return None if row is None else bytes(row[0])

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


def main() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE files (path TEXT PRIMARY KEY, data BLOB)")
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
