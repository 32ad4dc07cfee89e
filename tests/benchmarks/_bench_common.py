"""Helpers the benchmark scripts share: paths, the machine line, a modern request ``_meta``, the
environment of child processes, and the rows that compare a trusted constructor with the plain one."""

from __future__ import annotations

import compileall
import os
import platform
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / "tests" / "peers"


def modern_meta(client_name: str) -> dict[str, object]:
    """The ``_meta`` of a 2026-07-28 request from a client that declares the skills extension."""
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": client_name, "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/skills": {}}
        },
    }


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, or what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def child_env() -> dict[str, str]:
    """Environment for spawned servers: the repo importable, bytecode allowed, FastMCP quiet."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.update(
        FASTMCP_LOG_LEVEL="WARNING",
        FASTMCP_CHECK_FOR_UPDATES="off",
        FASTMCP_SHOW_SERVER_BANNER="false",
    )
    return env


def compile_bytecode() -> None:
    """Make sure every module the children import has bytecode (this machine disables writing)."""
    compileall.compile_dir(REPO / "skills_core", quiet=1, workers=0)
    compileall.compile_dir(sysconfig.get_paths()["purelib"], quiet=1, workers=0)


@dataclass(frozen=True)
class Construction:
    """One trusted constructor (``skills_core._fast``) and the plain constructor it stands for.

    Attributes:
        name: What is built.
        plain: Builds one with the plain constructor (the dataclass ``__init__``, with its checks).
        trusted: Builds the same object with the trusted constructor.
        per_unit: How many the measured path builds per unit (per read, per skill, ...).
    """

    name: str
    plain: Callable[[], object]
    trusted: Callable[[], object]
    per_unit: float = 1.0


def _per_call(make: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        make()
    return (time.perf_counter() - start) / number


def constructor_rows(
    cases: list[Construction],
    unit_seconds: float,
    unit: str,
    against: str,
    *,
    rounds: int = 9,
    number: int = 20_000,
) -> list[str]:
    """The rows "plain constructor vs trusted constructor" of the cases, on a path that costs
    ``unit_seconds`` (``against``, a description of it) per ``unit`` (a read, a skill, ...).

    Each figure is the fastest of ``rounds`` interleaved rounds of ``number`` objects, less the
    cost of calling an empty function the same way; the difference per unit is what the plain
    constructor would add to the path (``unit_seconds``, measured by the caller).
    """
    for case in cases:
        assert case.plain() == case.trusted(), case.name
        assert type(case.plain()) is type(case.trusted()), case.name
    plain = {case.name: 1.0 for case in cases}
    trusted = dict(plain)
    for _ in range(rounds):
        nothing = _per_call(lambda: None, number)
        for case in cases:
            plain[case.name] = min(plain[case.name], _per_call(case.plain, number) - nothing)
            trusted[case.name] = min(trusted[case.name], _per_call(case.trusted, number) - nothing)
    rows = []
    total = 0.0
    for case in cases:
        extra = (plain[case.name] - trusted[case.name]) * case.per_unit
        total += extra
        rows.append(
            f"plain constructor vs trusted constructor, {case.name}: "
            f"{plain[case.name] * 1e9:,.0f} ns vs {trusted[case.name] * 1e9:,.0f} ns; "
            f"{case.per_unit:g} per {unit}: +{extra * 1e6:.2f} us, {extra / unit_seconds:.1%} of "
            f"{against} ({unit_seconds * 1e6:.2f} us)"
        )
    if len(cases) > 1:
        rows.append(
            f"plain constructors instead of the trusted ones: +{total * 1e6:.2f} us per {unit}, "
            f"{total / unit_seconds:.1%} of {against}"
        )
    return rows
