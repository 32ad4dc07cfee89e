"""Catalog build from disk vs. plain read-and-hash.

Run: ``.venv/bin/python tests/benchmarks/bench_catalog.py``.

The tree (built once in a temporary folder, 5,000 skills):

* every corpus ``SKILL.md`` (``/work/shared/corpus/skill-md/**/SKILL.md``, or ``$SKILLS_CORPUS``)
  whose frontmatter parses and passes validation (so its ``name`` is a valid skill name) is
  copied byte for byte into a folder named after that name, first come first served (a later file
  with a name already taken is skipped at this stage);
* the tree is filled up to 5,000 skills with the same files again under prefix folders
  (``p01/<name>``, ``p02/<name>``, ...), so every skill is valid and published, and a rescan does
  the same work as the first scan.

Measured side by side in one process, each run once as a warm-up (page cache) and then timed as
the median of 5 alternating runs:

* **plain**: ``os.walk`` the tree, read every file with ``open(...).read()``, ``hashlib.sha256``;
* **catalog**: a *fresh* :class:`FilesystemSource` (cold digest and frontmatter caches) and
  ``scan()``: the no-symlink walk, reading and hashing each file once, parsing and validating every
  frontmatter, building every entry;
* **rescan** (for information): ``scan()`` again on the same source, whose caches are warm (what
  ``refresh()`` costs when little changed);
* **frontmatter only** (for information): ``parse_frontmatter`` + ``validate_frontmatter`` of the
  distinct ``SKILL.md`` files, from memory: the part of the cold build that is YAML parsing.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from skills_core.errors import FrontmatterError
from skills_core.frontmatter import parse_frontmatter
from skills_core.names import is_valid_skill_name
from skills_core.server import FilesystemSource
from skills_core.validation import Severity, validate_frontmatter

CORPUS = Path(os.environ.get("SKILLS_CORPUS", "/work/shared/corpus/skill-md"))
SKILLS = 5_000
ROUNDS = 5


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def build_tree(target: Path) -> tuple[list[bytes], int, int]:
    """Fill ``target`` with SKILLS skills; return (distinct SKILL.md texts, skills, bytes)."""
    unique: list[tuple[str, bytes]] = []
    taken: set[str] = set()
    for path in sorted(CORPUS.rglob("SKILL.md")):
        data = path.read_bytes()
        try:
            frontmatter = parse_frontmatter(data).data
        except FrontmatterError:
            continue
        name = frontmatter.get("name")
        if not isinstance(name, str) or not is_valid_skill_name(name) or name in taken:
            continue
        findings = validate_frontmatter(frontmatter, directory_name=name)
        if any(finding.severity == Severity.ERROR for finding in findings):
            continue
        assert isinstance(name, str)
        taken.add(name)
        unique.append((name, data))
    if not unique:
        sys.exit(f"no usable SKILL.md under {CORPUS}")
    count = 0
    total = 0
    prefix = 0
    while count < SKILLS:
        for name, data in unique:
            if count == SKILLS:
                break
            folder = target / name if prefix == 0 else target / f"p{prefix:02d}" / name
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_bytes(data)
            count += 1
            total += len(data)
        prefix += 1
    return [data for _, data in unique], count, total


def plain(tree: Path) -> int:
    files = 0
    for folder, _, names in os.walk(tree):
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                hashlib.sha256(handle.read()).hexdigest()
            files += 1
    return files


def frontmatter_only(texts: list[bytes]) -> int:
    for text in texts:
        data = parse_frontmatter(text).data
        validate_frontmatter(data, directory_name=str(data["name"]))
    return len(texts)


def catalog(tree: Path) -> int:
    return len(FilesystemSource([tree]).scan().skills)


def timed(action: Callable[[], int]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"
    )
    print(f"python:  {sys.version.split()[0]} ({platform.python_implementation()})")
    workdir = Path(tempfile.mkdtemp(prefix="bench-catalog-"))
    try:
        tree = workdir / "skills"
        tree.mkdir()
        texts, count, total = build_tree(tree)
        print(
            f"tree:    {count:,} skills ({len(texts):,} distinct corpus files), "
            f"{total / 1e6:.1f} MB of SKILL.md"
        )
        assert plain(tree) == count
        published = catalog(tree)
        assert published == count, f"only {published} of {count} skills were published"
        warm = FilesystemSource([tree])
        warm.scan()
        plain_times: list[float] = []
        catalog_times: list[float] = []
        rescan_times: list[float] = []
        parse_times: list[float] = []
        frontmatter_only(texts)
        for _ in range(ROUNDS):
            plain_times.append(timed(lambda: plain(tree)))
            catalog_times.append(timed(lambda: catalog(tree)))
            rescan_times.append(timed(lambda: len(warm.scan().skills)))
            parse_times.append(timed(lambda: frontmatter_only(texts)))
        a = statistics.median(plain_times)
        b = statistics.median(catalog_times)
        c = statistics.median(rescan_times)
        d = statistics.median(parse_times)
        print()
        rows = [
            ("plain: walk + read + hashlib.sha256", a),
            ("catalog: FilesystemSource().scan() (cold)", b),
            ("rescan: same source, warm caches", c),
            (f"frontmatter only: {len(texts):,} distinct SKILL.md", d),
        ]
        print(f"{'measure':<44} {'median':>10} {'per skill':>11} {'ratio':>7}")
        for label, seconds in rows:
            print(
                f"{label:<44} {seconds * 1e3:>8.1f}ms {seconds / count * 1e6:>9.1f}us "
                f"{seconds / a:>7.2f}"
            )
    finally:
        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
