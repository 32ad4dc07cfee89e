"""Writes that move no timestamp: a file changed through a shared writable mapping (``mmap``).

The first write to a page of a ``MAP_SHARED`` mapping since it was mapped or last saved to disk
makes the kernel update the file's ``mtime`` and ``ctime``; later writes to the same page move
nothing, and the file keeps its stat signature while its bytes change.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Callable, Iterator
from pathlib import Path


def signature(path: Path) -> tuple[int, int, int, int, int]:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@contextlib.contextmanager
def shared_mapping(path: Path) -> Iterator[mmap.mmap]:
    """``path`` mapped shared and writable, its first page already written once.

    The first write to a clean page moves the file's times (the kernel updates them when the
    page is first made writable); later writes to the same page, until it is written back, move
    nothing: that is the write this reproduces.
    """
    fd = os.open(path, os.O_RDWR)
    try:
        with mmap.mmap(fd, os.fstat(fd).st_size, mmap.MAP_SHARED) as mapping:
            mapping[0:1] = mapping[0:1]  # the page dirty and writable from now on
            yield mapping
    finally:
        os.close(fd)


def write_unseen(mapping: mmap.mmap, path: Path, data: bytes, settle: Callable[[], object]) -> None:
    """Write ``data`` at the start of ``mapping`` so that ``path``'s stat signature stays put.

    Should the page have been written back since it was dirtied (so that this write moved the
    times), the old bytes are put back (the page is dirty again: that moves nothing), ``settle``
    lets the reader see them with the new times, and the write is tried again: the test needs a
    write that moves nothing.
    """
    old = mapping[0 : len(data)]
    for _ in range(5):
        before = signature(path)
        mapping[0 : len(data)] = data
        if signature(path) == before:
            return
        mapping[0 : len(data)] = old
        settle()
    raise AssertionError("every write through the mapping moved the file's times")
