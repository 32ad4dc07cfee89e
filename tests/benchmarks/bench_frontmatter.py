"""Frontmatter parsing speed and memory on the real corpus.

Run: ``.venv/bin/python tests/benchmarks/bench_frontmatter.py [--rounds N]`` (not a test; pytest
ignores tests/benchmarks). Needs PyYAML with libyaml (the test extra) and the corpus beside the
checkout (``../shared/corpus``).

Every corpus SKILL.md that has a frontmatter block (4,855 of 4,986 files; the 49 whose YAML is
invalid included, where every parser raises) is parsed by:

* ``skills_core.parse_frontmatter`` on the raw file bytes: strict UTF-8 decoding of the whole
  file, the delimiter search, CRLF handling and the parse, i.e. the whole job of a host;
* skills_core's YAML parser alone, on the extracted YAML text;
* PyYAML ``SafeLoader`` (pure Python) and ``CSafeLoader`` (libyaml's C scanner and parser, with
  PyYAML's Python constructor and resolver), on the same extracted YAML text: they are not
  charged for reading the file or finding the delimiters.

All four run side by side in one process. Each round walks the files in order and times every
parser on each file, rotating which parser goes first, so drifts in machine speed hit them alike;
the garbage collector is off while timing. A file's time is its best over the rounds; the table
gives the median of those per-file times and their sum (the total), and the ratios of the totals.

Peak memory comes from a separate pass under ``tracemalloc`` (so that tracing does not distort
the timings): for each file, the highest traced allocation during one parse above what was
allocated before it. libyaml's own C allocations bypass Python's allocator and are invisible to
tracemalloc, so CSafeLoader's figures count only the Python objects it builds.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from skills_core._yaml import parse_yaml
from skills_core.errors import FrontmatterError
from skills_core.frontmatter import parse_frontmatter, split_frontmatter

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "skill-md"


def load_corpus() -> tuple[list[bytes], list[str]]:
    """The raw bytes and the extracted YAML text of every corpus file with a frontmatter."""
    raws: list[bytes] = []
    texts: list[str] = []
    for path in sorted(CORPUS.rglob("SKILL.md")):
        raw = path.read_bytes()
        try:
            text, _ = split_frontmatter(raw)
        except FrontmatterError:
            continue
        raws.append(raw)
        texts.append(text)
    return raws, texts


# try/except rather than contextlib.suppress: it costs less inside the timed calls.


def ours_full(raw: bytes, _text: str) -> None:
    try:  # noqa: SIM105
        parse_frontmatter(raw)
    except FrontmatterError:
        pass


def ours_yaml(_raw: bytes, text: str) -> None:
    try:  # noqa: SIM105
        parse_yaml(text, first_line=2)
    except FrontmatterError:
        pass


def pyyaml_with(loader: Any) -> Callable[[bytes, str], None]:
    def run(_raw: bytes, text: str) -> None:
        try:  # noqa: SIM105
            yaml.load(text, Loader=loader)
        except yaml.YAMLError:
            pass

    return run


PARSERS: list[tuple[str, Callable[[bytes, str], None]]] = [
    ("skills_core parse_frontmatter (bytes)", ours_full),
    ("skills_core YAML parser only (text)", ours_yaml),
    ("PyYAML SafeLoader (pure Python)", pyyaml_with(yaml.SafeLoader)),
    ("PyYAML CSafeLoader (libyaml)", pyyaml_with(yaml.CSafeLoader)),
]


def time_all(raws: list[bytes], texts: list[str], rounds: int) -> list[list[int]]:
    """Best time in ns per parser per file, over ``rounds`` interleaved rounds."""
    count = len(PARSERS)
    best = [[sys.maxsize] * len(raws) for _ in PARSERS]
    clock = time.perf_counter_ns
    for round_number in range(rounds):
        gc.collect()
        gc.disable()
        try:
            for index, (raw, text) in enumerate(zip(raws, texts, strict=True)):
                for shift in range(count):
                    which = (index + round_number + shift) % count
                    run = PARSERS[which][1]
                    start = clock()
                    run(raw, text)
                    elapsed = clock() - start
                    best[which][index] = min(best[which][index], elapsed)
        finally:
            gc.enable()
    return best


def peak_memory(raws: list[bytes], texts: list[str]) -> list[list[int]]:
    """Peak traced bytes allocated during each parse, per parser per file."""
    peaks: list[list[int]] = [[] for _ in PARSERS]
    tracemalloc.start()
    try:
        for which, (_, run) in enumerate(PARSERS):
            for raw, text in zip(raws, texts, strict=True):
                gc.collect()
                before, _ = tracemalloc.get_traced_memory()
                tracemalloc.reset_peak()
                run(raw, text)
                _, peak = tracemalloc.get_traced_memory()
                peaks[which].append(max(0, peak - before))
    finally:
        tracemalloc.stop()
    return peaks


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    libyaml = yaml._yaml.get_version_string() if yaml.__with_libyaml__ else "absent"
    return (
        f"{model} ({os.cpu_count()} logical CPUs); Python {platform.python_version()} "
        f"({platform.python_implementation()}); PyYAML {yaml.__version__}, libyaml {libyaml}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="timing rounds (default 7)")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc pass")
    args = parser.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 2
    raws, texts = load_corpus()
    yaml_bytes = sum(len(t.encode("utf-8")) for t in texts)
    print(f"machine: {machine()}")
    print(
        f"corpus:  {len(texts):,} frontmatters ({yaml_bytes:,} bytes of YAML, "
        f"{sum(len(r) for r in raws):,} bytes of SKILL.md); best of {args.rounds} rounds"
    )
    best = time_all(raws, texts, args.rounds)
    peaks = None if args.no_memory else peak_memory(raws, texts)
    totals = [sum(times) for times in best]
    safe_total, csafe_total = totals[2], totals[3]
    print()
    header = (
        f"{'parser':<40} {'median/file':>12} {'total':>10} {'SafeLoader':>11} {'CSafeLoader':>12}"
    )
    if peaks is not None:
        header += f" {'peak mem median / max':>24}"
    print(header)
    for which, (name, _) in enumerate(PARSERS):
        median_us = statistics.median(best[which]) / 1000
        total_ms = totals[which] / 1e6
        row = (
            f"{name:<40} {median_us:>9.1f} us {total_ms:>7.1f} ms "
            f"{safe_total / totals[which]:>10.1f}x {csafe_total / totals[which]:>11.2f}x"
        )
        if peaks is not None:
            row += (
                f" {statistics.median(peaks[which]) / 1024:>10.1f} KiB / "
                f"{max(peaks[which]) / 1024:>6.1f} KiB"
            )
        print(row)
    print()
    print(
        "'SafeLoader' and 'CSafeLoader' columns: how many times faster than that loader in total."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
