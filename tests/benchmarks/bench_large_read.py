"""CPU time of a ``resources/read`` of one 8 MiB text file: the whole answer, and the text/blob choice.

Run: ``.venv/bin/python tests/benchmarks/bench_large_read.py [--rounds N] [--baseline REV]``.

A file over 1 MiB that decodes as UTF-8 is sent as ``text`` unless its JSON escaping would make it
longer than base64 (``skills_core.messages.encode_resource_contents``): that choice counts the
bytes JSON escapes. Three files of 8 MiB, written to a temporary skill:

* **prose**: ASCII lines of text (about one newline in 36 bytes): sent as text;
* **non-ASCII prose**: Cyrillic lines, whose UTF-8 holds the byte ``0x85`` that ends U+0085 (a
  character JSON text escapes), here only as part of other letters: sent as text;
* **newlines**: nothing but ``\\n`` (each one escapes to two bytes): sent as blob.

For each, in this process, the best of N rounds of CPU time (``time.process_time``): the choice
alone (``_text_escapes_past_base64``), and the whole answer of a ``SkillsServer`` connection to a
``resources/read`` (the file read from disk, decoded, the choice, the JSON encoding; files over
256 KiB are never cached, so each answer does it all). With ``--baseline REV``, the same runs in a
child process importing the package from ``git archive REV``, for the before/after figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path

from _bench_common import REPO, cpu_model, modern_meta

SIZE = 8 << 20


def files() -> dict[str, bytes]:
    prose = b"".join(b"Line %06d of a skill's reference text, plain.\n" % i for i in range(200_000))
    cyrillic = "".join(f"Строка {i:06d}: пример текста навыка, хорошо.\n" for i in range(120_000))
    return {
        "prose": prose[:SIZE],
        "non-ASCII prose": cyrillic.encode()[: SIZE - 64].decode("utf-8", "ignore").encode(),
        "newlines": b"\n" * SIZE,
    }


def best(run: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def measure(rounds: int) -> dict[str, dict[str, float | str]]:
    """CPU seconds per choice and per answer, for each file, with the package importable now."""
    from skills_core import messages
    from skills_core.jsonrpc import EncodedResult
    from skills_core.jsonvalue import JSONValue
    from skills_core.server import server_from_roots

    results: dict[str, dict[str, float | str]] = {}
    with tempfile.TemporaryDirectory() as folder:
        contents = files()
        for number, data in enumerate(contents.values()):  # a skill each: 16 MiB per skill
            skill = Path(folder, f"big{number}")
            skill.mkdir()
            (skill / "SKILL.md").write_text(f"---\nname: big{number}\ndescription: 8 MiB\n---\n")
            (skill / "file.md").write_bytes(data)
        connection = server_from_roots([folder], cursor_key=b"k" * 32).connection()
        for number, (label, data) in enumerate(contents.items()):
            params: dict[str, JSONValue] = {
                "uri": f"skill://big{number}/file.md",
                "_meta": json.loads(json.dumps(modern_meta("bench"))),
            }
            answer = connection.answer("resources/read", params)
            assert isinstance(answer, EncodedResult), answer
            item = json.loads(answer.json)["contents"][0]

            def choice(data: bytes = data) -> object:
                return messages._text_escapes_past_base64(data)

            def read(params: dict[str, JSONValue] = params) -> object:
                return connection.answer("resources/read", params)

            results[label] = {
                "kind": "text" if "text" in item else "blob",
                "choice": best(choice, rounds),
                "answer": best(read, rounds),
            }
    return results


def baseline(rev: str, rounds: int) -> dict[str, dict[str, float | str]]:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "skills_core"],
        capture_output=True,
        check=True,
    ).stdout
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([folder, str(Path(__file__).parent)]))
        child = subprocess.run(
            [sys.executable, __file__, "--rounds", str(rounds), "--json"],
            capture_output=True,
            check=True,
            env=env,
        )
    result: dict[str, dict[str, float | str]] = json.loads(child.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", metavar="REV", help="also measure the code of REV")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    now = measure(args.rounds)
    if args.json:
        print(json.dumps(now))
        return
    before = baseline(args.baseline, args.rounds) if args.baseline else None
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(f"CPU time per 8 MiB resources/read, best of {args.rounds} (ms)")
    header = f"  {'file':<18}{'sent as':<9}{'choice':>10}{'answer':>10}"
    if before:
        header += f"{'choice at ' + args.baseline:>22}{'answer then':>13}"
    print(header)
    for label, row in now.items():
        line = f"  {label:<18}{row['kind']:<9}"
        line += f"{float(row['choice']) * 1e3:>10.1f}{float(row['answer']) * 1e3:>10.1f}"
        if before:
            then = before[label]
            line += f"{float(then['choice']) * 1e3:>22.1f}{float(then['answer']) * 1e3:>13.1f}"
        print(line)


if __name__ == "__main__":
    main()
