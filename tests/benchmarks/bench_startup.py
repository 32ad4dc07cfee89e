"""Start-up: from spawning a server to its first ``skills/list`` answer, ours vs FastMCP.

Run: ``.venv/bin/python tests/benchmarks/bench_startup.py [--runs N]``.

Measured, each as the median of N runs (default 10), interleaved round by round so that noise
from other processes spreads evenly:

(a) ``python -c pass`` with this same interpreter: spawn to exit (the floor for any Python server);
(b) ``python -m skills_core serve <folder>``: spawn, write a modern ``skills/list`` request (with
    the 2026-07-28 ``_meta``, no ``server/discover`` first: the modern era is stateless) at once,
    and time until its answer line arrives;
(c) the same for the FastMCP 4.1.6 server (``tests/peers/fastmcp_server.py``) on the same folder;
(d) ``import skills_core`` timed inside a fresh process (and, for reference, the modules that
    ``serve`` imports: the CLI, the server handler and filesystem source, the asyncio adapter).

The folder holds the spec's pdf-processing skill. Targets: (b) at most a tenth of (c), and (b)
within 100 ms of (a).

Bytecode: this machine sets ``PYTHONDONTWRITEBYTECODE=1``, so a child would otherwise compile
every module it imports from source. The benchmark first runs ``compileall`` on the package and
on the venv's site-packages (FastMCP, mcp, pydantic, ...; the standard library ships compiled),
and removes ``PYTHONDONTWRITEBYTECODE`` from the children's environment.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from _bench_common import PEERS, REPO, child_env, compile_bytecode, cpu_model, modern_meta

META = modern_meta("bench-startup")
LIST_REQUEST = (
    json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {"_meta": META}},
        separators=(",", ":"),
    ).encode()
    + b"\n"
)
SERVE_MODULES = (
    "skills_core.cli, skills_core.cli.serve, skills_core.server.handler, skills_core.server.filesystem, "
    "skills_core.adapters.blocking_stdio"
)


def write_spec_skill(root: Path) -> None:
    sys.path.insert(0, str(REPO))
    from skills_core import spec_examples as ex

    for relative, data in ex.FILES.items():
        target = root / "pdf-processing" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def time_bare(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - start


def time_first_list(argv: list[str], env: dict[str, str], timeout: float) -> float:
    """Spawn ``argv``, send skills/list at once, return seconds until its answer line."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    watchdog = threading.Timer(timeout, process.kill)
    watchdog.start()
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(LIST_REQUEST)
        process.stdin.flush()
        line = process.stdout.readline()
        elapsed = time.perf_counter() - start
        answer = json.loads(line)
        assert answer["id"] == 1, answer
        skills = answer["result"]["skills"]
        assert [s["uri"] for s in skills] == ["skill://pdf-processing/SKILL.md"], skills
        process.stdin.close()
        process.wait(10)
        return elapsed
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()


def time_import(modules: str, env: dict[str, str]) -> float:
    code = f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    )
    return float(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    compile_bytecode()
    env = child_env()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        folder = Path(tmp) / "skills"
        write_spec_skill(folder)
        ours_argv = [sys.executable, "-m", "skills_core", "serve", str(folder)]
        fastmcp_argv = [sys.executable, str(PEERS / "fastmcp_server.py"), str(folder)]
        measures: dict[str, Callable[[], float]] = {
            "python -c pass": lambda: time_bare(env),
            "skills-core serve -> first skills/list": lambda: time_first_list(ours_argv, env, 30),
            "FastMCP -> first skills/list": lambda: time_first_list(fastmcp_argv, env, 120),
            "import skills_core (in-process)": lambda: time_import("skills_core", env),
            "import serve's modules (in-process)": lambda: time_import(SERVE_MODULES, env),
        }
        for measure in measures.values():  # warm the OS caches once, untimed
            measure()
        samples: dict[str, list[float]] = {name: [] for name in measures}
        for _ in range(args.runs):
            for name, measure in measures.items():
                samples[name].append(measure())

    median = {name: statistics.median(values) for name, values in samples.items()}
    print(f"Machine: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}")
    print(f"         ({platform.platform()})")
    print(
        "Bytecode: compiled first (compileall on skills_core and site-packages); "
        "PYTHONDONTWRITEBYTECODE unset for the children."
    )
    print(f"Median of {args.runs} runs each (after one untimed warm-up):")
    print()
    print(f"{'measure':<42}{'median ms':>10}{'min ms':>9}{'max ms':>9}")
    for name, values in samples.items():
        print(
            f"{name:<42}{median[name] * 1e3:>10.1f}{min(values) * 1e3:>9.1f}"
            f"{max(values) * 1e3:>9.1f}"
        )
    bare = median["python -c pass"]
    ours = median["skills-core serve -> first skills/list"]
    fastmcp = median["FastMCP -> first skills/list"]
    print()
    ratio_ok = ours <= fastmcp / 10
    overhead = ours - bare
    overhead_ok = overhead <= 0.100
    print(
        f"ours / FastMCP = 1/{fastmcp / ours:.1f}   "
        f"(target <= 1/10: {'met' if ratio_ok else 'MISSED'})"
    )
    print(
        f"ours - bare python = {overhead * 1e3:.1f} ms   "
        f"(target <= 100 ms: {'met' if overhead_ok else 'MISSED'})"
    )
    return 0 if ratio_ok and overhead_ok else 1


if __name__ == "__main__":
    sys.exit(main())
