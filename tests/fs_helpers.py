"""Helpers of the tests of the filesystem source: trees on disk, a spy on opens, a FIFO alarm."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from skills_core import spec_examples as ex


def write(root: Path, files: dict[str, bytes]) -> None:
    """Write ``{relative path: bytes}`` below ``root``, making folders as needed."""
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def spec_tree(folder: Path) -> Path:
    """``folder`` holding the spec's ``pdf-processing`` skill."""
    write(folder, {f"pdf-processing/{p}": b for p, b in ex.FILES.items()})
    return folder


def spy_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path ``os.open`` opens from now on, resolved through /proc/self/fd after the fact.

    Except ``/proc/self/fd`` itself, which the source opens to check the files it holds open
    (``skills_core.server.open_files``): the process's own descriptors, not a folder it serves.
    """
    paths: list[str] = []
    real_open = os.open

    def spy(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        if path != "/proc/self/fd":
            paths.append(os.readlink(f"/proc/self/fd/{fd}"))
        return fd

    monkeypatch.setattr(os, "open", spy)
    return paths


def regular_files(paths: list[str]) -> list[str]:
    """The paths of ``paths`` that are regular files now (folders and renamed files left out)."""
    return [path for path in paths if os.path.isfile(path)]


@contextmanager
def alarm(seconds: int = 10) -> Iterator[None]:
    """Fail with TimeoutError instead of hanging if anything blocks (on a FIFO, say)."""

    def timeout(signum: int, frame: object) -> None:
        raise TimeoutError("blocked")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
